"""The learner contract every algorithm follows, binary and multiclass (multiclass.py).

A learner owns a kernel, a support set (support.py) and its own per-slot arrays (coefficients,
Gram inverse, work buffers).  Its public surface is small and the same for every algorithm:

    learn(chunk, y)              one online pass over a chunk, in order
    decision_function(chunk)     f(x) for each example of a chunk
    state() / from_state(...)    everything needed to predict and to resume, as JSON + arrays

An algorithm is its declarations (name, paper, `params`, the per-slot arrays it keeps) plus one
compiled loop over a range of a chunk, `loop(S, K, rows, start, book, st, h)`:

    S      the support set (support.SVArrays)        K     the kernel (kernels.KernelArgs)
    rows   the chunk and its labels (`Rows`)         start the first example to learn from
    book   the bookkeeping every loop shares (`Book`: counters, random state, scalars, scratch)
    st     the learner's arrays by name (its `slot_arrays` and `_state_arrays()`), a record made
           from the declarations
    h      its parameters by name (`params`, str choices as their index, plus `constants`)

The loop never allocates: when the next example might not fit in the current arrays it returns the
index it stopped at, and `learn` grows the arrays and calls it again.  Records are named tuples,
which numba passes as one argument; the types of `st` and `h` are made once per field list
(`record_type`).
"""

from __future__ import annotations

import math
import re
from collections import namedtuple
from typing import Callable, ClassVar, NamedTuple

import numpy as np

from . import fewscores, statecheck
from ._jit import njit, record
from .core import gather_rows
from .kernels import Kernel, kernel_from_dot, kernel_values, scatter, sparse_sqnorm, unscatter
from .params import Param
from .mixing import Mixing
from .projection import onto_kept, schur_downdate
from .retired import ARCHIVE_ARRAYS, Retired
from .rng import randbelow, seed_state
from .support import COUNT, DENSE_LIMIT, SupportSet, dense_dots, kernel_row

# Training counters, kept in one int64 array so the compiled loops can update them.
EXAMPLES, MISTAKES, MARGIN_UPDATES, PROJECTIONS = range(4)
COUNTER_NAMES = ("examples", "mistakes", "margin_updates", "projections")

# Stand-ins for arrays a variant of a family does not keep (its loop never touches them), shared so
# that the cached loop arguments stay valid (`loop_args`).
NO_VECTOR, NO_MATRIX = np.zeros(0), np.zeros((0, 0))

# The weights of a chunk whose examples all weigh 1 (`Rows.weight`): read by no loop.
NO_WEIGHTS = np.zeros(0)

# Eviction policies of the budgeted learners (`victim`), one numbering for every algorithm.
UNBOUNDED, RANDOM, OLDEST = 0, 1, 2

# A running average keeps at most 2·max(B, ARCHIVE_MIN) evicted vectors (`archive_keep`).
ARCHIVE_MIN = 64


def archive_keep(params: dict) -> int:
    """How many evicted vectors a compression of a running average's archive keeps (`compress_retired`):
    max(B, ARCHIVE_MIN), B the budget in `params` (a model file's, from anybody: a budget that is no
    integer counts as none)."""
    budget = params.get("budget", 0)
    return max(budget if type(budget) is int else 0, ARCHIVE_MIN)


class NonFiniteRound(ArithmeticError):
    """Raised by a compiled loop when a round's numbers are not finite (subclasses say which), before
    it counts the round unless `counted`; `KernelLearner.learn` turns it into `Overflow`, naming the
    example."""

    reason = ""
    counted = False


class ExampleOverflow(NonFiniteRound):
    reason = "the example's squared norm ‖x‖² is not a finite number: a feature value is too large (scale the features)"


class ScoreOverflow(NonFiniteRound):
    reason = "the model's score of this example is not a finite number: its numbers overflowed with these settings"


class TooLarge(ValueError):
    """A learner's arrays would pass a bound of bounds.py; str(e) says which."""


class Overflow(ArithmeticError):
    """Learning stopped at row `row` (file line `line`) of a chunk whose numbers are not finite; the
    learner's state is that after the rounds before it, and it should not be saved or used."""

    def __init__(self, row: int, line: int, reason: str):
        super().__init__(reason)
        self.row, self.line, self.reason = row, line, reason


@record
class RetireLog(NamedTuple):
    """Evictions of one call of a learner loop: pool range of the evicted vector and the sum of its
    coefficient over the rounds it was in the hypothesis."""

    start: np.ndarray
    length: np.ndarray
    coef_sum: np.ndarray
    count: np.ndarray  # int64[1]


@record
class Rows(NamedTuple):
    """A chunk as the loops take it: CSR rows, their encoded labels (±1.0, or class indices) and their
    weights (`example_weight`: empty when every weight is 1, so that an unweighted run reads nothing)."""

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    y: np.ndarray
    weight: np.ndarray


@record
class Book(NamedTuple):
    """The bookkeeping every loop shares."""

    counters: np.ndarray  # int64[len(COUNTER_NAMES)]
    rng_state: np.ndarray  # the model's splitmix64 stream (rng.py)
    scalars: np.ndarray  # an algorithm's running numbers (`n_scalars`, saved)
    scratch: np.ndarray  # dense copy of x_t for kernel rows; all zeros between uses
    log: RetireLog
    keep_retired: bool


def record_type(kind: str, fields: tuple[str, ...]) -> type:
    """The named tuple type of a loop's `kind` record ("State" or "Hyper") with these fields.

    Kept as a global of this module under a name that spells the fields (`__getattr__` makes it from
    the name alone), because numba's on-disk cache refers to a record type by module and name: a
    process may load cached code for record types it has not made yet."""
    name = kind + "".join(f"_{len(f)}{f}" for f in fields)
    return globals().get(name) or __getattr__(name)


