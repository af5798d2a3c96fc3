"""River's BudgetAnomalyDetector (budgetcli.river)."""

from __future__ import annotations


import numpy as np
from river import base

from ..base import registry
from ..base.core import KernelSpec
from ..learning.labels import (
    NoveltyVerdicts,
)
from ..model.model import Model

from .learner import RiverLearner, row_chunk


class BudgetAnomalyDetector(RiverLearner, base.AnomalyDetector):
    """Budgeted online novelty detector for River's anomaly API (`budgetlearn train --task novelty`):
    `learn_one(x)` is one round of the learner (norma-novelty by default; `algorithm` any novelty learner of
    `budgetlearn algorithms`), `score_one(x)` the anomaly score ρ − f(x) = −g(x), higher for what looks
    less like the stream so far: minus the score `budgetlearn predict --scores` writes for the model `save`
    writes, and above 0 exactly where predict writes −1 (novel) but at g = 0 (novel, score 0).  0 before any
    learning.  `learn_many(X)` learns a DataFrame's rows in one call (the same model as learn_one row by row).
    The parameters are the classifier's (`nu`, `budget`, `step_size`, `norma_lambda`, `average`, the kernel)
    but for class_weight, and `rho_fit`, whose default here is `learnt`: the hypothesis's own ρ, as the
    online learner holds it, where the CLI refits it (`--rho-fit recent`, algorithms/novelty.py) on the
    examples of the last 2,000 rounds, which after every example learnt would cost 2,000 kernel
    expansions per score; River's `anomaly.QuantileFilter(detector, q)` draws its own threshold from the
    scores (give rho_fit="recent" for the CLI's threshold).  `save` writes a model file that `budgetlearn
    predict`, `eval`, `export`, `info` and `train --resume` read, and `BudgetAnomalyDetector.load` reads back."""

    _task = "novelty"

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
        cls = registry.get(algorithm or registry.DEFAULT["novelty"])
        if "rho_fit" in {p.name for p in cls.params} and "rho_fit" not in params:
            params = {**params, "rho_fit": "learnt"}  # the docstring says why
        self._settle(average, params)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"nu": 0.2, "budget": 20, "average": False}

    def learn_one(self, x: dict) -> None:
        super().learn_one(x, 0.0)

    def learn_many(self, X) -> None:
        super().learn_many(X, np.zeros(len(X)))

    def _encode(self, labels: list) -> tuple[np.ndarray, None]:
        """No targets: the learner reads none."""
        return np.zeros(len(labels)), None

    def _label_map(self):
        return NoveltyVerdicts()

    def _saved_labels(self) -> dict:
        return {}

    def _load_labels(self, extra: dict) -> None:
        pass

    def score_one(self, x: dict) -> float:
        idx, val, _ = self._row(x)
        return float(-self._scores(row_chunk(idx, val))[0])

    def score_many(self, X):
        """score_one of every row of a DataFrame, as a Series."""
        import pandas as pd

        chunk, _, _ = self._frame(X)
        return pd.Series(-self._scores(chunk), index=X.index)

    def to_model(self) -> Model:
        """The learner as a budgetlearn novelty Model, for the CLI."""
        if self.learner is None:
            raise ValueError("BudgetAnomalyDetector has learnt nothing yet: there is no model to save")
        return Model(self.learner, NoveltyVerdicts(), self._hypothesis(), scaling=self.scaling)
