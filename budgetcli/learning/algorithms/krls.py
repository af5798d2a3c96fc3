"""The kernel recursive least-squares filters, for regression (`--task regression`): KRLS with the
approximate-linear-dependence dictionary (Engel, Mannor, Meir, "The kernel recursive least-squares
algorithm", IEEE Transactions on Signal Processing 52(8), 2004), sliding-window KRLS (Van Vaerenbergh, Vía,
Santamaría, "A sliding-window kernel RLS algorithm and its application to nonlinear channel
identification", ICASSP 2006), fixed-budget KRLS (Van Vaerenbergh, Santamaría, Liu, Príncipe,
"Fixed-budget kernel recursive least-squares", ICASSP 2010) and the KRLS tracker (Van Vaerenbergh,
Lázaro-Gredilla, Santamaría, "Kernel recursive least-squares tracker for time-varying regression", IEEE
Transactions on Neural Networks and Learning Systems 23(8), 2012).  Their parameters and defaults are those
of the Kernel Adaptive Filtering Toolbox (KAFBOX, Van Vaerenbergh), whose class of the same name each one
reproduces (tests/test_krls.py: its mg30 figures); a parameter is named `<filter>_<KAFBOX's name>`.

Every round predicts f_t(x_t) = Σ_i α_i k(d_i, x_t) over the dictionary D, then learns (x_t, y_t):

- `krls`: a = K⁻¹k_t and δ = k_tt − k_tᵀa, the part of φ(x_t) outside the span of φ(D) (the ALD test,
  the Projectron's on the same Gram matrix).  δ > ν: x_t joins, K⁻¹ grows by its block inverse, P (the
  inverse of AᵀA, A the ALD coefficients of every example seen) gains a unit row, and α ← [α − a e/δ; e/δ];
  else the RLS step in the dictionary's coordinates, q = Pa/(1 + aᵀPa), P ← P − q aᵀP, α ← α + K⁻¹q e
  (e = y_t − f_t(x_t)).  No regularisation, no forgetting (the paper's basic algorithm);
- `swkrls`: the last M examples, α = (K + cI)⁻¹y over them: x_t joins the inverse by its block
  inverse (the paper's Eq. 11), the oldest leaves by the Schur complement (Eq. 12);
- `fbkrls`: x_t joins as in SW-KRLS (Sec. 3, eq. 5, λ the ridge); with more than M the example whose
  omission costs least, argmin |α_i| / [(K + λI)⁻¹]_ii (eq. 8), leaves (eq. 6-7; it may be x_t);
- `krlst`: a Gaussian-process posterior N(μ, Σ) of f at D; each round forgets back to the prior,
  Σ ← λΣ + (1 − λ)K, μ ← √λ μ, then adds x_t (Q = (K + jitter·I)⁻¹ grows, μ and Σ take the Bayesian update
  with noise σ_n²) and, with more than M, removes the centre of least |[Qμ]_i / Q_ii| (its removal moves
  the posterior mean least).  f(x) = k(D, x)ᵀQμ: α = Qμ.

Each sums its online errors and targets as the LMS filters do (lms.py, `count_round`).

Choices where the papers leave room:
- KRLS (Engel et al. §III, Table 1): KAFBOX's cap M (-B, default 1000: at the cap every example takes the
  reduced update) is not in the paper; δ > ν is strict; the first example initialises K⁻¹ = 1/k₁₁,
  α = y₁/k₁₁, P = 1.  k(x, x) is the kernel's own (1 for the rbf), where KAFBOX computes it through the
  same ‖a‖² + ‖b‖² − 2a·b as the other entries (1 up to rounding; the same 299 admissions on mg30).
  With no regularisation K⁻¹ is ill-conditioned (≈ 9e7 on mg30's 299 centres): predictions follow the
  order of the sums at about 1e-6 (KAFBOX's own run with 1 or 2 BLAS threads differs by as much), the
  admissions are far from ν at rounding scale.
- SW-KRLS (§3, Alg. 1): the paper drops the oldest, then adds (Eq. 12 then Eq. 11, the matrix never
  above M); KAFBOX adds, then drops (M + 1 for an instant): ours is KAFBOX's, the same matrix up to
  rounding.  The window's newcomer takes the oldest's slot.
- FB-KRLS (Sec. 3.3): the label update of the paper (its μ) is not done, as in KAFBOX ("mu = 0"): the
  filter is grow, prune the least significant, refit α = (K + λI)⁻¹y; ties of eq. 8 go to the lowest
  slot, the newcomer's index being the last.
- KRLS-T (§IV of the journal paper; MLSP 2011's "Selecting which basis should be removed"): the
  squared-error criterion, not the KL one; KAFBOX's jitter guard: when γ_t² (x_t's part outside the span
  of D, k_tt + jitter − k_tᵀQk_t, clipped at 0) is below the jitter, x_t is not added (μ and Σ keep
  its update of the other centres); the forgetting's prior K has jitter on its diagonal (KAFBOX's);
  the prediction is the posterior mean before this round's forgetting (KAFBOX's evaluate); the signal
  power s₀², which only scales the predictive variance, is not estimated (budgetlearn predicts means).
- KRLS's first entry needs k(x, x) > 0 (K⁻¹ starts as 1/k(x, x); KAFBOX would divide by zero): an example
  with k(x, x) = 0 (a zero vector under a linear or polynomial kernel) does not start the dictionary.
- Removals (SW-KRLS, FB-KRLS, KRLS-T) move the last slot into the hole (or the newcomer into it): ties
  go to the lowest slot, not the oldest; the matrices are permuted alike, so only rounding differs.
- State: K⁻¹ (KRLS, SW-KRLS, FB-KRLS) and Q (KRLS-T) are resume state (`--save-resume`; rebuilt from the
  dictionary up to rounding otherwise); P (KRLS) and Σ (KRLS-T) hold the history and cannot be rebuilt:
  every model file holds them (O(M²)).  KRLS-T's Gram matrix of D is resume state rebuilt bit for bit.
- Weights: KRLS-T is a Gaussian-process posterior, whose weighted form is standard: a weight w makes
  y_t's noise variance σ_n²/w (the likelihood's exponent w(y − f)²/2σ_n², as the LMS filters' loss
  w·½e²); w = 1 is KAFBOX's round exactly.  KRLS, SW-KRLS and FB-KRLS refuse weights: they solve an
  unweighted least-squares problem recursively, and a weight would change the ridge of one example
  only, which none of their papers treats.
- Arithmetic: the O(M²) products are summed in SIMD order (their order fixed by M alone), the inverses and P
  are updated symmetrically to the bit, so P's aᵀP is (Pa)ᵀ and one product serves; KRLS's P and KRLS-T's Σ
  take a round's rank-one update in the next round's pass over them (done at once before the state is kept).
  Only rounding differs from the sequential sums; the decisions on the shared streams are the reference's.
- The prediction written and counted is f_t(x_t), the hypothesis before the example is learnt, and
  the written model is the last one (`--average` keeps the averaged hypothesis; not measured).
"""

