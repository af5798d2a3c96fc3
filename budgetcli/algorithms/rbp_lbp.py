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
from ..learner import MISTAKES, OLDEST, RANDOM, KernelLearner, loop_arrays, new_coefficient, open_round, retire, victim
from ..params import BUDGET
from ..registry import register
from ..support import sv_fits, sv_put


@njit(cache=True)
def budget_perceptron_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    alpha, krow = st.alpha, st.krow
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        if yt * f <= 0.0:
            additions = counters[MISTAKES]  # every mistake adds one support vector
            counters[MISTAKES] += 1
            slot = n if n < h.budget else victim(h.policy, book.rng_state, h.budget, additions)
            if slot < n:
                retire(S, book, alpha, st.avg_sum, st.avg_stamp, slot, rnd)
            sv_put(S, slot, idx, val, sq)
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, slot, yt, rnd)
    return y.shape[0]


@register
class RandomizedBudgetPerceptron(KernelLearner):
    name = "rbp"
    summary = "Randomized Budget Perceptron: on a mistake with a full budget, evict a random support vector"
    paper = "Cavallanti, Cesa-Bianchi, Gentile, Machine Learning 2007, Fig. 2"
    params = (BUDGET,)
    evicts = True
    constants = {"policy": RANDOM}
    loop = budget_perceptron_range


@register
class LeastRecentBudgetPerceptron(RandomizedBudgetPerceptron):
    name = "lbp"
    summary = "Least-recent Budget Perceptron: on a mistake with a full budget, evict the oldest support vector"
    paper = "Cavallanti, Cesa-Bianchi, Gentile, Machine Learning 2007, §4"
    constants = {"policy": OLDEST}
