"""Plain reference implementations of the multiclass learners, from the papers' pseudo-code.

Dense numpy, one example at a time, kernels from their definitions, true coefficients (no lazy
scale), ‖w‖² recomputed from the Gram matrix every round, projections by a direct solve.

Conventions shared with budgetcli/learning/multiclass.py and budgetcli/learning/algorithms/pegasos.py:
- classes are indices in order of first appearance; the known classes at round t include y_t;
- r = the highest-scoring known class other than y_t (ties: lowest index); no r, no update;
- a mistake is f_y ≤ f_r;
- removals move the last support vector into the freed place (`swap_remove`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .reference import DEPENDENCE_TOL, SplitMix64, fourier_omega, single_fourier_features, swap_remove, weight

GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass
class MCTrace:
    mistakes: list = field(default_factory=list)  # per round
    margin_updates: list = field(default_factory=list)  # per round: loss > 0 without a mistake
    scores: list = field(default_factory=list)  # per round: f(x_t) over the classes known at t
    support: list = field(default_factory=list)  # the support vectors (dense), slot order
    coef: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # n × m, true coefficients
    n_classes: int = 0


def rival(f, y):
    r = -1
    for i in range(len(f)):
        if i != y and (r < 0 or f[i] > f[r]):
            r = i
    return r


def scores(V, A, x, k, m):
    return np.array([sum(a[i] * k(v, x) for a, v in zip(A, V)) for i in range(m)])


def finish(tr, V, A, m):
    tr.support = [np.array(v) for v in V]
    tr.coef = np.array([a[:m] for a in A]).reshape(len(A), m)
    tr.n_classes = m
    return tr


def max_score(X, y, k, variant="perceptron", budget=0, seed=0, w=None) -> MCTrace:
    """Crammer–Singer max-score Perceptron / PA (τ = ℓ/(2k(x,x))) and MRBP (Projectron paper §7:
    with B stored, a random one is discarded and the newcomer takes its place); a Perceptron mistake of
    weight w adds ±w."""
    tr, rng = MCTrace(), SplitMix64(seed)
    M = int(max(y)) + 1
    V, A, m = [], [], 0
    for t in range(len(y)):
        x, yt = X[t], int(y[t])
        m = max(m, yt + 1)
        f = scores(V, A, x, k, m)
        tr.scores.append(f)
        r = rival(f, yt)
        margin = f[yt] - f[r] if r >= 0 else math.inf
        tr.mistakes.append(margin <= 0)
        tr.margin_updates.append(variant == "pa" and 0 < margin < 1)
        if variant == "pa":
            if margin >= 1 or k(x, x) <= 0:
                continue
            tau = (1 - margin) / (2 * k(x, x))
        else:
            if margin > 0:
                continue
            tau = weight(w, t)
        c = np.zeros(M)
        c[yt], c[r] = tau, -tau
        if variant == "rbp" and len(V) >= budget:
            j = rng.below(budget)
            V[j], A[j] = x, c
        else:
            V.append(x)
            A.append(c)
    return finish(tr, V, A, m)


def gram(V, k):
    return np.array([[k(a, b) for b in V] for a in V]).reshape(len(V), len(V))


def weight_norm2(V, A, k):
    """‖w‖² = Σ_i α^(i)ᵀ K α^(i)."""
    if not V:
        return 0.0
    Am = np.array(A)
    return float(np.sum(Am * (gram(V, k) @ Am)))


def golden_h(kmn, saa, sab, sbb, tol=1e-8):
    """argmax over [0, 1] of Σ_i (a_i kmn^{(1−h)²} + b_i kmn^{h²})², golden-section search."""

    def g(h):
        k1, k2 = kmn ** ((1 - h) ** 2), kmn ** (h * h)
        return k1 * k1 * saa + 2 * k1 * k2 * sab + k2 * k2 * sbb

    # the maximum is in the half nearer the heavier SV: g(h) − g(1−h) = (k1² − k2²)(saa − sbb)
    lo, hi = (0.5, 1.0) if saa >= sbb * (1 - 1e-9) else (0.0, 0.5)
    c, d = hi - GOLDEN * (hi - lo), lo + GOLDEN * (hi - lo)
    gc, gd = g(c), g(d)
    while hi - lo > tol:
        if gc >= gd:
            hi, d, gd = d, c, gc
            c = hi - GOLDEN * (hi - lo)
            gc = g(c)
        else:
            lo, c, gc = c, d, gd
            d = lo + GOLDEN * (hi - lo)
            gd = g(d)
    h = 0.5 * (lo + hi)
    return h, g(h)


def table_h(r_index, k_index, steps=400, _cells={}):
    """Qaadan and Glasmachers (2018): the merge's h precomputed on a grid over (r, κ), r = b/a ∈ [−1, 1]
    the ratio of two collinear coefficient rows (the larger a), κ ∈ [0, 1]; a cell is the golden-section
    argmax for a = 1, b = r (made when first asked for)."""
    if (r_index, k_index) not in _cells:
        r = -1.0 + 2.0 * r_index / steps
        if k_index == 0:  # κ → 0: eq. 21 → a² at h = 1, 0 elsewhere
            _cells[r_index, k_index] = 1.0
        elif k_index == steps:  # κ → 1: maximise a(1−h)² + b h²'s opposite, h = a/(a + b) within [½, 1]
            _cells[r_index, k_index] = 1.0 / (1.0 + r) if r > 0 else 1.0
        else:
            _cells[r_index, k_index] = golden_h(k_index / steps, 1.0, r, r * r)[0]
    return _cells[r_index, k_index]


def lookup_h(kmn, saa, sab, sbb, steps=400):
    """h for collinear rows from the table: r = Σab over the larger row's Σ², bilinear interpolation
    between the four grid points around (r, κ); h ↦ 1 − h when the partner's row is the larger (the
    table is for z in the half nearer the larger row, as golden_h searches)."""
    swap = saa < sbb * (1 - 1e-9)
    r = min(max(sab / sbb if swap else sab / saa, -1.0), 1.0)
    x, yk = (r + 1.0) * steps / 2, min(max(kmn, 0.0), 1.0) * steps
    i, j = min(int(x), steps - 1), min(int(yk), steps - 1)
    fx, fy = x - i, yk - j
    h = (1 - fy) * ((1 - fx) * table_h(i, j) + fx * table_h(i + 1, j)) + fy * (
        (1 - fx) * table_h(i, j + 1) + fx * table_h(i + 1, j + 1)
    )
    return 1.0 - h if swap else h


def smallest(V, A, born, k):
    """§4.1: argmin_j ‖α_j‖² k(x_j, x_j); values within a relative 1e-9 of the minimum tie, and the
    oldest of the tied SVs is taken."""
    w = [float(a @ a) * k(v, v) for a, v in zip(A, V)]
    tied = [j for j in range(len(V)) if w[j] <= min(w) * (1 + 1e-9)]
    return min(tied, key=lambda j: (born[j], j))


def maintain(V, A, born, k, mode, rng):
    """One budget maintenance step on the lists V (vectors), A (coefficient rows) and born (round of
    addition), in place."""
    p = rng.below(len(V)) if mode == "random" else smallest(V, A, born, k)
    if mode in ("random", "smallest"):
        swap_remove([V, A, born], p)
        return
    if mode == "project":  # §4.2, eq. 16 by a direct solve
        rest = [j for j in range(len(V)) if j != p]
        Kr = gram([V[j] for j in rest], k)
        kp = np.array([k(V[j], V[p]) for j in rest])
        d = np.linalg.solve(Kr, kp)
        for dj, j in zip(d, rest):
            A[j] = A[j] + A[p] * dj
        swap_remove([V, A, born], p)
        return
    # merge, §4.3: partner of least degradation, h by golden section (merge-lookup: from the table when
    # the two rows are collinear), z on the segment
    a = A[p]
    best = None
    for j in range(len(V)):
        if j == p:
            continue
        kpj = k(V[p], V[j])
        saa, sab, sbb = float(a @ a), float(a @ A[j]), float(A[j] @ A[j])
        if mode == "merge-lookup" and sab * sab >= saa * sbb * (1 - 1e-9):  # collinear rows: two classes
            h = lookup_h(kpj, saa, sab, sbb)
            k1, k2 = kpj ** ((1 - h) ** 2), kpj ** (h * h)
            gh = k1 * k1 * saa + 2 * k1 * k2 * sab + k2 * k2 * sbb
        else:
            h, gh = golden_h(kpj, saa, sab, sbb)
        deg = float(a @ a) + float(A[j] @ A[j]) + 2 * kpj * float(a @ A[j]) - gh
        if best is None or deg < best[0]:
            best = (deg, j, h, kpj)
    _, q, h, kpq = best
    z = h * V[p] + (1 - h) * V[q]
    V[p], A[p] = z, A[p] * kpq ** ((1 - h) ** 2) + A[q] * kpq ** (h * h)
    swap_remove([V, A, born], q)  # z keeps the round of x_p


def pegasos(X, y, k, lam, budget=0, maintenance=None, seed=0, w=None) -> MCTrace:
    """Wang, Crammer, Vucetic 2010, Algorithm 1 (budget 0: PegasosM, no line 5); a loss of weight w adds
    ±w η_t."""
    tr, rng = MCTrace(), SplitMix64(seed)
    M = int(max(y)) + 1
    V, A, born, m = [], [], [], 0
    for t in range(1, len(y) + 1):
        x, yt = X[t - 1], int(y[t - 1])
        m = max(m, yt + 1)
        f = scores(V, A, x, k, m)
        tr.scores.append(f)
        r = rival(f, yt)
        margin = f[yt] - f[r] if r >= 0 else math.inf
        loss = max(0.0, 1 - margin)
        tr.mistakes.append(margin <= 0)
        tr.margin_updates.append(0 < margin < 1)
        A = [a * (1 - 1 / t) for a in A]  # line 1
        if loss > 0:
            eta = weight(w, t - 1) / (lam * t)
            c = np.zeros(M)
            c[yt], c[r] = eta, -eta
            added = True
            if maintenance == "project" and V:
                kv = np.array([k(v, x) for v in V])
                d = np.linalg.solve(gram(V, k), kv)
                if k(x, x) - kv @ d <= 1e-6 * k(x, x):  # bpegasos' SPAN_TOL
                    for j in range(len(V)):
                        A[j] = A[j] + c * d[j]
                    added = False
            if added:
                V.append(x)
                A.append(c)
                born.append(t)
            if budget and len(V) > budget:
                maintain(V, A, born, k, maintenance, rng)
        n2 = weight_norm2(V, A, k)  # line 8
        if n2 * lam > 1:
            A = [a / math.sqrt(lam * n2) for a in A]
    return finish(tr, V, A, m)


def mc_projectron_pp(X, y, k, eta, w=None) -> MCTrace:
    """Projectron paper §5 (multiclass Projectron++, kernel δ_{yy'}k(x, x')): the support set is a
    list of pairs (x, class) with one coefficient each; projections onto a class's pairs by a
    direct solve of that class's Gram system.  A weight w is the cost C = w: a mistake's update ±w,
    a margin error's τ ≤ w."""
    tr = MCTrace()
    V, C, alpha, m = [], [], [], 0  # pair vectors, their classes, coefficients
    for t in range(len(y)):
        x, yt = X[t], int(y[t])
        m = max(m, yt + 1)
        f = np.array([sum(a * k(v, x) for v, c, a in zip(V, C, alpha) if c == i) for i in range(m)])
        tr.scores.append(f)
        r = rival(f, yt)
        margin = f[yt] - f[r] if r >= 0 else math.inf
        tr.mistakes.append(margin <= 0)
        tr.margin_updates.append(False)
        if margin >= 1:
            continue
        kxx = k(x, x)
        parts = {}
        for c in (yt, r):
            slots = [j for j in range(len(V)) if C[j] == c]
            if slots:
                kc = np.array([k(V[j], x) for j in slots])
                d = np.linalg.solve(gram([V[j] for j in slots], k), kc)
                pk2 = float(kc @ d)
            else:
                d, pk2 = np.zeros(0), 0.0
            d2 = kxx - pk2
            parts[c] = (slots, d, 0.0 if d2 <= DEPENDENCE_TOL * kxx else d2, pk2)
        delta = math.sqrt(parts[yt][2] + parts[r][2])

        def add_projection(scale):
            for c, sign in ((yt, 1.0), (r, -1.0)):
                slots, d, _, _ = parts[c]
                for j, dj in zip(slots, d):
                    alpha[j] += scale * sign * dj

        if margin <= 0:
            if delta <= eta:
                add_projection(weight(w, t))
                continue
            for c, sign in ((yt, weight(w, t)), (r, -weight(w, t))):
                slots, d, d2, _ = parts[c]
                if d2 == 0.0:
                    for j, dj in zip(slots, d):
                        alpha[j] += sign * dj
                else:
                    V.append(x)
                    C.append(c)
                    alpha.append(sign)
            continue
        pk2 = parts[yt][3] + parts[r][3]
        if pk2 <= 0:
            continue
        loss = 1 - margin
        if delta == 0:
            penalty = 0.0
        elif eta > 0:
            penalty = delta / eta
        else:
            continue
        if loss < penalty:
            continue
        add_projection(min(loss / pk2, 2 * (loss - penalty) / pk2, weight(w, t)))
        tr.margin_updates[-1] = True
    tr.support = [np.array(v) for v in V]
    tr.coef = np.zeros((len(V), m))
    for j, (c, a) in enumerate(zip(C, alpha)):
        tr.coef[j, c] = a
    tr.n_classes = m
    return tr


