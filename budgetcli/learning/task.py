"""What a learning session learns: the task (LIBSVM's svm_type), classification or regression; a task
owns what differs from one task to another, so that the loops over a session (session.py) never ask
which task they run:

- the algorithm a run takes when none is named (`choose`, from the first block of data);
- the targets: the label map a new model starts with (`label_map`) and how a chunk's labels become the
  learner's codes (`encode`, through that map), and each example's weight (`weights`: its class's times
  its own);
- what a run counts besides the learner's counters and what it warns of at its end (`Tally`);
- eval's report of a model on data (`evaluate`, `print_report`), and whether a score is the prediction
  itself (`score_is_prediction`: predict --scores then writes it once);
- how held-out examples are scored (`tally`: tune's --test and --folds, `train -v`), what `train -v K`
  reports (`cross_validation`, `cross_validation_lines`, `fold_text`) and tune's figures (`TUNE`);
- the online error of `train --curve` (`CURVE`, `curve_error`) and how `plot` draws it (`CURVE_AXIS`).

and what a run's summary counts (`summary`, `summary_lines`).  A learner declares the tasks it learns
(contract.Learner.tasks); a model file says its task in its header ("task"; a file without it is a
classification model's).  Novelty detection (`Novelty`, LIBSVM's one_class) learns from unlabelled lines
(`labelled` False: a line may leave its label out)."""

from __future__ import annotations

import numpy as np

from . import metrics
from ..base import registry
from ..base.core import DataError, unique
from .labels import BinaryLabels, MulticlassLabels, NoveltyVerdicts, RealTargets
from .metrics import constant_warning, one_label_warning

# A regression learner's running sums, in its `scalars`: of its online (a priori) errors y_t − f_t(x_t),
# squared and absolute, and of the targets (their mean: eval's baseline), added as each example is learnt
# (so that a checkpoint or a resume holds them exactly).
SQUARED_ERROR, ABSOLUTE_ERROR, TARGET_SUM = 0, 1, 2
# A novelty detector's, in its `scalars`: its threshold ρ (the score is g(x) = f(x) − ρ), and the sum of the ρ of
# every hypothesis after a round, whose mean is the averaged hypothesis's ρ; the rounds it flagged (g ≤ 0, the
# one-class hinge's margin errors) are its counter `margin_updates`.
RHO, RHO_SUM = 0, 1


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
    run's examples, pipeline.Reservoir), which holds several labels: its accuracy there (weighted by the
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


