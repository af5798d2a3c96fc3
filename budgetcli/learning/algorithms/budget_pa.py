"""Budgeted Passive-Aggressive, BPA-S, BPA-P and BPA-NN (Wang, Vucetic, AISTATS 2010, §3); BPA-S is
LIBOKL's `kernel-bpas`.

Below the budget it is PA-I: on a hinge loss ℓ_t = max(0, 1 − y_t f(x_t)) > 0, add x_t with τ y_t,
τ = min(C, ℓ_t / k(x_t, x_t)).  With B vectors stored, the paper's problem

    min ½‖w − w_t‖² + C ξ  s.t.  y_t ⟨w, φ(x_t)⟩ ≥ 1 − ξ,  w = w_t − α_r φ(x_r) + β φ(x_t)

removes one vector r and lets only the newcomer's coefficient β change (the "simple" S = {t}).  For a
given r its solution is τ as above and β = τ y_t + α_r k(x_r, x_t)/k(x_t, x_t) (the part of α_r φ(x_r)
along φ(x_t) moves to x_t); the objective is ½(α_r² d_r² + τ² k_tt) + C max(0, ℓ_t − τ k_tt) with
d_r² = k_rr − k_rt²/k_tt, so the r removed is argmin_r α_r² d_r², an O(B) search over the kernel row
the prediction already computed.  x_t takes r's slot.

`bpa-p` lets every kept vector's coefficient change (S = the kept vectors and x_t): with H the
inverse Gram matrix of the B kept vectors and x_t, removing r moves α_r φ(x_r)'s projection onto the
others, α_i += −α_r H_ir / H_rr (x_t's coefficient τ y_t included), the degradation is α_r² / H_rr, and r
is its argmin; H is kept by the Projectron's block update when x_t joins and the Schur downdate when r
leaves (O(B²) per update, where solving each candidate's system would be O(B⁴)), and is resume state,
rebuilt from the support set.

`bpa-nn` lets x_t and x_r's nearest kept neighbour x_j change (S = {x_t, x_j}, the paper's one-neighbour
form; nearness in feature space, k_rr + k_jj − 2k_rj): c = K_S⁻¹ k_Sr from the 2×2 system, the
degradation α_r² d_r² with d_r² = k_rr − c·k_Sr, α_j += α_r c_j and x_t's coefficient τ y_t + α_r c_t.  The
Gram matrix of the kept vectors is resume state (rebuilt from the support set); each kept vector's
neighbour and its distance are kept too (`neighbours`, work arrays made at the loop's start), and only
the newcomer's row changes them: O(B) a round, plus a scan of the vectors whose neighbour it replaced,
where scanning every candidate's neighbour was O(B²) (bpa-nn B = 300 on a9a, whole process: 3.3 s →
0.73 s, as bpa-s).

Choices where the paper leaves room:
- BPA-P: an x_t in the span of the kept vectors (‖δ_t‖² ≤ 1e−6 k(x_t, x_t), a duplicate say) would make
  H (nearly) singular: its PA step is projected onto the kept vectors instead, α += τ y_t K⁻¹k_t, and
  nothing is added or removed (no source covers the case; below the budget too, where PA-I would add it).
  The threshold is budgeted Pegasos' (`--maintenance project`), not the Projectron's 1e−10: BPA-P adds on
  every loss, and with 1e−10 a poly kernel on 1e6-scale values let the kept inverse drift to K⁻¹K − I ≈ 1e−4
  through its downdates, where a direct inverse gives 1e−10 (tests/test_numerics.py).
- BPA-NN: x_t and x_j nearly collinear (det K_S ≤ 1e−10 k_tt k_jj), or x_r alone, fall back to S = {x_t};
  x_r within 1e−10 k_rr of S's span is removed at no cost (d_r² = 0), so that rounding does not pick
  among several free removals; the nearest of equally near neighbours is the lowest slot.
- Ties of α_r² d_r² go to the lowest slot (LIBOKL's to the oldest vector: its list is in order of
  addition, ours is in slots, the newcomer taking the removed vector's); the reference computes the
  paper's objective literally and agrees.
- A point with k(x, x) = 0 (the zero vector under a linear or homogeneous poly kernel) cannot change
  f and is skipped, as PA skips it.
- τ uses k(x_t, x_t) (the paper's), where LIBOKL and the JMLR authors' code write 1 (their Gaussian kernel).
- Weights (`train -w LABEL W`, a sample weight): an example of weight w has the cost C_t = w C in the
  paper's problem above (its slack weighs w C, as LIBSVM's C_i = w_i C), so τ = min(w C, ℓ_t/k(x_t, x_t)),
  PA-I's weighted step (passive_aggressive.py); which r goes (the least degradation) does not involve C.
"""

from __future__ import annotations

import math

