"""Reader → labels → learner, without any printing: the stages the CLI commands wire together."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from . import registry
from .io.libsvm import DataError, LibsvmReader
from .kernels import Kernel, gamma_from_sigma
from .labels import BinaryLabels
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


def train(data, algorithm: str, kernel: KernelSpec, params: dict, seed: int = 0, skip_bad_lines: bool = False,
          block_lines: int = 4096, on_chunk: Callable[[Model], None] | None = None,
          resume: Model | None = None) -> TrainResult:
    """One online pass over `data` (path, '-' or binary file).  Raises DataError on bad input,
    ValueError on bad parameters; returns the trained model (not saved).

    With `resume`, that model goes on learning exactly where it stopped (its algorithm, kernel,
    parameters, label map, counters and random state); `algorithm`, `kernel`, `params` and `seed`
    are then not used."""
    cls = registry.get(resume.learner.name if resume else algorithm)
    cls.resolve_params(resume.learner.hyper if resume else params)  # refuse bad parameters before reading
    started = time.perf_counter()
    model = resume
    with LibsvmReader(data, block_lines=block_lines, skip_bad_lines=skip_bad_lines) as reader:
        for chunk in reader:
            if model is None:
                learner = cls(kernel.resolve(chunk.n_features), seed=seed, **params)
                model = Model(learner, BinaryLabels())
            y = model.labels.encode(chunk, reader.source_name)
            model.learner.learn(chunk, y)
            if on_chunk is not None:
                on_chunk(model)
        if model is None:
            raise DataError(reader.source_name, 0, None, "no examples to train on")
        return TrainResult(model, time.perf_counter() - started, reader.source_name, reader.n_skipped,
                           list(reader.skipped))


def scores(model: Model, data, skip_bad_lines: bool = False, block_lines: int = 4096
           ) -> Iterator[tuple[object, np.ndarray]]:
    """(chunk, decision values) for each chunk of `data`, in order."""
    with LibsvmReader(data, block_lines=block_lines, skip_bad_lines=skip_bad_lines) as reader:
        for chunk in reader:
            yield chunk, model.learner.decision_function(chunk)
