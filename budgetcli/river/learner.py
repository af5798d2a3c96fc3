"""What River's BudgetClassifier, BudgetRegressor and BudgetAnomalyDetector share (budgetcli.river): the
settings, the learning session, the feature map, the model file."""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import replace

import numpy as np

from ..base import modelfile
from ..base import registry
from ..io.arrays import checked_labels, checked_weights, csr_chunk
from ..model.estimator_settings import KernelSettings, learner_class
from ..base.core import Chunk
from ..model.model import Model
from ..run.session import Session, TrainingStopped


HEADER_FIELD = "river"  # the model file's header field holding the feature map, labels and parameters
ESTIMATORS = {  # by task (learning/task)
    "classification": "BudgetClassifier",
    "regression": "BudgetRegressor",
    "novelty": "BudgetAnomalyDetector",
}


class RiverLearner(KernelSettings):
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
        self._learn(row_chunk(idx, val), [y], codes, new, [0] * len(new), classes, weights)

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
            v = feature_value(name, v)
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
        values = as_numbers(X)
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
            "params": to_json(self._get_params()),
            "features": [to_json(name) for name in self.features],
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
        estimator = cls(**from_json(extra["params"]))
        estimator.learner, estimator.scaling = model.learner, model.scaling
        estimator._cls = type(model.learner)  # algorithm=None: the default it chose
        if model.learner.kernel.kind == "rbf":  # the file's exp (libm's in a file from before the choice)
            estimator.rbf_exp = model.learner.kernel.exp
        estimator.features = {from_json(name): j + 1 for j, name in enumerate(extra["features"])}
        estimator._load_labels(extra)
        return estimator


def row_chunk(idx: np.ndarray, val: np.ndarray) -> Chunk:
    """A one-example Chunk (built directly: learn_one's overhead is per example)."""
    return Chunk(np.array([0, len(idx)], np.int64), idx, val, np.zeros(1), np.ones(1, np.int64), {})


def feature_value(name, v) -> float | None:
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


def as_numbers(X) -> np.ndarray:
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


def is_fraction(v) -> bool:
    """A number that is not whole (a real-valued target, which classification never takes)."""
    return is_number(v) and not is_bool(v) and float(v) != math.floor(float(v))


def is_bool(v) -> bool:
    return isinstance(v, (bool, np.bool_))


def is_number(v) -> bool:
    return is_bool(v) or (isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(v))


def to_json(v):
    """A feature name, label or parameter as JSON; tuples are tagged so that they come back as tuples."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, tuple):
        return {"tuple": [to_json(e) for e in v]}
    if isinstance(v, dict):
        return {"dict": [[k, to_json(e)] for k, e in v.items()]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise ValueError(
        f"cannot save {v!r} ({type(v).__name__}) in a model file: feature names and labels must be "
        "str, int, float, bool, None or tuples of these (pickle saves any)"
    )


def from_json(v):
    if isinstance(v, dict):
        if "tuple" in v:
            return tuple(from_json(e) for e in v["tuple"])
        return {k: from_json(e) for k, e in v["dict"]}
    return v
