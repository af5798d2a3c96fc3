"""Stoptron, the budget baseline of the Projectron's first paper (Orabona, Keshet, Caputo, ICML 2008),
shipped by DOGMA under that name: the kernel Perceptron until B support vectors are stored, after
which it stops learning.  A mistake with a full budget is counted and changes nothing."""

from __future__ import annotations

from .._jit import njit
from ..learner import MISTAKES, KernelLearner, new_coefficient, nnz, open_round
from ..params import BUDGET
from ..registry import register
from ..support import sv_fits, sv_put


@njit(cache=True)
def stoptron_range(S, K, rows, start, book, st, h):
    for t in range(start, rows.y.shape[0]):
        if not sv_fits(S, nnz(rows, t)):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, rows, t, book, st.alpha, st.krow)
        if yt * f <= 0.0:
            book.counters[MISTAKES] += 1
            if n < h.budget:
                sv_put(S, n, idx, val, sq)
                new_coefficient(st.alpha, st.avg_sum, st.avg_stamp, n, yt, rnd)
    return rows.y.shape[0]


@register
class Stoptron(KernelLearner):
    name = "stoptron"
    summary = "kernel Perceptron that stops adding support vectors once B are stored"
    paper = "Orabona, Keshet, Caputo, ICML 2008 (baseline); DOGMA"
    params = (BUDGET,)
    loop = stoptron_range
