"""Iterative parameter mixing, the learner's side: how an algorithm's models are averaged and brought
back to its own bounds.  Each algorithm declares one `Mixing` as its class attribute `mixing`
(contract.Learner): the default fits a kernel expansion f = Σ_i α_i k(sv_i, ·); an algorithm
overrides what differs (its running numbers after a mix, its own way back to a budget, one class per
vector) in a subclass beside it, or declares `Unmixable(reason)`.  The protocol that uses it (rounds,
shards, restarts, the weighted union) is distributed/.

Compression brings a mix's union back: a budget by keeping the B largest coefficients and projecting
the rest onto them by a ridge least-squares solve in the RKHS (Ahpatron's eq. 9, `project_rest`); the
Projectron's η by its own rule (`WithinSpan`); budgeted Pegasos by its own maintenance, its points then
fitted to the whole mix (`refit`).  Why each, with the figures that chose it: distributed/__init__.py.
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics.projection import DEPENDENCE_TOL
from ..numerics.gram import onto_kept
from .records import EXAMPLES

MIX_RIDGE = 0.0005  # η of the compression's projection, times the mean k(x, x) (Ahpatron's default)


class Mixing:
    """The default mixing of a kernel expansion f = Σ α_i k(sv_i, ·): its per-slot state is α, the
    averaged hypothesis' sums, the resume state (`rebuilt`, made afresh after a mix) and each vector's
    first occurrence's other numbers; its running numbers (`scalars`) start again at zero; a budget is
    brought back by keeping the largest coefficients and projecting the rest onto them."""

    reason = ""  # why the algorithm's models cannot be averaged ("": they can)
    at_end = False  # mixed once, when every shard is through (a state that is no average: lms.RegressionMixing)
    remade: tuple[str, ...] = ()  # per-slot arrays `after_mix` makes from the mixed model

    def compress(self, learner):
        """The mixed learner back within the algorithm's bound (a budget B, when it has one)."""
        budget = learner.hyper.get("budget")
        return learner if budget is None else compress_to_budget(learner, budget)

    def scalars(self, cls, shard_scalars: list, shard_counters: list, counters: np.ndarray) -> np.ndarray:
        """The mixed model's `scalars` (of algorithm `cls`) from the shards' (those that learned since the last
        mix) and the mixed counters: zeros, for `after_mix` to set from the mixed model."""
        return np.zeros(len(shard_scalars[0]))

    def after_mix(self, learner) -> None:
        """Set what `scalars` and the `remade` arrays hold for the mixed model."""

    def mix(self, cls, reports: list, columns: list | None, width: int, counters, base, base_columns) -> dict:
        """The mixed model's arrays of the shards' reports (distributed/average.py; `columns`: where each
        multiclass report's classes go among the `width` merged ones): f = Σ_w (n_w/n) f_w over the union
        of their support sets (identical vectors merged).  The averaged hypothesis' running sums are the
        last mix's (`base`, a report of the last mixed model; None before the first) plus what each shard
        added to it since, Σ_w sum_w − (k − 1)·sum_base, each shard's sum its average times its count.  A
        learner that evicts keeps no sums for the vectors it evicted, so there the average is the shares'
        mix of the shards' averages instead.  A vector that serves one class only (`row_classes`:
        mc-projectron++) is merged only with the same vector of that class.  Other per-slot arrays
        (Pegasos' `born`) are each vector's first occurrence's."""
        T = int(counters[EXAMPLES])
        total = sum(r["learned"] for r in reports)
        kept = ("alpha", "avg_sum", "avg_stamp")
        union = _Union(width, [n for n, kind in cls.slot_arrays.items() if kind == "vector" and n not in kept])
        counts, base_count = sum_counts(cls, reports, T, base)
        for k, (r, count) in enumerate(zip(reports, counts)):
            if count is None:
                continue  # it adds nothing, and the vectors it kept may be ones the others evicted
            share = r["learned"] / total
            union.add(r, None if columns is None else columns[k], share, count, self.row_classes(r["arrays"]))
        if base_count is not None:
            union.add(base, base_columns, 0.0, base_count, self.row_classes(base["arrays"]))
        lengths = [len(idx) for idx, _ in union.rows]
        learned = [r["arrays"] for r in reports if r["learned"]]
        arrays = dict(
            reports[0]["arrays"],  # rng_state: shard 0's
            sv_indptr=np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64),
            sv_indices=np.concatenate([i for i, _ in union.rows] or [np.zeros(0, np.int32)]).astype(np.int32),
            sv_values=np.concatenate([v for _, v in union.rows] or [np.zeros(0)]).astype(np.float64),
            counters=counters,
            scalars=self.scalars(cls, [a["scalars"] for a in learned], [a["counters"] for a in learned], counters),
            **{name: np.array(values, np.float64) for name, values in union.first.items()},
        )
        online, sums = (np.array(x).reshape(-1, union.width) for x in (union.online, union.sums))
        if self.row_classes(reports[0]["arrays"]) is not None:
            arrays = self.with_row_classes(arrays, np.array(union.classes, np.int64).reshape(-1), union.width)
        return with_rows(cls, arrays, online, sums / max(T, 1), T)

    def reference(self, learner):
        """A mixed model as `divergence` measures from it (None: f = 0, the start): its support vectors
        (CSR), coefficients β and ‖r‖² = βᵀKβ."""
        if learner is None or not len(learner.support):
            return (np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0)), np.zeros((0, 1)), 0.0
        beta = online_rows(learner).copy()
        return learner.support.to_csr(), beta, float(np.sum(beta * (learner.gram() @ beta)))

    def divergence(self, learner, reference) -> float:
        """‖f − r‖², f the learner's hypothesis, r the `reference` one, in the RKHS: αᵀKα − 2 βᵀK_rf α
        + βᵀK_rβ (Kamp et al. 2014: the local condition ‖f − r‖² ≤ Δ of dynamic averaging)."""
        n = len(learner.support)
        rows, beta, rr = reference
        if n == 0:
            return rr
        alpha = online_rows(learner)  # n × classes (a binary learner: one column)
        ff = np.sum(alpha * (learner.gram() @ alpha))
        fr = 0.0
        if len(beta):  # classes seen since the mix have a zero prototype in r
            beta = np.pad(beta, ((0, 0), (0, alpha.shape[1] - beta.shape[1])))
            fr = np.sum(beta * (learner.kernel_matrix(*rows) @ alpha))
        return max(float(ff - 2.0 * fr + rr), 0.0)  # rounding may leave a tiny negative

    def row_classes(self, arrays: dict) -> np.ndarray | None:
        """The class each support vector serves (saved arrays' class numbering) for a multiclass learner
        whose vectors each serve one class; None: every vector serves every class.  A mix merges
        identical vectors only within one class then, and `with_row_classes` rebuilds the structure."""
        return None

    def with_row_classes(self, arrays: dict, classes: np.ndarray, n_classes: int) -> dict:
        """A mixed model's arrays with the per-class structure of its vectors' `classes`."""
        return arrays


