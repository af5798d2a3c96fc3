"""The support set: sparse vectors in pooled storage, addressed by slot.

Support vectors live in two flat pools (indices int32, values float64); slot i owns
pool[start[i] : start[i] + length[i]].  Slots 0 .. count−1 are the live support set, in a
dense range so that every per-SV array of a learner (coefficients, Gram inverse, ages) can be
indexed by slot.  Replacing or removing a vector leaves its old pool range as garbage; the
pool is compacted between chunks once garbage exceeds the live part.  Memory is therefore
O(capacity + Σ nnz(SV)), never O(B·d): a 1.35M-dimensional sparse set costs what
its non-zeros cost.

When the data is narrow enough that d × capacity stays under DENSE_LIMIT entries (16 MiB), the
set also keeps a feature-major dense copy, `dense[j, i]` = value of feature j in slot i.  A
kernel row is then contiguous multiply-adds over the slots, four non-zeros of x at a time (SIMD,
`dense_dots`), instead of one gather per non-zero of every support vector, which is several times slower
(and four non-zeros at a time are faster again than one).  Both ways add the
products x_j·sv_ij in increasing j, starting from +0.0, so the dot products are bit-identical
(the terms only one side has are ±0 products, which leave a sum that is never −0 unchanged).
Columns of slots ≥ count are kept all zero.

The compiled learners receive the arrays as the `SVArrays` named tuple and never allocate:
before each example they check `sv_fits`, and when it fails they return to Python, which grows
the arrays (`SupportSet.reserve`) and calls them again.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._jit import njit, record
from ..base.core import gather_rows
from .kernels import kernel_values, scatter, unscatter

COUNT, POOL_USED, POOL_GARBAGE = 0, 1, 2
DENSE_LIMIT = 1 << 21  # most entries (feature × slot) of the dense copy; above it the set stays sparse
# Garbage the pool may hold before it is compacted, besides as much as the live part: a learner that
# replaces vectors (rbp, bogd, bpa-s at their budget) leaves its loop whenever the pool is full, and
# with only the live part's worth of slack it did so every |S| replacements (bogd B = 100 on a9a × 16:
# 1,175 loop calls, each with a compaction and a dispatch); 65,536 entries (768 KB) make that rare.
GARBAGE_SLACK = 1 << 16
NO_DENSE = np.zeros((0, 0), np.float64)


@record
class SVArrays(NamedTuple):
    meta: np.ndarray  # int64[3]: live count, pool entries used, pool entries that are garbage
    start: np.ndarray  # int64[cap]
    length: np.ndarray  # int64[cap]
    sqnorm: np.ndarray  # float64[cap]: ‖sv‖², for the RBF kernel
    pool_idx: np.ndarray  # int32[pool_cap], 0-based feature indices
    pool_val: np.ndarray  # float64[pool_cap]
    dense: np.ndarray  # float64[d, cap], feature-major copy of the live vectors; (0, 0) when not kept


@njit(cache=True)
def sv_fits(S, nnz):
    """True when one more vector with `nnz` non-zeros fits without growing the arrays."""
    return S.meta[COUNT] < S.start.shape[0] and S.meta[POOL_USED] + nnz <= S.pool_idx.shape[0]


@njit(cache=True)
def sv_put(S, slot, idx, val, sqnorm):
    """Store a vector in `slot` (slot == count appends; slot < count replaces)."""
    if slot < S.meta[COUNT]:
        S.meta[POOL_GARBAGE] += S.length[slot]
        dense_column(S, slot, False)
    else:
        S.meta[COUNT] += 1
    p = S.meta[POOL_USED]
    n = idx.shape[0]
    for j in range(n):
        S.pool_idx[p + j] = idx[j]
        S.pool_val[p + j] = val[j]
    S.start[slot] = p
    S.length[slot] = n
    S.sqnorm[slot] = sqnorm
    S.meta[POOL_USED] = p + n
    dense_column(S, slot, True)


@njit(cache=True)
def sv_remove(S, slot):
    """Remove the vector in `slot` by moving the last live vector into it.

    Returns the slot the moved vector came from (count − 1 before the call), so that the caller
    can move its own per-slot arrays the same way."""
    last = S.meta[COUNT] - 1
    S.meta[POOL_GARBAGE] += S.length[slot]
    dense_column(S, slot, False)
    dense_column(S, last, False)
    S.start[slot] = S.start[last]
    S.length[slot] = S.length[last]
    S.sqnorm[slot] = S.sqnorm[last]
    S.meta[COUNT] = last
    if slot < last:
        dense_column(S, slot, True)
    return last


@njit(cache=True)
def dense_column(S, slot, write):
    """Copy slot's vector into the dense copy (write) or zero its entries there (before the slot's
    pool range changes).  Nothing when the set keeps no dense copy."""
    if S.dense.shape[0] == 0:
        return
    p = S.start[slot]
    for j in range(p, p + S.length[slot]):
        if S.pool_idx[j] >= S.dense.shape[0]:  # numba does not bounds-check: never write past the copy
            raise IndexError("a support vector has a feature the dense copy does not cover (missing cover())")
        S.dense[S.pool_idx[j], slot] = S.pool_val[j] if write else 0.0


@njit(cache=True)
def dense_rebuild(S, old_count):
    """Rewrite the dense copy after slots were rearranged in place (old_count: live slots before)."""
    if S.dense.shape[0] == 0:
        return
    S.dense[:, :old_count] = 0.0
    for i in range(S.meta[COUNT]):
        dense_column(S, i, True)


@njit(cache=True)
def kernel_row(S, K, scratch, idx, val, x_sqnorm, out):
    """out[i] = k(x, sv_i) for every live slot, x given by its sparse (idx, val).

    `scratch` is a zeroed dense work vector of at least x's dimension (left zeroed); it is only used
    when the set keeps no dense copy, to scatter x for the gather."""
    n = S.meta[COUNT]
    D = S.dense
    if D.shape[0] > 0:
        dense_dots(D, idx, val, n, out)
    else:
        scatter(scratch, idx, val)
        for i in range(n):
            p = S.start[i]
            dot = 0.0
            for j in range(p, p + S.length[i]):
                dot += S.pool_val[j] * scratch[S.pool_idx[j]]
            out[i] = dot
        unscatter(scratch, idx)
    kernel_values(K, out, n, x_sqnorm, S.sqnorm)


@njit(cache=True)
def dense_dots(D, idx, val, n, out):
    """out[i] = x·sv_i for the slots i < n from the dense copy: x_j·D[j, i] added over x's features in
    increasing j, from +0.0 (features no support vector has add nothing).  Four features at a time:
    each out[i] gets the same products in the same order as one feature at a time, so the same bits,
    but is read and written once per four features."""
    for i in range(n):
        out[i] = 0.0
    k = 0  # features waiting, at most three: (f0, v0), (f1, v1), (f2, v2)
    f0 = f1 = f2 = 0
    v0 = v1 = v2 = val.dtype.type(0)  # of x's type: float32 values (FOGD's single map) sum in float32
    for j in range(idx.shape[0]):
        if idx[j] >= D.shape[0]:
            continue
        if k == 0:
            f0, v0, k = idx[j], val[j], 1
        elif k == 1:
            f1, v1, k = idx[j], val[j], 2
        elif k == 2:
            f2, v2, k = idx[j], val[j], 3
        else:
            a, b, c, e, v3 = D[f0], D[f1], D[f2], D[idx[j]], val[j]
            for i in range(n):
                s = out[i]
                s += v0 * a[i]
                s += v1 * b[i]
                s += v2 * c[i]
                s += v3 * e[i]
                out[i] = s
            k = 0
    if k == 3:
        a, b, c = D[f0], D[f1], D[f2]
        for i in range(n):
            s = out[i]
            s += v0 * a[i]
            s += v1 * b[i]
            s += v2 * c[i]
            out[i] = s
    elif k == 2:
        a, b = D[f0], D[f1]
        for i in range(n):
            s = out[i]
            s += v0 * a[i]
            s += v1 * b[i]
            out[i] = s
    elif k == 1:
        a = D[f0]
        for i in range(n):
            out[i] += v0 * a[i]


@njit(cache=True)
def sv_kernel_row(S, K, scratch, p, out):
    """out[j] = k(sv_p, sv_j) for every live slot."""
    lo = S.start[p]
    hi = lo + S.length[p]
    kernel_row(S, K, scratch, S.pool_idx[lo:hi], S.pool_val[lo:hi], S.sqnorm[p], out)


class SupportSet:
    """Owner of the SVArrays: growth, compaction, and conversion to/from CSR for model files."""

    def __init__(self, capacity: int = 64, pool_capacity: int = 1024, dense: bool = False):
        self.arrays = SVArrays(
            meta=np.zeros(3, np.int64),
            start=np.zeros(capacity, np.int64),
            length=np.zeros(capacity, np.int64),
            sqnorm=np.zeros(capacity, np.float64),
            pool_idx=np.zeros(pool_capacity, np.int32),
            pool_val=np.zeros(pool_capacity, np.float64),
            dense=NO_DENSE,
        )
        self.dense_allowed = dense  # a learner's own set; its loops must call `cover` before storing
        self.dim = 0  # features the dense copy must cover (see `cover`)

    def __len__(self) -> int:
        return int(self.arrays.meta[COUNT])

    @property
    def capacity(self) -> int:
        return self.arrays.start.shape[0]

    @property
    def nnz(self) -> int:
        """Live non-zeros (the pool minus its garbage)."""
        m = self.arrays.meta
        return int(m[POOL_USED] - m[POOL_GARBAGE])

    def capacity_for(self, slots: int) -> int:
        """The slots `reserve(slots, …)` makes room for (amortised doubling)."""
        cap = self.arrays.start.shape[0]
        return max(slots, 2 * cap) if slots > cap else cap

    def reserve(self, slots: int, nnz: int) -> None:
        """Make room for `slots` live vectors in all and `nnz` more pool entries (amortised doubling)."""
        a = self.arrays
        if a.meta[POOL_GARBAGE] > 0 and a.meta[POOL_GARBAGE] >= max(
            a.meta[POOL_USED] - a.meta[POOL_GARBAGE], GARBAGE_SLACK
        ):
            self.compact()
            a = self.arrays
        cap = self.capacity_for(slots)
        pool_cap = a.pool_idx.shape[0]
        need = int(a.meta[POOL_USED]) + nnz
        if need > pool_cap:
            pool_cap = max(need, 2 * pool_cap)
        if cap != a.start.shape[0] or pool_cap != a.pool_idx.shape[0]:
            self.arrays = SVArrays(
                meta=a.meta,
                start=_resized(a.start, cap),
                length=_resized(a.length, cap),
                sqnorm=_resized(a.sqnorm, cap),
                pool_idx=_resized(a.pool_idx, pool_cap),
                pool_val=_resized(a.pool_val, pool_cap),
                dense=a.dense,
            )
            if cap != a.start.shape[0]:
                self._refit_dense()

    def cover(self, n_features: int) -> None:
        """Vectors with feature indices below `n_features` may be stored next: widen the dense copy
        (or give it up when it would pass DENSE_LIMIT).  Call before a learner loop stores them."""
        if n_features > self.dim:
            self.dim = n_features
            self._refit_dense()

    @property
    def keeps_dense(self) -> bool:
        return self.arrays.dense.shape[0] > 0

    def _refit_dense(self) -> None:
        """The dense copy for the current dimension and capacity, rebuilt from the pool, or none."""
        cap = self.capacity
        if not self.dense_allowed or self.dim == 0 or self.dim * cap > DENSE_LIMIT:
            self.arrays = self.arrays._replace(dense=NO_DENSE)
            return
        dense = np.zeros((self.dim, cap), np.float64)
        indptr, idx, val = self.to_csr()
        dense[idx, np.repeat(np.arange(len(self)), np.diff(indptr))] = val
        self.arrays = self.arrays._replace(dense=dense)

    def compact(self) -> None:
        """Rewrite the pool with the live vectors only, in slot order."""
        indptr, idx, val = self.to_csr()
        a = self.arrays
        n = len(self)
        pool_idx = np.zeros(a.pool_idx.shape[0], np.int32)
        pool_val = np.zeros(a.pool_val.shape[0], np.float64)
        pool_idx[: idx.shape[0]] = idx
        pool_val[: val.shape[0]] = val
        a.start[:n] = indptr[:-1]
        a.meta[POOL_USED] = idx.shape[0]
        a.meta[POOL_GARBAGE] = 0
        self.arrays = a._replace(pool_idx=pool_idx, pool_val=pool_val)

    def to_csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The live vectors as CSR (indptr, indices, values), row i = slot i."""
        a = self.arrays
        n = len(self)
        return gather_rows(a.start[:n], a.length[:n], a.pool_idx, a.pool_val)

    @classmethod
    def from_csr(cls, indptr, indices, values, dense: bool = False) -> "SupportSet":
        n = len(indptr) - 1
        s = cls(capacity=max(n, 64), pool_capacity=max(len(indices), 1024), dense=dense)
        a = s.arrays
        a.start[:n] = indptr[:-1]
        a.length[:n] = np.diff(indptr)
        a.pool_idx[: len(indices)] = indices
        a.pool_val[: len(values)] = values
        rows = np.repeat(np.arange(n), np.diff(indptr))
        a.sqnorm[:n] = np.bincount(rows, weights=np.asarray(values, np.float64) ** 2, minlength=n)
        a.meta[:] = (n, len(indices), 0)
        s.cover(int(np.max(indices)) + 1 if len(indices) else 0)
        return s


def _resized(arr: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((n,) + arr.shape[1:], arr.dtype)
    m = min(n, arr.shape[0])
    out[:m] = arr[:m]
    return out
