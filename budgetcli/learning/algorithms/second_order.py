"""The second-order Perceptron and its budget versions:

- `sop`, the kernel Second-Order Perceptron (Cesa-Bianchi, Conconi, Gentile, "A Second-Order
  Perceptron Algorithm", SIAM J. Comput. 34(3), 2005), parameter a > 0, unbounded;
- `rbsop` / `lbsop` (Cavallanti, Cesa-Bianchi, Gentile, MLJ 2007, §4 experiments): the same with a
  budget B; on a mistake with B support vectors stored, discard one chosen at random (rbsop) or the
  oldest (lbsop), then add x_t.  The paper (like its §4 experiments, a = 1) gives no pseudo-code; it
  defines them as SOP "in which the support to be discarded is chosen ..." among the current supports.

Kernel form.  SOP keeps the examples of its mistakes, X = [x_1 .. x_k] with labels y, v = X y, and
predicts on x_t with the current instance included in the correlation matrix:
    ŷ_t = sign(v_kᵀ (aI + X Xᵀ + x_t x_tᵀ)⁻¹ x_t).
With S = [X, x_t], v = S [y; 0] and (aI + S Sᵀ)⁻¹ S = S (aI + SᵀS)⁻¹, this is
    v_kᵀ (aI + S Sᵀ)⁻¹ x_t = [y; 0]ᵀ (aI + G_t)⁻¹ k_t,        G_t = SᵀS,  k_t = G_t e_last,
the kernel form of the SIAM paper.  Writing A = aI + K (K the Gram matrix of the support set, so
G_t = [[K, k], [kᵀ, k(x_t, x_t)]]) and s = a + k(x_t, x_t) − kᵀA⁻¹k > 0 (a Schur complement of
aI + G_t ⪰ aI, so s ≥ a), block inversion gives
    [y; 0]ᵀ (aI + G_t)⁻¹ k_t = (a / s) · g(x_t),      g(x) = Σ_i w_i k(x_i, x),  w = A⁻¹ y.
a/s > 0, so sign(SOP margin) = sign(g): the learner keeps w (in `alpha`) and scores with g, a plain
kernel expansion (as DOGMA's k_sop_train does).  `predict --scores` prints g, SOP's margin up to the
positive, x-dependent factor a/s(x); predictions and mistakes are exactly SOP's, and the averaged
hypothesis of online-to-batch averages g.  A mistake is y g ≤ 0 (a zero score is a mistake, as
everywhere in the package).

Incremental inverse, O(|S|²) per update, never a fresh inverse:
- add x_t (block update, as Projectron's `grow_inverse` with a on the diagonal): d = A⁻¹k,
  A'⁻¹ = [[A⁻¹ + d dᵀ/s, −d/s], [−dᵀ/s, 1/s]], and w' = [w − d c; c] with c = (y_t − g(x_t))/s;
- evict slot r (rank-one Schur downdate): A₋ᵣ⁻¹ = P − p pᵀ/π with P = A⁻¹ without row and column
  r, p = its column r, π = A⁻¹[r, r]; and w₋ᵣ = w − p w_r/π (since w = A⁻¹y).
The newcomer takes the evicted slot, so LBSOP's oldest support vector is slot (#additions mod B)
and its eviction is O(1) to find, as in `lbp`; RBSOP draws from the model's splitmix64 stream.
The hypothesis is fixed by the support set alone (w = A⁻¹y), so evicting before adding is the
same as adding before evicting; we evict first and compute g and s on the remaining set.
A = aI + K has eigenvalues in [a, a + |S| max k(x, x)], so the inverse stays well conditioned.
"""

from __future__ import annotations


from ...numerics._jit import njit
from ...numerics.kernels import self_kernel
from ..learner import (
    give_answer,
    MISTAKES,
    OLDEST,
    RANDOM,
    UNBOUNDED,
    KernelLearner,
    evict_from_inverse,
    loop_arrays,
    new_coefficient,
    open_round,
    retire,
    touch,
    victim,
)
from ..mixing import Unmixable
from ...base.params import BUDGET, POSITIVE, number
from ...numerics.projection import project
from ...numerics.gram import ridge_inverse_of_support
from ...base.registry import register
from ...numerics.support import sv_fits, sv_put

