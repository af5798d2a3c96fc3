"""Perceptrons on a fixed budget B with eviction (Cavallanti, Cesa-Bianchi, Gentile, MLJ 2007):

- `rbp`, the Randomized Budget Perceptron (Fig. 2): on a mistake with B support vectors stored,
  discard one chosen uniformly at random, then add y_t k(x_t, ·).
- `lbp`, the Least-recent Budget Perceptron (§4): the same, discarding the oldest.

The new support vector takes the evicted one's slot, so slots fill 0 .. B−1 and then the oldest
is always slot (#additions mod B): LBP's eviction is O(1).  RBP draws from the model's splitmix64
stream (rng.py), so a seed gives the same evictions, and a resumed run continues the stream.
Fig. 2 asks for B ≥ 2 only for its bound; B = 1 is accepted.
"""

from __future__ import annotations

from .._jit import njit
from ..learner import EXAMPLES, MISTAKES, KernelLearner, new_coefficient, retire, score_example
from ..params import BUDGET
from ..registry import register
from ..rng import randbelow
from ..support import COUNT, sv_fits, sv_put


RANDOM, OLDEST = 0, 1


class _BudgetPerceptron(KernelLearner):
    params = (BUDGET,)
    evicts = True
    policy = RANDOM

    def _learn_range(self, indptr, indices, values, y, start):
        s = self.slot
        return budget_perceptron_range(self.support.arrays, *self.kernel.args(), s["alpha"], s["avg_sum"],
                                       s["avg_stamp"], s["krow"], indptr, indices, values, y, start, self.scratch,
                                       self.counters, self.rng_state, self.hyper["budget"], self.policy,
                                       self.retire_log, self.keep_retired)


@register
class RandomizedBudgetPerceptron(_BudgetPerceptron):
    name = "rbp"
    summary = "Randomized Budget Perceptron: on a mistake with a full budget, evict a random support vector"
    paper = "Cavallanti, Cesa-Bianchi, Gentile, Machine Learning 2007, Fig. 2"
    policy = RANDOM


@register
class LeastRecentBudgetPerceptron(_BudgetPerceptron):
    name = "lbp"
    summary = "Least-recent Budget Perceptron: on a mistake with a full budget, evict the oldest support vector"
    paper = "Cavallanti, Cesa-Bianchi, Gentile, Machine Learning 2007, §4"
    policy = OLDEST


@njit(cache=True)
def budget_perceptron_range(S, code, gamma, coef0, degree, alpha, avg_sum, avg_stamp, krow, indptr, indices,
                            values, y, start, scratch, counters, rng_state, budget, policy, log, keep_retired):
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
            additions = counters[MISTAKES]  # every mistake adds one support vector
            counters[MISTAKES] += 1
            if n < budget:
                slot = n
            elif policy == RANDOM:
                slot = randbelow(rng_state, budget)
            else:
                slot = additions % budget
            if slot < n:
                retire(S, log, keep_retired, alpha, avg_sum, avg_stamp, slot, counters[EXAMPLES])
            sv_put(S, slot, idx, val, sq)
            new_coefficient(alpha, avg_sum, avg_stamp, slot, y[t], counters[EXAMPLES])
    return n_examples
