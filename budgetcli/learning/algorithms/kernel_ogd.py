"""Kernel online gradient descent on the hinge loss, `kernel-ogd`: LIBOKL's learner of that name and the
OGD baseline of Lu, Hoi, Wang, Zhao, Liu (JMLR 2016), i.e. NORMA (Kivinen, Smola, Williamson, IEEE
Transactions on Signal Processing 2004, §III) without its regulariser.

On a margin error, y_t f(x_t) < 1, add x_t with coefficient η_t y_t (the step −η_t ∂ℓ/∂f of the
hinge loss ℓ = max(0, 1 − y f)); nothing else changes, so every margin error is kept: the support
set is unbounded.  η_t = η (`--rate-schedule constant`, LIBOKL's) or η/√t (`inverse-sqrt`, t counting
every example: the schedule of NORMA's regret bound).

Choices where the papers leave room:
- The update is strict, y f < 1: the hinge loss's subgradient is taken as 0 at the kink, as LIBOKL's
  HingeLoss and the JMLR authors' code take it.
- NORMA's regulariser λ (every coefficient shrunk by 1 − η_t λ each round) and its truncation of old
  terms are not offered: LIBOKL and the JMLR baseline run λ = 0, and with λ = 0 NORMA keeps every
  margin error (the budgeted learners of the package bound the support set instead).
- A zero score is a mistake (the package's rule; LIBOKL's sign(0) = −1 counts it only when y = +1).
- Weights (`train -w LABEL W`, a sample weight): an example of weight w has the loss w·max(0, 1 − y f),
  whose step is w times the hinge loss's, so a margin error adds η_t w y_t k(x_t, ·) (NORMA §III's
  gradient step on the weighted loss; LIBSVM's C_i = w_i C weighs the hinge loss alike).
"""

from __future__ import annotations

from ...numerics._jit import njit
from ..learner import KernelLearner, example_weight, hinge_round, loop_arrays, new_coefficient, open_round, give_answer
from ...base.params import POSITIVE, choice, number
from ...base.registry import register
from ...numerics.support import sv_fits, sv_put

CONSTANT, INVERSE_SQRT = 0, 1  # the rate schedules, in RATE_SCHEDULE's order

LEARNING_RATE = number(
    "learning_rate", 0.5, "η of online gradient descent: a margin error adds η_t y k(x, ·) (LIBOKL's -eta)", POSITIVE
)
RATE_SCHEDULE = choice(
    "rate_schedule",
    ("constant", "inverse-sqrt"),
    "constant",
    "η_t of online gradient descent: constant (η, LIBOKL's) or inverse-sqrt (η/√t, NORMA's regret bound)",
)


@njit(cache=True)
def ogd_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, weights = st.alpha, st.krow, rows.weight
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        if not hinge_round(counters, yt * f):
            continue
        rate = h.learning_rate if h.rate_schedule == CONSTANT else h.learning_rate / rnd**0.5
        sv_put(S, n, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, rate * yt * example_weight(weights, t), rnd)
    return y.shape[0]


@register
class KernelOGD(KernelLearner):
    name = "kernel-ogd"
    summary = "kernel online gradient descent on the hinge loss: η_t y k(x, ·) on every margin error; unbounded"
    paper = "Kivinen, Smola, Williamson, IEEE TSP 2004, §III (NORMA, λ = 0); LIBOKL kernel-ogd"
    params = (LEARNING_RATE, RATE_SCHEDULE)
    weighting = "the loss w·max(0, 1 − y f): a margin error adds η_t w y k(x, ·)"
    loop = ogd_range
