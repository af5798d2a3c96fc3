"""What a learning session learns: the task (LIBSVM's svm_type), classification or regression; a task
owns what differs from one task to another, so that the loops over a session (session.py) never ask
which task they run:

- the algorithm a run takes when none is named (`choose`, from the first block of data);
- the targets: the label map a new model starts with (`label_map`) and how a chunk's labels become the
  learner's codes (`encode`, through that map), and each example's weight (`weights`: its class's times
  its own);
- what a run counts besides the learner's counters and what it warns of at its end (`Tally`).

and what a run's summary counts (`summary`, `summary_lines`).  A learner declares the tasks it learns
(contract.Learner.tasks); a model file says its task in its header ("task"; a file without it is a
classification model's).  Novelty detection (`Novelty`, LIBSVM's one_class) learns from unlabelled lines
(`labelled` False: a line may leave its label out)."""

from __future__ import annotations

import numpy as np

from . import metrics, registry
from .core import DataError, unique
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
        fraction beside ν, the fraction the learner aims at, and the threshold ρ of the last hypothesis."""
        t, flagged = learner.counter("examples"), learner.counter("margin_updates")
        return {
            "online_flagged": flagged,
            "online_flagged_fraction": flagged / t if t else 0.0,
            "nu": learner.hyper["nu"],
            "rho": float(learner.scalars[RHO]),
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
    def evaluate(model, data, skip_bad_lines: bool, normal_label: float) -> dict:
        """eval's report of a novelty model on labelled DATA, where examples labelled `normal_label` are
        normal and every other is novel: the AUC of the score g(x) for normal against novel (1: every
        normal example scores above every novel one), the precision and recall of the flagged class (g ≤ 0)
        at the model's threshold, and the fraction flagged.  DataError for a bad line; ValueError when DATA
        holds no example."""
        from . import pipeline

        scores, labels = [], []
        for chunk, g in pipeline.scores(model, data, skip_bad_lines=skip_bad_lines):
            scores.append(g)
            labels.append(chunk.labels)
        g = np.concatenate(scores) if scores else np.zeros(0)
        if g.size == 0:
            raise ValueError(f"{data}: no examples to evaluate")
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
