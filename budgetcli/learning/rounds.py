"""The compiled pieces of a support-set loop's round (learner.KernelLearner's algorithms): its opening
(`open_round`: x_t, y_t, f(x_t), counted), the running average's bookkeeping (`touch`, `new_coefficient`,
`retire`), which vector a full budget evicts (`victim`) and the eviction from a kept inverse
(`evict_from_inverse`).  numba inlines most of them into each algorithm's loop."""

from __future__ import annotations

import math

from ..numerics._jit import njit
from ..numerics.kernels import sparse_sqnorm
from ..numerics.projection import schur_downdate
from ..numerics.rng import randbelow
from ..numerics.support import COUNT, kernel_row
from .records import EXAMPLES, ExampleOverflow, ScoreOverflow, example

# Eviction policies of the budgeted learners (`victim`), one numbering for every algorithm.
UNBOUNDED, RANDOM, OLDEST = 0, 1, 2


@njit(cache=True, inline="always")
def open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow):
    """The opening of a binary round, counted: x_t, y_t, f(x_t), ‖x_t‖², the support size and the
    round's number (1-based, across --resume); krow is left holding k(x_t, sv_i).  The caller has
    checked that x_t fits (`sv_fits(S, indptr[t + 1] - indptr[t])`)."""
    idx, val = example(indptr, indices, values, t)
    f, sq = score_example(S, K, alpha, krow, scratch, idx, val)
    if not math.isfinite(sq):  # checked here, where every loop passes, before the round counts
        raise ExampleOverflow
    if not math.isfinite(f):
        raise ScoreOverflow
    counters[EXAMPLES] += 1
    return idx, val, y[t], f, sq, S.meta[COUNT], counters[EXAMPLES]


@njit(cache=True, inline="always")
def victim(policy, rng_state, budget, additions):
    """The slot to evict when the budget is full and the learner has added `additions` support vectors
    so far: a uniformly random one (the model's splitmix64 stream), or the oldest.  The oldest is
    slot additions mod B when every newcomer takes the evicted vector's slot."""
    if policy == RANDOM:
        return randbelow(rng_state, budget)
    return additions % budget


@njit(cache=True, inline="always")
def touch(alpha, avg_sum, avg_stamp, i, t):
    """Call before alpha[i] changes in round t (1-based, counters[EXAMPLES] after the increment).

    alpha[i] held its value in f_stamp .. f_{t−1}; fold those rounds into the running sum.  So the
    average costs O(1) per coefficient change, never a pass over past hypotheses."""
    avg_sum[i] += alpha[i] * (t - avg_stamp[i])
    avg_stamp[i] = t


@njit(cache=True, inline="always")
def retire(S, book, alpha, avg_sum, avg_stamp, i, t):
    """Call before the vector in slot i is evicted in round t: it was in f_stamp .. f_{t−1}."""
    if book.keep_retired:
        touch(alpha, avg_sum, avg_stamp, i, t)
        log = book.log
        k = log.count[0]
        log.start[k] = S.start[i]
        log.length[k] = S.length[i]
        log.coef_sum[k] = avg_sum[i]
        log.count[0] = k + 1


@njit(cache=True)
def evict_from_inverse(ainv, alpha, avg_sum, avg_stamp, n, r, rnd):
    """Take slot r out of an inverse Gram matrix H (n × n) and its expansion: every other coefficient
    takes r's projection onto the rest, α_i −= α_r H_ir / H_rr, and H loses r by the rank-one Schur
    downdate; row and column r of H are left zero (so a later d = H k has d[r] = 0).  The second-order
    Perceptron's eviction (w = A⁻¹y) and BPA-P's removal."""
    wr = alpha[r] / ainv[r, r]
    for i in range(n):
        if i != r:
            touch(alpha, avg_sum, avg_stamp, i, rnd)
            alpha[i] -= ainv[i, r] * wr
    schur_downdate(ainv, n, r)
    for i in range(n):
        ainv[i, r] = 0.0
        ainv[r, i] = 0.0


@njit(cache=True, inline="always")
def new_coefficient(alpha, avg_sum, avg_stamp, i, value, t):
    """Slot i gets a new support vector with coefficient `value` in round t."""
    alpha[i] = value
    avg_sum[i] = 0.0
    avg_stamp[i] = t


@njit(cache=True, inline="always")
def score_example(S, K, alpha, krow, scratch, idx, val):
    """(f(x), ‖x‖²) for one sparse example, f(x) = Σ_i alpha_i k(x, sv_i); krow is left holding
    k(x, sv_i), which the learners reuse for their updates."""
    sq = sparse_sqnorm(val)
    kernel_row(S, K, scratch, idx, val, sq, krow)
    f = 0.0
    for i in range(S.meta[COUNT]):
        f += alpha[i] * krow[i]
    if K.offset != 0.0:  # an imported LIBSVM model's bias (kernels.Kernel.offset)
        f += K.offset
    return f, sq
