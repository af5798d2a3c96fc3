"""The classification task (task/__init__.py says what a task owns), and its end-of-run warnings."""

from __future__ import annotations

import numpy as np

from .. import metrics
from ...base.core import DataError, unique
from ..labels import BinaryLabels, MulticlassLabels
from ..metrics import constant_warning, one_label_warning


class Classification:
    """Labels are classes: two (the binary learners' ±1) or more (class indices 0, 1, ...)."""

    name = "classification"
    labelled = True  # every line learnt from starts with its label

    @staticmethod
    def choose(spec, chunk):
        """The run's spec with its algorithm: the one it names, else the default for the number of
        labels of the first block (registry.DEFAULT)."""
        return spec.choosing(len(unique(chunk.labels)))

    @staticmethod
    def check_labels(model, chunk, source: str) -> None:
        """A DataError naming the first line whose label is not a whole number, when the labels the model
        holds and the chunk's are more than two: real-valued targets are regression's, which is never
        guessed (`--task regression`).  Two labels spelt as any numbers (0.5 and 1.5) stay two classes."""
        labels = chunk.labels
        whole = labels == np.floor(labels)
        if whole.all() or len(set(model.labels.classes) | set(unique(labels).tolist())) <= 2:
            return
        row = int(np.flatnonzero(~whole)[0])
        raise DataError(
            source,
            int(chunk.line_numbers[row]),
            chunk.label_spellings.get(float(labels[row]), repr(float(labels[row]))),
            "the label is not a whole number, as a class label is; for real-valued targets give --task regression",
        )

    @staticmethod
    def label_map(learner_cls):
        """The empty label map of a new model: its labels are numbered as they first appear."""
        return MulticlassLabels() if learner_cls.multiclass else BinaryLabels()

    @staticmethod
    def encode(model, chunk, source: str) -> np.ndarray:
        """The learner's codes of a chunk's labels (DataError naming the first line the map refuses, or
        whose label is not a whole number among more than two: `check_labels`)."""
        Classification.check_labels(model, chunk, source)
        return model.labels.encode(chunk, source)

    @staticmethod
    def weights(model, chunk) -> np.ndarray | None:
        """Each example's weight, its class's (`train -w`: label value -> weight, the model's class_weight)
        times its own (chunk.weights, a sample weight); None when the chunk has neither."""
        weights = None if chunk.weights is None else np.asarray(chunk.weights, np.float64)
        for label, w in model.class_weight.items():
            where = chunk.labels == label
            if where.any():
                weights = np.ones(len(chunk)) if weights is None else weights.copy()
                weights[where] *= w
        return weights

    @staticmethod
    def summary(learner) -> dict:
        """The train summary's counts of the online hypothesis (its JSON fields)."""
        t, mistakes = learner.counter("examples"), learner.counter("mistakes")
        return {
            "mistakes": mistakes,
            "online_mistake_rate": mistakes / t if t else 0.0,
            "margin_updates": learner.counter("margin_updates"),
        }

    @staticmethod
    def summary_lines(s: dict) -> list[str]:
        return [
            f"mistakes        {s['mistakes']:,} ({100 * s['online_mistake_rate']:.2f}% online)",
            f"margin updates  {s['margin_updates']:,}",
        ]

    score_is_prediction = False  # predict --scores writes the label, then the score(s)

    # tune's figures of a run (tune.RunResult's fields): online, on --test, on --folds; and the sort
    # (tune.SORT_KEYS) that ranks by each
    TUNE = {"online": "online_mistake_rate", "test": "test_accuracy", "cv": "cv_accuracy"}
    SORTS = {"online": "error", "test": "test-accuracy", "cv": "cv-accuracy"}
    # train --curve's error columns (curve.py: t, these two, support_size, seconds); plot's axis of the
    # second: its label and the factor it is drawn with
    CURVE = ("mistakes", "online_rate")
    CURVE_AXIS = ("online error (%)", 100.0)

    @staticmethod
    def curve_error(learner) -> tuple[str, float]:
        """The online mistakes so far, as the curve writes them, and their share of the examples."""
        t, m = learner.counter("examples"), learner.counter("mistakes")
        return str(m), m / t if t else 0.0

    @staticmethod
    def tally(model):
        """What scores a model on held-out examples, a block at a time (`add(true, scores)`, `held_out(source)`:
        its accuracy)."""
        return metrics.PredictionTally(model.labels)

    @staticmethod
    def cross_validation(folds: list) -> dict:
        """`train -v K`'s report of its folds (crossval.Fold, each with its tally): svm-train's accuracy."""
        examples, correct = sum(f.examples for f in folds), sum(f.tally.right for f in folds)
        return {
            "folds": len(folds),
            "examples": examples,
            "correct": correct,
            "cross_validation_accuracy": correct / examples,
            "per_fold": [{"examples": f.examples, "correct": f.tally.right} for f in folds],
        }

    @staticmethod
    def cross_validation_lines(report: dict) -> list[str]:
        """svm-train -v's line: `printf("Cross Validation Accuracy = %g%%\\n", 100.0*total_correct/prob.l)`."""
        return ["Cross Validation Accuracy = %g%%" % (100.0 * report["cross_validation_accuracy"])]

    @staticmethod
    def fold_text(fold) -> str:
        return f"{100 * fold.tally.right / fold.examples:.2f}%"

    @staticmethod
    def evaluate(model, blocks) -> dict:
        """eval's report of `model` on `blocks` ((chunk, scores) pairs, pipeline.scores): accuracy, precision,
        recall and F1 per class, AUC of a binary model, the confusion matrix, log loss and calibration error
        of a calibrated model, and its `warnings`; ValueError when there is no example."""
        labels = model.labels
        all_scores, all_true = [], []  # binary: f(x); multiclass: the predicted class (memory: O(examples))
        tally = metrics.ProbabilityTally() if model.calibration is not None else None
        for chunk, f in blocks:
            if tally is not None:
                tally.add(model.probabilities(f), labels.index_of(chunk.labels))
            all_scores.append(labels.predict_index(f) if model.learner.multiclass else f)
            all_true.append(chunk.labels)
            for v, s in chunk.label_spellings.items():
                labels.spellings.setdefault(v, s)
        if not all_true or not sum(len(t) for t in all_true):
            raise ValueError("no examples to evaluate")
        true = np.concatenate(all_true)
        if model.learner.multiclass:
            report = metrics.multiclass_report(labels.classes, labels.spelling, true, np.concatenate(all_scores))
        else:
            report = metrics.binary_report(labels, true, np.concatenate(all_scores))
        if tally is not None:
            report |= tally.report()
        report["warnings"] = metrics.warnings(report, [labels.spelling(v) for v in labels.classes])
        return report

    @staticmethod
    def print_report(r: dict, console) -> None:
        """`evaluate`'s report as eval prints it on `console` (rich): the figures, then two tables."""
        from rich.table import Table

        if r.get("multiclass"):  # AUC is binary-only
            auc = ""
        elif r["auc"] is None:
            auc = f"\nAUC       n/a (one class only) (positive label {r['positive_label']})"
        else:
            auc = f"\nAUC       {r['auc']:.4f} (positive label {r['positive_label']})"
        probabilities = ""
        if r.get("log_loss") is not None:
            probabilities = (
                f"\nlog loss  {r['log_loss']:.4f}\nECE       {r['ece']:.4f} (10 bins of the top probability)"
            )
        console.print(
            f"examples  {r['examples']:,}\naccuracy  {100 * r['accuracy']:.2f}%\nerror     {100 * r['error']:.2f}%{auc}"
            + probabilities
        )
        table = Table(title="per class", title_justify="left")
        for col in ("label", "precision", "recall", "F1", "support"):
            table.add_column(col, justify="right")
        for name, m in r["classes"].items():
            table.add_row(name, f"{m['precision']:.4f}", f"{m['recall']:.4f}", f"{m['f1']:.4f}", f"{m['support']:,}")
        console.print(table)
        cm = r["confusion_matrix"]
        table = Table(title="confusion matrix", title_justify="left")
        table.add_column("true \\ predicted", justify="right")
        for name in cm["labels"]:
            table.add_column(name, justify="right")
        for name, row in zip(cm["labels"], cm["rows_true_columns_predicted"]):
            table.add_row(name, *(f"{v:,}" for v in row))
        console.print(table)

    class Tally:
        """A run's label values (label -> examples), and the warnings the run gives at its end."""

        def __init__(self):
            self.labels: dict = {}

        def add(self, chunk) -> None:
            values, counts = unique(chunk.labels, return_counts=True)
            for v, c in zip(values.tolist(), counts.tolist()):
                self.labels[v] = self.labels.get(v, 0) + c

        @property
        def examples(self) -> int:
            return sum(self.labels.values())

        def warnings(self, online, written, sample) -> list[str]:
            """That the `written` model may be no better than a constant (`outcome_warnings`, on `sample`, a
            Chunk kept from the run's examples), and that a class weight names a label the run never met."""
            return outcome_warnings(written, sample) + class_weight_warnings(
                online.class_weight, self.labels, online.labels.spelling
            )


