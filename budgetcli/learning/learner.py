"""The support-set learner: the kind of the learner contract (contract.py) whose hypothesis is a kernel
expansion f(x) = Σ_i α_i k(sv_i, x) over a support set (support.py) it grows, bounds and evicts from, and
its compiled scoring of a chunk (the compiled pieces of its loops' rounds: rounds.py).

A support-set learner keeps, besides the support set, its own per-slot arrays (`slot_arrays`:
coefficients, the running sums of the averaged hypothesis, a Gram inverse, work buffers), grown with the
support set (`_make_room`); a learner that evicts keeps what its running average needs of the vectors it
evicts in an archive (archive.py, `KeepsEvicted`).  multiclass.MulticlassLearner changes what a
coefficient is (one per vector and class).
"""

from __future__ import annotations

from typing import Callable, ClassVar

import numpy as np

from ..numerics import fewscores
from . import statecheck
from ..numerics._jit import njit
from .archive import KeepsEvicted
from .contract import Learner
from ..numerics.kernels import sparse_sqnorm
from .records import (  # noqa: F401  (the algorithm modules import the loops' names from here)
    COUNTER_NAMES,
    EXAMPLES,
    MARGIN_UPDATES,
    MISTAKES,
    NO_MATRIX,
    NO_VECTOR,
    PROJECTIONS,
    ExampleOverflow,
    NonFiniteRound,
    Overflow,
    Rows,
    ScoreOverflow,
    TooLarge,
    example,
    example_weight,
    give_answer,
    hinge_round,
    loop_arrays,
)
from .rounds import (  # noqa: F401  (the algorithm modules import the round's pieces from here)
    OLDEST,
    RANDOM,
    UNBOUNDED,
    evict_from_inverse,
    new_coefficient,
    open_round,
    retire,
    score_example,
    touch,
    victim,
)
from ..numerics.support import SupportSet, kernel_row


