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

Choices where the papers leave room:
- Weights (`train -w LABEL W` for the true class, a sample weight): `mc-perceptron` and `mrbp` add x_t
  with ±w, the update's size w, as the binary Perceptron family (perceptron.py).  `mc-pa` has no C to
  weigh (Crammer et al. 2006, §7's PA, as the binary `pa`) and takes no weights.
"""

from __future__ import annotations

from ...numerics._jit import njit
from ...numerics.kernels import self_kernel
from ..learner import MARGIN_UPDATES, MISTAKES, RANDOM, UNBOUNDED, example_weight, loop_arrays, victim
from ..multiclass import MulticlassLearner, open_class_round, retire_row, rival, set_row
from ...base.params import BUDGET
from ...base.registry import register
from ...numerics.support import COUNT, sv_fits, sv_put

PERCEPTRON, PA = 0, 1


@njit(cache=True)
def max_score_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    f, weights = st.scores, rows.weight
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, m, sq, rnd = open_class_round(S, K, indptr, indices, values, y, t, scratch, counters, st, answers)
        r = rival(f, m, yt)
        if r < 0:
            continue
        margin = f[yt] - f[r]
        if margin <= 0.0:
            counters[MISTAKES] += 1
        if h.variant == PA:
            if margin >= 1.0:
                continue
            kxx = self_kernel(K, sq)
            if kxx <= 0.0:
                continue
            tau = (1.0 - margin) / (2.0 * kxx)
            if margin > 0.0:
                counters[MARGIN_UPDATES] += 1
        else:
            if margin > 0.0:
                continue
            tau = example_weight(weights, t)
        n = S.meta[COUNT]
        slot = n
        if h.policy == RANDOM and n >= h.budget:
            slot = victim(h.policy, book.rng_state, h.budget, 0)
            retire_row(S, book, st, slot, m)
        sv_put(S, slot, idx, val, sq)
        set_row(st, slot, yt, tau / st.scale[0], r, -tau / st.scale[0])
    return y.shape[0]


@register
class MulticlassPerceptron(MulticlassLearner):
    name = "mc-perceptron"
    summary = "multiclass kernel Perceptron, max-score update (+x to the true class, −x to the best wrong one)"
    paper = "Crammer and Singer, JMLR 2003; Projectron paper §7"
    constants = {"variant": PERCEPTRON, "policy": UNBOUNDED, "budget": 0}
    weighting = "the update's size: a mistake adds ±w k(x, ·) to the true and the rival class"
    loop = max_score_range


@register
class MulticlassPassiveAggressive(MulticlassPerceptron):
    name = "mc-pa"
    summary = "multiclass Passive-Aggressive, max-score update with τ = ℓ/(2k(x,x)); unbounded"
    paper = "Crammer et al., JMLR 2006, §7 (PA, max-loss multiclass)"
    constants = {"variant": PA}
    weighting = None  # PA has no C to weigh (module docstring)


@register
class MulticlassRandomBudgetPerceptron(MulticlassPerceptron):
    name = "mrbp"
    summary = "Multiclass Random Budget Perceptron: mc-perceptron evicting a random SV when B are stored"
    paper = "Orabona, Keshet, Caputo, JMLR 2009, §7 (MRBP)"
    params = (BUDGET,)
    evicts = True
    constants = {"policy": RANDOM}
