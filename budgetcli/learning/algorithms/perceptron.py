"""The kernel Perceptron and its budgeted forms, one loop for the family: on a mistake, add y_t k(x_t, ·).

- `perceptron` (Projectron paper, Fig. 1): no budget.
- `stoptron`, the budget baseline of the Projectron's first paper (Orabona, Keshet, Caputo, ICML 2008),
  shipped by DOGMA under that name: the Perceptron until B support vectors are stored, after which it
  stops learning; a mistake with a full budget is counted and changes nothing.
- `rbp`, the Randomized Budget Perceptron (Cavallanti, Cesa-Bianchi, Gentile, MLJ 2007, Fig. 2): on a
  mistake with B stored, discard one chosen uniformly at random, then add.
- `lbp`, the Least-recent Budget Perceptron (§4): the same, discarding the oldest.

A round is a mistake when y_t f_{t-1}(x_t) ≤ 0: Fig. 1 predicts sign(f), which is undefined at f = 0
(always so on the first round); we count a zero score as a mistake so that learning starts, as DOGMA
and LIBOKL do.  All learners of the package use this rule.

The new support vector takes the evicted one's slot, so slots fill 0 .. B−1 and then the oldest is
always slot (#additions mod B): LBP's eviction is O(1).  RBP draws from the model's splitmix64 stream
(rng.py), so a seed gives the same evictions, and a resumed run continues the stream.  Fig. 2 asks
for B ≥ 2 only for its bound; B = 1 is accepted.

Choices where the papers leave room:
- Weights (`train -w LABEL W`, a sample weight), which none of the family's papers weighs: an example
  of weight w adds w y_t k(x_t, ·), the update's size w.  The Perceptron is the subgradient step, of
  size 1, on the loss max(0, −y f(x)) (Projectron paper §2); weighing that loss by w, as LIBSVM's
  C_i = w_i C weighs an example's hinge loss, makes the step w.  What makes a round update (a mistake)
  and the evictions are the same; the Stoptron's full budget still adds nothing.
"""

from __future__ import annotations

from ...numerics._jit import njit
from ..learner import (
    give_answer,
    MISTAKES,
    OLDEST,
    RANDOM,
    UNBOUNDED,
    KernelLearner,
    example_weight,
    loop_arrays,
    new_coefficient,
    open_round,
    retire,
    victim,
)
from ...base.params import BUDGET
from ...base.registry import register
from ...numerics.support import sv_fits, sv_put

STOP = 3  # the Stoptron's policy with a full budget: keep everything, add nothing


@njit(cache=True)
def perceptron_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    alpha, krow, weights, answers = st.alpha, st.krow, rows.weight, rows.answers
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        if yt * f > 0.0:
            continue
        additions = counters[MISTAKES]  # every mistake adds one support vector, until the Stoptron stops
        counters[MISTAKES] += 1
        slot = n
        if h.policy != UNBOUNDED and n >= h.budget:
            if h.policy == STOP:
                continue
            slot = victim(h.policy, book.rng_state, h.budget, additions)
            retire(S, book, alpha, st.avg_sum, st.avg_stamp, slot, rnd)
        sv_put(S, slot, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, slot, yt * example_weight(weights, t), rnd)
    return y.shape[0]


@register
class Perceptron(KernelLearner):
    name = "perceptron"
    summary = "kernel Perceptron, unbounded support set"
    paper = "Rosenblatt 1958; Orabona, Keshet, Caputo, JMLR 2009, Fig. 1"
    constants = {"policy": UNBOUNDED, "budget": 0}
    weighting = "the update's size: a mistake adds w y k(x, ·)"
    loop = perceptron_range


@register
class Stoptron(Perceptron):
    name = "stoptron"
    summary = "kernel Perceptron that stops adding support vectors once B are stored"
    paper = "Orabona, Keshet, Caputo, ICML 2008 (baseline); DOGMA"
    params = (BUDGET,)
    constants = {"policy": STOP}


@register
class RandomizedBudgetPerceptron(Perceptron):
    name = "rbp"
    summary = "Randomized Budget Perceptron: on a mistake with a full budget, evict a random support vector"
    paper = "Cavallanti, Cesa-Bianchi, Gentile, Machine Learning 2007, Fig. 2"
    params = (BUDGET,)
    evicts = True
    constants = {"policy": RANDOM}
    # built to track a drifting target (its paper's title), it writes the last hypothesis: 81.3% against
    # 57.5% averaged on a drifting stream (bench/defaults.py; docs/ALGORITHMS.md has the table)
    default_hypothesis = "online"


@register
class LeastRecentBudgetPerceptron(RandomizedBudgetPerceptron):
    name = "lbp"
    summary = "Least-recent Budget Perceptron: on a mistake with a full budget, evict the oldest support vector"
    paper = "Cavallanti, Cesa-Bianchi, Gentile, Machine Learning 2007, §4"
    constants = {"policy": OLDEST}
    default_hypothesis = "running-average"  # the paper's baseline, not its tracker (docs/ALGORITHMS.md's table)
