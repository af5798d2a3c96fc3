"""Small builders shared by the tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from budgetcli.io.libsvm import Chunk

# Real data that ships with the project (sample_data/README.md): a9a and a9a.t, the synthetic set.
SAMPLE_DATA = Path(__file__).resolve().parents[1] / "sample_data"


def chunk_from_dense(X: np.ndarray, y: np.ndarray) -> Chunk:
    """A Chunk holding the non-zeros of X (0-based indices), as the reader would produce."""
    return Chunk.from_dense(X, y)


def random_stream(n: int, d: int, seed: int, sparsity: float = 0.3):
    """A noisy non-linear binary problem with some exact zeros (to exercise the sparse paths)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[rng.random((n, d)) < sparsity] = 0.0
    # No all-zero rows: with a poly kernel every one of them has f(0) = coef0^degree · Σα, an exact
    # tie at f = 0 in exact arithmetic that two correct methods may break either way.
    X[~X.any(axis=1), 0] = 1.0
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 1 % d] - 0.3 + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def assert_same_state(a: dict, b: dict) -> None:
    """Two learners' saved arrays, equal bit for bit (no tolerance: where a chunk ends, a checkpoint or a
    resume changes nothing in any algorithm's state)."""
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(b[name], a[name], err_msg=name)
        assert (a[name].dtype, a[name].tobytes()) == (b[name].dtype, b[name].tobytes()), name  # -0.0, NaN bits


def label_map(cls):
    """The label map a new model of learner class `cls` starts with (its first task's: task.py), for tests
    that make models by hand: ±1 labels are real targets to a regression learner."""
    from budgetcli.learning import task

    return task.named(cls.tasks[0]).label_map(cls)
