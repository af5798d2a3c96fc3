"""What a run's summary warns of (`Report`): the kernel on the first block (`kernel_warnings`), a resumed
model's changes, the hypothesis it ended with, and whether the written model beats a constant, checked on a
uniform sample of the run's examples (`Reservoir`).  None of it changes what is learnt."""

from __future__ import annotations

import numpy as np

from ..model import scaling as scaling_
from ..base.core import unique
from ..io.libsvm import concatenate
from ..numerics.kernels import Kernel
from ..learning.learner import kernel_matrix
from ..model.model import Model
from .session import Session
from ..numerics.support import SupportSet

# The warnings below describe a run (`Report`).
SAMPLE = 100  # examples of the first block, evenly spaced, on which the kernel is checked
TINY = 1e-6  # relative size under which a kernel value counts as 0, or a spread of values as none
OUTLIER = 10  # the default γ = 1/k is suspect when k > OUTLIER × the index that 99% of the values stay under


def kernel_warnings(kernel: Kernel, chunk, default_gamma: bool) -> list[str]:
    """Warnings about the kernel on the first block of data:
    - default γ from an outlying index: γ was left to its default 1/k (k the block's largest index)
      and k is more than OUTLIER times the 99th percentile of the indices of the block's values;
    - numerically constant: on SAMPLE examples, max k(x_i, x_j) − min k(x_i, x_j) ≤ TINY·max |k|;
    - numerically diagonal: |k(x_i, x_j)| ≤ TINY·√(k(x_i,x_i) k(x_j,x_j)) for every two different
      examples of the sample (of those with k(x,x) ≠ 0), e.g. rbf on unscaled features;
    - nearly diagonal (rbf): the same for more than MOSTLY of those pairs."""
    out = []
    if default_gamma and kernel.kind != "linear" and len(chunk.indices):
        index = chunk.indices.astype(np.int64)  # as the file writes them
        k, bulk = chunk.feature_count, int(np.quantile(index, 0.99, method="inverted_cdf"))
        if k > OUTLIER * bulk:
            out.append(
                f"the default γ = 1/{k} = {kernel.gamma:.3g} comes from feature index {k}, more than "
                f"{OUTLIER}× the indices of 99% of the first block's values (≤ {bulk}); give --gamma or --sigma"
            )
    rows = unique(np.linspace(0, len(chunk) - 1, min(len(chunk), SAMPLE)).astype(np.int64))
    if len(rows) < 2:
        return out
    sample = chunk.take(rows)
    columns, compact = unique(sample.indices, return_inverse=True)  # order-preserving: rows stay sorted
    compact = compact.astype(np.int32)
    K = np.zeros((len(rows), len(rows)))
    kernel_matrix(
        SupportSet.from_csr(sample.indptr, compact, sample.values).arrays,
        kernel.args(),
        sample.indptr,
        compact,
        sample.values,
        np.zeros(len(columns)),
        K,
    )
    # pairs of different examples, both with k(x, x) ≠ 0; example[r]: the sample row where row r's point first occurs
    first: dict[bytes, int] = {}
    example = np.array([first.setdefault(b"".join(a.tobytes() for a in sample.row(r)), r) for r in range(len(rows))])
    i, j = np.triu_indices(len(rows), 1)
    diag = np.diag(K)
    pairs = (example[i] != example[j]) & (diag[i] * diag[j] != 0)
    where = f"{len(rows)} examples of the first block"
    scaling = "check the feature scaling" if kernel.kind == "linear" else "check --gamma and the feature scaling"
    if K.max() - K.min() <= TINY * np.abs(K).max():
        out.append(
            f"the kernel is numerically constant on {where} (max − min of k(x_i, x_j) ≤ {TINY:g} × max |k|): "
            f"it cannot tell examples apart; {scaling}"
        )
    elif pairs.any():
        tiny = (np.abs(K[i, j]) <= TINY * np.sqrt(np.abs(diag[i] * diag[j])))[pairs]
        if tiny.all():
            out.append(
                f"the kernel is numerically diagonal on {where} (|k(x_i, x_j)| ≤ {TINY:g} × √(k(x_i, x_i) "
                f"k(x_j, x_j)) for all different x_i, x_j): each example looks unrelated to the others; {scaling}"
                + (SCALE_HINT if kernel.kind == "rbf" else "")
            )
        elif kernel.kind == "rbf" and tiny.mean() > MOSTLY:
            out.append(
                f"the kernel is nearly diagonal on {where}: |k(x_i, x_j)| ≤ {TINY:g} × √(k(x_i, x_i) k(x_j, x_j)) "
                f"for {100 * tiny.mean():.1f}% of the pairs of different x_i, x_j, so most examples look unrelated "
                f"to the others; {scaling}{SCALE_HINT}"
            )
    return out


# rbf values that are mostly 0: distances far beyond 1/√γ, as unscaled features give (breast cancer: 99.5% of the
# pairs); on the sets of the benchmark (bench/feature_scaling.py) scaled or binary data have none.  Only for
# rbf: a sparse linear or poly kernel is 0 on most pairs of a text collection, as it should be.
MOSTLY = 0.5
SCALE_HINT = " (train --scale, or budgetlearn scale, scales them as svm-scale does)"


