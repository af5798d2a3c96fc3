"""Learning curves: `train --curve FILE.csv --curve-every k` logs one row every k examples.

A first line `# ALGORITHM (PARAMETERS), kernel KERNEL` records what ran (`plot` labels the curve with
it), then the columns (CSV with a header line):

    t             examples seen by the model so far (with --resume: since its first training)
    mistakes      online mistakes among them
    online_rate   mistakes / t
    support_size  |S| after example t
    seconds       wall time since this run started (reading included)

A regression's curve (`--task regression`) has `squared_error` (Σ(y − f(x))² of the online predictions)
and `online_mse` (its mean) in place of `mistakes` and `online_rate` (the task's columns, learning/task CURVE).

Rows come at t = k, 2k, ... and once more at the end of the run if the last t is not a multiple
of k.  To log exactly at those t, pipeline.train cuts a chunk at the multiples of k and the learner
learns the pieces in order; a learner's pass over a chunk is the same as its passes over
consecutive pieces (this is what makes `--resume` exact), so the curve does not change the model.  Labels are still
encoded per whole chunk, as without a curve.  The file is written through a temporary file, as every
output (atomic.py): it appears when the run ends, and a run that fails leaves an old curve as it was.
"""

from __future__ import annotations

import time

import numpy as np

COLUMNS = ("t", "mistakes", "online_rate", "support_size", "seconds")  # a classification's


def columns(task) -> tuple[str, ...]:
    """The curve's columns for a task (learning/task): t, its two error columns, support_size, seconds."""
    return ("t", *task.CURVE, "support_size", "seconds")


class CurveWriteError(Exception):
    """A row could not be written to the curve file: one line naming the curve, not the model."""


class LearningCurve:
    def __init__(self, file, every: int, name: str = "the curve file", task=None):
        from ..learning.task import CLASSIFICATION

        if every < 1:
            raise ValueError(f"--curve-every must be ≥ 1, got {every}")
        self.task = task or CLASSIFICATION
        self.file = file
        self.name = name
        self.every = int(every)
        self.started = time.perf_counter()
        self.last_t = None

    def row(self, learner) -> None:
        if self.last_t is None:  # the learner says what ran (the default algorithm is chosen on the data)
            self._write(f"# {describe(learner)}\n" + ",".join(columns(self.task)) + "\n")
        t = learner.counter("examples")
        total, rate = self.task.curve_error(learner)
        self._write(f"{t},{total},{rate:.6g},{learner.support_size()},{time.perf_counter() - self.started:.4f}\n")
        self.last_t = t

    def _write(self, text: str) -> None:
        try:
            self.file.write(text)
            self.file.flush()
        except OSError as exc:
            raise CurveWriteError(f"{self.name}: cannot write the curve: {exc.strerror or exc}") from None

    def finish(self, learner) -> None:
        """The last row, unless the run ended on a multiple of k (already written)."""
        if learner.counter("examples") != self.last_t:
            self.row(learner)


def describe(learner) -> str:
    """What ran, as the curve's first line and the train summary's first line say it."""
    params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in learner.hyper.items())
    return f"{learner.name}{' (' + params + ')' if params else ''}, kernel {learner.kernel.describe()}"


def read_curve(path) -> dict:
    """A curve CSV as columns, "description": what ran (None in a file without that line), and "task":
    the task whose columns it has (a classification's or a regression's); ValueError naming file and
    line when it is not one."""
    from ..learning.task import TASKS

    kinds = {columns(task): task for task in TASKS.values() if hasattr(task, "CURVE")}  # novelty: no curve yet
    description, first = None, 1
    with open(path, encoding="utf-8") as f:
        try:
            header = f.readline(4096).strip()
            if header.startswith("#"):
                description, first = header[1:].strip()[:200], 2
                header = f.readline(4096).strip()
        except UnicodeDecodeError:
            raise ValueError(f"{path}:1: not a budgetlearn curve (not text: a model file?)") from None
        task = kinds.get(tuple(header.split(",")))
        if task is None:
            raise ValueError(
                f"{path}:{first}: not a budgetlearn curve (header {header!r}, expected {','.join(COLUMNS)}, or "
                f"a regression's {','.join(columns(TASKS['regression']))})"
            )
        rows = []
        for lineno, line in enumerate(_lines(f, path), start=first + 1):
            if not line.strip():
                continue
            fields = line.strip().split(",")
            try:
                if len(fields) != len(COLUMNS):
                    raise ValueError
                rows.append([float(v) for v in fields])
            except ValueError:
                got = line.strip()
                shown = repr(got) if len(got) <= 80 else repr(got[:80]) + " …"
                raise ValueError(f"{path}:{lineno}: expected {len(COLUMNS)} numbers, got {shown}") from None
    if not rows:
        raise ValueError(f"{path}: no rows (train with --curve wrote only the header?)")
    table = np.array(rows)
    return {name: table[:, j] for j, name in enumerate(columns(task))} | {"description": description, "task": task}


_MAX_ROW = 4096  # characters: a row is five numbers; a longer line is none, and is never read whole


def _lines(f, path):
    """The lines of a text file (a line longer than _MAX_ROW cut there), a decoding error as a
    ValueError naming the file."""
    try:
        while line := f.readline(_MAX_ROW + 1):
            yield line
            if len(line) > _MAX_ROW and not line.endswith("\n"):
                return  # a row it cannot be: the caller refuses it, the rest unread
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a budgetlearn curve (not UTF-8 text)") from None
