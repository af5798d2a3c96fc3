"""The kernel least-mean-square filters, for regression (`--task regression`): KLMS (Liu, Pokharel,
Príncipe, "The kernel least-mean-square algorithm", IEEE Transactions on Signal Processing 56(2), 2008),
quantized KLMS (Chen, Zhao, Zhu, Príncipe, "Quantized kernel least mean square algorithm", IEEE
Transactions on Neural Networks and Learning Systems 23(1), 2012) and NORMA on the squared loss (Kivinen,
Smola, Williamson, "Online learning with kernels", IEEE Transactions on Signal Processing 52(8), 2004,
§III).  Their defaults are those of the Kernel Adaptive Filtering Toolbox (KAFBOX, Van Vaerenbergh), whose
class of the same name each one reproduces (tests/test_lms.py: its mg30 figures).

Every round predicts f_t(x_t), takes the a priori error e_t = y_t − f_t(x_t) and steps against the
gradient of the squared loss ½e²:

- `klms`: x_t joins with coefficient η e_t (f_{t+1} = f_t + η e_t k(x_t, ·)): every example is kept;
- `qklms`: the nearest centre c_j of the codebook (Euclidean distance in input space); if
  ‖x_t − c_j‖ ≤ ε_U its coefficient takes the step, α_j += η e_t (x_t is quantized to c_j), else x_t
  joins with η e_t.  The codebook is an ε_U-cover of the inputs seen: bounded on a bounded input set, but
  the bound grows as (diameter/ε_U)^d with the dimension d, so -B caps it (below);
- `norma`: every coefficient shrinks, α ← (1 − ηλ) α (the gradient of the regulariser λ/2‖f‖²), x_t
  joins with η e_t, and only the last τ terms are kept (the paper's truncation: a term older than τ
  rounds weighs (1 − ηλ)^τ of what it did).

`norma-epsilon` is NORMA on the ε-insensitive loss max(0, |e| − ε) (§III-C): the same shrink, and x_t
joins with η sign(e_t) only when |e_t| > ε; `--norma-loss nu` is its ν form (§III-D), on the loss
max(0, |e| − ε) + νε with ε learnt as well: after each round ε_t grows by η(1 − ν) if |e_t| > ε_t and
shrinks by ην otherwise, so that a fraction ν of the examples fall outside the tube (ε_1 = --tube).

This module also holds the regression losses of the JMLR 2016 learners (fogd-, nogd-, bogd-regression:
`LOSS`, `loss_gradient`), which run their classification loops with −∂ℓ/∂f in place of y_t
(`gradient_round`), and what every regression learner declares (`Regressor`).

Each sums its online errors, Σe_t² and Σ|e_t|, which the train summary reports, and its targets, Σy_t,
whose mean is eval's baseline (task.SQUARED_ERROR, ABSOLUTE_ERROR, TARGET_SUM in `scalars`); `mistakes`
and `margin updates` stay 0 (a regression has none).

Choices where the papers leave room:
- KLMS has no budget in the paper; KAFBOX's M (here -B, default 10000) stops all learning once the
  dictionary holds M centres (no truncation, no update: KAFBOX's klms.m), as the Stoptron stops.
- QKLMS has no budget in the paper nor in KAFBOX: the codebook's size is bounded only through ε_U and
  the input set (Chen et al. §III), which in more than a few dimensions is every example (Friedman #1's
  10 features in [0, 1] at ε_U = 0.1: each of 4,000 examples joins).  -B (default 10000, KLMS's) caps it:
  with B centres every input is quantized to its nearest centre, whatever the distance (ε_U = ∞ from then
  on; QKLMS's update, as KLMS's KAFBOX cap stops the growth).  Below the cap the filter is KAFBOX's (mg30:
  2,160 centres).
- QKLMS: the distance is computed as ‖x‖² + ‖c‖² − 2x·c from the support set's kept norms (KAFBOX
  subtracts directly; on mg30 the codebook is the same, 2,160 centres); a point at distance exactly ε_U
  is merged (≤, KAFBOX's); ties go to the first centre (KAFBOX's min); the first example always joins.
- NORMA: the paper's step takes the error of f_t, before the shrink (f_{t+1} = (1 − ηλ) f_t + η e_t
  k(x_t, ·)); KAFBOX's norma.m shrinks first and takes the error of the shrunk f, y − (1 − ηλ) f_t(x_t).
  `--norma-error before-shrink` (the default) is the paper's, `after-shrink` KAFBOX's (−21.03 dB on mg30
  against −20.92 dB).  The step size is constant (KAFBOX's; its `tcoeff` is declared but unused); the
  truncation drops the oldest term (its slot takes the newcomer); the offset b is not offered.
- norma-epsilon: an example on the tube's edge, |e| = ε, takes no step (the subgradient 0 at the kink, as
  the hinge loss's); the truncation keeps the last τ terms added (the paper drops the terms older than τ
  rounds, the same thing for the squared loss, where every round adds one); the error is of f_t (before
  the shrink); ε_t is not clipped at 0 (below it every example is outside and ε_t grows again); a weight
  scales the step of f, not the tube's.  A sign step moves f(x_t) by at most η k(x_t, x_t): η (and --tube)
  must suit the targets' scale, which the defaults (η = 0.1, ε = 0.1, for targets of order 1) do not on
  cpusmall or Friedman #1 (`python bench/regression.py --defaults`: test R² below 0 there).
- The prediction written and counted is f_t(x_t), the hypothesis before the example is learnt (KAFBOX's
  prediction loop: evaluate, then train).
- The filters track (KAFBOX predicts with the last hypothesis): the written model is the last one
  (`--average` keeps the averaged hypothesis; not measured yet).
- Weights (a sample weight w): the loss w·½e², whose step is η w e_t; NORMA's shrink, from the
  regulariser, does not change.
"""

