"""Multiclass kernel Pegasos and Budgeted multiclass Pegasos, BPegasosM (Wang, Crammer, Vucetic,
ICML 2010, §2 and Algorithm 1), with the budget maintenance of §4.

Each round t (t counts every example, across --resume), with the Crammer–Singer loss
ℓ = max(0, 1 + f_r(x) − f_y(x)), r = argmax_{i≠y} f_i(x), of w_t:
  1. w ← (1 − 1/t) w                                   (an O(1) change of the lazy scale)
  2–3. if ℓ > 0: add x_t with coefficient +η_t in class y and −η_t in class r, η_t = 1/(λt)
  5–7. if more than B support vectors: budget maintenance (below)
  8. w ← min(1, 1/(√λ ‖w‖)) w                         (projection onto the ball ‖w‖ ≤ 1/√λ)
‖w‖² is kept up to date incrementally (shrink, add, maintenance and projection each change it by a
formula of quantities the round computes anyway), so line 8 never costs a pass over the Gram matrix.

`pegasos` is Algorithm 1 without line 5 (unbounded).  `bpegasos --maintenance`:
- `random`: remove a uniformly random SV among the B+1 (the model's splitmix64 stream);
- `smallest` (§4.1): remove p = argmin_j ‖α_j‖² k(x_j, x_j), the removal of least weight
  degradation ‖Δw‖² = ‖α_p‖² k(x_p, x_p);
- `project` (§4.2): project the smallest SV p onto all remaining ones, α^(i) += α_p^(i) K⁻¹k_p for
  every class i (eq. 16); K⁻¹ of the support set is kept by the block-inverse update (Projectron
  paper Fig. 4) when an SV joins and by the O(B²) Schur-complement downdate when p leaves, so a
  round costs O(B²), never an inversion;
- `merge` (§4.3, Gaussian kernel only): merge the smallest SV m with the partner n, searched over
  all other SVs, whose merge degrades w least.  The merged point z = h x_m + (1 − h) x_n lies on the
  segment (eq. 20); h ∈ [0, 1] (in the half nearer the SV of larger ‖α‖², see `golden_h`) maximises Σ_i (α_m^(i)
  k_mn^{(1−h)²} + α_n^(i) k_mn^{h²})² (eq. 21) by
  golden-section search to a bracket of width 1e−8, and α_z^(i) = α_m^(i) k(x_m, z) + α_n^(i) k(x_n, z).
- `merge-lookup`: `merge` with h read off a table (Qaadan and Glasmachers, "Speeding up budgeted
  stochastic gradient descent SVM training with precomputed golden section search", 2018) wherever it
  applies: when the two rows of coefficients are collinear, b = r·a (always so with two classes, whose
  rows are ±(c, −c)), eq. 21 is a²(k^{(1−h)²} + r k^{h²})², so its argmax depends on (r, k) alone.  The
  table holds the exact search's h on a 401 × 401 grid over r ∈ [−1, 1] (the larger row's ratio) and
  k ∈ [0, 1], each cell made the first time a merge needs it (`table_h`), and a merge interpolates
  bilinearly between the four cells around (r, k); the degradation of the chosen h is computed exactly.
  Rows that are not collinear (three classes or more) get the exact search.  Its time and accuracy
  against the exact search: docs/BENCHMARK.md, "Against LIBOKL and BudgetedSVM".
- Not offered: Qaadan and Glasmachers' multi-merge (merging more than two support vectors at once,
  arXiv 1806.10179).  Its algorithm is not in a text we can read, and built without it a "multi-merge"
  would be a rule of our own under their name; the precomputed lookup above is the fast merge (issue
  #51 dropped it).

Choices where the paper leaves room (each mirrored by tests/reference_multiclass.py):
- "Smallest" ties: until the ball projection (line 8) first acts, every SV has the same
  |coefficient| under `random` or `smallest` maintenance (1/(λt) shrunk by Π_{s>t}(1 − 1/s) is 1/(λT) for
  all), so with the Gaussian kernel all ‖α_j‖² k_jj tie up to rounding (the paper's remark that
  optimal removal is then the oldest, §4.1); a projection scales only the SVs present, so later ones
  carry larger coefficients and a unique minimum.  Values
  within a relative 1e−9 of the minimum count as tied and the oldest SV (round of addition) is
  taken; a merged point keeps the round of the smallest SV it replaces.  Ties in the partner search
  go to the lowest slot; removal moves the last slot into the freed one (the support set's rule).
- `random` draws among all B+1 SVs after the addition (Algorithm 1 line 6 acts on w_{t+1}).
- `project`: when x_t lies nearly in the span of the SVs (‖δ‖² ≤ 1e−6 k(x_t, x_t), e.g. a
  duplicate), adding it would make K (nearly) singular; its update is then projected onto the span
  at once (degradation ‖c‖²‖δ‖² ≤ 1e−6 ‖c‖² k(x,x)) and no SV is added.  The Projectron's 1e−10 is
  too small here: Pegasos adds on every loss, not only past η, and with wide Gaussians on
  low-dimensional data K becomes very ill-conditioned (checkerboard, 8,000 examples, γ = 1/2,
  B = 500: cond(K) ≈ 4e13, K⁻¹K − I ≈ 2e8, test accuracy 47.8%; with 1e−6: 63.7%, and 86.3% →
  90.9% at γ = 2).  Wide kernels on 2-D data stay the weak spot of `project` (docs/RESULTS.md).
- Round 1 shrinks w by 1 − 1/1 = 0: the model is empty then, so nothing is lost.
- `merge-lookup`'s table at k = 0 and k = 1, where eq. 21 is flat and a search finds any h: their limits
  (1; and 1/(1 + r) for r > 0, else 1); without them a merge near those ends lost up to 99.8% of eq. 21.
  The table's h keeps eq. 21 within a relative 1e−4 of the exact search's maximum (tests/test_multiclass.py).
- Weights (`train -w LABEL W` for the true class, a sample weight): an example of weight w has the
  instantaneous objective λ/2‖w‖² + w ℓ (eq. 3 with its loss weighed, as LIBSVM's C_i = w_i C weighs
  it), whose subgradient step adds x_t with ±w η_t (lines 2–3); the shrink (line 1), from the
  regulariser, the budget maintenance and the ball of line 8 (radius 1/√λ, Lemma 1's, which holds for
  weights ≤ 1) are the paper's.
"""

