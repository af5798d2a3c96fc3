"""ALMA₂, Gentile's Approximate Large Margin Algorithm with the 2-norm (JMLR 2001), kernelised, and
its bounded version by projection (Orabona, Keshet, Caputo, JMLR 2009, §6, Theorem 7).

ALMA₂(α; B, C), with x̂ = x/‖x‖ (‖x‖² = k(x, x)) and k the number of updates so far plus one:
    if y f(x̂) ≤ (1 − α) B/√k:   f' = f + η_k y k(x̂, ·),  η_k = C/√k;   f ← f'/max(1, ‖f'‖);   k ← k + 1
The norm ‖f‖² is kept incrementally (‖f + η y x̂‖² = ‖f‖² + 2η y f(x̂) + η²).  Defaults α = 0, B = 1,
C = √2 − 1 satisfy C² + 2(1 − α)BC = 1, the condition of Theorem 7 (and of Gentile's Theorem 3);
they are DOGMA's defaults, which the Projectron paper's experiments used.

`projectron-alma2` (§6): f'_t is ALMA₂'s hypothesis after its update, normalisation included; when
the projection error ‖δ_t‖ = ‖f'_t − P_{t−1} f'_t‖ = (η_k/N)‖x̂ − P x̂‖ is at most η (or x lies in the
span numerically, as in the Projectron), f_t = P_{t−1} f'_t = (f + η_k y P x̂)/N and no support vector
is added.  ‖δ_t‖ carries the step η_k = C/√k, so η acts on that scale: once η_k/N falls below η every
update is projected and the support set stops growing, which is how Theorem 7 bounds it.  Points with k(x, x) = 0
cannot be normalised and are skipped (never an update).

The first support vector follows the same rule (§6 with S_0 = ∅).  While S is empty f = 0, so every
point with k(x, x) > 0 is an update (its margin 0 is ≤ (1 − α)B/√k), the projection of x̂ onto the
empty span is 0 and ‖f'‖ = η_k: ‖δ_t‖ = η_k/max(1, η_k) = min(C/√k, 1).  That is largest at the first
update, min(C, 1), and only shrinks as k grows (a projected update counts in k).  So with
η ≥ min(C, 1) nothing is ever added and f stays 0 whatever the kernel and the data (x̂ is
normalised): `refuse_degenerate` refuses it before any data is read.  With η < min(C, 1) the first
point with k(x, x) > 0 is added.  (Theorem 7's C² + 2(1 − α)BC = 1 makes C ≤ 1, so its η < C.)
"""

from __future__ import annotations

import math


from ...numerics._jit import njit
from ...numerics.kernels import self_kernel
from ..learner import (
    give_answer,
    MARGIN_UPDATES,
    MISTAKES,
    NO_MATRIX,
    NO_VECTOR,
    PROJECTIONS,
    KernelLearner,
    loop_arrays,
    new_coefficient,
    open_round,
    touch,
)
from ..mixing import Unmixable
from ...base.params import ETA, POSITIVE, UNIT, number
from ...numerics.projection import DEPENDENCE_TOL, grow_inverse, project
from ...numerics.gram import inverse_of_support
from ...base.registry import register
from ...numerics.support import COUNT, sv_fits, sv_put

ALMA_ALPHA = number("alma_alpha", 0.0, "ALMA₂'s margin fraction α ∈ [0, 1] (Gentile 2001)", UNIT)
ALMA_B = number("alma_b", 1.0, "ALMA₂'s margin scale B > 0 (Gentile 2001)", POSITIVE)
ALMA_C = number("alma_c", math.sqrt(2) - 1, "ALMA₂'s step scale C > 0 (Gentile 2001)", POSITIVE)

NORM2, UPDATES_PLUS_ONE = 0, 1  # indices in `scalars`


@njit(cache=True)
def alma_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, scalars = st.alpha, st.krow, book.scalars
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        if yt * f <= 0.0:
            counters[MISTAKES] += 1
        kxx = self_kernel(K, sq)
        if kxx <= 0.0:
            continue
        norm_x = math.sqrt(kxx)
        k = scalars[UPDATES_PLUS_ONE]
        margin = yt * f / norm_x
        if margin > (1.0 - h.alma_alpha) * h.alma_b / math.sqrt(k):
            continue
        if yt * f > 0.0:
            counters[MARGIN_UPDATES] += 1
        step = h.alma_c / math.sqrt(k)
        grown = scalars[NORM2] + 2.0 * step * margin + step * step  # ‖f'‖² before normalising
        scale = max(1.0, math.sqrt(grown))
        projected = False
        if h.projecting:
            delta2, pk2 = project(st.kinv, st.krow, st.d, n, kxx)
            dependent = delta2 <= DEPENDENCE_TOL * kxx
            if dependent or step / scale * math.sqrt(delta2 / kxx) <= h.eta:
                projected = True
                for i in range(n):
                    touch(alpha, st.avg_sum, st.avg_stamp, i, rnd)
                    alpha[i] += step * yt * st.d[i] / norm_x
                grown = scalars[NORM2] + 2.0 * step * margin + step * step * pk2 / kxx
                counters[PROJECTIONS] += 1
            else:
                grow_inverse(st.kinv, st.d, n, delta2)
        if not projected:
            sv_put(S, n, idx, val, sq)
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, step * yt / norm_x, rnd)
        if scale > 1.0:
            for i in range(S.meta[COUNT]):
                touch(alpha, st.avg_sum, st.avg_stamp, i, rnd)
                alpha[i] /= scale
        scalars[NORM2] = grown / (scale * scale)
        scalars[UPDATES_PLUS_ONE] = k + 1.0
    return y.shape[0]


@register
class Alma2(KernelLearner):
    name = "alma2"
    summary = "ALMA₂: normalised margin updates with a decreasing step and projection onto the unit ball"
    paper = "Gentile, JMLR 2001; kernel form as in Orabona, Keshet, Caputo, JMLR 2009, §6"
    params = (ALMA_ALPHA, ALMA_B, ALMA_C)
    n_scalars = 2
    constants = {"projecting": False, "eta": 0.0}
    mixing = Unmixable("its normalised hypothesis and step follow one learner's own count of updates")
    loop = alma_range

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.scalars[UPDATES_PLUS_ONE] = 1.0

    def _state_arrays(self):
        # plain ALMA₂ keeps no Gram inverse: the loop gets empty stand-ins it never touches
        return self.slot | {"kinv": NO_MATRIX, "d": NO_VECTOR}


@register
class ProjectronAlma2(Alma2):
    name = "projectron-alma2"
    summary = "ALMA₂ bounded by projection: project the update when ‖δ‖ ≤ η, as the Projectron does"
    paper = "Orabona, Keshet, Caputo, JMLR 2009, §6, Theorem 7"
    params = (ALMA_ALPHA, ALMA_B, ALMA_C, ETA)
    slot_arrays = KernelLearner.slot_arrays | {"kinv": "square", "d": "work"}
    rebuilt = {"kinv": inverse_of_support}
    constants = {"projecting": True}

    def _state_arrays(self):
        return self.slot

    @classmethod
    def refuse_degenerate(cls, kernel_kind, params):
        # see the module docstring: the first update's ‖δ‖ is min(C, 1), later ones are smaller
        bound = min(params["alma_c"], 1.0)
        if params["eta"] >= bound:
            raise ValueError(
                f"{cls.name}: --eta must be < min(C, 1) = {bound} (C: --alma-c), got {params['eta']}: "
                "on an empty support set the first update's ‖δ‖ = min(C, 1) ≤ η and later ones are "
                "smaller, so no support vector is ever added and the model learns nothing"
            )
