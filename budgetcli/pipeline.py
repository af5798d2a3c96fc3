"""Reader → labels → learner, without any printing: the stages the CLI commands wire together."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from . import bounds, scaling as scaling_
from .core import Chunk, DataError, unique
from .io.libsvm import LibsvmReader, concatenate
from .kernels import Kernel
from .labels import BinaryLabels, MulticlassLabels
from .metrics import constant_warning, one_label_warning
from .learner import Overflow, kernel_matrix
from .model import Model
from .spec import AVERAGES, TrainSpec
from .support import SupportSet


class Arrays:
    """The reader's part for rows given as arrays (api.train): their name in messages, `X:ROW`."""

    source_name, n_skipped, skipped = "X", 0, ()


@dataclass
class Watch:
    """What a run reports as it goes; none of it changes the model."""

    progress: object = None  # a progress.Progress: a row at 1, 2, 4, ... examples of this run
    curve: object = None  # a curve.LearningCurve: a row each time the example count reaches a multiple of its k
    on_checkpoint: Callable[[Model], None] | None = None  # the model as the spec writes it, every checkpoint_every
    on_chunk: Callable[[Model], None] | None = None  # after every block


@dataclass
class TrainResult:
    model: Model
    seconds: float
    source: str
    n_skipped: int = 0
    skipped: list = field(default_factory=list)
    warnings: list = field(default_factory=list)  # kernel_warnings of the first block, then support_warnings
    traffic: dict = field(default_factory=dict)  # a sharded run's: synchronisations, bytes_out, bytes_in
    online: Model | None = None  # the online learner the written `model` comes from (itself, unless a batch average)
    spec: TrainSpec | None = None  # the run's spec, its algorithm chosen (TrainSpec.choosing) when it was not given
    examples: int | None = None  # examples this run learned (0: a resumed model over data without examples)


def epochs_of(
    data,
    epochs: int = 1,
    shuffle: bool = False,
    seed: int = 0,
    skip_bad_lines: bool = False,
    block_lines: int = 4096,
    first_block_whole: bool = True,
) -> Iterator[tuple[object, LibsvmReader, float | None]]:
    """(chunk, reader, done) for `epochs` passes over `data`; `done` is the share of the whole run's
    input read once the chunk is through, or None when the input's size is unknown (stdin, a pipe,
    a compressed file).

    Without shuffling a file is streamed again for each pass (memory stays one chunk); stdin, a pipe
    or a FIFO, which cannot be read twice (scaling.two_passes), and --shuffle keep the data in
    memory, as a Chunk given as `data` (the Python API's arrays) is.  With `shuffle`, pass e
    (0-based) is permuted by numpy's generator seeded with (seed, e).

    A chunk read holds fewer than `block_lines` examples when the input pauses, ends, fails or is
    interrupted (LibsvmReader), the first one only when `first_block_whole` is false."""
    in_memory = shuffle or isinstance(data, Chunk) or (epochs > 1 and not scaling_.two_passes(data))
    if not in_memory:
        for e in range(epochs):
            with LibsvmReader(
                data, block_lines=block_lines, skip_bad_lines=skip_bad_lines, first_block_whole=first_block_whole
            ) as reader:
                for chunk in reader:
                    share = reader.share_read()
                    yield chunk, reader, None if share is None else (e + share) / epochs
        return
    if isinstance(data, Chunk):
        everything, reader = data, Arrays()
    else:
        with LibsvmReader(data, block_lines=block_lines, skip_bad_lines=skip_bad_lines) as reader:
            chunks = list(reader)
        if not chunks:
            return
        everything = concatenate(chunks)
    for e in range(epochs):
        order = np.arange(len(everything))
        if shuffle:
            order = np.random.default_rng((seed, e)).permutation(len(everything))
        for a in range(0, len(order), block_lines):
            stop = min(a + block_lines, len(order))
            yield everything.take(order[a:stop]), reader, (e * len(order) + stop) / (epochs * len(order))


