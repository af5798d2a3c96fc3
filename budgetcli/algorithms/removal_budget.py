"""The Budget Perceptron of Crammer, Kandola and Singer (NIPS 2003), "CKS", as written in Weston,
Bordes, Bottou, AISTATS 2005, Fig. 1, with the update rules of their Fig. 2.

On a margin error y_t f(x_t) ≤ β with p = B support vectors stored, first remove the support vector
that stays classified with the largest margin after its own removal,
    i = argmax_j y_j (f(x_j) − a_j k(x_j, x_j))          (a_j = α_j y_j, the signed coefficient)
then insert x_t with α_t from the update rule, computed on f after the removal:
    perceptron   α = 1
    mira         α = min(1, max(0, −y f(x) / k(x, x)))
    svm          α = min(C, max(0, (1 − y f(x)) / k(x, x)))      (No-Bias-SVM; the paper uses β = 1)

Fig. 1 inserts x_t whatever α_t is, so a zero coefficient is stored too.  (So MIRA with β ≥ 0 never
leaves f = 0: its α is 0 whenever y f ≥ 0, as Fig. 2 writes it.)  To make a removal O(p),
as the paper assumes ("all kernel calculations cached"), the Gram matrix of the support set and
f(x_j) for every support vector are kept up to date on each insertion and removal.  Ties in the
argmax go to the lowest slot.  Only the fixed-size budget is implemented.
"""

from __future__ import annotations

import math

from numba import njit

from ..kernels import self_kernel
from ..learner import (EXAMPLES, MARGIN_UPDATES, MISTAKES, KernelLearner, new_coefficient, retire,
                       score_example)
from ..params import BETA, BUDGET, COST, Param
from ..registry import register
from ..support import COUNT, sv_fits, sv_put, sv_remove

UPDATE_RULES = {"perceptron": 0, "mira": 1, "svm": 2}

UPDATE = Param("update", str, "perceptron", "update rule of Weston et al. Fig. 2: perceptron, mira or svm",
               check=lambda v: v in UPDATE_RULES, requirement="one of perceptron, mira, svm")



@register
class BudgetPerceptron(KernelLearner):
    name = "budget-perceptron"
    summary = "Crammer–Kandola–Singer Budget Perceptron: on a margin error with B stored, remove the SV " \
              "with the largest margin after its own removal"
    paper = "Crammer, Kandola, Singer, NIPS 2003; Weston, Bordes, Bottou, AISTATS 2005, Figs. 1, 2"
    params = (BUDGET, BETA, UPDATE, COST)
    slot_arrays = KernelLearner.slot_arrays | {"label": "vector", "fsv": "vector", "gram": "square"}
    evicts = True

    def _learn_range(self, indptr, indices, values, y, start):
        s, h = self.slot, self.hyper
        return cks_range(self.support.arrays, *self.kernel.args(), s["alpha"], s["avg_sum"], s["avg_stamp"],
                         s["label"], s["fsv"], s["gram"], s["krow"], indptr, indices, values, y, start,
                         self.scratch, self.counters, h["budget"], h["beta"], UPDATE_RULES[h["update"]], h["cost"],
                         self.retire_log, self.keep_retired)


@njit(cache=True)
def remove_slot(S, i, alpha, avg_sum, avg_stamp, label, fsv, gram, krow):
    """Take support vector i out of f (fsv, and the caller's f via krow) and out of the slot arrays,
    moving the last slot into i as `sv_remove` does."""
    n = S.meta[COUNT]
    for j in range(n):
        fsv[j] -= alpha[i] * gram[i, j]
    last = sv_remove(S, i)
    if i != last:
        alpha[i], avg_sum[i], avg_stamp[i] = alpha[last], avg_sum[last], avg_stamp[last]
        label[i], fsv[i], krow[i] = label[last], fsv[last], krow[last]
        for j in range(n):
            gram[i, j] = gram[last, j]
        for j in range(n):
            gram[j, i] = gram[j, last]
        gram[i, i] = gram[last, last]


@njit(cache=True)
def cks_range(S, code, gamma, coef0, degree, alpha, avg_sum, avg_stamp, label, fsv, gram, krow, indptr, indices,
              values, y, start, scratch, counters, budget, beta, rule, cost, log, keep_retired):
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
        yt = y[t]
        if yt * f <= 0.0:
            counters[MISTAKES] += 1
        elif yt * f > beta:
            continue
        else:
            counters[MARGIN_UPDATES] += 1
        if n >= budget:  # steps 1a–1c
            best, best_margin = 0, -math.inf
            for j in range(n):
                m = label[j] * (fsv[j] - alpha[j] * gram[j, j])
                if m > best_margin:
                    best, best_margin = j, m
            f -= alpha[best] * krow[best]
            retire(S, log, keep_retired, alpha, avg_sum, avg_stamp, best, counters[EXAMPLES])
            remove_slot(S, best, alpha, avg_sum, avg_stamp, label, fsv, gram, krow)
            n -= 1
        kxx = self_kernel(code, gamma, coef0, degree, sq)
        if rule == 0:
            a = 1.0
        elif kxx <= 0.0:
            a = 0.0
        elif rule == 1:
            a = min(1.0, max(0.0, -yt * f / kxx))
        else:
            a = min(cost, max(0.0, (1.0 - yt * f) / kxx))
        a *= yt
        for j in range(n):  # steps 2–4, keeping f(x_j) and the Gram matrix current
            fsv[j] += a * krow[j]
            gram[n, j] = krow[j]
            gram[j, n] = krow[j]
        gram[n, n] = kxx
        sv_put(S, n, idx, val, sq)
        new_coefficient(alpha, avg_sum, avg_stamp, n, a, counters[EXAMPLES])
        label[n] = yt
        fsv[n] = f + a * kxx
    return n_examples
