"""Projectron and Projectron++ (Orabona, Keshet, Caputo, JMLR 2009, Figs. 2, 4 and 5).

On a mistake the Perceptron update y_t k(x_t, ·) is projected onto the span of the current
support set when the projection error ‖δ_t‖ is at most η; otherwise x_t joins the support set.
The Gram inverse K⁻¹ of the support set is kept by the block-inverse update of Fig. 4, so a round
costs O(|S|²) and nothing is ever inverted afresh.

Choices where the paper leaves room (each is tested against the reference in tests/):
- η is compared with the *norm* ‖δ_t‖, as the paper writes (§3.1, Fig. 2).  DOGMA, which ran the
  paper's experiments, compares the squared norm; its η is our η².
- Numerical dependence: when ‖δ_t‖² ≤ DEPENDENCE_TOL · k(x_t, x_t), x_t is treated as lying in
  the span (‖δ_t‖ = 0) whatever η, because adding it would make K numerically singular and the
  1/‖δ_t‖² of Fig. 4 would blow up.  This also covers duplicate points with η = 0.
- Projectron++ margin errors are 0 < y_t f_{t-1}(x_t) < 1 (§4; Fig. 5 writes ≤ 1, where the
  loss is 0 and τ_t would be 0 anyway).  The update is taken when ℓ_t ≥ ‖δ_t‖/η, with
  τ_t = min(ℓ_t/‖Pk‖², 2(ℓ_t − ‖δ_t‖/η)/‖Pk‖², 1) and ‖Pk‖² = k_tᵀ d*.  With η = 0 only
  exactly-dependent points (‖δ_t‖ = 0) give margin updates.  Margin updates never add a
  support vector.
- The first support vector follows the paper's rule too (Fig. 2, with the projection of Fig. 4 onto
  the empty span of S_0 = ∅): that projection is 0, so δ_t = −y_t k(x_t, ·) and ‖δ_t‖ = √k(x_t, x_t),
  and x_t is added only when √k(x_t, x_t) > η.  Until something is added f = 0, so every round is a
  mistake (y f = 0) and Projectron++ meets no margin error.  The rbf kernel has k(x, x) = 1 for
  every x: with η ≥ 1 nothing is ever added, which `refuse_degenerate` refuses before any data is
  read.  With the poly and linear kernels it depends on the data's norms: a run that ends with no
  support vector gets a warning (pipeline.support_warnings).

Speed: `project` is compiled with fastmath reassoc/contract only (no assumptions about NaN or inf),
so the O(|S|²) product d = K⁻¹k and ‖Pk‖² are summed in SIMD order rather than left to right:
about 2.6× faster on a9a (bench/).  Sums differ from sequential ones by rounding only, the order
is fixed for a given |S| (so resume and chunking stay bit for bit), and the decisions still match
the reference implementations exactly (tests/test_algorithms.py, tests/test_alma.py).
"""

from __future__ import annotations

import math

from .._jit import njit
from ..kernels import self_kernel
from ..learner import (EXAMPLES, MARGIN_UPDATES, MISTAKES, PROJECTIONS, KernelLearner, new_coefficient,
                       score_example, touch)
from ..params import ETA
from ..registry import register
from ..support import COUNT, sv_fits, sv_put

DEPENDENCE_TOL = 1e-10



@register
class Projectron(KernelLearner):
    name = "projectron"
    summary = "Perceptron that projects instead of adding when ‖δ‖ ≤ η; bounded support set"
    paper = "Orabona, Keshet, Caputo, JMLR 2009, Figs. 2 and 4"
    params = (ETA,)
    slot_arrays = KernelLearner.slot_arrays | {"kinv": "square", "d": "work"}
    plusplus = False

    @classmethod
    def refuse_degenerate(cls, kernel_kind, params):
        # see the module docstring: with S empty ‖δ_t‖ = √k(x_t, x_t), which rbf makes 1 for every x
        if kernel_kind == "rbf" and params["eta"] >= 1.0:
            raise ValueError(f"{cls.name}: --eta must be < 1 with the rbf kernel, got {params['eta']}: on an empty "
                             "support set ‖δ‖ = √k(x,x) = 1 ≤ η, so no support vector is ever added and the model "
                             "learns nothing")

    def _learn_range(self, indptr, indices, values, y, start):
        s = self.slot
        return projectron_range(self.support.arrays, *self.kernel.args(), s["alpha"], s["avg_sum"], s["avg_stamp"],
                                s["kinv"], s["krow"], s["d"],
                                indptr, indices, values, y, start, self.scratch, self.counters,
                                self.hyper["eta"], self.plusplus)