from __future__ import annotations

import math

import numpy as np

from ...numerics._jit import njit
from ...numerics.kernels import scatter, unscatter
from ..mixing import Mixing, Unmixable, project_rest
from ...numerics.projection import DEPENDENCE_TOL
from ..learner import (
    give_answer,
    OLDEST,
    KernelLearner,
    example_weight,
    loop_arrays,
    new_coefficient,
    open_round,
    retire,
    touch,
    victim,
)
from ...base.params import BUDGET, NONNEGATIVE, POSITIVE, UNIT, choice, number
from ..records import hinge_round
from ...base.registry import register
from ...numerics.support import sv_fits, sv_put
from ..task import ABSOLUTE_ERROR, SQUARED_ERROR, TARGET_SUM

BEFORE_SHRINK, AFTER_SHRINK = 0, 1  # NORMA_ERROR's choices, in order
FIXED, NU = 0, 1  # NORMA_LOSS's choices, in order
ADDITIONS, TUBE_NOW = 3, 4  # norma-epsilon's scalars after the error sums: terms added so far, the tube ε_t

STEP_SIZE = number(
    "step_size",
    0.5,
    "η of the LMS filters (a round steps η e k(x, ·), e = y − f(x): KAFBOX's eta) and of norma-novelty",
    POSITIVE,
)
QUANTIZATION = number(
    "quantization",
    0.1,
    "ε_U of QKLMS: an input within ε_U of its nearest centre updates that centre's coefficient (KAFBOX's epsu)",
    NONNEGATIVE,
)
NORMA_LAMBDA = number(
    "norma_lambda", 0.01, "λ of NORMA's regulariser λ/2‖f‖²: every round α ← (1 − ηλ) α (KAFBOX's lambda)", NONNEGATIVE
)
NORMA_ERROR = choice(
    "norma_error",
    ("before-shrink", "after-shrink"),
    "before-shrink",
    "NORMA's error: of f_t (before-shrink, the paper's step) or of the shrunk (1 − ηλ) f_t (after-shrink, KAFBOX's)",
)

