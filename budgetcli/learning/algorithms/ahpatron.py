"""AVP and Ahpatron (Liao, Li, Liao, Hu, Dang, "Improved Regret Bounds ... Ahpatron", AAAI 2024,
Algorithms 1 and 2).

`avp`, the Aggressive Variant of Perceptron (Algorithm 1): on y_t f_t(x_t) < 1 − ε,
    f_{t+1} = Proj(f_t + λ_t y_t k(x_t, ·)),   Proj(g) = min{1, U/‖g‖} g   (the ball of radius U),
and x_t joins the support set.  λ_t is a constant λ (`--step`, Corollary 1: λ = 1, U = ∞,
ε ∈ (1/2, 1)) or, with `--step-schedule corollary2`, λ_t = U / √(U² + M_t), M_t the number of rounds
τ ≤ t with y_τ f_τ(x_τ) ≤ 0, the current one included (Corollary 2; needs a finite U, and the
theorem asks λ_t/2 < ε < 1).  Defaults: Corollary 1's λ = 1, U = ∞ and ε = 0.6 (inside its open
interval (1/2, 1); the paper never ran AVP alone).

`ahpatron` (Algorithm 2): the same update while |S_t| < B.  When |S_t| = B and an update is due, the
support set is halved first: S_{t,2} = the ⌊B/2⌋ support vectors with the largest |α| (ties to the
lower slot), S_{t,1} the rest; f_{t,1} is projected onto span S_{t,2} with the ridge η (eq. 9)
    θ = (K₂ + ηI)⁻¹ K₂₁ α₁,
and f̄_t = c_t U (α₂ + θ)/‖f_{t,2} + f̂_{t,1}‖ on S_{t,2} (eqs. 7, 8); then f_{t+1} = Proj(f̄_t +
λ y_t k(x_t, ·)) and x_t joins, so |S_{t+1}| = ⌊B/2⌋ + 1.  That O(B³) solve (a Cholesky factorisation
of K₂ + ηI) runs only at a halving, at most once every ⌈B/2⌉ updates; otherwise a round costs the
kernel row plus O(|S|) (the Gram matrix of the support set is kept for the halving: one row per
addition).  Choices, each tested against tests/reference_second_order.py:
- c_t: `--ahpatron-c` c ∈ (0, 1] rescales to c·U (Theorem 4 uses c = 0.6); by default c_t = ‖f_t‖/U
  (Theorem 6, which the paper's experiments follow — the authors' code rescales to ‖f_t‖), so a
  halving keeps the norm of f.
- Defaults as the experiments: η = 0.0005, U = √B/2, λ = U/√(4B) (= Theorem 6's λ = U/(2√B)),
  ε = 0.5 (the paper picks the best ε ∈ {0.5, …, 0.9} in hindsight; its code has 0.5).  Theorem 6
  holds with these only when the halving distortion ζ of its eq. (11) is small enough
  (U ≤ (1 − γ)√B/(1/4 + 9ζ/2) needs ζ < 7/18); Theorem 4's conditions (U ≤ √B/4, λ = √2 U/√B,
  c = 0.6) can be set by hand.
- Odd B keeps ⌊B/2⌋ and removes ⌈B/2⌉; B ≥ 2.  The kept vectors stay in slot order and x_t is
  appended, as in the authors' code.
- If α₂ + θ is the zero function (‖·‖ = 0), f̄_t = 0.
- A mistake is y f ≤ 0; a margin update is 0 < y f < 1 − ε (the paper's N_T); the `projections`
  counter counts halvings.  ‖f‖² is tracked
  incrementally (‖f + λ y k(x, ·)‖² = ‖f‖² + 2λ y f(x) + λ² k(x, x)) and set exactly at each
  projection and halving.
"""

from __future__ import annotations

import math

import numpy as np

from ...numerics._jit import njit
from ...numerics.kernels import self_kernel
from ..learner import (
    give_answer,
    MARGIN_UPDATES,
    MISTAKES,
    NO_MATRIX,
    PROJECTIONS,
    KernelLearner,
    loop_arrays,
    new_coefficient,
    open_round,
    retire,
    touch,
)
from ..mixing import Mixing
from ...base.params import BUDGET, HALF_OPEN_UNIT, POSITIVE, POSITIVE_OR_INF, UNIT, choice, number
from ...numerics.gram import gram_of_support
from ...base.registry import register
from ...numerics.support import COUNT, POOL_GARBAGE, dense_rebuild, sv_fits, sv_put

NORM2 = 0  # ‖f‖², in `scalars`
CONSTANT, COROLLARY2 = 0, 1  # the step schedules, in STEP_SCHEDULE's order

