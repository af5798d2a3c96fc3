"""scikit-learn's BudgetRegressor (budgetcli.sklearn)."""

from __future__ import annotations


import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import column_or_1d, validate_data

from ..base import registry
from ..base.core import KernelSpec

from .estimator import CHECK, BudgetEstimator


class BudgetRegressor(BudgetEstimator, RegressorMixin, BaseEstimator):
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
        X, y = validate_data(self, X, y, reset=True, y_numeric=True, **CHECK)
        return self._train(X, y, int(self.epochs), sample_weight)

    def partial_fit(self, X, y, sample_weight=None):
        """One online pass over (X, y), continuing from the current state, exactly as `train --resume`."""
        X, y = validate_data(self, X, y, reset=not self.__sklearn_is_fitted__(), y_numeric=True, **CHECK)
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