OUTCOME_SAMPLE = 2000  # examples of a run kept (`Reservoir`) on which the written model's predictions are checked


class Report:
    """What a run's summary warns of: the kernel on its first block (`kernel_warnings`, and a hint to
    scale features whose ranges differ widely), what going on changed in a resumed model (the session's
    warnings), the hypothesis it ended with (its kind's `size_warnings`), and whether the model it writes
    is better than a constant (the task's tally of the run, checked on a sample of the run's examples,
    `Reservoir`).  None of it changes what is learnt; each warning is one line, the same for every run
    over the same data and settings (tune lists each distinct one once)."""

    def __init__(self, session: Session, first, default_gamma: bool):
        self.session = session
        model = session.model
        chunk = first if model.scaling is None else model.scaling.apply(first)  # the learner's view
        self.kernel = kernel_warnings(model.learner.kernel, chunk, default_gamma)
        if not any(SCALE_HINT in w for w in self.kernel):  # one hint to scale is enough
            self.kernel += scaling_.spread_warning(chunk, SCALE_HINT)
        self.sample = Reservoir(OUTCOME_SAMPLE)  # scored through the model, which scales it
        self.tally = session.task.Tally()

    def add(self, chunk) -> None:
        self.tally.add(chunk)
        self.sample.add(chunk)

    def warnings(self, written: Model) -> list[str]:
        online = self.session.model
        return (
            self.kernel
            + self.session.warnings
            + online.learner.size_warnings()
            + self.tally.warnings(online, written, self.sample.chunk())
        )


class Reservoir:
    """A uniform sample of at most `size` examples of a stream (Vitter's algorithm R: example i, counted
    from 0, replaces a uniformly chosen one of the kept once i ≥ size, with probability size/(i + 1)), in
    bounded memory, on which the model a run writes is scored after the run (the task's warnings).  Its
    draws are doubles of a generator with a fixed seed, one per example past the first `size`, so that the
    sample, and the warnings, are the same for every run over the same data, whatever its blocks.

    A block's rows that hold a slot once the block is done are kept by one `Chunk.take` (a row replaced
    within its own block is never copied), and slot s is row `where[s, 1]` of piece `where[s, 0]`, with
    its label's spelling in its block: no Python step per kept row (a tuple each cost a9a's train ~40
    ms).  The pieces are joined into one when they hold more than SLACK times `size` rows."""

    SLACK = 4

    def __init__(self, size: int):
        self.size, self.seen = size, 0
        self.random = None  # made at the first draw: importing numpy.random costs a short run ~10 ms
        self.pieces: list = []  # Chunks of kept rows, some of them replaced since
        self.where = np.zeros((size, 2), np.int64)  # slot -> (piece, row of the piece)
        self.spelling: list = [None] * size  # slot -> its label's spelling in its block

    def add(self, chunk) -> None:
        n, filling = len(chunk), max(0, min(len(chunk), self.size - self.seen))
        rows, slots = np.arange(filling), self.seen + np.arange(filling)
        if filling < n:
            if self.random is None:
                self.random = np.random.default_rng(20240601)
            position = self.seen + np.arange(filling, n)  # each later example's index in the stream
            slot = np.floor(self.random.random(n - filling) * (position + 1)).astype(np.int64)
            hit = np.flatnonzero(slot < self.size)
            rows, slots = np.concatenate([rows, filling + hit]), np.concatenate([slots, slot[hit]])
        self.seen += n
        if not len(rows):
            return
        order = np.argsort(slots, kind="stable")  # each slot's rows in stream order: the last one stays
        last = order[np.append(slots[order][1:] != slots[order][:-1], True)]
        rows, slots = rows[last], slots[last]
        self.where[slots, 0], self.where[slots, 1] = len(self.pieces), np.arange(len(rows))
        for s, label in zip(slots.tolist(), chunk.labels[rows].tolist()):
            self.spelling[s] = chunk.label_spellings.get(label)
        self.pieces.append(chunk.take(rows))
        if sum(len(p) for p in self.pieces) > self.SLACK * self.size:
            kept = self.chunk()
            self.pieces, self.where[: len(kept), 0], self.where[: len(kept), 1] = [kept], 0, np.arange(len(kept))

    def chunk(self):
        """The kept examples as one Chunk, in slot order (None when the stream had none)."""
        if not self.seen:
            return None
        k = min(self.seen, self.size)
        starts = np.cumsum([0] + [len(p) for p in self.pieces])
        kept = concatenate(self.pieces).take(starts[self.where[:k, 0]] + self.where[:k, 1])
        kept.label_spellings = {}  # each label's spelling in the block of the last slot holding it
        for label, text in zip(kept.labels.tolist(), self.spelling[:k]):
            if text is not None:
                kept.label_spellings[label] = text
        kept.indices, kept.values = kept.indices.astype(np.int32), kept.values.astype(np.float64)
        kept.weights = None if kept.weights is None or np.all(kept.weights == 1.0) else kept.weights.astype(float)
        return kept