def train(spec: TrainSpec, data, resume: Model | None = None, watch: Watch | None = None) -> TrainResult:
    """The model `spec` makes from `data` (a path, '-' or an iterable of lines with a `name`), one
    process (a sharded spec: distributed.train), in the hypothesis the spec names.  Raises DataError
    on bad input; the model is not saved.

    With `resume`, that model goes on learning exactly where it stopped (`spec.resuming(resume)`: its
    algorithm, kernel, parameters, label map, counters and random state).

    `watch.curve` logs a row each time the model's example count reaches a multiple of its k; with
    `spec.checkpoint_every` N, `watch.on_checkpoint(model)` is called each time exactly k·N examples
    of this run have been learned, so a checkpoint holds a whole number of N-example steps, whatever
    the chunk size; `watch.progress` gets a row at 1, 2, 4, ... examples of this run.  For all three a
    chunk is cut where the count is reached (see `_learn_in_pieces`).

    Data without examples (an empty file, comments only) is a DataError for a new model; a resumed
    model goes on over it unchanged (an empty day in a cron job is no error: `TrainResult.examples`
    is then 0, and the model keeps even its probabilities)."""
    watch = watch or Watch()
    calibration_dropped = []
    if resume is not None:
        spec = spec.resuming(resume)
        resume.sharding = None  # a sharded run's reading positions do not hold for one input
        note = resume.resume_note(spec.written)
        if note is not None:
            resume.learner.notes.append(note)
    started = time.perf_counter()
    model = resume
    reader = None
    stops = None  # the Every rules of --curve and --checkpoint-every, set once the model exists
    warnings = None
    kept = Reservoir(OUTCOME_SAMPLE)  # a sample of this run's examples, on which the written model is checked
    seen = Counts()  # this run's labels
    weightless = 0  # examples of weight 0, left out
    done_before = 0.0  # share of the input read before the current chunk
    scaling = _scaling(spec, data) if resume is None else None
    # a new model's first block decides its defaults (algorithm, γ, label signs): it is read whole
    for chunk, reader, done in epochs_of(
        data, spec.epochs or 1, spec.shuffle, spec.seed, spec.skip_bad_lines, spec.block_lines, resume is None
    ):
        weightless += len(chunk)
        chunk = weighed(chunk)
        weightless -= len(chunk)
        if not len(chunk):
            continue
        if model is None:
            spec = spec.choosing(len(unique(chunk.labels)))
            cls = spec.learner_class
            if scaling is FIRST_BLOCK:
                scaling = scaling_.of_first_block(chunk, spec.kernel.kind)
            # with a scaling, γ = 1/k counts the features it keeps: LIBSVM's 1/#features of svm-scale'd data
            features = chunk.feature_count if scaling is None else scaling.ranges.feature_count
            learner = cls(Kernel.of(spec.kernel, features), seed=spec.seed, **spec.params)
            labels = MulticlassLabels() if cls.multiclass else BinaryLabels()
            model = Model(learner, labels, scaling=scaling, class_weight=dict(spec.class_weight))
            if scaling is not None:
                learner.notes.append(scaling.describe())
        raw, chunk = chunk, chunk if model.scaling is None else model.scaling.apply(chunk)  # the learner's view
        if warnings is None:
            warnings = kernel_warnings(model.learner.kernel, chunk, not resume and spec.kernel.default_gamma)
            if not any(SCALE_HINT in w for w in warnings):  # one hint to scale is enough
                warnings += scaling_.spread_warning(chunk, SCALE_HINT)
            model.evicted_folded = 0  # from here on, the run keeps all its own continuation needs
            if model.calibration is not None:  # fitted to the scores the model had: they change now
                model.calibration = None
                calibration_dropped.append(
                    "the model's probabilities were fitted to its former scores and are dropped; calibrate it again"
                )
        seen.add(chunk)
        kept.add(raw)  # scored through the model, which scales it
        model.learner.keep_evicted(spec.written)
        model.learner.threads = spec.threads
        if stops is None:
            stops = _stops(model, spec, watch)
        try:
            y = model.labels.encode(chunk, reader.source_name)
        except DataError as exc:  # a label the model cannot take: the rows before its line are learnt first
            good = chunk.take(np.flatnonzero(chunk.line_numbers < exc.line))
            if len(good):
                _learn_in_pieces(model, good, model.labels.encode(good, reader.source_name), stops, reader.source_name)
            raise
        if watch.progress is not None:  # the rows' share of the input: interpolated by position in the chunk
            watch.progress.locate(model.learner.counter("examples"), len(chunk), done_before, done)
            done_before = done
        _learn_in_pieces(model, chunk, y, stops, reader.source_name)
        if watch.on_chunk is not None:
            watch.on_chunk(model)
    source = reader.source_name if reader else ("<stdin>" if data == "-" else str(data))
    if model is None:
        raise DataError(source, 0, None, "no examples to train on" + (": every weight is zero" if weightless else ""))
    if watch.curve is not None:
        watch.curve.finish(model.learner)
    online = model
    examples = sum(seen.labels.values())
    # a resumed model over data without examples is returned as it is (a batch average is still made)
    written = model if not examples and spec.written not in AVERAGES else model.as_written(spec.written, spec.to_dict())
    warnings = (warnings or []) + (
        calibration_dropped
        + support_warnings(online.learner)
        + outcome_warnings(written, kept.chunk())
        + class_weight_warnings(model.class_weight, seen.labels, model.labels.spelling)
    )
    # the last reader has read the data once: its count of malformed lines is per pass
    return TrainResult(
        written,
        time.perf_counter() - started,
        source,
        reader.n_skipped if reader else 0,
        list(reader.skipped) if reader else [],
        warnings,
        online=online,
        spec=spec,
        examples=examples,
    )