SQUARED, EPSILON_INSENSITIVE, SQUARED_OUTSIDE_TUBE = 0, 1, 2  # LOSS's choices, in order
LOSS = choice(
    "loss",
    ("squared", "epsilon-insensitive", "squared-outside-tube"),
    "squared",
    "the regression loss of fogd-, nogd- and bogd-regression: squared (½e², a step η e every round), "
    "epsilon-insensitive (max(0, |e| − ε), a step η sign(e) when |e| > ε) or squared-outside-tube (a step η e "
    "only when |e| > ε: the JMLR 2016 authors' regression code); e = y − f(x)",
)
TUBE = number(
    "tube", 0.1, "ε of the regression losses: inside the tube |y − f(x)| ≤ ε a round takes no step", NONNEGATIVE
)
# A classification learner's values of the regression fields its loop reads (`gradient_round`): the
# constants of a family whose loop learns both tasks; its regression form overrides them.
CLASSIFYING = {"regression": False, "loss": SQUARED, "tube": 0.0}
REGRESSING = {"regression": True}


@njit(cache=True, inline="always")
def loss_gradient(loss, epsilon, e):
    """−∂ℓ/∂f of the regression loss at the a priori error e = y − f(x) (LOSS): the factor of the
    step η·(it)·k(x, ·); 0 inside the tube |e| ≤ ε (the ε-insensitive loss's subgradient at the kink
    taken as 0, as the hinge loss's is)."""
    if loss == SQUARED:
        return e
    if abs(e) <= epsilon:
        return 0.0
    return e if loss == SQUARED_OUTSIDE_TUBE else math.copysign(1.0, e)


@njit(cache=True, inline="always")
def round_gradient(h, yt, f):
    """−∂ℓ/∂f of the round's loss at f (0: no step): on the hinge loss y_t on a margin error, y_t f < 1;
    for a regression (h.regression), `loss_gradient` of the error y_t − f."""
    if h.regression:
        return loss_gradient(h.loss, h.tube, yt - f)
    return 1.0 * yt if yt * f < 1.0 else 0.0


@njit(cache=True, inline="always")
def gradient_round(counters, scalars, h, yt, f):
    """The round counted (records.hinge_round; for a regression its error sums, `count_round`), and
    `round_gradient`."""
    if h.regression:
        count_round(scalars, yt, f)
    else:
        hinge_round(counters, yt * f)
    return round_gradient(h, yt, f)


NORMA_LOSS = choice(
    "norma_loss",
    ("epsilon-insensitive", "nu"),
    "epsilon-insensitive",
    "norma-epsilon's tube: epsilon-insensitive (ε = --tube throughout, §III-C) or nu (ε_t adapted so that a "
    "fraction ν of the examples fall outside it, starting at --tube, §III-D)",
)
NORMA_NU = number(
    "norma_nu",
    0.5,
    "ν of norma-epsilon's nu loss: ε_t grows by η(1 − ν) after an example outside the tube, shrinks by ην "
    "after one inside",
    UNIT,
)


@njit(cache=True, inline="always")
def count_round(scalars, yt, f):
    """Add the round's online error e = y − f and its target to the learner's sums (learning/task)."""
    e = yt - f
    scalars[SQUARED_ERROR] += e * e
    scalars[ABSOLUTE_ERROR] += abs(e)
    scalars[TARGET_SUM] += yt


@njit(cache=True)
def klms_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, weights = st.alpha, st.krow, rows.weight
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        e = yt - f
        count_round(book.scalars, yt, f)
        if n >= h.budget:  # KAFBOX's M: no more learning
            continue
        sv_put(S, n, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, h.step_size * e * example_weight(weights, t), rnd)
    return y.shape[0]


