"""Multiclass Projectron++ (Orabona, Keshet, Caputo, JMLR 2009, §5 with Fig. 5 and Theorem 6).

The structured kernel k((x, y), (x', y')) = δ_{yy'} k(x, x') gives each class its own prototype
f_c = Σ_{j ∈ S_c} α_j k(x_j, ·) over its own support set S_c, so a projection onto the span of S
splits into one projection per class, with one Gram inverse per class: O(m n²) memory and time
for m classes of n support vectors, not O(m² n²) (§5).

With r = argmax_{c≠y} f_c(x) and ℓ = max(0, 1 − (f_y(x) − f_r(x))), the update direction is
k((x,y),·) − k((x,r),·): +k(x,·) in class y and −k(x,·) in class r.  Its projection is
d_y = K_y⁻¹ k_y for class y and −d_r for class r, and ‖δ‖² = ‖δ_y‖² + ‖δ_r‖² (the two parts are
orthogonal).
- Mistake (f_y ≤ f_r): if ‖δ‖ ≤ η the projected update is taken, else x joins S_y (α = +1) and
  S_r (α = −1) — two support pairs, as the structured update adds two functions.
- Margin error (0 < f_y − f_r < 1): if ℓ ≥ ‖δ‖/η, f += τ (projected update) with
  τ = min(ℓ/‖a‖², 2(ℓ − ‖δ‖/η)/‖a‖², 1), ‖a‖² = k_yᵀd_y + k_rᵀd_r (Theorem 6's choice); never adds.

Choices (mirrored by tests/reference_multiclass.py):
- As in the binary Projectron, η bounds the norm ‖δ‖, and a part with ‖δ_c‖² ≤ 1e−10 k(x,x) lies in
  its class's span (‖δ_c‖ = 0).  When a mistake adds, such a part is projected instead of added
  (adding it would make K_c singular); the other part is added.
- A support pair belongs to one class; x is stored once per class it joined.
- The first support pairs follow the same rule: while S_y and S_r are empty both projections are 0,
  so δ is the whole update and ‖δ‖² = k(x,x) + k(x,x); x joins only when √(2k(x,x)) > η.  Until then
  every score is 0 and every round with two classes known is a mistake.  With the rbf kernel
  (k(x,x) = 1) η ≥ √2 adds nothing ever and is refused before any data is read (`refuse_degenerate`);
  1 ≤ η < √2 still learns, unlike the binary Projectron, because the update has two parts.
- Weights (`train -w LABEL W` for the true class, a sample weight): an example of weight w has the cost
  C = w of its update, as the binary Projectron++'s (projectron.py, §4's PA-I remark): a mistake's
  update is w(k((x,y),·) − k((x,r),·)) or its projection, and a margin error's τ ≤ w.  Which part is
  projected depends on x and the classes alone.  §5's label cost γ(y, y') is not taken, as there.
"""

from __future__ import annotations

import math

import numpy as np

from ...numerics._jit import njit
from ...numerics.kernels import self_kernel
from .. import statecheck
from ..learner import MARGIN_UPDATES, MISTAKES, PROJECTIONS, example_weight, loop_arrays
from ..mixing import Mixing
from ...base.modelfile import Member
from ..multiclass import MulticlassLearner, change, open_class_round, rival, set_row
from ...base.params import ETA
from ...numerics.projection import DEPENDENCE_TOL, exact_project, grow_inverse
from ...numerics.gram import spd_inverse
from ...base.registry import register
from ...numerics.support import COUNT, sv_fits, sv_put


@njit(cache=True)
def class_projection(kinv, members, n, krow, kc, d, kxx):
    """d = K_c⁻¹ k_c for one class (k_c gathered from the full kernel row); returns (‖δ_c‖², ‖P_c k‖²)."""
    # Not projection.project: that one is compiled with fastmath, whose reassociated sums moved this
    # learner's coefficients by ~1e-7 from the reference on ill-conditioned classes (tests/test_multiclass.py).
    for a in range(n):
        kc[a] = krow[members[a]]
    delta2, pk2 = exact_project(kinv, kc, d, n, kxx)
    if delta2 <= DEPENDENCE_TOL * kxx:
        delta2 = 0.0
    return delta2, pk2


@njit(cache=True)
def fits(S, st, indptr, t):
    """Room for round t: x_t twice in the support set, and one more member in every class."""
    if not (sv_fits(S, 2 * (indptr[t + 1] - indptr[t])) and S.meta[COUNT] + 2 <= S.start.shape[0]):
        return False
    fullest = 0
    for c in range(st.n_classes[0]):
        fullest = max(fullest, st.counts[c])
    return fullest + 1 <= st.members.shape[1]


