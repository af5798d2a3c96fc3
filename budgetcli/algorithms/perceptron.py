"""Kernel Perceptron (Projectron paper, Fig. 1): on a mistake, add y_t k(x_t, ·).

A round is a mistake when y_t f_{t-1}(x_t) ≤ 0: Fig. 1 predicts sign(f), which is undefined at
f = 0 (always so on the first round); we count a zero score as a mistake so that learning starts,
as DOGMA and LIBOKL do.  All learners of the package use this rule.
"""

from __future__ import annotations

from .._jit import njit
from ..learner import EXAMPLES, MISTAKES, KernelLearner, new_coefficient, score_example
from ..registry import register
from ..support import COUNT, sv_fits, sv_put


@register
class Perceptron(KernelLearner):
    name = "perceptron"
    summary = "kernel Perceptron, unbounded support set"
    paper = "Rosenblatt 1958; Orabona, Keshet, Caputo, JMLR 2009, Fig. 1"

    def _learn_range(self, indptr, indices, values, y, start):
        s = self.slot
        return perceptron_range(self.support.arrays, *self.kernel.args(), s["alpha"], s["avg_sum"], s["avg_stamp"],
                                s["krow"], indptr, indices, values, y, start, self.scratch, self.counters)


@njit(cache=True)
def perceptron_range(S, code, gamma, coef0, degree, alpha, avg_sum, avg_stamp, krow, indptr, indices, values, y, start, scratch,
                     counters):
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
        if y[t] * f <= 0.0:
            counters[MISTAKES] += 1
            sv_put(S, n, idx, val, sq)
            new_coefficient(alpha, avg_sum, avg_stamp, n, y[t], counters[EXAMPLES])
    return n_examples