@njit(cache=True)
def nearest(S, scratch, idx, val, sq, n):
    """(j, ‖x − c_j‖²) of the centre nearest x (the first on ties), the distance from the kept norms."""
    scatter(scratch, idx, val)
    best, best_d2 = -1, math.inf
    for i in range(n):
        dot = 0.0
        for j in range(S.start[i], S.start[i] + S.length[i]):
            dot += S.pool_val[j] * scratch[S.pool_idx[j]]
        d2 = sq + S.sqnorm[i] - 2.0 * dot
        if d2 < best_d2:
            best, best_d2 = i, d2
    unscatter(scratch, idx)
    return best, best_d2


@njit(cache=True)
def qklms_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, weights = st.alpha, st.krow, rows.weight
    limit = h.quantization * h.quantization
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        e = yt - f
        count_round(book.scalars, yt, f)
        step = h.step_size * e * example_weight(weights, t)
        j, d2 = nearest(S, scratch, idx, val, sq, n)
        if j >= 0 and (d2 <= limit or n >= h.budget):  # within ε_U, or the codebook full: x_t quantized to c_j
            touch(alpha, st.avg_sum, st.avg_stamp, j, rnd)
            alpha[j] += step
            continue
        sv_put(S, n, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, step, rnd)
    return y.shape[0]


@njit(cache=True)
def norma_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, weights, sc = st.alpha, st.krow, rows.weight, book.scalars
    shrink = 1.0 - h.step_size * h.norma_lambda
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        count_round(sc, yt, f)
        e = yt - shrink * f if h.norma_error == AFTER_SHRINK else yt - f
        g, additions = e, rnd - 1  # the squared loss: every round adds one
        if h.insensitive:  # norma-epsilon: a step η sign(e) outside the tube ε_t, none inside
            additions = int(sc[ADDITIONS])
            outside = abs(e) > sc[TUBE_NOW]
            g = math.copysign(1.0, e) if outside else 0.0
            if h.norma_loss == NU:  # ε_t follows: wider after an example outside, narrower after one inside
                sc[TUBE_NOW] += h.step_size * (1.0 - h.norma_nu) if outside else -h.step_size * h.norma_nu
        if shrink != 1.0:
            for i in range(n):
                touch(alpha, st.avg_sum, st.avg_stamp, i, rnd)
                alpha[i] *= shrink
        if g == 0.0:
            continue
        if h.insensitive:
            sc[ADDITIONS] += 1
        slot = n
        if n >= h.budget:  # the oldest is the slot the addition τ additions ago took
            slot = victim(OLDEST, book.rng_state, h.budget, additions)
            retire(S, book, alpha, st.avg_sum, st.avg_stamp, slot, rnd)
        sv_put(S, slot, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, slot, h.step_size * g * example_weight(weights, t), rnd)
    return y.shape[0]


class Regressor:
    """What a learner of the regression task declares (put before its kind among the bases): the task,
    its error sums (the first three scalars, learning/task), the last hypothesis, and no sharded run unless
    its kind declares a mix that adds the error sums up (RegressionMixing, alone or over its kind's: the
    filters', bogd-regression's, fogd-regression's, nogd-regression's): the base mix restarts the scalars."""

    tasks = ("regression",)
    n_scalars = 3  # Σe², Σ|e|, Σy (learning/task)
    # The last hypothesis.  Measured for the JMLR learners and norma-epsilon at their defaults (test MSE,
    # last / average; mg, housing and cpusmall split as bench/regression.py splits them, Friedman #1 20,000 /
    # 5,000 lines): the average is ahead on mg30 and mg (fogd 0.0250 / 0.0185), even on housing, mixed on
    # Friedman #1 (fogd 3.89 / 4.57, nogd 6.96 / 6.27), far behind on cpusmall, whose targets are large and
    # whose early hypotheses are poor (fogd 27.7 / 45.4, nogd 28.6 / 44.6): no gain sure enough to leave
    # the filters' (KAFBOX's) choice.
    default_hypothesis = "online"
    mixing = Unmixable("its mix does not carry the regression error sums")


