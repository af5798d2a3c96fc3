"""A learning session: one model that learns chunk after chunk for as long as its caller feeds it.

Every loop that learns is a loop over a session: `pipeline.train` (the `train` and `online-to-batch`
commands, `tune`'s runs, cross-validation, the Python API, the scikit-learn class), a shard of a
sharded run (distributed/shard.py) and the River class, one example or one frame at a time.  The
session holds the model (learner, label map, scaling, hypothesis) and the run's spec, and offers:

    Session(spec, model=None, watch=None, scaling=None)   a new model (made from the first chunk) or this one
    Session.resumed(spec, model, watch)       a model that goes on as one run would (`train --resume`)
    begin(chunk, features=None)               make the new model from a first chunk (`learn` does it)
    learn(chunk, source, targets=None)        one online pass over a chunk, in order (each example weighed
                                              by its class's weight times its own, chunk.weights)
    learn_progressive(chunk, source)          the same, answering each example's prediction made
                                              before it is learned (progressive validation)
    score(chunk)                              the model's scores, with the hypothesis it predicts with
    checkpoint()                              the model as the spec writes it (the learner goes on unchanged)
    examples, mistakes                        this session's counts (the learner's counters: the model's)

A pass over a chunk equals the passes over its pieces (what makes `--resume` exact), so how a caller
cuts its stream into chunks changes nothing in the model: a server may feed one line or a batch at a
time.  The session itself cuts a chunk where its watch asks (`Watch`: a checkpoint every N examples,
a curve row every k, a progress row at 1, 2, 4, ...), so that each of these happens at an exact count.

What depends on the task (the targets, the default algorithm, what a run counts and warns of) is the
session's `task` (learning/task), never a branch here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..base.core import DataError
from ..numerics.kernels import Kernel
from ..learning.records import Overflow
from ..model.model import Model
from ..model.spec import TrainSpec
from ..learning import task as task_


FIRST_BLOCK = "first block"  # a new model's scaling: the ranges of its first block (`train --scale` on a stream)


class TrainingStopped(DataError):
    """Learning stopped at an example whose numbers are not finite (or after a chunk that left the
    model's numbers so): a DataError naming the line, with the example's `row` in the chunk given to
    `learn` (its length when found after the chunk: every row was learnt) and the reason alone (`why`).
    The rows before `row` were learnt; the model should not be saved (Model.save refuses it)."""

    def __init__(self, source, line: int, reason: str, row: int, why: str):
        super().__init__(source, line, None, reason)
        self.row, self.why = row, why

    def __reduce__(self):
        return (type(self), (self.source, self.line, self.reason, self.row, self.why))


@dataclass
class Watch:
    """What a run reports as it goes; none of it changes the model."""

    progress: object = None  # a progress.Progress: a row at 1, 2, 4, ... examples of this run
    curve: object = None  # a curve.LearningCurve: a row each time the example count reaches a multiple of its k
    on_checkpoint: Callable[[Model], None] | None = None  # the model as the spec writes it, every checkpoint_every
    on_chunk: Callable[[Model], None] | None = None  # after every chunk learnt


@dataclass
class Session:
    spec: TrainSpec
    model: Model | None = None  # None: made from the first chunk (`begin`)
    watch: Watch = field(default_factory=Watch)
    scaling: object = None  # the scaling a new model applies: a scaling.Scaling, or FIRST_BLOCK

    task: object = None  # the model's (learning/task), else the spec's (`--task`; None: classification)
    warnings: list = field(default_factory=list)  # what going on changed in the model (its probabilities dropped)
    _started: tuple | None = field(default=None, init=False, repr=False)  # (examples, mistakes) at the first learn
    _stops: list = field(default_factory=list, init=False, repr=False)

    @classmethod
    def resumed(cls, spec: TrainSpec, model: Model, watch: Watch | None = None) -> "Session":
        """A session that goes on from `model` exactly where it stopped (`spec.resuming(model)`: its
        algorithm, kernel, parameters, label map, counters and random state); NotResumable when it cannot.
        The learner's notes say what the resume rebuilds and whether it is exact (Model.resume_note)."""
        spec = spec.resuming(model)
        model.sharding = None  # a sharded run's reading positions do not hold for one input
        note = model.resume_note(spec.written)
        if note is not None:
            model.learner.notes.append(note)
        return cls(spec, model, watch or Watch())

    def __post_init__(self):
        if self.watch is None:
            self.watch = Watch()
        if self.task is None:
            self.task = self.model.task if self.model is not None else task_.named(self.spec.task)

    # ---- learning ---------------------------------------------------------------------------
    def begin(self, chunk, features: int | None = None) -> Model:
        """The new model a first chunk decides: the task's algorithm when the spec names none, γ's default
        1/k (k: `features`, else the chunk's feature count, or the features a scaling keeps), the scaling's
        ranges when they are the first block's, an empty label map.  Its hypothesis is the one the spec
        writes, as the scores it gives (`score`) are."""
        from ..model import scaling as scaling_

        self.spec = self.task.choose(self.spec, chunk)
        cls = self.spec.learner_class
        if self.scaling is FIRST_BLOCK:
            self.scaling = scaling_.of_first_block(chunk, self.spec.kernel.kind)
        if features is None:  # with a scaling, γ = 1/k counts the features it keeps (LIBSVM's on svm-scale'd data)
            features = chunk.feature_count if self.scaling is None else self.scaling.ranges.feature_count
        learner = cls(Kernel.of(self.spec.kernel, features), seed=self.spec.seed, **self.spec.params)
        hypothesis = "running-average" if self.spec.written == "running-average" else "online"
        self.model = Model(
            learner,
            self.task.label_map(cls),
            hypothesis,
            scaling=self.scaling,
            class_weight=dict(self.spec.class_weight),
        )
        if self.scaling is not None:
            learner.notes.append(self.scaling.describe())
        return self.model

    def learn(self, chunk, source: str = "data", targets: np.ndarray | None = None) -> None:
        """One online pass over the chunk's examples in order (the model made from it first when there is
        none).  `targets`: the learner's codes of its labels, given by an edge that keeps its own label map
        (River's); by default the task encodes the chunk's labels, and a label the model cannot take is a
        DataError naming its line, raised after the rows before it were learnt.  TrainingStopped when the
        numbers stop being finite."""
        self._learn(chunk, source, targets, None)

    def learn_progressive(self, chunk, source: str = "data") -> np.ndarray:
        """`learn`, answering the scores each example got from the online hypothesis right before it
        was learnt (progressive validation: the predictions the online mistakes count), as a vector (binary)
        or a matrix of class scores (−inf for a class that came later in the chunk), as the compiled loop
        gives them (contract.Learner.learn).  A DataError (a label the model refuses, TrainingStopped)
        carries the answers of the rows learnt before it as `answered`."""
        if self.model is None:
            self.begin(chunk)
        if not len(chunk):
            return self.score(chunk)
        answers: list = []
        try:
            self._learn(chunk, source, None, answers)
        except DataError as exc:  # a refused label, or TrainingStopped: the rows before are learnt
            exc.answered = _stacked(answers)  # their answers (a server answers them still)
            raise
        return _stacked(answers)

    def _learn(self, chunk, source: str, targets, answers: list | None) -> None:
        """`learn`, appending each piece's answers to `answers` when it is a list (`learn_progressive`)."""
        if self.model is None:
            self.begin(chunk)
        if self._started is None:
            self._start()
        model = self.model
        if model.scaling is not None:
            chunk = model.scaling.apply(chunk)
        if targets is None:
            try:
                targets = self.task.encode(model, chunk, source)
            except DataError as exc:  # the rows before the refused label's line are learnt first
                good = chunk.take(np.flatnonzero(chunk.line_numbers < exc.line))
                if len(good):
                    self._learn_in_pieces(good, self.task.encode(model, good, source), source, answers)
                raise
        self._learn_in_pieces(chunk, targets, source, answers)
        if self.watch.on_chunk is not None:
            self.watch.on_chunk(model)

    def _start(self) -> None:
        """What the first chunk a session learns starts: the run keeps all its own continuation needs (a
        running average's evicted vectors, by the hypothesis it writes), a resumed model's probabilities
        are dropped (fitted to scores that change now), and the watch's cuts count from here."""
        model, learner = self.model, self.model.learner
        self._started = (learner.counter("examples"), learner.counter("mistakes"))
        model.evicted_folded = 0
        if model.calibration is not None:
            model.calibration = None
            self.warnings.append(
                "the model's probabilities were fitted to its former scores and are dropped; calibrate it again"
            )
        learner.keep_evicted(self.spec.written)
        learner.threads = self.spec.threads
        self._stops = self._watch_stops()

    def _watch_stops(self) -> list:
        """The rules that cut a chunk: the curve's rows, the checkpoints, the progress rows."""
        watch, spec, origin = self.watch, self.spec, self._started[0]
        stops = []
        if watch.curve is not None:
            stops.append(Every(watch.curve.every, lambda m: watch.curve.row(m.learner)))
        if spec.checkpoint_every:
            stops.append(Every(spec.checkpoint_every, lambda m: watch.on_checkpoint(self.checkpoint()), origin))
        if watch.progress is not None:
            watch.progress.start(self.model.learner)
            stops.append(Doubling(watch.progress.row, origin))
        return stops

    def _learn_in_pieces(self, chunk, y, source: str, answers: list | None = None) -> None:
        """`_learn_block` of the chunk, cut where a rule of the watch fires, running its action there."""
        learner, pos, n, stops = self.model.learner, 0, len(chunk), self._stops
        while pos < n:
            t = learner.counter("examples")
            stop = min([n] + [pos + s.next_stop(t) - t for s in stops])
            piece = chunk if (pos, stop) == (0, n) else chunk.take(np.arange(pos, stop))
            self._learn_block(piece, y[pos:stop], source, pos, answers)
            pos = stop
            t = learner.counter("examples")
            for s in stops:
                if s.due(t):
                    s.action(self.model)

    def _learn_block(self, chunk, y, source: str, offset: int = 0, answers: list | None = None) -> None:
        """learner.learn(chunk, y) with the examples' weights (the task's: class weights times the chunk's
        sample weights), stopped (TrainingStopped) when the numbers stop being finite: at the
        example whose ‖x‖² or score overflows (the compiled loops check every round), or at the chunk after
        which a coefficient, a running sum or a running number is no longer finite (checked after every
        chunk: O(|S|)).  `offset`: the chunk's first row in the one given to `learn`; `answers`: a list
        the answers of the rows learnt are appended to (`learn_progressive`), or None."""
        model, learner = self.model, self.model.learner
        model.learned_from(chunk)
        try:
            given = learner.learn(chunk, y, self.task.weights(model, chunk), answers=answers is not None)
            if answers is not None:
                answers.append(given)
        except Overflow as exc:
            if answers is not None and exc.answered is not None:
                answers.append(exc.answered)
            raise TrainingStopped(
                source,
                exc.line,
                f"training stopped: {exc.reason} ({learner.describe()}); nothing written",
                offset + exc.row,
                exc.reason,
            ) from None
        bad = learner.nonfinite()
        if bad is not None:
            first, last = int(chunk.line_numbers[0]), int(chunk.line_numbers[-1])
            lines = f"line {first}" if first == last else f"lines {first}–{last}"
            why = f"the model's {bad} stopped being finite numbers while it learned {lines}"
            raise TrainingStopped(
                source,
                first,
                f"training stopped: {why} ({learner.describe()}): these settings overflow; nothing written",
                offset + len(chunk),
                why,
            )

    # ---- what it has learnt -----------------------------------------------------------------
    def score(self, chunk) -> np.ndarray:
        """The model's scores of a chunk (scaled as the model scales), with the hypothesis it predicts
        with: f(x), or the n × m class scores."""
        return self.model.scorer().decision_function(chunk)

    def checkpoint(self) -> Model:
        """The model as the spec writes it (Model.as_written): the online learner, its running average,
        or a batch average; the learner that goes on is never changed."""
        return self.model.as_written(self.spec.written, self.spec.to_dict())

    @property
    def examples(self) -> int:
        """Examples the model has learnt (a resumed model's before this session included)."""
        return 0 if self.model is None else self.model.learner.counter("examples")

    @property
    def learnt(self) -> int:
        """Examples this session has learnt."""
        return 0 if self._started is None else self.examples - self._started[0]

    @property
    def mistakes(self) -> int:
        """Online mistakes this session made."""
        return 0 if self._started is None else self.model.learner.counter("mistakes") - self._started[1]


def _stacked(scores: list) -> np.ndarray:
    """One example's scores after another as a vector, or as a matrix of class scores whose rows made
    before a class was added hold −inf for it (it could not be predicted then)."""
    if not scores:
        return np.zeros(0)
    if scores[0].ndim == 1:
        return np.concatenate(scores)
    m = max(f.shape[1] for f in scores)
    return np.vstack([np.pad(f, ((0, 0), (0, m - f.shape[1])), constant_values=-np.inf) for f in scores])


@dataclass
class Every:
    """Call `action(model)` each time the model's example count minus `origin` is a multiple of `every`."""

    every: int
    action: Callable[[Model], None]
    origin: int = 0

    def next_stop(self, t: int) -> int:
        return t + self.every - (t - self.origin) % self.every

    def due(self, t: int) -> bool:
        return (t - self.origin) % self.every == 0


@dataclass
class Doubling:
    """Call `action(model)` each time the model's example count minus `origin` reaches 1, 2, 4, 8, ..."""

    action: Callable[[Model], None]
    origin: int = 0

    def next_stop(self, t: int) -> int:
        return self.origin + (1 << (t - self.origin).bit_length())

    def due(self, t: int) -> bool:
        r = t - self.origin
        return r > 0 and r & (r - 1) == 0