class KernelLearner(KeepsEvicted, Learner):
    """The support-set learner: an algorithm fills in the class attributes and `loop`.  This class is the
    binary contract; multiclass.MulticlassLearner changes what a coefficient is."""

    # name -> "vector" (per slot, saved), "square" (slot x slot, saved) or "work" (per slot, not saved).
    # alpha: coefficients; avg_sum / avg_stamp: the running sums behind the averaged hypothesis
    # (see `touch`); krow: the kernel row of the current example.  Subclasses extend this dict.
    slot_arrays: ClassVar[dict[str, str]] = {
        "alpha": "vector",
        "avg_sum": "vector",
        "avg_stamp": "vector",
        "krow": "work",
    }
    new_slots_per_example: ClassVar[int] = 1  # most support vectors one example may add
    # Model files written by an earlier build stay loadable: a saved slot array ("vector" or "square")
    # that a later layout adds must be listed here with the value an older file stands for (its
    # missing array is filled with it).  A missing array not listed here makes the file be refused
    # with a version message (Model.load).  Counters added at the end of COUNTER_NAMES start at 0.
    layout_defaults: ClassVar[dict[str, float]] = {}
    # Resume-state arrays of older model files that a later layout replaced (name -> kind): accepted
    # when a file holds them, never read (the `rebuilt` arrays that replace them are made afresh).
    superseded: ClassVar[dict[str, str]] = {}
    rebuilt: ClassVar[dict[str, Callable]] = {}  # here: arrays that grow as |S|² (a Gram matrix, an inverse)

    def __init__(self, kernel, seed: int = 0, **params):
        super().__init__(kernel, seed, **params)
        self.support = SupportSet(dense=True)
        self.slot = {name: self._new_slot_array(kind, self.support.capacity) for name, kind in self.slot_arrays.items()}
        self._keep_nothing_evicted()

    # ---- learning: the support set and the per-slot arrays grow as the loop needs ----------------
    def _prepare(self, chunk) -> None:
        d = chunk.n_features  # a scan of the chunk's indices: once
        self.n_features = max(self.n_features, d)
        self._ensure_scratch(d)
        self.support.cover(d)
        self._size_retire_log(len(chunk))

    def _after_range(self, chunk, stop: int) -> None:
        self._collect_retired()  # before `reserve` may compact the pool
        if stop < len(chunk):  # the next example may not fit: grow and go on
            self._make_room(chunk, stop)

    def _make_room(self, chunk, t: int) -> None:
        """Room for example t of the chunk (Overflow when the arrays may not grow so far)."""
        nnz = self._pool_room(int(chunk.indptr[t + 1] - chunk.indptr[t]))
        try:
            self._check_size(self.support.capacity_for(len(self.support) + self.new_slots_per_example))
        except TooLarge as exc:
            raise Overflow(t, int(chunk.line_numbers[t]), str(exc)) from None
        self.support.reserve(len(self.support) + self.new_slots_per_example, nnz)
        self._resize(self.support.capacity)
        self._reserve_extra(nnz)

    def make_room(self, slots: int, nnz: int) -> None:
        """Room for `slots` support vectors in all and `nnz` more pool entries, in every per-slot array."""
        self.support.reserve(slots, nnz)
        self._resize(self.support.capacity)

    def _pool_room(self, nnz: int) -> int:
        """Pool entries one example of `nnz` non-zeros may need (merging needs more)."""
        return nnz

    def _check_size(self, capacity: int) -> None:
        """TooLarge when the learner's arrays must not grow to `capacity` slots (a multiclass model's)."""

    def _reserve_extra(self, nnz: int) -> None:
        """Room for one more example of `nnz` non-zeros in stores a learner keeps besides the support set."""

    def _resize(self, capacity: int) -> None:
        for name, kind in self.slot_arrays.items():
            old = self.slot[name]
            if old.shape[0] >= capacity:
                continue
            new = self._new_slot_array(kind, capacity)
            if kind == "square":
                new[: old.shape[0], : old.shape[1]] = old
            else:
                new[: old.shape[0]] = old
            self.slot[name] = new

    @staticmethod
    def _new_slot_array(kind: str, capacity: int) -> np.ndarray:
        shape = (capacity, capacity) if kind == "square" else (capacity,)
        return aligned_zeros(shape)

    def _ensure_scratch(self, n_features: int) -> None:
        if n_features > self.scratch.shape[0]:
            self.scratch = np.zeros(max(n_features, 2 * self.scratch.shape[0]), np.float64)

    def _support_record(self):
        return self.support.arrays

    def _state_arrays(self) -> dict:
        """The arrays the loop gets as `st`, by name: the per-slot arrays, and what a subclass adds."""
        return self.slot

    # ---- the hypothesis -----------------------------------------------------------------------
    def decision_function(self, chunk) -> np.ndarray:
        self._ensure_scratch(chunk.n_features)
        k = self.kernel.args()
        if fewscores.handles(k.code, len(chunk), len(self.support)):  # skips numba's ~1 s first-call cost
            return fewscores.binary_scores(
                self.support.arrays, k.code, k.gamma, self.slot["alpha"], *chunk.csr, self.scratch, k.offset
            )
        out = np.empty(len(chunk), np.float64)
        binary_scores(self.support.arrays, k, self.slot["alpha"], self.slot["krow"], *chunk.csr, self.scratch, out)
        return out

    def averaged_alpha(self) -> np.ndarray:
        """Coefficients of the averaged hypothesis (1/T) Σ_{t=1..T} f_t over the T rounds seen, on the
        current support set (the running sums of `touch`)."""
        n = len(self.support)
        T = self.counter("examples")
        s = self.slot
        return (s["avg_sum"][:n] + s["alpha"][:n] * (T + 1 - s["avg_stamp"][:n])) / max(T, 1)

    def averaged_coefficients(self) -> np.ndarray:
        """The averaged hypothesis's coefficients on the current support set (multiclass: n × m)."""
        return self.averaged_alpha()

    def set_coefficients(self, coef: np.ndarray) -> None:
        """Make `coef` the coefficients of the first len(coef) slots."""
        self.slot["alpha"][: len(coef)] = coef

    def _decisive_arrays(self) -> dict:
        """The running numbers and the per-slot vectors that are saved."""
        n = len(self.support)
        out = super()._decisive_arrays()
        for name, kind in self.slot_arrays.items():
            if kind == "vector":
                out[name] = self.slot[name][:n]
        return out

    def kernel_matrix(self, indptr, indices, values) -> np.ndarray:
        """K[t, i] = k(x_t, sv_i) for CSR rows x_t against the current support set."""
        self._ensure_scratch(int(indices.max()) + 1 if len(indices) else 0)
        out = np.zeros((len(indptr) - 1, len(self.support)))
        kernel_matrix(self.support.arrays, self.kernel.args(), indptr, indices, values, self.scratch, out)
        return out

    def gram(self) -> np.ndarray:
        """K, the Gram matrix of the support set (the loops' own kernel arithmetic)."""
        return self.kernel_matrix(*self.support.to_csr())

    # ---- what is asked of a hypothesis ----------------------------------------------------------
    def support_size(self) -> int:
        return len(self.support)

    def learned_nothing(self) -> bool:
        return len(self.support) == 0

    def summary_row(self) -> tuple[str, str]:
        return "support vectors", f"{len(self.support):,}"

    def size_warnings(self) -> list[str]:
        """None, or: no vector (f = 0: the model learned nothing); one vector after several mistakes when
        the algorithm's budget (if any) allows more."""
        t, m, n = self.counter("examples"), self.counter("mistakes"), len(self.support)
        if n == 0:
            return [f"0 support vectors after {t:,} examples: the model learned nothing (it scores every example 0)"]
        if n == 1 and m > 1 and self.hyper.get("budget", 2) > 1:
            return [f"1 support vector after {t:,} examples and {m:,} mistakes: the support set stopped growing at one"]
        return []

    def info_fields(self) -> dict:
        return {"support_size": len(self.support), "support_nonzeros": self.support.nnz, "feature_map": None}

    @classmethod
    def info_row(cls, d: dict) -> tuple[str, str]:
        largest = d["max_feature_index"]
        return (
            "support vectors",
            f"{d['support_size']:,} ({d['support_nonzeros']:,} non-zeros, {d['n_features']:,} features"
            + (f", indices up to {largest:,})" if largest is not None else ")"),
        )

    def expansion(self) -> tuple:
        n = len(self.support)
        return (*self.support.to_csr(), self.slot["alpha"][:n])

    # ---- state --------------------------------------------------------------------------------
    def _support_state(self) -> dict:
        indptr, idx, val = self.support.to_csr()
        return {"sv_indptr": indptr, "sv_indices": idx, "sv_values": val}

    def _kept_state(self) -> dict:
        """The saved per-slot arrays (a resume-state array still to be rebuilt left out, as the file it was
        loaded from left it out), then the archive of evicted vectors."""
        n, arrays = len(self.support), {}
        for name, kind in self.slot_arrays.items():
            if kind == "vector":
                arrays[name] = self.slot[name][:n].copy()
            elif kind == "square" and name not in self.stale:
                arrays[name] = self.slot[name][:n, :n].copy()
        return arrays | self._archive_state()

    @classmethod
    def saved_arrays(cls, header: dict, members: dict) -> dict:
        n = statecheck.vector_length(members, "sv_indptr") - 1
        nnz = statecheck.vector_length(members, "sv_indices")
        out = {
            "sv_indptr": ((n + 1,), statecheck.I64),
            "sv_indices": ((nnz,), statecheck.I32),
            "sv_values": ((nnz,), statecheck.F64),
        } | super().saved_arrays(header, members)
        for name, kind in (cls.slot_arrays | cls.superseded).items():
            if kind != "work":
                out[name] = ((n,) if kind == "vector" else (n, n), statecheck.F64)
        return out | cls._archive_arrays(members, out)

    @classmethod
    def check_saved(cls, header: dict, arrays: dict) -> None:
        super().check_saved(header, arrays)
        cls._check_archive(header, arrays)

    @classmethod
    def from_state(cls, header: dict, arrays: dict) -> "KernelLearner":
        """The inverse of `state` (subclasses restore what they add after calling it)."""
        self = super().from_state(header, arrays)
        self.support = SupportSet.from_csr(arrays["sv_indptr"], arrays["sv_indices"], arrays["sv_values"], dense=True)
        n = len(self.support)
        self.slot = {name: self._new_slot_array(kind, self.support.capacity) for name, kind in self.slot_arrays.items()}
        for name, kind in self.slot_arrays.items():
            if kind == "work":
                continue
            if name not in arrays and name in self.rebuilt:
                self.stale.add(name)
            elif name not in arrays and name in self.layout_defaults:
                self.slot[name][(slice(0, n),) * (2 if kind == "square" else 1)] = self.layout_defaults[name]
            elif kind == "vector":
                self.slot[name][:n] = arrays[name]
            else:
                self.slot[name][:n, :n] = arrays[name]
        self._ensure_scratch(self.n_features)
        # every feature seen in training, not only the kept vectors': an averaged model stores evicted
        # vectors back (batch_average), and a resumed run may re-add them
        self.support.cover(self.n_features)
        self._restore_archive(arrays)
        return self

    @classmethod
    def resume_arrays(cls, header: dict) -> set[str]:
        """The resume state: the kept matrices, and a running average's archive of evicted vectors with
        the sums before it was folded in."""
        return super().resume_arrays(header) | cls._archive_resume_arrays()


