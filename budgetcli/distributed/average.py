"""Iterative parameter mixing's average of the shards' models (the protocol: distributed/__init__.py)."""

from __future__ import annotations

import numpy as np

from .. import registry
from ..core import DataError
from ..labels import BinaryLabels, MulticlassLabels, labels_from_dict, third_label_message
from ..learner import COUNTER_NAMES, EXAMPLES
from ..mixing import averaged_rows, with_rows


def report_rows(report: dict, columns: list[int] | None) -> tuple[np.ndarray, np.ndarray]:
    """A report's online and averaged coefficients as n × classes matrices; a multiclass shard's
    class j goes to column columns[j] of the merged label map."""
    a = report["arrays"]
    if columns is None:
        return a["alpha"][:, None], report["average"][:, None]
    out = np.zeros((2, len(a["coef"]), max(columns, default=-1) + 1))
    out[0][:, columns] = a["coef"] * a["scale"][0]
    out[1][:, columns] = report["average"]
    return out[0], out[1]


def mix(
    reports: list[dict], base_counters: np.ndarray, labels: dict | None = None, base: dict | None = None
) -> tuple[dict, dict]:
    """The mixed model (header, arrays) of the shards' reports: f = Σ_w (n_w/n) f_w over the union of
    their support sets (identical vectors merged), counters base + Σ_w (counters_w − base).

    The averaged hypothesis is the average over every example of every shard: its running sum is the
    last mix's sum (`base`, a report of the last mixed model; None before the first) plus what each
    shard added to it since, Σ_w sum_w − (k − 1)·sum_base, each shard's sum its average times its
    count.  A learner that evicts keeps no sums for the vectors it evicted, so there the average is
    the shares' mix of the shards' averages instead.  For a multiclass learner `labels` is the merged
    label map (`merged_labels`): each shard's classes are put in its order; a vector that serves one class
    only (`row_classes`: mc-projectron++) is merged only with the same vector of that class.  Other
    per-slot arrays (Pegasos' `born`) are each vector's first occurrence's."""
    cls = registry.get(reports[0]["header"]["algorithm"])
    merged = labels_from_dict(labels).values if cls.multiclass else None
    counters = base_counters + sum(r["arrays"]["counters"] - base_counters for r in reports)
    if cls.feature_map is not None:
        return _mixed_weights(reports, counters, base, merged)
    T = int(counters[EXAMPLES])
    total = sum(r["learned"] for r in reports)
    union = _Union(
        1 if merged is None else len(merged),
        [
            name
            for name, kind in cls.slot_arrays.items()
            if kind == "vector" and name not in ("alpha", "avg_sum", "avg_stamp")
        ],
    )
    for r in reports:
        if cls.evicts and not r["learned"]:
            continue  # it adds nothing, and the vectors it kept may be ones the others evicted
        share = r["learned"] / total
        union.add(
            r,
            merged,
            share,
            share * T if cls.evicts else int(r["arrays"]["counters"][EXAMPLES]),
            cls.mixing.row_classes(r["arrays"]),
        )
    if base is not None and not cls.evicts:
        union.add(
            base,
            merged,
            0.0,
            -(len(reports) - 1) * int(base["arrays"]["counters"][EXAMPLES]),
            cls.mixing.row_classes(base["arrays"]),
        )
    header = dict(
        reports[0]["header"],
        n_features=max(r["header"]["n_features"] for r in reports),
        counters={c: int(v) for c, v in zip(COUNTER_NAMES, counters)},
    )
    if merged is not None:
        header["n_classes"] = len(merged)
    lengths = [len(idx) for idx, _ in union.rows]
    learned = [r["arrays"] for r in reports if r["learned"]]
    arrays = dict(
        reports[0]["arrays"],  # rng_state: shard 0's
        sv_indptr=np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64),
        sv_indices=np.concatenate([i for i, _ in union.rows] or [np.zeros(0, np.int32)]).astype(np.int32),
        sv_values=np.concatenate([v for _, v in union.rows] or [np.zeros(0)]).astype(np.float64),
        counters=counters,
        scalars=cls.mixing.scalars([a["scalars"] for a in learned], [a["counters"] for a in learned], counters),
        **{name: np.array(values, np.float64) for name, values in union.first.items()},
    )
    online, sums = (np.array(x).reshape(-1, union.width) for x in (union.online, union.sums))
    if cls.mixing.row_classes(reports[0]["arrays"]) is not None:
        arrays = cls.mixing.with_row_classes(arrays, np.array(union.classes, np.int64).reshape(-1), union.width)
    return header, with_rows(cls, arrays, online, sums / max(T, 1), T)