@njit(cache=True)
def add_part(S, st, c, sign, d2, d, n, idx, val, sq):
    """One part (class c, coefficient `sign`: ±w, the example's weight) of a mistake's update: x_t joins
    S_c, or, when the part lies in the span of S_c, it is projected."""
    scale = st.scale[0]
    if d2 == 0.0:
        for a in range(n):
            change(st, st.members[c, a], c, sign * d[a] / scale)
        return
    j = S.meta[COUNT]
    grow_inverse(st.kinv[c], d, n, d2)
    sv_put(S, j, idx, val, sq)
    set_row(st, j, c, sign / scale, -1, 0.0)
    st.members[c, n] = j
    st.counts[c] = n + 1


@njit(cache=True)
def mc_projectron_range(S, K, rows, start, book, st, h):
    indptr, indices, values, y, scratch, counters = loop_arrays(rows, book)
    answers = rows.answers
    scale, f, krow, kc, dy, dr = st.scale, st.scores, st.krow, st.kc, st.dy, st.dr
    kinv, members, counts, eta, weights = st.kinv, st.members, st.counts, h.eta, rows.weight
    for t in range(start, y.shape[0]):
        if not fits(S, st, indptr, t):
            return t
        idx, val, yt, m, sq, rnd = open_class_round(S, K, indptr, indices, values, y, t, scratch, counters, st, answers)
        r = rival(f, m, yt)
        if r < 0:
            continue
        margin = f[yt] - f[r]
        if margin >= 1.0:
            continue
        kxx = self_kernel(K, sq)
        ny, nr = counts[yt], counts[r]
        d2y, pky = class_projection(kinv[yt], members[yt], ny, krow, kc, dy, kxx)
        d2r, pkr = class_projection(kinv[r], members[r], nr, krow, kc, dr, kxx)
        delta = math.sqrt(d2y + d2r)
        if margin <= 0.0:  # prediction mistake
            counters[MISTAKES] += 1
            wt = example_weight(weights, t)  # the cost C = w (module docstring)
            if delta <= eta:
                for a in range(ny):
                    change(st, members[yt, a], yt, wt * dy[a] / scale[0])
                for a in range(nr):
                    change(st, members[r, a], r, -(wt * dr[a] / scale[0]))
                counters[PROJECTIONS] += 1
                continue
            add_part(S, st, yt, wt, d2y, dy, ny, idx, val, sq)
            add_part(S, st, r, -wt, d2r, dr, nr, idx, val, sq)
        else:  # margin error: Fig. 5 with Theorem 6's τ
            pk2 = pky + pkr
            if pk2 <= 0.0:
                continue
            loss = 1.0 - margin
            if delta == 0.0:
                penalty = 0.0
            elif eta > 0.0:
                penalty = delta / eta
            else:
                continue
            if loss < penalty:
                continue
            tau = min(loss / pk2, 2.0 * (loss - penalty) / pk2, example_weight(weights, t))
            for a in range(ny):
                change(st, members[yt, a], yt, tau * dy[a] / scale[0])
            for a in range(nr):
                change(st, members[r, a], r, -(tau * dr[a] / scale[0]))
            counters[MARGIN_UPDATES] += 1
    return y.shape[0]


class PerClassMixing(Mixing):
    """A support vector serves one class (§5: x is stored once in class y, once in the rival's)."""

    def row_classes(self, arrays):
        """Each support pair's class, from the per-class member lists (a pair serves one class)."""
        owner = np.full(len(arrays["sv_indptr"]) - 1, -1, np.int64)
        for c, k in enumerate(arrays["class_counts"].tolist()):
            owner[arrays["class_members"][c, :k]] = c
        return owner

    def with_row_classes(self, arrays, classes, n_classes):
        """A mix's per-class support sets: class c's members are the union's pairs of class c, in slot
        order (a pair's class is its shard's); each class's Gram inverse is rebuilt from them (left out)."""
        counts = np.bincount(classes, minlength=n_classes)
        members = np.zeros((len(counts), int(counts.max(initial=0))), np.int64)
        for c in range(len(counts)):
            members[c, : counts[c]] = np.flatnonzero(classes == c)
        out = {k: v for k, v in arrays.items() if k != "class_kinv"}
        return out | {"class_counts": counts.astype(np.int64), "class_members": members}


