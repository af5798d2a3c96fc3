"""Kernel Perceptron (Projectron paper, Fig. 1): on a mistake, add y_t k(x_t, ·).

A round is a mistake when y_t f_{t-1}(x_t) ≤ 0: Fig. 1 predicts sign(f), which is undefined at
f = 0 (always so on the first round); we count a zero score as a mistake so that learning starts,
as DOGMA and LIBOKL do.  All learners of the package use this rule.
"""

from __future__ import annotations

from .._jit import njit
from ..learner import MISTAKES, KernelLearner, loop_arrays, new_coefficient, open_round
from ..registry import register
from ..support import sv_fits, sv_put


@njit(cache=True)
def perceptron_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    alpha, krow = st.alpha, st.krow
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        if yt * f <= 0.0:
            counters[MISTAKES] += 1
            sv_put(S, n, idx, val, sq)
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, yt, rnd)
    return y.shape[0]


@register
class Perceptron(KernelLearner):
    name = "perceptron"
    summary = "kernel Perceptron, unbounded support set"
    paper = "Rosenblatt 1958; Orabona, Keshet, Caputo, JMLR 2009, Fig. 1"
    loop = perceptron_range