FIRST_BLOCK = "first block"  # the ranges of `train --scale` on a stream: its first block's


def _scaling(spec: TrainSpec, data):
    """The scaling a new model of `spec` applies (None without one): the ranges given, those of a first
    pass over `data` when it can be read twice (scaling.two_passes), or FIRST_BLOCK for a stream.  A
    first pass over the whole file, not the first block, because a file's later examples hold features
    and values its first block lacks (a dropped feature, an extrapolated value): it makes the model of
    svm-scale'd data, whose ranges are the whole file's."""
    if spec.scale is False:
        return None
    if spec.scale is not True:
        return scaling_.Scaling.for_kernel(spec.scale, spec.kernel.kind, "ranges file")
    if not scaling_.two_passes(data):
        return FIRST_BLOCK
    return scaling_.of_data(data, spec.kernel.kind, spec.skip_bad_lines, spec.block_lines)


def _stops(model: Model, spec: TrainSpec, watch: Watch) -> list:
    """The rules that cut a chunk: the curve's rows, the checkpoints, the progress rows."""
    stops = []
    if watch.curve is not None:
        stops.append(Every(watch.curve.every, lambda m: watch.curve.row(m.learner)))
    if spec.checkpoint_every:
        stops.append(
            Every(
                spec.checkpoint_every,
                lambda m: watch.on_checkpoint(m.as_written(spec.written, spec.to_dict())),
                origin=model.learner.counter("examples"),
            )
        )
    if watch.progress is not None:
        watch.progress.start(model.learner)
        stops.append(Doubling(watch.progress.row, origin=model.learner.counter("examples")))
    return stops


# The warnings below describe a run; none of them changes what is learnt.  Each is one line, the
# same for every run over the same data and settings (tune lists each distinct one once).
SAMPLE = 100  # examples of the first block, evenly spaced, on which the kernel is checked
TINY = 1e-6  # relative size under which a kernel value counts as 0, or a spread of values as none
OUTLIER = 10  # the default γ = 1/k is suspect when k > OUTLIER × the index that 99% of the values stay under


