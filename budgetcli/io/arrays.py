"""Arrays in: the one door from numpy and scipy.sparse arrays to the compiled code (`csr_chunk`), and the
checks of labels and sample weights that go with them.  The Python API, the scikit-learn and River classes
and a model's own predictions from arrays take it, so that every one refuses what it refuses, in the same
words."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..base.core import MAX_INDEX, Chunk, DataError


def csr_chunk(X, labels=None, columns: np.ndarray | None = None, first_index: int = 1, weights=None) -> Chunk:
    """A CSR Chunk of X (numpy or scipy.sparse), explicit zeros dropped, indices sorted: the one door
    from arrays to the compiled code (the Python API, the scikit-learn and River classes, to learn and
    to predict), so every one of them refuses what it refuses, in the same words.  X must be 2-D with
    finite values (a DataError naming the first bad row, `X:ROW`); `labels` (None: to predict) go
    through `checked_labels`.

    `columns[j]` is the learner's feature index of X's column j (increasing in j); by default j +
    `first_index`, the model's numbering (model.Model.first_index: 1, the index a 1-based data file gives
    that column, or 0 for a model of 0-based data), so that a model trained on a file predicts on the
    array scikit-learn's load_svmlight_file reads from it, and the other way round.  `weights`: the rows'
    sample weights (`checked_weights`), or None."""
    X = sp.csr_matrix(X if sp.issparse(X) else _two_dimensional(X), dtype=np.float64, copy=True)
    n = X.shape[0]
    labels = np.zeros(n) if labels is None else checked_labels(labels, n)
    finite = np.isfinite(X.data)
    if not finite.all():
        row = int(np.searchsorted(X.indptr, np.flatnonzero(~finite)[0], side="right"))
        raise DataError("X", row, None, "a feature value is not a finite number (the kernels need finite values)")
    largest = X.shape[1] - 1 + first_index if columns is None else int(np.max(columns, initial=-1))
    if largest > MAX_INDEX:  # a feature index must fit the 32 bits the loops index with, as in a data file
        raise ValueError(
            f"X has {X.shape[1]:,} columns; budgetlearn takes at most {MAX_INDEX:,} features (as a LIBSVM "
            "file's indices 1 to 2,147,483,647)"
        )
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    indices = X.indices + first_index if columns is None else np.asarray(columns)[X.indices]
    return Chunk(
        X.indptr.astype(np.int64),
        indices.astype(np.int32),
        X.data,
        labels,
        np.arange(1, n + 1, dtype=np.int64),
        {},
        None if weights is None else checked_weights(weights, n),
    )


def _two_dimensional(X) -> np.ndarray:
    X = np.asarray(X, np.float64)
    if X.ndim != 2:
        raise ValueError(f"X has {X.ndim} dimension(s); give a 2-D array, one row per example")
    return X


def checked_labels(y, rows: int, numbers: bool = True):
    """y checked as the labels of `rows` rows of X: one dimension and one label per row, and (`numbers`)
    each a finite number, as float64 (a DataError naming the first bad one, `y:ROW`).  Without
    `numbers` (River's labels are any values, encoded after) y as a list.  Checked before anything is
    learnt: a y that is not X's length would otherwise make the compiled loops read past its end."""
    values = np.asarray(y, np.float64) if numbers else list(y)
    shape = values.shape if numbers else (len(values),)
    if len(shape) != 1 or shape[0] != rows:
        raise ValueError(f"y has shape {shape}; X has {rows:,} rows: give one label per row")
    if numbers and not np.isfinite(values).all():
        raise DataError("y", int(np.flatnonzero(~np.isfinite(values))[0]) + 1, None, "the label is not a finite number")
    return values


def checked_weights(weights, rows: int) -> np.ndarray:
    """Sample weights checked as those of `rows` rows of X: one dimension, one per row, each a finite
    number ≥ 0 (0: the row is left out, scikit-learn's convention), as float64; a DataError naming the
    first bad one (`sample_weight:ROW`).  Checked before anything is learnt, as the labels are."""
    values = np.asarray(weights, np.float64)
    if values.ndim == 0:  # one number for every row (scikit-learn accepts a scalar)
        values = np.full(rows, float(values))
    if values.shape != (rows,):
        raise ValueError(f"sample_weight has shape {values.shape}; X has {rows:,} rows: give one weight per row")
    bad = ~(np.isfinite(values) & (values >= 0))
    if bad.any():
        raise DataError("sample_weight", int(np.flatnonzero(bad)[0]) + 1, None, "the weight is not a finite number ≥ 0")
    return values