def __getattr__(name: str):
    """The record type a `record_type` name spells (a module __getattr__, PEP 562)."""
    kind, fields, rest = name[:5], [], name[5:]
    while kind in ("State", "Hyper") and (m := re.match(r"_(\d+)", rest)):
        size, rest = int(m.group(1)), rest[m.end() :]
        fields.append(rest[:size])
        rest = rest[size:]
    if kind not in ("State", "Hyper") or rest:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    made = globals()[name] = record(namedtuple(name, fields, module=__name__))
    return made


class KernelLearner:
    """Base class of every learner; an algorithm fills in the class attributes and `loop`.

    This class is the binary contract; multiclass.MulticlassLearner changes what a coefficient is."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    # Fixed values the loop reads from `h` besides the parameters, e.g. which variant of a family runs;
    # a subclass's entries are added to its parent's, and a parameter of the same name takes precedence.
    constants: ClassVar[dict] = {}
    loop: ClassVar[Callable] = None  # the compiled loop (module docstring)
    # True when support vectors are discarded.  The exact averaged hypothesis needs the evicted
    # vectors too: with `keep_retired` set, the loop logs each eviction (`retire`) and `learn`
    # copies the evicted vector and its summed coefficient into `retired` before the pool range
    # can be reused.  Off by default: it makes memory grow with the number of evictions.
    evicts: ClassVar[bool] = False
    # The running sums of the average that the archive of evicted vectors is folded into when a model
    # file is written (`folded_sums`): per slot ("avg_sum") or per slot and class ("avg_base", multiclass).
    folded_array: ClassVar[str] = "avg_sum"
    # What a model predicts with when the run does not say (spec.TrainSpec.written): the averaged
    # hypothesis (1/T) Σ f_t, far better on held-out data, unless the algorithm exists to track drift.
    default_hypothesis: ClassVar[str] = "running-average"
    multiclass: ClassVar[bool] = False  # binary learners refuse a third label (labels.BinaryLabels)
    # How an example's weight w (`train -w LABEL W`, a sample weight) enters the algorithm's update, as
    # `budgetlearn algorithms` says it (its module's docstring has the paper's section); None: the
    # algorithm takes no weights, and a weight other than 1 is refused (`check_weights`).
    weighting: ClassVar[str | None] = None
    n_scalars: ClassVar[int] = 0  # length of `scalars`, saved with the state
    # name -> "vector" (per slot, saved), "square" (slot x slot, saved) or "work" (per slot, not saved).
    # alpha: coefficients; avg_sum / avg_stamp: the running sums behind the averaged hypothesis
    # (see `touch`); krow: the kernel row of the current example.  Subclasses extend this dict.
    slot_arrays: ClassVar[dict[str, str]] = {
        "alpha": "vector",
        "avg_sum": "vector",
        "avg_stamp": "vector",
        "krow": "work",
    }
    # Model files written by an earlier build stay loadable: a saved slot array ("vector" or "square")
    # that a later layout adds must be listed here with the value an older file stands for (its
    # missing array is filled with it).  A missing array not listed here makes the file be refused
    # with a version message (Model.load).  Counters added at the end of COUNTER_NAMES start at 0.
    layout_defaults: ClassVar[dict[str, float]] = {}
    # The resume state: arrays that grow as |S|² (a kept Gram matrix, inverse or factor) and that a
    # model file holds only when saved with --save-resume.  name -> rebuild(learner, name), which
    # makes the array afresh from the support set; a loaded learner without them rebuilds them when
    # it learns next (`stale`).
    rebuilt: ClassVar[dict[str, Callable]] = {}
    # The `rebuilt` arrays that the rebuild makes bit for bit as the loops kept them (a Gram matrix: the
    # same kernel values); the others (an inverse, a factor) come back up to rounding, so that a resume
    # from a file without them is not exact (Model.inexact_resume).
    rebuilt_exactly: ClassVar[frozenset[str]] = frozenset()
    renamed: ClassVar[dict[str, str]] = {}  # parameter name in older model files -> its name today
    # Resume-state arrays of older model files that a later layout replaced (name -> kind): accepted
    # when a file holds them, never read (the `rebuilt` arrays that replace them are made afresh).
    superseded: ClassVar[dict[str, str]] = {}
    # How iterative parameter mixing (distributed/) averages its models and brings them back to its
    # bounds (mixing.py): the default for a kernel expansion, a subclass beside the algorithm for what
    # differs, or mixing.Unmixable(reason).
    mixing: ClassVar[Mixing] = Mixing()
    new_slots_per_example: ClassVar[int] = 1  # most support vectors one example may add
    # A learner whose hypothesis is a weight vector over a fixed feature map (FOGD's random Fourier
    # features) instead of a support set: the map's name, and `feature_map_weights()` its weights.
    feature_map: ClassVar[str | None] = None
    # Arrays only the averaged hypothesis needs, saved only by a model that predicts with it
    # (model.Model.save); a learner loaded without them cannot continue its average.
    average_arrays: ClassVar[tuple[str, ...]] = ()
    average_kept: bool = True
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
        self.support = SupportSet(dense=True)
        self.counters = np.zeros(len(COUNTER_NAMES), np.int64)
        self.rng_state = seed_state(self.seed)  # for algorithms that draw random numbers in their loop
        self.scalars = np.zeros(self.n_scalars)  # running numbers of an algorithm (e.g. the Forgetron's Q)
        self.scratch = np.zeros(0, np.float64)  # dense copy of x_t for kernel rows; all zeros between uses
        self.n_features = 0  # largest feature index seen in training, plus one
        self.keep_retired = False
        # with `keep_retired`, keep at most 2 × this many evicted vectors: past that, compress them back to
        # this many (compress_retired; a running average's constant memory); 0: keep them all
        # (online-to-batch's exact average).  Set by `keep_evicted`.
        self.archive_keep = 0
        # the evicted vectors and their Σ_t coefficient: resume state (`state`), folded onto the kept
        # vectors in a written model's average (`folded_sums`), never in the learner that goes on
        self.retired = Retired(self.multiclass)
        self.retire_log = RetireLog(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(1, np.int64))
        self.slot = {name: self._new_slot_array(kind, self.support.capacity) for name, kind in self.slot_arrays.items()}
        self.stale: set[str] = set()  # resume-state arrays to rebuild before learning (`rebuilt`)
        self._records = None  # (key, loop_args()) of the last call
        self.notes: list[str] = []  # what the summary says of the run (a resume: pipeline.train; mixes: distributed)

    # ---- parameters -------------------------------------------------------------------------
    @classmethod
    def resolve_params(cls, given: dict) -> dict:
        """The parameters with defaults filled in and every value checked: ValueError naming the flag."""
        known = {p.name: p for p in cls.params}
        unknown = [name for name in given if name not in known]
        if unknown:
            from .registry import params  # every algorithm's, to name a known parameter by its flag

            shown = ", ".join(params()[n].flag if n in params() else repr(n) for n in unknown)
            raise ValueError(
                f"{shown} does not apply to {cls.name} "
                f"(it takes: {', '.join(p.flag for p in cls.params) or 'no parameters'})"
            )
        out = {}
        for p in cls.params:
            v = given.get(p.name)
            if v is None:
                out[p.name] = p.default
                continue
            try:
                v = p.type(v)
            except (TypeError, ValueError, OverflowError):
                raise ValueError(f"{cls.name}: {p.flag} must be {p.requirement}, got {v!r}") from None
            if p.type is int and not -(2**62) < v < 2**62:  # the compiled loops take it as an int64
                raise ValueError(f"{cls.name}: {p.flag} = {v} is out of range")
            if not p.check(v):
                raise ValueError(f"{cls.name}: {p.flag} must be {p.requirement}, got {v}")
            out[p.name] = v
        return out

    def describe(self) -> str:
        """The settings, as messages name them: `NAME --flag V ..., kernel KIND (...)`."""
        given = " ".join(
            f"{p.flag} {self.hyper[p.name]:g}"
            if isinstance(self.hyper[p.name], float)
            else f"{p.flag} {self.hyper[p.name]}"
            for p in self.params
        )
        return f"{self.name}{' ' + given if given else ''}, kernel {self.kernel.describe()}"

    @classmethod
    def check_kernel(cls, kernel_kind: str, params: dict) -> None:
        """Raise ValueError when the algorithm is not defined for this kind of kernel with these
        (resolved) parameters: checked whenever a learner is made, a loaded one included."""

    @classmethod
    def refuse_degenerate(cls, kernel_kind: str, params: dict) -> None:
        """Raise ValueError when these (resolved) parameters with this kind of kernel provably learn
        nothing on any data.  Checked for a new model before any data is read (spec.TrainSpec),
        never when a model is loaded: a saved model keeps loading."""

    def keep_evicted(self, hypothesis: str) -> None:
        """Keep what the hypothesis a run writes (spec.HYPOTHESES) needs of the vectors the learner evicts:
        nothing for the last one (an archive kept so far is dropped); every one for online-to-batch's
        averages (Model.averaged); for a running average, an archive of at most 2·`archive_keep` of them,
        compressed back to `archive_keep` when full (`compress_retired`).  One rule for every interface
        (pipeline.train, the River class)."""
        self.keep_retired = self.evicts and hypothesis in ("running-average", "average", "projected-average")
        self.archive_keep = archive_keep(self.hyper) if self.keep_retired and hypothesis == "running-average" else 0
        if not self.keep_retired:
            self.retired.clear()

    @classmethod
    def check_weights(cls) -> None:
        """ValueError, one line naming the algorithms that take them, when this one takes no weights."""
        if cls.weighting is None:
            from .registry import ALGORITHMS

            weighted = ", ".join(name for name, c in sorted(ALGORITHMS.items()) if c.weighting is not None)
            raise ValueError(f"{cls.name} takes no example or class weights (the algorithms that do: {weighted})")

    # ---- the contract ----------------------------------------------------------------------
    def learn(self, chunk, y: np.ndarray, weights: np.ndarray | None = None) -> None:
        """One online pass over the chunk's examples in order; y holds the encoded labels, `weights`
        each example's weight (finite and > 0; None: every one 1)."""
        weights = self._example_weights(weights, len(chunk))
        if self.stale:
            self._rebuild()
        y = self._labels(y, chunk.line_numbers)
        d = chunk.n_features  # a scan of the chunk's indices: once
        self.n_features = max(self.n_features, d)
        self._ensure_scratch(d)
        self.support.cover(d)
        start, n = 0, len(chunk)
        # every eviction removes a vector present at the start or added since: at most one per example
        # plus the current support set, a bound the compiled loops rely on (they do not bounds-check)
        need = self.new_slots_per_example * n + len(self.support) if self.evicts and self.keep_retired else 0
        sums = self._new_retire_log_sums(need)
        if self.retire_log.start.shape[0] < need or self.retire_log.coef_sum.shape[1:] != sums.shape[1:]:
            self.retire_log = RetireLog(np.zeros(need, np.int64), np.zeros(need, np.int64), sums, self.retire_log.count)
        rows = Rows(*chunk.csr, y, weights)
        while start < n:
            before = int(self.counters[EXAMPLES])
            try:
                start = self._learn_range(rows, start)
            except NonFiniteRound as exc:
                row = start + int(self.counters[EXAMPLES]) - before - exc.counted
                raise Overflow(row, int(chunk.line_numbers[row]), exc.reason) from None
            self._collect_retired()  # before `reserve` may compact the pool
            if self.archive_keep:
                self.compress_retired(self.archive_keep)
            if start < n:  # the next example may not fit: grow and go on
                nnz = self._pool_room(int(chunk.indptr[start + 1] - chunk.indptr[start]))
                try:
                    self._check_size(self.support.capacity_for(len(self.support) + self.new_slots_per_example))
                except TooLarge as exc:
                    raise Overflow(start, int(chunk.line_numbers[start]), str(exc)) from None
                self.support.reserve(len(self.support) + self.new_slots_per_example, nnz)
                self._resize(self.support.capacity)
                self._reserve_extra(nnz)

    def _example_weights(self, weights: np.ndarray | None, n: int) -> np.ndarray:
        """The weights as `Rows.weight` holds them (NO_WEIGHTS when every one is 1), checked: one per
        example, finite and > 0 (a weight 0 is left out before: pipeline.weighted_rows), and for an
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

    def _learn_range(self, rows: Rows, start: int) -> int:
        """Run the compiled loop from example `start`; return where it stopped (len = done)."""
        S, K, book, st, h = self.loop_args()
        return type(self).loop(S, K, rows, start, book, st, h)

    def loop_args(self) -> tuple:
        """(S, K, book, st, h): what the compiled loop and its pieces take besides the rows.

        Made again only when an array was replaced (grown, reloaded): a one-example `learn` (River's
        learn_one) would otherwise spend as long making them as learning.  The cached records keep
        the arrays they hold alive, so an array of the same id is the same array."""
        S, arrays = self.support.arrays, self._state_arrays()
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

    def _state_arrays(self) -> dict:
        """The arrays the loop gets as `st`, by name: the per-slot arrays, and what a subclass adds."""
        return self.slot

    def _labels(self, y: np.ndarray, lines: np.ndarray) -> np.ndarray:
        """The encoded labels as the loop takes them (`lines`: the examples' lines, for messages)."""
        return y

    def _new_retire_log_sums(self, rows: int) -> np.ndarray:
        """The retire log's summed coefficients: one number per evicted vector."""
        return np.zeros(rows)

    def _collect_retired(self) -> None:
        log = self.retire_log
        c = int(log.count[0])
        if c:
            a = self.support.arrays
            self.retired.append_pool(a.pool_idx, a.pool_val, log.start[:c], log.length[:c], log.coef_sum[:c])
            self.retired.evicted += c
        log.count[0] = 0

    def decision_function(self, chunk) -> np.ndarray:
        self._ensure_scratch(chunk.n_features)
        k = self.kernel.args()
        if fewscores.handles(k.code, len(chunk), len(self.support)):  # skips numba's ~1 s first-call cost
            return fewscores.binary_scores(
                self.support.arrays,
                k.code,
                k.gamma,
                self.slot["alpha"],
                *chunk.csr,
                self.scratch,
                k.offset,
            )
        out = np.empty(len(chunk), np.float64)
        binary_scores(
            self.support.arrays,
            k,
            self.slot["alpha"],
            self.slot["krow"],
            *chunk.csr,
            self.scratch,
            out,
        )
        return out

    def feature_map_weights(self) -> np.ndarray | None:
        """A feature-map learner's weights (`feature_map`); None for a support-set learner."""
        return None

    def learned_nothing(self) -> bool:
        """The hypothesis is f = 0: no support vector (a feature-map learner: every weight 0)."""
        weights = self.feature_map_weights()
        return len(self.support) == 0 if weights is None else not weights.any()

    def averaged_alpha(self) -> np.ndarray:
        """Coefficients of the averaged hypothesis (1/T) Σ_{t=1..T} f_t over the T rounds seen,
        on the current support set (online-to-batch conversion, Cesa-Bianchi, Conconi, Gentile 2004)."""
        n = len(self.support)
        T = self.counter("examples")
        s = self.slot
        return (s["avg_sum"][:n] + s["alpha"][:n] * (T + 1 - s["avg_stamp"][:n])) / max(T, 1)

    def averaged_coefficients(self) -> np.ndarray:
        """The averaged hypothesis's coefficients on the current support set (multiclass: n × m)."""
        return self.averaged_alpha()

    def set_coefficients(self, coef: np.ndarray) -> None:
        """Make `coef` the hypothesis's coefficients (of the first len(coef) slots): a batch or
        prediction model's."""
        self.slot["alpha"][: len(coef)] = coef

    def nonfinite(self) -> str | None:
        """The name of the first number of the hypothesis or its running average that is not finite
        (a setting overflowed), else None: O(|S|), cheap enough after every chunk.  The resume state
        (K⁻¹ and the like) is checked when the model is saved (Model.save checks all it writes)."""
        n = len(self.support)
        for name, a in self._decisive_arrays(n).items():
            if not np.isfinite(a).all():
                return name
        return None

    def _decisive_arrays(self, n: int) -> dict:
        """The arrays `nonfinite` checks: the running numbers and the per-slot vectors that are saved."""
        out = {"scalars": self.scalars}
        for name, kind in self.slot_arrays.items():
            if kind == "vector":
                out[name] = self.slot[name][:n]
        return out

    def _archive_classes(self) -> int | None:
        """The columns of the archive's summed coefficients in a model file: None (binary: one number)."""
        return None

    def retired_rows(self) -> tuple:
        """The evicted vectors kept in `retired`, as CSR rows (indptr, indices, values)."""
        return self.retired.rows()

    def retired_sums(self) -> np.ndarray:
        """Σ_t coefficient of each evicted vector over the rounds it was in the hypothesis (multiclass:
        classes × vectors, as `projection.onto_kept` takes them)."""
        return self.retired.sums().copy()

    def folded_sums(self) -> np.ndarray | None:
        """The running sums `folded_array` of the kept vectors with the archive's part folded in, as a
        model file of the running average holds them (model.Model.save), or None when there is nothing
        to fold (no evicted vector kept, or no vector kept to fold it onto: f = 0).  The learner itself
        is left as it is: writing a file never changes the run that goes on.

        Each evicted vector's summed coefficient is projected onto the span of the current support
        set (`projection.onto_kept`, as `Model.averaged(projected=True)` does) and added to the kept
        vectors' sums, so the file's average stays within the budget."""
        if not self.retired or not len(self.support):
            return None
        return self._sums_view() + onto_kept(self, self.retired_rows(), self.retired_sums()).T

    def _sums_view(self) -> np.ndarray:
        """The kept vectors' part of `folded_array` (a view)."""
        return self.slot["avg_sum"][: len(self.support)]

    def compress_retired(self, keep: int) -> None:
        """Bound the evicted vectors a running average keeps (constant memory on an endless stream): of
        the first 2·keep of them (in the order they were evicted, so that where a chunk was cut, by a
        curve's rows or a block's end, changes nothing), the `keep` whose summed coefficients weigh most
        (|Σ_t α| √k(x, x); a multiclass row's norm) stay, and the others' part is projected onto the
        span of those (`onto_kept`'s least squares, among the evicted vectors alone).  Projected among
        themselves, a part is moved once per compression, not again each time the online learner evicts
        the vector it was folded onto: on a9a.t (γ = 0.04),
        rbp B = 200 84.16% and forgetron B = 100 83.38% (the exact average, projected once at the end:
        84.23% and 83.52%), where folding onto the kept support every B evictions gave 83.40% and 79.61%."""
        archive = self.retired
        if len(archive) < 2 * keep:
            return
        # each compression takes the survivors of the last and the next `keep` evicted vectors: the
        # survivors are carried as arrays with their Gram matrix, the archive's rows read as slices,
        # and the rest moved once
        survivors = (*archive.rows(0, keep), archive.sums(0, keep).reshape(keep, -1))
        gram = archive.head_gram if archive.head_gram is not None and len(archive.head_gram) == keep else None
        end = keep
        while len(archive) - end >= keep:
            then = (*archive.rows(end, end + keep), archive.sums(end, end + keep))
            survivors, gram = self._compress(keep, survivors, then, gram)
            archive.compressions += 1
            end += keep
        indptr, indices, values, sums = survivors
        archive.replace_head(end, indptr, indices, values, sums.reshape(keep) if archive.sums().ndim == 1 else sums)
        archive.head_gram = gram

    def _compress(self, keep: int, first: tuple, then: tuple, first_gram: np.ndarray | None) -> tuple:
        """One compression (`compress_retired`) of the 2·keep rows `first` + `then`, each (indptr,
        indices, values, sums), `first_gram` the kernel matrix of `first` when known; returns the
        `keep` survivors in the same form, in their order, and their kernel matrix.

        A multiclass row holds a column per class the arrays had room for when it was logged, the columns
        past the classes known then zero: the columns past the last one any row of the 2·keep uses are
        left out of the arithmetic (and padded back by the archive), so that its bits depend on the rows
        alone, not on how far the arrays had grown (a resumed learner's are sized afresh).

        Most survivors survive again (87% for forgetron B = 300 on a9a, 97% for bpegasos B = 100), so
        the kernel values among them are taken from `first_gram`: k(x_t, sv_i) depends on the two
        vectors alone (kernel_row's sum runs over x_t's features in order), the same bits whichever
        set computes it."""
        indptr = np.concatenate([first[0], then[0][1:] + first[0][-1]])
        indices = np.concatenate([first[1], then[1]])
        values = np.concatenate([first[2], then[2]])
        a, b = first[3], then[3].reshape(len(then[0]) - 1, -1)
        sums = np.zeros((len(a) + len(b), max(a.shape[1], b.shape[1])))
        sums[: len(a), : a.shape[1]], sums[len(a) :, : b.shape[1]] = a, b
        used = np.flatnonzero(sums.any(axis=0))
        sums = sums[:, : used[-1] + 1 if len(used) else 1]
        head = len(indptr) - 1
        lengths = np.diff(indptr)
        sq = np.bincount(np.repeat(np.arange(head), lengths), weights=values * values, minlength=head)
        weight = np.linalg.norm(sums, axis=1) * np.sqrt(np.abs(self._self_kernels(sq)))
        kept = np.sort(np.argsort(-weight, kind="stable")[:keep])
        is_gone = np.ones(head, bool)
        is_gone[kept] = False
        gone = np.flatnonzero(is_gone)

        self._ensure_scratch(int(indices.max()) + 1 if len(indices) else 0)
        gram, cross = np.empty((keep, keep)), np.empty((len(gone), keep))
        known = NO_MATRIX if first_gram is None else first_gram
        compression_kernels(
            self.kernel.args(), indptr, indices, values, sq, kept, gone, known, keep, self.scratch, gram, cross
        )
        kept_gram = gram.copy()
        ridge = 1e-10 * max(float(np.trace(gram)) / keep, 1e-300)
        gram.flat[:: keep + 1] += ridge  # gram + ridge·I, without making I
        beta = np.linalg.solve(gram, cross.T @ sums[gone])
        survivors = gather_rows(indptr[kept], lengths[kept], indices, values)
        return (*survivors, sums[kept] + beta), kept_gram

    def _self_kernels(self, sq: np.ndarray) -> np.ndarray:
        """k(x, x) of vectors whose squared norms are `sq`."""
        k = self.kernel
        if k.kind == "rbf":
            return np.ones_like(sq)
        return (k.gamma * sq + k.coef0) ** k.degree if k.kind == "poly" else sq

    def kernel_matrix(self, indptr, indices, values) -> np.ndarray:
        """K[t, i] = k(x_t, sv_i) for CSR rows x_t against the current support set."""
        self._ensure_scratch(int(indices.max()) + 1 if len(indices) else 0)
        out = np.zeros((len(indptr) - 1, len(self.support)))
        kernel_matrix(self.support.arrays, self.kernel.args(), indptr, indices, values, self.scratch, out)
        return out

    def gram(self) -> np.ndarray:
        """K, the Gram matrix of the support set (the loops' own kernel arithmetic)."""
        return self.kernel_matrix(*self.support.to_csr())

    def counter(self, name: str) -> int:
        return int(self.counters[COUNTER_NAMES.index(name)])

    def state(self) -> tuple[dict, dict]:
        """(JSON header, arrays) holding everything to predict and to resume: support vectors, counters,
        random state, scalars and the saved per-slot arrays (subclasses add theirs).  A resume-state
        array still to be rebuilt (`stale`) is left out, as the file it was loaded from left it out."""
        n = len(self.support)
        indptr, idx, val = self.support.to_csr()
        arrays = {
            "sv_indptr": indptr,
            "sv_indices": idx,
            "sv_values": val,
            "counters": self.counters.copy(),
            "rng_state": self.rng_state.copy(),
            "scalars": self.scalars.copy(),
        }
        for name, kind in self.slot_arrays.items():
            if kind == "vector":
                arrays[name] = self.slot[name][:n].copy()
            elif kind == "square" and name not in self.stale:
                arrays[name] = self.slot[name][:n, :n].copy()
        if self.retired:  # the running average's archive of evicted vectors: resume state
            arrays |= self.retired.to_arrays(self._archive_classes())
        header = {
            "algorithm": self.name,
            "params": dict(self.hyper),
            "kernel": self.kernel.to_dict(),
            "seed": self.seed,
            "n_features": self.n_features,
            "file_indices": True,  # sv_indices are the data file's (format before: the file's − 1; model.load)
            "counters": {c: int(v) for c, v in zip(COUNTER_NAMES, self.counters)},
        }
        return header, arrays

    @classmethod
    def saved_arrays(cls, header: dict, members: dict) -> dict:
        """name -> (shape, dtype) of every array `state()` saves, in terms of the sizes a file declares
        (n: the support size, from sv_indptr's length); None in a shape: any size.  For model files
        from anybody (statecheck.py); subclasses that save more extend it."""
        n = statecheck.vector_length(members, "sv_indptr") - 1
        nnz = statecheck.vector_length(members, "sv_indices")
        out = {
            "sv_indptr": ((n + 1,), statecheck.I64),
            "sv_indices": ((nnz,), statecheck.I32),
            "sv_values": ((nnz,), statecheck.F64),
            "counters": ((None,), statecheck.I64),  # older layouts had fewer
            "rng_state": (seed_state(0).shape, statecheck.U64),
            "scalars": ((cls.n_scalars,), statecheck.F64),
        }
        for name, kind in (cls.slot_arrays | cls.superseded).items():
            if kind != "work":
                out[name] = ((n,) if kind == "vector" else (n, n), statecheck.F64)
        if cls.evicts and "retired_indptr" in members:  # a running average's archive (resume state)
            r = statecheck.vector_length(members, "retired_indptr") - 1
            nnz = statecheck.vector_length(members, "retired_indices")
            out["retired_indptr"] = ((r + 1,), statecheck.I64)
            out["retired_indices"] = ((nnz,), statecheck.I32)
            out["retired_values"] = ((nnz,), statecheck.F64)
            out["retired_sums"] = ((r,), statecheck.F64)  # multiclass: a column per class
            out["retired_counts"] = ((2,), statecheck.I64)
            if "avg_sum" in out and cls.folded_array == "avg_sum":
                out["unfolded_avg_sum"] = out["avg_sum"]  # the sums before the archive's fold (model.Model.save)
        return out

    @classmethod
    def check_saved(cls, header: dict, arrays: dict) -> None:
        """ValueError naming the field when a saved state (header with the model's hypothesis, and
        arrays) is one the compiled loops must not see: see statecheck.py."""
        statecheck.check_common(header, arrays, COUNTER_NAMES)
        statecheck.check_archive(header, arrays, archive_keep(header["params"]), "unfolded_" + cls.folded_array)

    @classmethod
    def from_state(cls, header: dict, arrays: dict) -> "KernelLearner":
        """The inverse of `state` (subclasses restore what they add after calling it)."""
        params = {cls.renamed.get(k, k): v for k, v in header["params"].items()}
        self = cls(Kernel.from_dict(header["kernel"]), seed=header["seed"], **params)
        self.support = SupportSet.from_csr(arrays["sv_indptr"], arrays["sv_indices"], arrays["sv_values"], dense=True)
        n = len(self.support)
        saved = arrays["counters"]
        if saved.shape[0] > self.counters.shape[0]:
            raise ValueError(f"the model has {saved.shape[0]} counters, this build knows {self.counters.shape[0]}")
        self.counters[: saved.shape[0]] = saved  # counters a later build added start at 0
        self.rng_state[:] = arrays["rng_state"]
        self.scalars[:] = arrays["scalars"]
        self.slot = {name: self._new_slot_array(kind, self.support.capacity) for name, kind in self.slot_arrays.items()}
        for name, kind in self.slot_arrays.items():
            if kind == "work":
                continue
            if name not in arrays and name in self.rebuilt:
                self.stale.add(name)
            elif name not in arrays and name in self.layout_defaults:
                self.slot[name][(slice(0, n),) * (2 if kind == "square" else 1)] = self.layout_defaults[name]
            elif kind == "vector":
                self.slot[name][:n] = arrays[name]
            else:
                self.slot[name][:n, :n] = arrays[name]
        self.n_features = int(header["n_features"])
        self._ensure_scratch(self.n_features)
        # every feature seen in training, not only the kept vectors': an averaged model stores evicted
        # vectors back (Model.averaged), and a resumed run may re-add them
        self.support.cover(self.n_features)
        if "retired_indptr" in arrays:
            self.retired.restore(arrays)
        return self

    @classmethod
    def resume_arrays(cls, header: dict) -> set[str]:
        """The arrays of a model file that only resuming needs: its resume state (the kept matrices, and a
        running average's archive of evicted vectors with the sums before it was folded in)."""
        archive = {*ARCHIVE_ARRAYS, "unfolded_" + cls.folded_array} if cls.evicts else set()
        return set(cls.rebuilt) | archive

    def portable_state(self) -> tuple[dict, dict]:
        """`state()` without the resume state (Gram matrices and inverses, O(|S|²)): what a compact model
        file holds and what a mix sends; a learner made from it rebuilds the rest before it learns."""
        header, arrays = self.state()
        for name in self.resume_arrays(header):
            arrays.pop(name, None)
        return header, arrays

    def rebuild_stale(self) -> None:
        """Make the resume state a compact model file did not hold now (`rebuilt`; once, O(|S|³))."""
        if self.stale:
            self._rebuild()

    def make_room(self, slots: int, nnz: int) -> None:
        """Room for `slots` support vectors in all and `nnz` more pool entries, in every per-slot array."""
        self.support.reserve(slots, nnz)
        self._resize(self.support.capacity)

    def _rebuild(self) -> None:
        """Make the resume state the model file did not hold, from the support set (once, O(|S|³))."""
        for name in sorted(self.stale):
            self.rebuilt[name](self, name)
        self.stale.clear()  # a resumed run's summary says so (model.Model.resume_note)

    # ---- for subclasses ----------------------------------------------------------------------
    def _pool_room(self, nnz: int) -> int:
        """Pool entries one example of `nnz` non-zeros may need (merging needs more)."""
        return nnz

    def _check_size(self, capacity: int) -> None:
        """TooLarge when the learner's arrays must not grow to `capacity` slots (a multiclass model's)."""

    def _reserve_extra(self, nnz: int) -> None:
        """Room for one more example of `nnz` non-zeros in stores a learner keeps besides the support set."""

    def _resize(self, capacity: int) -> None:
        for name, kind in self.slot_arrays.items():
            old = self.slot[name]
            if old.shape[0] >= capacity:
                continue
            new = self._new_slot_array(kind, capacity)
            if kind == "square":
                new[: old.shape[0], : old.shape[1]] = old
            else:
                new[: old.shape[0]] = old
            self.slot[name] = new

    @staticmethod
    def _new_slot_array(kind: str, capacity: int) -> np.ndarray:
        shape = (capacity, capacity) if kind == "square" else (capacity,)
        return np.zeros(shape, np.float64)

    def _ensure_scratch(self, n_features: int) -> None:
        if n_features > self.scratch.shape[0]:
            self.scratch = np.zeros(max(n_features, 2 * self.scratch.shape[0]), np.float64)


# ---- compiled pieces every loop uses -------------------------------------------------------------

# The loops take the records whole, but read the arrays they use out of them once, before their
# per-example loop, and hand these to the helpers below: an array read out of a record inside the
# loop costs a reference-count update at every example (~10% of RBP's time on a9a, bench/loops.py).


@njit(cache=True, inline="always")
def loop_arrays(rows, book):
    """What every loop reads out of its records first: indptr, indices, values, y, scratch, counters."""
    return rows.indptr, rows.indices, rows.values, rows.y, book.scratch, book.counters


@njit(cache=True, inline="always")
def example_weight(weights, t):
    """The weight of example t of a chunk whose weights are `weights` (Rows.weight): 1 when it has none."""
    return 1.0 if weights.shape[0] == 0 else weights[t]


@njit(cache=True, inline="always")
def example(indptr, indices, values, t):
    """x_t of a chunk as its sparse (indices, values)."""
    lo, hi = indptr[t], indptr[t + 1]
    return indices[lo:hi], values[lo:hi]


@njit(cache=True, inline="always")
def open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow):
    """The opening of a binary round, counted: x_t, y_t, f(x_t), ‖x_t‖², the support size and the
    round's number (1-based, across --resume); krow is left holding k(x_t, sv_i).  The caller has
    checked that x_t fits (`sv_fits(S, indptr[t + 1] - indptr[t])`)."""
    idx, val = example(indptr, indices, values, t)
    f, sq = score_example(S, K, alpha, krow, scratch, idx, val)
    if not math.isfinite(sq):  # checked here, where every loop passes, before the round counts
        raise ExampleOverflow
    if not math.isfinite(f):
        raise ScoreOverflow
    counters[EXAMPLES] += 1
    return idx, val, y[t], f, sq, S.meta[COUNT], counters[EXAMPLES]


