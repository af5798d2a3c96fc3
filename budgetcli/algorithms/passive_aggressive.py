"""Kernel Passive-Aggressive, PA / PA-I / PA-II (Crammer, Dekel, Keshet, Shalev-Shwartz, Singer,
JMLR 2006, Fig. 1), the Projectron paper's unbounded baseline (§7, PA-I with C = 1).

On the hinge loss ℓ_t = max(0, 1 − y_t f(x_t)) > 0, add x_t with coefficient τ_t y_t:
    PA     τ = ℓ / k(x, x)
    PA-I   τ = min(C, ℓ / k(x, x))
    PA-II  τ = ℓ / (k(x, x) + 1/(2C))
Every update adds a support vector, so the support set is unbounded.  A point with k(x, x) = 0
(the zero vector under a linear or homogeneous poly kernel) cannot change f and is skipped.
"""

from __future__ import annotations

import math

from .._jit import njit
from ..kernels import self_kernel
from ..learner import (EXAMPLES, MARGIN_UPDATES, MISTAKES, KernelLearner, new_coefficient,
                       score_example)
from ..params import COST
from ..registry import register
from ..support import COUNT, sv_fits, sv_put


PA, PA_I, PA_II = 0, 1, 2


class _PassiveAggressive(KernelLearner):
    variant = PA

    def _learn_range(self, indptr, indices, values, y, start):
        s = self.slot
        return pa_range(self.support.arrays, *self.kernel.args(), s["alpha"], s["avg_sum"], s["avg_stamp"],
                        s["krow"], indptr, indices, values, y, start, self.scratch, self.counters,
                        self.variant, self.hyper.get("cost", math.inf))


@register
class PassiveAggressive(_PassiveAggressive):
    name = "pa"
    summary = "Passive-Aggressive: τ = ℓ/k(x,x) on every hinge loss; unbounded"
    paper = "Crammer et al., JMLR 2006, Fig. 1 (PA)"
    variant = PA


@register
class PassiveAggressiveI(_PassiveAggressive):
    name = "pa-i"
    summary = "PA-I: τ = min(C, ℓ/k(x,x)); unbounded"
    paper = "Crammer et al., JMLR 2006, Fig. 1 (PA-I); Projectron paper §7 baseline"
    params = (COST,)
    variant = PA_I


@register
class PassiveAggressiveII(_PassiveAggressive):
    name = "pa-ii"
    summary = "PA-II: τ = ℓ/(k(x,x) + 1/(2C)); unbounded"
    paper = "Crammer et al., JMLR 2006, Fig. 1 (PA-II)"
    params = (COST,)
    variant = PA_II


@njit(cache=True)
def pa_range(S, code, gamma, coef0, degree, alpha, avg_sum, avg_stamp, krow, indptr, indices, values, y, start,
             scratch, counters, variant, cost):
    n_examples = indptr.shape[0] - 1
    for t in range(start, n_examples):
        lo, hi = indptr[t], indptr[t + 1]
        if not sv_fits(S, hi - lo):
            return t
        idx = indices[lo:hi]
        val = values[lo:hi]
        f, sq = score_example(S, code, gamma, coef0, degree, alpha, krow, scratch, idx, val)
        n = S.meta[COUNT]
        counters[EXAMPLES] += 1
        margin = y[t] * f
        if margin <= 0.0:
            counters[MISTAKES] += 1
        if margin >= 1.0:
            continue
        kxx = self_kernel(code, gamma, coef0, degree, sq)
        if kxx <= 0.0:
            continue
        loss = 1.0 - margin
        if variant == PA:
            tau = loss / kxx
        elif variant == PA_I:
            tau = min(cost, loss / kxx)
        else:
            tau = loss / (kxx + 0.5 / cost)
        if margin > 0.0:
            counters[MARGIN_UPDATES] += 1
        sv_put(S, n, idx, val, sq)
        new_coefficient(alpha, avg_sum, avg_stamp, n, tau * y[t], counters[EXAMPLES])
    return n_examples
