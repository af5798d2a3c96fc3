"""Fourier online gradient descent, `fogd` (Lu, Hoi, Wang, Zhao, Liu, "Large Scale Online Kernel
Learning", JMLR 17, 2016, §4; LIBOKL's `kernel-fogd`): kernel OGD on the hinge loss, run in a random
Fourier feature space of the Gaussian kernel instead of on a support set.

The map.  By Bochner's theorem k(x, x') = exp(−γ‖x − x'‖²) = E_ω[cos ωᵀ(x − x')] with ω ~ N(0, 2γI).
With D draws ω_1 … ω_D,

    z(x) = D^(−1/2) [cos ω_1ᵀx, …, cos ω_Dᵀx, sin ω_1ᵀx, …, sin ω_Dᵀx] ∈ R^(2D),

z(x)ᵀz(x') = (1/D) Σ_i cos ω_iᵀ(x − x') ≈ k(x, x'), and ‖z(x)‖² = 1 = k(x, x).  The learner is online
gradient descent on w: w_1 = 0, f_t(x) = w_tᵀz(x), and on a margin error y_t f_t(x_t) < 1,
w ← w + η_t y_t z(x_t).  A round costs O(nnz(x)·D), whatever the number of rounds: the model is 2D
numbers, not a support set.

The map is the seed and D.  ω_i's coordinate for input feature j is a pure function of (seed, j, i) (a
counter-based draw: splitmix64's mixing function of the three, then Box–Muller), so a model file holds w
and its running sums and never Ω: another process regenerates the same Ω (another machine too, as far as
its numpy rounds float64 log and cos as this one's: they are the only inexact steps), and neither chunk
boundaries, resuming, nor the order in which features first appear change it.  Ω's rows are made for the
features seen, in a table of feature indices (`FourierMap`): memory is D × the features seen, not D × the
largest index (hashed indices up to 2³¹ − 1 work).  Only learning adds to it: a feature first met in
prediction gets its rows for that chunk alone (`FourierMap.for_scoring`), so scoring an endless stream
neither grows the map nor changes the model.

`fogd-regression` is the same map and loop on the regression task (§3's losses): a round steps
w += η_t (−∂ℓ/∂f) z(x_t), ℓ the squared loss ½(y − f)² (−∂ℓ/∂f = e = y − f, every round), the
ε-insensitive loss max(0, |e| − ε) (sign e when |e| > ε) or `squared-outside-tube`, the authors' released
regression code (e when |e| > ε: their ε = 0.1, our --tube's default) (lms.LOSS).

Choices where the sources leave room:
- The map is scaled by D^(−1/2), so that ‖z‖² = k(x, x) = 1 and η means what kernel OGD's does (a
  margin error moves f(x_t) by η).  LIBOKL and the JMLR authors' code leave z unscaled, so their η is
  ours divided by D: LIBOKL's `-eta 0.001 -D 400` is `--learning-rate 0.4 -D 400` here, or
  `--map-scale unscaled --learning-rate 0.001`, their map itself (files written before the option
  are normalised).  The default η = 0.5 on the normalised map stays: with our default γ (1/#features)
  it is ahead of LIBOKL's defaults (η = 0.5 unscaled, γ = 0.01) on every shared binary set, online and
  on held-out data (docs/BENCHMARK.md, "FOGD's step against LIBOKL"); at LIBOKL's γ no constant step
  catches LIBOKL on banana and heart_scale, where its features (a parabolic sine and sign(θ)|cos θ|)
  are another kernel than the Gaussian one.
- `--map-arithmetic vectorised`: cos and sin to within 2⁻⁵³ (trig.py: fdlibm's polynomials, vectorised,
  the same on every machine), and wᵀz summed in four interleaved lanes in a fixed order (`dot`), faster
  on long streams than libm's cos and sin and an ordered sum (`scalar`, what files written
  before it hold, so that they score and resume bit for bit).  `single`: Ω, x, θ = Ωᵀx, cos and sin in
  float32 with Cephes' short polynomials (trig.single_cos_sin: within 1e-7 of the exact cos and sin of
  the float32 θ), the features rounded to float32 and held as float64, the score the sum of the
  pairs w_i z_i + w_(D+i) z_(D+i) in four lanes (`dot`); the same bits on every machine too, and faster
  than the vectorised map again.  The map is a Monte Carlo estimate of the
  kernel whose error is of order D^(−1/2) (5% at D = 400), so features within 1e-7 change no accuracy
  (bench/fogd_arithmetic.py measures it).  LIBOKL approximates them too (a parabolic sine, and
  sign(θ)·|cos θ| for the cosine, which is not a Gaussian kernel's feature) and draws Ω from the clock,
  lazily in data order; we do not.
- The update is strict, y f < 1, and a zero score is a mistake, as kernel OGD's (kernel_ogd.py).
- The Gaussian kernel only (the map is its); another kernel is refused.
- The averaged hypothesis is (1/T) Σ_t w_(t+1), the weights after each of the T rounds, kept exactly by
  running sums as the support-set learners' are (learner.touch).
- Example weights (`train -w LABEL W`, a sample weight): an example of weight ω has the loss
  ω·max(0, 1 − y f), so its gradient step is ω times OGD's (§4): w += η_t ω y_t z(x_t) (mc-fogd: the rows
  y and r move by ±η_t ω z(x_t)), as kernel OGD's (kernel_ogd.py); fogd-regression's is ω times its loss's.
- fogd-regression: the squared loss is taken as ½(y − f)², so that its step is η e as the LMS filters'
  (a step on ℓ = (y − f)² with η is ours with 2η); the ε-insensitive loss's subgradient on the tube's edge is 0; it
  writes the last hypothesis by default, as the filters do (measured: lms.Regressor).
"""

