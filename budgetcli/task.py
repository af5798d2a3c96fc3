"""What a learning session learns: the task.  Classification is the one task so far; a task owns
what differs from one task to another, so that the loops over a session (session.py) never ask which
task they run:

- the algorithm a run takes when none is named (`choose`, from the first block of data);
- the targets: the label map a new model starts with (`label_map`) and how a chunk's labels become the
  learner's codes (`encode`, through that map);
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

    class Tally:
        """A run's label values and online mistakes (its own: a resumed model's counters started
        before it), and the warnings they give at its end."""

        def __init__(self, learner):
            self.labels: dict = {}  # label value -> examples
            self.mistakes_before = learner.counter("mistakes")

        def add(self, chunk) -> None:
            values, counts = unique(chunk.labels, return_counts=True)
            for v, c in zip(values.tolist(), counts.tolist()):
                self.labels[v] = self.labels.get(v, 0) + c

        @property
        def examples(self) -> int:
            return sum(self.labels.values())

        def mistakes(self, learner) -> int:
            return learner.counter("mistakes") - self.mistakes_before

        def warnings(self, online, written, sample) -> list[str]:
            """Warnings that the model may be no better than a constant (metrics.constant_warning and
            metrics.one_label_warning, eval's rules):
            - the online mistake rate of the `online` model over this run is not below the rate of always
              answering the run's most frequent label (the stream's majority-class error);
            - the `written` model predicts one label for every example of `sample` (a sample of the
              first block), which holds several."""
            right = self.examples - self.mistakes(online.learner)
            out = [constant_warning(right, self.labels, written.labels.spelling, online=True)]
            true = set(unique(sample.labels).tolist()) if sample is not None else set()
            if len(true) > 1:
                with np.errstate(all="ignore"):
                    predicted = written.predicted(written.scorer().decision_function(sample))
                out.append(one_label_warning(true, unique(predicted).tolist(), written.labels.spelling, len(sample)))
            return [w for w in out if w]


CLASSIFICATION = Classification()
