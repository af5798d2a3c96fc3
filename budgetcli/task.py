"""What a learning session learns: the task.  Classification is the one task so far; a task owns
what differs from one task to another, so that the loops over a session (session.py) never ask which
task they run:

- the algorithm a run takes when none is named (`choose`, from the first block of data);
- the targets: the label map a new model starts with (`label_map`) and how a chunk's labels become the
  learner's codes (`encode`, through that map), and each example's weight (`weights`: its class's times
  its own);
- what a run counts besides the learner's counters and what it warns of at its end (`Tally`).

Regression and novelty detection will be tasks beside this one, each with the same four parts."""

from __future__ import annotations

import numpy as np

from .core import unique
from .labels import BinaryLabels, MulticlassLabels
from .metrics import constant_warning, one_label_warning


class Classification:
    """Labels are classes: two (the binary learners' ±1) or more (class indices 0, 1, ...)."""

    name = "classification"

    @staticmethod
    def choose(spec, chunk):
        """The run's spec with its algorithm: the one it names, else the default for the number of
        labels of the first block (registry.DEFAULT)."""
        return spec.choosing(len(unique(chunk.labels)))

    @staticmethod
    def label_map(learner_cls):
        """The empty label map of a new model: its labels are numbered as they first appear."""
        return MulticlassLabels() if learner_cls.multiclass else BinaryLabels()

    @staticmethod
    def encode(model, chunk, source: str) -> np.ndarray:
        """The learner's codes of a chunk's labels (DataError naming the first line the map refuses)."""
        return model.labels.encode(chunk, source)

    @staticmethod
    def weights(model, chunk) -> np.ndarray | None:
        """Each example's weight, its class's (`train -w`: label value -> weight, the model's class_weight)
        times its own (chunk.weights, a sample weight); None when the chunk has neither."""
        weights = None if chunk.weights is None else np.asarray(chunk.weights, np.float64)
        for label, w in model.class_weight.items():
            where = chunk.labels == label
            if where.any():
                weights = np.ones(len(chunk)) if weights is None else weights.copy()
                weights[where] *= w
        return weights

    class Tally:
        """A run's label values (label -> examples), and the warnings the run gives at its end."""

        def __init__(self):
            self.labels: dict = {}

        def add(self, chunk) -> None:
            values, counts = unique(chunk.labels, return_counts=True)
            for v, c in zip(values.tolist(), counts.tolist()):
                self.labels[v] = self.labels.get(v, 0) + c

        @property
        def examples(self) -> int:
            return sum(self.labels.values())

        def warnings(self, online, written, sample) -> list[str]:
            """That the `written` model may be no better than a constant (`outcome_warnings`, on `sample`, a
            Chunk kept from the run's examples), and that a class weight names a label the run never met."""
            return outcome_warnings(written, sample) + class_weight_warnings(
                online.class_weight, self.labels, online.labels.spelling
            )


def outcome_warnings(model, sample) -> list[str]:
    """Warnings that the model a run writes may be no better than a constant (metrics.constant_warning and
    metrics.one_label_warning, eval's rules), from its predictions on `sample` (a Chunk kept from the
    run's examples, pipeline.Reservoir), which holds several labels: its accuracy there (weighted by the
    examples' weights when the run has any) is not above always answering the sample's most frequent
    (heaviest) label; or it predicts one label for every example."""
    if sample is None:
        return []
    with np.errstate(all="ignore"):
        predicted = model.predicted(model.scorer().decision_function(sample))
    weights = Classification.weights(model, sample)
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


CLASSIFICATION = Classification()