def _mixed_weights(
    reports: list[dict], counters: np.ndarray, base: dict | None, merged: list | None
) -> tuple[dict, dict]:
    """The mix of a learner whose hypothesis is a weight vector over a fixed feature map (fogd; mc-fogd's
    a row per class, each shard's classes put in the merged order `merged`, a class a shard has not met
    counting as a zero row there): every shard's map is made from the run's seed, so the mix is the plain
    weighted average of the weights, with no union and no compression; the averaged hypothesis' sums as
    `mix` says."""
    T = int(counters[EXAMPLES])
    total = sum(r["learned"] for r in reports)

    def rows(report: dict, name: str) -> np.ndarray:
        """The report's weights (`fourier_w`) or averaged weights ("average") in the merged class order."""
        w = report["arrays"]["fourier_w"] if name == "fourier_w" else report[name]
        if merged is None:
            return w
        out = np.zeros((len(merged), w.shape[1]))
        out[merged_columns(report, merged)] = w
        return out

    w = sum(r["learned"] / total * rows(r, "fourier_w") for r in reports) if total else rows(reports[0], "fourier_w")
    sums = sum(rows(r, "average") * int(r["arrays"]["counters"][EXAMPLES]) for r in reports)
    if base is not None:
        sums = sums - (len(reports) - 1) * rows(base, "average") * int(base["arrays"]["counters"][EXAMPLES])
    header = dict(
        reports[0]["header"],
        n_features=max(r["header"]["n_features"] for r in reports),
        counters={c: int(v) for c, v in zip(COUNTER_NAMES, counters)},
    )
    stamp = np.full(w.shape[:1] if merged is not None else 1, T + 1.0)
    if merged is not None:
        header["n_classes"] = len(merged)
    arrays = dict(reports[0]["arrays"], counters=counters, fourier_w=w, fourier_sum=sums, fourier_stamp=stamp)
    return header, arrays


def merged_columns(report: dict, merged: list) -> list[int]:
    """Where each of a multiclass report's classes goes in the merged label order `merged`."""
    return [merged.index(v) for v in labels_from_dict(report["labels"]).values]


class _Union:
    """The union of expansions' support vectors (identical ones merged, in order of first sight), with a
    weighted sum of their online coefficients and one of their running sums."""

    def __init__(self, width: int, others: list[str]):
        self.width, self.slots, self.rows, self.online, self.sums = width, {}, [], [], []
        self.first = {name: [] for name in others}
        self.classes = []  # each row's class (merged columns) for a learner whose rows serve one class

    def add(self, report: dict, merged: list | None, weight: float, count: float, row_classes=None) -> None:
        """online += weight · the report's coefficients, sums += count · its averaged ones; with
        `row_classes` (KernelLearner.row_classes) a vector is merged only with one of its own class."""
        columns = None if merged is None else merged_columns(report, merged)
        coef, avg = report_rows(report, columns)
        a = report["arrays"]
        indptr = a["sv_indptr"]
        for i in range(len(indptr) - 1):
            idx, val = a["sv_indices"][indptr[i] : indptr[i + 1]], a["sv_values"][indptr[i] : indptr[i + 1]]
            owner = -1 if row_classes is None else columns[row_classes[i]]
            key = (idx.tobytes(), val.tobytes(), owner)
            if key not in self.slots:
                self.slots[key] = len(self.rows)
                self.rows.append((idx, val))
                self.classes.append(owner)
                self.online.append(np.zeros(self.width))
                self.sums.append(np.zeros(self.width))
                for name, values in self.first.items():
                    values.append(a[name][i])
            self.online[self.slots[key]][: coef.shape[1]] += weight * coef[i]
            self.sums[self.slots[key]][: avg.shape[1]] += count * avg[i]


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
