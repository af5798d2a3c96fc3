"""A scikit-learn estimator around the budgetlearn learners (optional: pip install 'budgetlearn[sklearn]').

    from budgetcli.sklearn import BudgetClassifier
    clf = BudgetClassifier("projectron++", eta=0.1, kernel="rbf", gamma=0.04).fit(X, y)
    clf.partial_fit(X_more, y_more)          # online: goes on from where fit stopped
    clf.predict(X_test), clf.decision_function(X_test)

X is a numpy array or a scipy.sparse matrix (kept sparse: the learners store sparse support vectors).
Algorithm parameters are keyword arguments with their canonical names (`eta`, `budget`, `beta`,
`lambda_`, `cost`, ... as `budgetlearn algorithms` lists them); get_params / set_params / clone see
them like the fixed ones.  An unknown algorithm or a parameter the algorithm does not take is a
ValueError at fit time (scikit-learn validates in fit, not in __init__), and so are settings that
provably learn nothing (e.g. `projectron` with eta ≥ 1 and the rbf kernel), as `budgetlearn train`
refuses them.

Conventions:
- `fit` resets the learner and makes `epochs` passes over X in the given order (one pass is the
  online algorithm; nothing is shuffled, so a seeded run is reproducible).  `partial_fit` makes one
  pass and keeps all state, exactly like `train --resume`.
- It wraps the binary learners (the multiclass ones are for the CLI and budgetcli.river).  `fit`
  needs exactly two classes.  `partial_fit` accepts classes as they
  arrive, at most two in all, through `classes=` or from y: a first batch with one class is learnt
  (that class is the learner's −1) and the second class, when it comes, is the learner's +1.
- scikit-learn's convention for two classes holds: decision_function > 0 means `classes_[1]`
  (sorted).  When the learner's +1 class is `classes_[0]` (the larger label came first, alone),
  decision_function is the learner's f negated; an exact f = 0 then goes to `classes_[0]`.
- gamma=None is 1/n_features, as LIBSVM (and the CLI on dense data); sigma is the alternative
  width exp(−‖x−y‖²/(2σ²)).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from . import registry
from .estimator import KernelSettings, csr_chunk, learn, learner_class
from .labels import BinaryLabels
from .model import Model
from .core import KernelSpec
from .kernels import Kernel
from .spec import TrainSpec

_CHECK = dict(accept_sparse="csr", dtype=np.float64)


class BudgetClassifier(KernelSettings, ClassifierMixin, BaseEstimator):
    """Budgeted online kernel classifier; `algorithm` is any of `budgetlearn algorithms`."""

    _learner = "learner_"

    def __init__(
        self,
        algorithm="perceptron",
        *,
        kernel=KernelSpec.kind,
        gamma=KernelSpec.gamma,
        sigma=KernelSpec.sigma,
        degree=KernelSpec.degree,
        coef0=KernelSpec.coef0,
        seed=0,
        epochs=1,
        **params,
    ):
        self._keep(algorithm, kernel, gamma, sigma, degree, coef0, seed)
        self.epochs = epochs
        for name, value in params.items():  # checked in fit: scikit-learn estimators do not raise here
            setattr(self, name, value)

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags

    # ---- learning --------------------------------------------------------------------------
    def fit(self, X, y):
        """Learn from scratch: `epochs` online passes over (X, y), in order."""
        for name in [a for a in vars(self) if a.endswith("_") and a not in registry.params()]:
            delattr(self, name)  # forget an earlier fit
        X, y = validate_data(self, X, y, reset=True, **_CHECK)
        check_classification_targets(y)
        classes = np.unique(y)
        if len(classes) > 2:
            raise ValueError(
                f"Only binary classification is supported. BudgetClassifier got {len(classes)} classes "
                f"({classes[:5].tolist()}); BudgetClassifier wraps the binary learners"
            )
        if len(classes) < 2:
            raise ValueError(
                f"BudgetClassifier.fit needs 2 classes in y; got 1 class ({classes.tolist()}) "
                "(partial_fit accepts one class at a time)"
            )
        self._start(X, classes)
        for _ in range(int(self.epochs)):
            self._learn(X, y)
        return self

    def partial_fit(self, X, y, classes=None):
        """One online pass over (X, y), continuing from the current state; classes may arrive mid-stream."""
        first = not self.__sklearn_is_fitted__()
        X, y = validate_data(self, X, y, reset=first, **_CHECK)
        check_classification_targets(y)
        known = np.unique(np.concatenate([np.asarray(classes).ravel(), y])) if classes is not None else np.unique(y)
        if first:
            if len(known) > 2:
                raise ValueError(
                    f"Only binary classification is supported. BudgetClassifier got {len(known)} "
                    f"classes {known[:5].tolist()}"
                )
            self._start(X, known)
        else:
            self._add_classes(known)
        self._learn(X, y)
        return self

    def _start(self, X, classes):
        cls = learner_class("BudgetClassifier", self.algorithm, self._algorithm_params())
        if cls.multiclass:
            raise ValueError(
                f"{self.algorithm} is a multiclass learner; BudgetClassifier wraps the binary ones "
                "(use the budgetlearn command or budgetcli.river for multiclass training)"
            )
        # checked as `budgetlearn train` checks its settings: bad or degenerate ones are a ValueError
        spec = TrainSpec(
            self.algorithm,
            KernelSpec(self.kernel, self.gamma, self.sigma, self.degree, self.coef0),
            self._algorithm_params(),
            self.seed,
        )
        self.learner_ = cls(Kernel.of(spec.kernel, X.shape[1]), seed=spec.seed, **spec.params)
        self.classes_ = np.asarray(classes)
        # the learner's −1 and +1 classes; with one class so far, it is the −1 class
        self.negative_class_ = self.classes_[0]
        self.positive_class_ = self.classes_[1] if len(self.classes_) == 2 else None

    def _add_classes(self, known):
        new = [c for c in known.tolist() if c not in self.classes_.tolist()]
        if not new:
            return
        if len(self.classes_) + len(new) > 2:
            raise ValueError(
                "Only binary classification is supported. BudgetClassifier knows the classes "
                f"{self.classes_.tolist()} and got "
                f"{new[:5]} as well"
            )
        (self.positive_class_,) = np.asarray(new, dtype=self.classes_.dtype)
        self.classes_ = np.unique(np.concatenate([self.classes_, np.asarray(new, dtype=self.classes_.dtype)]))

    def _learn(self, X, y):
        y = column_or_1d(y)
        encoded = (
            np.where(y == self.positive_class_, 1.0, -1.0)
            if self.positive_class_ is not None
            else np.full(len(y), -1.0)
        )
        learn(self.learner_, csr_chunk(X, encoded), encoded, rows="X")

    # ---- prediction ------------------------------------------------------------------------
    def _sign(self) -> float:
        """+1 when the learner's +1 class is classes_[1] (scikit-learn's positive class), else −1."""
        return 1.0 if self.positive_class_ is None or self.positive_class_ == self.classes_[-1] else -1.0

    def decision_function(self, X):
        """Scores whose sign gives the class: > 0 for classes_[1]."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, **_CHECK)
        return self._sign() * self.learner_.decision_function(csr_chunk(X, np.zeros(X.shape[0])))

    def predict(self, X):
        scores = self.decision_function(X)
        if len(self.classes_) == 1:
            return np.full(scores.shape[0], self.classes_[0])
        return self.classes_[(scores > 0).astype(int)]

    def to_model(self) -> Model:
        """The fitted learner as a budgetlearn Model (save with .save(path); then the CLI's predict,
        eval, export, info and train --resume use it).  Needs numeric class labels."""
        check_is_fitted(self)
        try:
            neg = float(self.negative_class_)
            pos = None if self.positive_class_ is None else float(self.positive_class_)
        except (TypeError, ValueError):
            raise ValueError(f"a budgetlearn model needs numeric labels; the classes are {self.classes_.tolist()}")
        spell = {v: format(v, "g") for v in (neg, pos) if v is not None}
        return Model(self.learner_, BinaryLabels(neg, pos, spell))
