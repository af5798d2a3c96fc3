"""Reader → learning session, without any printing: a training run over data (`train`), what its summary
warns of (`Report`), and the scores of a model over data (`scores`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from ..base import bounds
from ..model import scaling as scaling_
from ..learning import task as task_
from ..base.core import Chunk, DataError, unique
from ..io.libsvm import LibsvmReader, concatenate
from ..numerics.kernels import Kernel
from ..learning.learner import kernel_matrix
from ..model.model import Model
from .session import FIRST_BLOCK, Session, Watch
from ..model.spec import AVERAGES, TrainSpec
from ..numerics.support import SupportSet


class Arrays:
    """The reader's part for rows given as arrays (api.train): their name in messages, `X:ROW`."""

    source_name, n_skipped, skipped = "X", 0, ()


@dataclass
class TrainResult:
    model: Model
    seconds: float
    source: str
    n_skipped: int = 0
    skipped: list = field(default_factory=list)
    warnings: list = field(default_factory=list)  # the run's (`Report`)
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
    labels: bool = True,
) -> Iterator[tuple[object, LibsvmReader, float | None]]:
    """(chunk, reader, done) for `epochs` passes over `data`; `done` is the share of the whole run's
    input read once the chunk is through, or None when the input's size is unknown (stdin, a pipe,
    a compressed file).

    Without shuffling a file is streamed again for each pass (memory stays one chunk); stdin, a pipe
    or a FIFO, which cannot be read twice (scaling.two_passes), and --shuffle keep the data in
    memory, as a Chunk given as `data` (the Python API's arrays) is.  With `shuffle`, pass e
    (0-based) is permuted by numpy's generator seeded with (seed, e).

    A chunk read holds fewer than `block_lines` examples when the input pauses, ends, fails or is
    interrupted (LibsvmReader), the first one only when `first_block_whole` is false.  `labels=False`: a
    line may leave its label out (NaN; a task that reads none, task.Novelty)."""
    in_memory = shuffle or isinstance(data, Chunk) or (epochs > 1 and not scaling_.two_passes(data))
    if not in_memory:
        for e in range(epochs):
            with LibsvmReader(
                data,
                block_lines=block_lines,
                skip_bad_lines=skip_bad_lines,
                first_block_whole=first_block_whole,
                labels=labels,
            ) as reader:
                for chunk in reader:
                    share = reader.share_read()
                    yield chunk, reader, None if share is None else (e + share) / epochs
        return
    if isinstance(data, Chunk):
        everything, reader = data, Arrays()
    else:
        with LibsvmReader(data, block_lines=block_lines, skip_bad_lines=skip_bad_lines, labels=labels) as reader:
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
    process (a sharded spec: distributed.train), in the hypothesis the spec names: a loop of reading
    over a learning session (session.py).  Raises DataError on bad input; the model is not saved.

    With `resume`, that model goes on learning exactly where it stopped (`Session.resumed`: its
    algorithm, kernel, parameters, label map, counters and random state).

    `watch.curve` logs a row each time the model's example count reaches a multiple of its k; with
    `spec.checkpoint_every` N, `watch.on_checkpoint(model)` is called each time exactly k·N examples
    of this run have been learned, so a checkpoint holds a whole number of N-example steps, whatever
    the chunk size; `watch.progress` gets a row at 1, 2, 4, ... examples of this run.  For all three the
    session cuts a chunk where the count is reached.

    Data without examples (an empty file, comments only) is a DataError for a new model; a resumed
    model goes on over it unchanged (an empty day in a cron job is no error: `TrainResult.examples`
    is then 0, and the model keeps even its probabilities)."""
    watch = watch or Watch()
    if resume is not None:
        session = Session.resumed(spec, resume, watch)
    else:
        session = Session(spec, watch=watch, scaling=_scaling(spec, data))
    spec = session.spec
    started = time.perf_counter()
    reader = None
    report = None  # what the run's summary warns of, from its first block on
    weightless = 0  # examples of weight 0, left out
    done_before = 0.0  # share of the input read before the current chunk
    # a new model's first block decides its defaults (algorithm, γ, label signs): it is read whole
    for chunk, reader, done in epochs_of(
        data,
        spec.epochs or 1,
        spec.shuffle,
        spec.seed,
        spec.skip_bad_lines,
        spec.block_lines,
        resume is None,
        session.task.labelled,
    ):
        weightless += len(chunk)
        chunk = weighed(chunk)
        weightless -= len(chunk)
        if not len(chunk):
            continue
        if session.model is None:
            session.begin(chunk)
        if report is None:
            report = Report(session, chunk, not resume and spec.kernel.default_gamma)
        report.add(chunk)
        if watch.progress is not None:  # the rows' share of the input: interpolated by position in the chunk
            watch.progress.locate(session.examples, len(chunk), done_before, done)
            done_before = done
        session.learn(chunk, reader.source_name)
    source = reader.source_name if reader else ("<stdin>" if data == "-" else str(data))
    if session.model is None:
        raise DataError(source, 0, None, "no examples to train on" + (": every weight is zero" if weightless else ""))
    if watch.curve is not None:
        watch.curve.finish(session.model.learner)
    online = session.model
    examples = report.tally.examples if report is not None else 0
    # a resumed model over data without examples is returned as it is (a batch average is still made)
    written = online if not examples and session.spec.written not in AVERAGES else session.checkpoint()
    # the last reader has read the data once: its count of malformed lines is per pass
    return TrainResult(
        written,
        time.perf_counter() - started,
        source,
        reader.n_skipped if reader else 0,
        list(reader.skipped) if reader else [],
        report.warnings(written) if report is not None else [],
        online=online,
        spec=session.spec,
        examples=examples,
    )


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
    labelled = task_.named(spec.task).labelled
    return scaling_.of_data(data, spec.kernel.kind, spec.skip_bad_lines, spec.block_lines, labelled)


# The warnings below describe a run (`Report`).
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


class Report:
    """What a run's summary warns of: the kernel on its first block (`kernel_warnings`, and a hint to
    scale features whose ranges differ widely), what going on changed in a resumed model (the session's
    warnings), the hypothesis it ended with (its kind's `size_warnings`), and whether the model it writes
    is better than a constant (the task's tally of the run, checked on a sample of the run's examples,
    `Reservoir`).  None of it changes what is learnt; each warning is one line, the same for every run
    over the same data and settings (tune lists each distinct one once)."""

    def __init__(self, session: Session, first, default_gamma: bool):
        self.session = session
        model = session.model
        chunk = first if model.scaling is None else model.scaling.apply(first)  # the learner's view
        self.kernel = kernel_warnings(model.learner.kernel, chunk, default_gamma)
        if not any(SCALE_HINT in w for w in self.kernel):  # one hint to scale is enough
            self.kernel += scaling_.spread_warning(chunk, SCALE_HINT)
        self.sample = Reservoir(OUTCOME_SAMPLE)  # scored through the model, which scales it
        self.tally = session.task.Tally()

    def add(self, chunk) -> None:
        self.tally.add(chunk)
        self.sample.add(chunk)

    def warnings(self, written: Model) -> list[str]:
        online = self.session.model
        return (
            self.kernel
            + self.session.warnings
            + online.learner.size_warnings()
            + self.tally.warnings(online, written, self.sample.chunk())
        )


class Reservoir:
    """A uniform sample of at most `size` examples of a stream (Vitter's algorithm R: example i, counted
    from 0, replaces a uniformly chosen one of the kept once i ≥ size, with probability size/(i + 1)), in
    bounded memory, on which the model a run writes is scored after the run (the task's warnings).  Its
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
