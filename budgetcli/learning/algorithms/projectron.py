"""Projectron and Projectron++ (Orabona, Keshet, Caputo, JMLR 2009, Figs. 2, 4 and 5).

On a mistake the Perceptron update y_t k(x_t, ·) is projected onto the span of the current
support set when the projection error ‖δ_t‖ is at most η; otherwise x_t joins the support set.
What is kept of the support set's Gram matrix K is the inverse of its Cholesky factor, W = L⁻¹ with
K = LLᵀ (so K⁻¹ = WᵀW), grown by one row when x_t joins (Fig. 4's block update, for the factor), so
a round costs O(|S|²) and nothing is ever inverted afresh.  ‖δ_t‖² = k(x_t, x_t) − ‖Wk_t‖² needs
half the product of d = K⁻¹k_t, which is made (d = Wᵀ(Wk_t)) only when α changes: a margin error
that does not update costs half of what it did with K⁻¹ kept, and a joining vector O(|S|) instead
of O(|S|²).  Model files written before the factor hold K⁻¹ (`kinv`); they load, and W is rebuilt
from the support set when the model learns again.

Choices where the paper leaves room (each is tested against the reference in tests/):
- η is compared with the *norm* ‖δ_t‖, as the paper writes (§3.1, Fig. 2).  DOGMA, which ran the
  paper's experiments, compares the squared norm; its η is our η².
- Numerical dependence: when ‖δ_t‖² ≤ DEPENDENCE_TOL · k(x_t, x_t), x_t is treated as lying in
  the span (‖δ_t‖ = 0) whatever η (projection.py).  This also covers duplicate points with η = 0.
- Projectron++ margin errors are 0 < y_t f_{t-1}(x_t) < 1 (§4; Fig. 5 writes ≤ 1, where the
  loss is 0 and τ_t would be 0 anyway).  The update is taken when ℓ_t ≥ ‖δ_t‖/η, with
  τ_t = min(ℓ_t/‖Pk‖², 2(ℓ_t − ‖δ_t‖/η)/‖Pk‖², 1) and ‖Pk‖² = k_tᵀ d*.  With η = 0 only
  exactly-dependent points (‖δ_t‖ = 0) give margin updates.  Fig. 5's margin updates never add
  a support vector.
- `--margin-step projectron` answers a margin error 0 < y_t f_{t-1}(x_t) < 1 with the Projectron's
  own step instead: α += y_t d* when ‖δ_t‖ ≤ η, else x_t joins with coefficient y_t (growing K⁻¹).
  That is the rule the Ahpatron paper (Liao et al., AAAI 2024) ran as "Projectron++": its released
  code (alg4ml/Ahpatron, Projectron++.R) updates on every y f < 1 with that step, and its Table 2 is
  that rule's.  Mistakes, counters and the numerical dependence stay as above (that code predicts +1
  on f = 0 and tests |1 − k_tᵀd*| < 1e-10 for rbf; we keep y f ≤ 0 and DEPENDENCE_TOL): a margin
  error counts as a margin update whichever the step, and `projections` counts the mistakes answered
  by a projection, so |S| − (mistakes − projections) margin errors added a support vector.
- The first support vector follows the paper's rule too (Fig. 2, with the projection of Fig. 4 onto
  the empty span of S_0 = ∅): that projection is 0, so δ_t = −y_t k(x_t, ·) and ‖δ_t‖ = √k(x_t, x_t),
  and x_t is added only when √k(x_t, x_t) > η.  Until something is added f = 0, so every round is a
  mistake (y f = 0) and Projectron++ meets no margin error.  The rbf kernel has k(x, x) = 1 for
  every x: with η ≥ 1 nothing is ever added, which `refuse_degenerate` refuses before any data is
  read.  With the poly and linear kernels it depends on the data's norms: a run that ends with no
  support vector gets a warning (learner.KernelLearner.size_warnings).
- Weights (`train -w LABEL W`, a sample weight): an example's weight w is the cost of its update, as
  LIBSVM's C_i = w_i C.  §4 notes that Projectron++'s bound τ_t ≤ 1 is PA-I's C = 1 (its margin step
  "generalizes the PA-I bound whenever R = 1 and C = 1"); an example of weight w gets C = w: a mistake
  adds w y_t k(x_t, ·), or projects w y_t P k(x_t, ·) (the Perceptron's step on its loss weighed by w),
  and a margin error's τ_t = min(ℓ_t/‖Pk‖², 2(ℓ_t − ‖δ_t‖/η)/‖Pk‖², w), the first two terms being the
  step to margin 1 and Theorem 4's bound, which do not depend on a cost.  Whether x_t is projected
  (‖δ_t‖ ≤ η) depends on x_t alone, so Theorem 2's bound on the support set holds whatever the weights.
  §5 names another cost, a margin γ(y, y') that depends on the labels (after Crammer et al. 2006): we do
  not take it for class weights, since it changes margin errors only, and the Projectron, which updates
  on mistakes alone, would ignore it.  Weight 1 everywhere is the unweighted algorithm, bit for bit.

The Gram-inverse maths (eqs. 7–8, Fig. 4) is in projection.py.
"""