def outcome_warnings(model, sample) -> list[str]:
    """Warnings that the model a run writes may be no better than a constant (metrics.constant_warning and
    metrics.one_label_warning, eval's rules), from its predictions on `sample` (a Chunk kept from the
    run's examples, report.Reservoir), which holds several labels: its accuracy there (weighted by the
    examples' weights when the run has any) is not above always answering the sample's most frequent
    (heaviest) label; or it predicts one label for every example."""
    if sample is None:
        return []
    with np.errstate(all="ignore"):
        predicted = model.predicted(model.scorer().decision_function(sample))
    weights = Classification.weights(model, sample)
    weight = np.ones(len(sample)) if weights is None else weights
    counts: dict = {}
    for label, w in zip(sample.labels.tolist(), weight.tolist()):
        counts[label] = counts.get(label, 0.0) + w
    right = float(weight[predicted == sample.labels].sum())
    if weights is None:
        counts, right = {label: int(c) for label, c in counts.items()}, int(right)
    if len(counts) < 2:  # one label: no model does better than answering it
        return []
    spelling = model.labels.spelling
    out = [constant_warning(right, counts, spelling, kept=len(sample), weighted=weights is not None)]
    out.append(one_label_warning(set(counts), unique(predicted).tolist(), spelling, len(sample)))
    return [w for w in out if w]


def class_weight_warnings(class_weight: dict, labels: dict, spelling) -> list[str]:
    """The warning that a class weight names a label the run never met (LIBSVM's "class label not found")."""
    missing = [label for label in class_weight if label not in labels]
    if not missing:
        return []
    return [f"a class weight names {', '.join(spelling(v) for v in missing)}, which no example of this run has"]