from __future__ import annotations

import math

from ...numerics._jit import njit
from ...numerics.kernels import self_kernel
from ..records import example_weight
from ..learner import (
    give_answer,
    OLDEST,
    loop_arrays,
    new_coefficient,
    open_round,
    retire,
    touch,
    victim,
)
from ...base.params import BUDGET, HALF_OPEN_UNIT, NONNEGATIVE, POSITIVE, number
from ...numerics.gram import gram_of_support, inverse_of_support, ridge_inverse_of_support
from ...base.registry import register
from ...numerics.support import COUNT, sv_fits, sv_put
from .lms import KernelFilter, RegressionMixing, count_round

KRLS_NU = number(
    "krls_nu",
    1e-4,
    "ν of KRLS: x joins the dictionary when k(x,x) − k·K^-1 k > ν (the ALD test; KAFBOX's nu)",
    NONNEGATIVE,
)
SWKRLS_C = number("swkrls_c", 1e-2, "c of SW-KRLS: α = (K + cI)^-1 y over the window (KAFBOX's c)", POSITIVE)
FBKRLS_LAMBDA = number("fbkrls_lambda", 1e-2, "λ of FB-KRLS: α = (K + λI)^-1 y (KAFBOX's lambda)", POSITIVE)
KRLST_LAMBDA = number(
    "krlst_lambda",
    0.999,
    "λ of KRLS-T, the forgetting factor: Σ ← λΣ + (1 − λ)K, μ ← √λ μ each round (KAFBOX's lambda)",
    HALF_OPEN_UNIT,
)
KRLST_SN2 = number("krlst_sn2", 1e-2, "σ_n² of KRLS-T: the noise-to-signal ratio (KAFBOX's sn2)", POSITIVE)
KRLST_JITTER = number(
    "krlst_jitter", 1e-6, "jitter of KRLS-T: Q = (K + jitter·I)^-1, and the least γ² for x to join (KAFBOX's)", POSITIVE
)


