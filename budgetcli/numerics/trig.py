"""cos θ and sin θ together, in plain float64 arithmetic that the compiler vectorises: FOGD's feature map
computes D of them per example, and libm's scalar calls were half of its time on long streams.

The method is fdlibm's (Sun Microsystems, 1993; FreeBSD's and musl's libm are its descendants): θ is
reduced to r = θ − k·π/2, |r| ≤ π/4, with π/2 in three parts (Cody and Waite), then sin r and cos r are
the minimax polynomials of fdlibm's __kernel_sin and __kernel_cos, and k mod 4 picks the quadrant.  There
are no branches, only selects, so a loop over an array of θ runs four lanes at a time.  Every step is an
IEEE operation without fused multiply-adds, so the results are the same on every machine and on both the
compiled-at-install and the just-in-time path.

Accuracy: an absolute error of at most 2⁻⁵³ for |θ| ≤ TRIG_LIMIT (one unit in the last place of a value in
[½, 1); the test compares with numpy's cos and sin over that range), equal to libm's in 80–95% of
arguments.  A result near 0 is not correct to its own last place, as libm's is: fdlibm carries the reduced
r's rounding error on to its kernels, which this leaves out (the features are summed with others of size
up to 1, where that error is below the last place).  Beyond TRIG_LIMIT the three-part reduction loses bits,
so the callers use math.cos and math.sin there (`cos_sin`).

`single_cos_sin` is the same method in float32 with shorter polynomials (FOGD's `--map-arithmetic
single`): π/2 in three float32 parts and the minimax polynomials of Cephes' sinf and cosf (Moshier,
1984–1989; three terms each), for |θ| ≤ TRIG_LIMIT_SINGLE, where k·π/2's first two parts are exact (k <
2¹³).  Its absolute error is below 1e-7 of the float64 cos and sin of the same float32 θ (about 1.5 units
in the last place of a float32 near 1; the test measures it), and every step is a float32 IEEE operation,
so it too gives the same bits on every machine and on both compiled paths, eight or sixteen lanes at a
time.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import njit

TRIG_LIMIT = 1.0e5  # |θ| up to which the reduction is exact enough: k = round(θ·2/π) < 2^20, k·PIO2_1 exact
INV_PIO2 = 6.36619772367581382433e-01  # 2/π
PIO2_1 = 1.57079632673412561417e00  # π/2's first 33 bits
PIO2_2 = 6.07710050630396597660e-11  # the next 33 bits
PIO2_3 = 2.02226624871116645580e-21  # the next 33 bits
S1, S2, S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
S4, S5, S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
C1, C2, C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
C4, C5, C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11


@njit(cache=True, inline="always")
def reduced_cos_sin(theta):
    """(cos θ, sin θ) for |θ| ≤ TRIG_LIMIT (NaN for a θ that is not finite)."""
    k = math.floor(theta * INV_PIO2 + 0.5)
    r = ((theta - k * PIO2_1) - k * PIO2_2) - k * PIO2_3
    z = r * r
    s = r + z * r * (S1 + z * (S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)))))
    half = 0.5 * z
    w = 1.0 - half
    c = w + (((1.0 - w) - half) + z * z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6))))))
    quadrant = k - 4.0 * math.floor(k * 0.25)  # k mod 4, as a float: 0, 1, 2 or 3
    odd = quadrant == 1.0 or quadrant == 3.0
    sin_theta = c if odd else s
    cos_theta = s if odd else c
    sin_theta = -sin_theta if quadrant >= 2.0 else sin_theta
    cos_theta = -cos_theta if quadrant == 1.0 or quadrant == 2.0 else cos_theta
    return cos_theta, sin_theta


@njit(cache=True, inline="always")
def cos_sin(theta):
    """(cos θ, sin θ) for any θ: `reduced_cos_sin` within TRIG_LIMIT, libm's beyond (not vectorised)."""
    if abs(theta) <= TRIG_LIMIT:
        return reduced_cos_sin(theta)
    return math.cos(theta), math.sin(theta)


F32 = np.float32  # constants of the float32 functions are float32 (a Python float would make the sums float64)
TRIG_LIMIT_SINGLE = F32(8192.0)  # |θ| up to which k·PIO2_1_F and k·PIO2_2_F are exact (k < 2¹³)
INV_PIO2_F = F32(INV_PIO2)
SHIFT_F = F32(12582912.0)  # 1.5·2²³: t + SHIFT_F − SHIFT_F rounds t to the nearest integer (|t| < 2²²)
PIO2_1_F, PIO2_2_F, PIO2_3_F = F32(1.5703125), F32(4.837512969970703125e-4), F32(7.54978995489188216e-8)
S1_F, S2_F, S3_F = F32(-1.6666654611e-1), F32(8.3321608736e-3), F32(-1.9515295891e-4)
C1_F, C2_F, C3_F = F32(4.166664568298827e-2), F32(-1.388731625493765e-3), F32(2.443315711809948e-5)
HALF_F, ONE_F = F32(0.5), F32(1.0)


@njit(cache=True, inline="always")
def single_cos_sin(theta):
    """(cos θ, sin θ) in float32 for a float32 |θ| ≤ TRIG_LIMIT_SINGLE (the module's docstring)."""
    k = (theta * INV_PIO2_F + SHIFT_F) - SHIFT_F
    r = ((theta - k * PIO2_1_F) - k * PIO2_2_F) - k * PIO2_3_F
    z = r * r
    s = r + r * z * (S1_F + z * (S2_F + z * S3_F))
    c = (ONE_F - HALF_F * z) + z * z * (C1_F + z * (C2_F + z * C3_F))
    quadrant = int(k) & 3
    odd = (quadrant & 1) == 1
    sin_theta = c if odd else s
    cos_theta = s if odd else c
    sin_theta = -sin_theta if quadrant >= 2 else sin_theta
    cos_theta = -cos_theta if quadrant == 1 or quadrant == 2 else cos_theta
    return cos_theta, sin_theta
