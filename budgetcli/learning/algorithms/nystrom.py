"""Nyström online gradient descent, `nogd` and `mc-nogd` (Lu, Hoi, Wang, Zhao, Liu, "Large Scale Online
Kernel Learning", JMLR 17, 2016, §5; LIBOKL's `kernel-nogd`; the multiclass form as the JMLR authors'
NyGD.m).

Two phases.  Kernel OGD (kernel_ogd.py) with step η until B vectors are stored: these first B margin
errors become the landmarks x̂_1 … x̂_B.  On the first margin error with B stored, the switch: the k
largest eigenpairs (V_k, Λ_k) of the landmarks' Gram matrix K̂ give the Nyström map
z(x) = M κ(x), M = Λ_k^(−1/2) V_kᵀ (k × B), κ(x) = [k(x̂_1, x), …, k(x̂_B, x)], with
z(x)ᵀz(x') = κ(x)ᵀ V_k Λ_k⁻¹ V_kᵀ κ(x') the rank-k Nyström approximation of k(x, x'); from then on
linear OGD on w ∈ R^k with step η₁: on y_t wᵀz(x_t) < 1, w ← w + η₁ y_t z(x_t).  The landmarks never
change again; a round costs B kernel values and O(kB).

It is kept as what it is, a kernel expansion over the landmarks: f(x) = wᵀMκ(x) = αᵀκ(x) with α = Mᵀw,
and the linear step is α ← α + η₁ y Mᵀ(Mκ(x_t)).  So prediction, the averaged hypothesis, export to
LIBSVM's format and every interface are the kernel learners' own, and so is sharded training
(`NystromMixing`).  The model file holds the landmarks and α; M is resume state (`remake_map`: made
again from the landmarks, the same bits), held only with `--save-resume`, as the Projectron's factor.

`mc-nogd` is the same on the multiclass contract (multiclass.py): phase one stores each updating example
once with η(e_y − e_r), r the best other class, on the multiclass hinge loss 1 − f_y + f_r > 0; at the
switch W = A·M⁺ (every class's coefficients projected, A ← V_k V_kᵀ A, written Mᵀ Λ_k M A in the loop so
that the running average sees the change in its round); then the rows y and r move by ±η₁ Mᵀ M κ(x_t).

`nogd-regression` is the same loop on the regression task (§3's losses, lms.LOSS): phase one keeps
the first B rounds that step, with η (−∂ℓ/∂f); the switch comes on the first round that steps with B
stored; the linear phase steps α ← α + η₁ (−∂ℓ/∂f) Mᵀz(x_t).  Its scalars hold the error sums first
(learning/task), then the phase, the switch score and the rank.

Choices where the sources differ:
- The start of w at the switch (`--nystrom-start`): `projected`, the JMLR authors' code, w = Mᵀ⁺α, so
  that f is the phase-one expansion projected onto the top-k eigenspace (α ← V_k V_kᵀ α); `zero`,
  LIBOKL's, w = 0 (the phase-one model is dropped).
- The k largest eigenpairs of a symmetric eigensolver (LIBOKL takes the first k of an unsymmetric
  solver's unordered ones); eigenvalues at or below 1e−10 λ_max are left out (a rank-deficient K̂, e.g.
  a linear kernel in few dimensions, would give 1/√0): the map then has fewer than k components.
- The switch round predicts with the phase-one expansion, then takes the linear step (both sources).
- k defaults to B/2: on a9a.t (B = 100, the default γ) 83.82% with the sources' k = 0.2·B = 20, 84.95%
  with 50, 85.01% with 100, at 0.5, 0.5 and 0.7 s a run (bench/defaults.py's measure).
- η₁ defaults to η (the JMLR authors' code has one step; LIBOKL's `-eta1` defaults to its `-eta`).
- The update is strict, y f < 1, and a zero score is a mistake (kernel_ogd.py).
- nogd-regression: the squared loss is ½(y − f)² (a step η e, the LMS filters'); a round on the tube's
  edge takes no step; the last hypothesis is written by default (measured: lms.Regressor).
- Weights (`train -w LABEL W`, a sample weight): an example of weight w has the loss w·max(0, 1 − y f),
  so both phases' gradient steps are w times OGD's (§5): a landmark joins with η w y_t (mc-nogd:
  ±η w), the linear step is η₁ w y_t z(x_t), as kernel OGD's (kernel_ogd.py); the landmarks and the
  map do not depend on the weights.
"""

