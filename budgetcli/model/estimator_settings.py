"""The settings the scikit-learn and River classes (sklearn/, river/) take as keyword arguments, made into
the model's specification: their settings and pickling (`KernelSettings`, a TrainSpec of them) and checking
an algorithm's parameters (`learner_class`).  Neither scikit-learn nor River is imported here, so each class
needs only its own library."""

from __future__ import annotations

import numpy as np

from ..base import registry
from ..base.core import KernelSpec
from ..learning import algorithms  # noqa: F401  (algorithms: registered for lookups)
from .spec import TrainSpec


def learner_class(owner: str, algorithm: str, params: dict) -> type:
    """The learner class of `algorithm`, after checking `params`: an unknown algorithm, a name that
    no algorithm takes, a parameter this one does not take or a bad value is a ValueError."""
    cls = registry.get(algorithm)
    unknown = sorted(set(params) - set(registry.params()))
    if unknown:
        raise ValueError(
            f"{owner} has no parameter {', '.join(unknown)}; the algorithms' parameters "
            f"are: {', '.join(sorted(registry.PARAMS))}"
        )
    cls.resolve_params(params)
    return cls


class KernelSettings:
    """What the scikit-learn and River classes share: the settings every algorithm takes (the algorithm,
    the kernel's numbers as KernelSpec names them, the seed), kept as given, the TrainSpec they make
    (checked there, as `budgetlearn train` checks its options), and pickling the learner through its
    own state (plain arrays and JSON), not its live buffers, so the unpickled copy owns fresh writable
    arrays however it is loaded (joblib may memory-map them read-only).  `_learner` names the
    attribute each class keeps its learner in."""

    _learner = "learner"

    def _keep(self, algorithm, kernel, gamma, sigma, degree, coef0, rbf_exp, seed) -> None:
        self.algorithm, self.kernel, self.gamma, self.sigma = algorithm, kernel, gamma, sigma
        self.degree, self.coef0, self.rbf_exp, self.seed = degree, coef0, rbf_exp, seed

    def _train_spec(self, params: dict, **more) -> TrainSpec:
        return TrainSpec(self.algorithm, KernelSpec.from_params(vars(self)), params, self.seed, **more)

    def __getstate__(self):
        state = dict(vars(self))
        state.pop("_learning", None)  # River's session over the learner: made again from it
        learner = state.pop(self._learner, None)
        state["_learner_state"] = None if learner is None else (type(learner).name, learner.state())
        return state

    def __setstate__(self, state):
        state = dict(state)
        saved = state.pop("_learner_state", None)
        vars(self).update(state)
        if saved is not None:
            name, (header, arrays) = saved
            learner = registry.get(name).from_state(header, {k: np.array(v) for k, v in arrays.items()})
            setattr(self, self._learner, learner)
        elif not self._learner.endswith("_"):  # River's: None before it learns; scikit-learn's: absent until fit
            setattr(self, self._learner, None)