@njit(cache=True, inline="always")
def victim(policy, rng_state, budget, additions):
    """The slot to evict when the budget is full and the learner has added `additions` support vectors
    so far: a uniformly random one (the model's splitmix64 stream), or the oldest.  The oldest is
    slot additions mod B when every newcomer takes the evicted vector's slot."""
    if policy == RANDOM:
        return randbelow(rng_state, budget)
    return additions % budget


@njit(cache=True, inline="always")
def hinge_round(counters, margin):
    """Count a round of a learner on the hinge loss by its margin y f(x): a mistake at y f ≤ 0, a margin
    update at 0 < y f < 1.  True when the loss is positive, y f < 1 (strict: the subgradient at the kink
    is taken as 0, as LIBOKL's hinge loss takes it)."""
    if margin <= 0.0:
        counters[MISTAKES] += 1
    elif margin < 1.0:
        counters[MARGIN_UPDATES] += 1
    return margin < 1.0


@njit(cache=True, inline="always")
def touch(alpha, avg_sum, avg_stamp, i, t):
    """Call before alpha[i] changes in round t (1-based, counters[EXAMPLES] after the increment).

    alpha[i] held its value in f_stamp .. f_{t−1}; fold those rounds into the running sum.  So the
    average costs O(1) per coefficient change, never a pass over past hypotheses."""
    avg_sum[i] += alpha[i] * (t - avg_stamp[i])
    avg_stamp[i] = t


