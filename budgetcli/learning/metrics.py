"""Evaluation metrics: accuracy, per-class precision/recall/F1, AUC, confusion matrix; log loss and
calibration error of a calibrated model's probabilities; a regression's squared and absolute errors
and R² (`ErrorTally`)."""

from __future__ import annotations

import numpy as np

from ..base.core import DataError, unique

REPORT_CLASSES = 1000  # most classes an eval report lists whether they occur or not


def correct(true: np.ndarray, predicted: np.ndarray) -> int:
    """How many predictions are right: the predicted label value (a label map's `predicted`) equals
    the example's, so a label the model never saw is never right.  The one count behind every
    accuracy: eval's report, tune's test accuracy and the Python API's `accuracy`."""
    return int(np.count_nonzero(np.asarray(predicted) == np.asarray(true)))


class PredictionTally:
    """Right predictions (`correct`), examples per label and the labels predicted, a block at a time
    (memory: the labels): the accuracy and eval's warnings (`data_warnings`) for tune's test accuracy
    and the Python API's `accuracy`, as eval's report gives them."""

    def __init__(self, labels):
        self.labels = labels  # the model's label map (labels.BinaryLabels or MulticlassLabels)
        self.right, self.counts, self.predicted = 0, {}, set()

    def add(self, true: np.ndarray, scores: np.ndarray) -> None:
        predicted = self.labels.predicted(scores)
        self.right += correct(true, predicted)
        values, counts = unique(true, return_counts=True)
        for v, c in zip(values.tolist(), counts.tolist()):
            self.counts[v] = self.counts.get(v, 0) + c
        self.predicted.update(unique(predicted).tolist())

    def held_out(self, source: str) -> float:
        """The accuracy (tune's held-out figure)."""
        return self.accuracy(source)

    def accuracy(self, source: str) -> float:
        """The share of right predictions; a DataError naming `source` when there was no example."""
        total = sum(self.counts.values())
        if total == 0:
            raise DataError(source, 0, None, "no examples to evaluate")
        return self.right / total

    def warnings(self) -> list[str]:
        """eval's warnings, its classes in its report's order: the model's, then the others sorted."""
        model = self.labels.classes
        order = [v for v in model if v in self.counts] + sorted(set(self.counts) - set(model))
        counts = {v: self.counts[v] for v in order}
        spelling = self.labels.spelling
        predicted = sorted(self.predicted)
        return data_warnings(counts, self.right, predicted, set(model), spelling, [spelling(v) for v in model])


def confusion_matrix(true_idx: np.ndarray, pred_idx: np.ndarray, n_classes: int) -> np.ndarray:
    """C[i, j] = number of examples of class i predicted as class j."""
    c = np.zeros((n_classes, n_classes), np.int64)
    np.add.at(c, (true_idx, pred_idx), 1)
    return c


def per_class(conf: np.ndarray) -> list[dict]:
    """Precision, recall, F1 and support of each class; 0 where a ratio has no denominator."""
    out = []
    for k in range(conf.shape[0]):
        tp = conf[k, k]
        predicted = conf[:, k].sum()
        actual = conf[k, :].sum()
        p = tp / predicted if predicted else 0.0
        r = tp / actual if actual else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        out.append({"precision": float(p), "recall": float(r), "f1": float(f1), "support": int(actual)})
    return out


