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
- The hypothesis written and its threshold (`--hypothesis`, `--rho-fit`).  The paper's ρ_t is the
  threshold of round t's decision, not of a hypothesis that stands still: it moves in a sawtooth (a flag
  lowers it by η(1 − ν), every other round raises it by ην) whose height is one new term's worth of f, and
  the last ρ_T stands wherever the run ends in it.  On `budgetlearn generate novelty-mixture`'s 200,000
  examples with ν = 0.01, in the stream's order the last hypothesis (f_T, ρ_T) flagged no held-out example
  at all, normal or novel (ρ_T ≈ 0 at the foot of a tooth, where the rbf expansion is > 0 everywhere), in
  two shuffled orders 13.9% of the normal ones (bench/novelty.py --streams mixture); learnt from normal
  data only, 3,000 rounds of 3-d Gaussians, it flagged 14% at ν = 0.1 and 77% at ν = 0.2; on letter and
  mushrooms (bench/novelty.py, ν = 0.1) 0.1% to 15.4% of the held-out normal rows.  So the threshold a
  model predicts with is refitted by default (`--rho-fit recent`) to what §III-B asks of ρ, that a
  fraction ν of the examples score at or below it: the ν-quantile of the hypothesis's own f over the
  examples of the last RECENT rounds, kept in the learner's state (`recent_*`: memory bounded as the
  support set's, and a resume, a checkpoint and every interface predict alike; a uniform sample of the
  whole run flagged as well, but it is no state: a resumed run would end with another model than one
  run).  A fixed threshold moves no ranking: the AUC stays the hypothesis's.  Of the hypotheses, the
  averaged one (the mean of the f_t and of the ρ_t, Cesa-Bianchi et al.'s online-to-batch conversion) is
  the default, refitted as the last is: higher held-out AUC than the last on all five letter and
  mushrooms streams (+0.001 to +0.021) and on the mixture (0.975 against 0.952), its flagged fraction
  within ν ± 0.02 on all of them, as the refitted last hypothesis's is (`--hypothesis last`, for a stream
  that drifts: the average remembers the whole run).  Not built: a decreasing step (the constant η is
  what lets NORMA track a drifting stream, §III-B's setting; the averaged hypothesis gives a stationary
  stream what a decreasing step would).  `--rho-fit learnt` predicts with the hypothesis's own ρ: ρ_T,
  or the average's mean of the ρ_t.  Fewer than RECENT rounds learnt: the quantile over those there
  are; none (an earlier build's file, which kept no examples): the hypothesis's own ρ.
"""

from __future__ import annotations

import math

import numpy as np

from ...numerics._jit import njit
from .. import statecheck
from ...base.core import Chunk, concatenate
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
from ..mixing import Mixing, sum_counts
from ...base.params import BUDGET, HALF_OPEN_UNIT, choice, number
from ...base.registry import register
from ...numerics.support import sv_fits, sv_put
from ..records import EXAMPLES
from ..task import RHO, RHO_SUM
from .lms import NORMA_LAMBDA, STEP_SIZE, shrinking

NU = number(
    "nu",
    0.1,
    "ν of novelty detection: the fraction of examples the learner flags novel (score f(x) − ρ ≤ 0), as LIBSVM's -n",
    HALF_OPEN_UNIT,
)
RHO_FIT = choice(
    "rho_fit",
    ("recent", "learnt"),
    "recent",
    "the threshold ρ a novelty model predicts with: recent, the ν-quantile of its f(x) on the examples of the "
    "last 2,000 rounds (it flags a fraction ν of them); learnt, the hypothesis's own: the last ρ_T, which moves "
    "by η(1 − ν) at each flag, or the averaged hypothesis's mean of the ρ_t",
)
# The examples of the last RECENT rounds, kept in the state (`recent_*` arrays), on which the threshold is refitted.
RECENT = 2000
# The sign of ρ's step on a flagged round: the derivation's (module docstring).  The reference in
# tests/reference.py takes the reverse one as an argument, to show what it does.


@njit(cache=True, inline="always")
def threshold_round(counters, scalars, flagged, step, nu):
    """The round's step on ρ (the derivation's sign, module docstring) and Σρ; a flagged round counted."""
    if flagged:
        counters[MARGIN_UPDATES] += 1
        scalars[RHO] -= step * (1.0 - nu)
    else:
        scalars[RHO] += step * nu
    scalars[RHO_SUM] += scalars[RHO]


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
            slot = n
            if n >= h.budget:  # the oldest term: the slot the addition τ additions ago took
                slot = victim(OLDEST, book.rng_state, h.budget, additions)
                retire(S, book, alpha, st.avg_sum, st.avg_stamp, slot, rnd)
            sv_put(S, slot, idx, val, sq)
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, slot, step, rnd)
        threshold_round(counters, scalars, flagged, step, h.nu)
    return y.shape[0]


def recent_rows(arrays: dict) -> Chunk:
    """The examples of the last rounds that a state's `recent_*` arrays hold, as a Chunk."""
    indptr = np.asarray(arrays["recent_indptr"], np.int64)
    n = len(indptr) - 1
    values = np.asarray(arrays["recent_values"], np.float64)
    return Chunk(indptr, np.asarray(arrays["recent_indices"], np.int32), values, np.zeros(n), np.zeros(n, np.int64))