# ---- the pieces the loops share -----------------------------------------------------------------


# The O(m²) products are summed in SIMD order (fastmath reassoc/contract, as numerics/projection.py's
# `project`): each is one loop over a row, whose order the compiler fixes for a given m, so a round's sums do
# not depend on where a chunk or a resume began.  The elementwise updates of the matrices are compiled
# without it (no reduction to reorder; an update done at once or deferred to the next round is the same
# IEEE operation, the same bits).


@njit(cache=True, fastmath={"reassoc", "contract"})
def dot(a, b, m):
    s = 0.0
    for i in range(m):
        s += a[i] * b[i]
    return s


@njit(cache=True)
def mat_vec(A, v, m, out):
    """out = A v over the first m rows and columns, row by row (contiguous)."""
    for i in range(m):
        out[i] = dot(A[i], v, m)


@njit(cache=True)
def symmetric_downdate_row(row, u, ui, c, m):
    """Row i of A ← A − c u uᵀ over the first m columns (ui = u_i): (u_i u_j) c, the same number in row j's
    column i, so a symmetric A stays symmetric to the bit."""
    for j in range(m):
        row[j] -= (ui * u[j]) * c


@njit(cache=True)
def downdated_product(A, u, c, pending, v, m, out):
    """out = A v, after A ← A − c u uᵀ when `pending` (the previous round's update, deferred to this pass:
    each row is downdated and multiplied while it is in cache, one pass over A instead of two)."""
    for i in range(m):
        row = A[i]
        if pending:
            symmetric_downdate_row(row, u, u[i], c, m)
        out[i] = dot(row, v, m)


@njit(cache=True)
def symmetric_downdate(A, u, c, m):
    """A ← A − c u uᵀ over the first m rows and columns (a deferred update done before A is read or kept)."""
    for i in range(m):
        symmetric_downdate_row(A[i], u, u[i], c, m)


@njit(cache=True)
def move_index(A, src, dst, m):
    """Row and column src of A (m × m) into row and column dst (a removal moved slot src to dst)."""
    for j in range(m):
        A[dst, j] = A[src, j]
    for j in range(m):
        A[j, dst] = A[j, src]
    A[dst, dst] = A[src, src]


@njit(cache=True)
def touch_all(alpha, avg_sum, avg_stamp, m, rnd):
    """Every coefficient of the first m slots is about to change in round rnd (a refit)."""
    for i in range(m):
        touch(alpha, avg_sum, avg_stamp, i, rnd)


@njit(cache=True)
def grow_inverse_by(A, b, g, n, v, out, product):
    """A (a symmetric inverse over n slots) to [A + g b bᵀ, −g b; −g bᵀ, g] over n + 1, x_t at index n, in place
    (SW-KRLS Eq. 11, FB-KRLS eq. 5, KRLS-T's growth of Q: b = A k_t, g = 1/γ², γ² x_t's part outside the span);
    (b_i b_j) g, so that A stays symmetric to the bit.  With `product`, out = A v over n + 1 in the same pass,
    each row multiplied while it is in cache."""
    for i in range(n):
        row, bi = A[i], b[i]
        for j in range(n):
            row[j] += (bi * b[j]) * g
        row[n] = -bi * g
        A[n, i] = row[n]
        if product:
            out[i] = dot(row, v, n + 1)
    A[n, n] = g
    if product:
        out[n] = dot(A[n], v, n + 1)


