"""Plain reference implementations, written from the papers' pseudo-code.

Dense numpy, one example at a time, kernels evaluated from their definitions (‖x − y‖², not
norms and dot products), projections by a direct solve of the Gram system instead of the
incremental inverse.  They are slow and obviously right; the compiled learners must make the
same decisions.

Shared conventions (documented in budgetcli/learning/algorithms/*.py):
- a round is a mistake when y f ≤ 0;
- Projectron: ‖δ‖² ≤ 1e-10 k(x, x) counts as ‖δ‖ = 0 (numerical dependence);
- `w`: each example's weight (train -w, a sample weight), None for 1 each, in the algorithms that take
  weights, as each module's docstring says (`weight`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DEPENDENCE_TOL = 1e-10


def weight(w, t) -> float:
    """Example t's weight: 1 without weights."""
    return 1.0 if w is None else float(w[t])


def make_kernel(kind: str, gamma: float = 1.0, coef0: float = 0.0, degree: int = 3):
    if kind == "rbf":

        def k(a, b):
            return float(np.exp(-gamma * np.sum((a - b) ** 2)))

        k.gamma = gamma  # for the learners that approximate this kernel (fogd)
        return k
    if kind == "poly":
        return lambda a, b: float((gamma * np.dot(a, b) + coef0) ** degree)
    return lambda a, b: float(np.dot(a, b))


@dataclass
class Trace:
    mistakes: list = field(default_factory=list)  # per round: was it a mistake (y f ≤ 0)
    margin_updates: list = field(default_factory=list)  # per round: Projectron++ margin update taken
    scores: list = field(default_factory=list)  # per round: f_{t−1}(x_t)
    support: list = field(default_factory=list)  # example indices in the support set, in order of addition
    alpha: np.ndarray = field(default_factory=lambda: np.zeros(0))
    capped: int = 0  # BOGD++: keep probabilities capped at 1 (the water-filling acted)
    dictionaries: list = field(default_factory=list)  # the KRLS filters: per round, the dictionary after it


def perceptron(X, y, k, w=None) -> Trace:
    """Fig. 1 of the Projectron paper; a mistake of weight w adds w y k(x, ·)."""
    tr = Trace()
    alpha = []
    for t in range(len(y)):
        f = sum(a * k(X[s], X[t]) for a, s in zip(alpha, tr.support))
        tr.scores.append(f)
        mistake = y[t] * f <= 0
        tr.mistakes.append(mistake)
        tr.margin_updates.append(False)
        if mistake:
            tr.support.append(t)
            alpha.append(weight(w, t) * y[t])
    tr.alpha = np.array(alpha)
    return tr


def projectron(X, y, k, eta, plusplus=False, margin_step="fig5", w=None) -> Trace:
    """Figs. 2 and 4 (Projectron) and Fig. 5 with the τ rule of §4 (Projectron++), with the
    projection P k(x_t, ·) = Σ d_j k(x_j, ·), d = K⁻¹ k_t, computed by a direct solve (eq. 7).

    margin_step="projectron": Projectron++ as the Ahpatron paper's code runs it, every y f < 1 gets
    Fig. 2's step (project when ‖δ‖ ≤ η, else add x_t with coefficient y_t).  A weight w is the cost
    C = w: the step w y (projected or added), and τ ≤ w on a margin error (§4's PA-I remark)."""
    tr = Trace()
    alpha = np.zeros(0)
    for t in range(len(y)):
        S = tr.support
        kt = np.array([k(X[s], X[t]) for s in S])
        f = float(alpha @ kt) if S else 0.0
        tr.scores.append(f)
        m = y[t] * f
        mistake = m <= 0
        tr.mistakes.append(mistake)
        tr.margin_updates.append(False)
        if not mistake and not (plusplus and m < 1):
            continue
        kxx = k(X[t], X[t])
        if S:
            K = np.array([[k(X[a], X[b]) for b in S] for a in S])
            d = np.linalg.solve(K, kt)
        else:
            d = np.zeros(0)
        pk2 = float(kt @ d)  # ‖P k(x_t, ·)‖²
        delta2 = kxx - pk2  # ‖δ_t‖², eq. 8
        delta = 0.0 if delta2 <= DEPENDENCE_TOL * kxx else np.sqrt(delta2)
        if mistake or margin_step == "projectron":
            tr.margin_updates[-1] = not mistake
            if delta <= eta:
                alpha = alpha + weight(w, t) * y[t] * d  # f'' = f + y P k (eq. 9)
            else:
                S.append(t)
                alpha = np.append(alpha, weight(w, t) * y[t])
        else:  # margin error, 0 < y f < 1
            loss = 1.0 - m
            if pk2 <= 0:
                continue
            if delta == 0:
                ratio = 0.0
            elif eta > 0:
                ratio = delta / eta
            else:
                continue
            if loss >= ratio:
                tau = min(loss / pk2, 2 * (loss - ratio) / pk2, weight(w, t))
                alpha = alpha + y[t] * tau * d
                tr.margin_updates[-1] = True
    tr.alpha = alpha
    return tr


class SplitMix64:
    """splitmix64 (Steele, Lea, Flood 2014) in plain Python integers, for the randomized references."""

    M = 2**64

    def __init__(self, seed: int):
        self.state = (seed % self.M) ^ 0x9E3779B97F4A7C15

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) % self.M
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % self.M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % self.M
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        limit = (self.M - 1) - ((self.M - 1) % n)
        while True:
            r = self.next()
            if r < limit:
                return r % n


def rbp_lbp(X, y, k, budget, policy, seed=0, w=None) -> Trace:
    """RBP (shifting/RBP paper Fig. 2: evict a random support when s = B) and LBP (§4: evict the
    oldest).  The support set is kept as a list of slots; the newcomer takes the evicted slot."""
    tr = Trace()
    rng = SplitMix64(seed)
    slots, alpha, born = [], [], []  # example index, coefficient, time of addition per slot
    for t in range(len(y)):
        f = sum(a * k(X[s], X[t]) for a, s in zip(alpha, slots))
        tr.scores.append(f)
        mistake = y[t] * f <= 0
        tr.mistakes.append(mistake)
        tr.margin_updates.append(False)
        if not mistake:
            continue
        if len(slots) < budget:
            slots.append(t)
            alpha.append(weight(w, t) * y[t])
            born.append(t)
            continue
        j = rng.below(budget) if policy == "random" else int(np.argmin(born))
        slots[j], alpha[j], born[j] = t, weight(w, t) * y[t], t
    tr.support = slots
    tr.alpha = np.array(alpha, float)
    return tr


def passive_aggressive(X, y, k, variant="pa", C=1.0, w=None) -> Trace:
    """Crammer et al. 2006, Fig. 1, kernelised: f ← f + τ y k(x_t, ·) on hinge loss > 0; a weight w makes
    an example's C w C."""
    tr = Trace()
    alpha = []
    for t in range(len(y)):
        f = sum(a * k(X[s], X[t]) for a, s in zip(alpha, tr.support))
        tr.scores.append(f)
        tr.mistakes.append(y[t] * f <= 0)
        loss = max(0.0, 1.0 - y[t] * f)
        kxx = k(X[t], X[t])
        update = loss > 0 and kxx > 0
        tr.margin_updates.append(update and y[t] * f > 0)
        if not update:
            continue
        c = C * weight(w, t)
        tau = {"pa": loss / kxx, "pa-i": min(c, loss / kxx), "pa-ii": loss / (kxx + 1 / (2 * c))}[variant]
        tr.support.append(t)
        alpha.append(tau * y[t])
    tr.alpha = np.array(alpha)
    return tr


def shifting_perceptron(X, y, k, lam, w=None) -> Trace:
    """Shifting/RBP paper, Fig. 1: on the k-th mistake w ← (1 − λ_k) w + y x, λ_k = λ/(λ+k), λ_0 = 1."""
    tr = Trace()
    alpha = []
    mistakes = 0
    for t in range(len(y)):
        f = sum(a * k(X[s], X[t]) for a, s in zip(alpha, tr.support))
        tr.scores.append(f)
        mistake = y[t] * f <= 0
        tr.mistakes.append(mistake)
        tr.margin_updates.append(False)
        if mistake:
            lam_k = 1.0 if mistakes == 0 else lam / (lam + mistakes)
            alpha = [(1 - lam_k) * a for a in alpha]
            alpha.append(weight(w, t) * y[t])
            tr.support.append(t)
            mistakes += 1
    tr.alpha = np.array(alpha)
    return tr