class NoveltyMixing(Mixing):
    """A novelty detector's mix (sharded training, distributed/): its kind's (put before it among the bases,
    as FourierNoveltyMixing does for fogd-novelty; the default is a kernel expansion's: f = Σ_w (n_w/n) f_w
    over the union of the support sets, brought back to the budget), and what the task keeps besides f:
    - ρ, the shares' mean of the shards' ρ_w (the threshold of f's average is the average of the
      thresholds: the score g = f − ρ is averaged as f is);
    - Σρ, the averaged hypothesis's running sum of ρ, mixed as its coefficients' running sums are
      (mixing.sum_counts: the last mix's plus what each shard added since; for a learner that evicts,
      the shares' mix of the shards' means times T);
    - the examples of the last RECENT rounds (`recent_*`, on which the threshold is refitted): the last
      RECENT rounds of the whole run, each synchronisation's rounds taken from every shard in proportion
      to its share (`mixed_recent`).
    The flagged rounds (`margin_updates`) add up over the shards, as every counter does, so the summary's
    flagged fraction is the run's."""

    def mix(self, cls, reports, columns, width, counters, base, base_columns) -> dict:
        arrays = super().mix(cls, reports, columns, width, counters, base, base_columns)
        T = int(counters[EXAMPLES])
        total = sum(r["learned"] for r in reports)
        counts, base_count = sum_counts(cls, reports, T, base)
        weighted = [(r, count) for r, count in zip(reports, counts) if count is not None]
        weighted += [(base, base_count)] if base_count is not None else []
        scalars = np.array(arrays["scalars"], np.float64)  # after ρ and Σρ: the kind's own, as its mix made them
        scalars[RHO] = sum(r["learned"] / total * r["arrays"]["scalars"][RHO] for r in reports)
        scalars[RHO_SUM] = sum(count * mean_rho(r["arrays"]) for r, count in weighted)
        indptr, indices, values = mixed_recent(reports, base).csr
        return arrays | {
            "scalars": scalars,
            "recent_indptr": indptr,
            "recent_indices": indices,
            "recent_values": values,
        }


def mean_rho(arrays: dict) -> float:
    """The averaged hypothesis's threshold in a state's arrays: the mean of ρ over its rounds (0 before any)."""
    return float(arrays["scalars"][RHO_SUM]) / max(int(arrays["counters"][EXAMPLES]), 1)


