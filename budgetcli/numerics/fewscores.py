"""Scores of a few examples without numba, bit-identical to the compiled `binary_scores`.

Why: the first call of any cached numba function in a process costs about a second (numba loads its
typing and lowering registries, and its BLAS check imports scipy.linalg), so `budgetlearn predict`
on a handful of lines would spend 90% of its time before scoring anything.  Chunks with few kernel
values are scored here instead, repeating the compiled loop's floating-point operations in the same
order so that the result is the same to the last bit (tests/test_fewscores.py checks this):

- every sum of the compiled code (‖x‖², each x·sv, f = Σ alpha_i k_i) starts from 0.0 and adds
  terms left to right; `np.cumsum` over [0.0, t_1, t_2, …] is the same sequence of additions
  (trailing +0.0 padding cannot change a sum that never is −0.0);
- rbf: d2 = (‖x‖² + ‖sv‖²) − 2·dot, clamped at 0, then exp(−γ·d2) through `math.exp`, the same
  C library exp numba's llvm.exp calls (numpy's own SIMD exp may differ in the last bit), or for a
  kernel with the vectorised exp through `exponential.exp_array`, the compiled exp_row's steps;
- the poly kernel is left to numba: numba raises a float to an integer power by repeated
  squaring, Python by the C library's pow.
"""

from __future__ import annotations

import math

import numpy as np

from .exponential import exp_array
from .kernels import LINEAR, RBF, RBF_VECTORISED
from .support import COUNT, SVArrays

MAX_KERNEL_VALUES = 1 << 16  # above this many k(x, sv) per chunk the compiled loop is cheaper than its start-up


def long_running() -> None:
    """A process that scores for as long as it runs (`serve`) takes the compiled loops whatever the chunk:
    their start-up is paid once, and one example at a time is what they are fastest at."""
    global MAX_KERNEL_VALUES
    MAX_KERNEL_VALUES = 0


def handles(code: int, n_examples: int, n_support: int) -> bool:
    return code in (LINEAR, RBF, RBF_VECTORISED) and n_examples * n_support <= MAX_KERNEL_VALUES


def _sequential_sums(terms: np.ndarray) -> np.ndarray:
    """Row sums of a 2-D array computed as 0.0 + t_0 + t_1 + … (the compiled loops' order)."""
    padded = np.zeros((terms.shape[0], terms.shape[1] + 1))
    padded[:, 1:] = terms
    return np.cumsum(padded, axis=1)[:, -1]


def binary_scores(
    S: SVArrays,
    code: int,
    gamma: float,
    alpha: np.ndarray,
    indptr,
    indices,
    values,
    scratch: np.ndarray,
    bias: float = 0.0,
) -> np.ndarray:
    """out[t] = Σ_i alpha_i k(x_t, sv_i) (+ bias, the kernel's offset, when not 0), as learner.binary_scores computes it
    (rbf and linear)."""
    n = int(S.meta[COUNT])
    out = np.zeros(indptr.shape[0] - 1)
    if n == 0:
        return out + bias if bias else out
    # pool positions of every live support vector, padded to the longest one; padding reads entry 0
    # and is masked to +0.0 below
    length = S.length[:n]
    width = int(length.max())
    offset = np.arange(width)
    mask = offset[None, :] < length[:, None]
    pos = np.where(mask, S.start[:n, None] + offset[None, :], 0)
    sv_idx = S.pool_idx[pos]
    sv_val = np.where(mask, S.pool_val[pos], 0.0)
    a = alpha[:n]
    for t in range(out.shape[0]):
        idx = indices[indptr[t] : indptr[t + 1]]
        val = values[indptr[t] : indptr[t + 1]]
        scratch[idx] = val
        dots = _sequential_sums(sv_val * scratch[sv_idx])
        scratch[idx] = 0.0
        if code in (RBF, RBF_VECTORISED):
            sq = _sequential_sums((val * val)[None, :])[0]
            d2 = (sq + S.sqnorm[:n]) - 2.0 * dots
            d2[d2 < 0.0] = 0.0
            if code == RBF:
                k = np.array([math.exp(v) for v in (-gamma * d2).tolist()])
            else:
                k = exp_array(-gamma * d2)
        else:
            k = dots
        out[t] = _sequential_sums((a * k)[None, :])[0]
    return out + bias if bias else out