def sum_counts(cls, reports: list, T: int, base: dict | None) -> tuple[list, float | None]:
    """How many examples each report's averaged hypothesis counts for in the mixed averaged hypothesis's
    running sums (its average times T), and the last mix's (`base`): each its own count, the last mix's
    −(k − 1) times its own, so that a sum is the last mix's plus what each shard added to it since; for a
    learner that evicts (whose shards keep no sums for the vectors they evicted), each its share of T and
    the last mix's none: the shares' mix of the shards' averages.  None for a report that adds nothing (an
    evicting learner's that learned nothing since the last mix), and for no last mix."""
    if cls.evicts:
        total = sum(r["learned"] for r in reports)
        return [r["learned"] / total * T if r["learned"] else None for r in reports], None
    counts = [int(r["arrays"]["counters"][EXAMPLES]) for r in reports]
    return counts, None if base is None else -(len(reports) - 1) * int(base["arrays"]["counters"][EXAMPLES])


class Unmixable(Mixing):
    """An algorithm whose models cannot be averaged: `reason` is the one line a sharded run is refused with."""

    def __init__(self, reason: str):
        self.reason = reason


class WithinSpan(Mixing):
    """An algorithm without a budget whose support set is bounded by η (the Projectron's rule): a mix's
    union is brought back by that rule (`compress_to_span`)."""

    def compress(self, learner):
        return compress_to_span(learner, learner.hyper["eta"])


def online_rows(learner) -> np.ndarray:
    """The hypothesis' coefficients, a row per support vector and a column per class (true units;
    a binary learner's α as one column)."""
    if learner.multiclass:
        return learner.coefficients()
    return learner.slot["alpha"][: len(learner.support), None]


def averaged_rows(learner) -> np.ndarray:
    """The averaged hypothesis' coefficients as a report holds them: n (binary) or n × classes."""
    return learner.averaged_coefficients()


def with_rows(cls, arrays: dict, online: np.ndarray, average: np.ndarray, T: int) -> dict:
    """`arrays` with the coefficients of the mix: online and averaged, n × classes in true units (the
    averaged hypothesis as the running sums that divide by T to give it, restarted at T)."""
    n = len(online)
    if not cls.multiclass:
        return dict(arrays, alpha=online[:, 0].copy(), avg_sum=average[:, 0] * max(T, 1), avg_stamp=np.full(n, T + 1.0))
    # Σ_{s≤T} f_s = avg_base + (C + scale) coef − U (multiclass.py): C = 0, scale 1, U = coef make it T·average
    return dict(
        arrays,
        coef=online.copy(),
        scale=np.ones(1),
        avg_base=average * T,
        avg_offset=online.copy(),
        avg_scalars=np.array([0.0, 1.0]),
    )


