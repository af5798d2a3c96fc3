"""Kernel Perceptron (Projectron paper, Fig. 1): on a mistake, add y_t k(x_t, ·).

A round is a mistake when y_t f_{t-1}(x_t) ≤ 0: Fig. 1 predicts sign(f), which is undefined at
f = 0 (always so on the first round); we count a zero score as a mistake so that learning starts,
as DOGMA and LIBOKL do.  All learners of the package use this rule.
"""

from __future__ import annotations

from .._jit import njit
from ..learner import MISTAKES, KernelLearner, new_coefficient, nnz, open_round
from ..registry import register
from ..support import sv_fits, sv_put


@njit(cache=True)
def perceptron_range(S, K, rows, start, book, st, h):
    for t in range(start, rows.y.shape[0]):
        if not sv_fits(S, nnz(rows, t)):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, rows, t, book, st.alpha, st.krow)
        if yt * f <= 0.0:
            book.counters[MISTAKES] += 1
            sv_put(S, n, idx, val, sq)
            new_coefficient(st.alpha, st.avg_sum, st.avg_stamp, n, yt, rnd)
    return rows.y.shape[0]


@register
class Perceptron(KernelLearner):
    name = "perceptron"
    summary = "kernel Perceptron, unbounded support set"
    paper = "Rosenblatt 1958; Orabona, Keshet, Caputo, JMLR 2009, Fig. 1"
    loop = perceptron_range
