"""What the scikit-learn and River wrappers (sklearn.py, river.py) share: checking an algorithm and
its parameters, a CSR Chunk of an array, and pickling a learner through its own state.  Neither
scikit-learn nor River is imported here, so each wrapper needs only its own library."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import registry
from .io.libsvm import MAX_INDEX, Chunk
from .learner import Overflow


def learner_class(owner: str, algorithm: str, params: dict) -> type:
    """The learner class of `algorithm`, after checking `params`: an unknown algorithm, a name that
    no algorithm takes, a parameter this one does not take or a bad value is a ValueError."""
    cls = registry.get(algorithm)
    unknown = sorted(set(params) - set(registry.params()))
    if unknown:
        raise ValueError(f"{owner} has no parameter {', '.join(unknown)}; the algorithms' parameters "
                         f"are: {', '.join(sorted(registry.PARAMS))}")
    cls.resolve_params(params)
    return cls


def csr_chunk(X, labels: np.ndarray, columns: np.ndarray | None = None) -> Chunk:
    """A CSR Chunk of X (numpy or scipy.sparse), explicit zeros dropped, indices sorted.

    `columns[j]` is the learner's feature index of X's column j (increasing in j); by default j."""
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    width = X.shape[1] if columns is None else int(np.max(columns, initial=-1)) + 1
    if width > MAX_INDEX:  # a feature index must fit the 32 bits the loops index with, as in a data file
        raise ValueError(f"X has {width:,} columns; budgetlearn takes at most {MAX_INDEX:,} features (as a LIBSVM "
                         "file's indices 1 to 2,147,483,647)")
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    n = X.shape[0]
    indices = X.indices if columns is None else np.asarray(columns)[X.indices]
    return Chunk(X.indptr.astype(np.int64), indices.astype(np.int32), X.data, np.asarray(labels, np.float64),
                 np.arange(1, n + 1, dtype=np.int64), {})


def pickled_learner(learner) -> tuple:
    """A learner as its own state (plain arrays and JSON), not its live buffers: the unpickled copy
    owns fresh writable arrays however it is loaded (joblib may memory-map them read-only)."""
    return type(learner).name, learner.state()


def unpickled_learner(saved: tuple):
    name, (header, arrays) = saved
    return registry.get(name).from_state(header, {k: np.array(v) for k, v in arrays.items()})


def learn(learner, chunk: Chunk, y: np.ndarray, rows: str = "row") -> None:
    """learner.learn(chunk, y), a row whose numbers overflow as a ValueError naming it (`rows`: how the
    caller's user names a row, e.g. "X")."""
    try:
        learner.learn(chunk, y)
    except Overflow as exc:
        where = f"X[{exc.row}]" if rows == "X" else f"{rows} {exc.row}"
        raise ValueError(f"{where}: {exc.reason}") from None