from __future__ import annotations

import math

import numpy as np

from ...numerics._jit import njit
from ..learner import (
    give_answer,
    EXAMPLES,
    KernelLearner,
    hinge_round,
    example,
    example_weight,
    loop_arrays,
    new_coefficient,
    open_round,
    score_example,
    touch,
)
from ..mixing import Mixing
from ..multiclass import MulticlassLearner, change, class_scores, open_class_round, rival, set_row
from ...base.params import BUDGET, POSITIVE, choice, count, number
from ...base.registry import register
from ...numerics.support import COUNT, sv_fits, sv_put
from .kernel_ogd import LEARNING_RATE
from .lms import (
    CLASSIFYING,
    LOSS,
    NORMA_LAMBDA,
    REGRESSING,
    RegressionMixing,
    TUBE,
    Regressor,
    gradient_round,
    round_gradient,
)
from .novelty import NU, RHO_FIT, NoveltyDetector, NoveltyMixing, threshold_round
from ..task import RHO

PROJECTED = 0  # --nystrom-start's code
PHASE, SWITCH_SCORE, RANK = 0, 1, 2  # scalars (from nystrom_at): the phase, the switch round's score, the map's rank
KERNEL_PHASE, SWITCHING, LINEAR_PHASE = 0.0, 1.0, 2.0
EIGEN_TOL = 1e-10  # eigenvalues ≤ EIGEN_TOL·λ_max are left out of the map

RANK_PARAM = count(
    "nystrom_rank",
    None,
    "k: eigenpairs of the landmarks' Gram matrix NOGD keeps (LIBOKL's -knogd)",
    flags=("--rank",),
    default_text="B/2, at least 1 (the JMLR experiments' 0.2·B and LIBOKL's 20 at its B = 100 give up accuracy)",
)
LINEAR_RATE = number(
    "linear_rate",
    None,
    "η1: NOGD's step in its linear phase (LIBOKL's -eta1)",
    POSITIVE,
    default_text="η (--learning-rate)",
)
START = choice(
    "nystrom_start",
    ("projected", "zero"),
    "projected",
    "NOGD's w at the switch: projected (the phase-one model on the top-k eigenspace, the JMLR code) or zero (LIBOKL)",
)


@njit(cache=True, inline="always")
def nystrom_features(M, krow, k, n, z):
    """z = M κ(x_t): the example's k Nyström features from its kernel row over the n landmarks.  Each z_q
    is summed over j in order from 0.0, four rows of M at a time: four sums that do not wait on each
    other, each with the bits it has alone."""
    q = 0
    while q + 4 <= k:
        s0 = s1 = s2 = s3 = 0.0
        for j in range(n):
            kj = krow[j]
            s0 += M[q, j] * kj
            s1 += M[q + 1, j] * kj
            s2 += M[q + 2, j] * kj
            s3 += M[q + 3, j] * kj
        z[q], z[q + 1], z[q + 2], z[q + 3] = s0, s1, s2, s3
        q += 4
    for q in range(q, k):
        s = 0.0
        for j in range(n):
            s += M[q, j] * krow[j]
        z[q] = s


@njit(cache=True, inline="always")
def back_projection(M, z, k, n, out):
    """out_j = (Mᵀz)_j for j < n, each summed over q in order from 0.0, a row of M at a time: the same
    sums as one j at a time, four lanes wide instead of one chain of k dependent adds per j."""
    for j in range(n):
        out[j] = 0.0
    for q in range(k):
        zq = z[q]
        for j in range(n):
            out[j] += M[q, j] * zq


