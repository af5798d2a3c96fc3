"""What a support-set learner that evicts keeps of the vectors it evicts, for its averaged hypothesis
(`KeepsEvicted`): it logs them from the loop, keeps them in an archive (retired.Retired), compresses a
running average's archive to a bound, folds it into a model file's running sums and into a batch average,
and saves it as resume state.
"""

from __future__ import annotations

import numpy as np

from . import statecheck
from ..numerics._jit import njit
from ..base.core import gather_rows
from ..numerics.kernels import kernel_from_dot, kernel_values, scatter, unscatter
from ..numerics.gram import onto_kept
from .records import NO_MATRIX, RetireLog
from .retired import ARCHIVE_ARRAYS, Retired
from ..numerics.support import DENSE_LIMIT, dense_dots, sv_put

# A running average keeps at most 2·max(B, ARCHIVE_MIN) evicted vectors (`archive_keep`).
ARCHIVE_MIN = 64


def archive_keep(params: dict) -> int:
    """How many evicted vectors a compression of a running average's archive keeps (`compress_retired`):
    max(B, ARCHIVE_MIN), B the budget in `params` (a model file's, from anybody: a budget that is no
    integer counts as none)."""
    budget = params.get("budget", 0)
    return max(budget if type(budget) is int else 0, ARCHIVE_MIN)