from __future__ import annotations

import math

import numpy as np

from ...numerics._jit import njit
from ...numerics.kernels import self_kernel
from ..learner import (
    MARGIN_UPDATES,
    MISTAKES,
    NO_MATRIX,
    PROJECTIONS,
    RANDOM,
    UNBOUNDED,
    NonFiniteRound,
    example_weight,
    loop_arrays,
)
from ..multiclass import (
    C_SUM,
    REF_SCALE,
    SETTLE,
    MulticlassLearner,
    change,
    move_row,
    open_class_round,
    retire_row,
    rival,
    row_scores,
    set_row,
    settle_average,
)
from .. import statecheck
from ..mixing import Mixing, online_rows, refit
from ...base.params import BUDGET, POSITIVE, choice, number
from ...numerics.projection import grow_inverse, project, schur_downdate
from ...numerics.gram import inverse_of_support
from ...base.registry import register
from ...numerics.rng import randbelow
from ...numerics.support import COUNT, POOL_GARBAGE, POOL_USED, dense_column, sv_fits, sv_kernel_row, sv_put, sv_remove

# budget maintenance besides learner.RANDOM (UNBOUNDED: none)
SMALLEST, PROJECT, MERGE, MERGE_LOOKUP = 3, 4, 5, 6
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
H_TOL = 1e-8
SPAN_TOL = 1e-6  # `project`: ‖δ‖² ≤ SPAN_TOL·k(x,x) counts as in the span (see the module doc)
TIE = 1e-9  # relative: ‖α_j‖² k_jj values this close count as a tie in `smallest`

