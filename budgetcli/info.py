"""`budgetlearn info`: what a model file holds, as a dict (for --json) and as text."""

from __future__ import annotations

import os

from .base import registry
from .learning import task
from .model.model import HYPOTHESES
from .learning.records import COUNTER_NAMES


def describe(model, path) -> dict:
    """Algorithm, parameters, kernel, labels, hypothesis, support size, bytes, training counters."""
    learner = model.learner
    kernel = learner.kernel
    labels = model.labels
    label_info = labels.to_dict() if hasattr(labels, "to_dict") else {"kind": type(labels).__name__}
    if label_info.get("kind") == "binary":
        spell = labels.spelling
        label_info = {
            "kind": "binary",
            "positive": spell(labels.positive) if labels.positive is not None else None,
            "negative": spell(labels.negative) if labels.negative is not None else None,
        }
    else:  # another label map (multiclass): report what it says about itself, without assuming its layout
        label_info = {k: v for k, v in label_info.items() if k != "spellings"}
    return {
        "model": os.fspath(path),
        "algorithm": learner.name,
        "params": dict(learner.hyper),
        "seed": learner.seed,
        "kernel": kernel.to_dict()
        | {"sigma": kernel.sigma if kernel.kind != "linear" else None}
        | ({"exp": kernel.exp} if kernel.kind == "rbf" else {}),  # named too where the file leaves it out (libm's)
        "labels": label_info,
        "hypothesis": model.hypothesis,
        "resume_state": _resume_state(model),
        # whether `train --resume` from this file goes on bit for bit (null: a batch model), and why not
        "resume_exact": None
        if model.hypothesis in ("average", "projected-average") or model.mixed_once()
        else model.inexact_resume() is None,
        "resume_not_exact": model.inexact_resume(),
        **learner.info_fields(),  # support_size, support_nonzeros, feature_map: the hypothesis' kind's
        **_features(learner, model.first_index),
        "first_index": model.first_index,  # the index of an array's column 0 (Model.first_index)
        "scaling": None
        if model.scaling is None
        else {
            "lower": model.scaling.ranges.lower,
            "upper": model.scaling.ranges.upper,
            "features": len(model.scaling.ranges),
            "from": model.scaling.source,
        },
        # label -> weight (train -w), as its labels are spelt; {} when every class weighs 1
        "class_weight": {model.labels.spelling(label): w for label, w in model.class_weight.items()},
        "bytes": os.path.getsize(path),
        "counters": {name: learner.counter(name) for name in COUNTER_NAMES},
        # a regression model's (learning/task): its task, and its online errors (a classification model's: counters)
        **(
            {}
            if model.task.name == "classification"
            else {"task": model.task.name} | model.task.summary(model.hypothesis_learner())  # a novelty model's ρ
        ),
    }


def _features(learner, first_index: int) -> dict:
    """The features the model was trained on, counted as LIBSVM counts them (Chunk.feature_count): the
    largest feature index, and one more when index 0 occurred in its data (`first_index` 0: a 0-based
    file's).  The learner keeps the largest index + 1 (the width its dense copies need); reporting that
    as the count made a 1-based file of 123 features (a9a) a model of 124."""
    largest = learner.n_features - 1  # -1: no feature seen
    zero = largest >= 0 and first_index == 0
    return {"n_features": max(largest, 0) + int(zero), "max_feature_index": largest if largest >= 0 else None}


def _resume_state(model) -> str:
    learner = model.learner
    archive = model.hypothesis == "running-average" and learner.evicts  # the average's evicted vectors
    if not learner.rebuilt and not archive:
        return "none needed"
    if model.resume_state:
        return "saved (--resume continues bit for bit)"
    lost = (
        [f"--resume rebuilds {', '.join(sorted(learner.rebuilt))} from the support vectors"] if learner.rebuilt else []
    )
    return "not saved: " + "; ".join(
        lost + (["the evicted vectors' archive is folded into the average"] if archive else [])
    )


_FROM = {"data": "a first pass over the data", "first block": "the data's first block", "ranges file": "a range file"}


def format_text(d: dict) -> str:
    params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in d["params"].items())
    k = d["kernel"]
    if k["kind"] == "rbf":
        kernel = f"rbf (gamma={k['gamma']:g}, sigma={k['sigma']:g}, exp {k['exp']})"
    elif k["kind"] == "poly":
        kernel = f"poly (gamma={k['gamma']:g}, coef0={k['coef0']:g}, degree={k['degree']})"
    else:
        kernel = "linear"
    kernel += f", bias {k['offset']:g} (an imported LIBSVM model's −rho)" if k.get("offset") else ""
    lab = d["labels"]
    if lab.get("kind") == "binary":
        labels = f"binary: {lab['positive']} (score > 0), {lab['negative']} (score <= 0)"
    elif lab.get("kind") == "regression":
        labels = "regression: real targets, predicted as the score f(x)"
    elif lab.get("kind") == "novelty":
        labels = "novelty: 1 (normal) where the score f(x) − ρ > 0, -1 (novel) elsewhere"
    else:
        labels = ", ".join(f"{key}={value}" for key, value in lab.items())
    c = d["counters"]
    t = c["examples"]
    rows = [
        ("algorithm", d["algorithm"] + (f" ({params})" if params else "")),
        ("kernel", kernel),
        ("labels", labels),
        ("hypothesis", f"{d['hypothesis']}: predicts with {HYPOTHESES[d['hypothesis']]}"),
        ("resume state", d["resume_state"]),
        (
            "resume",
            {True: "bit for bit", None: d["resume_not_exact"]}.get(
                d["resume_exact"], f"not bit for bit: {d['resume_not_exact']} (train --save-resume keeps it)"
            ),
        ),
        registry.get(d["algorithm"]).info_row(d),
        ("features", f"numbered from {d['first_index']} (an array's column j is index j + {d['first_index']})"),
        *(
            [
                (
                    "scaling",
                    f"[{d['scaling']['lower']:g}, {d['scaling']['upper']:g}] on {d['scaling']['features']:,} "
                    f"features, ranges from {_FROM[d['scaling']['from']]} (applied to every example scored)",
                )
            ]
            if d["scaling"]
            else []
        ),
        *(
            [("class weights", ", ".join(f"{label}: {w:g}" for label, w in d["class_weight"].items()))]
            if d["class_weight"]
            else []
        ),
        ("bytes", f"{d['bytes']:,}"),
        ("examples", f"{t:,}"),
        *(
            [
                ("mistakes", f"{c['mistakes']:,}" + (f" ({100 * c['mistakes'] / t:.2f}% online)" if t else "")),
                ("margin updates", f"{c['margin_updates']:,}"),
            ]
            if "task" not in d
            else task.named(d["task"]).info_rows(d)
        ),
        ("projections", f"{c['projections']:,}"),
        ("seed", str(d["seed"])),
    ]
    return "\n".join(f"{name:<16}{value}" for name, value in rows)