from __future__ import annotations

import math

import numpy as np

from ...base import bounds
from .. import statecheck
from ...numerics._jit import njit
from ...base.core import unique
from ..featuremap import FeatureMapLearner, WeightMixing
from ..multiclass import rival, give_class_answers
from ...base.params import Param, choice
from ..records import (
    EXAMPLES,
    ExampleOverflow,
    Overflow,
    ScoreOverflow,
    TooLarge,
    example_weight,
    give_answer,
    hinge_round,
    loop_arrays,
)
from ...base.registry import register
from ...numerics.rng import MIX1, MIX2, seed_state
from ...numerics.support import dense_dots
from ...numerics.trig import TRIG_LIMIT, TRIG_LIMIT_SINGLE, cos_sin, reduced_cos_sin, single_cos_sin
from .kernel_ogd import CONSTANT, LEARNING_RATE, RATE_SCHEDULE
from .lms import CLASSIFYING, LOSS, NORMA_LAMBDA, TUBE, REGRESSING, RegressionMixing, Regressor, gradient_round
from .novelty import NU, RHO_FIT, NoveltyDetector, NoveltyMixing, threshold_round
from ..task import RHO

MAX_COMPONENTS = 1 << 20  # D: w and its sums are 2D numbers each, Ω D per feature seen
COMPONENTS = Param(
    "components",
    int,
    400,
    "D: random Fourier components of FOGD's feature map (2D features; LIBOKL's -D)",
    check=lambda v: 1 <= v <= MAX_COMPONENTS,
    requirement=f"an integer in [1, {MAX_COMPONENTS}]",
    flags=("-D", "--components"),
)

_MASK = (1 << 64) - 1
_FEATURE, _COMPONENT, _SECOND = 0xD1B54A32D192ED03, 0x8CB92BA72F3D8DD7, 0x632BE59BD9B4E019


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's output function (rng.next_u64's) on uint64 arrays (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * MIX1
    z = (z ^ (z >> np.uint64(27))) * MIX2
    return z ^ (z >> np.uint64(31))


def omega_rows(seed: int, features: np.ndarray, components: int, gamma: float) -> np.ndarray:
    """Ω's rows for these input features: ω_i's coordinate j ~ N(0, 2γ), a function of (seed, j, i) only."""
    base = np.uint64(int(seed_state(seed)[0]))
    j = np.asarray(features, np.uint64)[:, None]
    i = np.arange(components, dtype=np.uint64)[None, :]
    key = base + j * np.uint64(_FEATURE) + (i + np.uint64(1)) * np.uint64(_COMPONENT)
    u1 = ((_mix(key) >> np.uint64(11)).astype(np.float64) + 1.0) * 2.0**-53  # (0, 1]
    u2 = (_mix(key ^ np.uint64(_SECOND)) >> np.uint64(11)).astype(np.float64) * 2.0**-53  # [0, 1)
    return math.sqrt(2.0 * gamma) * np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * math.pi * u2)


VECTORISED, SCALAR, SINGLE = 0, 1, 2  # MAP_ARITHMETIC's codes
MAP_ARITHMETIC = choice(
    "map_arithmetic",
    ("vectorised", "scalar", "single"),
    "single",
    "FOGD's map: single (Ω·x, cos and sin in float32 with short polynomials, error below 1e-7 a feature; the "
    "fastest), vectorised (float64, fdlibm's polynomials, error at most 2^-53, score summed in four lanes; the "
    "default of files written before single) or scalar (libm's cos and sin, score summed in order: the "
    "arithmetic of files written before the vectorised map)",
)
NORMALISED, UNSCALED = 0, 1  # MAP_SCALE's codes
MAP_SCALE = choice(
    "map_scale",
    ("normalised", "unscaled"),
    "normalised",
    "FOGD's features: normalised (divided by √D, so ‖z‖² = 1 = k(x, x) and η means kernel OGD's) or unscaled "
    "(|z_i| ≤ 1, ‖z‖² = D, as LIBOKL and the JMLR authors' code: their -eta is --learning-rate here)",
)
NO_OMEGA, NO_SINGLE_OMEGA, NO_SINGLE = np.zeros((0, 0)), np.zeros((0, 0), np.float32), np.zeros(0, np.float32)
# a direct table of rows for the indices below max(DIRECT_INDICES, DIRECT_PER_FEATURE × features seen):
# 8 bytes an entry, so at most the larger of 512 KB and 64 bytes per feature seen (Ω's row is 8D bytes)
DIRECT_INDICES = 1 << 16
DIRECT_PER_FEATURE = 8