LAMBDA = number("lambda_", 1e-4, "λ: regularisation of pegasos/bpegasos (step 1/(λt), ball ‖w‖ ≤ 1/√λ)", POSITIVE)
MAINTENANCE = choice(
    "maintenance",
    ("random", "smallest", "project", "merge", "merge-lookup"),
    "merge-lookup",  # as accurate as merge, and faster (docs/BENCHMARK.md, "Against LIBOKL and BudgetedSVM")
    "bpegasos budget maintenance: random | smallest (§4.1) | project (§4.2) | merge (§4.3, rbf only) | "
    "merge-lookup (merge, h from a precomputed table where it applies: Qaadan and Glasmachers 2018)",
    codes=(RANDOM, SMALLEST, PROJECT, MERGE, MERGE_LOOKUP),
)
TABLE_STEPS = 400  # merge-lookup's grid: r = b/a over [−1, 1] and κ over [0, 1], in 400 steps each
COLLINEAR = 1e-9  # relative: Σab² this close to Σa²·Σb² counts as collinear rows (every two-class model)


@njit(cache=True)
def merge_objective(k, saa, sab, sbb, h):
    """Eq. 21: Σ_i (a_i k^{(1−h)²} + b_i k^{h²})² from the sums Σa², Σab, Σb²."""
    k1 = k ** ((1.0 - h) * (1.0 - h))
    k2 = k ** (h * h)
    return k1 * k1 * saa + 2.0 * k1 * k2 * sab + k2 * k2 * sbb


@njit(cache=True)
def golden_h(k, saa, sab, sbb):
    """argmax over h ∈ [0, 1] of eq. 21 by golden-section search, to a bracket of width H_TOL.

    Eq. 21 satisfies g(h) − g(1−h) = (k1² − k2²)(Σa² − Σb²), so the maximum lies in the half of the
    segment nearer the SV with the larger ‖α‖²; searching only that half also settles the symmetric
    case Σa² = Σb² (two equal maxima, where rounding alone would pick one): z goes nearer x_m."""
    if saa >= sbb * (1.0 - TIE):
        lo, hi = 0.5, 1.0
    else:
        lo, hi = 0.0, 0.5
    c = hi - GOLDEN * (hi - lo)
    d = lo + GOLDEN * (hi - lo)
    gc = merge_objective(k, saa, sab, sbb, c)
    gd = merge_objective(k, saa, sab, sbb, d)
    while hi - lo > H_TOL:
        if gc >= gd:
            hi, d, gd = d, c, gc
            c = hi - GOLDEN * (hi - lo)
            gc = merge_objective(k, saa, sab, sbb, c)
        else:
            lo, c, gc = c, d, gd
            d = lo + GOLDEN * (hi - lo)
            gd = merge_objective(k, saa, sab, sbb, d)
    return 0.5 * (lo + hi)


@njit(cache=True)
def table_h(table, i, j):
    """The table's h at grid point (r_i, κ_j), made the first time it is asked for: the exact search's
    (`golden_h`) for a = 1, b = r_i, so h ∈ [½, 1].  At κ = 0 and κ = 1, where eq. 21 is flat (0 but at
    h = 1; constant) and a search finds any h, its limits: 1, and argmin (1 − h)² + r h², 1/(1 + r) for
    r > 0, else 1 (eq. 21 ≈ (1 + r + ln κ ((1 − h)² + r h²))² as κ → 1)."""
    if math.isnan(table[i, j]):
        r = -1.0 + 2.0 * i / TABLE_STEPS
        if j == 0 or (j == TABLE_STEPS and r <= 0.0):
            table[i, j] = 1.0
        elif j == TABLE_STEPS:
            table[i, j] = 1.0 / (1.0 + r)
        else:
            table[i, j] = golden_h(j / TABLE_STEPS, 1.0, r, r * r)
    return table[i, j]


