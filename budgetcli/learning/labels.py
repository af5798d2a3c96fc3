"""Label maps: the file's label values <-> the learner's encoding, stored in the model.

Binary learners see y ∈ {−1, +1}.  Which file label becomes +1:
- the larger of the two values, when the first chunk of data holds both (so 0/1, 1/2, 2/4 and
  −1/+1 all map the larger label to +1, and `--scores` are scores of the larger label);
- when the first chunk holds only one value, a value ≤ 0 becomes −1 and a value > 0 becomes +1
  (so −1/+1 and 0/1 files still come out naturally); the label seen later takes the other sign.
A third value is an error that names the multiclass algorithms (`MulticlassLabels` below).  The tasks
without classes keep targets in their place (targets.py).
The map is fixed from then on, including across `--resume`, and `predict` writes each label with
its first spelling in the training data (`+1`, `1.0`, `2`, ...).
"""

from __future__ import annotations

import math

import numpy as np

from ..base import registry
from ..base.core import DataError, parse_number, shortest_text, unique
from .statecheck import MAX_CLASSES
from .targets import NoveltyVerdicts, RealTargets


def multiclass_algorithms() -> list[str]:
    return sorted(name for name, cls in registry.ALGORITHMS.items() if getattr(cls, "multiclass", False))


class BinaryLabels:
    def __init__(self, negative=None, positive=None, spellings=None):
        self.negative = negative  # float label value encoded as −1, or None while unseen
        self.positive = positive  # float label value encoded as +1, or None while unseen
        self.spellings = dict(spellings or {})  # float value -> first spelling

    def encode(self, chunk, source: str = "data") -> np.ndarray:
        """y ∈ {−1, +1} for the chunk's labels; a third label value is a DataError naming its line."""
        new = [v for v in unique(chunk.labels).tolist() if v not in (self.negative, self.positive)]
        if new:
            self._assign(new, chunk, source)
        keep_spellings(self.spellings, chunk)
        return np.where(chunk.labels == self.positive, 1.0, -1.0)

    def _assign(self, new: list, chunk, source: str) -> None:
        known = self.classes
        if len(known) + len(new) > 2:  # report the first line, in file order, with a third value
            for row, v in enumerate(chunk.labels.tolist()):
                if v not in known:
                    known.append(v)
                if len(known) > 2:
                    shown = ", ".join(self.spelling(k, chunk) for k in known[:2])
                    raise DataError(
                        source, int(chunk.line_numbers[row]), self.spelling(v, chunk), third_label_message(shown)
                    )
        if len(new) == 2:
            self.negative, self.positive = min(new), max(new)
            return
        (v,) = new
        if self.negative is None and self.positive is None:
            if v > 0:
                self.positive = v
            else:
                self.negative = v
        elif self.negative is None:
            self.negative = v
        else:
            self.positive = v

    def spelling(self, v: float, chunk=None) -> str:
        return spelling_of(v, self.spellings, chunk)

    def predicted(self, scores: np.ndarray, threshold: float = 0.0) -> np.ndarray:
        """The label values of scores f: the +1 label where f > threshold (`predict --threshold`; 0 by
        default), the −1 label elsewhere (a map that holds one label predicts it everywhere)."""
        positive = self.positive if self.positive is not None else self.negative
        negative = self.negative if self.negative is not None else self.positive
        return np.where(scores > threshold, positive, negative)

    def index_of(self, values: np.ndarray) -> np.ndarray:
        """1 for the +1 label, 0 for the −1 label, −1 for a value the map does not hold."""
        values = np.asarray(values)
        return np.where(values == self.positive, 1, np.where(values == self.negative, 0, -1))

    def decode(self, scores: np.ndarray, threshold: float = 0.0) -> list[str]:
        """Labels in the training file's spelling: f > threshold -> the +1 label, else the −1 label."""
        pos = self.spelling(self.positive) if self.positive is not None else self.spelling(self.negative)
        neg = self.spelling(self.negative) if self.negative is not None else pos
        return [pos if s > threshold else neg for s in scores.tolist()]

    @property
    def classes(self) -> list[float]:
        """Known label values, −1 label first."""
        return [v for v in (self.negative, self.positive) if v is not None]

    def to_dict(self) -> dict:
        return {
            "kind": "binary",
            "negative": self.negative,
            "positive": self.positive,
            "spellings": [[v, s] for v, s in self.spellings.items()],
        }

    def check(self, learner_cls, header: dict) -> None:
        """ValueError when a model file pairs this map with a learner it cannot serve."""
        if learner_cls.multiclass:
            raise ValueError(f"labels: a binary label map for the multiclass {learner_cls.name}")
        _check_classification(learner_cls, header)
        _check_values("labels", self.classes, self.spellings)