@register
class ProjectronPlusPlus(Projectron):
    name = "projectron++"
    summary = "Projectron with projected updates on margin errors (0 < y f < 1)"
    paper = "Orabona, Keshet, Caputo, JMLR 2009, Fig. 5 and §4"
    plusplus = True


@njit(cache=True, fastmath={"reassoc", "contract"})
def project(kinv, krow, d, n, kxx):
    """d = K⁻¹ k_t (eq. 7); returns (‖δ_t‖², ‖P k‖²) with ‖δ_t‖² = k(x,x) − k_tᵀ d (eq. 8)."""
    pk2 = 0.0
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += kinv[i, j] * krow[j]
        d[i] = s
        pk2 += krow[i] * s
    return kxx - pk2, pk2


@njit(cache=True)
def grow_inverse(kinv, d, n, delta2):
    """Fig. 4: K_t⁻¹ = [K_{t−1}⁻¹ 0; 0 0] + (1/‖δ‖²) [d; −1][dᵀ −1]."""
    inv = 1.0 / delta2
    for i in range(n):
        di = d[i] * inv
        for j in range(n):
            kinv[i, j] += di * d[j]
        kinv[i, n] = -di
        kinv[n, i] = -di
    kinv[n, n] = inv


@njit(cache=True)
def projectron_range(S, code, gamma, coef0, degree, alpha, avg_sum, avg_stamp, kinv, krow, d, indptr, indices, values, y, start,
                     scratch, counters, eta, plusplus):
    n_examples = indptr.shape[0] - 1
    for t in range(start, n_examples):
        lo, hi = indptr[t], indptr[t + 1]
        if not sv_fits(S, hi - lo):
            return t
        idx = indices[lo:hi]
        val = values[lo:hi]
        f, sq = score_example(S, code, gamma, coef0, degree, alpha, krow, scratch, idx, val)
        n = S.meta[COUNT]
        counters[EXAMPLES] += 1
        rnd = counters[EXAMPLES]
        yt = y[t]
        margin = yt * f
        if margin > 0.0 and not (plusplus and margin < 1.0):
            continue
        kxx = self_kernel(code, gamma, coef0, degree, sq)
        delta2, pk2 = project(kinv, krow, d, n, kxx)
        dependent = delta2 <= DEPENDENCE_TOL * kxx
        if margin <= 0.0:  # prediction mistake: Fig. 2
            counters[MISTAKES] += 1
            if dependent or math.sqrt(delta2) <= eta:
                for i in range(n):
                    touch(alpha, avg_sum, avg_stamp, i, rnd)
                    alpha[i] += yt * d[i]
                counters[PROJECTIONS] += 1
            else:
                grow_inverse(kinv, d, n, delta2)
                sv_put(S, n, idx, val, sq)
                new_coefficient(alpha, avg_sum, avg_stamp, n, yt, rnd)
        else:  # margin error of Projectron++: Fig. 5
            if pk2 <= 0.0:
                continue  # nothing of k(x_t, ·) lies in the span: the projected update is zero
            loss = 1.0 - margin
            if dependent:
                penalty = 0.0
            elif eta > 0.0:
                penalty = math.sqrt(delta2) / eta
            else:
                continue  # η = 0 projects only points in the span
            if loss < penalty:
                continue
            tau = min(loss / pk2, 2.0 * (loss - penalty) / pk2, 1.0)
            for i in range(n):
                touch(alpha, avg_sum, avg_stamp, i, rnd)
                alpha[i] += yt * tau * d[i]
            counters[MARGIN_UPDATES] += 1
    return n_examples
