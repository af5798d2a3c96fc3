"""Synthetic streams from the papers.

`projectron_gaussians`: the Projectron paper's synthetic set (§7, after Dekel et al.): points
from two 2-D Gaussians with means (1, 1) for +1 and (−1, −1) for −1, diagonal covariance
diag(0.2, 2), each label flipped with probability 0.1.  Classes are equally likely.
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


GENERATORS = {"projectron-gaussians": projectron_gaussians}
