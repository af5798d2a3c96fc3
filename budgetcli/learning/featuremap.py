"""The feature-map learner: the kind of the learner contract (contract.py) whose hypothesis is a weight
vector over a fixed map of the input, f(x) = wᵀz(x), with no support set (fogd's random Fourier features:
algorithms/fourier.py).  A round costs what the map costs, whatever the number of rounds: the model is
its weights, and the map is made again from the seed.

A model file holds what every learner's does (counters, random state, scalars), the algorithm's weights
and their running sums, and, first, the arrays of an empty support set and of its per-slot coefficients:
feature-map models were written so before the kinds were told apart, and their files stay byte for byte
what they were (a file holding anything there is refused).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from . import statecheck
from .contract import Learner, NotAnExpansion
from .mixing import Mixing
from .records import EXAMPLES
from ..numerics.support import SupportSet

EMPTY_SUPPORT = SupportSet(capacity=1, pool_capacity=1).arrays  # the loop's `S`, which no feature-map loop reads
FRAME = ("alpha", "avg_sum", "avg_stamp")  # the empty per-slot coefficients a file holds after the counters


class WeightMixing(Mixing):
    """The mix of learners whose hypothesis is a weight vector over a fixed feature map (fogd; mc-fogd's a
    row per class): every shard's map is made from the run's seed, so the mix is the plain weighted
    average of the weights, with no union and no compression, and a model's distance from another is
    that of their weights."""

    def mix(self, cls, reports: list, columns: list | None, width: int, counters, base, base_columns) -> dict:
        """The weights' average by the examples each shard learned since the last mix; the averaged
        hypothesis' running sums as Mixing.mix keeps them (a class a shard has not met counting as a zero
        row there)."""
        T = int(counters[EXAMPLES])
        total = sum(r["learned"] for r in reports)

        def rows(report: dict, name: str, where) -> np.ndarray:
            """The report's weights (`fourier_w`) or averaged weights ("average") in the merged class order."""
            w = report["arrays"]["fourier_w"] if name == "fourier_w" else report[name]
            if where is None:
                return w
            out = np.zeros((width, w.shape[1]))
            out[where] = w
            return out

        where = columns or [None] * len(reports)
        if total:
            w = sum(r["learned"] / total * rows(r, "fourier_w", c) for r, c in zip(reports, where))
        else:
            w = rows(reports[0], "fourier_w", where[0])
        sums = sum(rows(r, "average", c) * int(r["arrays"]["counters"][EXAMPLES]) for r, c in zip(reports, where))
        if base is not None:
            sums = sums - (len(reports) - 1) * rows(base, "average", base_columns) * int(
                base["arrays"]["counters"][EXAMPLES]
            )
        stamp = np.full(w.shape[:1] if columns is not None else 1, T + 1.0)
        return dict(reports[0]["arrays"], counters=counters, fourier_w=w, fourier_sum=sums, fourier_stamp=stamp)

    def reference(self, learner):
        return None if learner is None else learner.feature_map_weights().copy()

    def divergence(self, learner, reference) -> float:
        """‖w − w_r‖² in the feature space every shard shares."""
        w = learner.feature_map_weights()
        ref = np.zeros_like(w) if reference is None else reference
        if w.ndim == 2 and len(ref) != len(w):  # classes met since the mix have a zero row in r
            ref = np.pad(ref, ((0, len(w) - len(ref)), (0, 0)))
        return float(np.sum((w - ref) ** 2))


class FeatureMapLearner(Learner):
    """A weight vector over a fixed feature map; the algorithm keeps its weights and says what they are
    (`feature_map_weights`, `_weight_state`, `_restore_weights`)."""

    feature_map: ClassVar[str] = ""  # the map's name, as `info` and `export` say it
    mixing = WeightMixing()

    def feature_map_weights(self) -> np.ndarray:
        """w (a multiclass learner: a row per class)."""
        raise NotImplementedError

    def _support_record(self):
        return EMPTY_SUPPORT

    # ---- what is asked of a hypothesis ----------------------------------------------------------
    def support_size(self) -> int:
        return 0

    def learned_nothing(self) -> bool:
        return not self.feature_map_weights().any()

    def summary_row(self) -> tuple[str, str]:
        return "feature map", f"{self.feature_map_weights().size:,} weights"

    def size_warnings(self) -> list[str]:
        if self.learned_nothing():
            t = self.counter("examples")
            return [f"every weight is 0 after {t:,} examples: the model learned nothing (it scores every example 0)"]
        return []

    def info_fields(self) -> dict:
        return {
            "support_size": 0,
            "support_nonzeros": 0,
            "feature_map": {"kind": self.feature_map, "weights": int(self.feature_map_weights().size)},
        }

    @classmethod
    def info_row(cls, d: dict) -> tuple[str, str]:
        return "feature map", f"{d['feature_map']['kind']}: {d['feature_map']['weights']:,} weights, made from the seed"

    def expansion(self) -> tuple:
        raise NotAnExpansion(f"a {self.name} model is a weight vector over {self.feature_map}, not a support set")

    # ---- state --------------------------------------------------------------------------------
    def _support_state(self) -> dict:
        return {"sv_indptr": np.zeros(1, np.int64), "sv_indices": np.zeros(0, np.int32), "sv_values": np.zeros(0)}

    def _kept_state(self) -> dict:
        return {name: np.zeros(0) for name in FRAME} | self._weight_state()

    def _weight_state(self) -> dict:
        """The weights and their running sums, as a model file holds them."""
        raise NotImplementedError

    def _restore_weights(self, header: dict, arrays: dict) -> None:
        """The inverse of `_weight_state`."""
        raise NotImplementedError

    @classmethod
    def saved_arrays(cls, header: dict, members: dict) -> dict:
        frame = {
            "sv_indptr": ((1,), statecheck.I64),
            "sv_indices": ((0,), statecheck.I32),
            "sv_values": ((0,), statecheck.F64),
        }
        return frame | super().saved_arrays(header, members) | {name: ((0,), statecheck.F64) for name in FRAME}

    @classmethod
    def from_state(cls, header: dict, arrays: dict) -> "FeatureMapLearner":
        self = super().from_state(header, arrays)
        self._restore_weights(header, arrays)
        return self