class KeepsEvicted:
    """What a support-set learner (learner.KernelLearner) keeps of the vectors it evicts, for its averaged
    hypothesis.  The exact average needs the evicted vectors too: with `keep_retired` set, the loop logs
    each eviction (rounds.retire) and `_collect_retired` copies the evicted vector and its summed
    coefficient into `retired` before the pool range can be reused.  Off unless the run writes an
    average (`keep_evicted`): it makes memory grow with the number of evictions, up to the bound of
    the archive's compression for a running average."""

    # True when support vectors are discarded (the learner must call `retire` first).
    evicts = False
    # The running sums of the average that the archive of evicted vectors is folded into when a model
    # file is written (`folded_sums`): per slot ("avg_sum") or per slot and class ("avg_base", multiclass).
    folded_array = "avg_sum"

    def _keep_nothing_evicted(self) -> None:
        # with `keep_retired`, keep at most 2 × this many evicted vectors: past that, compress them back to
        # this many (compress_retired; a running average's constant memory); 0: keep them all
        # (online-to-batch's exact average).  Set by `keep_evicted`.
        self.archive_keep = 0
        # the evicted vectors and their Σ_t coefficient: resume state (`state`), folded onto the kept
        # vectors in a written model's average (`folded_sums`), never in the learner that goes on
        self.retired = Retired(self.multiclass)

    def keep_evicted(self, hypothesis: str) -> None:
        """Keep what the hypothesis a run writes (spec.HYPOTHESES) needs of the vectors the learner evicts:
        nothing for the last one (an archive kept so far is dropped); every one for online-to-batch's
        averages (batch_average); for a running average, an archive of at most 2·`archive_keep` of them,
        compressed back to `archive_keep` when full (`compress_retired`).  One rule for every interface
        (the learning session's)."""
        self.keep_retired = self.evicts and hypothesis in ("running-average", "average", "projected-average")
        self.archive_keep = archive_keep(self.hyper) if self.keep_retired and hypothesis == "running-average" else 0
        if not self.keep_retired:
            self.retired.clear()

    def _size_retire_log(self, rows: int) -> None:
        """Room in the retire log for a chunk of `rows` examples: every eviction removes a vector present at
        the start or added since, at most one per example plus the current support set, a bound the
        compiled loops rely on (they do not bounds-check)."""
        need = self.new_slots_per_example * rows + len(self.support) if self.evicts and self.keep_retired else 0
        sums = self._new_retire_log_sums(need)
        if self.retire_log.start.shape[0] < need or self.retire_log.coef_sum.shape[1:] != sums.shape[1:]:
            self.retire_log = RetireLog(np.zeros(need, np.int64), np.zeros(need, np.int64), sums, self.retire_log.count)

    def _new_retire_log_sums(self, rows: int) -> np.ndarray:
        """The retire log's summed coefficients: one number per evicted vector."""
        return np.zeros(rows)

    def _collect_retired(self) -> None:
        """The vectors the loop logged into the archive (compressed when a running average's is full)."""
        log = self.retire_log
        c = int(log.count[0])
        if c:
            a = self.support.arrays
            self.retired.append_pool(a.pool_idx, a.pool_val, log.start[:c], log.length[:c], log.coef_sum[:c])
            self.retired.evicted += c
        log.count[0] = 0
        if self.archive_keep:
            self.compress_retired(self.archive_keep)

    def retired_rows(self) -> tuple:
        """The evicted vectors kept in `retired`, as CSR rows (indptr, indices, values)."""
        return self.retired.rows()

    def retired_sums(self) -> np.ndarray:
        """Σ_t coefficient of each evicted vector over the rounds it was in the hypothesis (multiclass:
        classes × vectors, as `gram.onto_kept` takes them)."""
        return self.retired.sums().copy()

    def _archive_classes(self) -> int | None:
        """The columns of the archive's summed coefficients in a model file: None (binary: one number)."""
        return None

    def folded_sums(self) -> np.ndarray | None:
        """The running sums `folded_array` of the kept vectors with the archive's part folded in, as a
        model file of the running average holds them, or None when there is nothing to fold (no evicted
        vector kept, or no vector kept to fold it onto: f = 0).  The learner itself is left as it is:
        writing a file never changes the run that goes on.

        Each evicted vector's summed coefficient is projected onto the span of the current support
        set (`gram.onto_kept`, as `batch_average(projected=True)` does) and added to the kept
        vectors' sums, so the file's average stays within the budget."""
        if not self.retired or not len(self.support):
            return None
        return self._sums_view() + onto_kept(self, self.retired_rows(), self.retired_sums()).T

    def _sums_view(self) -> np.ndarray:
        """The kept vectors' part of `folded_array` (a view)."""
        return self.slot["avg_sum"][: len(self.support)]

    def averaged_copy(self):
        copy = super().averaged_copy()
        folded = self.folded_sums()
        if folded is not None:
            copy._sums_view()[...] = folded
        return copy

    def batch_average(self, projected: bool = False):
        """Without evictions the average lives on the online support set.  Vectors the learner evicted
        (kept in `retired` when `keep_retired` was on) are part of the exact average, which then grows
        beyond the budget; with `projected` their part is instead projected onto the span of the final
        support set (the RKHS-closest combination of the kept vectors), so the model keeps the budget."""
        learner = type(self).from_state(*self.portable_state())
        n = len(learner.support)
        T = max(self.counter("examples"), 1)
        coef = self.averaged_coefficients()
        if self.retired:
            rows, sums = self.retired_rows(), self.retired_sums() / T
            if projected:
                coef = coef + onto_kept(learner, rows, sums).T
            else:
                indptr, indices, values = rows
                learner.make_room(n + len(indptr) - 1, len(indices))
                for j in range(len(indptr) - 1):
                    idx, val = indices[indptr[j] : indptr[j + 1]], values[indptr[j] : indptr[j + 1]]
                    sv_put(learner.support.arrays, n + j, idx, val, float(val @ val))
                coef = np.concatenate([coef, sums.T])
        learner.set_coefficients(coef)
        return learner

    def fold_archive(self, arrays: dict, predicting, resume: bool) -> int | None:
        """The file's running sums hold the archive folded in (those of `predicting`), and with `resume`
        the sums before that fold too, as "unfolded_" + `folded_array`, which a resume goes on from."""
        if self.retired and len(self.support):
            if resume:
                arrays["unfolded_" + self.folded_array] = arrays[self.folded_array]
            arrays[self.folded_array] = predicting._sums_view().copy()
        if not self.evicts:
            return None
        return 0 if resume else len(self.retired)

    def archive_counts(self) -> tuple[int, int, int]:
        return len(self.retired), self.retired.evicted, self.retired.compressions

    def compress_retired(self, keep: int) -> None:
        """Bound the evicted vectors a running average keeps (constant memory on an endless stream): of
        the first 2·keep of them (in the order they were evicted, so that where a chunk was cut, by a
        curve's rows or a block's end, changes nothing), the `keep` whose summed coefficients weigh most
        (|Σ_t α| √k(x, x); a multiclass row's norm) stay, and the others' part is projected onto the
        span of those (`onto_kept`'s least squares, among the evicted vectors alone).  Projected among
        themselves, a part is moved once per compression, not again each time the online learner evicts
        the vector it was folded onto (docs/ALGORITHMS.md has the measurement that chose it)."""
        archive = self.retired
        if len(archive) < 2 * keep:
            return
        # each compression takes the survivors of the last and the next `keep` evicted vectors: the
        # survivors are carried as arrays with their Gram matrix, the archive's rows read as slices,
        # and the rest moved once
        survivors = (*archive.rows(0, keep), archive.sums(0, keep).reshape(keep, -1))
        gram = archive.head_gram if archive.head_gram is not None and len(archive.head_gram) == keep else None
        end = keep
        while len(archive) - end >= keep:
            then = (*archive.rows(end, end + keep), archive.sums(end, end + keep))
            survivors, gram = self._compress(keep, survivors, then, gram)
            archive.compressions += 1
            end += keep
        indptr, indices, values, sums = survivors
        archive.replace_head(end, indptr, indices, values, sums.reshape(keep) if archive.sums().ndim == 1 else sums)
        archive.head_gram = gram

    def _compress(self, keep: int, first: tuple, then: tuple, first_gram: np.ndarray | None) -> tuple:
        """One compression (`compress_retired`) of the 2·keep rows `first` + `then`, each (indptr,
        indices, values, sums), `first_gram` the kernel matrix of `first` when known; returns the
        `keep` survivors in the same form, in their order, and their kernel matrix.

        A multiclass row holds a column per class the arrays had room for when it was logged, the columns
        past the classes known then zero: the columns past the last one any row of the 2·keep uses are
        left out of the arithmetic (and padded back by the archive), so that its bits depend on the rows
        alone, not on how far the arrays had grown (a resumed learner's are sized afresh).

        Most survivors survive again, so the kernel values among them are taken from `first_gram`:
        k(x_t, sv_i) depends on the two vectors alone (kernel_row's sum runs over x_t's features in
        order), the same bits whichever set computes it."""
        indptr = np.concatenate([first[0], then[0][1:] + first[0][-1]])
        indices = np.concatenate([first[1], then[1]])
        values = np.concatenate([first[2], then[2]])
        a, b = first[3], then[3].reshape(len(then[0]) - 1, -1)
        sums = np.zeros((len(a) + len(b), max(a.shape[1], b.shape[1])))
        sums[: len(a), : a.shape[1]], sums[len(a) :, : b.shape[1]] = a, b
        used = np.flatnonzero(sums.any(axis=0))
        sums = sums[:, : used[-1] + 1 if len(used) else 1]
        head = len(indptr) - 1
        lengths = np.diff(indptr)
        sq = np.bincount(np.repeat(np.arange(head), lengths), weights=values * values, minlength=head)
        weight = np.linalg.norm(sums, axis=1) * np.sqrt(np.abs(self._self_kernels(sq)))
        kept = np.sort(np.argsort(-weight, kind="stable")[:keep])
        is_gone = np.ones(head, bool)
        is_gone[kept] = False
        gone = np.flatnonzero(is_gone)

        self._ensure_scratch(int(indices.max()) + 1 if len(indices) else 0)
        gram, cross = np.empty((keep, keep)), np.empty((len(gone), keep))
        known = NO_MATRIX if first_gram is None else first_gram
        compression_kernels(
            self.kernel.args(), indptr, indices, values, sq, kept, gone, known, keep, self.scratch, gram, cross
        )
        kept_gram = gram.copy()
        ridge = 1e-10 * max(float(np.trace(gram)) / keep, 1e-300)
        gram.flat[:: keep + 1] += ridge  # gram + ridge·I, without making I
        beta = np.linalg.solve(gram, cross.T @ sums[gone])
        survivors = gather_rows(indptr[kept], lengths[kept], indices, values)
        return (*survivors, sums[kept] + beta), kept_gram

    def _self_kernels(self, sq: np.ndarray) -> np.ndarray:
        """k(x, x) of vectors whose squared norms are `sq`."""
        k = self.kernel
        if k.kind == "rbf":
            return np.ones_like(sq)
        return (k.gamma * sq + k.coef0) ** k.degree if k.kind == "poly" else sq

    # ---- the archive in a model file: resume state ----------------------------------------------
    def _archive_state(self) -> dict:
        return self.retired.to_arrays(self._archive_classes()) if self.retired else {}

    @classmethod
    def _archive_arrays(cls, members: dict, out: dict) -> dict:
        """The archive's arrays a file may hold (resume state) by shape, for the checks of a file from
        anybody (`out`: the learner's other arrays)."""
        if not (cls.evicts and "retired_indptr" in members):
            return {}
        r = statecheck.vector_length(members, "retired_indptr") - 1
        nnz = statecheck.vector_length(members, "retired_indices")
        arrays = {
            "retired_indptr": ((r + 1,), statecheck.I64),
            "retired_indices": ((nnz,), statecheck.I32),
            "retired_values": ((nnz,), statecheck.F64),
            "retired_sums": ((r,), statecheck.F64),  # multiclass: a column per class
            "retired_counts": ((2,), statecheck.I64),
        }
        if "avg_sum" in out and cls.folded_array == "avg_sum":
            arrays["unfolded_avg_sum"] = out["avg_sum"]  # the sums before the archive's fold (model.Model.save)
        return arrays

    @classmethod
    def _check_archive(cls, header: dict, arrays: dict) -> None:
        statecheck.check_archive(header, arrays, archive_keep(header["params"]), "unfolded_" + cls.folded_array)

    @classmethod
    def from_file(cls, header: dict, arrays: dict):
        unfolded = "unfolded_" + cls.folded_array
        if unfolded in arrays:  # resumed: the running sums before the archive was folded into the file's
            arrays[cls.folded_array] = arrays.pop(unfolded)
        return super().from_file(header, arrays)

    def _restore_archive(self, arrays: dict) -> None:
        if "retired_indptr" in arrays:
            self.retired.restore(arrays)

    @classmethod
    def _archive_resume_arrays(cls) -> set[str]:
        return {*ARCHIVE_ARRAYS, "unfolded_" + cls.folded_array} if cls.evicts else set()