@njit(cache=True)
def remove_index(A, r, m, v, out):
    """A (an inverse over m slots) without slot r, the last slot moved into it, and out = A v over the m − 1 left,
    in one pass: the Schur complement A_ij − A_ir A_rj / A_rr (as `symmetric_downdate_row`: no division a row,
    one loop over the row, symmetric to the bit for a symmetric A), then `move_index`'s move, then the product of
    each row while it is in cache.  Row r, the pivot, is overwritten by the last row when every other row has
    been downdated (row and column r of the complement are not read)."""
    last = m - 1
    pivot = A[r]
    c = 1.0 / pivot[r]
    for i in range(last):
        if i != r:
            row = A[i]
            symmetric_downdate_row(row, pivot, row[r], c, m)
            row[r] = row[last]
            out[i] = dot(row, v, last)
    if r < last:
        row = A[last]
        symmetric_downdate_row(row, pivot, row[r], c, m)
        row[r] = row[last]
        for j in range(last):
            pivot[j] = row[j]
        out[r] = dot(pivot, v, last)


@njit(cache=True)
def ridge_growth(kinv, krow, kb, n, kxx):
    """b = K⁻¹k_t into kb and g = 1/(kxx − k_tᵀb), what (K + cI)⁻¹ over n slots grows by when x_t joins at index n
    (k(D, x_t) = krow, k_tt + c = kxx; SW-KRLS Eq. 11, FB-KRLS eq. 5, KAFBOX's grow_kernel_matrix)."""
    mat_vec(kinv, krow, n, kb)
    return 1.0 / (kxx - dot(krow, kb, n))


@njit(cache=True)
def join(S, st, n, idx, val, sq, rnd):
    """x_t joins in slot n (its coefficient set by the refit that follows)."""
    sv_put(S, n, idx, val, sq)
    new_coefficient(st.alpha, st.avg_sum, st.avg_stamp, n, 0.0, rnd)


@njit(cache=True)
def take_slot(S, book, st, r, n, idx, val, sq, rnd):
    """x_t (index n of the matrices, which the caller moves to r) takes slot r < n, whose vector leaves
    (logged for the running average)."""
    retire(S, book, st.alpha, st.avg_sum, st.avg_stamp, r, rnd)
    join(S, st, r, idx, val, sq, rnd)


# ---- KRLS (ALD) -----------------------------------------------------------------------------------


@njit(cache=True)
def krls_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, kinv, P, a, q, u, kq = st.alpha, st.krow, st.kinv, st.p, st.a, st.pa, st.ap, st.kq
    # P's update of a reduced round, P ← P − c u uᵀ over the first n, is left pending and done by the next
    # round's pass over P (`downdated_product`), or before P is grown or handed back
    pending, c, n = False, 0.0, 0
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            if pending:
                symmetric_downdate(P, u, c, n)
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        count_round(book.scalars, yt, f)
        ktt = self_kernel(K, sq)
        if n == 0:  # krls.m l.54-58
            if ktt <= 0.0:  # k(x, x) = 0 (a zero vector, linear kernel): nothing to start K⁻¹ = 1/k with
                continue
            sv_put(S, 0, idx, val, sq)
            kinv[0, 0] = 1.0 / ktt
            P[0, 0] = 1.0
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, 0, yt / ktt, rnd)
            continue
        mat_vec(kinv, krow, n, a)  # a = K⁻¹k_t
        delta = ktt - dot(krow, a, n)  # the ALD residual
        e = yt - f
        if delta > h.krls_nu and n < h.budget:  # x_t joins (l.63-70)
            if pending:
                symmetric_downdate(P, u, c, n)
                pending = False
            inv = 1.0 / delta
            for i in range(n):
                for j in range(n):
                    kinv[i, j] = inv * (delta * kinv[i, j] + a[i] * a[j])
                kinv[i, n] = inv * -a[i]
                kinv[n, i] = inv * -a[i]
                P[i, n] = 0.0
                P[n, i] = 0.0
            kinv[n, n] = inv
            P[n, n] = 1.0
            ode = inv * e
            for i in range(n):
                touch(alpha, st.avg_sum, st.avg_stamp, i, rnd)
                alpha[i] -= a[i] * ode
            sv_put(S, n, idx, val, sq)
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, ode, rnd)
            continue
        # the reduced update (l.72-74): q = Pa/(1 + aᵀPa), P ← P − q (aᵀP), α ← α + K⁻¹q e.  P is symmetric
        # (kept so to the bit), so aᵀP = (Pa)ᵀ = uᵀ: P ← P − u uᵀ/(1 + aᵀu)
        downdated_product(P, u, c, pending, a, n, q)  # the previous round's update, then Pa
        c = 1.0 / (1.0 + dot(q, a, n))
        for i in range(n):
            u[i] = q[i]
            q[i] *= c
        pending = True
        mat_vec(kinv, q, n, kq)
        for i in range(n):
            touch(alpha, st.avg_sum, st.avg_stamp, i, rnd)
            alpha[i] += kq[i] * e
    if pending:
        symmetric_downdate(P, u, c, n)
    return y.shape[0]