class Regression:
    """Targets are real numbers, learnt as they are (labels.RealTargets: the model keeps their count and
    sum, so their mean); a prediction is the score f(x) itself."""

    name = "regression"
    labelled = True

    @staticmethod
    def choose(spec, chunk):
        """The run's spec with its algorithm: the one it names, else registry.DEFAULT["regression"]."""
        return spec.defaulting(registry.DEFAULT["regression"], "regression")

    @staticmethod
    def label_map(learner_cls):
        return RealTargets()

    @staticmethod
    def encode(model, chunk, source: str) -> np.ndarray:
        """The targets (DataError naming the first line whose target is not finite)."""
        return model.labels.encode(chunk, source)

    @staticmethod
    def weights(model, chunk) -> np.ndarray | None:
        """Each example's weight: its own (a sample weight; regression has no classes to weigh)."""
        return None if chunk.weights is None else np.asarray(chunk.weights, np.float64)

    @staticmethod
    def training_mean(learner) -> float:
        """The mean of the targets the learner has learnt (0 before any)."""
        t = learner.counter("examples")
        return float(learner.scalars[TARGET_SUM]) / t if t else 0.0

    @staticmethod
    def summary(learner) -> dict:
        """The online (a priori, prequential) errors y_t − f_t(x_t) of the hypothesis learnt so far, as the
        learner summed them (scalars[SQUARED_ERROR], scalars[ABSOLUTE_ERROR])."""
        t = learner.counter("examples")
        squared, absolute = (float(v) for v in learner.scalars[[SQUARED_ERROR, ABSOLUTE_ERROR]])
        return {
            "online_squared_error": squared,
            "online_mse": squared / t if t else 0.0,
            "online_absolute_error": absolute,
            "online_mae": absolute / t if t else 0.0,
        }

    @staticmethod
    def summary_lines(s: dict) -> list[str]:
        return [
            f"online MSE      {s['online_mse']:.6g} (squared error {s['online_squared_error']:.6g})",
            f"online MAE      {s['online_mae']:.6g} (absolute error {s['online_absolute_error']:.6g})",
        ]

    @staticmethod
    def info_rows(d: dict) -> list[tuple[str, str]]:
        """`info`'s rows of what the model counted (its `summary`'s fields, in `d`)."""
        return [("online MSE", f"{d['online_mse']:.6g}"), ("online MAE", f"{d['online_mae']:.6g}")]

    score_is_prediction = True  # the prediction is the score f(x): predict --scores writes it once

    TUNE = {"online": "online_mse", "test": "test_mse", "cv": "cv_mse"}
    SORTS = {"online": "online-mse", "test": "test-mse", "cv": "cv-mse"}
    CURVE = ("squared_error", "online_mse")
    CURVE_AXIS = ("online mean squared error", 1.0)

    @staticmethod
    def curve_error(learner) -> tuple[str, float]:
        """The online squared error so far, Σ(y_t − f_t(x_t))², and its mean (`summary`'s)."""
        s = Regression.summary(learner)
        return f"{s['online_squared_error']:.10g}", s["online_mse"]

    @staticmethod
    def tally(model):
        """What scores a model on held-out examples (metrics.ErrorTally: `held_out(source)` is the MSE)."""
        return metrics.ErrorTally(Regression.training_mean(model.learner))

    @staticmethod
    def cross_validation(folds: list) -> dict:
        """`train -v K`'s report of its folds: the mean squared error of every held-out example and the
        squared correlation coefficient of their predictions and targets, as svm-train -v reports them."""
        every = metrics.ErrorTally(0.0)
        for fold in folds:
            every.merge(fold.tally)
        return {
            "folds": len(folds),
            "examples": every.n,
            "cross_validation_mse": every.mse,
            "squared_correlation_coefficient": every.squared_correlation,
            "per_fold": [{"examples": f.examples, "mse": f.tally.mse} for f in folds],
        }

    @staticmethod
    def cross_validation_lines(report: dict) -> list[str]:
        """svm-train -v's two lines for ε-SVR and ν-SVR (svm-train.c, do_cross_validation)."""
        r2 = report["squared_correlation_coefficient"]
        return [
            "Cross Validation Mean squared error = %g" % report["cross_validation_mse"],
            "Cross Validation Squared correlation coefficient = %s" % ("nan" if r2 is None else "%g" % r2),
        ]

    @staticmethod
    def fold_text(fold) -> str:
        return f"MSE {fold.tally.mse:.6g}"

    @staticmethod
    def evaluate(model, blocks) -> dict:
        """eval's report of `model` on `blocks` ((chunk, scores) pairs, pipeline.scores): MSE, RMSE, MAE, R²
        and the baseline of predicting the training mean (metrics.ErrorTally), and its `warnings`;
        ValueError when there is no example."""
        tally = metrics.ErrorTally(Regression.training_mean(model.learner))
        for chunk, f in blocks:
            tally.add(chunk.labels, f)
        if not tally.n:
            raise ValueError("no examples to evaluate")
        return tally.report()

    @staticmethod
    def print_report(r: dict, console) -> None:
        """`evaluate`'s report as eval prints it on `console` (rich)."""
        base = r["baseline"]

        def shown(v):
            return "n/a (every target the same)" if v is None else f"{v:.6g}"

        console.print(
            f"examples  {r['examples']:,}\nMSE       {r['mse']:.6g}\nRMSE      {r['rmse']:.6g}\n"
            f"MAE       {r['mae']:.6g}\nR²        {shown(r['r2'])}\n"
            f"baseline  the training mean {base['prediction']:.6g}: MSE {base['mse']:.6g}, MAE {base['mae']:.6g}, "
            f"R² {shown(base['r2'])}",
            soft_wrap=True,
        )

    class Tally:
        """A run's examples, and the warning the run gives at its end."""

        def __init__(self):
            self.examples = 0

        def add(self, chunk) -> None:
            self.examples += len(chunk)

        def warnings(self, online, written, sample) -> list[str]:
            """That the `written` model is no better than predicting the running mean of the targets (the
            mean of every target the model has learnt, which it keeps), on `sample`, examples kept from the
            run: its mean squared error there is not below the mean's."""
            if sample is None or len(sample) < 2:
                return []
            with np.errstate(all="ignore"):
                f = written.scorer().decision_function(sample)
            weight = np.ones(len(sample)) if sample.weights is None else np.asarray(sample.weights, np.float64)
            mse = float(np.sum(weight * (sample.labels - f) ** 2) / weight.sum())
            mean = Regression.training_mean(online.learner)
            baseline = float(np.sum(weight * (sample.labels - mean) ** 2) / weight.sum())
            if not mse < baseline:
                return [
                    f"the model is no better than the running mean: its mean squared error on {len(sample):,} "
                    f"examples of this run is {mse:.6g}, predicting the mean of the targets ({mean:.6g}) gives "
                    f"{baseline:.6g}; check the step size, γ and the feature scaling"
                ]
            return []