def weston_alpha(update, y, f, kxx, C):
    """α_t by the update rules of Weston et al. Fig. 2, on f after any removal."""
    if update == "perceptron":
        return 1.0
    if kxx <= 0:
        return 0.0
    if update == "mira":
        return min(1.0, max(0.0, -y * f / kxx))
    return min(C, max(0.0, (1 - y * f) / kxx))


def swap_remove(lists, i):
    """Remove entry i from parallel lists by moving the last entry into it (the store's convention)."""
    for lst in lists:
        lst[i] = lst[-1]
        lst.pop()


def cks_budget_perceptron(X, y, k, budget, beta=0.0, update="perceptron", C=1.0, variable=False) -> Trace:
    """Weston, Bordes, Bottou 2005, Fig. 1 with the rules of Fig. 2, margins recomputed from scratch.
    The support set is a list of slots; a removed slot is refilled by the last one (the store's
    convention), so slot order and tie-breaking (lowest slot) match the compiled learner."""
    tr = Trace()
    slots, a, lab = [], [], []

    def f_at(x):
        return sum(ai * k(X[s], x) for ai, s in zip(a, slots))

    def margin_without(j):  # y_j (f(x_j) − a_j k(x_j, x_j))
        return lab[j] * (f_at(X[slots[j]]) - a[j] * k(X[slots[j]], X[slots[j]]))

    for t in range(len(y)):
        f = f_at(X[t])
        tr.scores.append(f)
        m = y[t] * f
        tr.mistakes.append(m <= 0)
        tr.margin_updates.append(0 < m <= beta)
        if m > beta:
            continue
        if len(slots) >= budget:
            margins = [margin_without(j) for j in range(len(slots))]
            i = int(np.argmax(margins))
            swap_remove((slots, a, lab), i)
            f = f_at(X[t])
        alpha = weston_alpha(update, y[t], f, k(X[t], X[t]), C)
        slots.append(t)
        a.append(alpha * y[t])
        lab.append(y[t])
        while variable and slots:  # drop support vectors classified with margin ≥ β without themselves
            margins = [margin_without(j) for j in range(len(slots))]
            i = int(np.argmax(margins))
            if margins[i] < beta:
                break
            swap_remove((slots, a, lab), i)
    tr.support = slots
    tr.alpha = np.array(a)
    return tr


def tighter_budget_perceptron(X, y, k, budget, eval_set, q=10, beta=0.0, update="perceptron", C=1.0, seed=0) -> Trace:
    """Weston, Bordes, Bottou 2005, Fig. 3 with the evaluation sets of §3.2 (eq. 3, eq. 4 by reservoir
    sampling, Fig. 5 dropping the entry with the fewest flips per round), every score recomputed from
    scratch.  Flips are counted after the removal and after the insertion, each a change of f.
    Slot conventions as in cks_budget_perceptron."""
    tr = Trace()
    rng = SplitMix64(seed)
    slots, a, lab = [], [], []
    E, e_flips, e_since = [], [], []  # example indices, flip counts, round added
    e_sign = []

    def f_at(x):
        return sum(ai * k(X[s], x) for ai, s in zip(a, slots))

    def recount():  # count sign changes of f on the evaluation set since the last look
        for i, e in enumerate(E):
            positive = f_at(X[e]) > 0
            if positive != e_sign[i]:
                e_flips[i] += 1
            e_sign[i] = positive

    def put(pos, t, f):
        if pos == len(E):
            E.append(t), e_flips.append(0), e_since.append(t + 1), e_sign.append(f > 0)
        else:
            E[pos], e_flips[pos], e_since[pos], e_sign[pos] = t, 0, t + 1, f > 0

    def drop(pos):
        swap_remove((E, e_flips, e_since, e_sign), pos)

    for t in range(len(y)):
        rnd = t + 1
        f = f_at(X[t])
        tr.scores.append(f)
        m = y[t] * f
        tr.mistakes.append(m <= 0)
        tr.margin_updates.append(0 < m <= beta)
        if eval_set == "all":
            put(len(E), t, f)
        elif eval_set == "random":
            if len(E) < q:
                put(len(E), t, f)
            else:
                r = rng.below(rnd)
                if r < q:
                    put(r, t, f)
        if m > beta:
            continue
        if eval_set == "flip":
            if len(E) >= q:
                rates = [e_flips[i] / (rnd - e_since[i]) for i in range(len(E))]
                drop(int(np.argmin(rates)))
            put(len(E), t, f)
        if len(slots) >= budget:
            points = slots if eval_set == "support" else E
            plab = lab if eval_set == "support" else [y[e] for e in E]
            errors = []
            for j in range(len(slots)):
                errors.append(
                    sum(1 for p, yp in zip(points, plab) if yp * (f_at(X[p]) - a[j] * k(X[slots[j]], X[p])) <= 0)
                )
            i = int(np.argmin(errors))
            swap_remove((slots, a, lab), i)
            f = f_at(X[t])
            recount()
        alpha = weston_alpha(update, y[t], f, k(X[t], X[t]), C)
        slots.append(t)
        a.append(alpha * y[t])
        lab.append(y[t])
        recount()
    tr.support = slots
    tr.alpha = np.array(a)
    return tr


def forgetron(X, y, k, budget) -> Trace:
    """Self-tuned Forgetron (Dekel, Shalev-Shwartz, Singer 2008): Perceptron step; over budget,
    shrink by φ = max{φ ∈ (0,1] : Ψ(φσ, φμ) + Q ≤ 15/32 M}, Ψ(λ, μ) = λ² + 2λ − 2λμ, then drop the
    oldest.  φ is found here by checking the candidates {1} ∪ {real roots in (0, 1]} of the
    quadratic numerically, not by the closed-form case analysis of the fast path."""
    tr = Trace()
    slots, a, born = [], [], []
    Q, M = 0.0, 0
    for t in range(len(y)):
        f = sum(ai * k(X[s], X[t]) for ai, s in zip(a, slots))
        tr.scores.append(f)
        mistake = y[t] * f <= 0
        tr.mistakes.append(mistake)
        tr.margin_updates.append(False)
        if not mistake:
            continue
        M += 1
        if len(slots) < budget:
            slots.append(t), a.append(y[t]), born.append(t)
            continue
        r = int(np.argmin(born))
        cand_slots, cand_a = slots + [t], a + [y[t]]  # f' = f + y_t k(x_t, ·)
        f_r = sum(ai * k(X[s], X[slots[r]]) for ai, s in zip(cand_a, cand_slots))
        sigma, mu = abs(a[r]), np.sign(a[r]) * f_r

        def excess(phi):
            lam = phi * sigma
            return lam * lam + 2 * lam - 2 * lam * phi * mu + Q - 15 / 32 * M

        candidates = [1.0] + [
            float(z.real)
            for z in np.roots([sigma**2 - 2 * sigma * mu, 2 * sigma, Q - 15 / 32 * M])
            if abs(z.imag) < 1e-12 and 0 < z.real <= 1
        ]
        phi = max(c for c in candidates if excess(c) <= 1e-9 * (1 + abs(Q)))
        lam = phi * sigma
        Q += lam * lam + 2 * lam - 2 * lam * phi * mu
        a = [phi * ai for ai in a]
        slots[r], a[r], born[r] = t, phi * y[t], t
    tr.support = slots
    tr.alpha = np.array(a, float)
    return tr