def kernel_warnings(kernel: Kernel, chunk, default_gamma: bool) -> list[str]:
    """Warnings about the kernel on the first block of data:
    - default γ from an outlying index: γ was left to its default 1/k (k the block's largest index)
      and k is more than OUTLIER times the 99th percentile of the indices of the block's values;
    - numerically constant: on SAMPLE examples, max k(x_i, x_j) − min k(x_i, x_j) ≤ TINY·max |k|;
    - numerically diagonal: |k(x_i, x_j)| ≤ TINY·√(k(x_i,x_i) k(x_j,x_j)) for every two different
      examples of the sample (of those with k(x,x) ≠ 0), e.g. rbf on unscaled features;
    - nearly diagonal (rbf): the same for more than MOSTLY of those pairs."""
    out = []
    if default_gamma and kernel.kind != "linear" and len(chunk.indices):
        index = chunk.indices.astype(np.int64)  # as the file writes them
        k, bulk = chunk.feature_count, int(np.quantile(index, 0.99, method="inverted_cdf"))
        if k > OUTLIER * bulk:
            out.append(
                f"the default γ = 1/{k} = {kernel.gamma:.3g} comes from feature index {k}, more than "
                f"{OUTLIER}× the indices of 99% of the first block's values (≤ {bulk}); give --gamma or --sigma"
            )
    rows = unique(np.linspace(0, len(chunk) - 1, min(len(chunk), SAMPLE)).astype(np.int64))
    if len(rows) < 2:
        return out
    sample = chunk.take(rows)
    columns, compact = unique(sample.indices, return_inverse=True)  # order-preserving: rows stay sorted
    compact = compact.astype(np.int32)
    K = np.zeros((len(rows), len(rows)))
    kernel_matrix(
        SupportSet.from_csr(sample.indptr, compact, sample.values).arrays,
        kernel.args(),
        sample.indptr,
        compact,
        sample.values,
        np.zeros(len(columns)),
        K,
    )
    # pairs of different examples, both with k(x, x) ≠ 0; example[r]: the sample row where row r's point first occurs
    first: dict[bytes, int] = {}
    example = np.array([first.setdefault(b"".join(a.tobytes() for a in sample.row(r)), r) for r in range(len(rows))])
    i, j = np.triu_indices(len(rows), 1)
    diag = np.diag(K)
    pairs = (example[i] != example[j]) & (diag[i] * diag[j] != 0)
    where = f"{len(rows)} examples of the first block"
    scaling = "check the feature scaling" if kernel.kind == "linear" else "check --gamma and the feature scaling"
    if K.max() - K.min() <= TINY * np.abs(K).max():
        out.append(
            f"the kernel is numerically constant on {where} (max − min of k(x_i, x_j) ≤ {TINY:g} × max |k|): "
            f"it cannot tell examples apart; {scaling}"
        )
    elif pairs.any():
        tiny = (np.abs(K[i, j]) <= TINY * np.sqrt(np.abs(diag[i] * diag[j])))[pairs]
        if tiny.all():
            out.append(
                f"the kernel is numerically diagonal on {where} (|k(x_i, x_j)| ≤ {TINY:g} × √(k(x_i, x_i) "
                f"k(x_j, x_j)) for all different x_i, x_j): each example looks unrelated to the others; {scaling}"
                + (SCALE_HINT if kernel.kind == "rbf" else "")
            )
        elif kernel.kind == "rbf" and tiny.mean() > MOSTLY:
            out.append(
                f"the kernel is nearly diagonal on {where}: |k(x_i, x_j)| ≤ {TINY:g} × √(k(x_i, x_i) k(x_j, x_j)) "
                f"for {100 * tiny.mean():.1f}% of the pairs of different x_i, x_j, so most examples look unrelated "
                f"to the others; {scaling}{SCALE_HINT}"
            )
    return out