@njit(cache=True)
def lookup_h(table, k, saa, sab, sbb):
    """merge-lookup's h for rows a, b that are collinear (b = r·a or a = r·b, |r| ≤ 1): eq. 21 is then
    (a k^{(1−h)²} + b k^{h²})², whose argmax depends on r and k only, so it is read off a table over
    (r, k) by bilinear interpolation (Qaadan and Glasmachers 2018, "precomputed golden section search");
    the larger row's side of the segment as `golden_h` takes it (h ↦ 1 − h when b is the larger)."""
    swap = not saa >= sbb * (1.0 - TIE)
    r = sab / sbb if swap else (sab / saa if saa > 0.0 else 0.0)
    if not abs(r) <= 1.0:  # rounding just past ±1, or NaN (whose degradation is NaN: never chosen)
        r = min(max(r, -1.0), 1.0) if r == r else 0.0
    if not 0.0 <= k <= 1.0:
        k = min(max(k, 0.0), 1.0) if k == k else 0.0
    x = (r + 1.0) * (TABLE_STEPS / 2.0)
    y = k * TABLE_STEPS
    i, j = min(int(x), TABLE_STEPS - 1), min(int(y), TABLE_STEPS - 1)
    fx, fy = x - i, y - j
    h = (1.0 - fy) * ((1.0 - fx) * table_h(table, i, j) + fx * table_h(table, i + 1, j)) + fy * (
        (1.0 - fx) * table_h(table, i, j + 1) + fx * table_h(table, i + 1, j + 1)
    )
    return 1.0 - h if swap else h


@njit(cache=True)
def put_merged(S, slot, m, n, h):
    """Store z = h sv_m + (1 − h) sv_n (sparse union of their indices) in `slot` (< count)."""
    p = S.meta[POOL_USED]
    a, a_end = S.start[m], S.start[m] + S.length[m]
    b, b_end = S.start[n], S.start[n] + S.length[n]
    k = p
    sq = 0.0
    while a < a_end or b < b_end:
        if b >= b_end or (a < a_end and S.pool_idx[a] < S.pool_idx[b]):
            S.pool_idx[k] = S.pool_idx[a]
            v = h * S.pool_val[a]
            a += 1
        elif a >= a_end or S.pool_idx[b] < S.pool_idx[a]:
            S.pool_idx[k] = S.pool_idx[b]
            v = (1.0 - h) * S.pool_val[b]
            b += 1
        else:
            S.pool_idx[k] = S.pool_idx[a]
            v = h * S.pool_val[a] + (1.0 - h) * S.pool_val[b]
            a += 1
            b += 1
        S.pool_val[k] = v
        sq += v * v
        k += 1
    S.meta[POOL_GARBAGE] += S.length[slot]
    dense_column(S, slot, False)
    S.start[slot] = p
    S.length[slot] = k - p
    S.sqnorm[slot] = sq
    S.meta[POOL_USED] = k
    dense_column(S, slot, True)


@njit(cache=True)
def smallest_sv(S, K, coef, born, n, m):
    """p = argmin_j ‖α_j‖² k(x_j, x_j) (stored coefficients: the common scale does not change it).

    Until the ball projection first acts, the candidates tie up to rounding with the Gaussian kernel
    (module docstring), and only rounding would pick one.  Values within a relative TIE of the
    minimum count as equal and the oldest of them (first round of addition, then lowest slot) is
    taken: the paper's "optimal removal always selects the oldest SV" (§4.1)."""
    low = math.inf
    for j in range(n):
        v = sv_weight(S, K, coef, j, m)
        if v < low:
            low = v
    best = -1
    for j in range(n):
        if sv_weight(S, K, coef, j, m) <= low * (1.0 + TIE):
            if best < 0 or born[j] < born[best]:
                best = j
    return best