def compress_to_budget(learner, budget: int):
    """The learner back at `budget` support vectors: the largest coefficients kept (|α|, or the norm of
    a multiclass row; ties to the earlier slot), the rest projected onto them (`onto_kept`), for the
    online and the averaged coefficients alike."""
    n = len(learner.support)
    if n <= budget:
        return learner
    keep = np.sort(np.argsort(-np.linalg.norm(online_rows(learner), axis=1), kind="stable")[:budget])
    return project_rest(learner, keep, MIX_RIDGE)


def refit(learner, union: tuple, mixed: np.ndarray):
    """The learner's support vectors (chosen by its own maintenance from a mix's union) with the
    coefficients that bring its f closest to the mixed one, Σ_u mixed_u k(union_u, ·): the projection
    `onto_kept` with the compression's ridge.  Each merge of budgeted Pegasos fits the merged point's
    coefficients to its pair alone; after the hundreds of merges that bring a union of k·B vectors back
    to B, the fit to the whole mix is what keeps it (letter, B = 100, 8 shards mixed every 200 examples,
    five orders of the lines: 74.20% without it, 75.66% with it, against 76.26% for one process).  The
    averaged coefficients are left as the maintenance made them: such a learner evicts, and a sharded
    run keeps no average for it."""
    beta = onto_kept(learner, union, mixed.T, ridge=MIX_RIDGE).T
    header, arrays = learner.portable_state()
    average = averaged_rows(learner).reshape(len(beta), -1)
    cls = type(learner)
    return cls.from_state(header, with_rows(cls, arrays, beta, average, max(learner.counter("examples"), 1)))


def compress_to_span(learner, eta: float):
    """A mix's union brought back by the Projectron's own rule (Orabona, Keshet, Caputo, JMLR 2009,
    Fig. 2), for the learners that bound their support set by η instead of a budget (`WithinSpan`):
    taken one by one, a vector is kept when its distance ‖δ‖ to the span of the vectors kept before it
    exceeds η (and the numerical dependence test, as in learning), and its coefficients are otherwise
    projected onto the kept ones (eq. 7), online and averaged alike.  A union the rule allows as it
    stands, in slot order (one shard's set), is kept whole; any other is taken largest coefficient first
    (row norm; ties to the earlier slot), as the budget's compression keeps the largest, so that the
    kept vectors carry most of f and every shard's count alike.  (In slot order, shard 0's vectors would
    come first: on a9a with 16 shards mixed once, at the end, the averaged hypothesis lost 0.56 point to
    mixing every 200 examples; largest first, 0.22.)  Without the rule the union grows with the shards
    at every mix (1,164 vectors over 16 shards of a stream on which one process keeps 113), and so does
    every shard's work per example."""
    if span_keep(learner, eta, whole=True) is not None:
        return learner
    order = np.argsort(-np.linalg.norm(online_rows(learner), axis=1), kind="stable")
    return project_rest(learner, span_keep(learner, eta, order), DEPENDENCE_TOL)  # round-off ridge: independent


def span_keep(
    learner, eta: float, order: np.ndarray | None = None, whole: bool = False, block: int = 512
) -> np.ndarray | None:
    """The slots kept by the Projectron's rule taken in `order` (default: slot order), in slot order: by
    a Cholesky factor of the kept vectors' Gram matrix grown one row per kept vector (kernel rows
    computed a block of vectors at a time).  With `whole`, None as soon as one vector is not kept."""
    import scipy.linalg  # here: only a mix of such learners needs it, and it is slow to import

    csr = learner.support.to_csr()
    n = len(csr[0]) - 1
    order = np.arange(n) if order is None else order
    kept: list[int] = []
    factor = np.zeros((min(n, 256), min(n, 256)))  # lower: factor factorᵀ = K of the kept vectors
    for start in range(0, n, block):
        which = order[start : start + block]
        rows = learner.kernel_matrix(*csr_rows(*csr, which))  # these vectors against every slot
        for i, j in enumerate(which):
            kj, kxx, m = rows[i, kept], rows[i, j], len(kept)
            z = scipy.linalg.solve_triangular(factor[:m, :m], kj, lower=True, check_finite=False) if m else kj
            delta2 = kxx - float(z @ z)
            if delta2 <= DEPENDENCE_TOL * kxx or math.sqrt(delta2) <= eta:
                if whole:
                    return None
                continue  # in the span, or within η of it: projected
            if m == factor.shape[0]:
                factor = np.pad(factor, ((0, m), (0, m)))
            factor[m, :m], factor[m, m] = z, math.sqrt(delta2)
            kept.append(int(j))
    return np.sort(np.array(kept, np.int64))