# rbf values that are mostly 0: distances far beyond 1/√γ, as unscaled features give (breast cancer: 99.5% of the
# pairs); on the sets of the benchmark (bench/feature_scaling.py) scaled or binary data have none.  Only for
# rbf: a sparse linear or poly kernel is 0 on most pairs of a text collection, as it should be.
MOSTLY = 0.5
SCALE_HINT = " (train --scale, or budgetlearn scale, scales them as svm-scale does)"


OUTCOME_SAMPLE = 2000  # examples of a run kept (`Reservoir`) on which the written model's predictions are checked


class Counts:
    """A run's label values: label -> examples."""

    def __init__(self):
        self.labels: dict = {}

    def add(self, chunk) -> None:
        values, counts = unique(chunk.labels, return_counts=True)
        for v, c in zip(values.tolist(), counts.tolist()):
            self.labels[v] = self.labels.get(v, 0) + c


class Reservoir:
    """A uniform sample of at most `size` examples of a stream (Vitter's algorithm R: example i, counted
    from 0, replaces a uniformly chosen one of the kept once i ≥ size, with probability size/(i + 1)), in
    bounded memory, on which the model a run writes is scored after the run (`outcome_warnings`).  Its
    draws are doubles of a generator with a fixed seed, one per example past the first `size`, so that the
    sample, and the warnings, are the same for every run over the same data, whatever its blocks.

    A block's rows that hold a slot once the block is done are kept by one `Chunk.take` (a row replaced
    within its own block is never copied), and slot s is row `where[s, 1]` of piece `where[s, 0]`, with
    its label's spelling in its block: no Python step per kept row (a tuple each cost a9a's train ~40
    ms).  The pieces are joined into one when they hold more than SLACK times `size` rows."""

    SLACK = 4

    def __init__(self, size: int):
        self.size, self.seen = size, 0
        self.random = None  # made at the first draw: importing numpy.random costs a short run ~10 ms
        self.pieces: list = []  # Chunks of kept rows, some of them replaced since
        self.where = np.zeros((size, 2), np.int64)  # slot -> (piece, row of the piece)
        self.spelling: list = [None] * size  # slot -> its label's spelling in its block

    def add(self, chunk) -> None:
        n, filling = len(chunk), max(0, min(len(chunk), self.size - self.seen))
        rows, slots = np.arange(filling), self.seen + np.arange(filling)
        if filling < n:
            if self.random is None:
                self.random = np.random.default_rng(20240601)
            position = self.seen + np.arange(filling, n)  # each later example's index in the stream
            slot = np.floor(self.random.random(n - filling) * (position + 1)).astype(np.int64)
            hit = np.flatnonzero(slot < self.size)
            rows, slots = np.concatenate([rows, filling + hit]), np.concatenate([slots, slot[hit]])
        self.seen += n
        if not len(rows):
            return
        order = np.argsort(slots, kind="stable")  # each slot's rows in stream order: the last one stays
        last = order[np.append(slots[order][1:] != slots[order][:-1], True)]
        rows, slots = rows[last], slots[last]
        self.where[slots, 0], self.where[slots, 1] = len(self.pieces), np.arange(len(rows))
        for s, label in zip(slots.tolist(), chunk.labels[rows].tolist()):
            self.spelling[s] = chunk.label_spellings.get(label)
        self.pieces.append(chunk.take(rows))
        if sum(len(p) for p in self.pieces) > self.SLACK * self.size:
            kept = self.chunk()
            self.pieces, self.where[: len(kept), 0], self.where[: len(kept), 1] = [kept], 0, np.arange(len(kept))

    def chunk(self):
        """The kept examples as one Chunk, in slot order (None when the stream had none)."""
        if not self.seen:
            return None
        k = min(self.seen, self.size)
        starts = np.cumsum([0] + [len(p) for p in self.pieces])
        kept = concatenate(self.pieces).take(starts[self.where[:k, 0]] + self.where[:k, 1])
        kept.label_spellings = {}  # each label's spelling in the block of the last slot holding it
        for label, text in zip(kept.labels.tolist(), self.spelling[:k]):
            if text is not None:
                kept.label_spellings[label] = text
        kept.indices, kept.values = kept.indices.astype(np.int32), kept.values.astype(np.float64)
        kept.weights = None if kept.weights is None or np.all(kept.weights == 1.0) else kept.weights.astype(float)
        return kept


