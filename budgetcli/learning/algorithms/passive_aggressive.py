"""Kernel Passive-Aggressive, PA / PA-I / PA-II (Crammer, Dekel, Keshet, Shalev-Shwartz, Singer,
JMLR 2006, Fig. 1), the Projectron paper's unbounded baseline (§7, PA-I with C = 1).

On the hinge loss ℓ_t = max(0, 1 − y_t f(x_t)) > 0, add x_t with coefficient τ_t y_t:
    PA     τ = ℓ / k(x, x)
    PA-I   τ = min(C, ℓ / k(x, x))
    PA-II  τ = ℓ / (k(x, x) + 1/(2C))
Every update adds a support vector, so the support set is unbounded.  A point with k(x, x) = 0
(the zero vector under a linear or homogeneous poly kernel) cannot change f and is skipped.

Choices where the paper leaves room:
- Weights (`train -w LABEL W`, a sample weight): an example of weight w has the cost C_t = w C, as
  LIBSVM's C_i = w_i C, in PA-I's τ = min(w C, ℓ/k(x, x)) and PA-II's τ = ℓ/(k(x, x) + 1/(2 w C)): C is
  the weight of the example's slack in PA-I's and PA-II's objectives (Crammer et al. 2006, §3, eqs. 7
  and 8), so weighing the example's loss by w is C → w C.  PA (§3, eq. 6) has no slack and no C: its
  step is the same whatever the cost, and it takes no weights.
"""

from __future__ import annotations

import math

from ...numerics._jit import njit
from ...numerics.kernels import self_kernel
from ..learner import (
    MARGIN_UPDATES,
    MISTAKES,
    KernelLearner,
    example_weight,
    loop_arrays,
    new_coefficient,
    open_round,
    give_answer,
)
from ...base.params import COST
from ...base.registry import register
from ...numerics.support import sv_fits, sv_put

PA, PA_I, PA_II = 0, 1, 2


@njit(cache=True)
def pa_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, weights = st.alpha, st.krow, rows.weight
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        margin = yt * f
        if margin <= 0.0:
            counters[MISTAKES] += 1
        if margin >= 1.0:
            continue
        kxx = self_kernel(K, sq)
        if kxx <= 0.0:
            continue
        loss = 1.0 - margin
        if h.variant == PA:
            tau = loss / kxx
        elif h.variant == PA_I:
            tau = min(h.cost * example_weight(weights, t), loss / kxx)
        else:
            tau = loss / (kxx + 0.5 / (h.cost * example_weight(weights, t)))
        if margin > 0.0:
            counters[MARGIN_UPDATES] += 1
        sv_put(S, n, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, tau * yt, rnd)
    return y.shape[0]


@register
class PassiveAggressive(KernelLearner):
    name = "pa"
    summary = "Passive-Aggressive: τ = ℓ/k(x,x) on every hinge loss; unbounded"
    paper = "Crammer et al., JMLR 2006, Fig. 1 (PA)"
    constants = {"variant": PA, "cost": math.inf}
    loop = pa_range


@register
class PassiveAggressiveI(PassiveAggressive):
    name = "pa-i"
    summary = "PA-I: τ = min(C, ℓ/k(x,x)); unbounded"
    paper = "Crammer et al., JMLR 2006, Fig. 1 (PA-I); Projectron paper §7 baseline"
    params = (COST,)
    constants = {"variant": PA_I}
    weighting = "the cost C_t = w C of its τ"


@register
class PassiveAggressiveII(PassiveAggressiveI):
    name = "pa-ii"
    summary = "PA-II: τ = ℓ/(k(x,x) + 1/(2C)); unbounded"
    paper = "Crammer et al., JMLR 2006, Fig. 1 (PA-II)"
    constants = {"variant": PA_II}