def keep_spellings(spellings: dict, chunk) -> None:
    """Note each label's first spelling in the data, as predictions write it back (`kept_spelling`)."""
    for v, s in chunk.label_spellings.items():
        if v not in spellings:
            spellings[v] = kept_spelling(v, s)


def kept_spelling(v: float, text) -> str:
    """How a model file spells label value v given as `text` (a data file's token, a scikit-learn class,
    a River label, a LIBSVM model's label): the text as it was given, when a model file can hold it
    (`spelling_problem`) and it does not read as another number than v; else the shortest text that
    reads back as v (core.shortest_text).  The one rule of every edge and of import: no digit lost."""
    if spelling_problem(text) is None:
        number = parse_number(text)
        if number is None or not math.isfinite(number) or number == v:
            return text
    return shortest_text(v)


def spelling_of(v: float, spellings: dict, chunk=None) -> str:
    """How label value v is written: as the model first saw it, else as this chunk writes it, else the
    shortest text that reads back as v."""
    if v in spellings:
        return spellings[v]
    if chunk is not None and v in chunk.label_spellings:
        return chunk.label_spellings[v]
    return shortest_text(v)


def label_values(labels: list, taken: dict | None = None) -> dict:
    """The value a model file keeps for each label of the scikit-learn and River classes (any Python
    values), in addition to the labels of `taken` (label -> value, kept as they are): a number's own
    value (bools 0 and 1), the number a label's text spells as a data file's label (so that '-1' in a
    data file is the class '-1', not another one), else the smallest whole number ≥ 0 that no label
    takes, in order.  ValueError when two labels would take one value: a data file could not tell
    them apart."""
    out = dict(taken or {})
    by_value = {v: label for label, v in out.items()}
    rest = []
    for label in labels:
        if label in out:
            continue
        v = _number_of(label)
        if v is None:
            rest.append(label)
        elif v in by_value:
            raise ValueError(
                f"the labels {by_value[v]!r} and {label!r} are both {shortest_text(v)} in a data file: a model "
                "file cannot tell them apart"
            )
        else:
            out[label], by_value[v] = v, label
    free = 0.0
    for label in rest:
        while free in by_value:
            free += 1.0
        out[label], by_value[free] = free, label
    return out


def _number_of(label) -> float | None:
    """The number a label is (bools: 0, 1), or spells as text; None for anything else."""
    if isinstance(label, (bool, np.bool_, int, float, np.integer, np.floating)):
        v = float(label)
    elif isinstance(label, str):
        v = parse_number(label)
    else:
        return None
    return v if v is not None and math.isfinite(v) else None


def third_label_message(shown: str) -> str:
    return (
        f"a third label value in binary training (labels so far: {shown}); this algorithm is "
        f"binary-only, the multiclass ones are: {', '.join(multiclass_algorithms())}"
    )


class MulticlassLabels:
    """Any number of label values for the multiclass learners: class index = order of first
    appearance in the training stream.  A label first seen mid-stream joins as the next class,
    without restarting (its prototype starts at zero).  Two-class data works the same way."""

    kind = "multiclass"

    def __init__(self, values=None, spellings=None):
        self.values = list(values or [])  # float label value of class 0, 1, ...
        self.spellings = dict(spellings or {})  # float value -> first spelling
        self._index = {v: i for i, v in enumerate(self.values)}

    def encode(self, chunk, source: str = "data") -> np.ndarray:
        """Class indices (int64) of the chunk's labels, adding unseen labels in file order; a label
        past the MAX_CLASSES a model file may hold is a DataError naming its line."""
        distinct, inverse = unique(chunk.labels, return_inverse=True)
        index = [self._index.get(v) for v in distinct.tolist()]
        if None not in index:  # every label known (every block after the first, mostly): no loop
            keep_spellings(self.spellings, chunk)
            return np.array(index, np.int64)[inverse]
        out = np.empty(len(chunk.labels), np.int64)
        for row, v in enumerate(chunk.labels.tolist()):
            i = self._index.get(v)
            if i is None:
                if len(self.values) >= MAX_CLASSES:
                    raise DataError(
                        source,
                        int(chunk.line_numbers[row]),
                        self.spelling(v, chunk),
                        f"a label value beyond the {MAX_CLASSES:,} classes a model may hold",
                    )
                i = self._index[v] = len(self.values)
                self.values.append(v)
            out[row] = i
        keep_spellings(self.spellings, chunk)
        return out

    def spelling(self, v: float, chunk=None) -> str:
        return spelling_of(v, self.spellings, chunk)

    def index_of(self, values: np.ndarray) -> np.ndarray:
        """The class index of each value, −1 for a value the map does not hold."""
        return np.array([self._index.get(v, -1) for v in np.asarray(values).tolist()], np.int64)

    def predict_index(self, scores: np.ndarray) -> np.ndarray:
        """The class with the highest score per row (ties: the class seen first)."""
        return np.argmax(scores, axis=1) if scores.shape[1] else np.zeros(scores.shape[0], np.int64)

    def predicted(self, scores: np.ndarray, threshold: float = 0.0) -> np.ndarray:
        """The label values of an n × m score matrix: each row's top class (a threshold is for binary
        models: model.check_threshold)."""
        return np.asarray(self.values, np.float64)[self.predict_index(scores)]

    def decode(self, scores: np.ndarray, threshold: float = 0.0) -> list[str]:
        """Labels in the training file's spelling for an n×m score matrix."""
        names = self.names
        return [names[i] for i in self.predict_index(scores)]

    @property
    def classes(self) -> list[float]:
        return list(self.values)

    @property
    def names(self) -> list[str]:
        return [self.spelling(v) for v in self.values]

    def to_dict(self) -> dict:
        return {
            "kind": "multiclass",
            "values": list(self.values),
            "spellings": [[v, s] for v, s in self.spellings.items()],
        }

    def check(self, learner_cls, header: dict) -> None:
        """ValueError when a model file pairs this map with a learner it cannot serve: a binary
        learner, or fewer label values than the learner's classes (predictions name a class)."""
        if not learner_cls.multiclass:
            raise ValueError(f"labels: a multiclass label map for the binary {learner_cls.name}")
        _check_classification(learner_cls, header)
        _check_values("labels", self.values, self.spellings)
        if len(set(self.values)) != len(self.values):
            raise ValueError("labels: a label value appears twice")
        if header.get("n_classes", 0) > len(self.values):
            raise ValueError(f"labels: {len(self.values)} label values for {header['n_classes']} classes")