# ---- compiled scoring of a chunk (entry points compiled at install) --------------------------------


@njit(cache=True)
def kernel_matrix(S, K, indptr, indices, values, scratch, out):
    """out[t, i] = k(x_t, sv_i) for the rows of a CSR block against the live support vectors."""
    for t in range(indptr.shape[0] - 1):
        idx = indices[indptr[t] : indptr[t + 1]]
        val = values[indptr[t] : indptr[t + 1]]
        kernel_row(S, K, scratch, idx, val, sparse_sqnorm(val), out[t])


@njit(cache=True)
def binary_scores(S, K, alpha, krow, indptr, indices, values, scratch, out):
    """out[t] = Σ_i alpha_i k(x_t, sv_i) for every example of a chunk."""
    for t in range(indptr.shape[0] - 1):
        idx = indices[indptr[t] : indptr[t + 1]]
        val = values[indptr[t] : indptr[t + 1]]
        out[t] = score_example(S, K, alpha, krow, scratch, idx, val)[0]


# Where the slot arrays start: on a cache line (64 bytes), so that the loops' vectorised passes over a square
# array (rows of capacity × 8 bytes: each row on a line when the capacity is a multiple of 8, as 64 and its
# doublings are) do not load across two lines.  numpy aligns to 16 bytes only: a Gram inverse that started 16
# or 48 bytes into a line made the O(|S|²) loops at |S| = 100 up to 1.5 times slower (krls, fbkrls, krlst;
# rbsop 1.2 times), by where the allocator happened to put it.  Only speed: the sums' order is the code's.
ALIGNMENT = 64


def aligned_zeros(shape: tuple) -> np.ndarray:
    """np.zeros(shape) of float64 whose first element starts on an ALIGNMENT-byte boundary."""
    size = int(np.prod(shape))
    pad = ALIGNMENT // 8
    buffer = np.zeros(size + pad, np.float64)
    skip = (-buffer.ctypes.data % ALIGNMENT) // 8
    return buffer[skip : skip + size].reshape(shape)