RADIUS = number(
    "radius",
    math.inf,
    "radius U of the ball f is projected onto, ‖f‖ ≤ U (AVP/Ahpatron)",
    POSITIVE_OR_INF,
    flags=("-U", "--radius"),
)
STEP = number("step", 1.0, "step λ of the AVP/Ahpatron update f + λ y k(x, ·)", POSITIVE)
STEP_SCHEDULE = choice(
    "step_schedule",
    ("constant", "corollary2"),
    "constant",
    "AVP's λ_t: constant (--step) or corollary2 (λ_t = U/√(U² + mistakes so far), Corollary 2; needs a finite -U)",
)
EPSILON = number("epsilon", 0.6, "ε: AVP/Ahpatron update when y f(x) < 1 − ε", UNIT)
AHP_ETA = number("ahpatron_eta", 0.0005, "ridge η of Ahpatron's projection θ = (K2 + ηI)^-1 K21 α (eq. 9)", POSITIVE)
AHP_C = number(
    "ahpatron_c",
    None,
    "Ahpatron rescales f to c·U after a halving, c ∈ (0, 1] (Theorem 4: 0.6)",
    HALF_OPEN_UNIT,
    default_text="c_t = ‖f_t‖/U (Theorem 6, the paper's experiments)",
)


@njit(cache=True)
def cholesky_solve(M, b):
    """x with M x = b for a symmetric positive definite M (overwritten by its Cholesky factor)."""
    m = M.shape[0]
    for j in range(m):
        s = M[j, j]
        for k in range(j):
            s -= M[j, k] * M[j, k]
        M[j, j] = math.sqrt(s)
        for i in range(j + 1, m):
            s = M[i, j]
            for k in range(j):
                s -= M[i, k] * M[j, k]
            M[i, j] = s / M[j, j]
    x = b.copy()
    for i in range(m):  # L z = b
        for k in range(i):
            x[i] -= M[i, k] * x[k]
        x[i] /= M[i, i]
    for i in range(m - 1, -1, -1):  # Lᵀ x = z
        for k in range(i + 1, m):
            x[i] -= M[k, i] * x[k]
        x[i] /= M[i, i]
    return x


@njit(cache=True)
def halve(S, book, alpha, avg_sum, avg_stamp, gram, krow, n, eta, target, rnd):
    """Keep the ⌊n/2⌋ support vectors with the largest |α| (in slot order, ties to the lower slot),
    fold the removed half into them by eq. (9), rescale to norm `target` (eqs. 7–8).  Returns the new
    ‖f‖²; krow and gram are moved with their slots."""
    m = n // 2
    order = np.argsort(-np.abs(alpha[:n]), kind="mergesort")  # stable: equal |α| keeps the lower slot
    kept_mask = np.zeros(n, np.bool_)
    for p in range(m):
        kept_mask[order[p]] = True
    kept = np.empty(m, np.int64)
    removed = np.empty(n - m, np.int64)
    a, b = 0, 0
    for i in range(n):
        if kept_mask[i]:
            kept[a] = i
            a += 1
        else:
            removed[b] = i
            b += 1
    system = np.empty((m, m))
    rhs = np.zeros(m)
    for p in range(m):
        for q in range(m):
            system[p, q] = gram[kept[p], kept[q]]
        system[p, p] += eta
        for r in range(n - m):
            rhs[p] += gram[kept[p], removed[r]] * alpha[removed[r]]
    theta = cholesky_solve(system, rhs)
    beta = np.empty(m)
    for p in range(m):
        beta[p] = alpha[kept[p]] + theta[p]
    norm2 = 0.0
    for p in range(m):
        s = 0.0
        for q in range(m):
            s += gram[kept[p], kept[q]] * beta[q]
        norm2 += beta[p] * s
    scale = target / math.sqrt(norm2) if norm2 > 0.0 else 0.0
    for r in range(n - m):
        retire(S, book, alpha, avg_sum, avg_stamp, removed[r], rnd)
        S.meta[POOL_GARBAGE] += S.length[removed[r]]
    for p in range(m):
        touch(alpha, avg_sum, avg_stamp, kept[p], rnd)
    for p in range(m):  # kept[p] ≥ p: moving in increasing order never overwrites a slot still to move
        i = kept[p]
        S.start[p], S.length[p], S.sqnorm[p] = S.start[i], S.length[i], S.sqnorm[i]
        avg_sum[p], avg_stamp[p], krow[p] = avg_sum[i], avg_stamp[i], krow[i]
        alpha[p] = beta[p] * scale
        for q in range(m):  # kept[q] ≥ q: columns still to be read are not yet overwritten
            gram[p, q] = gram[i, kept[q]]
    S.meta[COUNT] = m
    dense_rebuild(S, n)
    return target * target if norm2 > 0.0 else 0.0


