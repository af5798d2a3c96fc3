"""Reader → learning session, without any printing: a training run over data (`train`), and the scores of a
model over data (`scores`).  What a run's summary warns of is report.py."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from ..base import bounds
from ..model import scaling as scaling_
from ..learning import task as task_
from ..base.core import Chunk, DataError
from ..io.libsvm import LibsvmReader, concatenate
from ..model.model import Model
from .report import Report
from .session import FIRST_BLOCK, Session, Watch
from ..model.spec import AVERAGES, TrainSpec


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