def mixed_recent(reports: list, base: dict | None) -> Chunk:
    """The examples of the last RECENT rounds of a sharded run (NoveltyMixing): from every shard the last
    q_w of the rows it learned since the last mix, q_w its share of RECENT (n_w/n · RECENT, rounded by the
    largest remainders, so that Σ q_w = RECENT) or all n_w of them when the shards learned fewer than RECENT
    together, then in front the last of the last mix's (`base`) to make up RECENT.  A shard's own rows are
    the last of its `recent_*` (it went on from the last mix's, which it holds before them)."""
    learned = np.array([r["learned"] for r in reports], np.int64)
    total = int(learned.sum())
    if total > RECENT:
        exact = learned * RECENT / total
        quota = np.floor(exact).astype(np.int64)
        quota[np.argsort(quota - exact, kind="stable")[: RECENT - int(quota.sum())]] += 1
    else:
        quota = learned
    parts = []
    if total < RECENT and base is not None and "recent_indptr" in base["arrays"]:
        older = recent_rows(base["arrays"])
        parts.append(older.take(np.arange(max(0, len(older) - (RECENT - total)), len(older))))
    for r, q in zip(reports, quota.tolist()):
        if q and "recent_indptr" in r["arrays"]:
            rows = recent_rows(r["arrays"])
            parts.append(rows.take(np.arange(max(0, len(rows) - q), len(rows))))
    return concatenate(parts)