def single_values(values: np.ndarray) -> np.ndarray:
    """x's values rounded to float32 for the single map; one past float32's range becomes ±inf, and the loop
    then reports its example as one whose θ is not finite."""
    with np.errstate(over="ignore"):
        return values.astype(np.float32)


class FourierMap:
    """Ω for the features seen: `keys` (sorted feature indices) → `where` (their rows of `omega`), and
    `direct`, the row of every index below its length (−1: not seen), which spares a chunk of small
    indices the sort that searching `keys` needs.  `omega` holds the draws as `dtype` (float32 for
    --map-arithmetic single: each the float64 draw rounded once)."""

    def __init__(self, seed: int, components: int, gamma: float, dtype=np.float64):
        self.seed, self.components, self.gamma = seed, components, gamma
        self.keys = np.zeros(0, np.int64)
        self.where = np.zeros(0, np.int64)
        self.direct = np.zeros(0, np.int64)
        self.omega = np.zeros((0, components), dtype)

    def rows_of(self, indices: np.ndarray) -> np.ndarray:
        """The row of Ω for each of these feature indices, made for the features not seen before."""
        if len(indices) == 0:
            return np.zeros(0, np.int64)
        top, cap = int(indices.max()), max(DIRECT_INDICES, DIRECT_PER_FEATURE * len(self.keys))
        if len(self.direct) <= top < cap:  # small indices: looked up in the direct table, not searched
            self._widen(top + 1, cap)
        rows = self.lookup(indices)
        if rows.min() < 0:
            self._add(unique(indices[rows < 0]))
            rows = self.lookup(indices)
        return rows

    def lookup(self, indices: np.ndarray) -> np.ndarray:
        """The row of Ω of each of these feature indices, −1 for a feature not seen (nothing is added)."""
        if len(indices) == 0 or len(self.keys) == 0:
            return np.full(len(indices), -1, np.int64)
        if int(indices.max()) < len(self.direct):
            return self.direct[indices]
        pos = np.minimum(np.searchsorted(self.keys, indices), len(self.keys) - 1)
        return np.where(self.keys[pos] == indices, self.where[pos], -1)

    def for_scoring(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Ω', rows): what a chunk whose non-zeros have these feature indices is scored with.  Ω itself
        when every feature was seen in learning; otherwise the rows this chunk uses, those of unseen
        features made for it alone (the same draws `_add` would keep), so that prediction neither grows
        the map (memory bounded by what was learned) nor changes the model it reads."""
        rows = self.lookup(indices)
        if len(rows) == 0 or rows.min() >= 0:
            return self.omega, rows
        distinct, inverse = unique(indices, return_inverse=True)
        known = self.lookup(distinct)
        omega = np.empty((len(distinct), self.components), self.omega.dtype)
        seen = known >= 0
        omega[seen] = self.omega[known[seen]]
        omega[~seen] = omega_rows(self.seed, distinct[~seen], self.components, self.gamma)
        return omega, inverse.astype(np.int64)

    def _add(self, new: np.ndarray) -> None:
        """Ω's rows for these features, not seen before (sorted, distinct)."""
        if not len(new):
            return
        n = len(self.keys)
        if n + len(new) > self.omega.shape[0]:
            grown = np.zeros((max(n + len(new), 2 * self.omega.shape[0]), self.components), self.omega.dtype)
            grown[:n] = self.omega[:n]
            self.omega = grown
        self.omega[n : n + len(new)] = omega_rows(self.seed, new, self.components, self.gamma)
        keys = np.concatenate([self.keys, new.astype(np.int64)])
        order = np.argsort(keys, kind="stable")
        self.keys, self.where = keys[order], np.concatenate([self.where, np.arange(n, n + len(new))])[order]
        small = new < len(self.direct)
        self.direct[new[small]] = np.arange(n, n + len(new))[small]

    def _widen(self, length: int, cap: int) -> None:
        """The direct table over indices 0 .. length − 1 at least, up to `cap` (doubling, so that widening
        is rare)."""
        direct = np.full(min(max(length, 2 * len(self.direct)), cap), -1, np.int64)
        small = self.keys < len(direct)
        direct[self.keys[small]] = self.where[small]
        self.direct = direct


@njit(cache=True, inline="always")
def features(omega, single, rowmap, values, lo, hi, z, arithmetic, scale):
    """z = z(x) for the example whose non-zeros are lo..hi of the chunk (rowmap: their rows of Ω, `omega`
    or, for the single arithmetic, `single`'s); False when a θ = ω_iᵀx is not finite (a feature value too
    large: z then holds NaN, and so will a score)."""
    d = z.shape[0] // 2
    if arithmetic == SINGLE:
        return single_features(single, rowmap, lo, hi, z, scale)
    dense_dots(omega, rowmap[lo:hi], values[lo:hi], d, z)  # θ = Ωᵀx, Ω's rows as a dense copy's features
    norm = 1.0 / math.sqrt(d) if scale == NORMALISED else 1.0
    if arithmetic == VECTORISED:
        outside = 0
        for i in range(d):
            outside += 0 if abs(z[i]) <= TRIG_LIMIT else 1
        if outside == 0:  # the common case, four lanes at a time
            for i in range(d):
                c, s = reduced_cos_sin(z[i])
                z[i] = norm * c
                z[d + i] = norm * s
            return True
    finite = True
    for i in range(d):
        theta = z[i]
        finite = finite and math.isfinite(theta)
        c, s = cos_sin(theta) if arithmetic == VECTORISED else (math.cos(theta), math.sin(theta))
        z[i] = norm * c
        z[d + i] = norm * s
    return finite


@njit(cache=True, inline="always")
def single_features(single, rowmap, lo, hi, z, scale):
    """`features` in float32 (--map-arithmetic single), from `single` = (Ω, the chunk's values, θ) in
    float32 (Ω's draws and x's values each rounded once; θ a work array): θ = Ωᵀx in float32, cos and
    sin by trig.single_cos_sin, each feature the float32 product of one and the scale; z holds them as
    float64 (exactly), for the score and the update as the other arithmetics'."""
    d = z.shape[0] // 2
    omega, values, theta = single
    dense_dots(omega, rowmap[lo:hi], values[lo:hi], d, theta)
    norm = np.float32(1.0 / math.sqrt(d) if scale == NORMALISED else 1.0)
    outside = 0
    for i in range(d):
        outside += 0 if abs(theta[i]) <= TRIG_LIMIT_SINGLE else 1
    cos_part, sin_part = z[:d], z[d:]  # two views: stores to one array at i and d + i keep the loop scalar
    if outside == 0:  # the common case, eight or sixteen lanes at a time
        for i in range(d):
            c, s = single_cos_sin(theta[i])
            cos_part[i] = norm * c
            sin_part[i] = norm * s
        return True
    finite = True
    for i in range(d):
        t = theta[i]
        finite = finite and math.isfinite(t)
        if abs(t) <= TRIG_LIMIT_SINGLE:
            c, s = single_cos_sin(t)
        else:  # beyond the float32 reduction: the float64 cos and sin of the float32 θ, rounded
            c64, s64 = cos_sin(np.float64(t))
            c, s = np.float32(c64), np.float32(s64)
        cos_part[i] = norm * c
        sin_part[i] = norm * s
    return finite


@njit(cache=True, inline="always")
def dot(w, z, arithmetic, pairs):
    """wᵀz.  VECTORISED: summed in four interleaved lanes, (s₀ + s₁) + (s₂ + s₃), then the tail in order, a
    fixed order (the same result on every machine); SCALAR: summed in order; SINGLE: the pairs
    w_i z_i + w_(D+i) z_(D+i) of the cos and the sin of each component made at once (into `pairs`, a
    loop the compiler vectorises), then summed as `lane_sum` sums them."""
    n = z.shape[0]
    if arithmetic == SINGLE:
        d = n // 2
        w_cos, w_sin, z_cos, z_sin = w[:d], w[d:], z[:d], z[d:]  # views, as in single_features
        for i in range(d):
            pairs[i] = w_cos[i] * z_cos[i] + w_sin[i] * z_sin[i]
        return lane_sum(pairs, d)
    if arithmetic == SCALAR:
        s = 0.0
        for i in range(n):
            s += w[i] * z[i]
        return s
    body = n - n % 4
    s0 = s1 = s2 = s3 = 0.0
    for i in range(0, body, 4):
        s0 += w[i] * z[i]
        s1 += w[i + 1] * z[i + 1]
        s2 += w[i + 2] * z[i + 2]
        s3 += w[i + 3] * z[i + 3]
    s = (s0 + s1) + (s2 + s3)
    for i in range(body, n):
        s += w[i] * z[i]
    return s


@njit(cache=True, inline="always")
def lane_sum(p, n):
    """Σ_{i<n} p_i in four interleaved lanes, (s₀ + s₁) + (s₂ + s₃), then the tail in order."""
    body = n - n % 4
    s0 = s1 = s2 = s3 = 0.0
    for i in range(0, body, 4):
        s0 += p[i]
        s1 += p[i + 1]
        s2 += p[i + 2]
        s3 += p[i + 3]
    s = (s0 + s1) + (s2 + s3)
    for i in range(body, n):
        s += p[i]
    return s


@njit(cache=True)
def fogd_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    w, w_sum, stamp, omega, rowmap, z = st.fourier_w, st.fourier_sum, st.fourier_stamp, st.omega, st.rowmap, st.z
    single = (st.omega_single, st.values_single, st.theta_single)
    arithmetic, scale, pairs, weights, answers = h.map_arithmetic, h.map_scale, st.pairs, rows.weight, rows.answers
    for t in range(start, y.shape[0]):
        if not features(omega, single, rowmap, values, indptr[t], indptr[t + 1], z, arithmetic, scale):
            raise ExampleOverflow
        f = dot(w, z, arithmetic, pairs)
        if not math.isfinite(f):
            raise ScoreOverflow
        give_answer(answers, t, f)
        counters[EXAMPLES] += 1
        rnd = counters[EXAMPLES]
        g = gradient_round(counters, book.scalars, h, y[t], f)  # y_t on a margin error; fogd-regression's loss
        if g == 0.0:
            continue
        rate = h.learning_rate if h.rate_schedule == CONSTANT else h.learning_rate / rnd**0.5
        step = rate * g * example_weight(weights, t)
        for i in range(z.shape[0]):  # w held its value in f_stamp .. f_{rnd−1} (learner.touch)
            w_sum[i] += w[i] * (rnd - stamp[0])
            w[i] += step * z[i]
        stamp[0] = rnd
    return y.shape[0]


@njit(cache=True)
def fourier_scores(omega, single, rowmap, indptr, values, w, z, pairs, arithmetic, scale, out):
    for t in range(out.shape[0]):
        features(omega, single, rowmap, values, indptr[t], indptr[t + 1], z, arithmetic, scale)
        out[t] = dot(w, z, arithmetic, pairs)


@register
class FourierOGD(FeatureMapLearner):
    name = "fogd"
    summary = "Fourier OGD: kernel OGD on D random Fourier features of the Gaussian kernel; 2D numbers, no support set"
    paper = "Lu, Hoi, Wang, Zhao, Liu, JMLR 17, 2016, §4 (FOGD); LIBOKL kernel-fogd"
    params = (COMPONENTS, LEARNING_RATE, RATE_SCHEDULE, MAP_ARITHMETIC, MAP_SCALE)
    loop = fogd_range
    constants = CLASSIFYING
    # sharded: every shard makes the map from the run's seed, so a mix is the plain average of w
    # (featuremap.WeightMixing), with nothing to compress back
    FOURIER = ("fourier_w", "fourier_sum")
    weighting = "the loss w·max(0, 1 − y f): a margin error's step is η_t w y z(x)"
    feature_map = "random Fourier features"

    def __init__(self, kernel, seed: int = 0, **params):
        super().__init__(kernel, seed=seed, **params)
        d = 2 * self.hyper["components"]
        self.fourier = {"fourier_w": np.zeros(d), "fourier_sum": np.zeros(d), "fourier_stamp": np.ones(1)}
        single = self.hyper["map_arithmetic"] == "single"
        self.map = FourierMap(self.seed, self.hyper["components"], kernel.gamma, np.float32 if single else np.float64)
        self._z = np.zeros(d)
        self._theta = np.zeros(d // 2 if single else 0, np.float32)  # θ of the single arithmetic
        self._pairs = np.zeros(d // 2 if single else 0)  # the single arithmetic's pairs of terms of a score
        self._values = NO_SINGLE  # the chunk's values in float32, for the single arithmetic
        self._rowmap = np.zeros(0, np.int64)

    @classmethod
    def check_kernel(cls, kernel_kind, params):
        if kernel_kind != "rbf":
            raise ValueError(f"{cls.name} approximates the Gaussian kernel: it takes --kernel rbf, not {kernel_kind}")

    def _state_arrays(self) -> dict:
        omega, (omega_single, values_single, theta_single) = self._map_args(self.map.omega, self._values)
        return self.fourier | {
            "omega": omega,
            "omega_single": omega_single,
            "values_single": values_single,
            "theta_single": theta_single,
            "rowmap": self._rowmap,
            "z": self._z,
            "pairs": self._pairs,
        }

    def _map_args(self, omega: np.ndarray, values: np.ndarray) -> tuple:
        """(Ω, (Ω, values, θ)): the map as `features` takes it, float64 first, float32 second (the single
        arithmetic's, with the chunk's values rounded once); the kind the arithmetic does not use empty."""
        if omega.dtype == np.float64:
            return omega, (NO_SINGLE_OMEGA, NO_SINGLE, self._theta)
        return NO_OMEGA, (omega, single_values(values), self._theta)

    def _prepare(self, chunk) -> None:
        """Ω's rows for the chunk's features (made for those not seen before), and its values in float32
        for the single arithmetic."""
        super()._prepare(chunk)
        self._rowmap = self.map.rows_of(chunk.indices)
        if self.map.omega.dtype == np.float32:
            self._values = single_values(chunk.values)

    def decision_function(self, chunk) -> np.ndarray:
        out = np.empty(len(chunk), np.float64)
        omega, rowmap = self.map.for_scoring(chunk.indices)
        omega, single = self._map_args(omega, chunk.values)
        w = self.fourier["fourier_w"]
        fourier_scores(
            omega, single, rowmap, chunk.indptr, chunk.values, w, self._z, self._pairs, *self._arithmetic(), out
        )
        return out

    def _arithmetic(self) -> tuple[int, int]:
        """The map's arithmetic and scale, as the compiled functions take them."""
        return MAP_ARITHMETIC.code(self.hyper["map_arithmetic"]), MAP_SCALE.code(self.hyper["map_scale"])

    @staticmethod
    def _as_written(header: dict) -> dict:
        """A file written before --map-arithmetic holds no such parameter: it was the scalar one."""
        return header | {"params": {"map_arithmetic": "scalar"} | header["params"]}

    def averaged_coefficients(self) -> np.ndarray:
        """(1/T) Σ_t w_(t+1), the weights after each of the T rounds seen."""
        T = self.counter("examples")
        w, s = self.fourier["fourier_w"], self.fourier["fourier_sum"]
        return (s + w * (T + 1 - self.fourier["fourier_stamp"][0])) / max(T, 1)

    def feature_map_weights(self) -> np.ndarray:
        return self.fourier["fourier_w"]

    def set_coefficients(self, coef: np.ndarray) -> None:
        self.fourier["fourier_w"][:] = coef

    def _decisive_arrays(self) -> dict:
        return super()._decisive_arrays() | {name: self.fourier[name] for name in self.FOURIER}

    def _weight_state(self) -> dict:
        return {name: a.copy() for name, a in self.fourier.items()}

    def _restore_weights(self, header: dict, arrays: dict) -> None:
        for name in self.fourier:
            self.fourier[name][:] = arrays[name]

    @classmethod
    def saved_arrays(cls, header: dict, members: dict) -> dict:
        d = header["params"].get("components") if isinstance(header.get("params"), dict) else None
        if not isinstance(d, int) or isinstance(d, bool) or not 1 <= d <= MAX_COMPONENTS:
            raise ValueError(f"params.components must be an integer in [1, {MAX_COMPONENTS}]")
        return super().saved_arrays(header, members) | {
            "fourier_w": ((2 * d,), statecheck.F64),
            "fourier_sum": ((2 * d,), statecheck.F64),
            "fourier_stamp": ((1,), statecheck.F64),
        }

    @classmethod
    def from_state(cls, header: dict, arrays: dict) -> "FourierOGD":
        return super().from_state(cls._as_written(header), arrays)


class FourierRegressionMixing(RegressionMixing, WeightMixing):
    """fogd-regression's mix: its weights averaged as fogd's are (featuremap.WeightMixing: every shard makes the
    map from the run's seed), with the online error sums added up as a regressor's (lms.RegressionMixing)."""


@register
class FourierRegression(Regressor, FourierOGD):
    """fogd on the regression task (JMLR 2016, §3's losses, §4's step): the same map and loop, the step
    η_t (−∂ℓ/∂f) z(x_t) of the squared or ε-insensitive loss (lms.LOSS)."""

    name = "fogd-regression"
    summary = "Fourier OGD for regression: w += η (−∂ℓ/∂f) z(x), squared or ε-insensitive loss; 2D numbers"
    paper = "Lu, Hoi, Wang, Zhao, Liu, JMLR 17, 2016, §3-4 (FOGD, regression)"
    params = FourierOGD.params + (LOSS, TUBE)
    constants = REGRESSING
    mixing = FourierRegressionMixing()
    weighting = "the loss w ℓ(y − f): the step is η_t w (−∂ℓ/∂f) z(x)"


@njit(cache=True)
def fogd_novelty_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    w, w_sum, stamp, omega, rowmap, z = st.fourier_w, st.fourier_sum, st.fourier_stamp, st.omega, st.rowmap, st.z
    single = (st.omega_single, st.values_single, st.theta_single)
    arithmetic, scale, pairs, weights, answers = h.map_arithmetic, h.map_scale, st.pairs, rows.weight, rows.answers
    scalars = book.scalars
    shrink = 1.0 - h.learning_rate * h.norma_lambda
    for t in range(start, y.shape[0]):
        if not features(omega, single, rowmap, values, indptr[t], indptr[t + 1], z, arithmetic, scale):
            raise ExampleOverflow
        f = dot(w, z, arithmetic, pairs)
        if not math.isfinite(f):
            raise ScoreOverflow
        give_answer(answers, t, f - scalars[RHO])
        counters[EXAMPLES] += 1
        rnd = counters[EXAMPLES]
        step = h.learning_rate * example_weight(weights, t)
        flagged = f - scalars[RHO] <= 0.0
        if flagged or shrink != 1.0:
            for i in range(z.shape[0]):  # w held its value in f_stamp .. f_{rnd−1} (learner.touch)
                w_sum[i] += w[i] * (rnd - stamp[0])
                w[i] *= shrink
                if flagged:
                    w[i] += step * z[i]
            stamp[0] = rnd
        threshold_round(counters, scalars, flagged, step, h.nu)
    return y.shape[0]


class FourierNoveltyMixing(NoveltyMixing, WeightMixing):
    """fogd-novelty's mix: its weights averaged as fogd's are (featuremap.WeightMixing: every shard makes the
    map from the run's seed), with ρ, Σρ and the last rounds' examples mixed as a novelty detector's."""


@register
class FourierNovelty(NoveltyDetector, FourierOGD):
    """fogd's one-class form: NORMA's novelty step (novelty.py, Kivinen et al. 2004, §III-B) on the weights
    w of the random Fourier map (the module's docstring), f(x) = wᵀz(x), score f(x) − ρ:

        flagged (f(x_t) − ρ ≤ 0):  w ← (1 − ηλ) w + η z(x_t),  ρ ← ρ − η(1 − ν)
        otherwise:                  w ← (1 − ηλ) w,             ρ ← ρ + ην

    Choices where the papers leave room (besides fogd's map, above, and norma-novelty's, novelty.py, which
    it shares: the flag on g ≤ 0, ρ_1 = 0, the sign of ρ's step, the constant η, the threshold refitted
    on the last rounds' examples, the averaged hypothesis with the mean of the ρ_t):
    - Neither Lu et al. (JMLR 2016) nor Kivinen et al. state a one-class FOGD; it is NORMA's §III-B step
      taken on the map instead of on the kernel expansion, as FOGD takes kernel OGD's (§4): with the
      normalised map, ‖z‖² = 1 = k(x, x), a flagged round moves f(x_t) by η as norma-novelty's does, so η,
      λ and ν mean the same.  There is no truncation: the map is the budget (2D numbers, whatever the
      number of rounds), and the shrink (1 − ηλ)ᵗ forgets as NORMA's truncation bounds it.
    - The shrink is applied to every weight every round, before a flagged x_t is added (the order of
      norma-novelty's loop); ηλ < 1 is required.
    - The step is --learning-rate η, constant (fogd's --rate-schedule is not offered: a constant η is
      what tracks a drifting stream, §III-B's setting).
    - Weights (a sample weight ω): the loss ω·(max(0, ρ − f(x)) − νρ), a step ηω on w and on ρ."""

    name = "fogd-novelty"
    summary = "Fourier novelty detection: NORMA's one-class step on D random Fourier features; ρ tracks ν"
    paper = "Kivinen, Smola, Williamson, IEEE TSP 2004, §III-B on FOGD's map (Lu et al., JMLR 17, 2016, §4)"
    # D = 1600 by measurement (bench/novelty.py --seeds 3, held-out AUC, mean of 3 seeds; ν = 0.1): at fogd's
    # 400, mushrooms 2 was 0.029 below OneClassSVM (0.9185 against 0.9473), at 800 0.024, at 1600 0.003 (0.9443);
    # letter A, O and mushrooms 1 gain (+0.013, +0.005, +0.006), letter E moves by −0.003 (0.8214 → 0.8188, within
    # the seeds' range); on the mixture (--streams mixture --nu 0.01 --seeds 1 --batch-limit 0) 0.9737 → 0.9757, its
    # train + eval 2.75 → 3.53 CPU s (5.77 → 7.13 wall s at load 7-9), still 0.31× Nystroem + SGD's wall time
    params = (COMPONENTS.but(default=1600), LEARNING_RATE, NORMA_LAMBDA.but(default=0.001), NU, RHO_FIT)
    params += (MAP_ARITHMETIC, MAP_SCALE)
    shrunk_steps = ("learning_rate",)
    loop = fogd_novelty_range
    mixing = FourierNoveltyMixing()
    weighting = "the loss w·(max(0, ρ − f(x)) − νρ): the steps η w on w and on ρ"


@njit(cache=True)
def mc_fogd_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    W, W_sum, stamp, omega, rowmap, z, f = (
        st.fourier_w,
        st.fourier_sum,
        st.fourier_stamp,
        st.omega,
        st.rowmap,
        st.z,
        st.scores,
    )
    single = (st.omega_single, st.values_single, st.theta_single)
    arithmetic, scale, pairs, weights, answers = h.map_arithmetic, h.map_scale, st.pairs, rows.weight, rows.answers
    for t in range(start, y.shape[0]):
        if not features(omega, single, rowmap, values, indptr[t], indptr[t + 1], z, arithmetic, scale):
            raise ExampleOverflow
        yt = y[t]
        m = max(st.n_classes[0], yt + 1)  # a new class joins with a zero row
        for i in range(m):
            f[i] = dot(W[i], z, arithmetic, pairs)
            if not math.isfinite(f[i]):
                raise ScoreOverflow
        give_class_answers(answers, y.shape[0], t, f, st.n_classes[0])
        st.n_classes[0] = m
        counters[EXAMPLES] += 1
        rnd = counters[EXAMPLES]
        r = rival(f, m, yt)
        if r < 0 or not hinge_round(counters, f[yt] - f[r]):
            continue
        rate = h.learning_rate if h.rate_schedule == CONSTANT else h.learning_rate / rnd**0.5
        rate *= example_weight(weights, t)
        for i, sign in ((yt, 1.0), (r, -1.0)):  # the rows y and r move by ±η z(x_t)
            for q in range(z.shape[0]):  # row i held its value in f_stamp .. f_{rnd−1} (learner.touch)
                W_sum[i, q] += W[i, q] * (rnd - stamp[i])
                W[i, q] += sign * rate * z[q]
            stamp[i] = rnd
    return y.shape[0]


@njit(cache=True)
def fourier_class_scores(omega, single, rowmap, indptr, values, W, z, pairs, arithmetic, scale, out):
    for t in range(out.shape[0]):
        features(omega, single, rowmap, values, indptr[t], indptr[t + 1], z, arithmetic, scale)
        for i in range(out.shape[1]):
            out[t, i] = dot(W[i], z, arithmetic, pairs)


@register
class MulticlassFourierOGD(FourierOGD):
    """fogd's multiclass form (the JMLR authors' FouGD.m): one weight row per class over the same map,
    f_i(x) = W_iᵀz(x); on the multiclass hinge loss 1 − f_y + f_r > 0 (r the best other class), the rows
    y and r move by ±η z(x).  Classes join as they appear, with a zero row (multiclass.py's convention)."""

    name = "mc-fogd"
    summary = "multiclass Fourier OGD: one weight row per class over D random Fourier features; no support set"
    paper = "Lu, Hoi, Wang, Zhao, Liu, JMLR 17, 2016, §4 (FOGD, multiclass as the authors' FouGD.m)"
    multiclass = True
    weighting = "the loss w ℓ: a margin error moves the rows y and r by ±η_t w z(x)"
    loop = mc_fogd_range

    def __init__(self, kernel, seed: int = 0, **params):
        super().__init__(kernel, seed=seed, **params)
        self._resize_classes(4)
        self.n_classes = np.zeros(1, np.int64)

    def _resize_classes(self, rows: int) -> None:
        """Room for `rows` classes in the weights, their sums and stamps (the known ones kept)."""
        d = 2 * self.hyper["components"]
        if rows * d > bounds.MAX_COEFFICIENTS:
            raise TooLarge(f"{rows:,} classes × {d:,} weights pass the {bounds.MAX_COEFFICIENTS:,} a model may hold")
        old = self.fourier if self.fourier["fourier_w"].ndim == 2 else None
        new = {"fourier_w": np.zeros((rows, d)), "fourier_sum": np.zeros((rows, d)), "fourier_stamp": np.ones(rows)}
        if old is not None:
            k = min(rows, old["fourier_w"].shape[0])
            for name in new:
                new[name][:k] = old[name][:k]
        self.fourier = new
        self._scores = np.zeros(rows)

    def _labels(self, y: np.ndarray, lines: np.ndarray) -> np.ndarray:
        y = np.asarray(y)
        if len(y) and (y.dtype.kind not in "iu" or y.min() < 0):
            raise ValueError(f"{self.name} learns class indices 0, 1, ... (labels.MulticlassLabels.encode)")
        y = y.astype(np.int64)
        if len(y) and y.max() >= self.fourier["fourier_w"].shape[0]:
            try:
                self._resize_classes(max(int(y.max()) + 1, 2 * self.fourier["fourier_w"].shape[0]))
            except TooLarge as exc:
                row = int(np.argmax(y >= self.fourier["fourier_w"].shape[0]))
                raise Overflow(row, int(lines[row]), str(exc)) from None
        return y

    def _state_arrays(self) -> dict:
        return super()._state_arrays() | {"scores": self._scores, "n_classes": self.n_classes}

    def decision_function(self, chunk) -> np.ndarray:
        m = int(self.n_classes[0])
        out = np.zeros((len(chunk), m), np.float64)
        omega, rowmap = self.map.for_scoring(chunk.indices)
        omega, single = self._map_args(omega, chunk.values)
        W = self.fourier["fourier_w"]
        fourier_class_scores(
            omega, single, rowmap, chunk.indptr, chunk.values, W, self._z, self._pairs, *self._arithmetic(), out
        )
        return out

    def feature_map_weights(self) -> np.ndarray:
        return self.fourier["fourier_w"][: int(self.n_classes[0])]

    def averaged_coefficients(self) -> np.ndarray:
        """(1/T) Σ_t W_t over the T rounds seen, a row per known class."""
        m, T = int(self.n_classes[0]), self.counter("examples")
        W, s, stamp = (self.fourier[name][:m] for name in ("fourier_w", "fourier_sum", "fourier_stamp"))
        return (s + W * (T + 1 - stamp)[:, None]) / max(T, 1)

    def set_coefficients(self, coef: np.ndarray) -> None:
        self.fourier["fourier_w"][: len(coef)] = coef

    def state(self) -> tuple[dict, dict]:
        header, arrays = super().state()
        header["n_classes"] = int(self.n_classes[0])
        return header, arrays

    def _weight_state(self) -> dict:
        m = int(self.n_classes[0])
        return {name: a[:m].copy() for name, a in self.fourier.items()}

    def _restore_weights(self, header: dict, arrays: dict) -> None:
        m = int(header["n_classes"])
        self._resize_classes(max(m, 4))
        for name in self.fourier:
            self.fourier[name][:m] = arrays[name]
        self.n_classes[0] = m

    @classmethod
    def saved_arrays(cls, header: dict, members: dict) -> dict:
        out = super().saved_arrays(header, members)
        m = statecheck.header_int(header, "n_classes", 0, statecheck.MAX_CLASSES)
        d = out["fourier_w"][0][0]
        return out | {
            "fourier_w": ((m, d), statecheck.F64),
            "fourier_sum": ((m, d), statecheck.F64),
            "fourier_stamp": ((m,), statecheck.F64),
        }
