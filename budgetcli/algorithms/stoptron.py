"""Stoptron, the budget baseline of the Projectron's first paper (Orabona, Keshet, Caputo, ICML 2008),
shipped by DOGMA under that name: the kernel Perceptron until B support vectors are stored, after
which it stops learning.  A mistake with a full budget is counted and changes nothing."""

from __future__ import annotations

from .._jit import njit
from ..learner import MISTAKES, KernelLearner, loop_arrays, new_coefficient, open_round
from ..params import BUDGET
from ..registry import register
from ..support import sv_fits, sv_put


@njit(cache=True)
def stoptron_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    alpha, krow = st.alpha, st.krow
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        if yt * f <= 0.0:
            counters[MISTAKES] += 1
            if n < h.budget:
                sv_put(S, n, idx, val, sq)
                new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, yt, rnd)
    return y.shape[0]


@register
class Stoptron(KernelLearner):
    name = "stoptron"
    summary = "kernel Perceptron that stops adding support vectors once B are stored"
    paper = "Orabona, Keshet, Caputo, ICML 2008 (baseline); DOGMA"
    params = (BUDGET,)
    loop = stoptron_range