def auc(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """Area under the ROC curve (Mann–Whitney U with tied scores sharing ranks); None when a
    class is absent."""
    positive = np.asarray(positive, bool)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = average_ranks(scores)
    u = ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


class AucTally:
    """A novelty model's scores g(x) on labelled data, a block at a time (memory: a score and a flag per
    example), and whether each example is normal (labelled `normal_label`): eval's AUC of normal above
    novel and tune's held-out figure."""

    def __init__(self, normal_label: float):
        self.normal_label = normal_label
        self.scores, self.normal = [], []

    def add(self, true: np.ndarray, scores: np.ndarray) -> None:
        self.scores.append(np.asarray(scores, np.float64))
        self.normal.append(np.asarray(true) == self.normal_label)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(every score, whether its example is normal)."""
        if not self.scores:
            return np.zeros(0), np.zeros(0, bool)
        return np.concatenate(self.scores), np.concatenate(self.normal)

    def held_out(self, source: str) -> float:
        """The AUC (tune's held-out figure); a DataError naming `source` when there was no example, or no
        normal one, or no novel one."""
        g, normal = self.arrays()
        if not g.size:
            raise DataError(source, 0, None, "no examples to evaluate")
        if normal.all() or not normal.any():
            which = "every" if normal.all() else "no"
            raise DataError(
                source,
                0,
                None,
                f"{which} example is labelled {self.normal_label:g}, the normal label: the AUC of normal against "
                "novel examples needs both (--normal-label L says which label is normal)",
            )
        return auc(g, normal)


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of `values`, tied values sharing the mean of their ranks (scipy.stats.rankdata's
    'average' method). Written here because importing scipy.stats costs about a second of start-up."""
    values = np.asarray(values, dtype=np.float64)
    _, inverse, counts = unique(values, return_inverse=True, return_counts=True)
    last = np.cumsum(counts)  # rank of the last member of each group of equal values
    mean_rank = last - (counts - 1) / 2.0
    return mean_rank[inverse.ravel()]


def multiclass_report(model_classes: list, names: dict, true: np.ndarray, pred_index: np.ndarray) -> dict:
    """The eval report of a multiclass model: accuracy, per-class table and confusion matrix over the
    model's classes (in the model's order) followed by any label of the data the model never saw.
    `names` maps a label value to its spelling; AUC is binary-only and reported as None.

    A model of more than REPORT_CLASSES classes lists only those that occur in the data or the
    predictions (the others' rows and columns are zeros): the confusion matrix is classes² numbers."""
    pred_index = np.asarray(pred_index, np.int64)
    shown = list(model_classes)
    if len(shown) > REPORT_CLASSES:
        occurring = set(unique(pred_index).tolist())
        present = set(unique(true).tolist())
        shown = [v for i, v in enumerate(model_classes) if i in occurring or v in present]
    classes = shown + sorted(set(unique(true).tolist()) - set(model_classes))
    index = {v: i for i, v in enumerate(classes)}
    true_idx = np.array([index[v] for v in true.tolist()], np.int64)
    # the predicted classes, numbered as the report's columns
    column = np.array([index[model_classes[i]] for i in unique(pred_index).tolist()], np.int64)
    pred_idx = column[np.searchsorted(unique(pred_index), pred_index)]
    conf = confusion_matrix(true_idx, pred_idx, len(classes))
    share = correct(true, np.asarray(model_classes, np.float64)[pred_index]) / true.size
    labels = [names(v) for v in classes]
    return {
        "multiclass": True,
        "examples": int(true.size),
        "accuracy": share,
        "error": 1.0 - share,
        "auc": None,
        "positive_label": None,
        "classes": {n: m for n, m in zip(labels, per_class(conf))},
        "confusion_matrix": {"labels": labels, "rows_true_columns_predicted": conf.tolist()},
    }


def binary_report(labels, true: np.ndarray, f: np.ndarray) -> dict:
    """The eval report of a binary model (labels.BinaryLabels) of scores f: accuracy, AUC, per-class
    table and confusion matrix over the model's two labels, then any label of the data it never saw."""
    classes = labels.classes + sorted(set(unique(true).tolist()) - set(labels.classes))
    index = {v: i for i, v in enumerate(classes)}
    true_idx = np.array([index[v] for v in true.tolist()])
    predicted = labels.predicted(f)
    pred_idx = np.array([index[v] for v in unique(predicted).tolist()])[np.searchsorted(unique(predicted), predicted)]
    conf = confusion_matrix(true_idx, pred_idx, len(classes))
    share = correct(true, predicted) / f.size
    names = [labels.spelling(v) for v in classes]
    return {
        "examples": int(f.size),
        "accuracy": share,
        "error": 1.0 - share,
        "auc": auc(f, true == labels.positive) if labels.positive is not None else None,
        "positive_label": labels.spelling(labels.positive) if labels.positive is not None else None,
        "classes": {n: m for n, m in zip(names, per_class(conf))},
        "confusion_matrix": {"labels": names, "rows_true_columns_predicted": conf.tolist()},
    }


class ProbabilityTally:
    """Log loss and expected calibration error of probabilities, a block at a time (memory: the bins).

    Log loss is the mean −ln P(true label); ECE the top-class calibration error over ECE_BINS equal-width
    bins of the highest probability p (bin min(⌊10p⌋, 9)): Σ_b (n_b/N)·|accuracy_b − mean p_b| (Guo et
    al., ICML 2017, as the comparison with LIBSVM's -b 1 uses).  Examples whose label the model never
    saw have no probability and are left out (eval's warning names them)."""

    ECE_BINS = 10

    def __init__(self):
        self.n, self.loss = 0, 0.0
        self.count = np.zeros(self.ECE_BINS, np.int64)
        self.confidence = np.zeros(self.ECE_BINS)
        self.correct = np.zeros(self.ECE_BINS)

    def add(self, probabilities: np.ndarray, true_index: np.ndarray) -> None:
        known = true_index >= 0
        p, t = probabilities[known], true_index[known]
        self.n += len(t)
        self.loss -= float(np.sum(np.log(np.maximum(p[np.arange(len(t)), t], 1e-300))))
        top = p.max(axis=1)
        bins = np.minimum((top * self.ECE_BINS).astype(np.int64), self.ECE_BINS - 1)
        np.add.at(self.count, bins, 1)
        np.add.at(self.confidence, bins, top)
        np.add.at(self.correct, bins, (p.argmax(axis=1) == t).astype(float))

    def report(self) -> dict:
        if not self.n:
            return {"log_loss": None, "ece": None, "probability_examples": 0}
        gap = np.abs(self.correct - self.confidence)  # n_b·|acc_b − conf_b|
        return {"log_loss": self.loss / self.n, "ece": float(gap.sum() / self.n), "probability_examples": self.n}


def warnings(report: dict, model_labels: list[str]) -> list[str]:
    """What an eval report shows that a user should not miss (`data_warnings`)."""
    names = report["confusion_matrix"]["labels"]
    rows = np.array(report["confusion_matrix"]["rows_true_columns_predicted"], np.int64).reshape(len(names), -1)
    counts = dict(enumerate(rows.sum(axis=1).tolist()))  # by the report's class, in its order
    known = {i for i, name in enumerate(names) if name in model_labels}
    predicted = np.flatnonzero(rows.sum(axis=0)).tolist()
    right = round(report["accuracy"] * report["examples"])
    return data_warnings(counts, right, predicted, known, names.__getitem__, model_labels)


def data_warnings(counts: dict, right: int, predicted: list, known: set, spelling, model_labels: list[str]) -> list:
    """Labels of the data the model never saw (every such example is wrong), `right` predictions not
    above always answering the data's most frequent label (`constant_warning`), and one label predicted
    for every example (`one_label_warning`).  `counts`: label -> examples of the data, in the report's
    order; `known`: the model's labels; `spelling` writes a label."""
    out = [unseen_warning(counts, known, spelling, model_labels, "every such example counts as wrong")]
    out.append(constant_warning(right, counts, spelling))
    out.append(one_label_warning({v for v, c in counts.items() if c}, predicted, spelling))
    return [w for w in out if w]


def unseen_warning(counts: dict, known: set, spelling, model_labels: list[str], consequence: str) -> str | None:
    """The warning that the data hold labels the model never saw (`counts`: label -> examples; `known`:
    the model's labels), or None: eval's, and calibrate's (`consequence`: what becomes of them)."""
    unseen = [(v, c) for v, c in counts.items() if v not in known and c]
    if not unseen:
        return None
    listed = ", ".join(f"{spelling(v)} ({c:,} examples)" for v, c in unseen)
    return (
        f"the data holds labels the model never saw: {listed}; the model's labels are "
        f"{', '.join(model_labels)}, and {consequence} (a 0/1 file against a ±1 model?)"
    )


def constant_warning(
    right: float, counts: dict, spelling, kept: int | None = None, weighted: bool = False
) -> str | None:
    """The warning that a model may be no better than a constant, or None: `right` of the examples
    (`counts`: label -> examples, in a fixed order) predicted right is not more than always answering
    the most frequent label would get (the first of the most frequent ones).  eval's words for its data;
    train's (`kept`: the size of the sample of the training stream that `train` scores the model it
    writes on, report.Reservoir) say so.  `weighted`: `right` and `counts` sum the examples' weights
    (train -w, sample weights), and the constant is the label of most weight; `spelling` writes a label."""
    total = sum(counts.values())
    if not total:
        return None
    majority = max(counts, key=lambda v: counts[v])
    if right > counts[majority]:
        return None
    label, accuracy = spelling(majority), "weighted accuracy" if weighted else "accuracy"
    most = "heaviest" if weighted else "most frequent"
    if kept is None:
        return (
            f"{accuracy} {100 * right / total:.2f}% is not above the {100 * counts[majority] / total:.2f}% of always "
            f"answering the data's {most} label {label}"
        )
    return (
        f"the written model's {accuracy} on {kept:,} examples kept from the training data, {100 * right / total:.2f}%, "
        f"is not above the {100 * counts[majority] / total:.2f}% of always answering their {most} label {label}: "
        "the model may be no better than a constant"
    )


def one_label_warning(true: set, predicted: list, spelling, checked: int | None = None) -> str | None:
    """The warning that a model predicts one label for examples that hold several, or None.  `checked`:
    the examples of a sample it was checked on (train's, kept from the training data), else every one (eval's)."""
    if len(predicted) != 1 or len(true) < 2:
        return None
    label = spelling(predicted[0])
    if checked is None:
        return f"the model predicts {label} for every example"
    return (
        f"the model predicts {label} for all {checked:,} examples it was checked on (kept from the training data), "
        "which hold several labels: it is no better than a constant there; try another --gamma, a larger "
        "budget, or another algorithm"
    )


class ErrorTally:
    """A regression model's errors on data, a block at a time in constant memory: eval's report (MSE,
    RMSE, MAE, R², and the baseline of predicting `training_mean`, the mean of the targets the model
    learnt), tune's held-out MSE and cross-validation's.  The data's own mean and spread (R²'s SST) are
    merged block by block (Chan, Golub and LeVeque's pairwise update), not from Σy² − nȳ², which cancels."""

    def __init__(self, training_mean: float):
        self.training_mean = float(training_mean)
        self.n, self.sse, self.sae, self.base_sae = 0, 0.0, 0.0, 0.0
        # of the targets y and the predictions f seen: their means, Σ(y − ȳ)², Σ(f − f̄)² and Σ(f − f̄)(y − ȳ)
        self.mean, self.m2, self.mean_f, self.m2_f, self.c = 0.0, 0.0, 0.0, 0.0, 0.0

    def add(self, true: np.ndarray, f: np.ndarray) -> None:
        true, f = np.asarray(true, np.float64), np.asarray(f, np.float64)
        if not len(true):
            return
        block = ErrorTally(self.training_mean)
        block.n = len(true)
        block.sse = float(np.sum((true - f) ** 2))
        block.sae = float(np.sum(np.abs(true - f)))
        block.base_sae = float(np.sum(np.abs(true - self.training_mean)))
        block.mean, block.mean_f = float(true.mean()), float(f.mean())
        dy, df = true - block.mean, f - block.mean_f
        block.m2, block.m2_f, block.c = float(dy @ dy), float(df @ df), float(df @ dy)
        self.merge(block)

    def merge(self, other: "ErrorTally") -> None:
        """Add another tally's examples (cross-validation's folds: one tally of every held-out example)."""
        n, k = self.n + other.n, other.n
        if not k:
            return
        self.sse, self.sae, self.base_sae = self.sse + other.sse, self.sae + other.sae, self.base_sae + other.base_sae
        dy, df = other.mean - self.mean, other.mean_f - self.mean_f
        w = self.n * k / n
        self.m2 += other.m2 + dy * dy * w
        self.m2_f += other.m2_f + df * df * w
        self.c += other.c + df * dy * w
        self.mean += dy * k / n
        self.mean_f += df * k / n
        self.n = n

    @property
    def squared_correlation(self) -> float | None:
        """The squared correlation coefficient of predictions and targets, svm-train -v's for regression
        ((nΣfy − ΣfΣy)² / ((nΣf² − (Σf)²)(nΣy² − (Σy)²)), from centred sums); None when either is constant."""
        return self.c * self.c / (self.m2_f * self.m2) if self.m2_f > 0 and self.m2 > 0 else None

    def held_out(self, source: str) -> float:
        """The mean squared error (tune's held-out figure); a DataError naming `source` when there was no example."""
        if not self.n:
            raise DataError(source, 0, None, "no examples to evaluate")
        return self.mse

    @property
    def mse(self) -> float:
        return self.sse / self.n if self.n else 0.0

    def report(self) -> dict:
        """eval's report: MSE, RMSE, MAE and R² (1 − SSE/SST, SST about the data's own mean, scikit-learn's
        r2_score; None when every target is the same), and the baseline of predicting the training mean
        (its MSE, MAE and R²); its `warnings` (`regression_warnings`)."""
        n, sst = self.n, self.m2
        base_sse = sst + n * (self.mean - self.training_mean) ** 2  # Σ(y − m)² about the training mean m

        def r2(sse: float) -> float | None:
            return (1.0 - sse / sst) if sst > 0 else None

        report = {
            "task": "regression",
            "examples": int(n),
            "mse": self.mse,
            "rmse": float(np.sqrt(self.mse)),
            "mae": self.sae / n if n else 0.0,
            "r2": r2(self.sse),
            "baseline": {
                "prediction": self.training_mean,
                "mse": base_sse / n if n else 0.0,
                "mae": self.base_sae / n if n else 0.0,
                "r2": r2(base_sse),
            },
        }
        report["warnings"] = regression_warnings(report)
        return report


def regression_warnings(report: dict) -> list[str]:
    """That the model is no better on the data than predicting the training mean."""
    base = report["baseline"]
    if report["mse"] < base["mse"]:
        return []
    return [
        f"the model's MSE {report['mse']:.6g} is no better than predicting the training mean "
        f"{base['prediction']:.6g} ({base['mse']:.6g})"
    ]
