"""The learner side of `budgetlearn serve`: lines in, one answer per line out, in order, over one learning
session (session.py), and its checkpoints.

A batch is the lines that arrived together from one client (transport.py cuts them): it is parsed by the
package's one LIBSVM reader (io/libsvm.py) and answered as one chunk.  For each line, in order:

- a labelled line (`LABEL i:v ...`) is predicted, then learnt: its answer is the online hypothesis' prediction
  made right before it was learnt (progressive validation, `Session.learn_progressive`: the predictions whose
  errors `train` counts as its online mistakes); with `readonly` it is only predicted;
- an unlabelled line, one that starts with a feature (`i:v ...`, as `predict` reads it), is only predicted, by
  the hypothesis the model is written with (what `predict` with the checkpoint answers);
- a blank or comment line gets an empty answer line;
- a malformed line, a line longer than the limit, a label the model cannot take (a third label for a binary
  model, a real target for a classifier) gets `error: SOURCE:LINE: reason` and changes nothing.

Since a pass over a chunk equals the passes over its pieces, how lines are batched changes no answer and no
model; what a first block would decide in `train` (the default algorithm, γ = 1/k, --scale's ranges) is
therefore given, never taken from a batch (cli/serve.py refuses the defaults).  An answer is spelt by the
labels its model had met: NO_LABEL_YET where it had met none on the side of its score (a binary model that met
one label, `_binary_texts`; a multiclass one that met none), a multiclass row's scores those of the classes met
(learn_progressive gives −inf for the others).  A new binary model's label signs are `train`'s (the larger
label +1 when the first block holds both: `_first_block`)."""

from __future__ import annotations

import dataclasses
import io
import time

import numpy as np

from ..base.core import DataError
from ..io.inputs import line_too_long
from ..io.libsvm import LibsvmReader, concatenate
from ..run.predictions import prediction_text
from ..run.session import Session, TrainingStopped

TOO_LONG = None  # a line of a batch that was longer than the limit (its bytes dropped)
NO_LABEL_YET = "?"  # the answer of a model that knows no label on the side the score gives


class Stopped(Exception):
    """The model's numbers stopped being finite: nothing more can be learnt or written (the last checkpoint
    stays as it was)."""


