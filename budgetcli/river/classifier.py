"""River's BudgetClassifier (budgetcli.river)."""

from __future__ import annotations

import math

import numpy as np
from river import base
from scipy.special import expit, softmax

from ..base import registry
from ..model.estimator_settings import learner_class
from ..base.core import KernelSpec
from ..learning.labels import (
    BinaryLabels,
    MulticlassLabels,
    kept_spelling,
    label_values,
    third_label_message,
)
from ..model.model import Model

from .learner import RiverLearner, row_chunk, is_fraction, is_bool, is_number, to_json, from_json


class BudgetClassifier(RiverLearner, base.MiniBatchClassifier):
    """Budgeted online kernel classifier for River; `algorithm` is any of `budgetlearn algorithms`.

    Parameters
    ----------
    algorithm
        The algorithm's name, e.g. "projectron++", "rbp", "mc-perceptron"; None: `budgetlearn train`'s
        default (projectron++, or mc-projectron++ for a first `learn_many` frame of three labels or more).
    kernel
        "rbf" exp(−γ‖x−y‖²), "poly" (γ x·y + coef0)^degree or "linear" x·y.
    gamma
        γ; None is 1/d with d the number of features of the first example learnt.
    sigma
        The rbf width instead of γ: exp(−‖x−y‖²/(2σ²)).
    degree, coef0
        Of the poly kernel.
    rbf_exp
        How the rbf kernel's exp(−γ d²) is computed, as `train --rbf-exp`: "vectorised" (budgetlearn's
        own, four values at a time) or "libm" (the C library's); a loaded model keeps its own.
    seed
        Seeds the algorithms that draw random numbers (rbp, mrbp, ...); a seeded run is reproducible.
    average
        Predict with the averaged hypothesis (1/T) Σ f_t (True) or the last one, River's online
        convention (False); None: the one `budgetlearn train` writes for the algorithm (the averaged
        one, but for the learners that track drift: spa, rbp, bogd, bogd++).
    class_weight
        {label: weight}: the cost of an update on an example of that label (`train -w`); others weigh 1.
    params
        The algorithm's parameters by canonical name: eta, budget, beta, lambda_, cost, ...

    Attributes
    ----------
    learner
        The budgetlearn learner (None until the first example).
    features
        Feature name -> learner column (1, 2, ...), in order of first appearance.
    classes
        Label -> the learner's code for it: ±1.0 for binary algorithms, the class index for multiclass ones.

    """

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
        class_weight: dict | None = None,
        **params,
    ):
        self._keep(algorithm, kernel, gamma, sigma, degree, coef0, rbf_exp, seed)
        self.average = average
        self.class_weight = class_weight
        self.params = params
        # checked now, as `budgetlearn train` checks; gamma=None is resolved on data, and so is the default
        # algorithm (`_choose`): until then the binary one
        if algorithm is not None:  # an unknown name or parameter: said first
            learner_class("BudgetClassifier", algorithm, params)
        spec = self._train_spec(params)
        self._cls = learner_class("BudgetClassifier", spec.algorithm or registry.DEFAULT["binary"], params)
        if class_weight:
            for label, weight in dict(class_weight).items():
                if not (isinstance(weight, (int, float, np.integer, np.floating)) and 0 < weight < math.inf):
                    raise ValueError(f"class_weight of {label!r}: {weight!r} is not a finite number > 0")
            self._cls.check_weights()
        self.learner = None
        self.features: dict = {}
        self.classes: dict = {}
        self.scaling = None  # a loaded model's (train --scale): applied to every row, as the CLI applies it

    @property
    def _multiclass(self) -> bool:
        return bool(self._cls.multiclass)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"algorithm": "rbp", "budget": 5}
        yield {"algorithm": "mc-perceptron"}
        yield {"algorithm": "rbp", "budget": 5, "average": True}

    def _choose(self, labels: list) -> None:
        """With algorithm=None, `budgetlearn train`'s default for the labels of the first examples learnt
        (registry.default_for), before the learner is made."""
        if self.algorithm is None and self.learner is None:
            self._cls = learner_class("BudgetClassifier", registry.default_for(len(set(labels))), self.params)

    def _weights(self, labels: list, weights) -> np.ndarray | None:
        """Each example's weight: its label's class weight times its own; None when there are neither."""
        if not self.class_weight:
            return weights
        by_label = np.array([float(self.class_weight.get(label, 1.0)) for label in labels])
        return by_label if weights is None else by_label * weights

    def _encode(self, labels: list) -> tuple[np.ndarray, dict]:
        """The learner's codes of `labels` and the label map with the new ones (self.classes is
        left unchanged, for _learn to commit)."""
        classes = dict(self.classes)
        codes = []
        for y in labels:
            code = classes.get(y)
            if code is None:
                if is_bool(y) and not classes and not self._cls.multiclass:
                    classes = {False: -1.0, True: 1.0}
                else:
                    classes[y] = self._new_code(y, classes)
                code = classes[y]
            codes.append(code)
        return np.asarray(codes, np.int64 if self._cls.multiclass else np.float64), classes

    def _new_code(self, y, classes: dict):
        if len(classes) >= 2 and any(is_fraction(v) for v in (y, *classes)):  # never guessed, as train's
            raise ValueError(
                f"label {y!r}: a third label, and the labels are not all whole numbers: real-valued targets are "
                "regression's, which budgetcli.river.BudgetRegressor learns"
            )
        if self._cls.multiclass:
            return len(classes)
        if len(classes) == 2:
            shown = ", ".join(repr(label) for label in classes)
            raise ValueError(f"label {y!r}: {third_label_message(shown)}")
        if classes:
            (other,) = classes.values()
            return -other
        return 1.0 if is_number(y) and y > 0 else -1.0

    def _keep_labels(self, learnt: list, classes) -> None:
        seen = set(self.classes) | set(learnt)
        if any(is_bool(label) for label in seen):  # both are known from the first one on
            seen |= {False, True}
        self.classes = {label: code for label, code in classes.items() if label in seen}

    def _label_map(self):
        return MulticlassLabels() if self._multiclass else BinaryLabels()

    def _saved_labels(self) -> dict:
        return {"classes": [[to_json(label), code] for label, code in self.classes.items()]}

    def _load_labels(self, extra: dict) -> None:
        self.classes = {from_json(label): code for label, code in extra["classes"]}

    def _probabilities(self, scores: np.ndarray) -> tuple[list, np.ndarray]:
        """(labels, n × len(labels) probabilities) for the scores of n examples."""
        if self._cls.multiclass:
            return list(self.classes), softmax(scores, axis=1) if scores.shape[1] else scores
        negative, positive = self._binary_labels()
        if negative == positive:  # one label known: nothing else can be predicted
            return [negative], np.ones((len(scores), 1))
        p = expit(scores)
        return [negative, positive], np.column_stack([1.0 - p, p])

    def _decisions(self, scores: np.ndarray) -> list:
        if self._cls.multiclass:
            labels = list(self.classes)
            # ties: the class seen first (np.argmax), as MulticlassLabels.predict_index
            return [labels[i] for i in np.argmax(scores, axis=1)] if labels else [None] * len(scores)
        negative, positive = self._binary_labels()
        return [positive if f > 0 else negative for f in scores.tolist()]

    def _binary_labels(self) -> tuple:
        """(−1 label, +1 label); the known one twice while only one is known; (False, True) before any."""
        if not self.classes:
            return False, True
        by_code = {code: label for label, code in self.classes.items()}
        return by_code.get(-1.0, by_code.get(1.0)), by_code.get(1.0, by_code.get(-1.0))

    def predict_one(self, x: dict):
        idx, val, _ = self._row(x)
        return self._decisions(self._scores(row_chunk(idx, val)))[0]

    def predict_proba_one(self, x: dict) -> dict:
        idx, val, _ = self._row(x)
        labels, p = self._probabilities(self._scores(row_chunk(idx, val)))
        return dict(zip(labels, p[0].tolist()))

    def predict_many(self, X):
        import pandas as pd

        chunk, _, _ = self._frame(X)
        return pd.Series(self._decisions(self._scores(chunk)), index=X.index)

    def predict_proba_many(self, X):
        import pandas as pd

        chunk, _, _ = self._frame(X)
        labels, p = self._probabilities(self._scores(chunk))
        return pd.DataFrame(p, index=X.index, columns=labels)

    # ---- model files -----------------------------------------------------------------------
    def to_model(self) -> Model:
        """The learner and its label map as a budgetlearn Model, for the CLI.  Label values
        (labels.label_values): a number itself (bools are 0 and 1), the number a string spells as a
        data file's label does ('-1' is the label −1), else the smallest whole numbers ≥ 0 no label
        takes; each spelt as str(label) where a model file can hold it (labels.kept_spelling)."""
        if self.learner is None:
            raise ValueError("BudgetClassifier has learnt nothing yet: there is no model to save")
        value = label_values(list(self.classes))
        spellings = {value[label]: kept_spelling(value[label], str(label)) for label in self.classes}
        if self._cls.multiclass:
            labels = MulticlassLabels([value[label] for label in self.classes], spellings)
        else:
            by_code = {code: value[label] for label, code in self.classes.items()}
            labels = BinaryLabels(by_code.get(-1.0), by_code.get(1.0), spellings)
        class_weight = {value[label]: float(w) for label, w in (self.class_weight or {}).items() if label in value}
        return Model(self.learner, labels, self._hypothesis(), scaling=self.scaling, class_weight=class_weight)