@njit(cache=True)
def sv_weight(S, K, coef, j, m):
    s = 0.0
    for i in range(m):
        s += coef[j, i] * coef[j, i]
    return s * self_kernel(K, S.sqnorm[j])


@njit(cache=True)
def room_needed(S, indptr, t, mode):
    """Pool entries round t may need: x_t, and with `merge` a merged point, at most the union of two SVs."""
    room = indptr[t + 1] - indptr[t]
    if mode == MERGE or mode == MERGE_LOOKUP:
        longest = room
        for j in range(S.meta[COUNT]):
            if S.length[j] > longest:
                longest = S.length[j]
        room += 2 * longest
    return room


@njit(cache=True)
def pegasos_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    f, scalars, weights = st.scores, book.scalars, rows.weight
    for t in range(start, y.shape[0]):
        if not sv_fits(S, room_needed(S, indptr, t, h.maintenance)):
            return t
        idx, val, yt, m, sq, rnd = open_class_round(S, K, indptr, indices, values, y, t, scratch, counters, st, answers)
        scale = st.scale[0]
        r = rival(f, m, yt)
        loss = 0.0
        if r >= 0:
            margin = f[yt] - f[r]
            if margin <= 0.0:
                counters[MISTAKES] += 1
            elif margin < 1.0:
                counters[MARGIN_UPDATES] += 1
            loss = max(0.0, 1.0 - margin)
        # line 1: w ← (1 − 1/t) w
        shrink = 1.0 - 1.0 / rnd
        if shrink > 0.0:
            scale *= shrink
            scalars[0] *= shrink * shrink
        else:  # round 1: w is 0 (the model is empty)
            scale = 1.0
            scalars[0] = 0.0
        if loss > 0.0:
            step(S, K, book, st, h, idx, val, sq, yt, r, m, rnd, scale, shrink, example_weight(weights, t))
        # line 8: projection onto ‖w‖ ≤ 1/√λ
        if scalars[0] * h.lambda_ > 1.0:
            beta = 1.0 / math.sqrt(h.lambda_ * scalars[0])
            scale *= beta
            scalars[0] *= beta * beta
        if scale < st.avg_scalars[REF_SCALE] * SETTLE or scale < 1e-150:
            settle_average(S, st, m, scale)  # before the fold below changes the stored coefficients
        if scale < 1e-150:  # fold the lazy scale in long before it could underflow
            for j in range(S.meta[COUNT]):
                for i in range(m):
                    st.coef[j, i] *= scale
            scale = 1.0
            st.avg_scalars[REF_SCALE] = 1.0
        st.scale[0] = scale
    return y.shape[0]


@njit(cache=True)
def step(S, K, book, st, h, idx, val, sq, yt, r, m, rnd, scale, shrink, weight):
    """Lines 2–7 on a loss: add x_t with ±w η_t in classes y_t and r, w its weight (or, with `project`,
    project the update when x_t lies in the span), then the budget maintenance; ‖w‖² kept in scalars[0]."""
    d, n, scalars = st.d, S.meta[COUNT], book.scalars
    eta = weight / (h.lambda_ * rnd)
    kxx = self_kernel(K, sq)
    # ‖w + c φ(x)‖² = ‖w‖² + 2 Σ_i c_i f_i(x) + ‖c‖² k(x,x), with f of the shrunk w
    scalars[0] += 2.0 * eta * shrink * (st.scores[yt] - st.scores[r]) + 2.0 * eta * eta * kxx
    if h.maintenance == PROJECT:
        delta2, pk2 = project(st.kinv, st.krow, d, n, kxx)
        if delta2 <= SPAN_TOL * kxx:  # x_t (numerically) in the span: project its update at once
            for j in range(n):
                change(st, j, yt, eta * d[j] / scale)
                change(st, j, r, -(eta * d[j] / scale))
            scalars[0] -= 2.0 * eta * eta * max(delta2, 0.0)
            book.counters[PROJECTIONS] += 1
            return
        grow_inverse(st.kinv, d, n, delta2)
    sv_put(S, n, idx, val, sq)
    set_row(st, n, yt, eta / scale, r, -eta / scale)
    st.born[n] = rnd
    if h.budget > 0 and n + 1 > h.budget:  # lines 5–7: budget maintenance
        scalars[0] = maintain(S, K, book, st, scale, n + 1, m, h.maintenance, scalars[0])