from __future__ import annotations

import math

import numpy as np

from ...numerics import sync
from ...numerics._jit import njit
from ...numerics.kernels import self_kernel
from ..learner import (
    give_answer,
    MARGIN_UPDATES,
    MISTAKES,
    PROJECTIONS,
    KernelLearner,
    example_weight,
    loop_arrays,
    new_coefficient,
    open_round,
    touch,
)
from ..mixing import WithinSpan
from ...base.params import ETA, choice
from ...numerics.projection import (
    DEPENDENCE_TOL,
    factor_grow,
    factor_worker,
    threaded_project,
    threaded_project_solve,
    threaded_solve,
)
from ...numerics.gram import factor_of_support
from ...base.registry import register
from ...numerics.support import sv_fits, sv_put

NO_MARGIN, FIG5, PROJECTRON_STEP = 0, 1, 2  # what a margin error gets: nothing (Projectron), or MARGIN_STEP's

MARGIN_STEP = choice(
    "margin_step",
    ("fig5", "projectron"),
    "fig5",
    "Projectron++'s update on a margin error 0 < y f < 1: fig5 (a τ-scaled projection, never adds; "
    "Orabona et al. Fig. 5) or projectron (the Projectron's step: project if ‖δ‖ ≤ η, else add x; "
    "the Ahpatron paper's code)",
    codes=(FIG5, PROJECTRON_STEP),
)


@njit(cache=True)
def projectron_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, w, z, d, own, control = st.alpha, st.krow, st.kinv_factor, st.z, st.d, st.own, st.control
    weights = rows.weight
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        margin = yt * f
        if margin > 0.0 and not (h.margin_step != NO_MARGIN and margin < 1.0):
            continue
        kxx = self_kernel(K, sq)
        fig2 = margin <= 0.0 or h.margin_step == PROJECTRON_STEP  # Fig. 2's step: projected or added, d is needed
        if fig2:
            delta2, pk2 = threaded_project_solve(w, krow, z, d, n, kxx, own, control)  # and d = K⁻¹k_t
        else:
            delta2, pk2 = threaded_project(w, krow, z, n, kxx, own, control)
        dependent = delta2 <= DEPENDENCE_TOL * kxx
        if fig2:
            if margin <= 0.0:
                counters[MISTAKES] += 1
            else:
                counters[MARGIN_UPDATES] += 1
            step = yt * example_weight(weights, t)  # the cost C = w (module docstring)
            if dependent or math.sqrt(delta2) <= h.eta:
                for i in range(n):
                    touch(alpha, st.avg_sum, st.avg_stamp, i, rnd)
                    alpha[i] += step * d[i]
                if margin <= 0.0:
                    counters[PROJECTIONS] += 1
            else:
                factor_grow(w, d, n, delta2)
                sv_put(S, n, idx, val, sq)
                new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, step, rnd)
        else:  # margin error of Projectron++: Fig. 5
            if pk2 <= 0.0:
                continue  # nothing of k(x_t, ·) lies in the span: the projected update is zero
            loss = 1.0 - margin
            if dependent:
                penalty = 0.0
            elif h.eta > 0.0:
                penalty = math.sqrt(delta2) / h.eta
            else:
                continue  # η = 0 projects only points in the span
            if loss < penalty:
                continue
            tau = min(loss / pk2, 2.0 * (loss - penalty) / pk2, example_weight(weights, t))
            threaded_solve(w, z, d, n, own, control)
            for i in range(n):
                touch(alpha, st.avg_sum, st.avg_stamp, i, rnd)
                alpha[i] += yt * tau * d[i]
            counters[MARGIN_UPDATES] += 1
    return y.shape[0]


