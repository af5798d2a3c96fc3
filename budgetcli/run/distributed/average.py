"""Iterative parameter mixing's average of the shards' models (the protocol: distributed/__init__.py)."""

from __future__ import annotations

import numpy as np

from ...base import registry
from ...base.core import DataError
from ...learning.labels import BinaryLabels, MulticlassLabels, labels_from_dict, third_label_message
from ...learning.targets import NoveltyVerdicts, RealTargets
from ...learning.mixing import averaged_rows
from ...learning.records import COUNTER_NAMES


def mix(
    reports: list[dict], base_counters: np.ndarray, labels: dict | None = None, base: dict | None = None
) -> tuple[dict, dict]:
    """The mixed model (header, arrays) of the shards' reports, as the algorithm's `mixing` averages them
    (mixing.py: a kernel expansion's over the union of the support sets; a feature map's weights), its
    counters base + Σ_w (counters_w − base).

    The averaged hypothesis is the average over every example of every shard: its running sum is the
    last mix's sum (`base`, a report of the last mixed model; None before the first) plus what each
    shard added to it since.  For a multiclass learner `labels` is the merged label map
    (`merged_labels`): each shard's classes are put in its order (`columns`)."""
    cls = registry.get(reports[0]["header"]["algorithm"])
    merged = labels_from_dict(labels).values if cls.multiclass else None
    counters = base_counters + sum(r["arrays"]["counters"] - base_counters for r in reports)
    columns = None if merged is None else [merged_columns(r, merged) for r in reports]
    base_columns = None if merged is None or base is None else merged_columns(base, merged)
    header = dict(
        reports[0]["header"],
        n_features=max(r["header"]["n_features"] for r in reports),
        counters={c: int(v) for c, v in zip(COUNTER_NAMES, counters)},
    )
    if merged is not None:
        header["n_classes"] = len(merged)
    width = 1 if merged is None else len(merged)
    return header, cls.mixing.mix(cls, reports, columns, width, counters, base, base_columns)


def merged_columns(report: dict, merged: list) -> list[int]:
    """Where each of a multiclass report's classes goes in the merged label order `merged`."""
    return [merged.index(v) for v in labels_from_dict(report["labels"]).values]


def report_of(learner, labels: dict) -> dict:
    """A mixed model as a shard's report (`mix`'s `base`)."""
    header, arrays = learner.state()
    return {"header": header, "arrays": arrays, "average": averaged_rows(learner), "learned": 0, "labels": labels}


def merged_labels(reports: list[dict], sources: list[str]) -> dict:
    """The one label map of the shards' maps (to_dict form).  A third label value over all shards, or a
    shard whose map contradicts the earlier shards' (one-label first blocks that fixed the signs
    differently), is a DataError naming the shard.  Multiclass: every shard's classes, in the order the
    shards met them, shard after shard."""
    maps = [labels_from_dict(r["labels"]) for r in reports]
    if isinstance(maps[0], (RealTargets, NoveltyVerdicts)):
        return maps[0].to_dict()  # the tasks without classes have no map to merge
    if isinstance(maps[0], MulticlassLabels):
        values, spellings = [], {}
        for labels in maps:
            values += [v for v in labels.values if v not in values]
            for v, spelling in labels.spellings.items():
                spellings.setdefault(v, spelling)
        return MulticlassLabels(values, spellings).to_dict()
    spellings: dict = {}
    for labels in maps:
        for v, spelling in labels.spellings.items():
            spellings.setdefault(v, spelling)
    seen: list = []  # label values in shard order
    for labels, source in zip(maps, sources):
        for v in (labels.negative, labels.positive):
            if v is not None and v not in seen:
                if len(seen) == 2:
                    shown = ", ".join(spellings.get(k, f"{k:g}") for k in seen)
                    raise DataError(source, 0, spellings.get(v, f"{v:g}"), third_label_message(shown))
                seen.append(v)
    signs: dict = {}  # label value -> ±1
    for labels, source in zip(maps, sources):
        for v, sign in ((labels.negative, -1), (labels.positive, 1)):
            if v is not None and (signs.setdefault(v, sign) != sign or sum(s == sign for s in signs.values()) > 1):
                raise DataError(
                    source,
                    0,
                    None,
                    "its label map contradicts the earlier shards' (a shard's first "
                    "block held one label value): give every shard's first block both labels",
                )
    by_sign = {s: v for v, s in signs.items()}
    return BinaryLabels(by_sign.get(-1), by_sign.get(1), spellings).to_dict()
