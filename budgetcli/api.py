"""budgetlearn from Python: a training run is a `TrainSpec`; `train` makes its model from a file or
from arrays, `load` reads a model file (the CLI's, or one written here), a `Model` predicts on arrays
and saves, `predictions` are its labels (a regression model's values) for a file (lines with or without
labels) or arrays, `accuracy` scores a classifier on a file or on arrays, `evaluate` gives `budgetlearn
eval`'s report of any model.  The scikit-learn and River classes
(sklearn/, river/) are edges over the same pieces.  `import budgetcli` gives these names without
loading numpy or numba until one is used.

Arrays: X is numpy or scipy.sparse, its column j the feature of index j + 1 in a data file (a model
learned from a 0-based file, whose features start at index 0: j; `Model.first_index`); y holds
the label values (numbers, as a data file's labels: two of them for a binary algorithm).  Messages
about a row name it `X:ROW` (1-based), as a file's name `FILE:LINE`.  docs/PYTHON.md has examples.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np

from .learning import metrics, task as task_
from .run import pipeline
from .base.core import Chunk, DataError, KernelSpec, shortest_text, unique  # noqa: F401  (names of the API)
from .model.model import Model
from .model.spec import Sharding, TrainSpec  # noqa: F401


def train(spec: TrainSpec, data, y=None, resume: Model | None = None, sample_weight=None) -> Model:
    """The model `spec` makes from `data`: a path (str or PathLike; '-' for standard input; the inputs
    of `spec.sharding` when it has one), or an array X with its labels y.  `resume`: a model to go on
    from (its own algorithm, kernel, parameters and state).  `sample_weight`: each row's weight (≥ 0; 0
    leaves the row out), with arrays, times its class's (`spec.class_weight`): the cost of its update
    (`budgetlearn algorithms` says how each algorithm takes it; the others refuse weights).  Raises
    DataError (a ValueError naming the line or row) on bad data, ValueError on bad settings.  The
    warnings of train's summary (a model no better than a constant, ...) are Python warnings.  A task
    that reads no labels (`spec.task` "novelty") takes an array X without y."""
    arrays = spec.sharding is None and not isinstance(data, (str, os.PathLike))  # a sharded run reads its inputs
    if y is None and arrays and not task_.named(spec.task).labelled:
        y = np.zeros(np.shape(data)[0])  # never read
    if sample_weight is not None and y is None:
        raise TypeError("sample_weight is for arrays X and y (a file's lines have no weights; class weights: spec)")
    if spec.sharding is not None:
        from .run import distributed

        result = distributed.train(spec, resume)
    else:
        if y is not None:
            data = _chunk(data, y, resume.first_index if resume is not None else 1, sample_weight)
        elif not isinstance(data, (str, os.PathLike)):
            raise TypeError("give data as a path, or as an array X with its labels y")
        result = pipeline.train(spec, data if isinstance(data, Chunk) else os.fspath(data), resume)
    for message in result.warnings:  # train's summary warnings (a model no better than a constant, ...)
        warnings.warn(message, UserWarning, stacklevel=2)
    return result.model


def load(path) -> Model:
    """A model file (budgetlearn's format), ready to predict and to go on learning (`train(spec, data,
    resume=model)`).  Raises modelfile.ModelFileError naming the file for anything that is not a whole,
    valid model file."""
    return Model.load(path, resume=True)


def predictions(model: Model, data, threshold: float = 0.0) -> np.ndarray:
    """The label values the model predicts for `data`: a path (whose lines may leave out their label,
    as `budgetlearn predict` reads them: `1:1 5:1`), or an array X, as `Model.predict`; a binary model's
    +1 label where its score f > `threshold` (`predict --threshold`).  Raises DataError naming the line on
    bad data, ValueError for a threshold of a multiclass model."""
    model.check_threshold(threshold)
    if not isinstance(data, (str, os.PathLike)):
        return model.predict(data, threshold)
    out = [model.predicted(f, threshold) for _, f in pipeline.scores(model, os.fspath(data), labels=False)]
    return np.concatenate(out) if out else np.zeros(0)


def accuracy(model: Model, data, y=None) -> float:
    """The share of examples of `data` (a path, or an array X with labels y) whose label the model
    predicts, as `budgetlearn eval` counts it (a label the model never saw is always wrong), with
    eval's warnings as Python warnings (labels the model never saw, no better than a constant).  A
    regression model is a ValueError: `evaluate` gives its errors."""
    model.refuse_task("accuracy (the share of right labels; evaluate() reports a regression's errors)")
    blocks, source = _blocks(model, data, y)
    tally = metrics.PredictionTally(model.labels)
    for chunk, scores in blocks:
        tally.add(chunk.labels, scores)
    for message in tally.warnings():
        warnings.warn(message, UserWarning, stacklevel=2)
    return tally.accuracy(source)


def evaluate(model: Model, data, y=None, skip_bad_lines: bool = False, normal_label: float | None = None) -> dict:
    """The report `budgetlearn eval --json` prints for `data` (a path, or an array X with labels y): its
    model's task's (learning/task): accuracy, per-class figures, AUC and confusion matrix of a classification
    model; MSE, RMSE, MAE, R² and the training mean's baseline of a regression one; the AUC, the flagged
    fraction and the precision and recall of the flagged examples of a novelty one, whose examples labelled
    `normal_label` (default 1, as `eval --normal-label`) are normal; its "warnings" too.
    Raises DataError on bad data, ValueError when there is no example or `normal_label` does not apply."""
    given = {}
    if normal_label is not None:
        if model.task.name != "novelty":
            raise ValueError(f"normal_label is for a novelty model; this one is a {model.task.name} model")
        if not math.isfinite(normal_label):
            raise ValueError(f"normal_label must be a finite number, not {normal_label!r}")
        given["normal_label"] = float(normal_label)
    blocks, source = _blocks(model, data, y, skip_bad_lines)
    try:
        return model.task.evaluate(model, blocks, **given)
    except DataError:
        raise
    except ValueError as exc:  # no examples
        raise DataError(source, 0, None, str(exc)) from None


def calibrate(model: Model, data, y=None, skip_bad_lines: bool = False) -> Model:
    """The model with probabilities fitted on held-out data (a path, or an array X with labels y):
    Platt's sigmoid, pairwise coupled for several classes (calibration.py).  Examples whose label the
    model never saw are left out.  The model predicts as before; `predict_proba` then answers.  What
    `budgetlearn calibrate` warns of (labels the model never saw, classes without or with few held-out
    examples, a sigmoid that does not grow with the score: calibration.calibrate_model) are Python
    warnings.  Raises DataError on bad data, ValueError when the data do not hold two of the model's
    classes."""
    for message in fit_calibration(model, data, y, skip_bad_lines):
        warnings.warn(message, UserWarning, stacklevel=2)
    return model


def fit_calibration(model: Model, data, y=None, skip_bad_lines: bool = False) -> list[str]:
    """`calibrate`'s fit, returning its warnings (for the command, which prints them)."""
    from .model import calibration

    model.refuse_task("calibrate (probabilities of classes)")
    return calibration.calibrate_model(model, _blocks(model, data, y, skip_bad_lines)[0])


def _blocks(model: Model, data, y=None, skip_bad_lines: bool = False) -> tuple:
    """((chunk, scores) pairs of `data`, a path or an array X with labels y; its name in messages)."""
    if y is not None:
        chunk = _chunk(data, y, model.first_index)
        return [(chunk, model.scorer().decision_function(chunk))], "X"
    source = os.fspath(data)
    return pipeline.scores(model, source, skip_bad_lines=skip_bad_lines), source


def _chunk(X, y, first_index: int, sample_weight=None) -> Chunk:
    """The Chunk of arrays X and y (and the rows' weights), X's column j the feature of index j + first_index
    (Model.first_index)."""
    from .io.arrays import csr_chunk

    chunk = csr_chunk(X, y, first_index=first_index, weights=sample_weight)
    chunk.label_spellings = {float(v): shortest_text(v) for v in unique(chunk.labels)}
    return chunk
