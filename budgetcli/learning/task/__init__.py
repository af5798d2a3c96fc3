"""What a learning session learns: the task (LIBSVM's svm_type), classification or regression; a task
owns what differs from one task to another, so that the loops over a session (session.py) never ask
which task they run:

- the algorithm a run takes when none is named (`choose`, from the first block of data);
- the targets: the label map a new model starts with (`label_map`) and how a chunk's labels become the
  learner's codes (`encode`, through that map), and each example's weight (`weights`: its class's times
  its own);
- what a run counts besides the learner's counters and what it warns of at its end (`Tally`);
- eval's report of a model on data (`evaluate`, `print_report`), and whether a score is the prediction
  itself (`score_is_prediction`: predict --scores then writes it once);
- how held-out examples are scored (`tally`: tune's --test and --folds, `train -v`), what `train -v K`
  reports (`cross_validation`, `cross_validation_lines`, `fold_text`) and tune's figures (`TUNE`);
- the online error of `train --curve` (`CURVE`, `curve_error`) and how `plot` draws it (`CURVE_AXIS`).

and what a run's summary counts (`summary`, `summary_lines`).  A learner declares the tasks it learns
(contract.Learner.tasks); a model file says its task in its header ("task"; a file without it is a
classification model's).  Novelty detection (`Novelty`, LIBSVM's one_class) learns from unlabelled lines
(`labelled` False: a line may leave its label out)."""

from __future__ import annotations

from ..targets import NoveltyVerdicts, RealTargets
from .classification import Classification, class_weight_warnings, outcome_warnings
from .novelty import Novelty
from .regression import Regression
from .scalars import ABSOLUTE_ERROR, RHO, RHO_SUM, SQUARED_ERROR, TARGET_SUM

__all__ = [
    "ABSOLUTE_ERROR",
    "RHO",
    "RHO_SUM",
    "SQUARED_ERROR",
    "TARGET_SUM",
    "Classification",
    "Regression",
    "Novelty",
    "CLASSIFICATION",
    "REGRESSION",
    "NOVELTY",
    "TASKS",
    "named",
    "of_targets",
    "outcome_warnings",
    "class_weight_warnings",
]

CLASSIFICATION = Classification()
REGRESSION = Regression()
NOVELTY = Novelty()
TASKS = {"classification": CLASSIFICATION, "regression": REGRESSION, "novelty": NOVELTY}


def named(name: str | None):
    """The task of a name (None: classification, a file's or a spec's that says none)."""
    return TASKS[name or "classification"]


def of_targets(labels):
    """The task whose targets a model's label map holds."""
    if isinstance(labels, NoveltyVerdicts):
        return NOVELTY
    return REGRESSION if isinstance(labels, RealTargets) else CLASSIFICATION
