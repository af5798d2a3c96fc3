"""scikit-learn estimators around the budgetlearn learners (optional: pip install 'budgetlearn[sklearn]'):
BudgetClassifier, and BudgetRegressor for real targets (`budgetlearn train --task regression`).

    from budgetcli.sklearn import BudgetClassifier
    clf = BudgetClassifier().fit(X, y)                    # projectron++, or mc-projectron++ for 3+ classes
    clf = BudgetClassifier("rbp", budget=200, gamma=0.04).fit(X, y)
    clf.partial_fit(X_more, y_more)                       # online: goes on from where fit stopped
    clf.predict(X_test), clf.decision_function(X_test)
    clf.calibrate(X_held_out, y_held_out).predict_proba(X_test)
    BudgetClassifier.from_model("a9a.model")              # a model file `budgetlearn train` wrote
    reg = BudgetRegressor("klms", gamma=0.5).fit(X, y)    # y real; predict gives f(x), score R²
    BudgetRegressor.from_model("mg30.model")              # `budgetlearn train --task regression`'s
    BudgetOneClass(nu=0.05).fit(X_normal).predict(X)      # novelty detection: +1 normal, -1 novel

X is a numpy array or a scipy.sparse matrix (kept sparse: the learners store sparse support vectors);
its column j is the feature of index j + 1 of a data file, as scikit-learn's load_svmlight_file reads
a 1-based file, or of index j for a model `from_model` loads that learned from a 0-based file (one
holding index 0, as dump_svmlight_file writes by default: the model's `first_index`).  Algorithm
parameters are keyword arguments with their canonical names (`eta`, `budget`, `beta`, `lambda_`,
`cost`, ... as `budgetlearn algorithms` lists them); get_params /
set_params / clone see them like the fixed ones.  An unknown algorithm or a parameter the algorithm
does not take is a ValueError at fit time (scikit-learn validates in fit, not in __init__), and so
are settings that provably learn nothing, as `budgetlearn train` refuses them.

`fit` is `budgetlearn train` on the same examples: one TrainSpec, the same pipeline, the same blocks,
so the same decisions and the same model (`to_model`); its warnings (a model no better than a
constant, ...) are Python warnings.  Conventions:
- algorithm=None is train's default: projectron++ for two classes, mc-projectron++ for more.  Every
  algorithm works on two classes; a multiclass one on any number of classes, a binary one refuses a
  third class as train does.
- average=None predicts with the hypothesis `budgetlearn train` writes for the algorithm: the averaged one
  (1/T) Σ f_t (scikit-learn's SGDClassifier(average=True)), but for the learners that track drift (spa,
  rbp, bogd, bogd++: the last one); average=True with the averaged one, average=False with the last, f_T.
- class_weight is `train -w LABEL W`: {class: weight}, or "balanced" (n_samples / (n_classes ·
  count of the class) over fit's y, as scikit-learn's; partial_fit refuses it, as SGDClassifier's does);
  sample_weight in fit and partial_fit weighs each row, times its class's (0: the row is left out).  A
  weight is the cost of the row's update (`budgetlearn algorithms` says how each algorithm takes it; the
  others refuse weights).  A model that goes on learning keeps the class weights it was fitted with.
- threshold: predict gives classes_[1] where decision_function > threshold (two classes; 0 by default,
  `budgetlearn predict --threshold`, on scikit-learn's score, which is the learner's f or −f).
- `fit` makes `epochs` passes over X in the given order (nothing shuffled: a seeded run is
  reproducible); `partial_fit` makes one pass and keeps all state, exactly like `train --resume`.
  Classes may arrive mid-stream (through `classes=` or from y).
- Numeric classes are the model's label values (a model file keeps them), and so are string classes
  that spell a number as a data file's label does ('-1' is the label -1); other classes take the
  smallest whole numbers ≥ 0 no class takes, in order of arrival (labels.label_values).  Two
  classes: decision_function > 0 means `classes_[1]` (scikit-learn's convention), and it is the
  learner's f, negated when the learner's +1 class is `classes_[0]` (the larger class came first,
  alone).  More: one column per class of `classes_`.
- predict_proba exists once the model is calibrated (`calibrate` on held-out data, or a calibrated
  model file): Platt's sigmoid as `budgetlearn calibrate` fits it.
- gamma=None is train's default 1/k, k the number of features of the first block (the last column
  holding a non-zero), as LIBSVM's 1/#features; sigma is the alternative width exp(−‖x−y‖²/(2σ²)).
- rbf_exp is `train --rbf-exp`: how the rbf kernel's exp is computed ("vectorised", budgetlearn's own,
  or "libm", the C library's); `from_model` takes the model's own.
- scale=True is `train --scale`: `fit` scales every feature onto [−1, 1] by the ranges of X (svm-scale's,
  a missing value counting 0), which the model keeps and applies to every X it scores; `partial_fit` and
  a model file's classifier (`from_model`) keep their own ranges.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .run import pipeline
from .base import registry
from .base.core import DataError, KernelSpec, shortest_text
from .io.arrays import csr_chunk
from .wrappers import KernelSettings, learner_class
from .learning.labels import kept_spelling, label_values
from .learning.metrics import unseen_warning
from .model.model import Model

_CHECK = dict(accept_sparse="csr", dtype=np.float64)
ESTIMATORS = {
    "classification": "BudgetClassifier",
    "regression": "BudgetRegressor",
    "novelty": "BudgetOneClass",
}  # by task (task.py)


class _BudgetEstimator(KernelSettings):
    """What the classifier and the regressor share: the algorithm's keyword parameters as scikit-learn
    parameters, a fit that is `budgetlearn train` on a Chunk of the arrays (`_fit_chunk`), the fitted
    model (`to_model`), and the scores of X."""

    _learner = "learner_"
    _task = "classification"

    # ---- parameters ------------------------------------------------------------------------
    def _algorithm_params(self) -> dict:
        """The keyword parameters beyond the fixed ones: every attribute that is not a fitted one
        (trailing underscore, except the parameter `lambda_`) or private."""
        fixed = self._get_param_names()
        return {
            k: v
            for k, v in vars(self).items()
            if k not in fixed and not k.startswith("_") and (not k.endswith("_") or k in registry.params())
        }

    def get_params(self, deep=True):
        return super().get_params(deep) | self._algorithm_params()

    def set_params(self, **params):
        fixed = self._get_param_names()
        for name in [n for n in params if n not in fixed]:
            setattr(self, name, params.pop(name))
        return super().set_params(**params)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "learner_")

    def _forget(self) -> None:
        """Forget an earlier fit: every fitted attribute (trailing underscore, but the parameter lambda_)."""
        for name in [a for a in vars(self) if a.endswith("_") and a not in registry.params()]:
            delattr(self, name)

    def _fit_chunk(
        self, X, values, epochs: int, sample_weight, default: str, n_classes: int = 0, spellings=None, **spec
    ) -> Model:
        """`budgetlearn train` of the estimator's settings (and `spec`'s) on (X, values), going on from the
        fitted model if there is one (`default`: the algorithm when none is named, whose parameters are
        checked; a new classifier chooses it for its `n_classes`); the model, whose learner, label map and
        settings the estimator keeps.  train's warnings are Python warnings; a DataError is a ValueError."""
        learner_class(type(self).__name__, self.algorithm or default, self._algorithm_params())  # a bad name
        if self.epochs is not None and not (isinstance(self.epochs, (int, np.integer)) and self.epochs >= 1):
            raise ValueError(f"epochs={self.epochs!r}: give a whole number ≥ 1")
        resume = self.to_model() if self.__sklearn_is_fitted__() else None
        spec = self._train_spec(
            self._algorithm_params(),
            epochs=epochs,
            hypothesis=None if self.average is None else "running-average" if self.average else "online",
            scale=bool(self.scale) and resume is None,  # a fitted model goes on with its own scaling
            **spec,
        )
        if spec.algorithm is None and resume is None and n_classes:  # a fitted model goes on with its own
            spec = spec.choosing(n_classes)
        first_index = resume.first_index if resume is not None else 1
        chunk = csr_chunk(X, values, first_index=first_index, weights=sample_weight)
        if spellings:
            chunk.label_spellings = {v: s for v, s in spellings.items() if v in set(values.tolist())}
        try:
            result = pipeline.train(spec, chunk, resume)
        except DataError as exc:
            if "third label" in exc.reason:
                raise ValueError(f"Only binary classification is supported by {spec.algorithm}: {exc.reason}") from None
            raise ValueError(str(exc)) from None
        for message in result.warnings:
            warnings.warn(message, UserWarning, stacklevel=4)
        model = result.model
        self.learner_, self.labels_ = model.learner, model.labels
        self.hypothesis_, self.first_index_ = model.hypothesis, model.first_index
        self.calibration_ = None
        self.scaling_ = model.scaling
        self.class_weight_ = model.class_weight  # the model's, which partial_fit goes on with
        return model

    def to_model(self) -> Model:
        """The fitted model as budgetlearn's Model (save with .save(path); then the CLI's predict, eval,
        export, info, calibrate and train --resume use it)."""
        check_is_fitted(self)
        first_index = getattr(self, "first_index_", 1)  # an estimator pickled before the field: 1
        return Model(
            self.learner_,
            self.labels_,
            self.hypothesis_,
            calibration=getattr(self, "calibration_", None),
            first_index=first_index,
            scaling=getattr(self, "scaling_", None),
            class_weight=getattr(self, "class_weight_", {}),
        )

    @classmethod
    def _of_model(cls, model, **more):
        """A fitted estimator from a budgetlearn Model or model file, of the estimator's task (ValueError,
        one line, for a model of another task): its settings and its fitted state are the model's."""
        model = model if isinstance(model, Model) else _loaded(model)
        if model.task.name != cls._task:
            raise ValueError(
                f"{cls.__name__} takes a {cls._task} model; this one is a {model.task.name} model "
                f"(budgetcli.sklearn.{ESTIMATORS[model.task.name]}.from_model takes it)"
            )
        learner = model.learner
        kernel = learner.kernel.spec()
        if kernel.kind != "rbf":  # only rbf takes an exp (a file without the field: libm's)
            kernel = dataclasses.replace(kernel, exp=KernelSpec.exp)
        est = cls(
            learner.name,
            average=model.hypothesis == "running-average",
            seed=learner.seed,
            scale=model.scaling is not None,
            **more,
            **kernel.params(),
            **learner.hyper,
        )
        est.learner_, est.labels_, est.hypothesis_ = learner, model.labels, model.hypothesis
        est.first_index_ = model.first_index  # the model's numbering of X's columns (Model.first_index)
        est.calibration_, est.scaling_ = model.calibration, model.scaling
        est.class_weight_ = dict(model.class_weight)
        return est

    def _scores(self, X) -> np.ndarray:
        """The model's scores of X: f (binary model, regression) or one column per class, in the model's order."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, **_CHECK) if hasattr(self, "n_features_in_") else _matrix(X)
        return self.to_model().decision_function(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class BudgetClassifier(_BudgetEstimator, ClassifierMixin, BaseEstimator):
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
        X, y = validate_data(self, X, y, reset=True, **_CHECK)
        _check_classes(y)
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
        X, y = validate_data(self, X, y, reset=first, **_CHECK)
        _check_classes(y)
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
        from .api import calibrate

        check_is_fitted(self)
        X = validate_data(self, X, reset=False, **_CHECK) if hasattr(self, "n_features_in_") else _matrix(X)
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


class BudgetRegressor(_BudgetEstimator, RegressorMixin, BaseEstimator):
    """Budgeted online kernel regressor (`budgetlearn train --task regression`); `algorithm` is any of
    `budgetlearn algorithms` that learns regression (None: train's default for regression).  `predict`
    is the score f(x), as `budgetlearn predict` writes it; `score` is R² (scikit-learn's r2_score)."""

    _task = "regression"

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
        **params,
    ):
        self._keep(algorithm, kernel, gamma, sigma, degree, coef0, rbf_exp, seed)
        self.average, self.epochs, self.scale = average, epochs, scale
        for name, value in params.items():  # checked in fit: scikit-learn estimators do not raise here
            setattr(self, name, value)

    def fit(self, X, y, sample_weight=None):
        """Learn from scratch: `epochs` online passes over (X, y), in order, as `budgetlearn train --task
        regression`; each row weighed by `sample_weight`."""
        self._forget()
        X, y = validate_data(self, X, y, reset=True, y_numeric=True, **_CHECK)
        return self._train(X, y, int(self.epochs), sample_weight)

    def partial_fit(self, X, y, sample_weight=None):
        """One online pass over (X, y), continuing from the current state, exactly as `train --resume`."""
        X, y = validate_data(self, X, y, reset=not self.__sklearn_is_fitted__(), y_numeric=True, **_CHECK)
        return self._train(X, y, 1, sample_weight)

    def _train(self, X, y, epochs: int, sample_weight) -> "BudgetRegressor":
        y = np.asarray(column_or_1d(y), np.float64)
        self._fit_chunk(X, y, epochs, sample_weight, registry.DEFAULT["regression"], task="regression")
        return self

    @classmethod
    def from_model(cls, model) -> "BudgetRegressor":
        """A fitted regressor from a budgetlearn Model or a regression model file (`budgetlearn train
        --task regression`'s): it predicts as `budgetlearn predict` does, and partial_fit goes on learning
        as `train --resume`."""
        return cls._of_model(model)

    def predict(self, X):
        """f(x) of each row: the value `budgetlearn predict` writes (to its 10 digits)."""
        return self._scores(X)


class BudgetOneClass(_BudgetEstimator, OutlierMixin, BaseEstimator):
    """Budgeted online novelty detector, `budgetlearn train --task novelty` (scikit-learn's OneClassSVM and
    SGDOneClassSVM conventions): `fit(X)` learns from X alone (y is ignored), `predict` gives +1 (normal)
    or −1 (novel), `decision_function` the score f(x) − ρ (> 0: normal), `score_samples` the raw f(x), and
    `offset_` is ρ (decision_function = score_samples − offset_).  `algorithm` is a novelty learner of
    `budgetlearn algorithms` (None: norma-novelty); its parameters are keyword arguments (`nu`, `budget`,
    `step_size`, `norma_lambda`), as BudgetClassifier's.  `partial_fit` goes on learning as `train
    --resume`; `average`, `epochs`, `scale`, `sample_weight` and the kernel are BudgetClassifier's."""

    _task = "novelty"

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
        **params,
    ):
        self._keep(algorithm, kernel, gamma, sigma, degree, coef0, rbf_exp, seed)
        self.average, self.epochs, self.scale = average, epochs, scale
        for name, value in params.items():  # checked in fit: scikit-learn estimators do not raise here
            setattr(self, name, value)

    def fit(self, X, y=None, sample_weight=None):
        """Learn from scratch: `epochs` online passes over the rows of X, in order (y is ignored)."""
        self._forget()
        X = validate_data(self, X, reset=True, **_CHECK)
        return self._train(X, int(self.epochs), sample_weight)

    def partial_fit(self, X, y=None, sample_weight=None):
        """One online pass over the rows of X, continuing from the current state (y is ignored)."""
        X = validate_data(self, X, reset=not self.__sklearn_is_fitted__(), **_CHECK)
        return self._train(X, 1, sample_weight)

    def _train(self, X, epochs: int, sample_weight) -> "BudgetOneClass":
        cls = learner_class("BudgetOneClass", self.algorithm or registry.DEFAULT["novelty"], self._algorithm_params())
        if "novelty" not in cls.tasks:
            raise ValueError(f"BudgetOneClass: {cls.name} does not detect novelty (--task novelty)")
        model = self._fit_chunk(
            X, np.zeros(X.shape[0]), epochs, sample_weight, registry.DEFAULT["novelty"], task="novelty"
        )
        self.offset_ = model.hypothesis_learner().threshold()  # the hypothesis's ρ (averaged or last)
        return self

    @classmethod
    def from_model(cls, model) -> "BudgetOneClass":
        """A fitted detector from a budgetlearn novelty Model or model file (`train --task novelty`'s)."""
        detector = cls._of_model(model)
        detector.offset_ = detector.to_model().hypothesis_learner().threshold()
        return detector

    def decision_function(self, X):
        """The score g(x) = f(x) − ρ of each row: > 0 normal, ≤ 0 novel (`budgetlearn predict --scores`)."""
        return self._scores(X)

    def score_samples(self, X):
        """The raw score f(x) of each row (higher: more normal): decision_function + offset_."""
        return self._scores(X) + self.offset_

    def predict(self, X):
        """+1 (normal) where decision_function > 0, −1 (novel) elsewhere, as `budgetlearn predict` writes."""
        return self.to_model().predicted(self._scores(X)).astype(np.int64)


def _check_classes(y) -> None:
    """scikit-learn's check of classes, naming the regressor for real-valued targets."""
    if type_of_target(y) in ("continuous", "continuous-multioutput"):
        raise ValueError(
            "Unknown label type: continuous: y holds real values, which BudgetClassifier would take for as many "
            "classes; budgetcli.sklearn.BudgetRegressor learns real targets"
        )
    check_classification_targets(y)


def _loaded(path) -> Model:
    from .api import load

    return load(path)


def _matrix(X):
    import scipy.sparse as sp

    return X if sp.issparse(X) else np.asarray(X, np.float64)