class Answerer:
    """Answers batches of lines with one model: a session that learns, or a model that only predicts."""

    def __init__(
        self,
        session: Session | None = None,
        model=None,
        columns: str = "labels",
        checkpoints: "Checkpoints | None" = None,
        max_line: int = 1 << 20,
    ):
        self.session, self.columns, self.checkpoints, self.max_line = session, columns, checkpoints, max_line
        self._model = model  # readonly: the model itself
        # a new model's rows learnt while it knows one label (`_first_block`); None once that is settled
        self._first: list | None = [] if session is not None and session.model is None else None

    @property
    def model(self):
        return self._model if self.session is None else self.session.model

    def answer(self, lines: list, source: str, first_line: int) -> list[str]:
        """The answers (without newlines) to lines first_line, first_line + 1, ... of `source`: each line
        bytes without its newline, or TOO_LONG."""
        answers: list = [""] * len(lines)  # blank and comment lines keep ""
        chunk, errors = parse(lines, source, first_line, self.max_line)
        for line, error in errors.items():
            answers[line - first_line] = f"error: {error}"
        if chunk is None:
            return answers
        where = chunk.line_numbers - first_line
        labelled = ~np.isnan(chunk.labels) if self.session is not None else np.zeros(len(chunk), bool)
        start = 0
        while start < len(chunk):  # runs of labelled (learnt) and unlabelled (predicted) rows
            stop = start + 1
            while stop < len(chunk) and labelled[stop] == labelled[start]:
                stop += 1
            run = chunk.take(np.arange(start, stop))
            texts = self._learn(run, source) if labelled[start] else self._predict(run, source)
            for row, text in zip(where[start:stop].tolist(), texts):
                answers[row] = text
            start = stop
        return answers

    def _predict(self, run, source: str) -> list[str]:
        if self.model is None:
            return ["error: the model has learnt nothing yet: send a labelled line first"] * len(run)
        f = self.model.scorer().decision_function(run)
        finite = np.isfinite(f) if f.ndim == 1 else np.isfinite(f).all(axis=1)
        texts = self._texts(f)
        for row in np.flatnonzero(~finite).tolist():
            error = DataError(source, int(run.line_numbers[row]), None, "the model's score is not a finite number")
            texts[row] = f"error: {error}"
        return texts

    def _learn(self, run, source: str) -> list[str]:
        """Each labelled row predicted then learnt; a row the model refuses answers its error, and the rows
        after it are learnt still.  While a binary model knows fewer than two labels, a row at a time: its
        answer is spelt by the labels known before it (`_binary_texts`)."""
        texts: list[str] = []
        while len(texts) < len(run):
            model = self.model
            growing = model is None or (
                model.task.name == "classification" and not model.learner.multiclass and len(model.labels.classes) < 2
            )
            before = (model.labels.negative, model.labels.positive) if growing and model is not None else None
            rest = run.take(np.arange(len(texts), len(texts) + 1 if growing else len(run)))
            try:
                f = self.session.learn_progressive(rest, source)
            except DataError as exc:
                error = exc
                if isinstance(exc, TrainingStopped):  # the example's numbers overflow: it is not learnt
                    if self.model.learner.nonfinite() is not None:  # or the model's did: nothing can go on
                        raise Stopped(str(exc)) from None
                    error = DataError(exc.source, exc.line, None, f"not learnt: {exc.why}")
                texts += self._texts(exc.answered) + [f"error: {error}"]
                continue
            texts += self._first_block(rest, f, before, source) if growing else self._texts(f)
        return texts

    def _first_block(self, row, f: np.ndarray, before, source: str) -> list[str]:
        """The answer to a row learnt while the model knew fewer than two labels, and `train`'s sign rule.
        Line by line, the first label takes its sign alone (labels.BinaryLabels: > 0 is +1); `train` gives the
        larger label +1 when its first block holds both.  When the second label comes within a first block's
        examples and the signs disagree (labels 1 and 2, a first line labelled 1), the rows learnt so far (one
        label, at most a block of them) are learnt again by a new session as one chunk, as `train` learns its
        first block, so that the model, and what follows, is `train`'s."""
        kept, model = self._first, self.model
        if kept is None or model.task.name != "classification" or model.learner.multiclass:
            self._first = None
            return self._binary_texts(f, before)
        kept.append(row)
        labels, block = model.labels, self.session.spec.block_lines
        if len(labels.classes) < 2 and len(kept) < block:
            return self._binary_texts(f, before)
        self._first = None
        if len(labels.classes) < 2 or len(kept) > block or labels.positive > labels.negative:
            return self._binary_texts(f, before)
        first = float(kept[0].labels[0])
        old = self.session
        session = Session(old.spec, watch=old.watch, scaling=old.scaling)
        if self.checkpoints is not None:
            self.checkpoints.last_count = None  # the checkpoints of those rows are written again
        answers = session.learn_progressive(concatenate(kept), source)
        self.session = session
        side = (first, None) if first == session.model.labels.negative else (None, first)
        return self._binary_texts(answers[-1:], side)

    def _binary_texts(self, f: np.ndarray, before) -> list[str]:
        """The answer to one row learnt while the model knew fewer than two labels: the label of the side of
        0 its score falls on as the model knew it then, NO_LABEL_YET when that side had none."""
        negative, positive = before or (None, None)
        if self.model.learner.multiclass or self.model.task.name != "classification":
            return self._texts(f)
        side = positive if f[0] > 0 else negative
        if side is None:
            return [NO_LABEL_YET]
        text = self.model.labels.spelling(side)
        return [f"{text} {f[0]:.10g}" if self.columns == "scores" else text]

    def _texts(self, f: np.ndarray) -> list[str]:
        if not len(f):
            return []
        texts = prediction_text(self.model, f, self.columns).splitlines()
        if f.ndim == 2:  # class scores, −inf for the classes a row's model had not met (session.learn_progressive)
            known = (~np.isneginf(f)).sum(axis=1)
            for row in np.flatnonzero((known < f.shape[1]) | (known == 0)).tolist():  # as that model gave them
                k = int(known[row])
                texts[row] = (
                    prediction_text(self.model, f[row : row + 1, :k], self.columns).rstrip("\n") if k else NO_LABEL_YET
                )
        return texts

    def warm_up(self) -> None:
        """Load the compiled loops (numba's first call in a process: a second or more) before the first client
        rather than at its first line: a throwaway session of the same spec learns and answers two lines, and
        the model scores an empty chunk.  The model served is not changed."""
        lines = [b"1 1:1 2:0.5", b"2 1:-1", b"1:0.5"]
        chunk, _ = parse(lines, "warm-up", 1, self.max_line)
        labelled = chunk.take(np.arange(2))
        try:
            if self.session is not None:
                spec = dataclasses.replace(self.session.spec, checkpoint_every=None)  # writes nothing
                Session(spec).learn_progressive(labelled, "warm-up")
            if self.model is not None:
                self.model.scorer().decision_function(chunk.take(np.arange(2, 3)))
        except (DataError, ValueError, ArithmeticError):  # settings a first line refuses: said at that line
            pass

    def checkpoint(self) -> None:
        """Write a checkpoint now if anything was learnt since the last one."""
        if self.checkpoints is not None and self.session is not None and self.session.model is not None:
            self.checkpoints.write(self.session.checkpoint())


