"""The multiclass support-set learner, beside the binary `KernelLearner` (learner.py).

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

The averaged hypothesis (1/T) Σ_t f_t (train --average, online-to-batch) is kept under the lazy scale
by running quantities: C = avg_scalars[C_SUM] = C_{t−1} = Σ_{s<t} scale_s during round t (raised as
each round opens), and avg_offset U, to which every change δ of a stored coefficient in round t adds
δ·C_{t−1} (`change`, `set_row`).  Then Σ_t scale_t coef_t = avg_base + C_T coef_T − U (C_T = C + scale
after the last round), whatever the order of changes and scalings; a vector leaving in round t takes
its share avg_base + C_{t−1} coef − U of its row along (`retire_row`, logged when `keep_retired` is on).
O(1) per changed coefficient, never a pass over past hypotheses, as the binary learners' `touch`.
When the scale has fallen 1,000-fold since avg_scalars[REF_SCALE], the stored coefficients have grown
as much, and C coef − U would cancel to noise (Pegasos' ball projection shrinks w by orders of
magnitude in a few rounds): `settle_average` then adds C coef − U to avg_base and starts C and U
again from 0, an O(nm) pass no more often than the scale falls 1,000-fold.

The same surface as the binary contract:
    learn(chunk, y)              y: int64 class indices
    decision_function(chunk)     the n × m score matrix
    state() / from_state(...)    JSON header + arrays
"""

from __future__ import annotations

import math

import numpy as np

from ..base import bounds
from ..numerics._jit import njit
from ..numerics.kernels import sparse_sqnorm
from . import statecheck
from .learner import KernelLearner
from .records import EXAMPLES, ExampleOverflow, Overflow, ScoreOverflow, TooLarge, example, give_answer
from ..numerics.support import COUNT, kernel_row

C_SUM, REF_SCALE = 0, 1  # in avg_scalars (module docstring)
SETTLE = 1e-3  # the scale's fall since REF_SCALE that makes `settle_average` run


