"""The evicted vectors a running average still needs, kept as one CSR block.

The averaged hypothesis (1/T) Σ_t f_t of an evicting learner includes vectors the budget has
discarded: each keeps its summed coefficient Σ_t α over the rounds it was in the hypothesis
(rounds.retire logs them; archive.KeepsEvicted copies them here before their pool range is reused).
Row k is the k-th evicted vector in the order of eviction, `sums[k]` its summed coefficient (binary:
a float per row; multiclass: a row per vector, a class column for every class known when it left,
zero-padded as classes are added).

One block of arrays instead of a Python tuple per vector: an averaged run evicts on most rounds
(bpegasos B = 100 on a9a: 19,500 vectors, compressed 194 times), and the per-vector copies and lists
cost more than the compressions' arithmetic.  The arrays grow by doubling; iterating or indexing
gives (indices, values, sum) tuples, for tests and readers.

The archive decides the averages a run writes later, so it is resume state: a model file written with
the resume state holds it as ARCHIVE_ARRAYS (`to_arrays`, `restore`; statecheck.check_archive checks a
file's), and a run resumed from it continues bit for bit.  The kernel matrix of its first rows
(`head_gram`) is not saved: it only spares a compression kernel values that it computes to the same
bits (archive.compression_kernels).
"""

from __future__ import annotations

import numpy as np

from ..base.core import gather_rows

# The archive in a model file: its CSR rows, their summed coefficients, and [evicted, compressions]
ARCHIVE_ARRAYS = ("retired_indptr", "retired_indices", "retired_values", "retired_sums", "retired_counts")


def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """`a` with room for `need` rows (doubling), its content kept."""
    if a.shape[0] >= need:
        return a
    out = np.zeros((max(need, 2 * a.shape[0]),) + a.shape[1:], a.dtype)
    out[: a.shape[0]] = a
    return out


class Retired:
    """Evicted vectors (CSR rows) and their summed coefficients: a float each, or a row (`multiclass`)."""

    def __init__(self, multiclass: bool = False):
        self._indptr = np.zeros(1, np.int64)
        self._indices = np.zeros(0, np.int32)
        self._values = np.zeros(0, np.float64)
        self._sums = np.zeros((0, 0)) if multiclass else np.zeros(0)
        self.n = 0
        # the kernel matrix of the first rows, when a compression left its survivors there
        # (archive.KeepsEvicted.compress_retired sets it; anything that changes those rows clears it)
        self.head_gram: np.ndarray | None = None
        self.evicted = 0  # vectors ever added (archive.KeepsEvicted._collect_retired)
        self.compressions = 0  # compressions of 2·keep rows to keep (archive.KeepsEvicted.compress_retired)

    def __len__(self) -> int:
        return self.n

    def rows(self, lo: int = 0, hi: int | None = None) -> tuple:
        """Rows lo .. hi − 1 as CSR (indptr from 0, indices, values): views, no copy of the entries."""
        hi = self.n if hi is None else hi
        p = self._indptr[lo : hi + 1]
        return p - p[0], self._indices[p[0] : p[-1]], self._values[p[0] : p[-1]]

    def sums(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        return self._sums[lo : self.n if hi is None else hi]

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self.n))]
        if not -self.n <= k < self.n:
            raise IndexError(k)
        k %= self.n
        lo, hi = self._indptr[k], self._indptr[k + 1]
        s = self._sums[k]
        return self._indices[lo:hi], self._values[lo:hi], float(s) if s.ndim == 0 else s

    def __iter__(self):
        return (self[k] for k in range(self.n))

    def clear(self) -> None:
        self.n = 0
        self.head_gram = None
        self.evicted = self.compressions = 0

    def to_arrays(self, classes: int | None = None) -> dict:
        """The archive as a model file holds it (ARCHIVE_ARRAYS), copies; `classes`: a multiclass
        archive's columns (those past the classes known are zero)."""
        indptr, indices, values = self.rows()
        sums = self.sums()
        if classes is not None:
            fitted = np.zeros((self.n, classes))
            width = min(classes, sums.shape[1])
            fitted[:, :width] = sums[:, :width]
            sums = fitted
        return dict(
            zip(
                ARCHIVE_ARRAYS,
                (
                    indptr,
                    indices.copy(),
                    values.copy(),
                    sums.copy(),
                    np.array([self.evicted, self.compressions], np.int64),
                ),
            )
        )

    def restore(self, arrays: dict) -> None:
        """The archive `to_arrays` gave (a model file's, checked by statecheck.check_archive)."""
        self.clear()
        indptr, indices, values, sums, counts = (arrays[name] for name in ARCHIVE_ARRAYS)
        self.append(indptr.astype(np.int64), indices, values, sums.astype(np.float64))
        self.evicted, self.compressions = (int(c) for c in counts)

    def append(self, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray, sums: np.ndarray) -> None:
        """Add CSR rows (indptr from 0) and their summed coefficients at the end."""
        rows, nnz, at = len(indptr) - 1, int(indptr[-1]), int(self._indptr[self.n])
        if sums.ndim == 2 and sums.shape[1] != self._sums.shape[1]:  # classes were added: pad
            width = max(sums.shape[1], self._sums.shape[1])
            sums = np.pad(sums, ((0, 0), (0, width - sums.shape[1])))
            self._sums = np.pad(self._sums, ((0, 0), (0, width - self._sums.shape[1])))
        self._indptr = _grown(self._indptr, self.n + rows + 1)
        self._indices = _grown(self._indices, at + nnz)
        self._values = _grown(self._values, at + nnz)
        self._sums = _grown(self._sums, self.n + rows)
        self._indptr[self.n + 1 : self.n + rows + 1] = indptr[1:] + at
        self._indices[at : at + nnz] = indices
        self._values[at : at + nnz] = values
        self._sums[self.n : self.n + rows] = sums
        self.n += rows

    def append_pool(self, pool_idx, pool_val, start, length, sums) -> None:
        """Add the vectors at pool ranges start[k] .. start[k] + length[k]."""
        self.append(*gather_rows(start, length, pool_idx, pool_val), sums)

    def replace_head(self, end: int, indptr, indices, values, sums) -> None:
        """Rows 0 .. end − 1 become the given rows (a compression's survivors); the rest follow."""
        tail = self.rows(end), self.sums(end).copy()
        (t_indptr, t_indices, t_values), t_sums = tail
        t_indices, t_values = t_indices.copy(), t_values.copy()
        self.n = 0
        self.append(indptr, indices, values, sums)
        self.append(t_indptr, t_indices, t_values, t_sums)