# Each algorithm's reference run for tests/test_contract.py (see tests/reference.py).
def mc_nogd(X, y, k, budget, eta, eta1, rank, start="projected", w=None) -> MCTrace:
    """Lu, Hoi, Wang, Zhao, Liu, JMLR 2016, §5, multiclass, written with W as the JMLR authors' NyGD.m: phase
    one stores each updating example once with η(e_y − e_r) (ℓ = 1 − f_y + f_r > 0) until B; on the first
    updating round with B stored, M = Λ_k^(−1/2) V_kᵀ (the k largest eigenpairs above 1e-10 λ_max), W = A·M⁺
    (m × k; "zero": 0), that round predicted by the expansion; then V = W M κ(x), and on ℓ > 0 the rows y and
    r of W move by ±η₁ M κ(x).  MCTrace.coef is (W M)ᵀ, the expansion over the landmarks."""
    tr = MCTrace()
    Mc = int(max(y)) + 1
    V, A, m, W, Mk = [], [], 0, None, None
    for t in range(len(y)):
        x, yt = X[t], int(y[t])
        m = max(m, yt + 1)
        kappa = np.array([k(v, x) for v in V])
        f = scores(V, A, x, k, m) if W is None else (W @ (Mk @ kappa))[:m]
        tr.scores.append(f)
        r = rival(f, yt)
        margin = f[yt] - f[r] if r >= 0 else math.inf
        tr.mistakes.append(margin <= 0)
        tr.margin_updates.append(0 < margin < 1)
        if margin >= 1:
            continue
        if W is None and len(V) < budget:
            c = np.zeros(Mc)
            c[yt], c[r] = eta * weight(w, t), -eta * weight(w, t)
            V.append(x)
            A.append(c)
            continue
        if W is None:  # the switch
            lam, U = np.linalg.eigh(gram(V, k))
            top = [i for i in np.argsort(lam)[::-1][:rank] if lam[i] > 1e-10 * lam.max()]
            Mk = (U[:, top] / np.sqrt(lam[top])).T
            W = (np.array(A).T @ np.linalg.pinv(Mk)) if start == "projected" else np.zeros((Mc, len(top)))
        z = Mk @ kappa
        W[yt] += eta1 * weight(w, t) * z
        W[r] -= eta1 * weight(w, t) * z
    if W is not None:
        A = list((W @ Mk).T)
    return finish(tr, V, A, m)