@njit(cache=True, inline="always")
def retire(S, book, alpha, avg_sum, avg_stamp, i, t):
    """Call before the vector in slot i is evicted in round t: it was in f_stamp .. f_{t−1}."""
    if book.keep_retired:
        touch(alpha, avg_sum, avg_stamp, i, t)
        log = book.log
        k = log.count[0]
        log.start[k] = S.start[i]
        log.length[k] = S.length[i]
        log.coef_sum[k] = avg_sum[i]
        log.count[0] = k + 1


@njit(cache=True)
def evict_from_inverse(ainv, alpha, avg_sum, avg_stamp, n, r, rnd):
    """Take slot r out of an inverse Gram matrix H (n × n) and its expansion: every other coefficient
    takes r's projection onto the rest, α_i −= α_r H_ir / H_rr, and H loses r by the rank-one Schur
    downdate; row and column r of H are left zero (so a later d = H k has d[r] = 0).  The second-order
    Perceptron's eviction (w = A⁻¹y) and BPA-P's removal."""
    wr = alpha[r] / ainv[r, r]
    for i in range(n):
        if i != r:
            touch(alpha, avg_sum, avg_stamp, i, rnd)
            alpha[i] -= ainv[i, r] * wr
    schur_downdate(ainv, n, r)
    for i in range(n):
        ainv[i, r] = 0.0
        ainv[r, i] = 0.0


