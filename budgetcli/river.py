"""A River classifier and regressor around the budgetlearn learners (optional: pip install 'budgetlearn[river]').
BudgetRegressor (real targets, `budgetlearn train --task regression`) shares everything below but the
labels: its targets are real numbers, its prediction the score f(x).  BudgetAnomalyDetector (`--task
novelty`, River's anomaly API) has no labels: its score is minus the novelty score g(x) (its docstring).

    from river import evaluate, metrics, preprocessing
    from budgetcli.river import BudgetClassifier
    model = preprocessing.StandardScaler() | BudgetClassifier("projectron++", eta=0.1, gamma=0.1)
    evaluate.progressive_val_score(dataset, model, metrics.Accuracy())

Any algorithm of `budgetlearn algorithms`, binary or multiclass; its parameters are keyword
arguments with their canonical names (`eta`, `budget`, `lambda_`, ...), checked when the
classifier is made.  BudgetClassifier() is `budgetlearn train`'s default, the same model from the
same examples: projectron++ predicting with its averaged hypothesis, or mc-projectron++ when the first
`learn_many` frame holds three labels or more (a stream learnt by `learn_one` gets projectron++, whose
third label is a ValueError naming mc-projectron++: give it for more labels).  `learn_one` is one
round of the online algorithm, exactly as `budgetlearn train` runs it; `learn_many` runs the same
rounds over a whole DataFrame in one call of the compiled loop (same model as `learn_one` row by
row, much less overhead per example).

Conventions:
- Features: any hashable names, given a column of the learner once (1, 2, ...: the feature index a
  saved model file uses), in order of first appearance
  (within a DataFrame: row by row, left to right).  A feature present with the value 0 takes its
  column too; None and NaN mean "absent"; a non-number or an infinite value is a ValueError.
  A feature never learnt from has no column: it meets no support vector, so at prediction time it
  adds nothing to any dot product, only its square to ‖x‖² (which the rbf kernel uses), the
  kernel's exact value for it.
- gamma=None is 1/d, d the number of features of the first learn_one example (of the first
  learn_many frame), as the CLI takes 1/(the largest feature index of its first block).
- Labels: any hashable values.  Multiclass algorithms number the classes in order of first
  appearance, as `budgetlearn train` does.  Binary algorithms take two labels (a third is a
  ValueError naming the multiclass algorithms): a label first seen alone is the learner's +1 when
  it is a number > 0 (True, 1, +1) and its −1 otherwise (False, 0, −1, a string), as the CLI
  treats a first block holding one label; the second label is the other side.  Bool labels are
  both known from the first one on (True is +1), River's binary convention, so `predict_proba_one`
  answers over {False, True}; a binary model that has learnt nothing answers so too.
- Predictions: binary `predict_one` is the +1 label when f(x) > 0, else the −1 label (as
  `budgetlearn predict`); `predict_proba_one` maps the score through the logistic function,
  P(+1 label) = 1 / (1 + exp(−f(x))), P(−1 label) = 1 − that.  Multiclass `predict_one` is the
  class with the highest f_i(x) (ties: the class seen first) and `predict_proba_one` the softmax of
  the f_i(x) over the known classes.  Neither is a calibrated probability.  A multiclass model
  that has learnt nothing predicts None ({} as probabilities), River's convention.
- Online mistakes: the learners count a round as a mistake when y·f(x) ≤ 0, or f_y(x) ≤ f_r(x) for
  some other class r, so a tie is a mistake whatever the label (which is how learning starts).
  River's progressive validation scores `predict_one` instead.  Binary: the counts differ only on
  rounds with f(x) = 0 whose label is the −1 label, which River counts right.  Multiclass: on rounds
  where the true class ties for the top score and was seen before the others tied with it (River
  right), and on a round that brings a new class while every known class scores below 0 (River
  wrong: it cannot name a label it has not seen; the learner's new class has f = 0, the highest).
- `save(path)` writes a budgetlearn model file that the CLI's predict, eval, info and `train
  --resume` read (features are LIBSVM indices 1, 2, ... in the map's order; a label is the number
  it is or spells, as a data file's label, else a whole number no other label takes: `to_model`); it
  also holds the feature map, the labels and the classifier's parameters, which
  `BudgetClassifier.load` reads.
- A refused example changes nothing: bad values and labels are refused before learning, and an
  example whose numbers overflow stops `learn_many` there, keeping only what the rows before it
  brought (which were learnt).
- Weights: `learn_one(x, y, w)` (River's convention; `learn_many(X, y, w)` a Series or array) weighs the
  example, times its label's `class_weight` ({label: weight}, `train -w`): the cost of its update, as
  `budgetlearn algorithms` says for each algorithm (the others refuse weights); w = 0 leaves it out.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import replace

import numpy as np
from river import base
from scipy.special import expit, softmax

from .base import modelfile
from .base import registry
from .io.arrays import checked_labels, checked_weights, csr_chunk
from .wrappers import KernelSettings, learner_class
from .base.core import Chunk, KernelSpec
from .learning.labels import (
    BinaryLabels,
    MulticlassLabels,
    NoveltyVerdicts,
    RealTargets,
    kept_spelling,
    label_values,
    third_label_message,
)
from .model.model import Model
from .run.session import Session, TrainingStopped

HEADER_FIELD = "river"  # the model file's header field holding the feature map, labels and parameters
ESTIMATORS = {  # by task (task.py)
    "classification": "BudgetClassifier",
    "regression": "BudgetRegressor",
    "novelty": "BudgetAnomalyDetector",
}


class _RiverLearner(KernelSettings):
    """What the River classifier and regressor share: one learning session over the learner, fed a row
    (`learn_one`) or a DataFrame (`learn_many`) at a time, the feature map, the scores, and the model
    file (`save`, `load`).  Each class says its labels: `_encode` (the learner's targets of a list of
    labels, and the label map with the new ones), `_keep_labels`, `_label_map`, `_saved_labels`,
    `_load_labels`."""

    _task = "classification"

    def _choose(self, labels: list) -> None:
        """Choose the algorithm from the first labels when none is named (the classifier's)."""

    def _weights(self, labels: list, weights) -> np.ndarray | None:
        """Each example's weight (the classifier's: times its label's class weight)."""
        return weights

    def _settle(self, average, params: dict) -> None:
        """The regressor's and the detector's settings after the kernel's: checked now, as `budgetlearn
        train --task T` checks them (the learner declares its tasks), and no learner yet."""
        self.average, self.params = average, params
        spec = self._train_spec(params, task=self._task)
        self._cls = learner_class(type(self).__name__, spec.algorithm or registry.DEFAULT[self._task], params)
        self.learner = None
        self.features: dict = {}
        self.scaling = None  # a loaded model's (train --scale): applied to every row, as the CLI applies it

    # ---- learning --------------------------------------------------------------------------
    def learn_one(self, x: dict, y, w: float = 1.0) -> None:
        weights = None if w == 1 else checked_weights([w], 1)
        if weights is not None and not weights[0]:  # a weight 0: the example is left out
            return
        self._choose([y])
        idx, val, new = self._row(x)
        codes, classes = self._encode([y])
        self._learn(_row_chunk(idx, val), [y], codes, new, [0] * len(new), classes, weights)

    def learn_many(self, X, y, w=None) -> None:
        """The rounds of X's rows in order, in one call of the learner's compiled loop: the same
        model as `learn_one` row by row (rows as dicts of their non-missing values); `w`: each row's
        weight (0: the row is left out)."""
        labels = checked_labels(y, len(X), numbers=False)
        weights = None if w is None else checked_weights(np.asarray(w, np.float64), len(X))
        if weights is not None and not weights.all():
            X, labels, weights = X[weights > 0], [v for v, k in zip(labels, weights) if k], weights[weights > 0]
        self._choose(labels)
        chunk, new, first = self._frame(X)
        codes, classes = self._encode(labels)
        self._learn(chunk, labels, codes, new, first, classes, weights)

    def _hypothesis(self) -> str:
        """What the estimator predicts with: `average`'s, or (None) the algorithm's default (TrainSpec.written)."""
        if self.average is None:
            return self._cls.default_hypothesis
        return "running-average" if self.average else "online"

    def _learn(
        self, chunk: Chunk, labels: list, codes: np.ndarray, new: list, first: list, classes: dict, weights=None
    ) -> None:
        """Learn, after every check has passed: a refused example changes nothing.  An example whose
        numbers overflow stops learning there (a ValueError naming its row); the rows before it were
        learnt, and only their new features (`first`: the row each appears in first) and labels are
        kept, as learn_one of those rows would have kept them."""
        n = len(self.features)
        made = self.learner is None
        weights = self._weights(labels, weights)
        if weights is not None and (weights != 1.0).any():  # refused before anything changes
            self._cls.check_weights()
        chunk.weights = weights  # the session weighs each example by them (the model has no class weights)
        session = self._session(made)
        if made:  # γ's default counts the features by name, those present with the value 0 too
            self.learner = session.begin(chunk, features=n + len(new)).learner
        try:
            session.learn(chunk, targets=codes)
        except TrainingStopped as exc:
            self._commit(labels[: exc.row], new, first, classes, exc.row)
            if made and exc.row == 0:
                self.learner = None
            raise ValueError(f"row {exc.row}: {exc.why}") from None
        self._commit(labels, new, first, classes, len(labels))

    def _commit(self, learnt: list, new: list, first: list, classes: dict, rows: int) -> None:
        """Keep the features and labels of the first `rows` rows only, which were learnt."""
        n = len(self.features)
        self.features.update((name, n + k + 1) for k, (name, row) in enumerate(zip(new, first)) if row < rows)
        self._keep_labels(learnt, classes)

    def _keep_labels(self, learnt: list, classes) -> None:
        """Keep the labels of the examples `learnt` (`classes`: the label map `_encode` made)."""

    def _session(self, new: bool = False) -> Session:
        """The learning session over the learner (session.py): a new one for a new learner, else the one
        made for this learner (made again when it is another: loaded, unpickled).  It learns as `budgetlearn
        train` does, with the algorithm chosen (`_choose`) and the hypothesis the estimator predicts with
        (`_hypothesis`), and for a running average a learner that evicts keeps what it evicts in a bounded
        archive: the average stays in bounded memory.  The estimator keeps its own label map (any hashable
        labels) and class weights, and gives the session the learner's codes and the examples' weights."""
        if new:
            self._learning = Session(self._session_spec(), scaling=self.scaling)  # a loaded file's, or None
        elif getattr(self, "_learning", None) is None or self._learning.model.learner is not self.learner:
            model = Model(self.learner, self._label_map(), self._hypothesis(), scaling=self.scaling)
            self._learning = Session(self._session_spec(resumed=True), model)
        return self._learning

    def _session_spec(self, resumed: bool = False):
        """The spec of the estimator's session: its settings, the algorithm chosen and its hypothesis."""
        spec = self._train_spec(self.params, hypothesis=self._hypothesis(), resumed=resumed, task=self._task)
        return replace(spec, algorithm=self._cls.name)

    # ---- features --------------------------------------------------------------------------
    def _row(self, x: dict) -> tuple[np.ndarray, np.ndarray, list]:
        """(learner columns, values, names of new features) of one example, columns increasing.
        New features get the next columns, in x's order; only learning keeps them."""
        n = len(self.features)
        idx, val, new = [], [], []
        for name, v in x.items():
            v = _value(name, v)
            if v is None:
                continue
            j = self.features.get(name)
            if j is None:
                j = n + len(new) + 1  # feature indices 1, 2, ... as a data file numbers them
                new.append(name)
            if v != 0.0:
                idx.append(j)
                val.append(v)
        idx = np.asarray(idx, np.int32)
        order = np.argsort(idx, kind="stable")
        return idx[order], np.asarray(val, np.float64)[order], new

    def _frame(self, X) -> tuple[Chunk, list, list]:
        """The Chunk of a DataFrame's rows, the names of its new features, numbered as `learn_one`
        would number them row by row, and the row each of them appears in first."""
        names = list(X.columns)
        if len(set(names)) < len(names):
            raise ValueError(f"X has duplicate column names: {sorted({repr(c) for c in names if names.count(c) > 1})}")
        values = _numbers(X)
        present = ~np.isnan(values)
        n = len(self.features)
        columns = np.array([self.features.get(name, -1) for name in names], np.int64)
        unseen = np.flatnonzero((columns < 0) & present.any(axis=0))
        if len(unseen):  # by first row, then left to right
            unseen = unseen[np.lexsort((unseen, present[:, unseen].argmax(axis=0)))]
        columns[unseen] = n + 1 + np.arange(len(unseen))
        keep = np.flatnonzero(columns >= 0)
        keep = keep[np.argsort(columns[keep])]
        dense = np.where(present[:, keep], values[:, keep], 0.0)
        first = present[:, unseen].argmax(axis=0).tolist() if len(unseen) else []
        return csr_chunk(dense, None, columns[keep]), [names[c] for c in unseen], first

    # ---- prediction ------------------------------------------------------------------------
    def _scores(self, chunk: Chunk) -> np.ndarray:
        """f(x) per row (binary) or the n × m class scores (multiclass), of the last hypothesis or, with
        `average`, of the averaged one (the archive of evicted vectors folded in as a saved file holds
        it: the session's score); zeros before any learning."""
        if self.learner is not None:
            return self._session().score(chunk)
        return np.zeros((len(chunk), 0)) if self._cls.multiclass else np.zeros(len(chunk))

    def save(self, path) -> None:
        """Write a budgetlearn model file (atomically, as every model file) holding, in the header
        field "river", the feature map, the labels and this estimator's parameters, and the
        learner's resume state (as `train --save-resume`), so that a loaded estimator learns on
        exactly as this one would.  Feature names and labels must be str, int, float, bool, None or
        tuples of these."""
        model = self.to_model()
        extra = {
            "params": _json(self._get_params()),
            "features": [_json(name) for name in self.features],
            **self._saved_labels(),
        }
        # Model.save writes the header the CLI reads; the extra field is added to exactly that
        with tempfile.TemporaryDirectory() as tmp:
            plain = os.path.join(tmp, "plain.model")
            model.save(plain, resume=True)
            header, arrays = modelfile.load(plain)
        header[HEADER_FIELD] = extra
        modelfile.save(path, header, arrays)

    @classmethod
    def load(cls, path):
        """The estimator `save` wrote, ready to go on learning.  A file that is not a model file or has
        no "river" field is a ModelFileError naming it; a model of the other task a ValueError naming
        the class that loads it."""
        model = Model.load(path, resume=True)
        if model.task.name != cls._task:
            raise ValueError(
                f"the River {cls.__name__} takes a {cls._task} model; this one is a {model.task.name} model "
                f"(budgetcli.river.{ESTIMATORS[model.task.name]}.load takes it)"
            )
        header, _ = modelfile.load(path)
        extra = header.get(HEADER_FIELD)
        if not isinstance(extra, dict):
            raise modelfile.ModelFileError(
                f"{os.fsdecode(path)}: not written by budgetcli.river (no feature map); "
                "only BudgetClassifier.save and BudgetRegressor.save write one"
            )
        estimator = cls(**_from_json(extra["params"]))
        estimator.learner, estimator.scaling = model.learner, model.scaling
        estimator._cls = type(model.learner)  # algorithm=None: the default it chose
        if model.learner.kernel.kind == "rbf":  # the file's exp (libm's in a file from before the choice)
            estimator.rbf_exp = model.learner.kernel.exp
        estimator.features = {_from_json(name): j + 1 for j, name in enumerate(extra["features"])}
        estimator._load_labels(extra)
        return estimator


class BudgetClassifier(_RiverLearner, base.MiniBatchClassifier):
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
                if _is_bool(y) and not classes and not self._cls.multiclass:
                    classes = {False: -1.0, True: 1.0}
                else:
                    classes[y] = self._new_code(y, classes)
                code = classes[y]
            codes.append(code)
        return np.asarray(codes, np.int64 if self._cls.multiclass else np.float64), classes

    def _new_code(self, y, classes: dict):
        if len(classes) >= 2 and any(_is_fraction(v) for v in (y, *classes)):  # never guessed, as train's
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
        return 1.0 if _is_number(y) and y > 0 else -1.0

    def _keep_labels(self, learnt: list, classes) -> None:
        seen = set(self.classes) | set(learnt)
        if any(_is_bool(label) for label in seen):  # both are known from the first one on
            seen |= {False, True}
        self.classes = {label: code for label, code in classes.items() if label in seen}

    def _label_map(self):
        return MulticlassLabels() if self._multiclass else BinaryLabels()

    def _saved_labels(self) -> dict:
        return {"classes": [[_json(label), code] for label, code in self.classes.items()]}

    def _load_labels(self, extra: dict) -> None:
        self.classes = {_from_json(label): code for label, code in extra["classes"]}

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
        return self._decisions(self._scores(_row_chunk(idx, val)))[0]

    def predict_proba_one(self, x: dict) -> dict:
        idx, val, _ = self._row(x)
        labels, p = self._probabilities(self._scores(_row_chunk(idx, val)))
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


class BudgetRegressor(_RiverLearner, base.MiniBatchRegressor):
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
        return float(self._scores(_row_chunk(idx, val))[0])

    def predict_many(self, X):
        import pandas as pd

        chunk, _, _ = self._frame(X)
        return pd.Series(self._scores(chunk), index=X.index)

    def to_model(self) -> Model:
        """The learner as a budgetlearn regression Model, for the CLI."""
        if self.learner is None:
            raise ValueError("BudgetRegressor has learnt nothing yet: there is no model to save")
        return Model(self.learner, RealTargets(), self._hypothesis(), scaling=self.scaling)


class BudgetAnomalyDetector(_RiverLearner, base.AnomalyDetector):
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
        return float(-self._scores(_row_chunk(idx, val))[0])

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


def _row_chunk(idx: np.ndarray, val: np.ndarray) -> Chunk:
    """A one-example Chunk (built directly: learn_one's overhead is per example)."""
    return Chunk(np.array([0, len(idx)], np.int64), idx, val, np.zeros(1), np.ones(1, np.int64), {})


def _value(name, v) -> float | None:
    """A feature value as a float; None for an absent one (None, NaN)."""
    if v is None:
        return None
    if isinstance(v, (str, bytes)):
        raise ValueError(
            f"feature {name!r} has the value {v!r}, not a number; encode it first "
            "(e.g. river.preprocessing.OneHotEncoder)"
        )
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"feature {name!r} has the value {v!r}, not a number") from None
    if math.isnan(v):
        return None
    if math.isinf(v):
        raise ValueError(f"feature {name!r} is {v}; the kernels need finite values")
    return v


