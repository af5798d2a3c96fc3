"""scikit-learn's BudgetOneClass (budgetcli.sklearn)."""

from __future__ import annotations


import numpy as np
from sklearn.base import BaseEstimator, OutlierMixin
from sklearn.utils.validation import validate_data

from ..base import registry
from ..base.core import KernelSpec
from ..model.estimator_settings import learner_class

from .estimator import CHECK, BudgetEstimator


class BudgetOneClass(BudgetEstimator, OutlierMixin, BaseEstimator):
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
        X = validate_data(self, X, reset=True, **CHECK)
        return self._train(X, int(self.epochs), sample_weight)

    def partial_fit(self, X, y=None, sample_weight=None):
        """One online pass over the rows of X, continuing from the current state (y is ignored)."""
        X = validate_data(self, X, reset=not self.__sklearn_is_fitted__(), **CHECK)
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
