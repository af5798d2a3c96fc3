"""The self-tuned Forgetron (Dekel, Shalev-Shwartz, Singer, "The Forgetron: A Kernel-Based
Perceptron on a Budget", SIAM J. Comput. 37(5), 2008), the Projectron paper's baseline (§7).

On a mistake, add y_t k(x_t, ·) (Perceptron step).  If that makes B + 1 support vectors, shrink
the whole hypothesis by φ_t and then remove the oldest support vector r:

    φ_t = max{φ ∈ (0, 1] : Ψ(φσ, φμ) + Q ≤ (15/32) M}
    Ψ(λ, μ) = λ² + 2λ − 2λμ,  σ = |α_r|,  μ = y_r f'(x_r)  (f' the hypothesis after the Perceptron step)
    Q ← Q + Ψ(φ_t σ, φ_t μ)     (the running "damage"),  M = mistakes so far, this one included.

Ψ(φσ, φμ) + Q − (15/32)M = aφ² + bφ + c with a = σ² − 2σμ, b = 2σ, c = Q − (15/32)M < 0 (Q stays
below (15/32)M by construction), so φ_t is found in closed form (`shrink_factor`).  DOGMA, which ran
the Projectron paper's experiments, solves the same quadratic.  The newcomer takes the evicted
slot, so the oldest support vector is always slot (#additions mod B), as in `lbp`.

Sharded training (distributed.py) mixes Forgetrons; the paper has one learner, so two choices are ours:

- The mixed damage is the shards' pooled damage per mistake times the mixed mistake count:
  Q = (Σ_w Q_w)·M / Σ_w M_w over the shards that learned since the last mix.  Each shard keeps
  Q_w ≤ (15/32)M_w, so the mix does too, and the quadratic of the next shrink still has c < 0.  Adding
  up what each shard's Q grew by since the last mix (as the counters are) does not: shards that each
  spent their slack since the mix would leave Q above (15/32)M, where no φ ∈ (0, 1] is feasible.  One
  shard keeps its own Q exactly (M / M_1 = 1).
- Eviction goes on round the slots from M mod B, as lbp's: the mixed support set (a union brought back
  to B by the compression) carries no ages.
"""

from __future__ import annotations

import math

import numpy as np

from ...numerics._jit import njit
from ..learner import MISTAKES, KernelLearner, loop_arrays, new_coefficient, open_round, retire, touch, give_answer
from ..mixing import Mixing
from ...base.params import BUDGET
from ...base.registry import register
from ...numerics.support import sv_fits, sv_kernel_row, sv_put

Q = 0  # index of the damage in `scalars`


@njit(cache=True)
def shrink_factor(a, b, c):
    """The largest φ ∈ (0, 1] with aφ² + bφ + c ≤ 0, for b ≥ 0 and c < 0 (so small φ are feasible).
    b = 0 is σ = 0, hence a = 0: an evicted vector whose coefficient is 0, which only a mix over shards
    makes (identical vectors of opposite labels merged); every φ is feasible."""
    if a == 0.0:
        return 1.0 if b == 0.0 else min(1.0, -c / b)
    d = b * b - 4.0 * a * c
    if a > 0.0:  # feasible between the roots; the upper root is positive since c < 0
        return min(1.0, (-b + math.sqrt(d)) / (2.0 * a))
    # a < 0: feasible outside the roots (both positive, or none when d ≤ 0)
    if d <= 0.0:
        return 1.0
    lower = (-b + math.sqrt(d)) / (2.0 * a)
    upper = (-b - math.sqrt(d)) / (2.0 * a)
    return 1.0 if upper <= 1.0 else min(1.0, lower)


@njit(cache=True)
def forgetron_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, krow, budget = st.alpha, st.krow, h.budget
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, f, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, f)
        if yt * f > 0.0:
            continue
        additions = counters[MISTAKES]
        counters[MISTAKES] += 1
        if n < budget:
            sv_put(S, n, idx, val, sq)
            new_coefficient(alpha, st.avg_sum, st.avg_stamp, n, yt, rnd)
            st.label[n] = yt
            continue
        r = additions % budget  # the oldest support vector
        # f'(x_r) = f(x_r) + y_t k(x_t, x_r), with f(x_r) from x_r's kernel row
        sv_kernel_row(S, K, book.scratch, r, st.krow_old)
        f_r = yt * st.krow[r]
        for j in range(n):
            f_r += alpha[j] * st.krow_old[j]
        sigma = abs(alpha[r])
        mu = st.label[r] * f_r
        phi = shrink_factor(
            sigma * sigma - 2.0 * sigma * mu, 2.0 * sigma, book.scalars[Q] - 15.0 / 32.0 * counters[MISTAKES]
        )
        lam = phi * sigma
        book.scalars[Q] += lam * lam + 2.0 * lam - 2.0 * lam * phi * mu
        for j in range(n):
            touch(alpha, st.avg_sum, st.avg_stamp, j, rnd)
            alpha[j] *= phi
        retire(S, book, alpha, st.avg_sum, st.avg_stamp, r, rnd)
        sv_put(S, r, idx, val, sq)
        new_coefficient(alpha, st.avg_sum, st.avg_stamp, r, yt * phi, rnd)
        st.label[r] = yt
    return y.shape[0]


class ForgetronMixing(Mixing):
    def scalars(self, cls, shard_scalars, shard_counters, counters):
        """Q = (Σ_w Q_w)·M / Σ_w M_w: the shards' pooled damage per mistake (the module's docstring)."""
        mistakes = sum(float(c[MISTAKES]) for c in shard_counters)
        damage = sum(float(s[Q]) for s in shard_scalars)
        return np.array([damage * (float(counters[MISTAKES]) / mistakes) if mistakes else 0.0])


@register
class Forgetron(KernelLearner):
    name = "forgetron"
    summary = (
        "self-tuned Forgetron: on a mistake over budget, shrink f by φ_t from the damage bound, "
        "then evict the oldest support vector"
    )
    paper = "Dekel, Shalev-Shwartz, Singer, SIAM J. Comput. 37(5), 2008 (self-tuned); Projectron paper §7"
    params = (BUDGET,)
    slot_arrays = KernelLearner.slot_arrays | {"label": "vector", "krow_old": "work"}
    evicts = True
    n_scalars = 1
    loop = forgetron_range
    mixing = ForgetronMixing()
