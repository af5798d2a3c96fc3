"""Synthetic streams from the papers.

`projectron_gaussians`: the Projectron paper's synthetic set (§7, after Dekel et al.): points
from two 2-D Gaussians with means (1, 1) for +1 and (−1, −1) for −1, diagonal covariance
diag(0.2, 2), each label flipped with probability 0.1.  Classes are equally likely.

`checkerboard`: the multiclass Pegasos paper's synthetic set (Wang, Crammer, Vucetic 2010, §5,
"Checkerboard (10M, 2, 2)"): points uniform on a 4 × 4 board [0, 4)², label 1 on the squares with
⌊x₁⌋ + ⌊x₂⌋ even and 2 on the others.  The paper scales every attribute to mean 0 and standard
deviation 1; the uniform [0, 4) has mean 2 and deviation 4/√12, so we write (x − 2)·√12/4.

`waveform`: Breiman's three-wave construction (Breiman, Friedman, Olshen, Stone 1984, §2.6.2; the
UCI "waveform" set, 21 attributes, 3 classes): base waves h₁(i) = max(6 − |i − 11|, 0),
h₂(i) = h₁(i − 4), h₃(i) = h₁(i + 4) for i = 1..21; class 0 is u h₁ + (1 − u) h₂ + ε, class 1
u h₁ + (1 − u) h₃ + ε, class 2 u h₂ + (1 − u) h₃ + ε, with u ~ U(0, 1), ε ~ N(0, I), classes equally
likely.  Attributes are standardised with the construction's exact mean and variance (not the
sample's, so that train and test files generated with different seeds are scaled alike).
"""

from __future__ import annotations

import numpy as np


def projectron_gaussians(n: int, seed: int = 0, flip: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """(X of shape (n, 2), y in {−1, +1})."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = y[:, None] * np.array([1.0, 1.0]) + rng.standard_normal((n, 2)) * np.sqrt([0.2, 2.0])
    flipped = rng.random(n) < flip
    y[flipped] = -y[flipped]
    return X, y


def checkerboard(n: int, seed: int = 0, size: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """(X of shape (n, 2), y in {1, 2})."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2)) * size
    y = np.where((np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2 == 0, 1.0, 2.0)
    return (X - size / 2) / (size / np.sqrt(12.0)), y


def waveform_bases() -> np.ndarray:
    i = np.arange(1, 22)
    h1 = np.maximum(6 - np.abs(i - 11), 0).astype(float)
    h2 = np.maximum(6 - np.abs(i - 4 - 11), 0).astype(float)
    h3 = np.maximum(6 - np.abs(i + 4 - 11), 0).astype(float)
    return np.array([h1, h2, h3])


WAVEFORM_PAIRS = ((0, 1), (0, 2), (1, 2))  # class c mixes bases a and b


def waveform(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(X of shape (n, 21), y in {0, 1, 2})."""
    rng = np.random.default_rng(seed)
    h = waveform_bases()
    y = rng.integers(0, 3, n)
    u = rng.random(n)[:, None]
    a = h[[WAVEFORM_PAIRS[c][0] for c in range(3)]][y]
    b = h[[WAVEFORM_PAIRS[c][1] for c in range(3)]][y]
    X = u * a + (1 - u) * b + rng.standard_normal((n, 21))
    # exact moments of the mixture: E x = (a + b)/2, E x² = (a² + ab + b²)/3 + 1 per class
    mean = np.mean([(h[p] + h[q]) / 2 for p, q in WAVEFORM_PAIRS], axis=0)
    second = np.mean([(h[p] ** 2 + h[p] * h[q] + h[q] ** 2) / 3 + 1 for p, q in WAVEFORM_PAIRS], axis=0)
    return (X - mean) / np.sqrt(second - mean ** 2), y.astype(float)


GENERATORS = {"projectron-gaussians": projectron_gaussians, "checkerboard": checkerboard, "waveform": waveform}