def alma2(X, y, k, alpha=0.0, B=1.0, C=np.sqrt(2) - 1, eta=None) -> Trace:
    """ALMA₂ (Gentile 2001) in kernel form and, with `eta`, its projected version (Projectron paper §6).
    ‖f‖ is computed from the Gram matrix each time (not tracked), projections by direct solves."""
    tr = Trace()
    a = np.zeros(0)
    updates = 0
    for t in range(len(y)):
        S = tr.support
        kt = np.array([k(X[s], X[t]) for s in S])
        f = float(a @ kt) if S else 0.0
        tr.scores.append(f)
        tr.mistakes.append(y[t] * f <= 0)
        tr.margin_updates.append(False)
        kxx = k(X[t], X[t])
        if kxx <= 0:
            continue
        kk = updates + 1
        if y[t] * f / np.sqrt(kxx) > (1 - alpha) * B / np.sqrt(kk):
            continue
        tr.margin_updates[-1] = y[t] * f > 0
        step = C / np.sqrt(kk)
        K = np.array([[k(X[i], X[j]) for j in S] for i in S]) if S else np.zeros((0, 0))
        # f' = f + step y x̂ over S ∪ {t}
        full = np.append(a, step * y[t] / np.sqrt(kxx))
        Kfull = np.array([[k(X[i], X[j]) for j in S + [t]] for i in S + [t]])
        N = max(1.0, np.sqrt(full @ Kfull @ full))
        project = False
        if eta is not None:
            d = np.linalg.solve(K, kt) if S else np.zeros(0)
            delta2 = kxx - kt @ d
            dist = 0.0 if delta2 <= DEPENDENCE_TOL * kxx else step / N * np.sqrt(delta2 / kxx)
            project = dist <= eta
        if project:
            a = (a + step * y[t] * d / np.sqrt(kxx)) / N
        else:
            S.append(t)
            a = full / N
        updates += 1
    tr.alpha = a
    return tr


def stoptron(X, y, k, budget, w=None) -> Trace:
    """The kernel Perceptron that stops adding support vectors once `budget` are stored."""
    tr = Trace()
    for t in range(len(y)):
        f = sum(weight(w, i) * y[i] * k(X[i], X[t]) for i in tr.support)
        tr.scores.append(f)
        tr.mistakes.append(y[t] * f <= 0)
        tr.margin_updates.append(False)
        if tr.mistakes[-1] and len(tr.support) < budget:
            tr.support.append(t)
    tr.alpha = np.array([weight(w, i) * y[i] for i in tr.support])
    return tr


# Each algorithm's reference run for tests/test_contract.py: name -> (parameters of the compiled learner,
# run(X, y, k, seed) with the same settings), or a list of such for variants that take other paths.
# A new algorithm adds its entry beside its reference.
def kernel_ogd(X, y, k, eta, schedule="constant", w=None) -> Trace:
    """Kivinen, Smola, Williamson 2004, §III with λ = 0 (LIBOKL's kernel-ogd): on the hinge loss's
    margin error y f < 1, f ← f + η_t y k(x_t, ·), η_t = η or η/√t (t = 1, 2, ... every example)."""
    tr = Trace()
    alpha = []
    for t in range(len(y)):
        f = sum(a * k(X[s], X[t]) for a, s in zip(alpha, tr.support))
        tr.scores.append(f)
        tr.mistakes.append(y[t] * f <= 0)
        update = y[t] * f < 1
        tr.margin_updates.append(update and y[t] * f > 0)
        if update:
            tr.support.append(t)
            alpha.append((eta if schedule == "constant" else eta / np.sqrt(t + 1)) * weight(w, t) * y[t])
    tr.alpha = np.array(alpha)
    return tr


def bpa_s(X, y, k, budget, C, w=None) -> Trace:
    """Wang & Vucetic 2010, §3, BPA-S: PA-I below the budget; at it, for every candidate r the problem
    min ½‖w − w_t‖² + Cξ with w = w_t − α_r φ(x_r) + β φ(x_t) solved in closed form (β = α_r k_rt/k_tt
    + τ y, τ = min(C, ℓ/k_tt)) and its objective Q_r computed as written; the r of least Q_r (the first)
    is replaced by x_t with β."""
    tr = Trace()
    slots, alpha = [], []
    for t in range(len(y)):
        f = sum(a * k(X[s], X[t]) for a, s in zip(alpha, slots))
        tr.scores.append(f)
        tr.mistakes.append(y[t] * f <= 0)
        loss = max(0.0, 1.0 - y[t] * f)
        ktt = k(X[t], X[t])
        update = loss > 0 and ktt > 0
        tr.margin_updates.append(update and y[t] * f > 0)
        if not update:
            continue
        tau = min(C * weight(w, t), loss / ktt)
        if len(slots) < budget:
            slots.append(t)
            alpha.append(tau * y[t])
            continue
        best, best_q, best_beta = None, np.inf, None
        for r, (a, s) in enumerate(zip(alpha, slots)):
            krt, krr = k(X[s], X[t]), k(X[s], X[s])
            beta = a * krt / ktt + tau * y[t]
            change = a * a * krr - 2 * a * beta * krt + beta * beta * ktt  # ‖−α_r φ(x_r) + β φ(x_t)‖²
            xi = max(0.0, 1.0 - y[t] * (f - a * krt + beta * ktt))
            q = 0.5 * change + (C * xi if np.isfinite(C) else 0.0)  # C = ∞: τ = ℓ/k_tt, ξ = 0 up to rounding
            if q < best_q:
                best, best_q, best_beta = r, q, beta
        slots[best], alpha[best] = t, best_beta
    tr.support = slots
    tr.alpha = np.array(alpha, float)
    return tr


def bpa_p(X, y, k, budget, C, w=None) -> Trace:
    """Wang & Vucetic 2010, §3, BPA-P: as bpa_s, with S = the kept vectors but r, and x_t: for every
    candidate r its system K_S c = k_r solved directly, β = α_r c + τ y e_t, Q_r = ½‖Δ_r‖² + Cξ_r as
    written; the first least Q_r goes, the others take β, x_t takes r's place.  An x_t in the span of the
    kept vectors (‖δ‖² ≤ 1e-6 k_tt) is projected onto them, α += τ y K⁻¹k_t (the package's choice)."""
    tr = Trace()
    slots, alpha = [], []
    for t in range(len(y)):
        f = sum(a * k(X[s], X[t]) for a, s in zip(alpha, slots))
        tr.scores.append(f)
        tr.mistakes.append(y[t] * f <= 0)
        loss = max(0.0, 1.0 - y[t] * f)
        ktt = k(X[t], X[t])
        update = loss > 0 and ktt > 0
        tr.margin_updates.append(update and y[t] * f > 0)
        if not update:
            continue
        tau = min(C * weight(w, t), loss / ktt)
        if slots:
            gram = np.array([[k(X[a], X[b]) for b in slots] for a in slots])
            kt = np.array([k(X[s], X[t]) for s in slots])
            d = np.linalg.solve(gram, kt)
            if ktt - kt @ d <= 1e-6 * ktt:
                alpha = list(np.array(alpha) + tau * y[t] * d)
                continue
        if len(slots) < budget:
            slots.append(t)
            alpha.append(tau * y[t])
            continue
        best, best_q, best_beta = None, np.inf, None
        for r in range(len(slots)):
            members = [X[s] for i, s in enumerate(slots) if i != r] + [X[t]]
            gram_s = np.array([[k(a, b) for b in members] for a in members])
            k_r = np.array([k(X[slots[r]], m) for m in members])
            k_t = np.array([k(X[t], m) for m in members])
            beta = alpha[r] * np.linalg.solve(gram_s, k_r)
            beta[-1] += tau * y[t]
            change = alpha[r] ** 2 * k(X[slots[r]], X[slots[r]]) - 2 * alpha[r] * beta @ k_r + beta @ gram_s @ beta
            xi = max(0.0, 1.0 - y[t] * (f - alpha[r] * k(X[slots[r]], X[t]) + beta @ k_t))
            q = 0.5 * change + (C * xi if np.isfinite(C) else 0.0)
            if q < best_q:
                best, best_q, best_beta = r, q, beta
        others = [i for i in range(len(slots)) if i != best]
        for j, i in enumerate(others):
            alpha[i] += best_beta[j]
        slots[best], alpha[best] = t, best_beta[-1]
    tr.support = slots
    tr.alpha = np.array(alpha, float)
    return tr