@njit(cache=True, inline="always")
def phase_one_round(S, K, indptr, indices, values, t, alpha, krow, scratch, sc, budget):
    """What phase one asks before round t, for the loops of nogd, nogd-regression and nogd-novelty, which
    differ only in whether a score steps: (False, NaN) when the support set has no room for x_t's entries
    (the loop stops there, for the learner to grow it: only phase one stores); (True, f) when B landmarks are
    stored, f the phase-one expansion's score of x_t: the switch round if the round steps with it; (True,
    NaN) otherwise (the linear phase, fewer than B stored, or a score that is not finite, which open_round
    then refuses)."""
    if sc[PHASE] != KERNEL_PHASE:
        return True, math.nan
    if not sv_fits(S, indptr[t + 1] - indptr[t]):
        return False, math.nan
    if S.meta[COUNT] >= budget:
        idx, val = example(indptr, indices, values, t)
        f, sq = score_example(S, K, alpha, krow, scratch, idx, val)
        if math.isfinite(f) and math.isfinite(sq):
            return True, f
    return True, math.nan


@njit(cache=True)
def nogd_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, M, z, weights = st.alpha, st.krow, st.nystrom, st.z, rows.weight
    sc = book.scalars[h.nystrom_at :]  # nogd-regression's error sums come first (learning/task)
    mz = np.empty(alpha.shape[0])  # Mᵀz
    for t in range(start, y.shape[0]):
        room, f = phase_one_round(S, K, indptr, indices, values, t, alpha, krow, scratch, sc, h.budget)
        if not room:
            return t
        if f == f and round_gradient(h, y[t], f) != 0.0:  # the switch round: B stored, and the round steps
            sc[PHASE], sc[SWITCH_SCORE] = SWITCHING, f
            return t  # the learner makes the map, then calls again from this round
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        if sc[PHASE] == SWITCHING:  # it predicted with the phase-one expansion
            f, sc[PHASE] = sc[SWITCH_SCORE], LINEAR_PHASE
        give_answer(answers, t, f)
        g = gradient_round(counters, book.scalars, h, yt, f)  # y_t on a margin error; nogd-regression's loss
        if g == 0.0:
            continue
        if sc[PHASE] == KERNEL_PHASE:
            sv_put(S, n, idx, val, sq)
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, h.learning_rate * g * example_weight(weights, t), rnd)
            continue
        k = int(sc[RANK])
        nystrom_features(M, krow, k, n, z)
        back_projection(M, z, k, n, mz)
        step = h.linear_rate * g * example_weight(weights, t)
        for j in range(n):  # α += η₁ y Mᵀz
            touch(alpha, st.avg_sum, st.avg_stamp, j, rnd)
            alpha[j] += step * mz[j]
    return y.shape[0]


def nystrom_scalars(learner):
    """The learner's scalars from PHASE on (a view): after the error sums of nogd-regression."""
    return learner.scalars[learner.constants["nystrom_at"] :]


def nystrom_map(learner, n: int):
    """M = Λ_k^(−1/2) V_kᵀ from the k largest eigenpairs of the n landmarks' Gram matrix (those above
    EIGEN_TOL·λ_max) into slot["nystrom"], its rank into scalars; returns (λ, V, the kept indices)."""
    lam, V = np.linalg.eigh(learner.gram())
    top = np.argsort(lam, kind="stable")[::-1][: learner.hyper["nystrom_rank"]]
    top = top[lam[top] > EIGEN_TOL * max(lam.max(), 0.0)]  # none: every landmark is 0 in feature space
    learner.slot["nystrom"][: len(top), :n] = (V[:, top] / np.sqrt(lam[top])).T
    nystrom_scalars(learner)[RANK] = len(top)
    return lam, V, top


def remake_map(learner, name: str) -> None:
    """The map M made again from the landmarks after the switch (the resume state `rebuilt`): the same
    Gram matrix by the same kernel code and the same eigensolver give the same bits and rank as at the
    switch.  Before the switch there is no map."""
    if nystrom_scalars(learner)[PHASE] == LINEAR_PHASE:
        nystrom_map(learner, len(learner.support))


