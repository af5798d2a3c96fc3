"""The multiclass learner contract, beside the binary `KernelLearner` (learner.py).

A multiclass learner keeps one prototype f_i per class over one shared support set:

    f_i(x) = scale · Σ_j coef[j, i] k(x, sv_j)        (one coefficient vector over classes per SV)

and predicts argmax_i f_i(x) (ties: the class seen first).  `scale` is a lazy common factor, so
that Pegasos' shrinking of every coefficient by (1 − 1/t) costs O(1) per round; learners that
never shrink keep it at 1.

Labels are class indices 0 .. m−1 from `labels.MulticlassLabels`, in order of first appearance.
A label first seen mid-stream joins as a new class with a zero prototype: the loop raises its
count of known classes when it meets the example (not when the chunk is read), so a model does not
depend on where chunks end.  Crammer–Singer rounds compare the true class with the highest-scoring
*other known* class r; while only one class is known there is no r, and the round is neither a
mistake nor an update.

A round is a mistake when f_y(x) ≤ max_{r≠y} f_r(x) (a tie is a mistake, as y f ≤ 0 is in the
binary learners).

The same surface as the binary contract:
    learn(chunk, y)              y: int64 class indices
    decision_function(chunk)     the n × m score matrix
    state() / from_state(...)    JSON header + arrays
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ._jit import njit
from .kernels import Kernel, kernel_from_dot, sparse_sqnorm
from . import statecheck
from .learner import COUNTER_NAMES, KernelLearner
from .params import Param
from .rng import seed_state
from .support import COUNT, SupportSet, kernel_row


class MulticlassLearner:
    """Base class of the multiclass kernel learners; an algorithm fills in the class attributes
    and `_learn_range`."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    multiclass: ClassVar[bool] = True
    evicts: ClassVar[bool] = False
    n_scalars: ClassVar[int] = 0
    # per-slot arrays besides the coefficient matrix: "vector" / "square" are saved, "work" is not
    slot_arrays: ClassVar[dict[str, str]] = {"krow": "work"}

    resolve_params = classmethod(KernelLearner.resolve_params.__func__)
    refuse_degenerate = classmethod(KernelLearner.refuse_degenerate.__func__)
    counter = KernelLearner.counter
    kernel_matrix = KernelLearner.kernel_matrix
    _ensure_scratch = KernelLearner._ensure_scratch
    _new_slot_array = staticmethod(KernelLearner._new_slot_array)
    _common_state = KernelLearner._common_state
    _restore_common = KernelLearner._restore_common
    check_saved = classmethod(KernelLearner.check_saved.__func__)
    layout_defaults: ClassVar[dict[str, float]] = {}  # as KernelLearner.layout_defaults

    @classmethod
    def check_kernel(cls, kernel_kind: str, params: dict) -> None:
        """Raise ValueError when the algorithm cannot work with this kernel (before any data is read)."""

    def __init__(self, kernel: Kernel, seed: int = 0, **params):
        self.hyper = self.resolve_params(params)
        self.check_kernel(kernel.kind, self.hyper)
        self.kernel = kernel
        self.seed = int(seed)
        self.support = SupportSet(dense=True)
        self.counters = np.zeros(len(COUNTER_NAMES), np.int64)
        self.rng_state = seed_state(self.seed)
        self.scalars = np.zeros(self.n_scalars)
        self.scale = np.ones(1)  # the lazy common factor of all coefficients
        self.n_classes = np.zeros(1, np.int64)  # classes known so far (raised inside the loop)
        self.coef = np.zeros((self.support.capacity, 4))
        self.scores = np.zeros(4)  # work: f_i(x_t) of the current example
        self.scratch = np.zeros(0, np.float64)
        self.n_features = 0
        self.keep_retired = False  # the averaged hypothesis is not offered for multiclass learners
        self.retired: list = []
        self.slot = {name: self._new_slot_array(kind, self.support.capacity) for name, kind in self.slot_arrays.items()}

    # ---- the contract ----------------------------------------------------------------------
    def learn(self, chunk, y: np.ndarray) -> None:
        y = np.asarray(y)
        if len(y) and (y.dtype.kind not in "iu" or y.min() < 0):
            raise ValueError(f"{self.name} learns class indices 0, 1, ... (labels.MulticlassLabels.encode), "
                             f"got labels of dtype {y.dtype} from {y.min()}")
        y = y.astype(np.int64)
        d = chunk.n_features  # a scan of the chunk's indices: once
        self.n_features = max(self.n_features, d)
        self._ensure_scratch(d)
        self.support.cover(d)
        if len(y):
            self._grow_classes(int(y.max()) + 1)
        start, n = 0, len(chunk)
        while start < n:
            start = self._learn_range(chunk.indptr, chunk.indices, chunk.values, y, start)
            if start < n:  # the next example may not fit: grow and go on
                nnz = self._pool_room(int(chunk.indptr[start + 1] - chunk.indptr[start]))
                self.support.reserve(len(self.support) + 2, nnz)
                self._resize(self.support.capacity)

    def decision_function(self, chunk) -> np.ndarray:
        self._ensure_scratch(chunk.n_features)
        m = int(self.n_classes[0])
        out = np.zeros((len(chunk), m), np.float64)
        multiclass_scores(self.support.arrays, *self.kernel.args(), self.coef, self.scale[0], m, self.slot["krow"],
                          chunk.indptr, chunk.indices, chunk.values, self.scratch, out)
        return out

    def coefficients(self) -> np.ndarray:
        """The true coefficient matrix (n SVs × m classes), scale folded in."""
        return self.scale[0] * self.coef[: len(self.support), : int(self.n_classes[0])]

    def state(self) -> tuple[dict, dict]:
        header, arrays = self._common_state()
        n, m = len(self.support), int(self.n_classes[0])
        header["n_classes"] = m
        arrays["scale"] = self.scale.copy()
        arrays["coef"] = self.coef[:n, :m].copy()
        return header, arrays

    @classmethod
    def saved_arrays(cls, header: dict, members: dict) -> dict:
        out = KernelLearner.saved_arrays.__func__(cls, header, members)
        n = out["sv_indptr"][0][0] - 1
        out["scale"] = ((1,), statecheck.F64)
        out["coef"] = ((n, statecheck.header_int(header, "n_classes", 0, statecheck.MAX_CLASSES)), statecheck.F64)
        return out

    @classmethod
    def from_state(cls, header: dict, arrays: dict) -> "MulticlassLearner":
        self = cls(Kernel.from_dict(header["kernel"]), seed=header["seed"], **header["params"])
        self._restore_common(header, arrays)
        n, m = len(self.support), int(header["n_classes"])
        self.scale[:] = arrays["scale"]
        self.n_classes[0] = m
        self.coef = np.zeros((self.support.capacity, max(m, 4)))
        self.coef[:n, :m] = arrays["coef"]
        self.scores = np.zeros(self.coef.shape[1])
        return self

    # ---- for subclasses ----------------------------------------------------------------------
    def _learn_range(self, indptr, indices, values, y, start) -> int:
        raise NotImplementedError

    def _pool_room(self, nnz: int) -> int:
        """Pool entries one example of `nnz` non-zeros may need (merging needs more)."""
        return nnz

    def _grow_classes(self, m: int) -> None:
        if m > self.coef.shape[1]:
            cols = max(m, 2 * self.coef.shape[1])
            coef = np.zeros((self.coef.shape[0], cols))
            coef[:, : self.coef.shape[1]] = self.coef
            self.coef = coef
            self.scores = np.zeros(cols)

    def _resize(self, capacity: int) -> None:
        if self.coef.shape[0] < capacity:
            coef = np.zeros((capacity, self.coef.shape[1]))
            coef[: self.coef.shape[0]] = self.coef
            self.coef = coef
        KernelLearner._resize(self, capacity)  # the per-slot arrays, as for the binary learners