# ---- SW-KRLS and FB-KRLS: α = (K + cI)⁻¹y ---------------------------------------------------------


@njit(cache=True)
def swkrls_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, kinv, target, kb = st.alpha, st.krow, st.kinv, st.target, st.kb
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        count_round(book.scalars, yt, f)
        kxx = self_kernel(K, sq) + h.swkrls_c
        if n < h.budget:  # swkrls.m l.49-52, and α over the n + 1 (l.60) in the same pass
            join(S, st, n, idx, val, sq, rnd)
            target[n] = yt
            touch_all(alpha, st.avg_sum, st.avg_stamp, n + 1, rnd)
            grow_inverse_by(kinv, kb, ridge_growth(kinv, krow, kb, n, kxx), n, target, alpha, True)
            continue
        # the oldest leaves (l.54-58): every round adds one, so it is slot (rounds − 1) mod M; x_t takes its slot
        g = ridge_growth(kinv, krow, kb, n, kxx)
        slot = victim(OLDEST, book.rng_state, h.budget, rnd - 1)
        take_slot(S, book, st, slot, n, idx, val, sq, rnd)
        target[slot] = yt
        touch_all(alpha, st.avg_sum, st.avg_stamp, n, rnd)
        grow_inverse_by(kinv, kb, g, n, target, alpha, False)
        remove_index(kinv, slot, n + 1, target, alpha)  # and α (l.60)
    return y.shape[0]


@njit(cache=True)
def fbkrls_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, kinv, target, kb, fit = st.alpha, st.krow, st.kinv, st.target, st.kb, st.fit
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        count_round(book.scalars, yt, f)
        target[n] = yt
        kxx = self_kernel(K, sq) + h.fbkrls_lambda
        if n < h.budget:  # fbkrls.m l.50-53, and α over the n + 1 (l.55) in the same pass
            join(S, st, n, idx, val, sq, rnd)
            touch_all(alpha, st.avg_sum, st.avg_stamp, n + 1, rnd)
            grow_inverse_by(kinv, kb, ridge_growth(kinv, krow, kb, n, kxx), n, target, alpha, True)
            continue
        # n + 1 > M: α over all n + 1 (x_t's at index n, `fit`), then the least significant leaves (l.55-62)
        grow_inverse_by(kinv, kb, ridge_growth(kinv, krow, kb, n, kxx), n, target, fit, True)
        r, least = 0, math.inf
        for i in range(n + 1):
            d = abs(fit[i]) / kinv[i, i]  # eq. 8
            if d < least:
                r, least = i, d
        if r < n:
            target[r] = yt
            take_slot(S, book, st, r, n, idx, val, sq, rnd)
        touch_all(alpha, st.avg_sum, st.avg_stamp, n, rnd)
        remove_index(kinv, r, n + 1, target, alpha)  # and α (l.65)
    return y.shape[0]


# ---- KRLS-T -----------------------------------------------------------------------------------------