class NystromMixing(Mixing):
    """A mix of nogd models is the mix of the kernel expansions over their landmarks that they are
    (f = αᵀκ(x)): the union brought back to B by the budget's compression, as every budgeted learner's.
    When any shard had switched, the mixed model is in the linear phase, and its map M is made from the
    mixed landmarks (`nystrom_map`, as the switch makes it); α is kept as mixed, so the mix is exactly
    the compressed average, and M decides only how the next margin errors move α.  Otherwise the mixed
    model is still in phase one, and switches when B are stored, as one process does.  The phase is the
    only scalar of nogd's own it keeps (the rest the map's remaking sets); a task's before it (nogd-regression's
    error sums, nogd-novelty's ρ and Σρ) its task's mix sets (NystromRegressionMixing, NystromNoveltyMixing)."""

    def scalars(self, cls, shard_scalars: list, shard_counters: list, counters: np.ndarray) -> np.ndarray:
        out, at = np.zeros(len(shard_scalars[0])), cls.constants["nystrom_at"] + PHASE
        out[at] = max(s[at] for s in shard_scalars)  # 0 or 2: a report is never mid-switch
        return out

    def after_mix(self, learner) -> None:
        learner.stale.discard("nystrom")
        remake_map(learner, "nystrom")


class NystromFamily:
    """What nogd and mc-nogd share besides their loops: the rank's default and its bound, and the check of
    the phase and rank a model file holds (the loops index M by them)."""

    constants = {"nystrom_at": 0}  # where PHASE, SWITCH_SCORE and RANK start in scalars

    @classmethod
    def resolve_params(cls, given: dict) -> dict:
        h = super().resolve_params(given)
        if h["nystrom_rank"] is None:  # the model file records the value used
            h["nystrom_rank"] = max(1, round(0.5 * h["budget"]))
        if h["nystrom_rank"] > h["budget"]:
            raise ValueError(f"{cls.name}: --rank must be at most -B/--budget ({h['budget']}), got {h['nystrom_rank']}")
        if h["linear_rate"] is None:  # the model file records the value used
            h["linear_rate"] = h["learning_rate"]
        return h

    def _learn_range(self, rows, start: int) -> int:
        """The loop stops before the switch round; the map is made (`_switch`) and the loop goes on."""
        while True:
            stop = super()._learn_range(rows, start)
            if nystrom_scalars(self)[PHASE] != SWITCHING:
                return stop
            self._switch(int(self.counters[EXAMPLES]) + 1)
            start = stop

    @classmethod
    def check_saved(cls, header, arrays):
        """The phase and the map's rank the loop trusts (it indexes M by them)."""
        super().check_saved(header, arrays)
        if arrays["scalars"].shape != (cls.n_scalars,):
            raise ValueError(f"scalars holds {arrays['scalars'].shape[0]} numbers, not {cls.n_scalars}")
        k = header["params"].get("nystrom_rank") if isinstance(header.get("params"), dict) else None
        if type(k) is not int:
            raise ValueError("params.nystrom_rank is not an integer")
        sc = arrays["scalars"][cls.constants["nystrom_at"] :]
        phase, rank = float(sc[PHASE]), float(sc[RANK])
        n = len(arrays["sv_indptr"]) - 1
        if phase not in (KERNEL_PHASE, LINEAR_PHASE):
            raise ValueError(f"scalars[{PHASE}] (the phase) is {phase}, not 0 or 2")
        if rank != int(rank) or not 0 <= rank <= min(k, n):
            raise ValueError(f"scalars[{RANK}] (the map's rank) is {rank}, not an integer in 0..min(k, |S|)")
        if phase == KERNEL_PHASE and rank != 0:
            raise ValueError("a map's rank before the switch")