@njit(cache=True, inline="always")
def new_coefficient(alpha, avg_sum, avg_stamp, i, value, t):
    """Slot i gets a new support vector with coefficient `value` in round t."""
    alpha[i] = value
    avg_sum[i] = 0.0
    avg_stamp[i] = t


@njit(cache=True, inline="always")
def score_example(S, K, alpha, krow, scratch, idx, val):
    """(f(x), ‖x‖²) for one sparse example, f(x) = Σ_i alpha_i k(x, sv_i); krow is left holding
    k(x, sv_i), which the learners reuse for their updates."""
    sq = sparse_sqnorm(val)
    kernel_row(S, K, scratch, idx, val, sq, krow)
    f = 0.0
    for i in range(S.meta[COUNT]):
        f += alpha[i] * krow[i]
    if K.offset != 0.0:  # an imported LIBSVM model's bias (kernels.Kernel.offset)
        f += K.offset
    return f, sq


@njit(cache=True)
def kernel_matrix(S, K, indptr, indices, values, scratch, out):
    """out[t, i] = k(x_t, sv_i) for the rows of a CSR block against the live support vectors."""
    for t in range(indptr.shape[0] - 1):
        idx = indices[indptr[t] : indptr[t + 1]]
        val = values[indptr[t] : indptr[t + 1]]
        kernel_row(S, K, scratch, idx, val, sparse_sqnorm(val), out[t])