@njit(cache=True)
def krlst_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, Q, mu, sigma, gram, q, hv, pend = (
        st.alpha,
        st.krow,
        st.qinv,
        st.mu,
        st.sigma,
        st.gram,
        st.q,
        st.h,
        st.u,
    )
    lam, jitter, weights = h.krlst_lambda, h.krlst_jitter, rows.weight
    root = math.sqrt(lam)
    # Σ's rank-one update of a round, Σ ← Σ − c u uᵀ, is left pending (u in `pend`, permuted with Σ's removals)
    # and done by the next round's pass over Σ, which forgets and multiplies it (`forget_sigma`), or before Σ
    # is handed back: the same operations on the same numbers, one pass over Σ instead of two
    pending, c, n = False, 0.0, 0
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            if pending:
                symmetric_downdate(sigma, pend, c, S.meta[COUNT])
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        count_round(book.scalars, yt, f)
        sn2 = h.krlst_sn2 / example_weight(weights, t)  # a weight w: y_t's noise variance σ_n²/w
        ktt = self_kernel(K, sq) + jitter
        if n == 0:  # krlst.m l.70-79
            sv_put(S, 0, idx, val, sq)
            Q[0, 0] = 1.0 / ktt
            mu[0] = yt * ktt / (ktt + sn2)
            sigma[0, 0] = ktt - ktt * ktt / (ktt + sn2)
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, 0, Q[0, 0] * mu[0], rnd)
            continue
        mat_vec(Q, krow, n, q)
        # forget, back to the prior (l.81-84): Σ ← λΣ + (1 − λ)(K + jitter·I), μ ← √λ μ; and h = Σq (l.86-95)
        for i in range(n):
            row, grow = sigma[i], gram[i]
            if pending:
                symmetric_downdate_row(row, pend, pend[i], c, n)
            diagonal = lam * row[i] + (1.0 - lam) * (self_kernel(K, S.sqnorm[i]) + jitter)
            for j in range(n):
                row[j] = lam * row[j] + (1.0 - lam) * grow[j]
            row[i] = diagonal
            mu[i] *= root
            hv[i] = dot(row, q, n)
        pending = False
        # predict (l.86-95)
        ymean = dot(q, mu, n)
        gamma2 = max(ktt - dot(krow, q, n), 0.0)
        sf2 = max(gamma2 + dot(q, hv, n), 0.0)
        sy2 = sn2 + sf2
        # the posterior over D and x_t (index n; l.98-107)
        hv[n] = sf2
        mu[n] = ymean
        e = (yt - ymean) / sy2
        for i in range(n + 1):
            mu[i] += e * hv[i]
        for i in range(n):
            sigma[i, n] = hv[i]
            sigma[n, i] = hv[i]
            gram[i, n] = krow[i]
            gram[n, i] = krow[i]
        sigma[n, n] = sf2
        c = 1.0 / sy2
        for i in range(n + 1):
            pend[i] = hv[i]
        pending = True  # Σ ← Σ − c h hᵀ over n + 1
        # which centre leaves (l.114-126): x_t when γ² < jitter, else with more than M the least |[Qμ]_i / Q_ii|
        r = -1
        if gamma2 < jitter:
            r = n
        elif n + 1 > h.budget:
            # Q grown by x_t is [Q 0; 0 0] + ppᵀ/γ², p = [q; −1]: its Qμ and diagonal, without forming it
            s = (dot(q, mu, n) - mu[n]) / gamma2
            mat_vec(Q, mu, n, hv)  # Qμ (h is spent)
            least = math.inf
            for i in range(n + 1):
                if i < n:
                    d = abs((hv[i] + q[i] * s) / (Q[i, i] + q[i] * q[i] / gamma2))
                else:
                    d = abs(-s * gamma2)
                if d < least:
                    r, least = i, d
        if r == -1:  # x_t joins Q (l.99-101), and α = Qμ over the n + 1 in the same pass
            join(S, st, n, idx, val, sq, rnd)
            touch_all(alpha, st.avg_sum, st.avg_stamp, n + 1, rnd)
            grow_inverse_by(Q, q, 1.0 / gamma2, n, mu, alpha, True)
            continue
        if r < n:  # x_t joins Q, then l.132-140: Q by its Schur complement, μ, Σ and K cut, x_t into slot r
            move_index(sigma, n, r, n + 1)
            pend[r] = pend[n]
            move_index(gram, n, r, n + 1)
            mu[r] = mu[n]
            take_slot(S, book, st, r, n, idx, val, sq, rnd)
            touch_all(alpha, st.avg_sum, st.avg_stamp, n, rnd)
            grow_inverse_by(Q, q, 1.0 / gamma2, n, mu, alpha, False)
            remove_index(Q, r, n + 1, mu, alpha)  # and α = Qμ
            continue
        touch_all(alpha, st.avg_sum, st.avg_stamp, n, rnd)  # x_t left out: Q as it was, α = Qμ
        mat_vec(Q, mu, n, alpha)
    if pending:
        symmetric_downdate(sigma, pend, c, S.meta[COUNT])
    return y.shape[0]