class MulticlassLearner(KernelLearner):
    """The support-set learner (learner.py) with one coefficient per support vector and class: `coef`
    (with its lazy `scale`) replaces the binary `alpha`, and the loop's `st` also holds `coef`, `scale`,
    `n_classes` and `scores` (f_i(x_t) of the current example)."""

    multiclass = True
    slot_arrays = {"krow": "work"}  # besides the coefficient matrix
    new_slots_per_example = 2  # mc-projectron++ may store x_t once for each of two classes

    # saved only in a model that predicts with its average (model.Model.save): they double the size of
    # the coefficients, and a plain model stays compact
    average_arrays = ("avg_base", "avg_offset", "avg_scalars")
    folded_array = "avg_base"

    def __init__(self, kernel, seed: int = 0, **params):
        super().__init__(kernel, seed, **params)
        self.scale = np.ones(1)  # the lazy common factor of all coefficients
        self.n_classes = np.zeros(1, np.int64)  # classes known so far (raised inside the loop)
        self.coef = np.zeros((self.support.capacity, 4))
        self.avg_base = np.zeros_like(self.coef)  # the running average (module docstring)
        self.avg_offset = np.zeros_like(self.coef)
        self.avg_scalars = np.array([0.0, 1.0])  # C_SUM, REF_SCALE
        self.scores = np.zeros(4)  # work: f_i(x_t) of the current example
        self.retire_log = self.retire_log._replace(coef_sum=self._new_retire_log_sums(0))

    def _labels(self, y: np.ndarray, lines: np.ndarray) -> np.ndarray:
        y = np.asarray(y)
        if len(y) and (y.dtype.kind not in "iu" or y.min() < 0):
            raise ValueError(
                f"{self.name} learns class indices 0, 1, ... (labels.MulticlassLabels.encode), "
                f"got labels of dtype {y.dtype} from {y.min()}"
            )
        y = y.astype(np.int64)
        if len(y) and y.max() >= self.coef.shape[1]:
            try:
                self._grow_classes(int(y.max()) + 1)
            except TooLarge as exc:  # at the first example of a class that does not fit
                row = int(np.argmax(y >= self.coef.shape[1]))
                raise Overflow(row, int(lines[row]), str(exc)) from None
        return y

    def _state_arrays(self) -> dict:
        return self.slot | {
            "coef": self.coef,
            "scale": self.scale,
            "n_classes": self.n_classes,
            "scores": self.scores,
            "avg_base": self.avg_base,
            "avg_offset": self.avg_offset,
            "avg_scalars": self.avg_scalars,
        }

    def _new_retire_log_sums(self, rows: int) -> np.ndarray:
        return np.zeros((rows, self.coef.shape[1]))  # a leaving vector's share, per class

    def decision_function(self, chunk) -> np.ndarray:
        self._ensure_scratch(chunk.n_features)
        m = int(self.n_classes[0])
        out = np.zeros((len(chunk), m), np.float64)
        multiclass_scores(
            self.support.arrays,
            self.kernel.args(),
            self.coef,
            self.scale[0],
            m,
            self.slot["krow"],
            *chunk.csr,
            self.scratch,
            out,
        )
        return out

    def coefficients(self) -> np.ndarray:
        """The true coefficient matrix (n SVs × m classes), scale folded in."""
        return self.scale[0] * self.coef[: len(self.support), : int(self.n_classes[0])]

    def averaged_coefficients(self) -> np.ndarray:
        """The averaged hypothesis (1/T) Σ_t f_t on the current support set (n × m, true units): the
        module docstring's (avg_base + C_T coef − U) / T (a written model's avg_base holds the part of
        evicted vectors folded in: `folded_sums`)."""
        n, m = len(self.support), int(self.n_classes[0])
        T = self.counter("examples")
        if T == 0:
            return np.zeros((n, m))
        c_total = self.avg_scalars[C_SUM] + self.scale[0]
        return (self.avg_base[:n, :m] + c_total * self.coef[:n, :m] - self.avg_offset[:n, :m]) / T

    def set_coefficients(self, coef: np.ndarray) -> None:
        """Make the n × m true coefficients the hypothesis (scale 1), for a batch or prediction model."""
        n, m = coef.shape
        self.scale[0] = 1.0
        self.coef[:n, :m] = coef
        self.coef[:n, m:] = 0.0

    def _sums_view(self) -> np.ndarray:
        return self.avg_base[: len(self.support), : int(self.n_classes[0])]

    def _archive_classes(self) -> int:
        return int(self.n_classes[0])

    def _decisive_arrays(self) -> dict:
        n, m = len(self.support), int(self.n_classes[0])
        return super()._decisive_arrays() | {
            "scale": self.scale,
            "avg_scalars": self.avg_scalars,
            "coef": self.coef[:n, :m],
            "avg_base": self.avg_base[:n, :m],
            "avg_offset": self.avg_offset[:n, :m],
        }

    def size_warnings(self) -> list[str]:
        """The binary ones, else one when the classes are many: the coefficients grow as classes × vectors."""
        warnings, classes, n = super().size_warnings(), int(self.n_classes[0]), len(self.support)
        if warnings or classes <= bounds.WARN_CLASSES:
            return warnings
        return [
            f"{classes:,} classes: a multiclass model grows as classes × support vectors ({n:,} × {classes:,} "
            f"coefficients here; its arrays may hold {bounds.MAX_COEFFICIENTS:,})"
        ]

    def retired_sums(self) -> np.ndarray:
        m = int(self.n_classes[0])
        return self.retired.sums()[:, :m].T.copy()  # classes × retired vectors

    def state(self) -> tuple[dict, dict]:
        header, arrays = super().state()
        n, m = len(self.support), int(self.n_classes[0])
        header["n_classes"] = m
        arrays["scale"] = self.scale.copy()
        arrays["coef"] = self.coef[:n, :m].copy()
        arrays["avg_base"] = self.avg_base[:n, :m].copy()
        arrays["avg_offset"] = self.avg_offset[:n, :m].copy()
        arrays["avg_scalars"] = self.avg_scalars.copy()
        return header, arrays

    @classmethod
    def saved_arrays(cls, header: dict, members: dict) -> dict:
        out = super().saved_arrays(header, members)
        n = out["sv_indptr"][0][0] - 1
        out["scale"] = ((1,), statecheck.F64)
        out["coef"] = ((n, statecheck.header_int(header, "n_classes", 0, statecheck.MAX_CLASSES)), statecheck.F64)
        out["avg_base"] = out["avg_offset"] = out["coef"]
        out["avg_scalars"] = ((2,), statecheck.F64)
        if "retired_sums" in out:  # the archive's summed coefficients: a column per class
            out["retired_sums"] = (out["retired_sums"][0] + out["coef"][0][1:], statecheck.F64)
            out["unfolded_avg_base"] = out["avg_base"]
        return out

    @classmethod
    def from_state(cls, header: dict, arrays: dict) -> "MulticlassLearner":
        self = super().from_state(header, arrays)
        n, m = len(self.support), int(header["n_classes"])
        self.scale[:] = arrays["scale"]
        self.n_classes[0] = m
        self.coef = np.zeros((self.support.capacity, max(m, 4)))
        self.coef[:n, :m] = arrays["coef"]
        self.avg_base, self.avg_offset = np.zeros_like(self.coef), np.zeros_like(self.coef)
        if all(name in arrays for name in self.average_arrays):
            self.avg_base[:n, :m] = arrays["avg_base"]
            self.avg_offset[:n, :m] = arrays["avg_offset"]
            self.avg_scalars[:] = arrays["avg_scalars"]
        else:  # a plain model's file (Model.save) or an older one: no running average to continue
            self.average_kept = False
        self.scores = np.zeros(self.coef.shape[1])
        return self

    def _grow_classes(self, m: int) -> None:
        if m > self.coef.shape[1]:
            cols = max(m, 2 * self.coef.shape[1])
            self._check_size(self.coef.shape[0], cols)
            self.coef, self.avg_base, self.avg_offset = (
                _grown(a, a.shape[0], cols) for a in (self.coef, self.avg_base, self.avg_offset)
            )
            self.scores = np.zeros(cols)

    def _check_size(self, capacity: int, classes: int | None = None) -> None:
        """TooLarge when the coefficient arrays (slots × classes, each doubling as it grows) would hold
        more than bounds.MAX_COEFFICIENTS numbers."""
        classes = self.coef.shape[1] if classes is None else classes
        if capacity * classes > bounds.MAX_COEFFICIENTS:
            raise TooLarge(
                f"the model's coefficients would take {capacity:,} slots × {classes:,} classes = "
                f"{capacity * classes:,} numbers, more than the {bounds.MAX_COEFFICIENTS:,} a multiclass "
                "model may hold (it grows as classes × support vectors)"
            )

    def _resize(self, capacity: int) -> None:
        if self.coef.shape[0] < capacity:
            self.coef, self.avg_base, self.avg_offset = (
                _grown(a, capacity, a.shape[1]) for a in (self.coef, self.avg_base, self.avg_offset)
            )
        super()._resize(capacity)