def _check_classification(learner_cls, header: dict) -> None:
    """ValueError when a model file pairs class labels with a task other than classification, or with a
    learner that does not classify (a header without "task" is a classification model's)."""
    if header.get("task", "classification") != "classification":
        raise ValueError(f"labels: class labels in a model whose task is {header.get('task')!r}")
    if "classification" not in learner_cls.tasks:
        raise ValueError(f"labels: class labels for {learner_cls.name}, which does not classify")


MAX_SPELLING = 64  # characters of a label's spelling in a model file (%.17g takes at most 24)


def spelling_problem(s) -> str | None:
    """Why `s` cannot spell a label in a model file, or None.  The data reader's rule for a token:
    printable ASCII without whitespace (and short), so that `predict` writes one line per example
    and no escape sequence reaches a terminal."""
    if not isinstance(s, str):
        return f"{s!r} is not a string"
    if not s or len(s) > MAX_SPELLING:
        return f"{s[:40]!r}… is not 1 to {MAX_SPELLING} characters long" if s else "it is empty"
    if not (s.isascii() and s.isprintable()) or " " in s:
        return f"{s[:40]!r} holds whitespace, a control or a non-ASCII character"
    return None


def _check_values(field: str, values, spellings: dict) -> None:
    for v, s in spellings.items():
        problem = spelling_problem(s)
        if problem:
            raise ValueError(f"{field}: the spelling of label {v:g}: {problem}")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{field}: label value {v!r} is not a finite number")


def _number(field: str, v, optional: bool = False):
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"labels: {field} {v!r} is not a finite number")
    return float(v)


def _spellings(d: dict) -> dict:
    pairs = d.get("spellings")
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise ValueError("labels: spellings is not a list of [value, spelling] pairs")
    spellings = {_number("spelled value", v): s for v, s in pairs}
    # a spelling that reads as another number than its value (a file from before kept_spelling: the Python
    # API spelt 1.0000000001 as 1) is spelt as its value; one a model file cannot hold is left for `check`
    return {v: s if spelling_problem(s) else kept_spelling(v, s) for v, s in spellings.items()}


def labels_from_dict(d: dict):
    """The label map a model file stores (binary maps of older files have no "kind"); ValueError
    naming the field when it is not one (a file from anybody: null, a string, a missing field)."""
    if not isinstance(d, dict):
        raise ValueError(f"labels: {d!r} is not a label map")
    if d.get("kind") == "regression":
        return RealTargets()
    if d.get("kind") == "novelty":
        return NoveltyVerdicts()
    if d.get("kind") == "multiclass":
        values = d.get("values")
        if not isinstance(values, list):
            raise ValueError("labels: values is not a list")
        return MulticlassLabels([_number("value", v) for v in values], _spellings(d))
    if d.get("kind", "binary") != "binary":
        raise ValueError(f"labels: kind {d.get('kind')!r} is neither binary nor multiclass")
    return BinaryLabels(
        _number("negative", d.get("negative"), True), _number("positive", d.get("positive"), True), _spellings(d)
    )
