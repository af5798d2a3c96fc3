"""scikit-learn's BudgetClassifier (budgetcli.sklearn)."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from ..base import registry
from ..base.core import KernelSpec, shortest_text
from ..learning.labels import kept_spelling, label_values
from ..learning.metrics import unseen_warning

from .estimator import CHECK, BudgetEstimator, check_classes, as_matrix


class BudgetClassifier(BudgetEstimator, ClassifierMixin, BaseEstimator):
    """Budgeted online kernel classifier; `algorithm` is any of `budgetlearn algorithms` (None: train's
    default for the number of classes)."""

    def __init__(
        self,
        algorithm=None,
        *,
        average=None,
        kernel=KernelSpec.kind,
        gamma=KernelSpec.gamma,
        sigma=KernelSpec.sigma,
        degree=KernelSpec.degree,
        coef0=KernelSpec.coef0,
        rbf_exp=KernelSpec.exp,
        seed=0,
        epochs=1,
        scale=False,
        class_weight=None,
        threshold=0.0,
        **params,
    ):
        self._keep(algorithm, kernel, gamma, sigma, degree, coef0, rbf_exp, seed)
        self.average, self.epochs, self.scale = average, epochs, scale
        self.class_weight, self.threshold = class_weight, threshold
        for name, value in params.items():  # checked in fit: scikit-learn estimators do not raise here
            setattr(self, name, value)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a binary algorithm refuses a third class, as train does; the default and the multiclass ones take any
        try:
            tags.classifier_tags.multi_class = self.algorithm is None or registry.get(self.algorithm).multiclass
        except ValueError:  # an unknown name: fit says so
            pass
        return tags

    # ---- learning --------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Learn from scratch: `epochs` online passes over (X, y), in order, as `budgetlearn train`; each row
        weighed by `sample_weight` (times its class's, `class_weight`)."""
        self._forget()
        X, y = validate_data(self, X, y, reset=True, **CHECK)
        check_classes(y)
        classes = np.unique(y)
        if len(classes) < 2:
            raise ValueError(
                f"BudgetClassifier.fit needs 2 classes in y; got 1 class ({classes.tolist()}) "
                "(partial_fit accepts one class at a time)"
            )
        self._start(classes)
        self._train(X, y, int(self.epochs), len(classes), sample_weight, self._class_weights(y))
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One online pass over (X, y), continuing from the current state; classes may arrive mid-stream."""
        first = not self.__sklearn_is_fitted__()
        X, y = validate_data(self, X, y, reset=first, **CHECK)
        check_classes(y)
        known = np.unique(np.concatenate([np.asarray(classes).ravel(), y])) if classes is not None else np.unique(y)
        if first:
            if isinstance(self.class_weight, str):
                raise ValueError(
                    f"class_weight={self.class_weight!r} is not supported for partial_fit: it needs the whole y; "
                    "give the weights (sklearn.utils.class_weight.compute_class_weight on a large enough "
                    "sample of y) as a dict"
                )
            self._start(known)
        else:
            self._add_classes(known)
        self._train(X, y, 1, len(known), sample_weight, self._class_weights(y) if first else None)
        return self

    def _class_weights(self, y) -> dict:
        """class_weight as TrainSpec.class_weight takes it: label value -> weight (those of classes not
        known: a ValueError, as scikit-learn's)."""
        if self.class_weight is None:
            return {}
        if isinstance(self.class_weight, str):
            if self.class_weight != "balanced":
                raise ValueError(f"class_weight={self.class_weight!r}: give a dict, 'balanced' or None")
            labels = column_or_1d(y).tolist()
            counts = {c: labels.count(c) for c in self.classes_.tolist()}
            present = [c for c in counts if counts[c]]
            return {self._values[c]: len(labels) / (len(present) * counts[c]) for c in present}
        unknown = [c for c in self.class_weight if c not in self._values]
        if unknown:
            raise ValueError(f"class_weight names {unknown}, not classes of y ({self.classes_.tolist()})")
        return {self._values[c]: w for c, w in self.class_weight.items()}

    def _start(self, classes) -> None:
        self.classes_ = np.asarray(classes)
        self._numeric = self.classes_.dtype.kind in "iufb"
        self._values = label_values(self.classes_.tolist())  # the model's label value of each class

    def _add_classes(self, known) -> None:
        new = [c for c in known.tolist() if c not in self._values]
        if not new:
            return
        self._values = label_values(new, self._values)
        self.classes_ = np.unique(np.concatenate([self.classes_, np.asarray(new, dtype=self.classes_.dtype)]))

    def _spellings(self) -> dict:
        """The label spellings a model file keeps: a number's shortest text, another class as written
        (labels.kept_spelling)."""
        return {v: shortest_text(v) if self._numeric else kept_spelling(v, str(c)) for c, v in self._values.items()}

    def _train(self, X, y, epochs: int, n_classes: int, sample_weight, class_weight: dict | None) -> None:
        values = np.array([self._values[c] for c in column_or_1d(y).tolist()], np.float64)
        self._fit_chunk(
            X,
            values,
            epochs,
            sample_weight,
            registry.default_for(n_classes),
            n_classes,
            self._spellings(),
            class_weight=class_weight or {},  # None: a fitted model goes on with its own (TrainSpec.resuming)
        )

    # ---- prediction ------------------------------------------------------------------------
    @classmethod
    def from_model(cls, model) -> "BudgetClassifier":
        """A fitted classifier from a budgetlearn Model or model file (`budgetlearn train`'s): it predicts
        as `budgetlearn predict` does, and partial_fit goes on learning as `train --resume`."""
        clf = cls._of_model(model, class_weight=None)
        clf.class_weight = dict(clf.class_weight_) or None
        clf._start(np.array(sorted(clf.labels_.classes), np.float64))
        return clf

    def _columns(self) -> np.ndarray:
        """For each class of classes_, its column in a multiclass model's scores (−1: never learnt)."""
        index = {v: i for i, v in enumerate(self.labels_.classes)}
        return np.array([index.get(self._values[c], -1) for c in self.classes_.tolist()])

    def decision_function(self, X):
        """Two classes: scores whose sign gives the class (> 0: classes_[1]).  More: n × classes, one
        column per class of classes_ (the highest wins)."""
        f = self._scores(X)
        if self.learner_.multiclass:
            columns = self._columns()
            out = np.where(columns >= 0, f[:, np.maximum(columns, 0)] if f.shape[1] else 0.0, -np.inf)
            return out[:, 1] - out[:, 0] if len(self.classes_) == 2 else out
        return self._sign() * f

    def _sign(self) -> float:
        """+1 when the learner's +1 class is classes_[1] (scikit-learn's positive class), else −1."""
        positive = self.labels_.positive
        return 1.0 if positive is None or positive == self._values[self.classes_[-1]] else -1.0

    def predict(self, X):
        """The class of each row: the top score's, or for two classes classes_[1] where decision_function >
        `threshold` (0: the label budgetlearn predict writes)."""
        if self.threshold != 0:
            if len(self.classes_) != 2:
                raise ValueError(f"threshold={self.threshold!r} is for two classes; there are {len(self.classes_)}")
            if not np.isfinite(self.threshold):
                raise ValueError(f"threshold={self.threshold!r}: give a finite number")
            # on scikit-learn's score (the learner's f, or −f when its +1 class is classes_[0])
            return np.where(self.decision_function(X) > self.threshold, self.classes_[1], self.classes_[0])
        f = self._scores(X)
        labels = self.to_model().predicted(f)  # the label values budgetlearn predict writes
        by_value = {v: c for c, v in self._values.items()}
        return np.array([by_value[v] for v in labels.tolist()], dtype=self.classes_.dtype)

    def calibrate(self, X, y) -> "BudgetClassifier":
        """Fit the probabilities on held-out (X, y), as `budgetlearn calibrate`: predict_proba then answers."""
        from ..api import calibrate

        check_is_fitted(self)
        X = validate_data(self, X, reset=False, **CHECK) if hasattr(self, "n_features_in_") else as_matrix(X)
        y = column_or_1d(y).tolist()
        values = np.array([self._values.get(c, np.nan) for c in y], np.float64)
        known = ~np.isnan(values)
        unseen = {c: y.count(c) for c in dict.fromkeys(c for c in y if c not in self._values)}
        message = unseen_warning(unseen, set(), str, [str(c) for c in self.classes_], "they are left out of the fit")
        if message:  # as budgetlearn calibrate and budgetcli.calibrate warn of labels the model never saw
            warnings.warn(message, UserWarning, stacklevel=2)
        model = calibrate(self.to_model(), X[known], values[known])
        self.calibration_ = model.calibration
        return self

    def _calibrated(self):
        return getattr(self, "calibration_", None) is not None

    @available_if(_calibrated)
    def predict_proba(self, X):
        """Class probabilities, one column per class of classes_ (a calibrated model only)."""
        p = self.to_model().probabilities(self._scores(X))
        model_classes = self.labels_.classes  # binary: (−1 label, +1 label); multiclass: the model's order
        where = {v: i for i, v in enumerate(model_classes)}
        return np.column_stack([p[:, where[self._values[c]]] for c in self.classes_.tolist()])