# ---- compiled pieces shared by the multiclass loops ----------------------------------------------

@njit(cache=True)
def class_scores(S, code, gamma, coef0, degree, coef, scale, m, krow, scratch, idx, val, f):
    """f[i] = f_i(x) for the m classes, leaving krow = k(x, sv_j); returns ‖x‖²."""
    sq = sparse_sqnorm(val)
    kernel_row(S, code, gamma, coef0, degree, scratch, idx, val, sq, krow)
    row_scores(coef, scale, krow, S.meta[COUNT], m, f)
    return sq


@njit(cache=True)
def row_scores(coef, scale, krow, n, m, f):
    """f[i] = scale · Σ_j coef[j, i] krow[j] (row by row: coef is stored slot-major)."""
    for i in range(m):
        f[i] = 0.0
    for j in range(n):
        kj = krow[j]
        if kj != 0.0:
            for i in range(m):
                f[i] += coef[j, i] * kj
    for i in range(m):
        f[i] *= scale


@njit(cache=True)
def rival(f, m, y):
    """The highest-scoring class other than y (ties: the lowest index); −1 when y is the only class."""
    r = -1
    for i in range(m):
        if i != y and (r < 0 or f[i] > f[r]):
            r = i
    return r


@njit(cache=True)
def sv_kernel_row(S, p, code, gamma, coef0, degree, scratch, out):
    """out[j] = k(sv_p, sv_j) for every live slot."""
    lo = S.start[p]
    hi = lo + S.length[p]
    kernel_row(S, code, gamma, coef0, degree, scratch, S.pool_idx[lo:hi], S.pool_val[lo:hi], S.sqnorm[p], out)


@njit(cache=True)
def move_row(coef, dst, src, m):
    for i in range(m):
        coef[dst, i] = coef[src, i]


@njit(cache=True)
def multiclass_scores(S, code, gamma, coef0, degree, coef, scale, m, krow, indptr, indices, values, scratch, out):
    """out[t, i] = f_i(x_t) for every example of a chunk."""
    for t in range(indptr.shape[0] - 1):
        idx = indices[indptr[t]:indptr[t + 1]]
        val = values[indptr[t]:indptr[t + 1]]
        class_scores(S, code, gamma, coef0, degree, coef, scale, m, krow, scratch, idx, val, out[t])


__all__ = ["MulticlassLearner", "class_scores", "rival", "sv_kernel_row", "move_row", "kernel_from_dot"]