def mc_fogd(X, y, k, D, eta, seed=0, arithmetic="float64", w=None) -> MCTrace:
    """JMLR 2016 §4, multiclass as the authors' FouGD.m: z(x) = D^(−1/2)[cos Ωᵀx, sin Ωᵀx] (tests/reference.py's
    map, k's γ; arithmetic "single": its float32 map), V = W z(x); on ℓ = 1 − V_y + V_r > 0 the rows y and r
    of W move by ±η z(x).  MCTrace.coef is W over the known classes, a row per class."""
    omega = fourier_omega(seed, range(1, X.shape[1] + 1), D, k.gamma)
    tr = MCTrace()
    W = np.zeros((int(max(y)) + 1, 2 * D))
    m = 0
    for t in range(len(y)):
        yt = int(y[t])
        m = max(m, yt + 1)
        if arithmetic == "single":
            z = single_fourier_features(X[t], omega.astype(np.float32), 1 / np.sqrt(D))
        else:
            z = np.concatenate([np.cos(X[t] @ omega), np.sin(X[t] @ omega)]) / np.sqrt(D)
        f = W[:m] @ z
        tr.scores.append(f)
        r = rival(f, yt)
        margin = f[yt] - f[r] if r >= 0 else math.inf
        tr.mistakes.append(margin <= 0)
        tr.margin_updates.append(0 < margin < 1)
        if margin < 1:
            W[yt] += eta * weight(w, t) * z
            W[r] -= eta * weight(w, t) * z
    tr.coef, tr.n_classes = W[:m], m
    return tr


