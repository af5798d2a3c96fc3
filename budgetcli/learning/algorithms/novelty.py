"""Novelty detection (`--task novelty`, LIBSVM's one_class): NORMA on the one-class loss (Kivinen, Smola,
Williamson, "Online learning with kernels", IEEE Transactions on Signal Processing 52(8), 2004, §III-B).

The learner keeps f = Σ_i α_i k(x_i, ·) and a threshold ρ; an example's score is g(x) = f(x) − ρ, and it is
flagged novel when g(x) ≤ 0 (predict writes −1 for it, +1 for a normal one).  Each round is a step of
stochastic gradient descent on the regularised one-class risk

    R_t(f, ρ) = λ/2 ‖f‖² + max(0, ρ − f(x_t)) − νρ,

whose subgradients at (f_t, ρ_t) are λ f_t − δ_t k(x_t, ·) in f and δ_t − ν in ρ, with δ_t = 1 when x_t is
flagged (f_t(x_t) − ρ_t ≤ 0) and 0 otherwise.  The step η gives

    f_{t+1} = (1 − ηλ) f_t + η δ_t k(x_t, ·)       (x_t joins with α = η when flagged)
    ρ_{t+1} = ρ_t − η (δ_t − ν)                     (flagged: ρ − η(1 − ν); normal: ρ + ην)

and only the last τ terms of the expansion are kept (the paper's truncation; -B τ).

The sign of ρ's step.  One public implementation is reported (issue #49) to say that the update of ρ the
paper prints has the wrong sign; whatever the print, the derivation above decides, and it is the gradient
step (Tridgell's OLK hardware NORMA, a public novelty stage, uses the same sign).  It is also the only sign
under which ν means what the paper says: ρ's drift per round is η(ν − δ_t), zero on average exactly when
the fraction of flagged rounds is ν, and stable there (more flags lower ρ, which flags less).  Under the
reverse sign, ρ + η(δ_t − ν), a flag raises ρ, which flags more: the flagged fraction runs away to 1 or to
0 (tests/test_novelty.py measures both, the reverse sign in the reference of tests/reference.py).

Counted: `margin_updates`, the flagged rounds (the one-class hinge's margin errors, each of which adds a
term), whose fraction the train summary sets beside ν; the scalars hold ρ and the sum of ρ after every
round (task.RHO, task.RHO_SUM: the averaged hypothesis's threshold is their mean, as its coefficients are
the mean of the α's).  `mistakes` stays 0 (there are no labels to be wrong about).

Choices where the paper leaves room:
- A round is flagged when g(x) ≤ 0, not < 0: the subgradient of the hinge at its kink is taken as the
  flagged one, so that a flagged round is exactly one that predict would call novel (svm-predict's +1
  needs g > 0).  The first round (f = 0, ρ = 0) is therefore flagged, and x_1 joins.
- ρ starts at 0 (the paper does not say); f_1 = 0.
- The truncation window τ counts terms, not rounds: a term leaves when τ newer terms have joined (the
  oldest is evicted, its slot taken by the newcomer).  The paper drops a term τ rounds after it joined;
  since only flagged rounds add terms, every term dropped here is at least τ rounds old, so the paper's
  bound on what truncation changes, a factor (1 − ηλ)^τ on each dropped term, holds here too, and the
  memory bound is the same τ.
- Every round shrinks every coefficient by (1 − ηλ), flagged or not (the regulariser's gradient), before
  x_t joins; ηλ < 1 is required (a factor ≤ 0 would erase or flip the expansion).
- The step size η is constant (a learner that tracks an endless stream; no decreasing schedule is offered).
- Weights (a sample weight w): the loss w·(max(0, ρ − f(x)) − νρ), whose step is η w on both α and ρ;
  the shrink, from the regulariser, does not change.
- The last hypothesis is written by default (NORMA is built to track a stream; not measured against the
  average yet); the averaged hypothesis (`--average`) averages ρ with the coefficients.
"""

from __future__ import annotations

