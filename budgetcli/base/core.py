"""The types every layer shares, on the ground floor: nothing here imports the rest of the package.

- `Chunk`: a block of examples in CSR form, as the reader makes it and every learner takes it.
- `DataError`: a problem with the input, located by source and line; raised by the reader, the label
  maps, the learners' guards and the commands.
- `MAX_INDEX`: the largest feature index a data file, a model file or an array may hold.
- `KernelSpec`: the kernel as the user gave it (γ may be left to the data: `kernels.Kernel.of`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

#: Largest accepted feature index: it must fit in int32 (chunks and models hold the file's indices).
MAX_INDEX = 2**31 - 1

_TOKEN_DISPLAY_CHARS = 40


class DataError(ValueError):
    """A problem with the input data, located by source name and line number."""

    def __init__(self, source, line: int, token: str | None, reason: str):
        self.source = str(source)
        self.line = int(line)
        self.token = None if token is None else str(token)[:_TOKEN_DISPLAY_CHARS]
        self.reason = reason
        # line 0: about the source as a whole (cannot open it, no examples in it)
        message = f"{self.source}:{self.line}: {reason}" if self.line else f"{self.source}: {reason}"
        if self.token is not None:
            message += f" (token {self.token!r})"
        super().__init__(message)

    def __reduce__(self):
        # The default pickling replays __init__ with self.args (the message
        # only); joblib workers need the real arguments.
        return (type(self), (self.source, self.line, self.token, self.reason))


def gather_rows(starts, lengths, indices, values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows at positions starts[k] .. starts[k] + lengths[k] of (indices, values), as CSR (indptr,
    indices, values): one gather, no Python loop (a chunk's rows, a pool's vectors, an archive's)."""
    lengths = np.asarray(lengths, np.int64)
    indptr = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    # each entry's position: its row's start plus its offset in the row
    take = np.repeat(np.asarray(starts, np.int64) - indptr[:-1], lengths) + np.arange(indptr[-1])
    return indptr, indices[take], values[take]


@dataclass(eq=False)
class Chunk:
    """A block of examples in CSR form."""

    indptr: np.ndarray  # int64, (n + 1,)
    indices: (
        np.ndarray
    )  # int32, the data file's indices (≥ 0; an array's column j is j + Model.first_index), increasing
    values: np.ndarray  # float64
    labels: np.ndarray  # float64, (n,)
    line_numbers: np.ndarray  # int64, (n,), 1-based line of each example
    label_spellings: dict = field(default_factory=dict)  # label -> first spelling
    # each example's weight (a sample weight of the Python API, scikit-learn or River: ≥ 0), or None: 1 each
    weights: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def n_features(self) -> int:
        """Largest index + 1 (the width of a dense copy indexed by feature index), or 0 if the chunk
        has no features at all."""
        return int(self.indices.max()) + 1 if len(self.indices) else 0

    @property
    def feature_count(self) -> int:
        """How many features LIBSVM counts for its default γ = 1/k: the largest index, and one more when
        index 0 occurs (so that a 0-based file and its 1-based copy get the same γ)."""
        if not len(self.indices):
            return 0
        return int(self.indices.max()) + int(self.holds_index_zero)

    @property
    def holds_index_zero(self) -> bool:
        """Index 0 occurs: the data numbers its features from 0 (model.Model.first_index)."""
        return bool(len(self.indices)) and int(self.indices.min()) == 0

    @property
    def csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(indptr, indices, values): the arrays the compiled loops and scorers take."""
        return self.indptr, self.indices, self.values

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(indices, values) of example ``i``, as views."""
        start, stop = self.indptr[i], self.indptr[i + 1]
        return self.indices[start:stop], self.values[start:stop]

    def take(self, rows) -> "Chunk":
        """A new Chunk of the given rows, in the given order (for shuffled epochs)."""
        rows = np.asarray(rows, dtype=np.int64)
        indptr, indices, values = gather_rows(self.indptr[rows], np.diff(self.indptr)[rows], self.indices, self.values)
        present = set(self.labels[rows].tolist())
        spellings = {v: s for v, s in self.label_spellings.items() if v in present}
        weights = None if self.weights is None else self.weights[rows]
        return Chunk(indptr, indices, values, self.labels[rows], self.line_numbers[rows], spellings, weights)

    @classmethod
    def from_dense(cls, X, y) -> "Chunk":
        """A Chunk of the non-zeros of the rows of X, column j as feature index j + 1 (as a 1-based data
        file numbers them), lines numbered 1..n and labels spelt by `shortest_text`; for tests, generated streams and
        small data."""
        X = np.asarray(X, np.float64)
        rows, cols = np.nonzero(X)
        indptr = np.zeros(X.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=X.shape[0]), out=indptr[1:])
        labels = np.asarray(y, np.float64)
        return cls(
            indptr=indptr,
            indices=(cols + 1).astype(np.int32),
            values=X[rows, cols],
            labels=labels,
            line_numbers=np.arange(1, X.shape[0] + 1, dtype=np.int64),
            label_spellings={float(v): shortest_text(v) for v in unique(labels)},
        )

    def to_dense(self, n_features: int) -> np.ndarray:
        """Dense (n, n_features) float64 copy, feature index j in column j − 1 (`from_dense`'s inverse);
        for tests and small data."""
        if self.n_features - 1 > n_features:
            raise ValueError(f"n_features={n_features} is too small, the chunk needs {self.n_features - 1}")
        if len(self.indices) and self.indices.min() == 0:
            raise ValueError("feature index 0 has no column in a dense copy (column j is index j + 1)")
        dense = np.zeros((len(self), n_features), dtype=np.float64)
        rows = np.repeat(np.arange(len(self)), np.diff(self.indptr))
        dense[rows, self.indices - 1] = self.values
        return dense