@register
class Projectron(KernelLearner):
    name = "projectron"
    summary = "Perceptron that projects instead of adding when ‖δ‖ ≤ η; bounded support set"
    paper = "Orabona, Keshet, Caputo, JMLR 2009, Figs. 2 and 4"
    params = (ETA,)
    slot_arrays = KernelLearner.slot_arrays | {"kinv_factor": "square", "z": "work", "d": "work"}
    rebuilt = {"kinv_factor": factor_of_support}
    superseded = {"kinv": "square"}  # K⁻¹, the resume state of model files before the factor
    constants = {"margin_step": NO_MARGIN}
    weighting = "the cost C = w of the update: a mistake adds or projects w y k(x, ·)"
    mixing = WithinSpan()  # a mix keeps the union's vectors farther than η from the span of those before
    loop = projectron_range
    threaded = True  # --threads N: the factor's products on N threads (projection.py), the same model

    def _state_arrays(self) -> dict:
        """The slot arrays, and the threads' (none for one): their shared control array (sync.py) and
        an array of each worker's own (projection.run_job), kept while their number and size stay."""
        workers = self.threads - 1
        shape = (workers, self.support.capacity) if workers else (0, 0)
        if getattr(self, "_own", None) is None or self._own.shape != shape:
            self._own = np.zeros(shape)
            self._control = np.zeros(sync.CONTROL if workers else 0, np.int64)
        return self.slot | {"own": self._own, "control": self._control}

    def _learn_range(self, rows, start: int) -> int:
        if self.threads <= 1:
            return super()._learn_range(rows, start)
        S, K, book, st, h = self.loop_args()
        with sync.Workers(self.threads - 1, factor_worker, (st.kinv_factor, st.krow, st.z, st.own), st.control):
            return type(self).loop(S, K, rows, start, book, st, h)

    @classmethod
    def refuse_degenerate(cls, kernel_kind, params):
        # see the module docstring: with S empty ‖δ_t‖ = √k(x_t, x_t), which rbf makes 1 for every x
        if kernel_kind == "rbf" and params["eta"] >= 1.0:
            raise ValueError(
                f"{cls.name}: --eta must be < 1 with the rbf kernel, got {params['eta']}: on an empty "
                "support set ‖δ‖ = √k(x,x) = 1 ≤ η, so no support vector is ever added and the model "
                "learns nothing"
            )


@register
class ProjectronPlusPlus(Projectron):
    name = "projectron++"
    summary = (
        "Projectron that also updates on margin errors 0 < y f < 1: Fig. 5's projected τ step, or "
        "--margin-step projectron"
    )
    paper = (
        "Orabona, Keshet, Caputo, JMLR 2009, Fig. 5 and §4; --margin-step projectron: Liao et al., AAAI 2024, "
        "its released code"
    )
    params = (ETA, MARGIN_STEP)
    weighting = "the cost C = w of the update: a mistake adds or projects w y k(x, ·), a margin error's τ ≤ w"