SOP_A = number(
    "sop_a",
    1.0,
    "a > 0 of the second-order Perceptron, the ridge of (aI + K)^-1 (Cesa-Bianchi, "
    "Conconi, Gentile 2005; a = 1 in the MLJ 2007 experiments)",
    POSITIVE,
)


@njit(cache=True)
def sop_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    alpha, avg_sum, avg_stamp, ainv, d, krow = st.alpha, st.avg_sum, st.avg_stamp, st.ainv, st.d, st.krow
    for t in range(start, y.shape[0]):
        if not sv_fits(S, indptr[t + 1] - indptr[t]):
            return t
        idx, val, yt, g, sq, n, rnd = open_round(S, K, indptr, indices, values, y, t, scratch, counters, alpha, krow)
        give_answer(answers, t, g)
        if yt * g > 0.0:
            continue
        additions = counters[MISTAKES]  # every mistake adds one support vector
        counters[MISTAKES] += 1
        slot = n
        if h.policy != UNBOUNDED and n >= h.budget:
            slot = victim(h.policy, book.rng_state, h.budget, additions)
            retire(S, book, alpha, avg_sum, avg_stamp, slot, rnd)
            evict_from_inverse(ainv, alpha, avg_sum, avg_stamp, n, slot, rnd)
            g = 0.0  # g(x_t) on the remaining support set
            for i in range(n):
                if i != slot:
                    g += alpha[i] * st.krow[i]
        kxx = self_kernel(K, sq)
        # d = A⁻¹k and k(x,x) − kᵀA⁻¹k; row and column `slot` of ainv are zero when it was just evicted
        rest, _ = project(ainv, st.krow, d, n, kxx)
        inv_s = 1.0 / (h.sop_a + rest)
        c = (yt - g) * inv_s
        for i in range(n):
            if i != slot:
                touch(alpha, avg_sum, avg_stamp, i, rnd)
                alpha[i] -= d[i] * c
            di = d[i] * inv_s
            for j in range(n):
                ainv[i, j] += di * d[j]
        for i in range(n):
            if i != slot:
                ainv[i, slot] = -d[i] * inv_s
                ainv[slot, i] = -d[i] * inv_s
        ainv[slot, slot] = inv_s
        sv_put(S, slot, idx, val, sq)
        new_coefficient(alpha, avg_sum, avg_stamp, slot, c, rnd)
    return y.shape[0]


@register
class SecondOrderPerceptron(KernelLearner):
    name = "sop"
    summary = "kernel second-order Perceptron: predict with (aI + K)^-1 over the mistakes and x_t; unbounded"
    paper = "Cesa-Bianchi, Conconi, Gentile, SIAM J. Comput. 34(3), 2005"
    params = (SOP_A,)
    slot_arrays = KernelLearner.slot_arrays | {"ainv": "square", "d": "work"}
    rebuilt = {"ainv": ridge_inverse_of_support("sop_a")}
    constants = {"policy": UNBOUNDED, "budget": 0}
    # g = Σ w_i k is additive, but w = (aI + K)⁻¹y is tied to the labels of its own support set: the
    # average of two is no second-order model of the union, and the updates assume it is
    mixing = Unmixable(
        "its coefficients (aI + K)⁻¹y belong to its own support set's labels; an average is no such model"
    )
    loop = sop_range


@register
class RandomizedBudgetSOP(SecondOrderPerceptron):
    name = "rbsop"
    summary = "second-order Perceptron on a budget: on a mistake with B stored, evict a random support vector"
    paper = "Cavallanti, Cesa-Bianchi, Gentile, Machine Learning 2007, §4"
    params = (SOP_A, BUDGET)
    evicts = True
    constants = {"policy": RANDOM}


@register
class LeastRecentBudgetSOP(RandomizedBudgetSOP):
    name = "lbsop"
    summary = "second-order Perceptron on a budget: on a mistake with B stored, evict the oldest support vector"
    constants = {"policy": OLDEST}