def _grown(a: np.ndarray, rows: int, cols: int) -> np.ndarray:
    out = np.zeros((rows, cols))
    out[: a.shape[0], : a.shape[1]] = a
    return out


# ---- compiled pieces shared by the multiclass loops ----------------------------------------------


@njit(cache=True, inline="always")
def give_class_answers(answers, n, t, f, known):
    """Example t's answer (records.give_answer), of a chunk of n: the scores f_0 .. f_{known−1} of the classes
    the model knew before it, in its row of `answers` (a row per example, as wide as the classes known before
    the chunk's last example: the others stay −inf, as decision_function before this example would not give
    them)."""
    width = answers.shape[0] // n
    for i in range(known):
        give_answer(answers, t * width + i, f[i])


@njit(cache=True, inline="always")
def open_class_round(S, K, indptr, indices, values, y, t, scratch, counters, st, answers):
    """The opening of a multiclass round: x_t, its class y_t (a new class joins with a zero prototype),
    the number m of classes known, st.scores = f_i(x_t), ‖x_t‖² and the round's number, counted (the
    arrays as rounds.open_round takes them), and the answer of the classes known before it given
    (`give_class_answers`)."""
    idx, val = example(indptr, indices, values, t)
    yt = y[t]
    known = st.n_classes[0]
    if yt + 1 > known:
        st.n_classes[0] = yt + 1
    m = st.n_classes[0]
    sq = class_scores(S, K, st.coef, st.scale[0], m, st.krow, scratch, idx, val, st.scores)
    if not math.isfinite(sq):  # checked before the round counts, as rounds.open_round does
        raise ExampleOverflow
    for i in range(m):
        if not math.isfinite(st.scores[i]):
            raise ScoreOverflow
    give_class_answers(answers, y.shape[0], t, st.scores, known)
    counters[EXAMPLES] += 1
    if counters[EXAMPLES] > 1:
        st.avg_scalars[C_SUM] += st.scale[0]  # C_{t−1}: the scale of f_{t−1} joins the sum
    return idx, val, yt, m, sq, counters[EXAMPLES]


