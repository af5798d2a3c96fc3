"""The learner contract: what an algorithm is to the rest of the package, whichever kind of hypothesis it
keeps.  Two kinds follow it:

    a support-set learner    f(x) = Σ_i α_i k(sv_i, x) over a support set it grows, bounds and evicts
                             from (learner.KernelLearner; multiclass.MulticlassLearner: a coefficient
                             per vector and class);
    a feature-map learner    f(x) = wᵀz(x), a weight vector over a fixed map z of the input (random
                             Fourier features: featuremap.FeatureMapLearner).

Its surface is the same for both:

    learn(chunk, y)              one online pass over a chunk, in order (y: the encoded labels)
                                 (answers=True: also each example's score right before its round)
    decision_function(chunk)     f(x) for each example (a multiclass learner: the n × m class scores)
    state() / from_state(...)    everything needed to predict and to resume, as a JSON header + arrays
    averaged_coefficients(), set_coefficients(...), averaged_copy(), batch_average(projected)
                                 the averaged hypothesis (1/T) Σ_t f_t, kept by running sums
    counter(name), nonfinite()   the training counters; the first number of the hypothesis not finite
    support_size(), learned_nothing(), summary_row(), size_warnings(), info_fields(), info_row(d),
    expansion()                  what the summaries, `info`, `export` and mixing ask of a hypothesis,
                                 answered by its kind (no caller asks which kind it is)

An algorithm is its declarations (name, paper, `params`, the arrays it keeps) plus one compiled loop over
a range of a chunk, `loop(S, K, rows, start, book, st, h)`:

    S      the support set (support.SVArrays; empty for a feature map)   K  the kernel (kernels.KernelArgs)
    rows   the chunk, its labels and weights, and where the loop writes each example's answer, its score
           right before its round (`Rows`, records.give_answer)          start the first example to learn from
    book   the bookkeeping every loop shares (`Book`: counters, random state, scalars, scratch)
    st     the learner's arrays by name (`_state_arrays()`), a record made from the declarations
    h      its parameters by name (`params`, str choices as their index, plus `constants`)

The loop never allocates: when the next example might not fit in the current arrays it returns the
index it stopped at, and `learn` makes room (its kind's `_after_range`) and calls it again.  What the
loop takes, counts and raises is records.py.  Two parts of the contract have modules of their own: an
algorithm's settings (its parameters resolved and checked: settings.py) and its state as a model file holds
it (state.py).
"""

from __future__ import annotations

import math
from typing import Callable, ClassVar

import numpy as np

from ..numerics.kernels import Kernel
from .mixing import Mixing
from ..base.params import Param
from .settings import Settings
from .state import SavedState
from .records import (
    COUNTER_NAMES,
    EXAMPLES,
    NO_WEIGHTS,
    Book,
    NonFiniteRound,
    Overflow,
    RetireLog,
    Rows,
    record_type,
    NO_ANSWERS,
)
from ..numerics.rng import seed_state


def _shaped(answers: np.ndarray, n: int, width: int, multiclass: bool) -> np.ndarray:
    """A loop's answers (Rows.answers) of n examples as decision_function gives scores: a vector, or a row
    of `width` classes each."""
    return answers.reshape(n, width) if multiclass else answers


class NotAnExpansion(ValueError):
    """A hypothesis that is no kernel expansion over a support set (`Learner.expansion`); str(e) says what it is."""