def parse(lines: list, source: str, first_line: int, max_line: int) -> tuple:
    """(chunk of the examples or None, {line number: DataError}) of a batch of lines, read by the package's
    reader (a line starting with a feature is an unlabelled one, NaN label).  The reader keeps the first ten
    errors of a read: a batch with more reads each line it did not account for alone."""
    data = io.BytesIO(b"".join((b"" if line is TOO_LONG else line) + b"\n" for line in lines))
    data.name = source  # what the reader's errors name
    with LibsvmReader(
        data,
        block_lines=len(lines),
        skip_bad_lines=True,
        labels=False,
        first_line=first_line,
        max_line_bytes=max_line,
    ) as reader:
        chunks = list(reader)
    chunk = concatenate(chunks) if chunks else None
    errors = {e.line: e for e in reader.skipped}
    for k, line in enumerate(lines):
        if line is TOO_LONG:
            errors[first_line + k] = line_too_long(source, first_line + k, max_line)
    if reader.n_skipped > len(reader.skipped):
        found = set(errors) | set(chunk.line_numbers.tolist() if chunk is not None else ())
        for k, line in enumerate(lines):
            if first_line + k not in found:
                error = _error_of(line, source, first_line + k, max_line)
                if error is not None:
                    errors[first_line + k] = error
    return chunk, errors


def _error_of(line: bytes, source: str, number: int, max_line: int) -> DataError | None:
    """The reader's error for one line read alone (None: a blank or comment line)."""
    data = io.BytesIO(line + b"\n")
    data.name = source
    try:
        with LibsvmReader(data, labels=False, first_line=number, max_line_bytes=max_line) as reader:
            list(reader)
    except DataError as exc:
        return exc
    return None


class Checkpoints:
    """Where and when a learning server writes its model (with the resume state, so that a restart goes on
    exactly): every N examples (the session cuts its chunks there: `TrainSpec.checkpoint_every`), every S
    seconds, on request (SIGHUP) and at the end.  `expect`: the state of the file the model was read from
    when it is the one written (atomic.FileState: replaced only while it is still what this server wrote)."""

    def __init__(self, path: str, seconds: float | None = None, expect=None):
        self.path, self.seconds, self.expect = path, seconds, expect
        self.last_time = time.monotonic()
        self.last_count: int | None = None  # the examples of the last checkpoint written
        self.written = 0

    def write(self, model) -> None:
        count = model.learner.counter("examples")
        self.last_time = time.monotonic()
        if count == self.last_count:
            return
        model.save(self.path, resume=True, expect=self.expect)
        self.last_count, self.written = count, self.written + 1

    def due(self, now: float) -> bool:
        return self.seconds is not None and now - self.last_time >= self.seconds