def bpa_nn(X, y, k, budget, C, w=None) -> Trace:
    """Wang & Vucetic 2010, §3, BPA-NN: as bpa_s, with S = {x_t, x_j}, x_j the kept vector nearest x_r in
    feature space (least k_rr + k_jj − 2k_rj, the first of equals): for every candidate r the 2×2 system
    K_S c = k_Sr solved directly, β = α_r c + τ y e_t, Q_r = ½‖Δ_r‖² + Cξ_r as written; the first least
    Q_r goes, x_j takes its part, x_t takes r's place.  x_t and x_j nearly collinear (det K_S ≤ 1e-10
    k_tt k_jj), or r alone: S = {x_t}; x_r in the span of S (residual ≤ 1e-10 k_rr) is removed at no
    cost beyond the PA step, the first such (the package's choices)."""
    tr = Trace()
    slots, alpha = [], []
    for t in range(len(y)):
        f = sum(a * k(X[s], X[t]) for a, s in zip(alpha, slots))
        tr.scores.append(f)
        tr.mistakes.append(y[t] * f <= 0)
        loss = max(0.0, 1.0 - y[t] * f)
        ktt = k(X[t], X[t])
        update = loss > 0 and ktt > 0
        tr.margin_updates.append(update and y[t] * f > 0)
        if not update:
            continue
        tau = min(C * weight(w, t), loss / ktt)
        if len(slots) < budget:
            slots.append(t)
            alpha.append(tau * y[t])
            continue
        best, best_q, best_beta, best_j = None, np.inf, None, None
        for r in range(len(slots)):
            xr = X[slots[r]]
            dist = [k(xr, xr) + k(X[s], X[s]) - 2.0 * k(xr, X[s]) if i != r else np.inf for i, s in enumerate(slots)]
            j = int(np.argmin(dist)) if len(slots) > 1 else None
            members = [X[t]]
            if j is not None:
                kjj, ktj = k(X[slots[j]], X[slots[j]]), k(X[t], X[slots[j]])
                if ktt * kjj - ktj * ktj > 1e-10 * ktt * kjj:
                    members.append(X[slots[j]])
            gram_s = np.array([[k(a, b) for b in members] for a in members])
            k_r = np.array([k(xr, m) for m in members])
            k_t = np.array([k(X[t], m) for m in members])
            c = np.linalg.solve(gram_s, k_r)
            beta = alpha[r] * c
            beta[0] += tau * y[t]
            change = alpha[r] ** 2 * k(xr, xr) - 2 * alpha[r] * beta @ k_r + beta @ gram_s @ beta
            if k(xr, xr) - c @ k_r <= 1e-10 * k(xr, xr):  # x_r in the span: only the PA step is a change
                change = tau * tau * ktt
            xi = max(0.0, 1.0 - y[t] * (f - alpha[r] * k(xr, X[t]) + beta @ k_t))
            q = 0.5 * change + (C * xi if np.isfinite(C) else 0.0)
            if q < best_q:
                best, best_q, best_beta, best_j = r, q, beta, (j if len(members) == 2 else None)
        if best_j is not None:
            alpha[best_j] += best_beta[1]
        slots[best], alpha[best] = t, best_beta[0]
    tr.support = slots
    tr.alpha = np.array(alpha, float)
    return tr


def bogd(X, y, k, budget, eta, lam, gamma, removal, seed=0, w=None, loss=None, eps=0.1) -> Trace:
    """Zhao, Wang, Wu, Jin, Hoi, ICML 2012, §3: every round α ← (1 − ηλ)α; on y f < 1 add x_t with η y; at
    the budget first remove r and re-weight the kept, |α_i| ≤ ηγ: removal "uniform" (BOGD, kept × B/(B−1)),
    "weighted" (BOGD++, kept with q_i = (B−1) a_i/Σa, a_i = |α_i|√k_ii, capped at 1 with the rest shared,
    kept / q_i) or "oldest" (LIBOKL's kernel-bogd: no re-weighting, no bound).  With a regression `loss`
    (`regression_gradient`, JMLR 2016 §3): a round whose step −∂ℓ/∂f is not 0 adds x_t with η (−∂ℓ/∂f)."""
    tr = Trace()
    rng = SplitMix64(seed)
    slots, alpha, born = [], [], []
    for t in range(len(y)):
        f = sum(a * k(X[s], X[t]) for a, s in zip(alpha, slots))
        alpha = [a * (1.0 - eta * lam) for a in alpha]
        if loss is None:
            tr.scores.append(f)
            tr.mistakes.append(y[t] * f <= 0)
            update = y[t] * f < 1
            tr.margin_updates.append(update and y[t] * f > 0)
            step = eta * weight(w, t) * y[t]
        else:
            _regression_round(tr, f)
            g = regression_gradient(loss, eps, y[t] - f)
            update, step = g != 0.0, eta * g * weight(w, t)
        if not update:
            continue
        if len(slots) < budget:
            slots.append(t)
            alpha.append(step)
            born.append(t)
            continue
        if removal == "oldest":
            r = int(np.argmin(born))
            keep = [1.0] * budget
        elif removal == "uniform":
            r = rng.below(budget)
            keep = [(budget - 1) / budget] * budget
        else:
            a = np.array([abs(c) * np.sqrt(k(X[s], X[s])) for c, s in zip(alpha, slots)])
            capped = np.zeros(budget, bool)
            while True:  # water-filling: Σ q = B − 1, no q above 1
                mass, total = budget - 1 - capped.sum(), a[~capped].sum()
                over = ~capped & (mass * a > total) & (total > 0)
                if not over.any():
                    break
                capped |= over
            tr.capped += int(capped.sum())
            q = np.where(capped, 1.0, mass * a / total if total > 0 else mass / (~capped).sum())
            u = (rng.next() >> 11) * 2.0**-53
            p = 1.0 - q
            r = next((i for i in range(budget) if p[i] > 0 and u < np.cumsum(np.where(p > 0, p, 0))[i]), None)
            if r is None:
                r = max(i for i in range(budget) if p[i] > 0)
            keep = list(q)
        for i in range(budget):
            if i != r and removal != "oldest" and 0 < keep[i] < 1:
                alpha[i] = alpha[i] / keep[i]
                alpha[i] = float(np.clip(alpha[i], -eta * gamma, eta * gamma))
        slots[r], alpha[r], born[r] = t, step, t
    tr.support = slots
    tr.alpha = np.array(alpha, float)
    return tr


def fourier_omega(seed: int, features, D: int, gamma: float) -> np.ndarray:
    """The map's Ω (a row per feature index j of `features`, D columns) as budgetcli/learning/algorithms/fourier.py
    documents it, in plain Python integers:
    key = s + j·0xD1B54A32D192ED03 + (i + 1)·0x8CB92BA72F3D8DD7 (mod 2⁶⁴), s the seed's splitmix64 state,
    u₁ = (mix(key) ≫ 11 + 1)/2⁵³, u₂ = (mix(key ⊕ 0x632BE59BD9B4E019) ≫ 11)/2⁵³, ω = √(2γ)·√(−2 ln u₁)·cos 2πu₂."""
    M = 2**64

    def mix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % M
        return z ^ (z >> 31)

    s = SplitMix64(seed).state
    out = np.empty((len(features), D))
    for r, j in enumerate(features):
        for i in range(D):
            key = (s + j * 0xD1B54A32D192ED03 + (i + 1) * 0x8CB92BA72F3D8DD7) % M
            u1 = ((mix(key) >> 11) + 1) * 2.0**-53
            u2 = (mix(key ^ 0x632BE59BD9B4E019) >> 11) * 2.0**-53
            out[r, i] = np.sqrt(2.0 * gamma) * np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    return out


def regression_gradient(loss, eps, e) -> float:
    """−∂ℓ/∂f at the error e = y − f of the JMLR 2016 authors' regression losses (§3): "squared" ℓ = ½e²
    (e); "epsilon-insensitive" ℓ = max(0, |e| − ε) (sign e outside the tube, 0 inside and on its edge);
    "squared-outside-tube", their released code's: e when |e| > ε, else 0."""
    if loss == "squared":
        return e
    if not abs(e) > eps:
        return 0.0
    return e if loss == "squared-outside-tube" else float(np.sign(e))


