"""Multiclass Perceptron, Passive-Aggressive and Random Budget Perceptron with the Crammer–Singer
max-score update (Crammer and Singer 2003; Projectron paper §7).

With r = argmax_{i≠y} f_i(x) (the highest-scoring wrong class, ties to the class seen first):
- `mc-perceptron`: on a mistake f_y(x) ≤ f_r(x), add x_t with +1 in class y and −1 in class r.
- `mc-pa`: on the multiclass hinge loss ℓ = max(0, 1 − (f_y − f_r)) > 0, add x_t with ±τ,
  τ = ℓ / ‖k((x,y),·) − k((x,r),·)‖² = ℓ / (2 k(x,x)) (Crammer et al. JMLR 2006, §7, max-loss
  multiclass PA with the per-class prototype kernel δ_{yy'}k(x,x')).  A point with k(x,x) = 0
  cannot change f and is skipped.
- `mrbp`: the Multiclass Random Budget Perceptron of the Projectron paper §7: the `mc-perceptron`
  update, but with B support vectors stored a uniformly random one (the model's splitmix64 stream)
  is discarded and the newcomer takes its slot, as `rbp` does.

These are separate names from the binary `perceptron` / `pa`, whose models and resume stay as they
were; on two-class data the multiclass ones learn two prototypes (f_+ − f_− is the binary f with
doubled steps).
"""

from __future__ import annotations

from .._jit import njit
from ..kernels import self_kernel
from ..learner import EXAMPLES, MARGIN_UPDATES, MISTAKES
from ..multiclass import MulticlassLearner, class_scores, rival
from ..params import BUDGET
from ..registry import register
from ..rng import randbelow
from ..support import COUNT, sv_fits, sv_put

PERCEPTRON, PA, RBP = 0, 1, 2


class _MaxScore(MulticlassLearner):
    variant = PERCEPTRON

    def _learn_range(self, indptr, indices, values, y, start):
        return max_score_range(self.support.arrays, *self.kernel.args(), self.coef, self.scale, self.n_classes,
                               self.scores, self.slot["krow"], indptr, indices, values, y, start, self.scratch,
                               self.counters, self.rng_state, self.variant, self.hyper.get("budget", 0))


@register
class MulticlassPerceptron(_MaxScore):
    name = "mc-perceptron"
    summary = "multiclass kernel Perceptron, max-score update (+x to the true class, −x to the best wrong one)"
    paper = "Crammer and Singer, JMLR 2003; Projectron paper §7"
    variant = PERCEPTRON


@register
class MulticlassPassiveAggressive(_MaxScore):
    name = "mc-pa"
    summary = "multiclass Passive-Aggressive, max-score update with τ = ℓ/(2k(x,x)); unbounded"
    paper = "Crammer et al., JMLR 2006, §7 (PA, max-loss multiclass)"
    variant = PA


@register
class MulticlassRandomBudgetPerceptron(_MaxScore):
    name = "mrbp"
    summary = "Multiclass Random Budget Perceptron: mc-perceptron evicting a random SV when B are stored"
    paper = "Orabona, Keshet, Caputo, JMLR 2009, §7 (MRBP)"
    params = (BUDGET,)
    evicts = True
    variant = RBP


@njit(cache=True)
def max_score_range(S, code, gamma, coef0, degree, coef, scale, ncls, f, krow, indptr, indices, values, y, start,
                    scratch, counters, rng_state, variant, budget):
    n_examples = indptr.shape[0] - 1
    for t in range(start, n_examples):
        lo, hi = indptr[t], indptr[t + 1]
        if not sv_fits(S, hi - lo):
            return t
        idx = indices[lo:hi]
        val = values[lo:hi]
        yt = y[t]
        if yt + 1 > ncls[0]:
            ncls[0] = yt + 1
        m = ncls[0]
        sq = class_scores(S, code, gamma, coef0, degree, coef, scale[0], m, krow, scratch, idx, val, f)
        counters[EXAMPLES] += 1
        r = rival(f, m, yt)
        if r < 0:
            continue
        margin = f[yt] - f[r]
        if margin <= 0.0:
            counters[MISTAKES] += 1
        if variant == PA:
            if margin >= 1.0:
                continue
            kxx = self_kernel(code, gamma, coef0, degree, sq)
            if kxx <= 0.0:
                continue
            tau = (1.0 - margin) / (2.0 * kxx)
            if margin > 0.0:
                counters[MARGIN_UPDATES] += 1
        else:
            if margin > 0.0:
                continue
            tau = 1.0
        n = S.meta[COUNT]
        slot = n
        if variant == RBP and n >= budget:
            slot = randbelow(rng_state, budget)
        sv_put(S, slot, idx, val, sq)
        for i in range(coef.shape[1]):
            coef[slot, i] = 0.0
        coef[slot, yt] = tau / scale[0]
        coef[slot, r] = -tau / scale[0]
    return n_examples