def _numbers(X) -> np.ndarray:
    """A DataFrame's values as float64, missing ones (None, NaN, pd.NA) as NaN; ValueError naming
    the first column with a non-number or an infinite value."""
    try:
        values = X.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        for name in X.columns:
            try:
                X[name].to_numpy(dtype=np.float64, na_value=np.nan)
            except (TypeError, ValueError):
                raise ValueError(
                    f"column {name!r} of X holds values that are not numbers; encode them first "
                    "(e.g. river.preprocessing.OneHotEncoder)"
                ) from None
        raise
    infinite = np.isinf(values).any(axis=0)
    if infinite.any():
        raise ValueError(
            f"column {X.columns[np.argmax(infinite)]!r} of X holds an infinite value; the kernels need finite values"
        )
    return values


def _is_fraction(v) -> bool:
    """A number that is not whole (a real-valued target, which classification never takes)."""
    return _is_number(v) and not _is_bool(v) and float(v) != math.floor(float(v))


def _is_bool(v) -> bool:
    return isinstance(v, (bool, np.bool_))


def _is_number(v) -> bool:
    return _is_bool(v) or (isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(v))


def _json(v):
    """A feature name, label or parameter as JSON; tuples are tagged so that they come back as tuples."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, tuple):
        return {"tuple": [_json(e) for e in v]}
    if isinstance(v, dict):
        return {"dict": [[k, _json(e)] for k, e in v.items()]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise ValueError(
        f"cannot save {v!r} ({type(v).__name__}) in a model file: feature names and labels must be "
        "str, int, float, bool, None or tuples of these (pickle saves any)"
    )


def _from_json(v):
    if isinstance(v, dict):
        if "tuple" in v:
            return tuple(_from_json(e) for e in v["tuple"])
        return {k: _from_json(e) for k, e in v["dict"]}
    return v