@njit(cache=True)
def maintain(S, K, book, st, scale, n, m, mode, norm2):
    """Bring n = B+1 support vectors back to B; returns the new ‖w‖²."""
    coef = st.coef
    if mode == RANDOM:
        p = randbelow(book.rng_state, n)
    else:
        p = smallest_sv(S, K, coef, st.born, n, m)
    app = 0.0  # ‖α_p‖² in stored units
    for i in range(m):
        app += coef[p, i] * coef[p, i]
    if mode == PROJECT:
        book.counters[PROJECTIONS] += 1
        return project_out(S, book, st, scale, n, m, p, app, norm2)
    # f(x_p) for the ‖w‖² update: ‖w − Δ‖² = ‖w‖² − 2⟨w, Δ⟩ + ‖Δ‖²
    sv_kernel_row(S, K, book.scratch, p, st.krow2)
    if mode == MERGE or mode == MERGE_LOOKUP:
        return merge(S, K, book, st, scale, n, m, p, app, norm2, mode)
    f = st.scores  # work space now: f(x_p) in stored units
    row_scores(coef, 1.0, st.krow2, n, m, f)
    wd = 0.0
    for i in range(m):
        wd += coef[p, i] * f[i]
    norm2 += scale * scale * (app * self_kernel(K, S.sqnorm[p]) - 2.0 * wd)
    retire_row(S, book, st, p, m)
    drop(S, st, p, m)
    return norm2


@njit(cache=True)
def drop(S, st, p, m):
    """Remove support vector p, moving the last slot's vector, coefficients and round into it."""
    last = sv_remove(S, p)
    if p != last:
        move_row(st, p, last, m)
        st.born[p] = st.born[last]
    return last


@njit(cache=True)
def project_out(S, book, st, scale, n, m, p, app, norm2):
    """§4.2: α_j += α_p K⁻¹k_p for the others, then K⁻¹ without p (Schur downdate); the new ‖w‖²."""
    coef, kinv = st.coef, st.kinv
    c = kinv[p, p]
    # α_j += α_p K⁻¹k_p with K⁻¹k_p = −K⁻¹[j, p] / K⁻¹[p, p] (the inverse of the full set)
    for j in range(n):
        if j != p:
            dj = -kinv[j, p] / c
            for i in range(m):
                change(st, j, i, coef[p, i] * dj)
    retire_row(S, book, st, p, m)
    schur_downdate(kinv, n, p)  # the inverse of the Gram matrix without p
    norm2 -= scale * scale * app / c  # ‖Δw‖² = ‖α_p‖² (k_pp − k_pᵀK⁻¹k_p), and Δw ⊥ the new w
    last = drop(S, st, p, m)
    if p != last:
        for j in range(n):
            kinv[p, j] = kinv[last, j]
        for j in range(n):
            kinv[j, p] = kinv[j, last]
        kinv[p, p] = kinv[last, last]
    return norm2


@njit(cache=True)
def merge_partner(st, n, m, p, app, mode):
    """§4.3: the partner q of least degradation, the degradation and h (krow2 = k(x_p, ·)); h by the
    exact search, or with merge-lookup from the table where the rows are collinear."""
    coef, krow2 = st.coef, st.krow2
    best, best_deg, best_h = -1, math.inf, 0.0
    for j in range(n):
        if j == p:
            continue
        sab = 0.0
        sbb = 0.0
        for i in range(m):
            sab += coef[p, i] * coef[j, i]
            sbb += coef[j, i] * coef[j, i]
        if mode == MERGE_LOOKUP and sab * sab >= app * sbb * (1.0 - COLLINEAR):
            h = lookup_h(st.merge_table, krow2[j], app, sab, sbb)
        else:
            h = golden_h(krow2[j], app, sab, sbb)
        deg = app + sbb + 2.0 * krow2[j] * sab - merge_objective(krow2[j], app, sab, sbb, h)
        if deg < best_deg:
            best, best_deg, best_h = j, deg, h
    return best, best_deg, best_h