def fogd(
    X, y, k, D, eta, seed=0, schedule="constant", arithmetic="float64", scale="normalised", w=None, loss=None, eps=0.1
) -> Trace:
    """Lu, Hoi, Wang, Zhao, Liu, JMLR 2016, §4: z(x) = D^(−1/2)[cos Ωᵀx, sin Ωᵀx], Ω's columns ω_i ~ N(0, 2γI)
    (the Gaussian kernel k's γ); w ← w + η_t y z(x) on y wᵀz(x) < 1.  Trace.alpha holds the final w.
    scale "unscaled": z without the D^(−1/2) (LIBOKL's and the authors' code); arithmetic "single": z from
    `single_fourier_features` (float32), else numpy's float64 cos and sin.  With a regression `loss`
    (`regression_gradient`): w ← w + η_t (−∂ℓ/∂f) z(x) every round, the rounds recorded as the filters'."""
    omega = fourier_omega(seed, range(1, X.shape[1] + 1), D, k.gamma)  # column j is the file's index j + 1
    norm = 1.0 / np.sqrt(D) if scale == "normalised" else 1.0
    tr = Trace()
    weights, w = w, np.zeros(2 * D)
    for t in range(len(y)):
        if arithmetic == "single":
            z = single_fourier_features(X[t], omega.astype(np.float32), norm)
        else:
            theta = X[t] @ omega
            z = np.concatenate([np.cos(theta), np.sin(theta)]) * norm
        f = float(w @ z)
        rate = eta if schedule == "constant" else eta / np.sqrt(t + 1)
        if loss is not None:
            _regression_round(tr, f)
            w = w + rate * regression_gradient(loss, eps, y[t] - f) * weight(weights, t) * z
            continue
        tr.scores.append(f)
        tr.mistakes.append(y[t] * f <= 0)
        tr.margin_updates.append(0 < y[t] * f < 1)
        if y[t] * f < 1:
            w = w + rate * weight(weights, t) * y[t] * z
    tr.alpha = w
    return tr


def single_fourier_features(x, omega32, norm) -> np.ndarray:
    """FOGD's map in float32 (`--map-arithmetic single`, budgetcli/numerics/trig.py's docstring), on numpy's float32
    arrays: θ = Σ_j x_j ω_j over x's non-zeros in increasing j, each product and sum rounded to float32;
    k = the integer nearest θ·2/π (by adding and taking away 1.5·2²³), r = θ − k·π/2 with π/2 in three
    float32 parts, then Cephes' sinf and cosf polynomials in r² and the quadrant k mod 4; each feature
    the float32 product of norm and cos or sin.  The features as float64."""
    f = np.float32
    theta = np.zeros(omega32.shape[1], f)
    for j in np.flatnonzero(x):
        theta = theta + f(x[j]) * omega32[j]
    k = (theta * f(2 / np.pi) + f(12582912.0)) - f(12582912.0)
    r = ((theta - k * f(1.5703125)) - k * f(4.837512969970703125e-4)) - k * f(7.54978995489188216e-8)
    z = r * r
    sin_r = r + r * z * (f(-1.6666654611e-1) + z * (f(8.3321608736e-3) + z * f(-1.9515295891e-4)))
    cos_r = (f(1) - f(0.5) * z) + z * z * (
        f(4.166664568298827e-2) + z * (f(-1.388731625493765e-3) + z * f(2.443315711809948e-5))
    )
    quadrant = k.astype(np.int64) % 4
    cos_t = np.select([quadrant == 0, quadrant == 1, quadrant == 2], [cos_r, -sin_r, -cos_r], sin_r)
    sin_t = np.select([quadrant == 0, quadrant == 1, quadrant == 2], [sin_r, cos_r, -sin_r], -cos_r)
    return np.concatenate([f(norm) * cos_t, f(norm) * sin_t]).astype(np.float64)


def nogd(X, y, k, budget, eta, eta1, rank, start="projected", weights=None, loss=None, eps=0.1) -> Trace:
    """Lu, Hoi, Wang, Zhao, Liu, JMLR 2016, §5, written with w: kernel OGD (step η) until B landmarks;
    on the first margin error with B stored, M = Λ_k^(−1/2) V_kᵀ from K̂'s k largest eigenpairs (those
    above 1e-10 λ_max), w = Mᵀ⁺α = Λ_k^(1/2) V_kᵀ α ("projected") or 0 ("zero"); that round predicted with
    the expansion; from it on w ← w + η₁ y M κ(x) on y wᵀMκ(x) < 1.  Trace.alpha is Mᵀw (or α).  With a
    regression `loss` (`regression_gradient`): a step wherever −∂ℓ/∂f is not 0, with it in place of y."""
    tr = Trace()
    slots, alpha, w, M = [], [], None, None
    for t in range(len(y)):
        kappa = np.array([k(X[s], X[t]) for s in slots])
        f = float(np.dot(alpha, kappa)) if w is None else float(w @ (M @ kappa))
        if loss is None:
            tr.scores.append(f)
            tr.mistakes.append(y[t] * f <= 0)
            tr.margin_updates.append(0 < y[t] * f < 1)
            g = y[t] if y[t] * f < 1 else 0.0
        else:
            _regression_round(tr, f)
            g = regression_gradient(loss, eps, y[t] - f)
        if g == 0.0:
            continue
        if w is None and len(slots) < budget:
            slots.append(t)
            alpha.append(eta * g * weight(weights, t))
            continue
        if w is None:  # the switch
            gram = np.array([[k(X[a], X[b]) for b in slots] for a in slots])
            lam, V = np.linalg.eigh(gram)
            top = [i for i in np.argsort(lam)[::-1][:rank] if lam[i] > 1e-10 * lam.max()]
            M = (V[:, top] / np.sqrt(lam[top])).T
            w = np.sqrt(lam[top]) * (V[:, top].T @ np.array(alpha)) if start == "projected" else np.zeros(len(top))
        w = w + eta1 * g * weight(weights, t) * (M @ kappa)
    tr.support = slots
    tr.alpha = np.array(alpha, float) if w is None else M.T @ w
    return tr


# ---- the LMS filters, for regression (budgetcli/learning/algorithms/lms.py); KAFBOX's classes, lib/<name>.m ----------
# A round records f_t(x_t) (the prediction, `scores`); `mistakes` and `margin_updates` stay False: a regression
# counts errors, not mistakes.  `support` is in order of addition, oldest first.


def _expansion(X, t, support, alpha, k) -> float:
    return sum(a * k(X[s], X[t]) for a, s in zip(alpha, support))


def _regression_round(tr: Trace, f: float) -> None:
    tr.scores.append(f)
    tr.mistakes.append(False)
    tr.margin_updates.append(False)


def klms(X, y, k, eta=0.5, budget=10000, w=None) -> Trace:
    """KLMS (Liu, Pokharel, Príncipe 2008; KAFBOX klms.m l.46-53): e_t = y_t − f_t(x_t), the a priori
    error; f_{t+1} = f_t + η e_t k(x_t, ·), x_t a new centre.  KAFBOX's M (`budget`): with M centres the
    filter learns nothing more."""
    tr, alpha = Trace(), []
    for t in range(len(y)):
        f = _expansion(X, t, tr.support, alpha, k)
        _regression_round(tr, f)
        if len(tr.support) < budget:  # klms.m l.47
            tr.support.append(t)
            alpha.append(eta * weight(w, t) * (y[t] - f))  # l.48-51
    tr.alpha = np.array(alpha, float)
    return tr


def qklms(X, y, k, eta=0.9, epsu=0.1, w=None, budget=None) -> Trace:
    """QKLMS (Chen, Zhao, Zhu, Príncipe 2012; KAFBOX qklms.m l.45-61): e_t = y_t − f_t(x_t); the nearest
    centre C_j (Euclidean distance in input space, the first on ties); ‖x_t − C_j‖ ≤ ε_U: α_j += η e_t
    (x_t quantized to C_j), else x_t a new centre with η e_t.  The first example always joins.  With
    `budget` centres (lms.py's cap, in neither the paper nor KAFBOX) every x_t is quantized to its nearest."""
    tr, alpha = Trace(), []
    for t in range(len(y)):
        f = _expansion(X, t, tr.support, alpha, k)
        _regression_round(tr, f)
        step = eta * weight(w, t) * (y[t] - f)
        if tr.support:
            d2 = [float(np.sum((X[t] - X[s]) ** 2)) for s in tr.support]
            j = int(np.argmin(d2))  # the first minimum
            if d2[j] <= epsu**2 or len(tr.support) == budget:  # qklms.m l.55; the cap
                alpha[j] += step
                continue
        tr.support.append(t)
        alpha.append(step)
    tr.alpha = np.array(alpha, float)
    return tr


