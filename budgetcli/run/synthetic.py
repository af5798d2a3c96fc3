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

`noisy_toy`: the Tighter Budget Perceptron paper's noisy 2-D toy (Weston, Bordes, Bottou 2005,
§4.1, Fig. 7: "a simple 2D problem with Gaussian noise in one dimension").  The paper gives no
numbers, so we choose them: the separable set of its Fig. 6 has x₂ ~ U[−1, 1] and
x₁ = y·(m + U[0, 1]) with a small margin m = 0.05 around the Bayes rule x₁ = 0; the noisy set adds
N(0, σ²) to x₁ only (σ = 0.3), so the classes overlap and the Bayes error is
E_u[Φ(−(m + u)/σ)] (`noisy_toy_bayes_error`).

`dogma_demo`: the 2-D set of the demo of DOGMA, the MATLAB toolbox that ran the Projectron paper's
experiments: x ~ N(0, I₂), labels sign(w·x) of a random hyperplane w ~ N(0, I₂) through the origin,
then exactly ⌊n/10⌋ labels (chosen at random) flipped.  The demo trains on the first half and tests
on the second.

`shifting_stream`: a drifting stream standing in for the shifting RCV1 data sets of Cavallanti,
Cesa-Bianchi, Gentile (MLJ 2007, §4), which are not available.  As there, a pool of four target
concepts (the four categories) labels k + 1 consecutive equal chunks: chunk i uses concept
perm[i mod 4] of one random permutation of the pool, so 1 shift uses two distinct concepts,
3 shifts a permutation of the four, 7 shifts that permutation twice (the repetition behind the
paper's "bump", §4).  A concept is a random hyperplane through the origin, x is uniform on the unit
sphere of ℝ^d (like the paper's normalised TF-IDF vectors), and each label is flipped with
probability `flip` (RCV1 is noisy).  `shifting_targets` returns the concept of every example.

Regression streams (real targets, for `--task regression`):

`friedman1`: Friedman's benchmark #1 ("Multivariate adaptive regression splines", Annals of
Statistics 19(1), 1991, §4.3; scikit-learn's make_friedman1): x uniform on [0, 1]¹⁰, y = 10 sin(π x₁x₂)
+ 20 (x₃ − ½)² + 10 x₄ + 5 x₅ + N(0, 1); x₆..x₁₀ do not enter y.

`sinc`: the sinc of the Kernel Adaptive Filtering Toolbox's demo (KAFBOX, demo_sinc.m): x ~ N(0, 1),
y = sin(πx)/(πx) + noise at a signal-to-noise ratio of 20 dB.  KAFBOX scales the noise by the sample's
variance of the clean targets; we use the exact variance of sinc(x) for x ~ N(0, 1) (SINC_VARIANCE), so
that files of any length and seed have the same noise.

`mackey-glass`: the Mackey–Glass series with delay τ = 30 (dx/dt = 0.2 x(t − τ)/(1 + x(t − τ)¹⁰) −
0.1 x(t), the equation of KAFBOX's mg30.dat), integrated with step 0.1 by the exponential Euler rule
(the linear part exactly, the delayed term held over the step), sampled every 6 time units, from the
constant history 0.89 (mg30.dat's first value; seed s > 0 draws a constant history in [0.5, 1.3]).  A
line is a one-step prediction as docs/USAGE.md makes one from a column: the target is the next value,
the features the 10 values before it, most recent first, the missing lags of the first lines zero
(KAFBOX pads its first rows so).  Our integration is not KAFBOX's (which its data file does not say), so
the series is not mg30.dat's, but of the same kind.

`channel-switch`: KAFBOX's nonlinear channel whose linear part switches (generate_channel_switch.m, after
Van Vaerenbergh, Vía, Santamaría, ICASSP 2006, §4): a Wiener system, an input x ~ N(0, 1) through a
linear channel of length 5, h = (1, h₂, .., h₅) with h₂..h₅ ~ N(0, 1), then tanh, plus output noise at
20 dB (of the sample variance of the clean outputs, KAFBOX's); the channel is drawn anew (a second h)
after the first third of the stream (KAFBOX's 500 of 1,500).  A line's features are the last 5 inputs,
most recent first.  `channel_switch(n, seed, clean=True)` gives the outputs without the noise and the
two channels.

A novelty stream (for `--task novelty`, whose learning ignores the labels; `eval --normal-label 1`):

`novelty-mixture`: the stream of issue #49's timing target, a mixture of a normal and a novel component:
with probability 0.99 a normal example x ~ N(0, I₃) (label +1), with probability 0.01 a novel one,
uniform on the cube [−6, 6]³ (label −1), which lies mostly where the normal density is negligible
(‖x‖ > 4 for 96% of it).  Each example is drawn independently, so any two files of different seeds are a
stream and its held-out part.
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
    return (X - mean) / np.sqrt(second - mean**2), y.astype(float)


NOISY_TOY_MARGIN = 0.05


def noisy_toy(n: int, seed: int = 0, noise: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """(X of shape (n, 2), y in {−1, +1}); noise = σ of the Gaussian added to x₁ (0: separable)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    x1 = y * (NOISY_TOY_MARGIN + rng.random(n)) + noise * rng.standard_normal(n)
    x2 = rng.uniform(-1.0, 1.0, n)
    return np.column_stack([x1, x2]), y


def noisy_toy_bayes_error(noise: float = 0.3, grid: int = 100_001) -> float:
    """Error of the Bayes rule sign(x₁) on `noisy_toy`: E_u[Φ(−(m + u)/σ)], u ~ U[0, 1]."""
    from math import erf, sqrt

    if noise == 0:
        return 0.0
    u = np.linspace(0.0, 1.0, grid)
    phi = 0.5 * (1 + np.vectorize(erf)(-(NOISY_TOY_MARGIN + u) / (noise * sqrt(2))))
    return float(np.trapezoid(phi, u) if hasattr(np, "trapezoid") else np.trapz(phi, u))


def _dogma_demo(n: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    w = rng.standard_normal(2)
    y = np.where(X @ w > 0, 1.0, -1.0)
    flipped = rng.permutation(n)[: n // 10]
    y[flipped] = -y[flipped]
    return X, y, w


def dogma_demo(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(X of shape (n, 2), y in {−1, +1}) with exactly ⌊n/10⌋ labels flipped from sign(w·x)."""
    X, y, _ = _dogma_demo(n, seed)
    return X, y


def dogma_demo_hyperplane(n: int, seed: int = 0) -> np.ndarray:
    """The hyperplane w of the set `dogma_demo(n, seed)` draws."""
    return _dogma_demo(n, seed)[2]


SHIFTING_CONCEPTS = 4  # the paper's four RCV1 target categories


def _shifting(n: int, shifts: int, seed: int, d: int, flip: float):
    rng = np.random.default_rng(seed)
    normals = rng.standard_normal((SHIFTING_CONCEPTS, d))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    order = rng.permutation(SHIFTING_CONCEPTS)
    chunk = np.minimum(np.arange(n) * (shifts + 1) // n, shifts)  # chunk number of each example
    concept = order[chunk % SHIFTING_CONCEPTS]
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(np.einsum("ij,ij->i", X, normals[concept]) > 0, 1.0, -1.0)
    flipped = rng.random(n) < flip
    y[flipped] = -y[flipped]
    return X, y, concept, normals


def shifting_stream(
    n: int, shifts: int = 7, seed: int = 0, d: int = 20, flip: float = 0.05
) -> tuple[np.ndarray, np.ndarray]:
    """(X of shape (n, d), y in {−1, +1}) with `shifts` changes of the target concept."""
    if not 0 <= shifts < n:
        raise ValueError(
            f"{shifts} shifts need at least {shifts + 1} examples (one per chunk), got {n}"
            if shifts >= n
            else f"the number of shifts must be ≥ 0, got {shifts}"
        )
    X, y, _, _ = _shifting(n, shifts, seed, d, flip)
    return X, y


def shifting_targets(
    n: int, shifts: int = 7, seed: int = 0, d: int = 20, flip: float = 0.05
) -> tuple[np.ndarray, np.ndarray]:
    """For the stream `shifting_stream` draws with the same arguments: (concept index of each
    example, the concepts' unit normals as rows)."""
    _, _, concept, normals = _shifting(n, shifts, seed, d, flip)
    return concept, normals


def _shifting_with(shifts: int):
    def generate(n: int, seed: int = 0):
        return shifting_stream(n, shifts, seed)

    generate.__doc__ = f"shifting_stream with {shifts} shifts"
    return generate


SINC_VARIANCE = 0.18966115742530987  # Var sinc(x), x ~ N(0, 1): Gauss–Hermite quadrature, 200 nodes


def friedman1(n: int, seed: int = 0, noise: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(X of shape (n, 10), real y)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 10))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    return X, y + noise * rng.standard_normal(n)


def sinc(n: int, seed: int = 0, snr_db: float = 20.0) -> tuple[np.ndarray, np.ndarray]:
    """(X of shape (n, 1), real y)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    noise = rng.standard_normal(n) * np.sqrt(10 ** (-snr_db / 10) * SINC_VARIANCE)
    return x[:, None], np.sinc(x) + noise


MG_STEP, MG_SAMPLE, MG_DELAY, MG_LAGS = 0.1, 60, 300, 10  # step 0.1; a sample every 6 and τ = 30 time units


def mackey_glass_series(samples: int, seed: int = 0) -> np.ndarray:
    """The series' first `samples` values (the module's docstring).  Over the τ/step = 300 steps after t
    the delayed term is known, so the steps x ← a x + β g(x(t − τ)) are solved 300 at a time:
    x_{t+k+1} = a^(k+1) (x_t + β Σ_{j≤k} a^(−j−1) g_j)."""
    rng = np.random.default_rng(seed)
    start = 0.89 if seed == 0 else rng.uniform(0.5, 1.3)
    steps = (samples - 1) * MG_SAMPLE
    blocks = -(-steps // MG_DELAY)
    x = np.empty(MG_DELAY * (blocks + 1) + 1)
    x[: MG_DELAY + 1] = start
    a = np.exp(-0.1 * MG_STEP)
    beta = (1 - a) / 0.1
    k = np.arange(1, MG_DELAY + 1)
    for b in range(blocks):
        t = MG_DELAY * (b + 1)
        delayed = x[t - MG_DELAY : t]
        g = 0.2 * delayed / (1 + delayed**10)
        x[t + 1 : t + MG_DELAY + 1] = a**k * (x[t] + beta * np.cumsum(a ** (-k) * g))
    return x[MG_DELAY : MG_DELAY + steps + 1 : MG_SAMPLE]


def mackey_glass(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(X of shape (n, 10): the 10 values before each target, most recent first, zero before the
    series' start; y: the series' values 2..n+1)."""
    s = mackey_glass_series(n + 1, seed)
    X = np.zeros((n, MG_LAGS))
    for lag in range(min(MG_LAGS, n)):
        X[lag:, lag] = s[: n - lag]
    return X, s[1:]


def channel_switch(n: int, seed: int = 0, snr_db: float = 20.0, length: int = 5, clean: bool = False):
    """(X of shape (n, length), real y); with clean=True (X, the outputs without noise, the two channels
    as rows)."""
    rng = np.random.default_rng(seed)
    channels = np.hstack([np.ones((2, 1)), rng.standard_normal((2, length - 1))])
    inputs = rng.standard_normal(n + length - 1)
    X = np.lib.stride_tricks.sliding_window_view(inputs, length)[:, ::-1].copy()  # row t: x_t, x_{t−1}, ...
    first = n // 3
    y = np.tanh(np.concatenate([X[:first] @ channels[0], X[first:] @ channels[1]]))
    if clean:
        return X, y, channels
    return X, y + rng.standard_normal(n) * np.sqrt(10 ** (-snr_db / 10) * y.var())


NOVELTY_FRACTION, NOVELTY_CUBE = 0.01, 6.0


def novelty_mixture(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(X of shape (n, 3), y: +1 normal, −1 novel), the module's docstring."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    novel = rng.random(n) < NOVELTY_FRACTION
    X[novel] = rng.uniform(-NOVELTY_CUBE, NOVELTY_CUBE, (int(novel.sum()), 3))
    return X, np.where(novel, -1.0, 1.0)


REGRESSION_STREAMS = ("friedman1", "sinc", "mackey-glass", "channel-switch")  # real targets: --task regression

GENERATORS = {
    "projectron-gaussians": projectron_gaussians,
    "checkerboard": checkerboard,
    "waveform": waveform,
    "noisy-toy": noisy_toy,
    "dogma-demo": dogma_demo,
    **{f"shifting-{k}": _shifting_with(k) for k in (0, 1, 3, 7)},
    "friedman1": friedman1,
    "sinc": sinc,
    "mackey-glass": mackey_glass,
    "channel-switch": channel_switch,
    "novelty-mixture": novelty_mixture,
}
