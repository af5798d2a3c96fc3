"""The targets of the tasks without classes (learning/task): regression's real numbers (`RealTargets`),
novelty detection's verdicts (`NoveltyVerdicts`).  They stand where a classification model keeps its label
map (labels.py), and a model file stores them the same way (labels.labels_from_dict reads them back)."""

from __future__ import annotations

import numpy as np

from ..base.core import DataError


class _Classless:
    """What the label maps of the tasks without classes share (regression's, novelty's): no class, no
    spelling kept, and a model file's map is its `kind`, which must be its task's and its learner's."""

    kind = what = ""  # the task's name, and what the map holds (for messages)

    def __init__(self):
        self.spellings: dict = {}  # none: what is written is a number of the model's

    def index_of(self, values: np.ndarray) -> np.ndarray:
        return np.full(np.shape(values), -1)

    @property
    def classes(self) -> list[float]:
        return []

    def to_dict(self) -> dict:
        return {"kind": self.kind}

    def check(self, learner_cls, header: dict) -> None:
        """ValueError when a model file pairs the map with a learner, or a task, other than its own."""
        if self.kind not in learner_cls.tasks:
            raise ValueError(f"labels: {self.what} for {learner_cls.name}, which does not do {self.kind}")
        if header.get("task") != self.kind:
            raise ValueError(f"labels: {self.what} in a model whose task is not {self.kind}")


class RealTargets(_Classless):
    """A regression model's targets: real numbers, learnt as they are (no map), predicted as the score
    itself and written `%.10g`.  (The mean of the training targets, eval's baseline, is summed by the
    learner as it learns: task.Regression.training_mean.)"""

    kind, what = "regression", "real targets"

    def encode(self, chunk, source: str = "data") -> np.ndarray:
        """The targets as the learner takes them; a non-finite one is a DataError naming its line (the
        reader refuses them; arrays from the Python API come here too)."""
        y = np.asarray(chunk.labels, np.float64)
        bad = np.flatnonzero(~np.isfinite(y))
        if len(bad):
            row = int(bad[0])
            raise DataError(source, int(chunk.line_numbers[row]), None, "the target is not a finite number")
        return y

    def spelling(self, v: float, chunk=None) -> str:
        return f"{v:.10g}"

    def predicted(self, scores: np.ndarray, threshold: float = 0.0) -> np.ndarray:
        """A regression model predicts its score f(x) itself."""
        return np.asarray(scores, np.float64)

    def decode(self, scores: np.ndarray, threshold: float = 0.0) -> list[str]:
        return [f"{s:.10g}" for s in np.asarray(scores, np.float64).tolist()]


class NoveltyVerdicts(_Classless):
    """A novelty detector's targets (`--task novelty`, LIBSVM's one_class): none.  The labels of the lines it
    learns from, when they have any, are ignored (a line may leave its label out: `1:0.5 2:1`, read as
    predict reads it); a score g(x) = f(x) − ρ is predicted +1 (normal) where g > threshold (0 unless
    `predict --threshold` says) and −1 (novel) elsewhere, as LIBSVM's svm-predict writes them.  `eval`
    reads labels again, to say which examples are normal (task.Novelty)."""

    kind, what = "novelty", "novelty verdicts"

    def encode(self, chunk, source: str = "data") -> np.ndarray:
        """Zeros: what the learner is given in place of labels it never reads (a missing label is NaN)."""
        return np.zeros(len(chunk), np.float64)

    def spelling(self, v: float, chunk=None) -> str:
        return f"{v:g}"

    def predicted(self, scores: np.ndarray, threshold: float = 0.0) -> np.ndarray:
        """+1 (normal) where g(x) > threshold, −1 (novel) elsewhere."""
        return np.where(np.asarray(scores, np.float64) > threshold, 1.0, -1.0)

    def decode(self, scores: np.ndarray, threshold: float = 0.0) -> list[str]:
        return ["1" if s > threshold else "-1" for s in np.asarray(scores, np.float64).tolist()]
