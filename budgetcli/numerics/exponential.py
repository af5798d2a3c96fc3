"""exp(x) for x ≤ 0, in plain float64 arithmetic that the compiler vectorises: the Gaussian kernel's
exp(−γ‖x − y‖²) is 100–300 calls of the C library's exp per example for a budget of that size, about
9 ns each on a 2-core AMD EPYC (Zen 3), more than half of the time of RBP, Forgetron, BPA and BOGD on long
streams.  An rbf model written with `--rbf-exp vectorised` (the default for new models; the header's
kernel "exp") computes its kernel values here; files without the field hold libm's (`Kernel.exp`).

The method: k = round(x / ln 2) (by adding and subtracting 1.5·2⁵², exact below 2⁵¹), r = (x − k·ln2_hi)
− k·ln2_lo with ln2_hi's low bits zero so that k·ln2_hi is exact (Cody and Waite, as fdlibm's e_exp.c),
|r| ≤ ln2/2; exp(r) = 1 + (r + r²·q(r)), q the Taylor series' 1/2! + r/3! + … + r¹¹/13! (its truncation
error is below 2⁻⁵⁷ of the result) in Estrin's form: pairs a + b·r, joined by r², r⁴ and r⁸, a chain
of five steps where Horner's is twelve, so that the lanes are not waiting on each other; then
exp(x) = exp(r)·2ᵏ.  No division: fdlibm's rational form divides, which the compiler leaves scalar on
CPUs whose vector divide is slow (Zen 3), and then the whole loop runs one value at a time.
Accuracy: within one unit in the last place of the C library's exp over the whole range, and equal to
it for nine arguments in ten (the test measures both).

The same value three ways, bit for bit (each step an IEEE operation, no fused multiply-adds, which
neither numba nor numpy make unasked):
- `exp_row` (compiled), a kernel row's values: exp(r) four lanes at a time, then 2ᵏ from a table of
  the powers of two that can occur (`SCALE`);
- `exp_scalar` (compiled), one value (kernel matrices, compressions): 2ᵏ by math.ldexp;
- `exp_array` (numpy), the few-example scoring path (fewscores.py): 2ᵏ by np.ldexp.
Where exp(x) is subnormal (x < −708.4) the row scales in two steps, by 2^(k+64) (exact) and 2^−64 (one
rounding), which is ldexp's single rounding of exp(r)·2ᵏ.  x below −746 gives 0 (exp(x) < 2^−1076
rounds to 0), NaN gives NaN.  The domain is x ≤ 0, a kernel's −γ d² (d² clamped at 0); a positive x is
taken as 0, so that k always has its entry in the table.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import njit

SHIFT = 6755399441055744.0  # 1.5·2⁵²: x/ln2 + SHIFT − SHIFT rounds to the nearest integer
LOWEST = -746.0  # exp(x) < 2^−1076 below: rounds to 0; k = round(x/ln2) ≥ −1077 above
K_LOWEST = -1077
SUBNORMAL_K = -1000  # below this k, 2ᵏ is applied in two steps (2ᵏ itself is no normal double)
INV_LN2 = 1.44269504088896338700e00
LN2_HI = 6.93147180369123816490e-01  # 0x3fe62e42fee00000: the low 21 bits zero, k·LN2_HI exact
LN2_LO = 1.90821492927058770002e-10
C2, C3, C4, C5, C6, C7 = 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040  # 1/n!, each the double nearest it
C8, C9, C10, C11, C12, C13 = 1 / 40320, 1 / 362880, 1 / 3628800, 1 / 39916800, 1 / 479001600, 1 / 6227020800
TWO_M64 = 2.0**-64
# SCALE[k − K_LOWEST] = 2ᵏ, or 2^(k+64) below SUBNORMAL_K (then times TWO_M64: one rounding, ldexp's)
SCALE = np.array([2.0 ** (k + 64 if k < SUBNORMAL_K else k) for k in range(K_LOWEST, 1)])


def _steps(x):
    """(k, exp(x)/2ᵏ) for LOWEST ≤ x ≤ 0 in plain arithmetic: compiled (`_reduced`) and on numpy arrays
    (`exp_array`), the same operations in the same order."""
    k = (x * INV_LN2 + SHIFT) - SHIFT
    r = (x - k * LN2_HI) - k * LN2_LO
    r2 = r * r
    r4 = r2 * r2
    q = (((C2 + C3 * r) + (C4 + C5 * r) * r2) + ((C6 + C7 * r) + (C8 + C9 * r) * r2) * r4) + (
        (C10 + C11 * r) + (C12 + C13 * r) * r2
    ) * (r4 * r4)
    return k, 1.0 + (r + r2 * q)


_compiled_steps = njit(cache=True, inline="always")(_steps)


@njit(cache=True, inline="always")
def _reduced(x):
    """(k as a float, exp(x)/2ᵏ) for x ≤ 0, x clamped to LOWEST (NaN: NaN, NaN)."""
    return _compiled_steps(LOWEST if x < LOWEST else (0.0 if x > 0.0 else x))


@njit(cache=True)
def exp_scalar(x):
    """exp(x) for x ≤ 0, the same bits as `exp_row`."""
    k, y = _reduced(x)
    if not math.isfinite(y):
        return y
    return math.ldexp(y, int(k))


@njit(cache=True)
def exp_row(v, n):
    """v[i] = exp(v[i]) for i < n (every v[i] ≤ 0): exp(r) four lanes at a time, then the 2ᵏ."""
    ks = np.empty(n)
    for i in range(n):
        k, y = _reduced(v[i])
        v[i] = y
        ks[i] = k
    for i in range(n):
        k = ks[i]
        j = int(k) if k == k else 0  # NaN: v[i] is NaN already
        y = v[i] * SCALE[j - K_LOWEST]
        v[i] = y * TWO_M64 if j < SUBNORMAL_K else y


def exp_array(x: np.ndarray) -> np.ndarray:
    """exp of every element (all ≤ 0), the same bits as `exp_row`, in numpy."""
    k, y = _steps(np.where(x < LOWEST, LOWEST, np.where(x > 0.0, 0.0, x)))
    with np.errstate(invalid="ignore"):
        ks = np.where(np.isfinite(k), k, 0.0).astype(np.int64)
    return np.where(np.isfinite(y), np.ldexp(y, ks), y)
