"""River's BudgetRegressor (budgetcli.river)."""

from __future__ import annotations


import numpy as np
from river import base

from ..io.arrays import checked_labels
from ..base.core import KernelSpec
from ..learning.labels import (
    RealTargets,
)
from ..model.model import Model

from .learner import RiverLearner, row_chunk


class BudgetRegressor(RiverLearner, base.MiniBatchRegressor):
    """Budgeted online kernel regressor for River (`budgetlearn train --task regression`); `algorithm` is
    any of `budgetlearn algorithms` that learns regression, None its default (krlst).  The parameters
    are the classifier's but for class_weight; `predict_one` is the score f(x) (0 before any learning,
    as River's regressors start), `learn_one(x, y, w)` one round of the filter on the real target y.
    `save` writes a model file that `budgetlearn predict`, `eval`, `info` and `train --resume` read, and
    `BudgetRegressor.load` reads back."""

    _task = "regression"

    def __init__(
        self,
        algorithm: str | None = None,
        *,
        kernel: str = KernelSpec.kind,
        gamma: float | None = KernelSpec.gamma,
        sigma: float | None = KernelSpec.sigma,
        degree: int = KernelSpec.degree,
        coef0: float = KernelSpec.coef0,
        rbf_exp: str = KernelSpec.exp,
        seed: int = 0,
        average: bool | None = None,
        **params,
    ):
        self._keep(algorithm, kernel, gamma, sigma, degree, coef0, rbf_exp, seed)
        self._settle(average, params)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"algorithm": "klms", "step_size": 0.2}
        yield {"algorithm": "norma", "budget": 20, "average": True}

    def _encode(self, labels: list) -> tuple[np.ndarray, None]:
        """The targets as float64 (a ValueError naming the first that is not a finite number)."""
        return checked_labels(labels, len(labels)), None

    def _label_map(self):
        return RealTargets()

    def _saved_labels(self) -> dict:
        return {}

    def _load_labels(self, extra: dict) -> None:
        pass

    def predict_one(self, x: dict) -> float:
        idx, val, _ = self._row(x)
        return float(self._scores(row_chunk(idx, val))[0])

    def predict_many(self, X):
        import pandas as pd

        chunk, _, _ = self._frame(X)
        return pd.Series(self._scores(chunk), index=X.index)

    def to_model(self) -> Model:
        """The learner as a budgetlearn regression Model, for the CLI."""
        if self.learner is None:
            raise ValueError("BudgetRegressor has learnt nothing yet: there is no model to save")
        return Model(self.learner, RealTargets(), self._hypothesis(), scaling=self.scaling)