@register
class MulticlassProjectronPlusPlus(MulticlassLearner):
    name = "mc-projectron++"
    summary = "multiclass Projectron++: kernel δ_{yy'}k(x,x'), one Gram inverse per class, projects when ‖δ‖ ≤ η"
    paper = "Orabona, Keshet, Caputo, JMLR 2009, §5 and Theorem 6"
    params = (ETA,)
    weighting = "the cost C = w of the update: a mistake adds or projects ±w k(x, ·), a margin error's τ ≤ w"
    loop = mc_projectron_range
    rebuilt = {"class_kinv": lambda self, name: self._rebuild_class_inverses()}
    mixing = PerClassMixing()

    @classmethod
    def refuse_degenerate(cls, kernel_kind, params):
        # see the module docstring: with empty classes ‖δ‖ = √(2k(x,x)), √2 for every x with rbf
        if kernel_kind == "rbf" and params["eta"] >= math.sqrt(2.0):
            raise ValueError(
                f"{cls.name}: --eta must be < √2 = {math.sqrt(2.0)} with the rbf kernel, got "
                f"{params['eta']}: on empty support sets ‖δ‖ = √(2k(x,x)) = √2 ≤ η, so no support "
                "vector is ever added and the model learns nothing"
            )

    def __init__(self, kernel, seed=0, **params):
        super().__init__(kernel, seed, **params)
        self.counts = np.zeros(self.coef.shape[1], np.int64)  # support pairs per class
        self._alloc_classes(self.coef.shape[1], 16)

    def _alloc_classes(self, classes: int, per_class: int) -> None:
        old = getattr(self, "kinv", None)
        kinv = np.zeros((classes, per_class, per_class))
        members = np.zeros((classes, per_class), np.int64)
        if old is not None:
            c, p = old.shape[0], old.shape[1]
            kinv[:c, :p, :p] = old
            members[:c, :p] = self.members
        counts = np.zeros(classes, np.int64)
        counts[: len(self.counts)] = self.counts
        self.kinv, self.members, self.counts = kinv, members, counts
        self.work = np.zeros((3, per_class))  # class row k_c, d_y, d_r

    def _grow_classes(self, m: int) -> None:
        super()._grow_classes(m)
        if self.coef.shape[1] > self.kinv.shape[0]:
            self._alloc_classes(self.coef.shape[1], self.kinv.shape[1])

    def _resize(self, capacity: int) -> None:
        super()._resize(capacity)
        fullest = int(self.counts.max()) if len(self.counts) else 0
        if fullest + 1 > self.kinv.shape[1]:
            self._alloc_classes(self.kinv.shape[0], max(fullest + 1, 2 * self.kinv.shape[1]))

    def _pool_room(self, nnz: int) -> int:
        return 2 * nnz  # a mistake may store x_t twice, once for each of the two classes it updates

    def _state_arrays(self):
        w = self.work
        return super()._state_arrays() | {
            "kc": w[0],
            "dy": w[1],
            "dr": w[2],
            "kinv": self.kinv,
            "members": self.members,
            "counts": self.counts,
        }

    def state(self):
        header, arrays = super().state()
        m = int(self.n_classes[0])
        p = int(self.counts[:m].max()) if m else 0
        arrays["class_counts"] = self.counts[:m].copy()
        arrays["class_members"] = self.members[:m, :p].copy()
        if "class_kinv" not in self.stale:
            arrays["class_kinv"] = self.kinv[:m, :p, :p].copy()
        return header, arrays

    @classmethod
    def saved_arrays(cls, header, members):
        out = super().saved_arrays(header, members)
        m = out["coef"][0][1]
        p = members["class_members"].shape[1] if len(members.get("class_members", Member(((),))).shape) == 2 else None
        out["class_counts"] = ((m,), statecheck.I64)
        out["class_members"] = ((m, p), statecheck.I64)
        out["class_kinv"] = ((m, p, p), statecheck.F64)
        return out

    @classmethod
    def check_saved(cls, header, arrays):
        super().check_saved(header, arrays)
        n = len(arrays["sv_indptr"]) - 1
        counts, members = arrays["class_counts"], arrays["class_members"]
        for c, k in enumerate(counts.tolist()):
            if not 0 <= k <= members.shape[1]:
                raise ValueError(f"class_counts[{c}] = {k} is outside 0..{members.shape[1]}")
            outside = (members[c, :k] < 0) | (members[c, :k] >= n)
            if outside.any():
                j = int(np.flatnonzero(outside)[0])
                raise ValueError(f"class_members[{c}, {j}] = {members[c, j]} is not a support vector (0..{n - 1})")

    @classmethod
    def from_state(cls, header, arrays):
        self = super().from_state(header, arrays)
        m, p = arrays["class_members"].shape
        self.counts = np.zeros(0, np.int64)
        self.kinv = None
        self._alloc_classes(self.coef.shape[1], max(p + 1, 16))
        self.counts[:m] = arrays["class_counts"]
        self.members[:m, :p] = arrays["class_members"]
        if "class_kinv" in arrays:
            self.kinv[:m, :p, :p] = arrays["class_kinv"]
        else:
            self.stale.add("class_kinv")
        return self

    def _rebuild_class_inverses(self) -> None:
        """K_c⁻¹ of every class's support set, from the shared support set's Gram matrix."""
        K = self.gram()
        for c in range(int(self.n_classes[0])):
            k = int(self.counts[c])
            members = self.members[c, :k]
            self.kinv[c, :k, :k] = spd_inverse(K[np.ix_(members, members)])