REFERENCES = {
    "mc-perceptron": ({}, lambda X, y, k, seed, w=None: max_score(X, y, k, w=w)),
    "mc-fogd": [
        (
            {"components": 16, "map_arithmetic": arithmetic},
            lambda X, y, k, seed, a=arithmetic, w=None: mc_fogd(
                X, y, k, 16, 0.5, seed, "single" if a == "single" else "float64", w=w
            ),
        )
        for arithmetic in ("single", "vectorised")
    ],
    "mc-nogd": [
        (
            {"budget": 8, "nystrom_rank": 4, "nystrom_start": s},
            lambda X, y, k, seed, s=s, w=None: mc_nogd(X, y, k, 8, 0.5, 0.5, 4, s, w=w),
        )
        for s in ("projected", "zero")
    ],
    "mc-pa": ({}, lambda X, y, k, seed: max_score(X, y, k, "pa")),
    "mrbp": ({"budget": 8}, lambda X, y, k, seed, w=None: max_score(X, y, k, "rbp", 8, seed=seed, w=w)),
    "mc-projectron++": ({"eta": 0.3}, lambda X, y, k, seed, w=None: mc_projectron_pp(X, y, k, 0.3, w=w)),
    "pegasos": ({"lambda_": 0.05}, lambda X, y, k, seed, w=None: pegasos(X, y, k, 0.05, w=w)),
    "bpegasos": [
        (
            {"lambda_": 0.05, "budget": 8, "maintenance": m},
            lambda X, y, k, seed, m=m, w=None: pegasos(X, y, k, 0.05, budget=8, maintenance=m, seed=seed, w=w),
        )
        for m in ("merge", "project")
    ],
}