@njit(cache=True)
def aggressive_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, scalars, radius = st.alpha, st.krow, book.scalars, h.radius
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        margin = yt * f
        if margin <= 0.0:
            counters[MISTAKES] += 1
        if margin >= 1.0 - h.epsilon:
            continue
        if margin > 0.0:
            counters[MARGIN_UPDATES] += 1
        lam = h.step if h.step_schedule == CONSTANT else radius / math.sqrt(radius * radius + counters[MISTAKES])
        if h.halving and n >= h.budget:
            # c_t U; by default (c is NaN) ‖f_t‖
            target = h.ahpatron_c * radius if h.ahpatron_c > 0.0 else math.sqrt(scalars[NORM2])
            scalars[NORM2] = halve(
                S, book, alpha, st.avg_sum, st.avg_stamp, st.gram, st.krow, n, h.ahpatron_eta, target, rnd
            )
            counters[PROJECTIONS] += 1  # a halving is the projection of eq. (6)
            n = S.meta[COUNT]
            f = 0.0  # f̄_t(x_t)
            for i in range(n):
                f += alpha[i] * st.krow[i]
        kxx = self_kernel(K, sq)
        norm2 = scalars[NORM2] + 2.0 * lam * yt * f + lam * lam * kxx
        sv_put(S, n, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, lam * yt, rnd)
        if h.halving:
            for j in range(n):
                st.gram[n, j] = st.krow[j]
                st.gram[j, n] = st.krow[j]
            st.gram[n, n] = kxx
        if norm2 > radius * radius:
            scale = radius / math.sqrt(norm2)
            for i in range(n + 1):
                touch(alpha, st.avg_sum, st.avg_stamp, i, rnd)
                alpha[i] *= scale
            norm2 = radius * radius
        scalars[NORM2] = max(norm2, 0.0)
    return y.shape[0]


class NormMixing(Mixing):
    def after_mix(self, learner) -> None:
        """‖f‖² of the mixed model, αᵀKα (the scalar AVP's projection onto the ball reads)."""
        n = len(learner.support)
        alpha = learner.slot["alpha"][:n]
        learner.scalars[NORM2] = max(float(alpha @ learner.gram() @ alpha), 0.0)


@register
class AggressivePerceptron(KernelLearner):
    name = "avp"
    summary = "Aggressive Variant of Perceptron: on y f < 1 − ε add λ_t y k(x, ·), project onto ‖f‖ ≤ U; unbounded"
    paper = "Liao, Li, Liao, Hu, Dang, AAAI 2024, Algorithm 1, Corollaries 1 and 2"
    params = (RADIUS, STEP, STEP_SCHEDULE, EPSILON)
    n_scalars = 1
    constants = {"halving": False, "budget": 0, "ahpatron_eta": 0.0, "ahpatron_c": 0.0}
    loop = aggressive_range

    @classmethod
    def resolve_params(cls, given: dict) -> dict:
        h = super().resolve_params(given)
        if h.get("step_schedule") == "corollary2" and not math.isfinite(h["radius"]):
            raise ValueError(f"{cls.name}: --step-schedule corollary2 needs a finite -U/--radius")
        return h

    def _state_arrays(self):
        return self.slot | {"gram": NO_MATRIX}  # kept only for Ahpatron's halving

    mixing = NormMixing()


@register
class Ahpatron(AggressivePerceptron):
    name = "ahpatron"
    summary = (
        "AVP on a budget: when B are stored, keep the half with the largest |α|, project the other "
        "half onto it (eq. 9), rescale, then add"
    )
    paper = "Liao, Li, Liao, Hu, Dang, AAAI 2024, Algorithm 2, eqs. 6–9, Theorems 4 and 6"
    params = (
        BUDGET,
        RADIUS.but(default=None, default_text="√B/2 (the paper's experiments)"),
        STEP.but(default=None, default_text="U/√(4B) (Theorem 6)"),
        EPSILON.but(default=0.5),
        AHP_ETA,
        AHP_C,
    )
    slot_arrays = KernelLearner.slot_arrays | {"gram": "square"}
    rebuilt = {"gram": gram_of_support}
    rebuilt_exactly = frozenset(rebuilt)  # the same kernel values
    evicts = True
    constants = {"halving": True, "step_schedule": CONSTANT}

    @classmethod
    def resolve_params(cls, given: dict) -> dict:
        h = super().resolve_params(given)
        if h["budget"] < 2:
            raise ValueError(f"{cls.name}: -B/--budget must be at least 2 (it keeps half), got {h['budget']}")
        if h["radius"] is not None and not math.isfinite(h["radius"]):
            raise ValueError(f"{cls.name}: --radius must be a finite number > 0, got {h['radius']}")
        # the model file records the values used, so a resumed run needs no defaults
        if h["radius"] is None:
            h["radius"] = math.sqrt(h["budget"]) / 2.0
        if h["step"] is None:
            h["step"] = h["radius"] / math.sqrt(4.0 * h["budget"])
            if not h["step"] > 0:  # a radius so small that U/√(4B) underflows
                raise ValueError(
                    f"{cls.name}: the step U/√(4B) = {h['radius']:g}/√{4 * h['budget']} underflows to "
                    "0; give a larger -U/--radius, or --step"
                )
        return h

    def _state_arrays(self):
        return self.slot
