"""What scikit-learn's BudgetClassifier, BudgetRegressor and BudgetOneClass share (budgetcli.sklearn): the
parameters, the fit that is `budgetlearn train` on the arrays, the fitted model, the scores."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..run import pipeline
from ..base import registry
from ..base.core import DataError, KernelSpec
from ..io.arrays import csr_chunk
from ..model.estimator_settings import KernelSettings, learner_class
from ..model.model import Model


CHECK = dict(accept_sparse="csr", dtype=np.float64)
ESTIMATORS = {
    "classification": "BudgetClassifier",
    "regression": "BudgetRegressor",
    "novelty": "BudgetOneClass",
}  # by task (learning/task)


class BudgetEstimator(KernelSettings):
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
        model = model if isinstance(model, Model) else loaded_model(model)
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
        X = validate_data(self, X, reset=False, **CHECK) if hasattr(self, "n_features_in_") else as_matrix(X)
        return self.to_model().decision_function(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def check_classes(y) -> None:
    """scikit-learn's check of classes, naming the regressor for real-valued targets."""
    if type_of_target(y) in ("continuous", "continuous-multioutput"):
        raise ValueError(
            "Unknown label type: continuous: y holds real values, which BudgetClassifier would take for as many "
            "classes; budgetcli.sklearn.BudgetRegressor learns real targets"
        )
    check_classification_targets(y)


def loaded_model(path) -> Model:
    from ..api import load

    return load(path)


def as_matrix(X):
    import scipy.sparse as sp

    return X if sp.issparse(X) else np.asarray(X, np.float64)
