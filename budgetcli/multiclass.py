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

import numpy as np

from ._jit import njit
from .kernels import sparse_sqnorm
from . import statecheck
from .learner import EXAMPLES, KernelLearner, example
from .support import COUNT, kernel_row


class MulticlassLearner(KernelLearner):
    """The learner contract (learner.py) with one coefficient per support vector and class: `coef`
    (with its lazy `scale`) replaces the binary `alpha`, and the loop's `st` also holds `coef`, `scale`,
    `n_classes` and `scores` (f_i(x_t) of the current example)."""

    multiclass = True
    slot_arrays = {"krow": "work"}  # besides the coefficient matrix
    new_slots_per_example = 2  # mc-projectron++ may store x_t once for each of two classes
    unmixable = "model mixing handles binary learners only so far (a coefficient matrix is not averaged yet)"

    def __init__(self, kernel, seed: int = 0, **params):
        super().__init__(kernel, seed, **params)
        self.keep_retired = False  # the averaged hypothesis is not offered for multiclass learners
        self.scale = np.ones(1)  # the lazy common factor of all coefficients
        self.n_classes = np.zeros(1, np.int64)  # classes known so far (raised inside the loop)
        self.coef = np.zeros((self.support.capacity, 4))
        self.scores = np.zeros(4)  # work: f_i(x_t) of the current example

    def _labels(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y)
        if len(y) and (y.dtype.kind not in "iu" or y.min() < 0):
            raise ValueError(f"{self.name} learns class indices 0, 1, ... (labels.MulticlassLabels.encode), "
                             f"got labels of dtype {y.dtype} from {y.min()}")
        y = y.astype(np.int64)
        if len(y):
            self._grow_classes(int(y.max()) + 1)
        return y

    def _state_arrays(self) -> dict:
        return self.slot | {"coef": self.coef, "scale": self.scale, "n_classes": self.n_classes,
                            "scores": self.scores}

    def decision_function(self, chunk) -> np.ndarray:
        self._ensure_scratch(chunk.n_features)
        m = int(self.n_classes[0])
        out = np.zeros((len(chunk), m), np.float64)
        multiclass_scores(self.support.arrays, self.kernel.args(), self.coef, self.scale[0], m, self.slot["krow"],
                          chunk.indptr, chunk.indices, chunk.values, self.scratch, out)
        return out

    def coefficients(self) -> np.ndarray:
        """The true coefficient matrix (n SVs × m classes), scale folded in."""
        return self.scale[0] * self.coef[: len(self.support), : int(self.n_classes[0])]

    def state(self) -> tuple[dict, dict]:
        header, arrays = super().state()
        n, m = len(self.support), int(self.n_classes[0])
        header["n_classes"] = m
        arrays["scale"] = self.scale.copy()
        arrays["coef"] = self.coef[:n, :m].copy()
        return header, arrays

    @classmethod
    def saved_arrays(cls, header: dict, members: dict) -> dict:
        out = super().saved_arrays(header, members)
        n = out["sv_indptr"][0][0] - 1
        out["scale"] = ((1,), statecheck.F64)
        out["coef"] = ((n, statecheck.header_int(header, "n_classes", 0, statecheck.MAX_CLASSES)), statecheck.F64)
        return out

    @classmethod
    def from_state(cls, header: dict, arrays: dict) -> "MulticlassLearner":
        self = super().from_state(header, arrays)
        n, m = len(self.support), int(header["n_classes"])
        self.scale[:] = arrays["scale"]
        self.n_classes[0] = m
        self.coef = np.zeros((self.support.capacity, max(m, 4)))
        self.coef[:n, :m] = arrays["coef"]
        self.scores = np.zeros(self.coef.shape[1])
        return self

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
        super()._resize(capacity)


# ---- compiled pieces shared by the multiclass loops ----------------------------------------------

@njit(cache=True, inline="always")
def open_class_round(S, K, indptr, indices, values, y, t, scratch, counters, st):
    """The opening of a multiclass round: x_t, its class y_t (a new class joins with a zero prototype),
    the number m of classes known, st.scores = f_i(x_t), ‖x_t‖² and the round's number, counted (the
    arrays as learner.open_round takes them)."""
    idx, val = example(indptr, indices, values, t)
    yt = y[t]
    if yt + 1 > st.n_classes[0]:
        st.n_classes[0] = yt + 1
    m = st.n_classes[0]
    sq = class_scores(S, K, st.coef, st.scale[0], m, st.krow, scratch, idx, val, st.scores)
    counters[EXAMPLES] += 1
    return idx, val, yt, m, sq, counters[EXAMPLES]


@njit(cache=True)
def class_scores(S, K, coef, scale, m, krow, scratch, idx, val, f):
    """f[i] = f_i(x) for the m classes, leaving krow = k(x, sv_j); returns ‖x‖²."""
    sq = sparse_sqnorm(val)
    kernel_row(S, K, scratch, idx, val, sq, krow)
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
def move_row(coef, dst, src, m):
    for i in range(m):
        coef[dst, i] = coef[src, i]


@njit(cache=True)
def multiclass_scores(S, K, coef, scale, m, krow, indptr, indices, values, scratch, out):
    """out[t, i] = f_i(x_t) for every example of a chunk."""
    for t in range(indptr.shape[0] - 1):
        idx = indices[indptr[t]:indptr[t + 1]]
        val = values[indptr[t]:indptr[t + 1]]
        class_scores(S, K, coef, scale, m, krow, scratch, idx, val, out[t])