class Novelty:
    """One-class learning (LIBSVM's one_class, scikit-learn's OneClassSVM): the learner sees inputs only and
    learns f and a threshold ρ such that a fraction ν of what it meets scores g(x) = f(x) − ρ ≤ 0; such an
    example is flagged novel (−1), any other is normal (+1).  Labels, when lines have them, are not read
    while learning (labels.NoveltyVerdicts); `eval` reads them to say which examples are normal."""

    name = "novelty"
    score_is_prediction = False  # predict --scores writes the verdict (+1 or -1), then the score g(x)
    labelled = False  # a line may leave its label out (`1:0.5 2:1`), as predict reads it; one that has it: ignored

    @staticmethod
    def choose(spec, chunk):
        """The run's spec with its algorithm: the one it names, else registry.DEFAULT["novelty"]."""
        return spec.defaulting(registry.DEFAULT["novelty"], "novelty detection")

    @staticmethod
    def label_map(learner_cls):
        return NoveltyVerdicts()

    @staticmethod
    def encode(model, chunk, source: str) -> np.ndarray:
        return model.labels.encode(chunk, source)

    @staticmethod
    def weights(model, chunk) -> np.ndarray | None:
        """Each example's weight: its own (a sample weight; there are no classes to weigh)."""
        return Regression.weights(model, chunk)

    @staticmethod
    def summary(learner) -> dict:
        """The rounds flagged online (g_t(x_t) ≤ 0, by the hypothesis before the example was learnt), their
        fraction beside ν, the fraction the learner aims at, and the threshold ρ the learner's hypothesis
        predicts with (its `threshold`: refitted, or the last ρ_T; algorithms/novelty.py)."""
        t, flagged = learner.counter("examples"), learner.counter("margin_updates")
        return {
            "online_flagged": flagged,
            "online_flagged_fraction": flagged / t if t else 0.0,
            "nu": learner.hyper["nu"],
            "rho": learner.threshold(),
        }

    @staticmethod
    def summary_lines(s: dict) -> list[str]:
        return [
            f"flagged         {s['online_flagged']:,} ({100 * s['online_flagged_fraction']:.2f}% online; "
            f"ν = {100 * s['nu']:.2f}%)",
            f"threshold ρ     {s['rho']:.6g}",
        ]

    @staticmethod
    def info_rows(d: dict) -> list[tuple[str, str]]:
        return [
            ("flagged", f"{d['online_flagged']:,} ({100 * d['online_flagged_fraction']:.2f}% online; ν = {d['nu']:g})"),
            ("threshold ρ", f"{d['rho']:.6g}"),
        ]

    class Tally:
        """A run's examples, and the warning the run gives at its end."""

        def __init__(self):
            self.examples = 0

        def add(self, chunk) -> None:
            self.examples += len(chunk)

        def warnings(self, online, written, sample) -> list[str]:
            """That the `written` model flags every example, or none, of `sample` (examples kept from the
            run), which it learnt to flag a fraction ν of: it is no better than a constant there."""
            if sample is None or len(sample) < 2:
                return []
            with np.errstate(all="ignore"):
                flagged = int(np.sum(written.scorer().decision_function(sample) <= 0.0))
            if 0 < flagged < len(sample):
                return []
            what = "every one" if flagged else "none"
            return [
                f"the model flags {what} of {len(sample):,} examples of this run as novel, where it aims at "
                f"ν = {online.learner.hyper['nu']:g} of them: it is no better than a constant; check γ, the step "
                "size and the feature scaling"
            ]

    @staticmethod
    def evaluate(model, blocks, normal_label: float) -> dict:
        """eval's report of a novelty model on `blocks` ((chunk, scores) pairs of labelled data,
        pipeline.scores), where examples labelled `normal_label` are normal and every other is novel: the AUC
        of the score g(x) for normal against novel (1: every normal example scores above every novel one), the
        precision and recall of the flagged class (g ≤ 0) at the model's threshold, and the fraction flagged.
        DataError for a bad line; ValueError when there is no example."""
        scores, labels = [], []
        for chunk, g in blocks:
            scores.append(g)
            labels.append(chunk.labels)
        g = np.concatenate(scores) if scores else np.zeros(0)
        if g.size == 0:
            raise ValueError("no examples to evaluate")
        normal = np.concatenate(labels) == normal_label
        flagged = g <= 0.0
        caught = int(np.sum(flagged & ~normal))
        return {
            "task": "novelty",
            "examples": int(g.size),
            "normal_label": normal_label,
            "normal": int(normal.sum()),
            "novel": int((~normal).sum()),
            "auc": metrics.auc(g, normal),
            "flagged": int(flagged.sum()),
            "flagged_fraction": float(flagged.mean()),
            "precision": caught / int(flagged.sum()) if flagged.any() else None,
            "recall": caught / int((~normal).sum()) if (~normal).any() else None,
            "flagged_normal_fraction": float(flagged[normal].mean()) if normal.any() else None,
            "nu": model.learner.hyper["nu"],
        }

    @staticmethod
    def report_lines(r: dict) -> list[str]:
        def shown(v, what):
            return f"n/a ({what})" if v is None else f"{v:.4f}"

        return [
            f"examples          {r['examples']:,} ({r['normal']:,} normal: label {r['normal_label']:g}; "
            f"{r['novel']:,} novel)",
            f"AUC               {shown(r['auc'], 'one kind of example only')} (score g(x): normal above novel)",
            f"flagged           {r['flagged']:,} ({100 * r['flagged_fraction']:.2f}%; ν = {100 * r['nu']:.2f}%)",
            f"precision         {shown(r['precision'], 'nothing flagged')} (flagged examples that are novel)",
            f"recall            {shown(r['recall'], 'no novel example')} (novel examples flagged)",
            f"normal flagged    {shown(r['flagged_normal_fraction'], 'no normal example')}",
        ]

    @staticmethod
    def report_warnings(r: dict) -> list[str]:
        """That the data hold no example labelled normal (a wrong --normal-label?), or no novel one."""
        if not r["normal"]:
            return [f"no example is labelled {r['normal_label']:g}, the normal label (--normal-label L says it)"]
        if not r["novel"]:
            return [
                f"every example is labelled {r['normal_label']:g} (normal): AUC, precision and recall need novel ones"
            ]
        return []


CLASSIFICATION = Classification()
REGRESSION = Regression()
NOVELTY = Novelty()
TASKS = {"classification": CLASSIFICATION, "regression": REGRESSION, "novelty": NOVELTY}


def named(name: str | None):
    """The task of a name (None: classification, a file's or a spec's that says none)."""
    return TASKS[name or "classification"]


def of_targets(labels):
    """The task whose targets a model's label map holds."""
    if isinstance(labels, NoveltyVerdicts):
        return NOVELTY
    return REGRESSION if isinstance(labels, RealTargets) else CLASSIFICATION