from ...numerics._jit import njit
from ...numerics.kernels import self_kernel
from ..learner import (
    give_answer,
    PROJECTIONS,
    KernelLearner,
    example_weight,
    hinge_round,
    evict_from_inverse,
    loop_arrays,
    new_coefficient,
    open_round,
    retire,
    touch,
)
from ...base.params import BUDGET, COST
from ...numerics.projection import grow_inverse, project
from ...numerics.gram import gram_of_support, inverse_of_support
from ...base.registry import register
from ...numerics.support import COUNT, sv_fits, sv_put

SPAN_TOL = 1e-6  # BPA-P: ‖δ‖² ≤ SPAN_TOL·k(x,x) counts as in the span of the kept vectors (see above)
# BPA-NN: x_t and x_r's neighbour x_j count as collinear at det ≤ NN_SPAN_TOL·k_tt·k_jj (1 − cos² ≤ 1e-10),
# and x_r as in their span at d_r² ≤ NN_SPAN_TOL·k_rr (so that the first of such free removals goes)
NN_SPAN_TOL = 1e-10


@njit(cache=True, inline="always")
def pa_step(K, counters, sq, margin, cost):
    """The round counted, and PA-I's step: (τ, k(x, x)), τ = min(C, ℓ/k(x, x)), or τ = 0 when there is
    no step: no loss, or k(x, x) ≤ 0, where ℓ/k(x, x) is undefined (x = 0, or a poly kernel with coef0 < 0)
    and the round counts only as the mistake it may be."""
    kxx = self_kernel(K, sq)
    if kxx <= 0.0 and margin > 0.0:
        return 0.0, kxx
    if not hinge_round(counters, margin) or kxx <= 0.0:
        return 0.0, kxx
    return min(cost, (1.0 - margin) / kxx), kxx


@njit(cache=True)
def bpa_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    weights = rows.weight
    alpha, krow = st.alpha, st.krow
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        tau, kxx = pa_step(K, counters, sq, yt * f, h.cost * example_weight(weights, t))
        if tau == 0.0:
            continue
        slot, coef = n, tau * yt
        if n >= h.budget:
            slot, least = 0, math.inf
            for r in range(n):
                d2 = self_kernel(K, S.sqnorm[r]) - krow[r] * krow[r] / kxx
                q = alpha[r] * alpha[r] * d2
                if q < least:
                    slot, least = r, q
            coef += alpha[slot] * krow[slot] / kxx
            retire(S, book, alpha, st.avg_sum, st.avg_stamp, slot, rnd)
        sv_put(S, slot, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, slot, coef, rnd)
    return y.shape[0]


@register
class BudgetPassiveAggressive(KernelLearner):
    name = "bpa-s"
    summary = "Budgeted PA, simple: PA-I until B, then remove the r of least α_r² d_r², its part along x_t moved to x_t"
    paper = "Wang, Vucetic, AISTATS 2010, §3 (BPA-S); LIBOKL kernel-bpas"
    params = (BUDGET, COST)
    evicts = True
    weighting = "the cost C_t = w C of its τ"
    loop = bpa_range


@njit(cache=True)
def bpa_p_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    weights = rows.weight
    alpha, krow, kinv, d = st.alpha, st.krow, st.kinv, st.d
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        tau, kxx = pa_step(K, counters, sq, yt * f, h.cost * example_weight(weights, t))
        if tau == 0.0:
            continue
        delta2, _ = project(kinv, krow, d, n, kxx)  # d = K⁻¹k_t over the kept vectors
        if delta2 <= SPAN_TOL * kxx:  # x_t in their span: the PA step projected onto them
            for i in range(n):
                touch(alpha, st.avg_sum, st.avg_stamp, i, rnd)
                alpha[i] += tau * yt * d[i]
            counters[PROJECTIONS] += 1
            continue
        grow_inverse(kinv, d, n, delta2)  # H over the kept vectors and x_t, which is index n
        if n < h.budget:
            sv_put(S, n, idx, val, sq)
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, tau * yt, rnd)
            continue
        r, least = 0, math.inf
        for i in range(n):
            q = alpha[i] * alpha[i] / kinv[i, i]
            if q < least:
                r, least = i, q
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, tau * yt, rnd)  # x_t, index n of H, takes part
        evict_from_inverse(kinv, alpha, st.avg_sum, st.avg_stamp, n + 1, r, rnd)
        coef = alpha[n]
        for j in range(n + 1):  # x_t's row and column (index n) into r's
            kinv[r, j] = kinv[n, j]
        for j in range(n + 1):
            kinv[j, r] = kinv[j, n]
        kinv[r, r] = kinv[n, n]
        retire(S, book, alpha, st.avg_sum, st.avg_stamp, r, rnd)
        sv_put(S, r, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, r, coef, rnd)
    return y.shape[0]


