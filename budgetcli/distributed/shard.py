"""One shard's learner and reading position: in this process, or a dask actor on a worker."""

from __future__ import annotations

import numpy as np

from .. import registry
from ..core import DataError
from ..kernels import Kernel
from ..labels import BinaryLabels, MulticlassLabels, labels_from_dict
from ..mixing import averaged_rows, online_rows
from ..model import Model
from ..pipeline import learn_block
from .sources import open_shard


class Shard:
    """One shard's learner and reading position (a dask actor on a cluster)."""

    def __init__(
        self,
        source: str,
        index: int,
        algorithm: str,
        kernel: dict,
        params: dict,
        seed: int,
        skip_bad_lines: bool,
        block_lines: int,
        dynamic: bool = False,
        epochs: int = 1,
    ):
        cls = registry.get(algorithm)
        self.model = Model(
            cls(Kernel.from_dict(kernel), seed=seed, **params), MulticlassLabels() if cls.multiclass else BinaryLabels()
        )
        # every shard its own stream: the same draws on every shard would evict alike
        self.model.learner.rng_state[:] = np.random.SeedSequence((seed, index)).generate_state(1, np.uint64)
        self.reader = open_shard(source, block_lines, skip_bad_lines)
        self.chunks = self._passes(epochs, (source, block_lines, skip_bad_lines))
        self.pending = None  # the rest of a block cut at a synchronisation
        self.learned = 0  # examples learned since the last report
        self.dynamic = dynamic  # measure `divergence` after every step (dynamic averaging)
        self.reference = _reference(None)  # the last mixed model, for `divergence`: f = 0 at the start

    def _passes(self, epochs: int, how: tuple):
        """The shard's blocks, `epochs` times over, each pass reading it afresh (as `train --epochs`
        streams a file again for each pass); `reader` is the current pass's."""
        for e in range(epochs):
            if e:
                self.reader.close()
                self.reader = open_shard(*how)
            yield from self.reader

    def step(self, n: int) -> dict:
        """Learn the shard's next n examples (fewer at its end): how many it learned and, under dynamic
        averaging, its model's `divergence` from the last mixed model."""
        learned = 0
        while learned < n:
            if self.pending is None:
                self.pending = next(self.chunks, None)
                if self.pending is None:
                    break
            chunk, self.pending = self.pending, None
            if len(chunk) > n - learned:
                chunk, self.pending = chunk.take(np.arange(n - learned)), chunk.take(np.arange(n - learned, len(chunk)))
            y = self.model.labels.encode(chunk, self.reader.source_name)
            learn_block(self.model, chunk, y, self.reader.source_name)
            learned += len(chunk)
        self.learned += learned
        return {"learned": learned, "divergence": self.divergence() if self.dynamic else None}

    def divergence(self) -> float:
        """‖f − r‖², f this shard's model, r the last mixed model, in the RKHS:
        αᵀKα − 2 βᵀK_rf α + βᵀK_rβ (Kamp et al. 2014: the local condition ‖f − r‖² ≤ Δ)."""
        learner = self.model.learner
        if learner.feature_map is not None:  # ‖w − w_r‖² in the feature space every shard shares
            w = learner.feature_map_weights()
            ref = self.reference if isinstance(self.reference, np.ndarray) else np.zeros_like(w)
            if w.ndim == 2 and len(ref) != len(w):  # classes met since the mix have a zero row in r
                ref = np.pad(ref, ((0, len(w) - len(ref)), (0, 0)))
            return float(np.sum((w - ref) ** 2))
        n = len(learner.support)
        rows, beta, rr = self.reference
        if n == 0:
            return rr
        alpha = online_rows(learner)  # n × classes (a binary learner: one column)
        ff = np.sum(alpha * (learner.gram() @ alpha))
        fr = 0.0
        if len(beta):  # classes seen since the mix have a zero prototype in r
            beta = np.pad(beta, ((0, 0), (0, alpha.shape[1] - beta.shape[1])))
            fr = np.sum(beta * (learner.kernel_matrix(*rows) @ alpha))
        return max(float(ff - 2.0 * fr + rr), 0.0)  # rounding may leave a tiny negative

    def report(self) -> dict:
        """What mixing needs: the model, its averaged coefficients and the examples learned since the last
        report (the shard's weight in the mix)."""
        learner = self.model.learner
        learner.notes.clear()  # a rebuild after each mix is the protocol, not news
        header, arrays = learner.portable_state()  # the resume state is rebuilt where needed, never sent
        learned, self.learned = self.learned, 0
        return {
            "header": header,
            "arrays": arrays,
            "average": averaged_rows(learner),
            "learned": learned,
            "labels": self.model.labels.to_dict(),
            "first_index": self.model.first_index,
            "skipped": (self.reader.n_skipped, self.reader.skipped[:1]),
        }

    def resume_at(self, position: int, common: tuple | None, rng_state) -> None:
        """Take up a lost shard's work: skip the `position` examples it had learned, adopt the last mixed
        model `common` (header, arrays, labels; None before the first mix), and its random stream."""
        skipped = 0
        while skipped < position:
            chunk = next(self.chunks, None)
            if chunk is None:
                raise DataError(
                    self.reader.source_name,
                    0,
                    None,
                    f"holds fewer than the {position:,} examples the "
                    "checkpoint had read from it: not the input the checkpoint was made from",
                )
            if len(chunk) > position - skipped:
                self.pending = chunk.take(np.arange(position - skipped, len(chunk)))
                chunk = chunk.take(np.arange(position - skipped))
            skipped += len(chunk)
        if common is not None:
            self.adopt(*common)
        if rng_state is not None:
            self.model.learner.rng_state[:] = rng_state

    def adopt(self, header: dict, arrays: dict, labels: dict) -> None:
        """Go on from the mixed model, with this shard's own random stream."""
        own = self.model.learner.rng_state.copy()
        learner = registry.get(header["algorithm"]).from_state(header, arrays)
        learner.rng_state[:] = own
        self.model = Model(learner, labels_from_dict(labels), first_index=self.model.first_index)
        if self.dynamic:
            self.reference = _reference(learner)

    def close(self) -> None:
        self.reader.close()


def _reference(learner) -> tuple:
    """A mixed model as `Shard.divergence` measures from it: its support vectors (CSR), coefficients β
    and ‖r‖² = βᵀKβ; the zero function for None; a feature-map learner's weights."""
    if learner is not None and learner.feature_map is not None:
        return learner.feature_map_weights().copy()
    if learner is None or not len(learner.support):
        return (np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0)), np.zeros((0, 1)), 0.0
    beta = online_rows(learner).copy()
    return learner.support.to_csr(), beta, float(np.sum(beta * (learner.gram() @ beta)))