def pivoted_cholesky(K: np.ndarray, m: int) -> np.ndarray:
    """The m indices (sorted) that a pivoted Cholesky factorisation of K takes, largest residual first (ties to
    the lower index): each the one farthest from the span of those before it."""
    residual, L, taken = np.diag(K).astype(np.float64), np.zeros((len(K), m)), []
    for j in range(m):
        i = int(np.argmax(residual))
        if residual[i] <= 0.0:
            break  # the rest lie in the span (up to rounding)
        taken.append(i)
        L[:, j] = (K[:, i] - L[:, :j] @ L[i, :j]) / math.sqrt(residual[i])
        residual -= L[:, j] ** 2
        residual[taken] = -np.inf
    return np.sort(np.array(taken, np.int64))


class RegressionMixing(Mixing):
    """A regression learner's mix (distributed/): f = Σ_w (n_w/n) f_w over the union of the shards' support
    sets, as a classifier's (the average of the local estimators of divide-and-conquer kernel ridge
    regression: Zhang, Duchi, Wainwright, JMLR 16, 2015), brought back to its budget by the same
    compression.  Its scalars are not restarted: the online error sums and target sum (learning/task) and those
    listed in `summed` are added up as the counters are, the last mix's plus what every shard added since;
    those in `averaged` (norma-epsilon's tube ε_t) are the shares' mean of the shards'.

    `at_end`: a filter whose state beside its coefficients (KRLS's K⁻¹ and P, KRLS-T's posterior) is no
    average of the shards': its shards learn their whole input alone and are mixed once, at the end, and
    the mixed model predicts but cannot be resumed (spec.refuse_resume); the matrices it holds (`history`)
    are zeros, those rebuilt from the support set (`rebuilt`) rebuilt."""

    def __init__(self, summed: tuple = (), averaged: tuple = (), at_end: bool = False, history: tuple = ()):
        self.summed, self.averaged, self.at_end, self.history = (0, 1, 2, *summed), averaged, at_end, history

    def compress(self, learner):
        """The union back at the budget B: the B vectors a pivoted Cholesky factorisation of its Gram matrix
        takes first (each the vector farthest from the span of those taken before it: the ALD test's order),
        the function projected onto them with a round-off ridge.  A classifier's rule (the B largest |α|,
        ridge 0.0005) loses the function here: KRLS's unregularised coefficients reach 1e5 and cancel
        (cpusmall, krls -B 500, 2 shards: the shards' average has test MSE 10.28, its compression by the
        largest |α| 53.5, by this rule 10.31)."""
        budget = learner.hyper.get("budget")
        if budget is None or len(learner.support) <= budget:
            return learner
        return project_rest(learner, pivoted_cholesky(learner.gram(), budget), DEPENDENCE_TOL)

    def mix(self, cls, reports, columns, width, counters, base, base_columns) -> dict:
        arrays = super().mix(cls, reports, columns, width, counters, base, base_columns)
        scalars = arrays["scalars"] = np.array(arrays["scalars"], np.float64)  # a kind's mix may hand a shard's on
        before = base["arrays"]["scalars"] if base is not None else np.zeros_like(scalars)
        total = sum(r["learned"] for r in reports)
        for i in self.summed:
            scalars[i] = before[i] + sum(r["arrays"]["scalars"][i] - before[i] for r in reports)
        for i in self.averaged:
            scalars[i] = sum(r["learned"] / total * r["arrays"]["scalars"][i] for r in reports)
        if self.at_end:
            n = len(arrays["alpha"])
            for name, kind in cls.slot_arrays.items():
                if kind == "square":
                    arrays.pop(name, None)
            arrays.update({name: np.zeros((n, n)) for name in self.history})
        return arrays


class KernelFilter(Regressor, KernelLearner):
    """What the LMS filters share: the regression task, their error sums, the last hypothesis, the mix of
    an expansion (their state is their coefficients)."""

    weighting = "the loss w·½(y − f)²: the step η w e"
    mixing = RegressionMixing()