@njit(cache=True, inline="always")
def change(st, j, i, delta):
    """coef[j, i] += delta (stored units) in the current round, for the running average too."""
    st.coef[j, i] += delta
    st.avg_offset[j, i] += delta * st.avg_scalars[C_SUM]


@njit(cache=True, inline="always")
def set_row(st, j, i, value, r, other):
    """A new vector in slot j: stored coefficient `value` in class i, `other` in class r (r < 0: none),
    0 in the others."""
    coef, offset, c = st.coef, st.avg_offset, st.avg_scalars[C_SUM]
    for k in range(coef.shape[1]):
        coef[j, k] = 0.0
        offset[j, k] = 0.0
        st.avg_base[j, k] = 0.0
    coef[j, i] = value
    offset[j, i] = value * c
    if r >= 0:
        coef[j, r] = other
        offset[j, r] = other * c


@njit(cache=True)
def retire_row(S, book, st, j, m):
    """Call before the vector in slot j leaves in the current round: with `keep_retired`, log it and
    its share of Σ_t scale_t coef_t (module docstring)."""
    if book.keep_retired:
        log, c = book.log, st.avg_scalars[C_SUM]
        k = log.count[0]
        log.start[k] = S.start[j]
        log.length[k] = S.length[j]
        for i in range(m):
            log.coef_sum[k, i] = st.avg_base[j, i] + c * st.coef[j, i] - st.avg_offset[j, i]
        log.count[0] = k + 1


@njit(cache=True)
def settle_average(S, st, m, scale):
    """Move C coef − U into avg_base and start C and U again from 0, the scale `scale` their new
    reference (module docstring): call at the end of a round, before the stored coefficients change
    other than by `change`."""
    c = st.avg_scalars[C_SUM]
    for j in range(S.meta[COUNT]):
        for i in range(m):
            st.avg_base[j, i] += c * st.coef[j, i] - st.avg_offset[j, i]
            st.avg_offset[j, i] = 0.0
    st.avg_scalars[C_SUM] = 0.0
    st.avg_scalars[REF_SCALE] = scale


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
def move_row(st, dst, src, m):
    """Slot src's coefficients (and running-average offsets) into slot dst."""
    for i in range(m):
        st.coef[dst, i] = st.coef[src, i]
        st.avg_base[dst, i] = st.avg_base[src, i]
        st.avg_offset[dst, i] = st.avg_offset[src, i]


@njit(cache=True)
def multiclass_scores(S, K, coef, scale, m, krow, indptr, indices, values, scratch, out):
    """out[t, i] = f_i(x_t) for every example of a chunk."""
    for t in range(indptr.shape[0] - 1):
        idx = indices[indptr[t] : indptr[t + 1]]
        val = values[indptr[t] : indptr[t + 1]]
        class_scores(S, K, coef, scale, m, krow, scratch, idx, val, out[t])