@register
class NystromOGD(NystromFamily, KernelLearner):
    name = "nogd"
    summary = "Nyström OGD: kernel OGD until B landmarks, then linear OGD on their rank-k Nyström map"
    paper = "Lu, Hoi, Wang, Zhao, Liu, JMLR 17, 2016, §5 (NOGD); LIBOKL kernel-nogd"
    params = (BUDGET, LEARNING_RATE, LINEAR_RATE, RANK_PARAM, START)
    n_scalars = 3
    slot_arrays = KernelLearner.slot_arrays | {"nystrom": "square", "z": "work"}
    rebuilt = {"nystrom": remake_map}
    rebuilt_exactly = frozenset(rebuilt)  # the same Gram matrix and eigensolver: the same bits
    loop = nogd_range
    constants = CLASSIFYING
    mixing = NystromMixing()
    weighting = "the loss w·max(0, 1 − y f): both phases' steps are w times OGD's"

    def _switch(self, rnd: int) -> None:
        """Make the map M from the landmarks' Gram matrix, and w's start, in round `rnd` (not yet counted)."""
        n = len(self.support)
        lam, V, top = nystrom_map(self, n)
        s = self.slot
        alpha = s["alpha"][:n]
        s["avg_sum"][:n] += alpha * (rnd - s["avg_stamp"][:n])  # learner.touch: α changes in round rnd
        s["avg_stamp"][:n] = rnd
        if self.hyper["nystrom_start"] == "zero":
            alpha[:] = 0.0
        else:
            Vk = V[:, top]
            alpha[:] = Vk @ (Vk.T @ alpha)


class NystromRegressionMixing(RegressionMixing, NystromMixing):
    """nogd-regression's mix: nogd's (the expansion over the union of the landmarks, brought back to B by the
    regression mix's compression, the map remade when a shard had switched), with the online error sums added
    up as a regressor's (lms.RegressionMixing)."""


@register
class NystromRegression(Regressor, NystromOGD):
    """nogd on the regression task (JMLR 2016, §3's losses, §5's steps): the same loop, whose phase one
    keeps the first B rounds that step (η (−∂ℓ/∂f) each) and whose linear phase steps
    η₁ (−∂ℓ/∂f) Mᵀz(x_t)."""

    name = "nogd-regression"
    summary = "Nyström OGD for regression: kernel OGD until B landmarks, then linear OGD on their Nyström map"
    paper = "Lu, Hoi, Wang, Zhao, Liu, JMLR 17, 2016, §3, §5 (NOGD, regression)"
    params = NystromOGD.params + (LOSS, TUBE)
    constants = REGRESSING | {"nystrom_at": 3}
    n_scalars = 6  # the error sums (learning/task), then PHASE, SWITCH_SCORE, RANK
    mixing = NystromRegressionMixing()
    weighting = "the loss w ℓ(y − f): both phases' steps are w (−∂ℓ/∂f) times OGD's"


@njit(cache=True)
def nogd_novelty_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, M, z, weights, scalars = st.alpha, st.krow, st.nystrom, st.z, rows.weight, book.scalars
    sc = scalars[h.nystrom_at :]  # ρ and Σρ come first (learning/task)
    mz = np.empty(alpha.shape[0])  # Mᵀz
    for t in range(start, y.shape[0]):
        room, f = phase_one_round(S, K, indptr, indices, values, t, alpha, krow, scratch, sc, h.budget)
        if not room:
            return t
        if f - scalars[RHO] <= 0.0:  # the switch round: B stored, and the round is flagged (f is a number)
            sc[PHASE], sc[SWITCH_SCORE] = SWITCHING, f
            return t  # the learner makes the map, then calls again from this round
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        if sc[PHASE] == SWITCHING:  # it predicted with the phase-one expansion
            f, sc[PHASE] = sc[SWITCH_SCORE], LINEAR_PHASE
        give_answer(answers, t, f - scalars[RHO])
        flagged = f - scalars[RHO] <= 0.0
        linear = sc[PHASE] == LINEAR_PHASE
        rate = h.linear_rate if linear else h.learning_rate
        shrink = 1.0 - rate * h.norma_lambda
        step = rate * example_weight(weights, t)
        if shrink != 1.0:
            for i in range(n):
                touch(alpha, st.avg_sum, st.avg_stamp, i, rnd)
                alpha[i] *= shrink
        threshold_round(counters, scalars, flagged, step, h.nu)
        if not flagged:
            continue
        if not linear:
            sv_put(S, n, idx, val, sq)
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, step, rnd)
            continue
        k = int(sc[RANK])
        nystrom_features(M, krow, k, n, z)
        back_projection(M, z, k, n, mz)
        for j in range(n):  # α += η₁ Mᵀz
            touch(alpha, st.avg_sum, st.avg_stamp, j, rnd)
            alpha[j] += step * mz[j]
    return y.shape[0]