def norma(X, y, k, eta=0.5, lam=0.01, tau=500, error="before-shrink", w=None, eps=None, nu=None) -> Trace:
    """NORMA on the squared loss (Kivinen, Smola, Williamson 2004, §III): f_{t+1} = (1 − ηλ) f_t + η e_t k(x_t, ·),
    e_t = y_t − f_t(x_t) (the paper's step, `before-shrink`), or e_t = y_t − (1 − ηλ) f_t(x_t) (KAFBOX norma.m
    l.48-55: shrink, then the error of the shrunk expansion, `after-shrink`); then only the last τ terms kept
    (l.56-59: the oldest dropped).  With `eps`, the ε-insensitive loss max(0, |e| − ε) (§III-C): a term
    η sign(e_t) joins only when |e_t| > ε; with `nu` too, the ν form (§III-D, the loss max(0, |e| − ε) + νε):
    ε starts at `eps` and each round steps ε += η(1 − ν) when |e_t| > ε, else ε −= ην; the last τ terms
    added are kept."""
    tr, alpha = Trace(), []
    for t in range(len(y)):
        f = _expansion(X, t, tr.support, alpha, k)
        _regression_round(tr, f)
        alpha = [(1.0 - eta * lam) * a for a in alpha]
        e = y[t] - (f if error == "before-shrink" else _expansion(X, t, tr.support, alpha, k))
        g = e
        if eps is not None:
            outside = abs(e) > eps
            g = float(np.sign(e)) if outside else 0.0
            if nu is not None:
                eps = eps + eta * (1.0 - nu) if outside else eps - eta * nu
            if not outside:
                continue
        tr.support.append(t)
        alpha.append(eta * g * weight(w, t))
        if len(alpha) > tau:
            tr.support, alpha = tr.support[1:], alpha[1:]
    tr.alpha = np.array(alpha, float)
    return tr


# ---- the KRLS filters, for regression (budgetcli/learning/algorithms/krls.py); KAFBOX's classes, lib/<name>.m --------
# As the LMS filters: `scores` the predictions f_t(x_t), `support` the final dictionary (example indices, oldest
# first), and `dictionaries` the dictionary after each round (a set of example indices): the decisions.  The
# matrices are solved or inverted directly from the Gram matrix of the dictionary each round, not updated.


def _kernels(X, k) -> np.ndarray:
    """G[i, j] = k(x_i, x_j) for every pair of the stream, each computed once."""
    G = np.empty((len(X), len(X)))
    for i in range(len(X)):
        for j in range(i + 1):
            G[i, j] = G[j, i] = k(X[i], X[j])
    return G


def krls(X, y, k, nu=1e-4, budget=1000) -> Trace:
    """KRLS with the ALD dictionary (Engel, Mannor, Meir 2004, §III; KAFBOX krls.m l.50-76), in its closed form:
    a_t = K̃⁻¹k_t, δ_t = k_tt − k_tᵀa_t; δ_t > ν (and fewer than `budget` entries): x_t joins, and the rows of A
    (each example's coefficients on the dictionary) gain a column, x_t's row being the unit vector; else x_t's
    row is a_t.  α = K̃⁻¹ (AᵀA)⁻¹ Aᵀ y, the least-squares fit of the examples seen by the approximated kernel
    matrix A K̃ (what the recursion keeps, P being (AᵀA)⁻¹); AᵀA and Aᵀy are summed row by row."""
    G = _kernels(X, k)
    tr, D = Trace(), []
    AtA, Aty, alpha = np.zeros((0, 0)), np.zeros(0), np.zeros(0)
    for t in range(len(y)):
        kt = G[D, t]
        f = float(kt @ alpha)
        _regression_round(tr, f)
        if not D and G[t, t] <= 0:  # k(x, x) = 0 (a zero vector, linear kernel): nothing starts the dictionary
            tr.dictionaries.append(set(D))
            continue
        if D:
            a = np.linalg.solve(G[np.ix_(D, D)], kt)
            delta = G[t, t] - kt @ a
        if not D or (delta > nu and len(D) < budget):
            D.append(t)
            AtA = np.pad(AtA, (0, 1))
            Aty = np.append(Aty, 0.0)
            a = np.eye(len(D))[-1]
        AtA += np.outer(a, a)
        Aty += a * y[t]
        alpha = np.linalg.solve(G[np.ix_(D, D)], np.linalg.solve(AtA, Aty))
        tr.dictionaries.append(set(D))
    tr.support, tr.alpha = D, alpha
    return tr


def _ridge_fit(G, y, D, ridge) -> tuple[np.ndarray, np.ndarray]:
    """(α, H) with H = (K_D + ridge·I)⁻¹ and α = H y_D."""
    H = np.linalg.inv(G[np.ix_(D, D)] + ridge * np.eye(len(D)))
    return H @ y[D], H


def swkrls(X, y, k, budget=250, c=1e-2) -> Trace:
    """Sliding-window KRLS (Van Vaerenbergh, Vía, Santamaría 2006; KAFBOX swkrls.m l.48-61): the dictionary is
    the last `budget` examples, α = (K + cI)⁻¹y over them."""
    G = _kernels(X, k)
    tr, D, alpha = Trace(), [], np.zeros(0)
    for t in range(len(y)):
        f = float(G[D, t] @ alpha)
        _regression_round(tr, f)
        D = (D + [t])[-budget:]
        alpha, _ = _ridge_fit(G, y, D, c)
        tr.dictionaries.append(set(D))
    tr.support, tr.alpha = D, alpha
    return tr


def fbkrls(X, y, k, budget=100, lam=1e-2) -> Trace:
    """Fixed-budget KRLS (Van Vaerenbergh, Santamaría, Liu, Príncipe 2010, Sec. 3; KAFBOX fbkrls.m l.49-66,
    without the label update): x_t joins, α = (K + λI)⁻¹y (eq. 4); with more than `budget`, the entry of least
    |α_i| / [(K + λI)⁻¹]_ii (eq. 8, the first on ties; x_t last) leaves and α is fitted again."""
    G = _kernels(X, k)
    tr, D, alpha = Trace(), [], np.zeros(0)
    for t in range(len(y)):
        f = float(G[D, t] @ alpha)
        _regression_round(tr, f)
        D = D + [t]
        alpha, H = _ridge_fit(G, y, D, lam)
        if len(D) > budget:
            del D[int(np.argmin(np.abs(alpha) / np.diag(H)))]
            alpha, _ = _ridge_fit(G, y, D, lam)
        tr.dictionaries.append(set(D))
    tr.support, tr.alpha = D, alpha
    return tr