class NoMergePartner(NonFiniteRound):
    reason = "budgeted Pegasos' merge found no partner: every candidate's degradation is not a finite number"
    counted = True


@njit(cache=True)
def merge(S, K, book, st, scale, n, m, p, app, norm2, mode):
    """§4.3: merge p with its partner into z in slot p; the new ‖w‖².  st.scores is work space."""
    coef, krow2, krow3, f = st.coef, st.krow2, st.krow3, st.scores
    q, best_deg, h = merge_partner(st, n, m, p, app, mode)
    if q < 0:  # every degradation NaN (the settings overflowed): there is no slot to merge with
        raise NoMergePartner
    kpq = krow2[q]
    k1 = kpq ** ((1.0 - h) * (1.0 - h))  # k(x_p, z)
    k2 = kpq ** (h * h)  # k(x_q, z)
    # ⟨w, Δ⟩ with Δ = α_p φ(x_p) + α_q φ(x_q) − α_z φ(z), all in stored units
    sv_kernel_row(S, K, book.scratch, q, krow3)
    wd = 0.0
    for i in range(m):
        sp = 0.0
        sq_ = 0.0
        for j in range(n):
            sp += coef[j, i] * krow2[j]
            sq_ += coef[j, i] * krow3[j]
        f[i] = coef[p, i] * k1 + coef[q, i] * k2  # α_z
        wd += coef[p, i] * sp + coef[q, i] * sq_
    retire_row(S, book, st, p, m)  # both leave; z is a new vector in slot p
    retire_row(S, book, st, q, m)
    put_merged(S, p, p, q, h)
    sv_kernel_row(S, K, book.scratch, p, krow3)  # k(z, ·), z now in slot p
    # slot p's old vector is gone from the store, but ⟨w, α_z φ(z)⟩ is over the old w: replace its
    # term k(z, x_p) = k1, coefficient still the old α_p
    krow3[p] = k1
    for i in range(m):
        s = 0.0
        for j in range(n):
            s += coef[j, i] * krow3[j]
        wd -= f[i] * s
    norm2 += scale * scale * (best_deg - 2.0 * wd)
    for i in range(m):
        coef[p, i] = f[i]
        st.avg_base[p, i] = 0.0
        st.avg_offset[p, i] = f[i] * st.avg_scalars[C_SUM]
    drop(S, st, q, m)
    return norm2


class PegasosMixing(Mixing):
    def after_mix(self, learner) -> None:
        """‖w‖² of the mixed model, Σ_i c_iᵀ K c_i over the classes' coefficient columns."""
        coef = learner.coefficients()
        learner.scalars[0] = max(float(np.sum(coef * (learner.gram() @ coef))), 0.0)


class BudgetedPegasosMixing(PegasosMixing):
    def compress(self, learner):
        """Back to B by the learner's own maintenance (§4), the B points' coefficients then fitted to the
        whole mix (mixing.refit)."""
        budget = learner.hyper["budget"]
        if len(learner.support) <= budget:
            return learner
        union, mixed = learner.support.to_csr(), online_rows(learner).copy()
        return refit(learner.compress_to(budget), union, mixed)


