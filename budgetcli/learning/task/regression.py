"""The regression task (LIBSVM's epsilon_svr; task/__init__.py says what a task owns)."""

from __future__ import annotations

import numpy as np

from .. import metrics
from ...base import registry
from ..targets import RealTargets
from .scalars import ABSOLUTE_ERROR, SQUARED_ERROR, TARGET_SUM


class Regression:
    """Targets are real numbers, learnt as they are (targets.RealTargets: the model keeps their count and
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