def krlst(X, y, k, budget=100, lam=0.999, sn2=1e-2, jitter=1e-6, w=None) -> Trace:
    """KRLS tracker (Van Vaerenbergh, Lázaro-Gredilla, Santamaría 2012; KAFBOX krlst.m l.67-144): the posterior
    N(μ, Σ) of f at the dictionary D, Q = (K_D + jitter·I)⁻¹ (inverted directly); f(x) = k(D, x)ᵀQμ.  A round:
    forget, Σ ← λΣ + (1 − λ)(K_D + jitter·I), μ ← √λ μ; q = Qk_t, ŷ = qᵀμ, γ² = k_tt + jitter − k_tᵀq,
    h = Σq, σ_f² = γ² + qᵀh (both clipped at 0), σ_y² = σ_n² + σ_f²; μ ← [μ; ŷ] + (y − ŷ)/σ_y² [h; σ_f²],
    Σ ← [Σ h; hᵀ σ_f²] − [h; σ_f²][h; σ_f²]ᵀ/σ_y²; x_t joins D.  Then γ² < jitter: x_t leaves again; else
    with more than `budget`, the entry of least |[Qμ]_i / Q_ii| (Q over D and x_t; the first on ties) leaves,
    taking its entry of μ and its row and column of Σ.  A weight w_t makes that round's σ_n² σ_n²/w_t."""
    G = _kernels(X, k)
    noise = sn2
    tr, D = Trace(), []
    mu, S = np.zeros(0), np.zeros((0, 0))

    def prior(D):
        return G[np.ix_(D, D)] + jitter * np.eye(len(D))

    for t in range(len(y)):
        kt = G[D, t]
        f = float(kt @ np.linalg.solve(prior(D), mu)) if D else 0.0
        _regression_round(tr, f)
        sn2 = noise / weight(w, t)
        ktt = G[t, t] + jitter
        if not D:  # krlst.m l.70-79
            D, mu, S = [t], np.array([y[t] * ktt / (ktt + sn2)]), np.array([[ktt - ktt**2 / (ktt + sn2)]])
            tr.dictionaries.append(set(D))
            continue
        S = lam * S + (1 - lam) * prior(D)
        mu = np.sqrt(lam) * mu
        q = np.linalg.solve(prior(D), kt)
        ymean = q @ mu
        gamma2 = max(ktt - kt @ q, 0.0)
        h = S @ q
        sf2 = max(gamma2 + q @ h, 0.0)
        sy2 = sn2 + sf2
        p = np.append(h, sf2)
        mu = np.append(mu, ymean) + (y[t] - ymean) / sy2 * p
        S = np.block([[S, h[:, None]], [h[None, :], np.array([[sf2]])]]) - np.outer(p, p) / sy2
        D = D + [t]
        r = None
        if gamma2 < jitter:
            r = len(D) - 1
        elif len(D) > budget:
            Q = np.linalg.inv(prior(D))
            r = int(np.argmin(np.abs(Q @ mu / np.diag(Q))))
        if r is not None:
            keep = [i for i in range(len(D)) if i != r]
            D, mu, S = [D[i] for i in keep], mu[keep], S[np.ix_(keep, keep)]
        tr.dictionaries.append(set(D))
    tr.support, tr.alpha = D, np.linalg.solve(prior(D), mu)
    return tr


# ---- novelty detection (budgetcli/learning/algorithms/novelty.py) ----------------------------------------------------
# A round records g_t(x_t) = f_t(x_t) − ρ_t (`scores`) and whether it was flagged (`margin_updates`: g ≤ 0);
# `mistakes` stay False (no labels).  `rho` holds ρ after each round.


def norma_novelty(X, k, eta=0.5, lam=0.001, nu=0.1, tau=500, w=None, reverse_sign=False) -> Trace:
    """NORMA novelty detection (Kivinen, Smola, Williamson 2004, §III-B), one example at a time: flagged when
    f_t(x_t) ≤ ρ_t; f_{t+1} = (1 − ηλ) f_t + η w δ_t k(x_t, ·); ρ_{t+1} = ρ_t − η w (δ_t − ν), the gradient
    step of max(0, ρ − f(x)) − νρ (`reverse_sign`: ρ_t + η w (δ_t − ν), the reverse sign); only the
    last τ terms kept (the oldest dropped)."""
    tr, alpha, rho = Trace(), [], 0.0
    tr.rho = []
    for t in range(len(X)):
        g = _expansion(X, t, tr.support, alpha, k) - rho
        flagged = g <= 0.0
        tr.scores.append(g)
        tr.mistakes.append(False)
        tr.margin_updates.append(flagged)
        alpha = [(1.0 - eta * lam) * a for a in alpha]
        step = eta * weight(w, t)
        if flagged:
            tr.support.append(t)
            alpha.append(step)
            if len(alpha) > tau:
                tr.support, alpha = tr.support[1:], alpha[1:]
        drift = step * ((1.0 if flagged else 0.0) - nu)
        rho = rho + drift if reverse_sign else rho - drift
        tr.rho.append(rho)
    tr.alpha = np.array(alpha, float)
    return tr


def fourier_features(x, omega, norm, arithmetic) -> np.ndarray:
    """FOGD's z(x) as `fogd` makes it: float32 (`single_fourier_features`) or numpy's float64 cos and sin."""
    if arithmetic == "single":
        return single_fourier_features(x, omega.astype(np.float32), norm)
    theta = x @ omega
    return np.concatenate([np.cos(theta), np.sin(theta)]) * norm


def fogd_novelty(X, k, D, eta=0.5, lam=0.001, nu=0.1, seed=0, arithmetic="float64", w=None) -> Trace:
    """NORMA's novelty step (Kivinen et al. 2004, §III-B, as `norma_novelty`) on FOGD's normalised map z
    (`fogd`): flagged when wᵀz(x_t) ≤ ρ_t; w ← (1 − ηλ) w + η w_t δ_t z(x_t); ρ ← ρ − η w_t (δ_t − ν).
    Trace.alpha holds the final w, `rho` ρ after each round."""
    omega = fourier_omega(seed, range(1, X.shape[1] + 1), D, k.gamma)
    tr, weights, v, rho = Trace(), w, np.zeros(2 * D), 0.0
    tr.rho = []
    for t in range(len(X)):
        z = fourier_features(X[t], omega, 1.0 / np.sqrt(D), arithmetic)
        g = float(v @ z) - rho
        flagged = g <= 0.0
        tr.scores.append(g)
        tr.mistakes.append(False)
        tr.margin_updates.append(flagged)
        step = eta * weight(weights, t)
        v = (1.0 - eta * lam) * v + (step * z if flagged else 0.0)
        rho -= step * ((1.0 if flagged else 0.0) - nu)
        tr.rho.append(rho)
    tr.alpha = v
    return tr


def nogd_novelty(X, k, budget, eta, eta1, rank, lam=0.001, nu=0.1, start="projected", w=None) -> Trace:
    """NORMA's novelty step (as `norma_novelty`) in NOGD's two phases (as `nogd`, written with w): flagged
    when f_t(x_t) ≤ ρ_t; until B landmarks, α ← (1 − ηλ) α, a flagged x_t joins with η w_t, ρ ← ρ − η w_t
    (δ_t − ν); on the first flagged round with B stored, M and w's start as `nogd`'s, and from that round on
    w ← (1 − η₁λ) w + η₁ w_t δ_t Mκ(x_t), ρ ← ρ − η₁ w_t (δ_t − ν).  Trace.alpha is Mᵀw (or α)."""
    tr, slots, alpha, v, M, rho = Trace(), [], [], None, None, 0.0
    tr.rho = []
    for t in range(len(X)):
        kappa = np.array([k(X[s], X[t]) for s in slots])
        f = float(np.dot(alpha, kappa)) if v is None else float(v @ (M @ kappa))
        flagged = f - rho <= 0.0
        tr.scores.append(f - rho)
        tr.mistakes.append(False)
        tr.margin_updates.append(flagged)
        if v is None and flagged and len(slots) >= budget:  # the switch
            gram = np.array([[k(X[a], X[b]) for b in slots] for a in slots])
            lam_, V = np.linalg.eigh(gram)
            top = [i for i in np.argsort(lam_)[::-1][:rank] if lam_[i] > 1e-10 * lam_.max()]
            M = (V[:, top] / np.sqrt(lam_[top])).T
            v = np.sqrt(lam_[top]) * (V[:, top].T @ np.array(alpha)) if start == "projected" else np.zeros(len(top))
        step = (eta if v is None else eta1) * weight(w, t)
        if v is None:
            alpha = [(1.0 - eta * lam) * a for a in alpha]
            if flagged:
                slots.append(t)
                alpha.append(step)
        else:
            v = (1.0 - eta1 * lam) * v + (step * (M @ kappa) if flagged else 0.0)
        rho -= step * ((1.0 if flagged else 0.0) - nu)
        tr.rho.append(rho)
    tr.support = slots
    tr.alpha = np.array(alpha, float) if v is None else M.T @ v
    return tr