class NoveltyDetector:
    """What a novelty detector declares and keeps besides its kind's (put before its kind among the bases, as
    lms.Regressor is): the task; ρ and Σρ, the first two scalars (learning/task RHO, RHO_SUM); the check that
    its steps (`shrunk_steps`) times λ stay below 1; its score g(x) = f(x) − ρ with the threshold refitted on
    the examples of the last RECENT rounds (`threshold`, module docstring), kept in the state (`recent_*`);
    the averaged hypothesis's ρ, the mean of the ρ_t.  norma-novelty's, and the one-class forms of the
    feature-map learners' (fourier.py, nystrom.py), whose f is their own."""

    tasks = ("novelty",)
    n_scalars = 2  # ρ, Σρ (learning/task)
    mixing = NoveltyMixing()
    shrunk_steps = ("step_size",)  # the steps η whose shrink factor 1 − ηλ must stay above 0

    @classmethod
    def resolve_params(cls, given: dict) -> dict:
        h = super().resolve_params(given)
        for step in cls.shrunk_steps:
            shrinking(cls.name, h, step)
        return h

    def decision_function(self, chunk):
        """The scores g(x) = f(x) − ρ (> 0: normal; ≤ 0: novel), ρ the `threshold`."""
        return super().decision_function(chunk) - self.threshold()

    def hypothesis_scores(self, chunk) -> np.ndarray:
        """f(x), the hypothesis's own score, before its threshold."""
        return super().decision_function(chunk)

    def threshold(self) -> float:
        """The ρ the hypothesis predicts with (module docstring, `--rho-fit`): with `recent`, the ν-quantile
        of its own f(x) on the n examples of the last RECENT rounds: midway between the k-th and the
        (k+1)-th smallest of those values, k = ⌈νn⌉, so that exactly k of them score g < 0 and none g = 0
        (scikit-learn's checks read a score of 0 as normal, predict as novel); computed once per
        hypothesis.  ρ itself with `learnt`, or without examples kept (an earlier build's file)."""
        if self.hyper["rho_fit"] != "recent" or not len(self.recent):
            return float(self.scalars[RHO])
        if self._threshold is None:
            f = np.sort(self.hypothesis_scores(self.recent))
            k = min(math.ceil(self.hyper["nu"] * len(f) - 1e-9), len(f))  # ν n up to its rounding
            self._threshold = float(f[k - 1] if k == len(f) else (f[k - 1] + f[k]) / 2)
        return self._threshold

    def learn(self, chunk, y, weights=None, answers: bool = False):
        """The loop's rounds (and their answers, as any learner's), then the examples learnt kept among the
        last RECENT (the rows an Overflow stopped before are not)."""
        before = self.counter("examples")
        try:
            return super().learn(chunk, y, weights, answers)
        finally:
            learnt = self.counter("examples") - before
            if learnt:
                self._threshold = None
                kept = self.recent if learnt < RECENT else None
                rows = chunk.take(np.arange(max(0, learnt - RECENT), learnt))
                self.recent = rows if kept is None else concatenate([kept, rows])
                if len(self.recent) > RECENT:
                    self.recent = self.recent.take(np.arange(len(self.recent) - RECENT, len(self.recent)))

    def set_coefficients(self, coef) -> None:
        """The averaged hypothesis's coefficients, with its threshold: the mean of ρ after every round (the
        coefficients are the mean of the α's over the same rounds: learner.averaged_alpha), refitted as
        the last hypothesis's is (`threshold`)."""
        super().set_coefficients(coef)
        self.scalars[RHO] = self.scalars[RHO_SUM] / max(self.counter("examples"), 1)
        self._threshold = None

    def _kept_state(self) -> dict:
        """As its kind's, and the examples of the last rounds (`recent_*`)."""
        indptr, indices, values = self.recent.csr
        return super()._kept_state() | {"recent_indptr": indptr, "recent_indices": indices, "recent_values": values}

    @classmethod
    def saved_arrays(cls, header: dict, members: dict) -> dict:
        """As its kind's, and the examples of the last rounds (none in an earlier build's file)."""
        out = super().saved_arrays(header, members)
        if "recent_indptr" not in members:
            return out
        n = statecheck.vector_length(members, "recent_indptr") - 1
        nnz = statecheck.vector_length(members, "recent_indices")
        return out | {
            "recent_indptr": ((n + 1,), statecheck.I64),
            "recent_indices": ((nnz,), statecheck.I32),
            "recent_values": ((nnz,), statecheck.F64),
        }

    @classmethod
    def check_saved(cls, header: dict, arrays: dict) -> None:
        """As its kind's, and the examples of the last rounds: all three arrays or none, at most RECENT rows of
        finite values, indices below the model's features, as a support vector's."""
        super().check_saved(header, arrays)
        names = ("recent_indptr", "recent_indices", "recent_values")
        if not any(name in arrays for name in names):
            return
        if not all(name in arrays for name in names):
            raise ValueError("the examples of the last rounds need recent_indptr, recent_indices and recent_values")
        indptr = arrays["recent_indptr"]
        if not 1 <= len(indptr) <= RECENT + 1:
            raise ValueError(f"recent_indptr holds {len(indptr)} numbers; at most {RECENT + 1} (one more than rows)")
        statecheck.check_csr("recent", indptr, arrays["recent_indices"], int(header["n_features"]))
        if not np.isfinite(arrays["recent_values"]).all():
            raise ValueError("recent_values holds a number that is not finite")

    @classmethod
    def from_state(cls, header: dict, arrays: dict):
        """As its kind's, and the examples of the last rounds (none: an earlier build's file)."""
        self = super().from_state(header, arrays)
        if "recent_indptr" in arrays:
            self.recent = recent_rows(arrays)
        return self

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.recent = concatenate([])  # the examples of the last RECENT rounds
        self._threshold = None  # `threshold`'s refit, made once per hypothesis


@register
class NormaNovelty(NoveltyDetector, KernelLearner):
    name = "norma-novelty"
    summary = "NORMA novelty detection: flag f(x) ≤ ρ, α ← (1 − ηλ) α, a flagged x joins with η; ρ tracks ν"
    paper = "Kivinen, Smola, Williamson, IEEE TSP 2004, §III-B (NORMA, novelty detection)"
    # λ = 0.001 by measurement (bench/novelty.py, mean held-out AUC over 3 seeds on letter A, E, O and mushrooms'
    # two labels): λ = 0.01 is lower on all 5 streams, 0.0001 on 4 of 5; -B 200 and 1000 gave the same as 500 there
    params = (BUDGET.but(default=500), STEP_SIZE, NORMA_LAMBDA.but(default=0.001), NU, RHO_FIT)
    evicts = True
    weighting = "the loss w·(max(0, ρ − f(x)) − νρ): the steps η w on α and on ρ"
    loop = norma_novelty_range