def csr_rows(indptr, idx, val, which) -> tuple:
    """The CSR rows `which` of (indptr, idx, val), in that order."""
    return (
        np.concatenate([[0], np.cumsum(np.diff(indptr)[which])]).astype(np.int64),
        np.concatenate([idx[indptr[i] : indptr[i + 1]] for i in which] or [np.zeros(0, np.int32)]).astype(np.int32),
        np.concatenate([val[indptr[i] : indptr[i + 1]] for i in which] or [np.zeros(0)]).astype(np.float64),
    )


def project_rest(learner, keep: np.ndarray, ridge: float):
    """The learner with only the slots `keep`, the others' coefficients (online and averaged) projected
    onto them by `onto_kept` with `ridge`."""
    n = len(learner.support)
    online = online_rows(learner).copy()
    average = averaged_rows(learner).reshape(len(online), -1)
    T = max(learner.counter("examples"), 1)
    drop = np.setdiff1d(np.arange(n), keep)
    csr = learner.support.to_csr()
    header, arrays = learner.portable_state()
    kept = csr_rows(*csr, keep)
    arrays.update(
        sv_indptr=kept[0],
        sv_indices=kept[1],
        sv_values=kept[2],
        **{
            name: arrays[name][keep]
            for name, kind in learner.slot_arrays.items()
            if kind == "vector" and name not in ("alpha", "avg_sum", "avg_stamp")
        },
        # a per-slot matrix a mix holds (the rebuilt ones are stale after it): the kept slots'
        **{
            name: arrays[name][np.ix_(keep, keep)]
            for name, kind in learner.slot_arrays.items()
            if kind == "square" and name in arrays
        },
    )
    cls, width = type(learner), online.shape[1]
    small = cls.from_state(header, with_rows(cls, arrays, online[keep], average[keep], T))
    moved = onto_kept(small, csr_rows(*csr, drop), np.vstack([online[drop].T, average[drop].T]), ridge=ridge)
    # moved: (2 · classes) × kept, the online coefficients' part, then the average's
    return cls.from_state(
        header, with_rows(cls, arrays, online[keep] + moved[:width].T, average[keep] + moved[width:].T, T)
    )


def report_rows(report: dict, columns: list[int] | None) -> tuple[np.ndarray, np.ndarray]:
    """A report's online and averaged coefficients as n × classes matrices; a multiclass shard's
    class j goes to column columns[j] of the merged label map."""
    a = report["arrays"]
    if columns is None:
        return a["alpha"][:, None], report["average"][:, None]
    out = np.zeros((2, len(a["coef"]), max(columns, default=-1) + 1))
    out[0][:, columns] = a["coef"] * a["scale"][0]
    out[1][:, columns] = report["average"]
    return out[0], out[1]


class _Union:
    """The union of expansions' support vectors (identical ones merged, in order of first sight), with a
    weighted sum of their online coefficients and one of their running sums."""

    def __init__(self, width: int, others: list[str]):
        self.width, self.slots, self.rows, self.online, self.sums = width, {}, [], [], []
        self.first = {name: [] for name in others}
        self.classes = []  # each row's class (merged columns) for a learner whose rows serve one class

    def add(self, report: dict, columns: list | None, weight: float, count: float, row_classes=None) -> None:
        """online += weight · the report's coefficients, sums += count · its averaged ones (`columns`:
        where a multiclass report's classes go); with `row_classes` (Mixing.row_classes) a vector is merged
        only with one of its own class."""
        coef, avg = report_rows(report, columns)
        a = report["arrays"]
        indptr = a["sv_indptr"]
        for i in range(len(indptr) - 1):
            idx, val = a["sv_indices"][indptr[i] : indptr[i + 1]], a["sv_values"][indptr[i] : indptr[i + 1]]
            owner = -1 if row_classes is None else columns[row_classes[i]]
            key = (idx.tobytes(), val.tobytes(), owner)
            if key not in self.slots:
                self.slots[key] = len(self.rows)
                self.rows.append((idx, val))
                self.classes.append(owner)
                self.online.append(np.zeros(self.width))
                self.sums.append(np.zeros(self.width))
                for name, values in self.first.items():
                    values.append(a[name][i])
            self.online[self.slots[key]][: coef.shape[1]] += weight * coef[i]
            self.sums[self.slots[key]][: avg.shape[1]] += count * avg[i]