def weighed(chunk):
    """The chunk without its examples of weight 0 (a sample weight: scikit-learn's convention, an example
    left out), which no learner sees, nor any count or sample of the run."""
    if chunk.weights is None or chunk.weights.all():
        return chunk
    return chunk.take(np.flatnonzero(chunk.weights))


def example_weights(chunk, class_weight: dict) -> np.ndarray | None:
    """Each example's weight, its class's (`train -w`: label value -> weight, spec.TrainSpec.class_weight)
    times its own (chunk.weights, a sample weight); None when the chunk has neither."""
    weights = None if chunk.weights is None else np.asarray(chunk.weights, np.float64)
    for label, w in class_weight.items():
        where = chunk.labels == label
        if where.any():
            weights = np.ones(len(chunk)) if weights is None else weights.copy()
            weights[where] *= w
    return weights


def outcome_warnings(model: Model, sample) -> list[str]:
    """Warnings that the model a run writes may be no better than a constant (metrics.constant_warning and
    metrics.one_label_warning, eval's rules), from its predictions on `sample` (a Chunk kept from the
    run's examples, `Reservoir`), which holds several labels: its accuracy there (weighted by the examples'
    weights when the run has any) is not above always answering the sample's most frequent (heaviest)
    label; or it predicts one label for every example."""
    if sample is None:
        return []
    with np.errstate(all="ignore"):
        predicted = model.predicted(model.scorer().decision_function(sample))
    weights = example_weights(sample, model.class_weight)
    weight = np.ones(len(sample)) if weights is None else weights
    counts: dict = {}
    for label, w in zip(sample.labels.tolist(), weight.tolist()):
        counts[label] = counts.get(label, 0.0) + w
    right = float(weight[predicted == sample.labels].sum())
    if weights is None:
        counts, right = {label: int(c) for label, c in counts.items()}, int(right)
    if len(counts) < 2:  # one label: no model does better than answering it
        return []
    spelling = model.labels.spelling
    out = [constant_warning(right, counts, spelling, kept=len(sample), weighted=weights is not None)]
    out.append(one_label_warning(set(counts), unique(predicted).tolist(), spelling, len(sample)))
    return [w for w in out if w]


def class_weight_warnings(class_weight: dict, labels: dict, spelling) -> list[str]:
    """The warning that a class weight names a label the run never met (LIBSVM's "class label not found")."""
    missing = [label for label in class_weight if label not in labels]
    if not missing:
        return []
    return [f"a class weight names {', '.join(spelling(v) for v in missing)}, which no example of this run has"]


def support_warnings(learner) -> list[str]:
    """Warnings about the support set a run ended with: none (f = 0: the model learned nothing), or
    one vector after several mistakes when the algorithm's budget (if any) allows more."""
    t, m, n = learner.counter("examples"), learner.counter("mistakes"), len(learner.support)
    if learner.feature_map is not None:  # a weight vector over a fixed map, no support set
        if learner.learned_nothing():
            return [f"every weight is 0 after {t:,} examples: the model learned nothing (it scores every example 0)"]
        return []
    if n == 0:
        return [f"0 support vectors after {t:,} examples: the model learned nothing (it scores every example 0)"]
    if n == 1 and m > 1 and learner.hyper.get("budget", 2) > 1:
        return [f"1 support vector after {t:,} examples and {m:,} mistakes: the support set stopped growing at one"]
    classes = int(learner.n_classes[0]) if learner.multiclass else 2
    if classes > bounds.WARN_CLASSES:
        return [
            f"{classes:,} classes: a multiclass model grows as classes × support vectors ({n:,} × {classes:,} "
            f"coefficients here; its arrays may hold {bounds.MAX_COEFFICIENTS:,})"
        ]
    return []


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