@register
class Pegasos(MulticlassLearner):
    name = "pegasos"
    summary = "multiclass kernel Pegasos (Crammer–Singer loss), unbounded support set"
    paper = "Wang, Crammer, Vucetic, ICML 2010, §2 (PegasosM)"
    params = (LAMBDA,)
    n_scalars = 1  # ‖w‖²
    # born: the round each SV was added (ties in `smallest` go to the oldest)
    slot_arrays = {"krow": "work", "krow2": "work", "krow3": "work", "born": "vector"}
    constants = {"budget": 0, "maintenance": UNBOUNDED}
    weighting = "the loss w ℓ: a loss adds ±w η_t k(x, ·) to the true and the rival class"
    loop = pegasos_range
    mixing = PegasosMixing()
    _table = None  # merge-lookup's table, made at its first use (`_merge_table`)

    def _state_arrays(self):
        # without `project` there is no K⁻¹: the loop gets stand-ins it never touches
        s = self.slot
        return super()._state_arrays() | {
            "kinv": s.get("kinv", NO_MATRIX),
            "d": s.get("d", s["krow"]),
            "merge_table": self._merge_table(),
        }

    def _merge_table(self) -> np.ndarray:
        """merge-lookup's table of h (NaN where not made yet: `table_h` fills it as merges ask); a
        stand-in the loop never touches for the other maintenances."""
        if self.hyper.get("maintenance") != "merge-lookup":
            return NO_MATRIX
        if self._table is None:
            self._table = np.full((TABLE_STEPS + 1, TABLE_STEPS + 1), np.nan)
        return self._table

    def _pool_room(self, nnz: int) -> int:
        if self.hyper.get("maintenance") not in ("merge", "merge-lookup"):
            return nnz
        n = len(self.support)
        longest = max(nnz, int(self.support.arrays.length[:n].max()) if n else 0)
        return nnz + 2 * longest  # the merged point holds at most the union of two SVs


@register
class BudgetedPegasos(Pegasos):
    name = "bpegasos"
    summary = "budgeted multiclass Pegasos: at most B SVs, --maintenance random|smallest|project|merge[-lookup]"
    paper = "Wang, Crammer, Vucetic, ICML 2010, Algorithm 1 and §4.1–4.3 (BPegasosM)"
    params = (LAMBDA, BUDGET, MAINTENANCE)
    evicts = True
    rebuilt = {"kinv": inverse_of_support}  # kept with --maintenance project only
    mixing = BudgetedPegasosMixing()

    def __init__(self, kernel, seed=0, **params):
        if self.resolve_params(params)["maintenance"] == "project":  # only projection needs K⁻¹ (O(B²))
            self.slot_arrays = Pegasos.slot_arrays | {"kinv": "square", "d": "work"}
        super().__init__(kernel, seed, **params)

    def compress_to(self, budget: int) -> "BudgetedPegasos":
        """Back to `budget` support vectors by this learner's own maintenance (random or smallest removal,
        projection, merging: §4.1–4.3), one vector at a time, as after the budget is passed in training;
        model mixing's compression for this learner (BudgetedPegasosMixing)."""
        if self.stale:
            self._rebuild()
        while len(self.support) > budget:
            self.support.reserve(len(self.support) + 1, self._pool_room(0))  # merging stores a new point
            self._resize(self.support.capacity)
            S, K, book, st, h = self.loop_args()
            self.scalars[0] = maintain(
                S, K, book, st, self.scale[0], len(self.support), int(self.n_classes[0]), h.maintenance, self.scalars[0]
            )
        return self

    @classmethod
    def saved_arrays(cls, header, members):
        out = super().saved_arrays(header, members)
        if header["params"].get("maintenance") == "project":  # as __init__ gives such a learner
            n = out["sv_indptr"][0][0] - 1
            out["kinv"] = ((n, n), statecheck.F64)
        return out

    @classmethod
    def check_kernel(cls, kernel_kind, params):
        if params.get("maintenance") in ("merge", "merge-lookup") and kernel_kind != "rbf":
            raise ValueError(
                f"--maintenance {params['maintenance']} needs the Gaussian kernel (--kernel rbf), "
                f"got --kernel {kernel_kind}: "
                "the merged point of §4.3 is derived for k(x, x') = exp(−γ‖x − x'‖²); "
                "use --maintenance project, smallest or random"
            )
