"""The novelty-detection task (LIBSVM's one_class; task/__init__.py says what a task owns)."""

from __future__ import annotations

import numpy as np

from .. import metrics
from ...base import registry
from ..targets import NoveltyVerdicts
from .regression import Regression


class Novelty:
    """One-class learning (LIBSVM's one_class, scikit-learn's OneClassSVM): the learner sees inputs only and
    learns f and a threshold ρ such that a fraction ν of what it meets scores g(x) = f(x) − ρ ≤ 0; such an
    example is flagged novel (−1), any other is normal (+1).  Labels, when lines have them, are not read
    while learning (targets.NoveltyVerdicts); `eval` reads them to say which examples are normal."""

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

    # tune's figures of a run (tune.RunResult's fields): the AUC on --test, which ranks (--sort test-auc; its
    # labels say which examples are normal, --normal-label L); the fraction flagged online, a column beside ν
    # but no rank (the learner drives it to ν whatever the setting's worth); no cross-validated figure
    # (train -v does not cross-validate a novelty detector)
    TUNE = {"online": "online_flagged_fraction", "test": "test_auc", "cv": None}
    SORTS = {"test": "test-auc"}

    @staticmethod
    def tally(model, normal_label: float = 1.0):
        """What scores a model on held-out labelled examples (metrics.AucTally: `held_out(source)` is the AUC
        of the examples labelled `normal_label` above the others)."""
        return metrics.AucTally(normal_label)

    @staticmethod
    def evaluate(model, blocks, normal_label: float = 1.0) -> dict:
        """eval's report of a novelty model on `blocks` ((chunk, scores) pairs of labelled data,
        pipeline.scores), where examples labelled `normal_label` are normal and every other is novel: the AUC
        of the score g(x) for normal against novel (1: every normal example scores above every novel one), the
        precision and recall of the flagged class (g ≤ 0) at the model's threshold, the fraction flagged, and
        its `warnings`.  It reads the labels learning ignored (eval --normal-label L; default 1, LIBSVM's and
        scikit-learn's +1).  DataError for a bad line; ValueError when there is no example."""
        tally = Novelty.tally(None, normal_label)
        for chunk, g in blocks:
            tally.add(chunk.labels, g)
        g, normal = tally.arrays()
        if g.size == 0:
            raise ValueError("no examples to evaluate")
        flagged = g <= 0.0
        caught = int(np.sum(flagged & ~normal))
        report = {
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
        report["warnings"] = Novelty.report_warnings(report)
        return report

    @staticmethod
    def print_report(r: dict, console) -> None:
        """`evaluate`'s report as eval prints it on `console` (rich), its lines as they are."""
        console.print("\n".join(Novelty.report_lines(r)), markup=False, emoji=False, soft_wrap=True)

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
