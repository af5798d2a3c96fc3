"""Reader → labels → learner, without any printing: the stages the CLI commands wire together."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from . import registry
from .io.libsvm import DataError, LibsvmReader, concatenate
from .kernels import Kernel, gamma_from_sigma
from .labels import BinaryLabels, MulticlassLabels
from .model import Model


@dataclass
class KernelSpec:
    """The kernel as the user gave it; γ may be left open until the first chunk is read."""

    kind: str = "rbf"
    gamma: float | None = None
    sigma: float | None = None
    degree: int = 3
    coef0: float = 0.0

    def resolve(self, first_chunk_features: int) -> Kernel:
        """γ from --gamma or --sigma; by default 1/k with k the largest feature index of the first
        chunk (LIBSVM takes 1/#features of the whole file, which a stream cannot know)."""
        if self.gamma is not None and self.sigma is not None:
            raise ValueError("give --gamma or --sigma, not both")
        if self.sigma is not None:
            gamma = gamma_from_sigma(self.sigma)
        elif self.gamma is not None:
            gamma = self.gamma
        else:
            gamma = 1.0 / max(first_chunk_features, 1)
        return Kernel(self.kind, gamma, self.coef0, self.degree)


@dataclass
class TrainResult:
    model: Model
    seconds: float
    source: str
    n_skipped: int = 0
    skipped: list = field(default_factory=list)


def epochs_of(data, epochs: int = 1, shuffle: bool = False, seed: int = 0, skip_bad_lines: bool = False,
              block_lines: int = 4096) -> Iterator[tuple[object, LibsvmReader]]:
    """(chunk, reader) for `epochs` passes over `data`.

    Without shuffling a file is streamed again for each pass (memory stays one chunk); stdin,
    which cannot be read twice, and --shuffle keep the data in memory.  With `shuffle`, pass e
    (0-based) is permuted by numpy's generator seeded with (seed, e)."""
    in_memory = shuffle or (epochs > 1 and data == "-")
    if not in_memory:
        for _ in range(epochs):
            with LibsvmReader(data, block_lines=block_lines, skip_bad_lines=skip_bad_lines) as reader:
                for chunk in reader:
                    yield chunk, reader
        return
    with LibsvmReader(data, block_lines=block_lines, skip_bad_lines=skip_bad_lines) as reader:
        chunks = list(reader)
    if not chunks:
        return
    everything = concatenate(chunks)
    for e in range(epochs):
        order = np.arange(len(everything))
        if shuffle:
            order = np.random.default_rng((seed, e)).permutation(len(everything))
        for a in range(0, len(order), block_lines):
            yield everything.take(order[a:a + block_lines]), reader


def train(data, algorithm: str, kernel: KernelSpec, params: dict, seed: int = 0, skip_bad_lines: bool = False,
          block_lines: int = 4096, on_chunk: Callable[[Model], None] | None = None,
          resume: Model | None = None, epochs: int = 1, shuffle: bool = False,
          keep_retired: bool = False, curve=None, checkpoint_every: int | None = None,
          on_checkpoint: Callable[[Model], None] | None = None) -> TrainResult:
    """One online pass over `data` (path, '-' or binary file).  Raises DataError on bad input,
    ValueError on bad parameters; returns the trained model (not saved).

    With `resume`, that model goes on learning exactly where it stopped (its algorithm, kernel,
    parameters, label map, counters and random state); `algorithm`, `kernel`, `params` and `seed`
    are then not used.  `keep_retired` keeps evicted support vectors for an exact average.

    `curve` (a curve.LearningCurve) logs a row each time the model's example count reaches a
    multiple of its k.  With `checkpoint_every` N, `on_checkpoint(model)` is called each time exactly
    k·N examples of this run have been learned, so a checkpoint holds a whole number of N-example
    steps, whatever the chunk size.  For both, a chunk is cut where the count is reached (see
    `_learn_in_pieces`)."""
    cls = registry.get(resume.learner.name if resume else algorithm)
    hyper = cls.resolve_params(resume.learner.hyper if resume else params)  # refuse bad parameters before reading
    if cls.multiclass and not resume:
        cls.check_kernel(kernel.kind, hyper)
    started = time.perf_counter()
    model = resume
    reader = None
    stops = None  # the Every rules of --curve and --checkpoint-every, set once the model exists
    for chunk, reader in epochs_of(data, epochs, shuffle, seed, skip_bad_lines, block_lines):
        if model is None:
            learner = cls(kernel.resolve(chunk.n_features), seed=seed, **params)
            model = Model(learner, MulticlassLabels() if cls.multiclass else BinaryLabels())
        model.learner.keep_retired = keep_retired
        y = model.labels.encode(chunk, reader.source_name)
        if stops is None:
            stops = []
            if curve is not None:
                stops.append(Every(curve.every, lambda m: curve.row(m.learner)))
            if checkpoint_every:
                stops.append(Every(checkpoint_every, on_checkpoint, origin=model.learner.counter("examples")))
        _learn_in_pieces(model, chunk, y, stops)
        if on_chunk is not None:
            on_chunk(model)
    source = reader.source_name if reader else ("<stdin>" if data == "-" else str(data))
    if model is None:
        raise DataError(source, 0, None, "no examples to train on")
    if curve is not None:
        curve.finish(model.learner)
    # the last reader has read the data once: its count of malformed lines is per pass
    return TrainResult(model, time.perf_counter() - started, source, reader.n_skipped if reader else 0,
                       list(reader.skipped) if reader else [])


@dataclass
class Every:
    """Call `action(model)` each time the model's example count minus `origin` is a multiple of `every`."""

    every: int
    action: Callable[[Model], None]
    origin: int = 0


def _learn_in_pieces(model: Model, chunk, y, stops: list[Every]) -> None:
    """model.learner.learn(chunk, y), cut where an Every rule fires, running its action there.

    A learner's pass over a chunk equals its passes over consecutive pieces (what makes --resume
    exact), so cutting changes nothing in the model."""
    learner, pos, n = model.learner, 0, len(chunk)
    while pos < n:
        t = learner.counter("examples")
        stop = min([n] + [pos + s.every - (t - s.origin) % s.every for s in stops])
        learner.learn(chunk if (pos, stop) == (0, n) else chunk.take(np.arange(pos, stop)), y[pos:stop])
        pos = stop
        t = learner.counter("examples")
        for s in stops:
            if (t - s.origin) % s.every == 0:
                s.action(model)


def scores(model: Model, data, skip_bad_lines: bool = False, block_lines: int = 4096
           ) -> Iterator[tuple[object, np.ndarray]]:
    """(chunk, decision values) for each chunk of `data`, in order: a vector f(x) for a binary
    model, an n × m matrix of class scores for a multiclass one."""
    with LibsvmReader(data, block_lines=block_lines, skip_bad_lines=skip_bad_lines) as reader:
        for chunk in reader:
            yield chunk, model.learner.decision_function(chunk)