@register
class BudgetPassiveAggressiveProjecting(BudgetPassiveAggressive):
    name = "bpa-p"
    summary = "Budgeted PA, projecting: remove the r of least α_r²/H_rr, its projection onto all the others kept"
    paper = "Wang, Vucetic, AISTATS 2010, §3 (BPA-P)"
    slot_arrays = KernelLearner.slot_arrays | {"kinv": "square", "d": "work"}
    rebuilt = {"kinv": inverse_of_support}
    loop = bpa_p_range


@njit(cache=True)
def nearest_kept(gram, n, r):
    """The kept vector nearest x_r in feature space, k_rr + k_jj − 2k_rj least over j ≠ r (the lowest
    slot of equals), or −1 when r is alone; and that distance (inf when r is alone)."""
    nearest, least = -1, math.inf
    for j in range(n):
        if j != r:
            dist2 = gram[r, r] + gram[j, j] - 2.0 * gram[r, j]
            if dist2 < least:
                nearest, least = j, dist2
    return nearest, least


@njit(cache=True)
def neighbours(gram, n, near, near_d2):
    """near[r], near_d2[r] = `nearest_kept(gram, n, r)` for every kept r (slots as float64: work arrays)."""
    for r in range(n):
        j, d2 = nearest_kept(gram, n, r)
        near[r], near_d2[r] = j, d2


@njit(cache=True)
def slot_changed(gram, n, slot, near, near_d2):
    """`neighbours` again after the vector in `slot` (< n) was replaced or added: the same answers, the
    lowest slot of equals included, from its new row alone, but for the vectors whose nearest it was."""
    for r in range(n):
        if r == slot:
            continue
        if near[r] == slot:  # its nearest left: any vector may be the nearest now
            j, d2 = nearest_kept(gram, n, r)
            near[r], near_d2[r] = j, d2
        else:
            d2 = gram[r, r] + gram[slot, slot] - 2.0 * gram[r, slot]
            if d2 < near_d2[r] or (d2 == near_d2[r] and slot < near[r]):
                near[r], near_d2[r] = slot, d2
    j, d2 = nearest_kept(gram, n, slot)
    near[slot], near_d2[slot] = j, d2


@njit(cache=True)
def bpa_nn_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    weights = rows.weight
    alpha, krow, gram, near, near_d2 = st.alpha, st.krow, st.gram, st.near, st.near_d2
    neighbours(gram, S.meta[COUNT], near, near_d2)
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        tau, kxx = pa_step(K, counters, sq, yt * f, h.cost * example_weight(weights, t))
        if tau == 0.0:
            continue
        slot, coef = n, tau * yt
        if n >= h.budget:
            slot, least, partner, part = 0, math.inf, -1, 0.0
            for r in range(n):
                j = int(near[r])
                ct, cj = krow[r] / kxx, 0.0  # the projection of φ(x_r) onto span{φ(x_t), φ(x_j)}
                if j >= 0:
                    det = kxx * gram[j, j] - krow[j] * krow[j]
                    if det > NN_SPAN_TOL * kxx * gram[j, j]:
                        ct = (gram[j, j] * krow[r] - krow[j] * gram[r, j]) / det
                        cj = (kxx * gram[r, j] - krow[j] * krow[r]) / det
                d2 = gram[r, r] - (ct * krow[r] + cj * gram[r, j])
                if d2 <= NN_SPAN_TOL * gram[r, r]:  # x_r in the span: free to remove (rounding ignored)
                    d2 = 0.0
                q = alpha[r] * alpha[r] * d2
                if q < least:
                    slot, least, partner, part = r, q, j, cj
                    coef = tau * yt + alpha[r] * ct
            if partner >= 0 and part != 0.0:
                touch(alpha, st.avg_sum, st.avg_stamp, partner, rnd)
                alpha[partner] += alpha[slot] * part
            retire(S, book, alpha, st.avg_sum, st.avg_stamp, slot, rnd)
        sv_put(S, slot, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, slot, coef, rnd)
        for j in range(max(n, slot + 1)):  # the Gram matrix's row and column of the newcomer
            gram[slot, j] = krow[j]
            gram[j, slot] = krow[j]
        gram[slot, slot] = kxx
        slot_changed(gram, max(n, slot + 1), slot, near, near_d2)
    return y.shape[0]


@register
class BudgetPassiveAggressiveNearest(BudgetPassiveAggressive):
    name = "bpa-nn"
    summary = (
        "Budgeted PA, nearest neighbour: remove the r of least loss, projected onto x_t and x_r's nearest kept vector"
    )
    paper = "Wang, Vucetic, AISTATS 2010, §3 (BPA-NN)"
    slot_arrays = KernelLearner.slot_arrays | {"gram": "square", "near": "work", "near_d2": "work"}
    rebuilt = {"gram": gram_of_support}
    rebuilt_exactly = frozenset(rebuilt)  # the same kernel values
    loop = bpa_nn_range
