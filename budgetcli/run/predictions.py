"""Predictions for a data file, serially or by byte ranges in parallel, always in input order.

Parallel prediction splits a plain file into byte ranges that start and end at line boundaries.
Each worker opens the file itself, seeks to its range and reads it with the ordinary reader, one
chunk at a time (the path goes to the worker, never the data).  Line numbers stay those of the
whole file: a first quick pass counts the newlines of every range, so each range knows the number
of its first line, and a bad line is reported as `FILE:LINE` exactly as the serial run reports it
(the first bad line of the file: ranges are examined in order).  Results come back in range order
and are written as they come, so memory stays that of a few ranges' predictions.

Compressed files and stdin cannot be split (no seeking into a compressed stream), so they are
predicted serially whatever --jobs says.
"""

from __future__ import annotations

import functools
import os
import warnings

import numpy as np

from ..base import bounds
from . import pipeline
from ..io.inputs import bounded_lines
from ..io.libsvm import LibsvmReader
from ..model.model import Model

RANGE_BYTES = 16 << 20  # at most this much input per task: bounds the predictions held at once
MIN_RANGE_BYTES = 1 << 20  # a range smaller than this is not worth a process of its own
COMPRESSED = (".gz", ".bz2", ".xz")


COLUMNS = ("labels", "scores", "probabilities")  # what predict writes per example


def prediction_text(model: Model, f: np.ndarray, columns: str, threshold: float = 0.0) -> str:
    """The output lines of one chunk's decision values: 'label'; with scores 'label f' (binary)
    and 'label f_1 ... f_m' (multiclass: one score per class, in the order of `header`); with
    probabilities, LIBSVM's `svm-predict -b 1` lines 'label p_1 ... p_m' (the label of the highest
    probability, %g as LIBSVM prints them, in the order of `header`).  A binary model's label is its +1
    label where f > `threshold`."""
    if columns == "probabilities":
        p = model.probabilities(f)[:, _probability_order(model)]
        names = _probability_names(model)
        return "".join(f"{names[int(np.argmax(row))]} " + " ".join(f"{v:g}" for v in row) + "\n" for row in p)
    scores = columns == "scores" and not model.task.score_is_prediction
    labels = model.labels.decode(f, threshold)
    if scores and model.learner.multiclass:
        return "".join(f"{lab} " + " ".join(f"{v:.10g}" for v in row) + "\n" for lab, row in zip(labels, f))
    if scores:
        return "".join(f"{lab} {v:.10g}\n" for lab, v in zip(labels, f))
    return "".join(f"{lab}\n" for lab in labels)


def header(model: Model, columns: str) -> str:
    """The first line of probabilities and of multiclass scores, 'labels L1 ... Lm': the column order,
    as LIBSVM's `svm-predict -b 1` writes it.  Labels and binary scores (one column) have none."""
    if columns == "probabilities":
        return "labels " + " ".join(_probability_names(model)) + "\n"
    return "labels " + " ".join(model.labels.names) + "\n" if columns == "scores" and model.learner.multiclass else ""


def _probability_order(model: Model) -> list[int]:
    """The columns of `Model.probabilities` in output order: a binary model's +1 label first, as LIBSVM
    orders the labels −1 and +1 of a binary model; the class order of a multiclass one."""
    return [1, 0] if not model.learner.multiclass else list(range(len(model.labels.classes)))


def _probability_names(model: Model) -> list[str]:
    labels = model.labels
    if model.learner.multiclass:
        return labels.names
    return [labels.spelling(v) for v in (labels.positive, labels.negative)]


def splittable(data) -> bool:
    """True for a regular, uncompressed file, which can be read by byte ranges."""
    return (
        isinstance(data, (str, os.PathLike))
        and data != "-"
        and os.path.isfile(data)
        and not os.fsdecode(data).lower().endswith(COMPRESSED)
    )


