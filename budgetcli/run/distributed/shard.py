"""One shard's learner and reading position: in this process, or a dask actor on a worker."""

from __future__ import annotations

import numpy as np

from ...base import registry
from ...base.core import DataError
from ...numerics.kernels import Kernel
from ...learning.labels import labels_from_dict
from ...learning.mixing import averaged_rows
from ...model.model import Model
from ..session import Session
from ...model.spec import TrainSpec
from ...learning.task import named
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
        # the model's own settings, learning the last hypothesis (a shard keeps no evicted vector)
        self.spec = TrainSpec(cls.name, hypothesis="online", resumed=True)
        self.session = Session(
            self.spec,
            Model(
                cls(Kernel.from_dict(kernel), seed=seed, **params),
                named(cls.tasks[0]).label_map(cls),  # a sharded learner learns one task (spec._check_task)
            ),
        )
        # every shard its own stream: the same draws on every shard would evict alike
        self.model.learner.rng_state[:] = np.random.SeedSequence((seed, index)).generate_state(1, np.uint64)
        self.reader = open_shard(source, block_lines, skip_bad_lines)
        self.chunks = self._passes(epochs, (source, block_lines, skip_bad_lines))
        self.pending = None  # the rest of a block cut at a synchronisation
        self.learned = 0  # examples learned since the last report
        self.dynamic = dynamic  # measure `divergence` after every step (dynamic averaging)
        self.reference = cls.mixing.reference(None)  # the last mixed model, for `divergence`: f = 0 at the start

    @property
    def model(self) -> Model:
        return self.session.model

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
            self.session.learn(chunk, self.reader.source_name)
            learned += len(chunk)
        self.learned += learned
        return {"learned": learned, "divergence": self.divergence() if self.dynamic else None}

    def divergence(self) -> float:
        """The distance of this shard's model from the last mixed model, as its algorithm's mixing measures
        it (‖f − r‖² in the RKHS: the local condition of dynamic averaging, Kamp et al. 2014)."""
        learner = self.model.learner
        return learner.mixing.divergence(learner, self.reference)

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
        self.session = Session(self.spec, Model(learner, labels_from_dict(labels), first_index=self.model.first_index))
        if self.dynamic:
            self.reference = learner.mixing.reference(learner)

    def close(self) -> None:
        self.reader.close()