@njit(cache=True)
def compression_kernels(K, indptr, indices, values, sq, kept, gone, known, keep, scratch, gram, cross):
    """gram[a, b] = k(x_kept[a], x_kept[b]) and cross[g, b] = k(x_gone[g], x_kept[b]) for the rows of a
    compression's CSR block (`KeepsEvicted._compress`), sq their squared norms, `scratch` a zeroed
    work vector as wide as the block's features; between two of the first `keep` rows the value is read
    from `known` when it has rows (their kernel matrix).

    Each computed value is `kernel_row`'s: the dot product summed over the row's features in order (a
    feature the column lacks adds a zero), then `kernel_from_dot(K, dot, ‖row‖², ‖column‖²)` (a row at
    a time through `kernel_values`: the same bits); so a value is the same bits whichever compression
    computed it.  The survivors are copied dense (feature
    × survivor, as the support set keeps them) while that copy stays within DENSE_LIMIT entries, and a
    row's dot products are kernel_row's sweep (`dense_dots`); wider data scatters each survivor in turn."""
    head, n = indptr.shape[0] - 1, kept.shape[0]
    reuse = known.shape[0] > 0
    place = np.empty(head, np.int64)  # a row's row of gram (≥ 0), or of cross (−1 − its row)
    for b in range(n):
        place[kept[b]] = b
    for g in range(gone.shape[0]):
        place[gone[g]] = -1 - g
    if scratch.shape[0] * n > DENSE_LIMIT:
        for b in range(n):
            c = kept[b]
            scatter(scratch, indices[indptr[c] : indptr[c + 1]], values[indptr[c] : indptr[c + 1]])
            for r in range(head):
                if reuse and r < keep and c < keep:
                    value = known[r, c]
                else:
                    dot = 0.0
                    for j in range(indptr[r], indptr[r + 1]):
                        dot += values[j] * scratch[indices[j]]
                    value = kernel_from_dot(K, dot, sq[r], sq[c])
                if place[r] >= 0:
                    gram[place[r], b] = value
                else:
                    cross[-1 - place[r], b] = value
            unscatter(scratch, indices[indptr[c] : indptr[c + 1]])
        return
    dense = np.zeros((scratch.shape[0], n))
    for b in range(n):
        for j in range(indptr[kept[b]], indptr[kept[b] + 1]):
            dense[indices[j], b] = values[j]
    kept_sq = np.empty(n)
    for b in range(n):
        kept_sq[b] = sq[kept[b]]
    for r in range(head):
        target = gram[place[r]] if place[r] >= 0 else cross[-1 - place[r]]
        if reuse and r < keep:  # the survivors carried over are known; the new ones are few
            for b in range(n):
                c = kept[b]
                if c < keep:
                    target[b] = known[r, c]
                else:
                    dot = 0.0
                    for j in range(indptr[r], indptr[r + 1]):
                        dot += values[j] * dense[indices[j], b]
                    target[b] = kernel_from_dot(K, dot, sq[r], sq[c])
        else:
            dense_dots(dense, indices[indptr[r] : indptr[r + 1]], values[indptr[r] : indptr[r + 1]], n, target)
            kernel_values(K, target, n, sq[r], kept_sq)