class NystromNoveltyMixing(NoveltyMixing, NystromMixing):
    """nogd-novelty's mix: nogd's (the expansion over the union of the landmarks, brought back to B, the map
    remade when a shard had switched), with ρ, Σρ and the last rounds' examples mixed as a novelty detector's."""


@register
class NystromNovelty(NoveltyDetector, NystromOGD):
    """nogd's one-class form: NORMA's novelty step (novelty.py, Kivinen et al. 2004, §III-B) in both of
    NOGD's phases (the module's docstring).  Phase one is norma-novelty without truncation: every round
    α ← (1 − ηλ) α, a flagged x_t (f(x_t) − ρ ≤ 0) joins with η, until B are stored; on the first flagged
    round with B stored, the switch (the map M from the landmarks, α's start as --nystrom-start says);
    from then on the linear phase, NORMA's step on w ∈ R^k, f = wᵀz(x), z = Mκ(x), kept as α = Mᵀw:

        flagged:    α ← (1 − η₁λ) α + η₁ Mᵀz(x_t),  ρ ← ρ − η₁(1 − ν)
        otherwise:  α ← (1 − η₁λ) α,               ρ ← ρ + η₁ν

    Choices where the papers leave room (besides nogd's, above, and norma-novelty's, novelty.py, which it
    shares: the flag on g ≤ 0, ρ_1 = 0, the sign of ρ's step, the threshold refitted on the last rounds'
    examples, the averaged hypothesis with the mean of the ρ_t):
    - Neither Lu et al. (JMLR 2016) nor Kivinen et al. state a one-class NOGD; it is §III-B's step taken
      on NOGD's two hypotheses, as NOGD takes kernel OGD's (§5): on the expansion, then on the map.
    - The landmarks are the first B flagged examples (NOGD's first B margin errors: the one-class hinge's
      are the flagged rounds); phase one truncates nothing, since it ends when B are stored.
    - ρ steps with the phase's step: η in phase one, η₁ from the switch round on (the step f moves by), so
      that the flagged fraction tracks ν in both; every round shrinks every coefficient by the phase's
      1 − ηλ or 1 − η₁λ, both required above 0.
    - The switch round predicts with the phase-one expansion (nogd's rule) and takes the linear step.
    - Weights (a sample weight ω): the loss ω·(max(0, ρ − f(x)) − νρ), steps ηω (η₁ω) on α and on ρ."""

    name = "nogd-novelty"
    summary = "Nyström novelty detection: NORMA's one-class step until B landmarks, then on their Nyström map"
    paper = "Kivinen, Smola, Williamson, IEEE TSP 2004, §III-B on NOGD (Lu et al., JMLR 17, 2016, §5)"
    params = (BUDGET.but(default=100), LEARNING_RATE, LINEAR_RATE, RANK_PARAM, START, NORMA_LAMBDA.but(default=0.001))
    params += (NU, RHO_FIT)
    shrunk_steps = ("learning_rate", "linear_rate")
    constants = {"nystrom_at": 2}  # after ρ and Σρ
    n_scalars = 5  # ρ, Σρ (learning/task), then PHASE, SWITCH_SCORE, RANK
    loop = nogd_novelty_range
    mixing = NystromNoveltyMixing()
    weighting = "the loss w·(max(0, ρ − f(x)) − νρ): the steps η w (η₁ w) on α and on ρ"


