"""Cross-validation as LIBSVM's `svm-train -v K`: the held-out accuracy of what `train` writes, or for a
regression (`--task regression`) the held-out mean squared error and squared correlation coefficient, as
svm-train -v reports them for ε-SVR (the task's: learning/task `cross_validation`).

**The folds** are LIBSVM's (svm.cpp, svm_cross_validation, for classification): stratified, each class's
examples shuffled and dealt out in K contiguous slices.  Here the shuffle is numpy's, so that a seed gives
the same folds everywhere: one generator `numpy.random.default_rng(seed)`; for each label in order of its
first appearance in the data (a regression's: every target is one group, svm-train's plain
shuffle for SVR, dealt out the same way), the positions of its examples (in file order) are permuted by
`generator.permutation`, and the k-th slice [k·n_c // K, (k+1)·n_c // K) of that permutation goes to fold k
(k = 0 .. K − 1).  More folds than examples: leave-one-out (K = n), as svm-train does.

**Each fold's model** is exactly the one `train` with the same options writes from a file holding the other
folds' examples in their file order (an online learner's model depends on the order: this estimates what
`train DATA` writes, not a model of a shuffled stream; `--shuffle` shuffles each training set as train
does).  It is scored on the fold's examples as `eval` scores it (a label it never saw is wrong), and the
accuracy is the share of all examples predicted right, svm-train's `Cross Validation Accuracy`.

The data are read into memory once (the folds' training sets are taken from it), as `train --shuffle`
reads them.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field, replace

import numpy as np

from . import pipeline
from ..base.core import Chunk, DataError
from ..io.libsvm import LibsvmReader, concatenate
from ..model.spec import TrainSpec


def fold_of(labels: np.ndarray, k: int, seed: int) -> np.ndarray:
    """The fold (0 .. k − 1) of each example (module docstring); k ≤ len(labels)."""
    rng = np.random.default_rng(seed)
    out = np.empty(len(labels), np.int64)
    order = np.argsort(labels, kind="stable")
    values, first = np.unique(labels[order], return_index=True)
    ends = np.append(first[1:], len(order))
    by_appearance = np.argsort(order[first], kind="stable")  # the labels in order of first appearance
    for c in by_appearance:
        positions = rng.permutation(np.sort(order[first[c] : ends[c]]))
        n = len(positions)
        for f in range(k):
            out[positions[f * n // k : (f + 1) * n // k]] = f
    return out


@dataclass
class Fold:
    examples: int
    tally: object  # the held-out examples' scores (the task's `tally`: right predictions, or errors)
    warnings: list = field(default_factory=list)

    @property
    def correct(self) -> int:
        return self.tally.right

    @property
    def squared_error(self) -> float:
        return self.tally.sse


@dataclass
class CrossValidation:
    folds: list  # Fold per fold
    source: str
    task: object  # the models' (learning/task), which reports the folds
    note: str | None = None  # leave-one-out instead of more folds than examples

    @property
    def warnings(self) -> list[str]:
        """The distinct warnings of the folds' runs, in order of first appearance."""
        return list(dict.fromkeys(w for f in self.folds for w in f.warnings))

    def to_dict(self) -> dict:
        return self.task.cross_validation(self.folds) | {"warnings": self.warnings}

    def lines(self) -> list[str]:
        """What svm-train -v prints (the task's lines)."""
        return self.task.cross_validation_lines(self.task.cross_validation(self.folds))


def read(data, skip_bad_lines: bool = False, block_lines: int = 4096) -> tuple[Chunk, str, int]:
    """(all of `data` in one Chunk, its name, malformed lines skipped); DataError when it has no example."""
    if isinstance(data, Chunk):
        return data, "X", 0
    with LibsvmReader(data, block_lines=block_lines, skip_bad_lines=skip_bad_lines) as reader:
        chunks = list(reader)
    if not chunks:
        raise DataError(reader.source_name, 0, None, "no examples to cross-validate on")
    return concatenate(chunks), reader.source_name, reader.n_skipped


def fold_result(spec: TrainSpec, everything: Chunk, folds: np.ndarray, k: int, source: str):
    """(Fold, pipeline.TrainResult): train on every fold but fold `k` (in file order) and score fold `k`, as
    `eval` scores."""
    result = pipeline.train(spec, everything.take(np.flatnonzero(folds != k)))
    model, held = result.model, everything.take(np.flatnonzero(folds == k))
    tally, step = model.task.tally(model), pipeline.score_lines(model)
    for a in range(0, len(held), step):
        block = held.take(np.arange(a, min(a + step, len(held))))
        tally.add(block.labels, pipeline.chunk_scores(model, block, source))
    return Fold(len(held), tally, result.warnings), result


def cross_validate(spec: TrainSpec, data, k: int) -> CrossValidation:
    """`train -v k` of `spec` over `data` (a path, '-', or a Chunk)."""
    everything, source, _ = read(data, spec.skip_bad_lines, spec.block_lines)
    note = None
    if k > len(everything):
        note = f"{k} folds of {len(everything)} examples: leave-one-out ({len(everything)} folds), as svm-train does"
        k = len(everything)
    folds = fold_of(_groups(spec, everything), k, spec.seed)
    spec = replace(spec, checkpoint_every=None, save_resume=False)
    results = [fold_result(spec, everything, folds, f, source) for f in range(k)]
    return CrossValidation([fold for fold, _ in results], source, results[0][1].model.task, note)


def _groups(spec: TrainSpec, everything: Chunk) -> np.ndarray:
    """What the folds are stratified by: the labels, or for a regression one group (svm-train shuffles
    an SVR's examples without strata)."""
    return np.zeros(len(everything)) if spec.task == "regression" else everything.labels


def held_out(spec: TrainSpec, data: str, k: int, fold: int):
    """`tune --folds k`'s run of one fold: (Fold, pipeline.TrainResult) of fold `fold` of `train -v k` of
    `spec` over the file `data` (read once per process, kept while it is unchanged); DataError when the file
    has fewer than k examples (train -v makes that leave-one-out; a grid's table needs its k folds)."""
    st = os.stat(data)
    everything, source = _read_once(data, st.st_mtime_ns, st.st_size, spec.skip_bad_lines)
    if len(everything) < k:
        raise DataError(source, 0, None, f"{len(everything)} examples, fewer than the {k} folds asked")
    return fold_result(spec, everything, fold_of(_groups(spec, everything), k, spec.seed), fold, source)


@functools.lru_cache(maxsize=1)
def _read_once(path: str, mtime_ns: int, size: int, skip_bad_lines: bool) -> tuple[Chunk, str]:
    everything, source, _ = read(path, skip_bad_lines)
    return everything, source