class Learner(Settings, SavedState):
    """What every algorithm is, whichever kind (module docstring); an algorithm fills in the class
    attributes and `loop`, a kind the methods that say "its kind's"."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    # Fixed values the loop reads from `h` besides the parameters, e.g. which variant of a family runs;
    # a subclass's entries are added to its parent's, and a parameter of the same name takes precedence.
    constants: ClassVar[dict] = {}
    loop: ClassVar[Callable] = None  # the compiled loop (module docstring)
    # What a model predicts with when the run does not say (spec.TrainSpec.written): the averaged
    # hypothesis (1/T) Σ f_t, far better on held-out data, unless the algorithm exists to track drift.
    default_hypothesis: ClassVar[str] = "running-average"
    multiclass: ClassVar[bool] = False  # binary learners refuse a third label (labels.BinaryLabels)
    # The tasks (learning/task) the algorithm learns: a run of another task refuses it in one line (spec.TrainSpec).
    tasks: ClassVar[tuple[str, ...]] = ("classification",)
    # How an example's weight w (`train -w LABEL W`, a sample weight) enters the algorithm's update, as
    # `budgetlearn algorithms` says it (its module's docstring has the paper's section); None: the
    # algorithm takes no weights, and a weight other than 1 is refused (`check_weights`).
    weighting: ClassVar[str | None] = None
    n_scalars: ClassVar[int] = 0  # length of `scalars`, saved with the state
    evicts: ClassVar[bool] = False  # it discards support vectors (learner.KernelLearner)
    # Arrays only the averaged hypothesis needs, saved only by a model that predicts with it
    # (model.Model.save); a learner loaded without them cannot continue its average.
    average_arrays: ClassVar[tuple[str, ...]] = ()
    average_kept: bool = True
    # The resume state: arrays that a model file holds only when saved with --save-resume.  name ->
    # rebuild(learner, name), which makes the array afresh; a loaded learner without them rebuilds them
    # when it learns next (`stale`).
    rebuilt: ClassVar[dict[str, Callable]] = {}
    # The `rebuilt` arrays that the rebuild makes bit for bit as the loops kept them (a Gram matrix: the
    # same kernel values); the others (an inverse, a factor) come back up to rounding, so that a resume
    # from a file without them is not exact (Model.inexact_resume).
    rebuilt_exactly: ClassVar[frozenset[str]] = frozenset()
    renamed: ClassVar[dict[str, str]] = {}  # parameter name in older model files -> its name today
    # How iterative parameter mixing (distributed/) averages its models and brings them back to its
    # bounds (mixing.py), or mixing.Unmixable(reason).
    mixing: ClassVar[Mixing] = Mixing()
    # A learner whose products can run on several threads with the same results (`train --threads N`);
    # `threads`, a run's setting and not the model's, is how many it uses.
    threaded: ClassVar[bool] = False
    threads: int = 1

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls.constants = {**super(cls, cls).constants, **cls.__dict__.get("constants", {})}

    def __init__(self, kernel: Kernel, seed: int = 0, **params):
        self.hyper = self.resolve_params(params)
        self.check_kernel(kernel.kind, self.hyper)
        self.kernel = kernel
        self.seed = int(seed)
        self.counters = np.zeros(len(COUNTER_NAMES), np.int64)
        self.rng_state = seed_state(self.seed)  # for algorithms that draw random numbers in their loop
        self.scalars = np.zeros(self.n_scalars)  # running numbers of an algorithm (e.g. the Forgetron's Q)
        self.scratch = np.zeros(0, np.float64)  # dense copy of x_t for kernel rows; all zeros between uses
        self.n_features = 0  # largest feature index seen in training, plus one
        self.keep_retired = False  # the loop logs each eviction (learner.KernelLearner.keep_evicted)
        self.retire_log = RetireLog(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(1, np.int64))
        self.stale: set[str] = set()  # resume-state arrays to rebuild before learning (`rebuilt`)
        self._records = None  # (key, loop_args()) of the last call
        self.notes: list[str] = []  # what the summary says of the run (a resume: session.py; mixes: distributed)

    # ---- learning ---------------------------------------------------------------------------
    def keep_evicted(self, hypothesis: str) -> None:
        """Keep what the hypothesis a run writes (spec.HYPOTHESES) needs of the vectors the learner
        evicts (its kind's: nothing, for a learner that never evicts)."""

    def learn(self, chunk, y: np.ndarray, weights: np.ndarray | None = None, answers: bool = False):
        """One online pass over the chunk's examples in order; y holds the encoded labels, `weights`
        each example's weight (finite and > 0; None: every one 1).  Overflow when an example's numbers
        are not finite (the rounds before it learnt).

        With `answers`, it returns what decision_function of the online learner gave each example right
        before its round (progressive validation), as decision_function shapes it: a vector, or the
        n × m class scores with −inf for a class the model met only at a later example (written by the
        loop, `Rows.answers`); an Overflow then carries those of the rows before it as `answered`."""
        weights = self._example_weights(weights, len(chunk))
        if self.stale:
            self._rebuild()
        try:
            y = self._labels(y, chunk.line_numbers)
        except Overflow as exc:  # a class that does not fit: the rows before it are learnt, as the loop would
            if exc.row > 0:
                given = None if not len(weights) else weights[: exc.row]
                exc.answered = self.learn(chunk.take(np.arange(exc.row)), np.asarray(y)[: exc.row], given, answers)
            raise
        self._prepare(chunk)
        out, width = NO_ANSWERS, 0
        if answers:
            # the classes met before the last example: those decision_function gives some example before its round
            width = max(int(self.n_classes[0]), int(y[:-1].max(initial=-1)) + 1) if self.multiclass else 1
            out = np.full(len(chunk) * width, -math.inf)
        rows = Rows(*chunk.csr, y, weights, out)
        start, n = 0, len(chunk)
        while start < n:
            before = int(self.counters[EXAMPLES])
            try:
                start = self._learn_range(rows, start)
            except NonFiniteRound as exc:
                row = start + int(self.counters[EXAMPLES]) - before - exc.counted
                overflow = Overflow(row, int(chunk.line_numbers[row]), exc.reason)
                if answers:
                    overflow.answered = _shaped(out, n, width, self.multiclass)[:row]
                raise overflow from None
            self._after_range(chunk, start)
        return _shaped(out, n, width, self.multiclass) if answers else None

    def _example_weights(self, weights: np.ndarray | None, n: int) -> np.ndarray:
        """The weights as `Rows.weight` holds them (NO_WEIGHTS when every one is 1), checked: one per
        example, finite and > 0 (a weight 0 is left out before: pipeline.weighed), and for an
        algorithm that takes weights (`check_weights`)."""
        if weights is None:
            return NO_WEIGHTS
        weights = np.asarray(weights, np.float64)
        if weights.shape != (n,):
            raise ValueError(f"{weights.shape} weights for {n} examples: give one weight per example")
        if not (np.isfinite(weights).all() and (weights > 0).all()):
            raise ValueError("a weight is not a finite number > 0")
        if (weights == 1.0).all():
            return NO_WEIGHTS
        self.check_weights()
        return weights

    def _prepare(self, chunk) -> None:
        """What the arrays need before the loop meets this chunk (its kind's: the features it brings)."""
        self.n_features = max(self.n_features, chunk.n_features)

    def _after_range(self, chunk, stop: int) -> None:
        """After the loop returned at `stop` (its kind's: the room the next example needs, when stop < len)."""

    def _learn_range(self, rows: Rows, start: int) -> int:
        """Run the compiled loop from example `start`; return where it stopped (len = done)."""
        S, K, book, st, h = self.loop_args()
        return type(self).loop(S, K, rows, start, book, st, h)

    def loop_args(self) -> tuple:
        """(S, K, book, st, h): what the compiled loop and its pieces take besides the rows.

        Made again only when an array was replaced (grown, reloaded): a one-example `learn` (River's
        learn_one) would otherwise spend as long making them as learning.  The cached records keep
        the arrays they hold alive, so an array of the same id is the same array."""
        S, arrays = self._support_record(), self._state_arrays()
        key = (
            id(S),
            id(self.scratch),
            id(self.retire_log),
            id(self.counters),
            id(self.rng_state),
            id(self.scalars),
            self.keep_retired,
            *map(id, arrays.values()),
        )
        if self._records is None or self._records[0] != key:
            book = Book(self.counters, self.rng_state, self.scalars, self.scratch, self.retire_log, self.keep_retired)
            st = record_type("State", tuple(arrays))(**arrays)
            self._records = (key, (S, self.kernel.args(), book, st, self._hyper_record()))
        return self._records[1]

    def _hyper_record(self):
        values = self.constants | {p.name: p.code(self.hyper[p.name]) for p in self.params}
        # a parameter left at a computed default (None: the loop computes it) reaches the loop as NaN
        values = {k: math.nan if v is None else v for k, v in values.items()}
        return record_type("Hyper", tuple(values))(**values)

    def _support_record(self):
        """The support set as the loop takes it, `S` (its kind's)."""
        raise NotImplementedError

    def _state_arrays(self) -> dict:
        """The arrays the loop gets as `st`, by name (its kind's, and what an algorithm adds)."""
        raise NotImplementedError

    def _labels(self, y: np.ndarray, lines: np.ndarray) -> np.ndarray:
        """The encoded labels as the loop takes them (`lines`: the examples' lines, for messages)."""
        return y

    def decision_function(self, chunk) -> np.ndarray:
        raise NotImplementedError

    def counter(self, name: str) -> int:
        return int(self.counters[COUNTER_NAMES.index(name)])

    def nonfinite(self) -> str | None:
        """The name of the first number of the hypothesis or its running average that is not finite
        (a setting overflowed), else None: cheap enough after every chunk.  The resume state (K⁻¹ and
        the like) is checked when the model is saved (Model.save checks all it writes)."""
        arrays = self._decisive_arrays()
        if np.isfinite(np.concatenate([a.ravel() for a in arrays.values()])).all():  # one check: after every
            return None  # chunk, and River's learn_one learns chunks of one example
        return next(name for name, a in arrays.items() if not np.isfinite(a).all())

    def _decisive_arrays(self) -> dict:
        """The arrays `nonfinite` checks: the running numbers, and its kind's saved hypothesis."""
        return {"scalars": self.scalars}

    # ---- the averaged hypothesis --------------------------------------------------------------
    def averaged_coefficients(self) -> np.ndarray:
        """The coefficients (weights) of the averaged hypothesis (1/T) Σ_{t=1..T} f_t over the T rounds
        seen (online-to-batch conversion, Cesa-Bianchi, Conconi, Gentile 2004)."""
        raise NotImplementedError

    def set_coefficients(self, coef: np.ndarray) -> None:
        """Make `coef` the hypothesis's coefficients (weights): a batch or prediction model's."""
        raise NotImplementedError

    def averaged_copy(self) -> "Learner":
        """A copy of the learner, without its resume state, whose running sums are those a model file
        of the running average holds (its kind's: an archive of evicted vectors folded in); the learner
        itself goes on unchanged.  Model.hypothesis_learner makes its averaged coefficients the copy's."""
        return type(self).from_state(*self.portable_state())

    def batch_average(self, projected: bool = False) -> "Learner":
        """A copy predicting with the averaged hypothesis (1/T) Σ_t f_t (online-to-batch; its kind's: the
        vectors evicted on the way, kept or `projected` onto the kept ones)."""
        learner = type(self).from_state(*self.portable_state())
        learner.set_coefficients(self.averaged_coefficients())
        return learner

    def fold_archive(self, arrays: dict, predicting: "Learner", resume: bool) -> int | None:
        """A running average's file `arrays` with the part of the evicted vectors folded in, as
        `predicting` (its `averaged_copy`) holds it; the number of vectors whose part the file holds
        folded, or None for a learner that keeps no archive (its kind's)."""
        return None

    def archive_counts(self) -> tuple[int, int, int]:
        """(vectors kept, evicted, compressions) of the archive of evicted vectors a running average keeps."""
        return 0, 0, 0

    # ---- what is asked of a hypothesis, answered by its kind ----------------------------------
    def support_size(self) -> int:
        """|S|: the support vectors it keeps (none for a feature map)."""
        raise NotImplementedError

    def learned_nothing(self) -> bool:
        """The hypothesis is f = 0 (`train`'s and `tune`'s "learned nothing")."""
        raise NotImplementedError

    def summary_row(self) -> tuple[str, str]:
        """The train summary's row for the hypothesis' size: (what, how many)."""
        raise NotImplementedError

    def size_warnings(self) -> list[str]:
        """Warnings about the hypothesis a run ended with (the train summary's)."""
        raise NotImplementedError

    def info_fields(self) -> dict:
        """`info`'s fields for the hypothesis: support_size, support_nonzeros, feature_map."""
        raise NotImplementedError

    @classmethod
    def info_row(cls, d: dict) -> tuple[str, str]:
        """`info`'s text row for the hypothesis, from its description `d` (info.describe)."""
        raise NotImplementedError

    def expansion(self) -> tuple:
        """The hypothesis as a kernel expansion: (indptr, indices, values) of the support vectors and
        their coefficients; NotAnExpansion when it is none (LIBSVM's format cannot hold it)."""
        raise NotImplementedError