class KRLSFilter(KernelFilter):
    """What the KRLS filters share: the LMS filters' (regression, error sums, the last hypothesis); no weights
    but KRLS-T's (the module's docstring says why)."""

    weighting = None
    mixing = RegressionMixing(at_end=True)  # K⁻¹ and the window's targets refit α: no average survives a step


@register
class KRLS(KRLSFilter):
    name = "krls"
    summary = "KRLS: x joins when k(x,x) − kᵀK⁻¹k > ν (ALD), else the RLS step on the dictionary; cap -B"
    paper = "Engel, Mannor, Meir, IEEE TSP 2004, §III (KRLS); KAFBOX krls"
    params = (BUDGET.but(default=1000), KRLS_NU)
    slot_arrays = KRLSFilter.slot_arrays | {
        "kinv": "square",
        "p": "square",
        "a": "work",
        "pa": "work",  # q
        "ap": "work",  # u, the pending update of P
        "kq": "work",
    }
    rebuilt = {"kinv": inverse_of_support}
    loop = krls_range
    mixing = RegressionMixing(at_end=True, history=("p",))


@register
class SWKRLS(KRLSFilter):
    name = "swkrls"
    summary = "sliding-window KRLS: α = (K + cI)⁻¹y over the last -B examples"
    paper = "Van Vaerenbergh, Vía, Santamaría, ICASSP 2006 (SW-KRLS); KAFBOX swkrls"
    params = (BUDGET.but(default=250), SWKRLS_C)
    slot_arrays = KRLSFilter.slot_arrays | {"kinv": "square", "target": "vector", "kb": "work"}
    rebuilt = {"kinv": ridge_inverse_of_support("swkrls_c")}
    evicts = True
    loop = swkrls_range


@register
class FBKRLS(KRLSFilter):
    name = "fbkrls"
    summary = "fixed-budget KRLS: α = (K + λI)⁻¹y; past -B the example of least |α_i|/[(K + λI)⁻¹]_ii leaves"
    paper = "Van Vaerenbergh, Santamaría, Liu, Príncipe, ICASSP 2010, Sec. 3 (FB-KRLS); KAFBOX fbkrls"
    params = (BUDGET.but(default=100), FBKRLS_LAMBDA)
    slot_arrays = SWKRLS.slot_arrays | {"fit": "work"}  # α over the n + 1 before one leaves (eq. 8)
    rebuilt = {"kinv": ridge_inverse_of_support("fbkrls_lambda")}
    evicts = True
    loop = fbkrls_range


@register
class KRLST(KRLSFilter):
    name = "krlst"
    summary = (
        "KRLS tracker: a GP posterior forgotten towards the prior (λ); past -B the centre of least |[Qμ]_i/Q_ii| leaves"
    )
    paper = "Van Vaerenbergh, Lázaro-Gredilla, Santamaría, IEEE TNNLS 2012 (KRLS-T); KAFBOX krlst"
    weighting = "y_t's noise variance σ_n²/w: the weighted GP posterior"
    params = (BUDGET, KRLST_LAMBDA, KRLST_SN2, KRLST_JITTER)
    slot_arrays = KRLSFilter.slot_arrays | {
        "qinv": "square",
        "mu": "vector",
        "sigma": "square",
        "gram": "square",
        "q": "work",
        "h": "work",
        "u": "work",  # the pending update of Σ
    }
    rebuilt = {"qinv": ridge_inverse_of_support("krlst_jitter"), "gram": gram_of_support}
    rebuilt_exactly = frozenset({"gram"})  # the same kernel values (its diagonal is not read)
    evicts = True
    loop = krlst_range
    mixing = RegressionMixing(at_end=True, history=("sigma",))