@register
class KLMS(KernelFilter):
    name = "klms"
    summary = "kernel LMS: every example joins with η e, e = y − f(x); learning stops at -B centres (KAFBOX's M)"
    paper = "Liu, Pokharel, Príncipe, IEEE TSP 2008 (KLMS); KAFBOX klms"
    params = (BUDGET.but(default=10000), STEP_SIZE)
    loop = klms_range


@register
class QKLMS(KernelFilter):
    name = "qklms"
    summary = (
        "quantized KLMS: within ε_U of its nearest centre an input updates that centre, else joins; at -B centres "
        "every input updates its nearest"
    )
    paper = "Chen, Zhao, Zhu, Príncipe, IEEE TNNLS 2012 (QKLMS); KAFBOX qklms"
    params = (BUDGET.but(default=10000), STEP_SIZE.but(default=0.9), QUANTIZATION)
    loop = qklms_range


@register
class NORMA(KernelFilter):
    name = "norma"
    summary = "NORMA, squared loss: α ← (1 − ηλ) α, x joins with η e; the last τ = -B terms kept"
    paper = "Kivinen, Smola, Williamson, IEEE TSP 2004, §III (NORMA); KAFBOX norma"
    params = (BUDGET.but(default=500), STEP_SIZE, NORMA_LAMBDA, NORMA_ERROR)
    evicts = True
    loop = norma_range
    constants = {"insensitive": False, "norma_loss": FIXED, "norma_nu": 0.0}

    @classmethod
    def resolve_params(cls, given: dict) -> dict:
        return shrinking(cls.name, super().resolve_params(given))


def shrinking(name: str, h: dict, step: str = "step_size") -> dict:
    """NORMA's parameters `h`, or ValueError when its shrink factor 1 − ηλ (η the parameter `step`) is not
    above 0."""
    if h[step] * h["norma_lambda"] >= 1.0:
        raise ValueError(
            f"{name}: --{step.replace('_', '-')} × --norma-lambda must be below 1 (every round scales the "
            f"coefficients by 1 − ηλ = {1.0 - h[step] * h['norma_lambda']:g}: they would be erased or flipped)"
        )
    return h


@register
class NORMAInsensitive(NORMA):
    """NORMA on the ε-insensitive loss max(0, |y − f| − ε) (§III-C), and its ν form (§III-D), where ε_t is
    learnt too, on the loss max(0, |y − f| − ε) + νε: the same loop as the squared loss's."""

    name = "norma-epsilon"
    summary = (
        "NORMA, ε-insensitive loss: α ← (1 − ηλ) α, x joins with η sign(e) when |e| > ε (ε adapted: --norma-loss nu)"
    )
    paper = "Kivinen, Smola, Williamson, IEEE TSP 2004, §III-C, §III-D (NORMA, ε-insensitive and ν)"
    # η = 0.1: sign steps of the squared loss's 0.5 overshoot (mg30, the first 4,000 lines, --gamma 0.5: online
    # MSE 0.0550 at η = 0.5, 0.00796 at 0.1, 0.00994 at 0.05)
    params = (NORMA.params[0], STEP_SIZE.but(default=0.1), NORMA_LAMBDA, TUBE, NORMA_LOSS, NORMA_NU)
    constants = {"insensitive": True, "norma_error": BEFORE_SHRINK}
    n_scalars = 5  # the error sums (learning/task), ADDITIONS, TUBE_NOW
    mixing = RegressionMixing(summed=(ADDITIONS,), averaged=(TUBE_NOW,))
    weighting = "w times the ε-insensitive loss: the step η w sign(e); the tube's own step is not weighted"

    def __init__(self, kernel, seed: int = 0, **params):
        super().__init__(kernel, seed=seed, **params)
        self.scalars[TUBE_NOW] = self.hyper["tube"]  # ε_1