def _learn_in_pieces(model: Model, chunk, y, stops: list, source: str) -> None:
    """learn_block(model, chunk, y, source), cut where an Every or Doubling rule fires, running its
    action there.

    A learner's pass over a chunk equals its passes over consecutive pieces (what makes --resume
    exact), so cutting changes nothing in the model."""
    learner, pos, n = model.learner, 0, len(chunk)
    while pos < n:
        t = learner.counter("examples")
        stop = min([n] + [pos + s.next_stop(t) - t for s in stops])
        learn_block(model, chunk if (pos, stop) == (0, n) else chunk.take(np.arange(pos, stop)), y[pos:stop], source)
        pos = stop
        t = learner.counter("examples")
        for s in stops:
            if s.due(t):
                s.action(model)


def learn_block(model: Model, chunk, y, source: str) -> None:
    """model.learner.learn(chunk, y), stopped with a DataError naming the line and the settings when
    the numbers stop being finite: at the example whose ‖x‖² or score overflows (the compiled loops
    check every round), or at the block after which a coefficient, a running sum or a running number
    is no longer finite (checked after every block: O(|S|)).  A model that is not finite is never
    written (Model.save checks again what it writes)."""
    learner = model.learner
    model.learned_from(chunk)
    try:
        learner.learn(chunk, y, example_weights(chunk, model.class_weight))
    except Overflow as exc:
        raise DataError(
            source, exc.line, None, f"training stopped: {exc.reason} ({learner.describe()}); nothing written"
        ) from None
    bad = learner.nonfinite()
    if bad is not None:
        first, last = int(chunk.line_numbers[0]), int(chunk.line_numbers[-1])
        lines = f"line {first}" if first == last else f"lines {first}–{last}"
        raise DataError(
            source,
            first,
            None,
            f"training stopped: the model's {bad} stopped being finite numbers while "
            f"it learned {lines} ({learner.describe()}): these settings overflow; nothing written",
        )


def score_lines(model: Model, block_lines: int = 4096) -> int:
    """Lines to score at once: a multiclass model's blocks are cut so that their n × m score matrix
    stays within bounds.SCORE_BLOCK_BYTES, whatever class count a model file declares."""
    return bounds.score_rows(len(model.labels.classes), block_lines) if model.learner.multiclass else block_lines


def scores(
    model: Model, data, skip_bad_lines: bool = False, block_lines: int = 4096, labels: bool = True
) -> Iterator[tuple[object, np.ndarray]]:
    """(chunk, decision values) for each chunk of `data`, in order: a vector f(x) for a binary
    model, an n × m matrix of class scores for a multiclass one (`score_lines` rows at most).
    `labels=False`: lines without a label are read too (label NaN), as predict reads them."""
    lines = score_lines(model, block_lines)
    with LibsvmReader(data, block_lines=lines, skip_bad_lines=skip_bad_lines, labels=labels) as reader:
        for chunk in reader:
            yield chunk, chunk_scores(model, chunk, reader.source_name)


def chunk_scores(model: Model, chunk, source: str) -> np.ndarray:
    """The model's scores of a chunk.  A score that is not a finite number (the model's numbers, or
    this example's, overflow: an edited model, or data far off the scale it was trained on) is a
    DataError naming the example's line, so that no prediction is ever written from a nan."""
    f = model.scorer().decision_function(chunk)
    finite = np.isfinite(f) if f.ndim == 1 else np.isfinite(f).all(axis=1)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        raise DataError(
            source,
            int(chunk.line_numbers[row]),
            None,
            "the model's score of this example is not a finite number (its numbers or the model's overflow)",
        )
    return f
