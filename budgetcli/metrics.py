"""Evaluation metrics: accuracy, per-class precision/recall/F1, AUC, confusion matrix; log loss and
calibration error of a calibrated model's probabilities."""

from __future__ import annotations

import numpy as np

from .core import unique

REPORT_CLASSES = 1000  # most classes an eval report lists whether they occur or not


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
    accuracy = float(np.mean(true_idx == pred_idx))
    labels = [names(v) for v in classes]
    return {
        "multiclass": True,
        "examples": int(true.size),
        "accuracy": accuracy,
        "error": 1.0 - accuracy,
        "auc": None,
        "positive_label": None,
        "classes": {n: m for n, m in zip(labels, per_class(conf))},
        "confusion_matrix": {"labels": labels, "rows_true_columns_predicted": conf.tolist()},
    }


def binary_report(labels, true: np.ndarray, f: np.ndarray) -> dict:
    """The eval report of a binary model (labels.BinaryLabels) of scores f: accuracy, AUC, per-class
    table and confusion matrix over the model's two labels, then any label of the data it never saw."""
    classes = labels.classes + sorted(set(unique(true).tolist()) - set(labels.classes))
    positive = labels.positive if labels.positive is not None else labels.negative
    negative = labels.negative if labels.negative is not None else labels.positive
    index = {v: i for i, v in enumerate(classes)}
    true_idx = np.array([index[v] for v in true.tolist()])
    pred_idx = np.where(f > 0, index[positive], index[negative])
    conf = confusion_matrix(true_idx, pred_idx, len(classes))
    accuracy = float(np.mean(true_idx == pred_idx))
    names = [labels.spelling(v) for v in classes]
    return {
        "examples": int(f.size),
        "accuracy": accuracy,
        "error": 1.0 - accuracy,
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
    """What an eval report shows that a user should not miss: labels of the data the model never saw
    (every such example is wrong), an accuracy not above always answering the data's most frequent
    label, and one label predicted for every example."""
    names = report["confusion_matrix"]["labels"]
    rows = np.array(report["confusion_matrix"]["rows_true_columns_predicted"], np.int64).reshape(len(names), -1)
    n = report["examples"]
    out = []
    unseen = [(name, int(rows[i].sum())) for i, name in enumerate(names) if name not in model_labels and rows[i].sum()]
    if unseen:
        listed = ", ".join(f"{name} ({count:,} examples)" for name, count in unseen)
        out.append(
            f"the data holds labels the model never saw: {listed}; the model's labels are "
            f"{', '.join(model_labels)}, and every such example counts as wrong (a 0/1 file against a "
            "±1 model?)"
        )
    majority = int(rows.sum(axis=1).argmax())
    share = rows[majority].sum() / n
    if report["accuracy"] <= share:
        out.append(
            f"accuracy {100 * report['accuracy']:.2f}% is not above the {100 * share:.2f}% of always "
            f"answering the data's most frequent label {names[majority]}"
        )
    predicted = np.flatnonzero(rows.sum(axis=0))
    if len(predicted) == 1 and np.count_nonzero(rows.sum(axis=1)) > 1:
        out.append(f"the model predicts {names[predicted[0]]} for every example")
    return out