from ...numerics._jit import njit
from ..learner import (
    give_answer,
    MARGIN_UPDATES,
    OLDEST,
    KernelLearner,
    example_weight,
    loop_arrays,
    new_coefficient,
    open_round,
    retire,
    touch,
    victim,
)
from ..mixing import Unmixable
from ...base.params import BUDGET, HALF_OPEN_UNIT, number
from ...base.registry import register
from ...numerics.support import sv_fits, sv_put
from ..task import RHO, RHO_SUM
from .lms import NORMA_LAMBDA, STEP_SIZE, shrinking

NU = number(
    "nu",
    0.1,
    "ν of novelty detection: the fraction of examples the learner flags novel (score f(x) − ρ ≤ 0), as LIBSVM's -n",
    HALF_OPEN_UNIT,
)
# The sign of ρ's step on a flagged round: the derivation's (module docstring).  The reference in
# tests/reference.py takes the reverse one as an argument, to show what it does.


@njit(cache=True)
def norma_novelty_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, weights, scalars = st.alpha, st.krow, rows.weight, book.scalars
    shrink = 1.0 - h.step_size * h.norma_lambda
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f - scalars[RHO])
        step = h.step_size * example_weight(weights, t)
        flagged = f - scalars[RHO] <= 0.0
        if shrink != 1.0:
            for i in range(n):
                touch(alpha, st.avg_sum, st.avg_stamp, i, rnd)
                alpha[i] *= shrink
        if flagged:
            additions = counters[MARGIN_UPDATES]  # every flagged round adds one term
            counters[MARGIN_UPDATES] += 1
            slot = n
            if n >= h.budget:  # the oldest term: the slot the addition τ additions ago took
                slot = victim(OLDEST, book.rng_state, h.budget, additions)
                retire(S, book, alpha, st.avg_sum, st.avg_stamp, slot, rnd)
            sv_put(S, slot, idx, val, sq)
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, slot, step, rnd)
            scalars[RHO] -= step * (1.0 - h.nu)
        else:
            scalars[RHO] += step * h.nu
        scalars[RHO_SUM] += scalars[RHO]
    return y.shape[0]


@register
class NormaNovelty(KernelLearner):
    name = "norma-novelty"
    summary = "NORMA novelty detection: flag f(x) ≤ ρ, α ← (1 − ηλ) α, a flagged x joins with η; ρ tracks ν"
    paper = "Kivinen, Smola, Williamson, IEEE TSP 2004, §III-B (NORMA, novelty detection)"
    # λ = 0.001 by measurement (bench/novelty.py, mean held-out AUC over 3 seeds on letter A, E, O and mushrooms'
    # two labels): λ = 0.01 is lower on all 5 streams, 0.0001 on 4 of 5; -B 200 and 1000 gave the same as 500 there
    params = (BUDGET.but(default=500), STEP_SIZE, NORMA_LAMBDA.but(default=0.001), NU)
    tasks = ("novelty",)
    n_scalars = 2  # ρ, Σρ (task.py)
    evicts = True
    default_hypothesis = "online"
    weighting = "the loss w·(max(0, ρ − f(x)) − νρ): the steps η w on α and on ρ"
    mixing = Unmixable("a sharded run does not do novelty detection yet")
    loop = norma_novelty_range

    @classmethod
    def resolve_params(cls, given: dict) -> dict:
        return shrinking(cls.name, super().resolve_params(given))

    def decision_function(self, chunk):
        """The scores g(x) = f(x) − ρ (> 0: normal; ≤ 0: novel)."""
        return super().decision_function(chunk) - self.scalars[RHO]

    def set_coefficients(self, coef) -> None:
        """The averaged hypothesis's coefficients, with its threshold: the mean of ρ after every round (the
        coefficients are the mean of the α's over the same rounds: learner.averaged_alpha)."""
        super().set_coefficients(coef)
        self.scalars[RHO] = self.scalars[RHO_SUM] / max(self.counter("examples"), 1)