def parallel_jobs(data, jobs: int) -> tuple[int, str | None]:
    """(worker processes for predicting `data`, a note when --jobs was lowered): one for what cannot be
    split (stdin, a compressed file), else bounds.workers over ranges of at least MIN_RANGE_BYTES."""
    if jobs == 1 or not splittable(data):
        return 1, None
    pieces = max(1, -(-os.path.getsize(data) // MIN_RANGE_BYTES))
    return bounds.workers(jobs, pieces, f"range of at least {MIN_RANGE_BYTES >> 20} MiB")


def write_predictions(
    model: Model,
    model_path,
    data,
    output,
    columns: str = "labels",
    skip_bad_lines: bool = False,
    jobs: int = 1,
    threshold: float = 0.0,
) -> None:
    """Write the predictions for `data` (`columns`: one of COLUMNS) to the text file `output`, in input
    order, with `jobs` worker processes (see `parallel_jobs`); a binary model's +1 label where f >
    `threshold`.  Raises DataError for the first bad line (unless skip_bad_lines)."""
    output.write(header(model, columns))
    if jobs == 1 or not splittable(data):
        for _, f in pipeline.scores(model, data, skip_bad_lines=skip_bad_lines, labels=False):
            output.write(prediction_text(model, f, columns, threshold))
        return
    for text in parallel_texts(model_path, data, columns, skip_bad_lines, jobs, threshold):
        output.write(text)


def line_ranges(path, parts: int) -> list[tuple[int, int]]:
    """About `parts` byte ranges [start, end) covering the file, each starting at a line start
    (a range never splits a line; tiny files give fewer ranges)."""
    size = os.path.getsize(path)
    parts = min(parts, size)  # never more ranges than bytes: a huge count would only spin here
    cuts = [0]
    with open(path, "rb") as f:
        for k in range(1, parts):
            target = size * k // parts
            if target <= cuts[-1]:
                continue
            f.seek(target - 1)
            while (rest := f.readline(1 << 20)) and not rest.endswith(b"\n"):  # a line may be long: in pieces
                pass  # to the end of the line holding byte target-1: the next line starts here
            if cuts[-1] < f.tell() < size:
                cuts.append(f.tell())
    cuts.append(size)
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def count_newlines(path, start: int, end: int, block: int = 1 << 20) -> int:
    with open(path, "rb") as f:
        f.seek(start)
        n, left = 0, end - start
        while left > 0:
            buf = f.read(min(block, left))
            if not buf:
                break
            n += buf.count(b"\n")
            left -= len(buf)
    return n


class RangeLines:
    """The lines of bytes [start, end) of a file, for the reader (which takes any iterable of
    lines with a `name`); `name` is the path as the serial reader names it."""

    def __init__(self, path, start: int, end: int):
        self.path, self.start, self.end = path, start, end
        self.name = os.fsdecode(path)

    def __iter__(self):
        with open(self.path, "rb") as f:
            f.seek(self.start)
            left = self.end - self.start
            for line, taken in bounded_lines(f):  # a line too long to hold is cut, as the reader's bound wants
                if left <= 0:
                    break
                left -= taken
                yield line


@functools.lru_cache(maxsize=1)
def _model(path: str, mtime_ns: int, size: int) -> Model:
    """The model a worker process loaded last (its tasks share it; a changed file is loaded again)."""
    return Model.load(path)


def predict_range(
    model_path, path, start: int, end: int, first_line: int, columns: str, skip_bad_lines: bool, threshold: float
):
    """A worker's task: ('ok', text) for the range, or ('error', DataError) — returned, not raised,
    so the caller reports the first bad line of the file, not the first one a worker happened to hit."""
    st = os.stat(model_path)
    model = _model(os.path.abspath(model_path), st.st_mtime_ns, st.st_size)
    parts = []
    try:
        with LibsvmReader(
            RangeLines(path, start, end),
            block_lines=pipeline.score_lines(model),
            skip_bad_lines=skip_bad_lines,
            first_line=first_line,
            labels=False,  # a line to score needs no label
        ) as r:
            for chunk in r:
                f = pipeline.chunk_scores(model, chunk, r.source_name)
                parts.append(prediction_text(model, f, columns, threshold))
    except ValueError as exc:  # DataError
        return "error", exc
    return "ok", "".join(parts)


def parallel_texts(model_path, path, columns: str, skip_bad_lines: bool, jobs: int, threshold: float = 0.0):
    """The predictions' text, range by range in file order, computed by `jobs` worker processes."""
    import joblib

    size = os.path.getsize(path)
    ranges = line_ranges(path, max(jobs, -(-size // RANGE_BYTES)))
    # results come back in submission order, as they are ready: at most a few ranges' text is held
    with joblib.Parallel(n_jobs=jobs, backend="loky", return_as="generator") as parallel:
        counts = list(parallel(joblib.delayed(count_newlines)(path, a, b) for a, b in ranges))
        first_lines = np.concatenate(([1], 1 + np.cumsum(counts)[:-1])).astype(int).tolist()
        outputs = parallel(
            joblib.delayed(predict_range)(model_path, path, a, b, first, columns, skip_bad_lines, threshold)
            for (a, b), first in zip(ranges, first_lines)
        )
        for status, value in outputs:
            if status == "error":
                with warnings.catch_warnings():  # joblib warns that it cancels the later ranges: intended
                    warnings.simplefilter("ignore")
                    outputs.close()
                raise value
            yield value