@njit(cache=True)
def compression_kernels(K, indptr, indices, values, sq, kept, gone, known, keep, scratch, gram, cross):
    """gram[a, b] = k(x_kept[a], x_kept[b]) and cross[g, b] = k(x_gone[g], x_kept[b]) for the rows of a
    compression's CSR block (`KernelLearner._compress`), sq their squared norms, `scratch` a zeroed
    work vector as wide as the block's features; between two of the first `keep` rows the value is read
    from `known` when it has rows (their kernel matrix).

    Each computed value is `kernel_row`'s: the dot product summed over the row's features in order (a
    feature the column lacks adds a zero), then `kernel_from_dot(K, dot, ‖row‖², ‖column‖²)` (a row at
    a time through `kernel_values`: the same bits); so a value is the same bits whichever compression
    computed it.  The survivors are copied dense (feature
    × survivor, as the support set keeps them) while that copy stays within DENSE_LIMIT entries, and a
    row's dot products are kernel_row's sweep (`dense_dots`); wider data scatters each survivor in turn."""
    head, n = indptr.shape[0] - 1, kept.shape[0]
    reuse = known.shape[0] > 0
    place = np.empty(head, np.int64)  # a row's row of gram (≥ 0), or of cross (−1 − its row)
    for b in range(n):
        place[kept[b]] = b
    for g in range(gone.shape[0]):
        place[gone[g]] = -1 - g
    if scratch.shape[0] * n > DENSE_LIMIT:
        for b in range(n):
            c = kept[b]
            scatter(scratch, indices[indptr[c] : indptr[c + 1]], values[indptr[c] : indptr[c + 1]])
            for r in range(head):
                if reuse and r < keep and c < keep:
                    value = known[r, c]
                else:
                    dot = 0.0
                    for j in range(indptr[r], indptr[r + 1]):
                        dot += values[j] * scratch[indices[j]]
                    value = kernel_from_dot(K, dot, sq[r], sq[c])
                if place[r] >= 0:
                    gram[place[r], b] = value
                else:
                    cross[-1 - place[r], b] = value
            unscatter(scratch, indices[indptr[c] : indptr[c + 1]])
        return
    dense = np.zeros((scratch.shape[0], n))
    for b in range(n):
        for j in range(indptr[kept[b]], indptr[kept[b] + 1]):
            dense[indices[j], b] = values[j]
    kept_sq = np.empty(n)
    for b in range(n):
        kept_sq[b] = sq[kept[b]]
    for r in range(head):
        target = gram[place[r]] if place[r] >= 0 else cross[-1 - place[r]]
        if reuse and r < keep:  # the survivors carried over are known; the new ones are few
            for b in range(n):
                c = kept[b]
                if c < keep:
                    target[b] = known[r, c]
                else:
                    dot = 0.0
                    for j in range(indptr[r], indptr[r + 1]):
                        dot += values[j] * dense[indices[j], b]
                    target[b] = kernel_from_dot(K, dot, sq[r], sq[c])
        else:
            dense_dots(dense, indices[indptr[r] : indptr[r + 1]], values[indptr[r] : indptr[r + 1]], n, target)
            kernel_values(K, target, n, sq[r], kept_sq)


@njit(cache=True)
def binary_scores(S, K, alpha, krow, indptr, indices, values, scratch, out):
    """out[t] = Σ_i alpha_i k(x_t, sv_i) for every example of a chunk."""
    for t in range(indptr.shape[0] - 1):
        idx = indices[indptr[t] : indptr[t + 1]]
        val = values[indptr[t] : indptr[t + 1]]
        out[t] = score_example(S, K, alpha, krow, scratch, idx, val)[0]