@dataclass(frozen=True)
class KernelSpec:
    """The kernel as the user gave it: rbf exp(−γ‖x−y‖²), poly (γ x·y + coef0)^degree or linear x·y.
    γ from `gamma`, or from `sigma` as 1/(2σ²), or (both None) from the data (`kernels.Kernel.of`)."""

    kind: str = "rbf"
    gamma: float | None = None
    sigma: float | None = None
    degree: int = 3
    coef0: float = 0.0
    exp: str = "vectorised"  # rbf: kernels.EXPS, how exp(−γ d²) is computed (kernels.Kernel.exp)

    # each field's name as an option and a keyword argument (kernels.KERNEL_PARAMS, `--rbf-exp`, ...)
    PARAM_NAMES: ClassVar[dict] = {
        "kind": "kernel",
        "gamma": "gamma",
        "sigma": "sigma",
        "degree": "degree",
        "coef0": "coef0",
        "exp": "rbf_exp",
    }

    @classmethod
    def from_params(cls, values) -> "KernelSpec":
        """The spec of the kernel options or keyword arguments in `values` (a mapping by their names,
        PARAM_NAMES; others are ignored, absent ones take the defaults): how every edge (the commands,
        `tune`, the scikit-learn and River classes) makes one."""
        return cls(**{field: values[name] for field, name in cls.PARAM_NAMES.items() if name in values})

    def params(self) -> dict:
        """The spec as options by name (`from_params`' inverse)."""
        return {name: getattr(self, field) for field, name in self.PARAM_NAMES.items()}

    def gamma_for(self, first_chunk_features: int) -> float:
        """γ from gamma or sigma; by default 1/k with k the first chunk's `Chunk.feature_count` (LIBSVM
        takes 1/#features of the whole file, which a stream cannot know).  ValueError for both
        given, or a σ whose γ is not a positive finite number."""
        if self.gamma is not None and self.sigma is not None:
            raise ValueError("give --gamma or --sigma, not both")
        if self.sigma is not None:
            return gamma_from_sigma(self.sigma)
        if self.gamma is not None:
            return self.gamma
        return 1.0 / max(first_chunk_features, 1)

    @property
    def default_gamma(self) -> bool:
        """γ is left to the data."""
        return self.gamma is None and self.sigma is None


def concatenate(chunks: list) -> Chunk:
    """One Chunk holding the given chunks' examples in order."""
    if not chunks:
        return Chunk(
            indptr=np.zeros(1, dtype=np.int64),
            indices=np.zeros(0, dtype=np.int32),
            values=np.zeros(0, dtype=np.float64),
            labels=np.zeros(0, dtype=np.float64),
            line_numbers=np.zeros(0, dtype=np.int64),
        )
    offsets = np.cumsum([0] + [int(c.indptr[-1]) for c in chunks[:-1]])
    spellings: dict = {}
    for chunk in chunks:
        for label, spelling in chunk.label_spellings.items():
            spellings.setdefault(label, spelling)
    return Chunk(
        indptr=np.concatenate([np.zeros(1, dtype=np.int64)] + [c.indptr[1:] + off for c, off in zip(chunks, offsets)]),
        indices=np.concatenate([c.indices for c in chunks]),
        values=np.concatenate([c.values for c in chunks]),
        labels=np.concatenate([c.labels for c in chunks]),
        line_numbers=np.concatenate([c.line_numbers for c in chunks]),
        label_spellings=spellings,
        weights=None
        if all(c.weights is None for c in chunks)
        else np.concatenate([np.ones(len(c)) if c.weights is None else c.weights for c in chunks]),
    )


def gamma_from_sigma(sigma: float) -> float:
    """γ = 1/(2σ²); ValueError when σ is not a positive number or γ is not a positive double (σ so
    small that σ² underflows, or so large that γ does)."""
    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be a positive number, got {sigma}")
    square = sigma * sigma
    gamma = 1.0 / (2.0 * square) if square > 0 else math.inf
    if not (gamma > 0 and math.isfinite(gamma)):
        raise ValueError(f"sigma = {sigma:g} gives γ = 1/(2σ²) = {gamma:g}, not a positive finite number")
    return gamma


def parse_number(text: str) -> float | None:
    """The number a data file's token spells (float's grammar, without the digit separators '1_0' it
    also takes), else None: the reader's rule, and so the rule of which label spellings are numbers."""
    if "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def shortest_text(v: float) -> str:
    """The shortest text that reads back as the number v (Python's repr, the shortest round trip, with
    its '.0' dropped: 1, 1.0000000001, 0.1, 1e+22): how a label is written wherever its own spelling
    is not known, or cannot be kept."""
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


def unique(values, return_inverse: bool = False, return_counts: bool = False):
    """np.unique of a 1-d array of numbers without NaN (sorted distinct values, and as asked the index of
    each value's distinct value and each distinct value's count), without the import of numpy.ma that
    np.unique makes since numpy 2 (~20 ms of every process that reads a label)."""
    values = np.asarray(values).ravel()
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.empty(len(ordered), bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    distinct = ordered[first]
    if not (return_inverse or return_counts):
        return distinct
    out = [distinct]
    if return_inverse:
        inverse = np.empty(len(values), np.intp)
        inverse[order] = np.cumsum(first) - 1
        out.append(inverse)
    if return_counts:
        out.append(np.diff(np.append(np.flatnonzero(first), len(ordered))))
    return tuple(out)