@njit(cache=True)
def mc_nogd_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    f, M, z, lam, sc, weights = st.scores, st.nystrom, st.z, st.eigen, book.scalars, rows.weight
    mz = np.empty(st.coef.shape[0])  # Mᵀz
    for t in range(start, y.shape[0]):
        if sc[PHASE] == KERNEL_PHASE and not sv_fits(S, indptr[t + 1] - indptr[t]):  # only phase one stores
            return t
        if sc[PHASE] == KERNEL_PHASE and S.meta[COUNT] >= h.budget:  # is this the switch round?
            idx, val = example(indptr, indices, values, t)
            m = max(st.n_classes[0], y[t] + 1)
            sq = class_scores(S, K, st.coef, st.scale[0], m, st.krow, scratch, idx, val, f)
            r = rival(f, m, y[t])
            if r >= 0 and f[y[t]] - f[r] < 1.0 and math.isfinite(f[y[t]] - f[r]) and math.isfinite(sq):
                sc[PHASE] = SWITCHING
                return t  # the learner makes the map, then calls again from this round
        idx, val, yt, m, sq, rnd = open_class_round(S, K, indptr, indices, values, y, t, scratch, counters, st, answers)
        r = rival(f, m, yt)
        if r < 0:
            continue
        margin = f[yt] - f[r]  # the phase-one expansion's, in the switch round too
        if not hinge_round(counters, margin):
            continue
        n = S.meta[COUNT]
        if sc[PHASE] == KERNEL_PHASE:
            sv_put(S, n, idx, val, sq)
            rate = h.learning_rate * example_weight(weights, t)
            set_row(st, n, yt, rate / st.scale[0], r, -rate / st.scale[0])
            continue
        k = int(sc[RANK])
        if sc[PHASE] == SWITCHING:  # the start: every class's coefficients projected, V_k V_kᵀ = Mᵀ Λ_k M
            for i in range(m):
                for q in range(k):
                    s = 0.0
                    for j in range(n):
                        s += M[q, j] * st.coef[j, i]
                    z[q] = lam[q] * s if h.nystrom_start == PROJECTED else 0.0
                for j in range(n):
                    s = 0.0
                    for q in range(k):
                        s += M[q, j] * z[q]
                    change(st, j, i, s - st.coef[j, i])
            sc[PHASE] = LINEAR_PHASE
        nystrom_features(M, st.krow, k, n, z)
        back_projection(M, z, k, n, mz)
        step = h.linear_rate * example_weight(weights, t) / st.scale[0]
        for j in range(n):  # the rows y and r move by ±η₁ Mᵀz
            change(st, j, yt, step * mz[j])
            change(st, j, r, -step * mz[j])
    return y.shape[0]


@register
class MulticlassNystromOGD(NystromFamily, MulticlassLearner):
    name = "mc-nogd"
    summary = "multiclass Nyström OGD: multiclass kernel OGD until B landmarks, then linear OGD on their Nyström map"
    paper = "Lu, Hoi, Wang, Zhao, Liu, JMLR 17, 2016, §5 (NOGD, multiclass)"
    params = NystromOGD.params
    n_scalars = 3
    slot_arrays = MulticlassLearner.slot_arrays | {"nystrom": "square", "z": "work", "eigen": "work"}
    rebuilt = NystromOGD.rebuilt
    rebuilt_exactly = NystromOGD.rebuilt_exactly
    loop = mc_nogd_range
    mixing = NystromOGD.mixing
    weighting = NystromOGD.weighting

    def _switch(self, rnd: int) -> None:
        """Make the map; the loop projects the coefficients in this round (its running average's way)."""
        lam, _, top = nystrom_map(self, len(self.support))
        self.slot["eigen"][: len(top)] = lam[top]