REFERENCES = {
    "perceptron": ({}, lambda X, y, k, seed, w=None: perceptron(X, y, k, w=w)),
    "stoptron": ({"budget": 8}, lambda X, y, k, seed, w=None: stoptron(X, y, k, 8, w=w)),
    "projectron": ({"eta": 0.3}, lambda X, y, k, seed, w=None: projectron(X, y, k, 0.3, w=w)),
    "projectron++": [
        (
            {"eta": 0.3, "margin_step": m},
            lambda X, y, k, seed, m=m, w=None: projectron(X, y, k, 0.3, plusplus=True, margin_step=m, w=w),
        )
        for m in ("fig5", "projectron")
    ],
    "rbp": ({"budget": 8}, lambda X, y, k, seed, w=None: rbp_lbp(X, y, k, 8, "random", seed=seed, w=w)),
    "lbp": ({"budget": 8}, lambda X, y, k, seed, w=None: rbp_lbp(X, y, k, 8, "oldest", seed=seed, w=w)),
    "forgetron": ({"budget": 8}, lambda X, y, k, seed: forgetron(X, y, k, 8)),
    "pa": ({}, lambda X, y, k, seed: passive_aggressive(X, y, k, "pa")),
    "pa-i": ({"cost": 0.3}, lambda X, y, k, seed, w=None: passive_aggressive(X, y, k, "pa-i", C=0.3, w=w)),
    "pa-ii": ({"cost": 0.3}, lambda X, y, k, seed, w=None: passive_aggressive(X, y, k, "pa-ii", C=0.3, w=w)),
    "kernel-ogd": ({"learning_rate": 0.3}, lambda X, y, k, seed, w=None: kernel_ogd(X, y, k, 0.3, w=w)),
    "bpa-s": ({"budget": 8, "cost": 0.5}, lambda X, y, k, seed, w=None: bpa_s(X, y, k, 8, 0.5, w=w)),
    "bpa-p": ({"budget": 8, "cost": 0.5}, lambda X, y, k, seed, w=None: bpa_p(X, y, k, 8, 0.5, w=w)),
    "bpa-nn": ({"budget": 8, "cost": 0.5}, lambda X, y, k, seed, w=None: bpa_nn(X, y, k, 8, 0.5, w=w)),
    "bogd": ({"budget": 8}, lambda X, y, k, seed, w=None: bogd(X, y, k, 8, 0.5, 0.001, 10.0, "uniform", seed, w=w)),
    "bogd++": (
        {"budget": 8},
        lambda X, y, k, seed, w=None: bogd(X, y, k, 8, 0.5, 0.001, 10.0, "weighted", seed, w=w),
    ),
    "nogd": [
        (
            {"budget": 8, "nystrom_rank": 4, "nystrom_start": s},
            lambda X, y, k, seed, s=s, w=None: nogd(X, y, k, 8, 0.5, 0.5, 4, s, weights=w),
        )
        for s in ("projected", "zero")
    ],
    "fogd": [
        (
            {"components": 16, "map_arithmetic": arithmetic},
            lambda X, y, k, seed, a=arithmetic, w=None: fogd(
                X, y, k, 16, 0.5, seed, arithmetic=a.replace("vectorised", "float64"), w=w
            ),
        )
        for arithmetic in ("single", "vectorised")
    ],
    "nogd-regression": [
        (
            {"budget": 8, "nystrom_rank": 4, "nystrom_start": s, "loss": loss, "tube": 0.3},
            lambda X, y, k, seed, s=s, loss=loss, w=None: nogd(
                X, y, k, 8, 0.5, 0.5, 4, s, weights=w, loss=loss, eps=0.3
            ),
        )
        for s, loss in (
            ("projected", "squared"),
            ("zero", "epsilon-insensitive"),
            ("projected", "squared-outside-tube"),
        )
    ],
    "fogd-regression": [
        (
            {"components": 16, "map_arithmetic": "vectorised", "loss": loss, "tube": 0.3},
            lambda X, y, k, seed, loss=loss, w=None: fogd(X, y, k, 16, 0.5, seed, w=w, loss=loss, eps=0.3),
        )
        for loss in ("squared", "epsilon-insensitive", "squared-outside-tube")
    ],
    "bogd-regression": [
        (
            {"budget": 8, "regularization": 0.001, "removal": removal, "loss": loss, "tube": 0.3},
            lambda X, y, k, seed, r=removal, loss=loss, w=None: bogd(
                X, y, k, 8, 0.5, 0.001, 10.0, r, seed, w=w, loss=loss, eps=0.3
            ),
        )
        for removal, loss in (
            ("uniform", "squared"),
            ("oldest", "squared-outside-tube"),
            ("weighted", "epsilon-insensitive"),
        )
    ],
    "bogd-fifo": (
        {"budget": 8},
        lambda X, y, k, seed, w=None: bogd(X, y, k, 8, 0.5, 0.001, np.inf, "oldest", seed, w=w),
    ),
    "spa": ({"spa_lambda": 0.5}, lambda X, y, k, seed, w=None: shifting_perceptron(X, y, k, 0.5, w=w)),
    "budget-perceptron": (
        {"budget": 8, "beta": 1.0, "update": "svm", "cost": 0.7},
        lambda X, y, k, seed: cks_budget_perceptron(X, y, k, 8, 1.0, "svm", C=0.7),
    ),
    "tighter-perceptron": (
        {"budget": 8, "eval_set": "random", "eval_size": 10},
        lambda X, y, k, seed: tighter_budget_perceptron(X, y, k, 8, "random", q=10, seed=seed),
    ),
    "alma2": ({}, lambda X, y, k, seed: alma2(X, y, k)),
    "projectron-alma2": ({"eta": 0.05}, lambda X, y, k, seed: alma2(X, y, k, eta=0.05)),
    "klms": ({"budget": 150}, lambda X, y, k, seed, w=None: klms(X, y, k, budget=150, w=w)),
    "qklms": ({"quantization": 1.0}, lambda X, y, k, seed, w=None: qklms(X, y, k, epsu=1.0, w=w)),
    "norma": [
        (
            {"budget": 40, "norma_error": e},
            lambda X, y, k, seed, e=e, w=None: norma(X, y, k, tau=40, error=e, w=w),
        )
        for e in ("before-shrink", "after-shrink")
    ],
    "norma-epsilon": [
        (
            {"budget": 40, "step_size": 0.5, "tube": 0.2, "norma_loss": loss, "norma_nu": 0.3},
            lambda X, y, k, seed, loss=loss, w=None: norma(
                X, y, k, tau=40, w=w, eps=0.2, nu=0.3 if loss == "nu" else None
            ),
        )
        for loss in ("epsilon-insensitive", "nu")
    ],
    "krls": ({"krls_nu": 0.1}, lambda X, y, k, seed: krls(X, y, k, nu=0.1)),  # K̃ well conditioned: to 1e-12
    "swkrls": ({"budget": 40}, lambda X, y, k, seed: swkrls(X, y, k, budget=40)),
    "fbkrls": (
        {"budget": 64, "fbkrls_lambda": 0.1},
        lambda X, y, k, seed: fbkrls(X, y, k, budget=64, lam=0.1),
    ),
    "krlst": (  # strong forgetting: old centres leave (the archive's compressions); Q well conditioned
        {"budget": 30, "krlst_lambda": 0.9, "krlst_jitter": 1e-3},
        lambda X, y, k, seed, w=None: krlst(X, y, k, budget=30, lam=0.9, jitter=1e-3, w=w),
    ),
    "norma-novelty": (  # rho_fit learnt: its decision_function is then the round's f_t(x) - rho_t, the reference's
        {"budget": 8, "nu": 0.3, "norma_lambda": 0.05, "rho_fit": "learnt"},
        lambda X, y, k, seed, w=None: norma_novelty(X, k, lam=0.05, nu=0.3, tau=8, w=w),
    ),
    "fogd-novelty": [
        (
            {"components": 16, "map_arithmetic": arithmetic, "norma_lambda": 0.05, "nu": 0.3, "rho_fit": "learnt"},
            lambda X, y, k, seed, a=arithmetic, w=None: fogd_novelty(
                X, k, 16, lam=0.05, nu=0.3, seed=seed, arithmetic=a.replace("vectorised", "float64"), w=w
            ),
        )
        for arithmetic in ("single", "vectorised")
    ],
    "nogd-novelty": [
        (
            {"budget": 8, "nystrom_rank": 4, "nystrom_start": s, "norma_lambda": 0.05, "nu": 0.3, "rho_fit": "learnt"},
            lambda X, y, k, seed, s=s, w=None: nogd_novelty(X, k, 8, 0.5, 0.5, 4, lam=0.05, nu=0.3, start=s, w=w),
        )
        for s in ("projected", "zero")
    ],
}
