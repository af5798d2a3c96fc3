"""One model from many shards: iterative parameter mixing with budget compression.

The protocol (McDonald, Hall, Mann, "Distributed training strategies for the structured
perceptron", NAACL 2010, §3 iterative parameter mixing) with the kernel expansions of this package:

- A shard is one input: a path or an fsspec URL (`memory://`, `s3://`, ... when its back-end is
  installed), read in place by the worker that owns it; a glob names one shard per match, in sorted
  order.  Shard w gets its own learner (`Shard`), kept between synchronisations, and its own random
  stream (seeded by (seed, w)); all shards share the kernel, fixed from shard 0's first block as
  `train` fixes it from its input's.
- Each round every shard learns its next `sync_every` examples (fewer at its end), then the driver
  mixes: f = Σ_w (n_w/n) f_w, n_w the examples shard w learned in the round, n their sum (the
  weights of McDonald et al.'s mixing proportional to the data each worker saw).  For kernel
  expansions this is the union of the support sets with coefficients weighted by the shares;
  identical support vectors (the same indices and values, as every vector broadcast at an earlier
  synchronisation is) become one, their coefficients added.  Counters are the sums of the shards':
  the last mixed model's plus every shard's count since it.  The averaged hypothesis is the average,
  over every example any shard learned, of the hypothesis that shard then had: its running sum is
  the last mix's plus what every shard added to it since (`mix`; tested against the protocol
  simulated with weight vectors).  Learners that evict keep no sums for what they evicted: theirs
  is the shares' mix of the shards' averages (and `train --average` refuses them).
- Multiclass learners mix the same way, a coefficient row per vector and a column per class: the
  merged label map lists every shard's classes in the order the shards met them (shard 0's first),
  and each shard's columns are put in that order before the weighted sum (`mix`, `merged_labels`).
  Their lazy scale is folded in (the mix has scale 1), and the running sums of the average restart
  at T times the mixed average.  mc-projectron++ keeps a support set per class (a mistake stores x
  once in class y and once in the rival's, §5 of the Projectron paper), so a vector is merged only
  with the same vector of the same class (`KernelLearner.row_classes`); each class's members are the
  union's vectors of that class and its inverse is rebuilt (`with_row_classes`).
- Budget compression: a learner with a `budget` parameter gets back to B support vectors by keeping
  the B with the largest |α| (multiclass: the largest row norm; ties to the earlier one) and
  projecting the others onto them by a ridge least-squares solve in the RKHS (`projection.onto_kept`):
  Ahpatron's halving projection θ = (K₂ + ηI)⁻¹K₂₁α₁ (Liao et al., AAAI 2024, eq. 9) with its default
  η = 0.0005 (times the mean k(x, x)), the Projectron's projection (Orabona, Keshet, Caputo, JMLR 2009,
  eq. 7) made well-posed.  Without the ridge (η at round-off level) the kept vectors of a mix are
  nearly dependent and the solve gives coefficients in the thousands, after which a Perceptron step
  no longer moves f: rbp -B 50 on 3 shards of 1,000 projectron-gaussians examples reached 50%
  accuracy, 85% with η (the one-process run: 85%; removal of the smallest |α|: 71%).  One rule for
  every mixable learner but budgeted Pegasos, which brings the union back to B by its own maintenance,
  one vector at a time (merging, removal or projection: Wang, Crammer, Vucetic, ICML 2010, §4;
  `BudgetedPegasos.compress_to`), after which the B points' coefficients are fitted to the whole mix
  by the same ridge projection (`refit`): the projection onto the B largest rows lost 16 points on
  letter at B = 100 with merging (60.3% against 75.7% for one process, 3 shards).  The Projectron and
  Projectron++ have no budget: their union is brought back by their own rule (`compress_to_span`),
  each vector kept only when it lies farther than η from the span of the ones kept before it.
- The resume state (Gram matrices, inverses: `rebuilt`) is not mixed: a mixed model leaves it stale
  and a shard rebuilds it from the support set before it learns again, as for a compact model file.
  (The serial backend rebuilds it once for all its shards, which would each compute the same.)
  Scalars are made afresh by the learner's `mix_scalars` (from the shards') or `after_mix` (from the
  mixed model).
- The mixed model is sent back to every shard, which keeps its own random stream and reading position.
- With `epochs` E (`train --epochs`), every shard reads its input E times over, as one process reads
  a file again for each pass, and the mixing goes on across the passes (McDonald et al. run iterative
  parameter mixing for several epochs); reading positions count examples over the passes.
- Dynamic averaging (Kamp, Boley, Keren, Schuster, Sharfman, "Communication-efficient distributed
  online prediction by dynamic model synchronization", ECML PKDD 2014; with kernels: Kamp, Bothe,
  Boley, Mock, ECML PKDD 2016): every `sync_every` examples each shard sends only its drift
  ‖f_w − r‖² from the last mixed model r (`Shard.divergence`, by kernel sums over both support sets),
  and the shards are mixed as above only when one exceeds Δ (`divergence`); the end of the stream
  mixes always.  Kamp et al. first try to resolve a violation by averaging a growing subset of the
  shards (their "balancing"); here a violation mixes every shard: more bytes per violation than
  balancing, never a different kind of model, and the figures of bench/shards.py count what this
  protocol sends.  r = 0 before the first mix.
- A shard whose worker is lost (its process killed, its machine gone) is started again on a live
  worker from what the driver holds: the last mixed model, the shard's random stream as its last
  report left it, and its reading position (the examples it had learned, skipped again on reading).
  It then learns its round again, so the model is the one a run without the fault writes (`ShardPool`).
- A checkpoint (`on_checkpoint`) is the mixed model with what continuing needs (`Model.sharding`: the
  shards, `sync_every`, each shard's reading position and random stream); resuming it over the same
  shards starts each where it was, so the run ends with the model of one never interrupted.

So the model depends only on the data, the shard order, the seed, `sync_every` and Δ: the serial backend
(every shard in this process, one after the other) and the dask backend (one dask actor per shard)
give byte-identical model files.  Which learners can be mixed is declared by each algorithm
(`KernelLearner.unmixable`).
"""

from __future__ import annotations

import contextlib
import glob as glob_
import logging
import math
import sys
import time

import numpy as np

from . import registry
from .io.libsvm import DataError, LibsvmReader
from .kernels import Kernel
from .labels import BinaryLabels, MulticlassLabels, labels_from_dict, third_label_message
from .learner import COUNTER_NAMES, EXAMPLES
from .model import Model
from .pipeline import TrainResult, check_settings, kernel_warnings, learn_block, support_warnings
from .projection import DEPENDENCE_TOL, onto_kept

BACKENDS = ("serial", "dask")
RESTARTS = 3  # a shard's worker lost this many times in a row ends the run
MIX_RIDGE = 0.0005  # η of the compression's projection, times the mean k(x, x) (Ahpatron's default)


def shard_sources(inputs) -> list[str]:
    """The shards the inputs name, in order: a path or URL each, a glob one per match (sorted).
    ValueError for a glob that matches nothing."""
    out = []
    for given in inputs:
        if not glob_.has_magic(given):
            out.append(given)
            continue
        if "://" in given:
            import fsspec

            fs, path = fsspec.core.url_to_fs(given)
            found = [fs.unstrip_protocol(p) for p in sorted(fs.glob(path))]
        else:
            found = sorted(glob_.glob(given))
        if not found:
            raise ValueError(f"{given}: no input matches")
        out += found
    return out


def open_shard(source: str, block_lines: int, skip_bad_lines: bool):
    """A LibsvmReader of one shard (a path or an fsspec URL, compression inferred from its name);
    errors name the shard as given."""
    if "://" not in source:
        return LibsvmReader(source, block_lines=block_lines, skip_bad_lines=skip_bad_lines)
    try:
        import fsspec
    except ImportError:
        raise DataError(source, 0, None, "reading a URL needs fsspec: pip install 'budgetlearn[dask]'") from None
    try:
        f = fsspec.open(source, "rb", compression="infer").open()
    except (OSError, ValueError) as exc:
        raise DataError(source, 0, None, f"cannot open: {exc}") from None
    reader = LibsvmReader(f, block_lines=block_lines, skip_bad_lines=skip_bad_lines)
    reader.source_name = source
    reader.close = f.close  # the reader does not own a file object it was given
    return reader


class Shard:
    """One shard's learner and reading position (a dask actor on a cluster)."""

    def __init__(self, source: str, index: int, algorithm: str, kernel: dict, params: dict, seed: int,
                 skip_bad_lines: bool, block_lines: int, dynamic: bool = False, epochs: int = 1):
        cls = registry.get(algorithm)
        self.model = Model(cls(Kernel.from_dict(kernel), seed=seed, **params),
                           MulticlassLabels() if cls.multiclass else BinaryLabels())
        # every shard its own stream: the same draws on every shard would evict alike
        self.model.learner.rng_state[:] = np.random.SeedSequence((seed, index)).generate_state(1, np.uint64)
        self.reader = open_shard(source, block_lines, skip_bad_lines)
        self.chunks = self._passes(epochs, (source, block_lines, skip_bad_lines))
        self.pending = None  # the rest of a block cut at a synchronisation
        self.learned = 0  # examples learned since the last report
        self.dynamic = dynamic  # measure `divergence` after every step (dynamic averaging)
        self.reference = _reference(None)  # the last mixed model, for `divergence`: f = 0 at the start

    def _passes(self, epochs: int, how: tuple):
        """The shard's blocks, `epochs` times over, each pass reading it afresh (as `train --epochs`
        streams a file again for each pass); `reader` is the current pass's."""
        for e in range(epochs):
            if e:
                self.reader.close()
                self.reader = open_shard(*how)
            yield from self.reader

    def step(self, n: int) -> dict:
        """Learn the shard's next n examples (fewer at its end): how many it learned and, under dynamic
        averaging, its model's `divergence` from the last mixed model."""
        learned = 0
        while learned < n:
            if self.pending is None:
                self.pending = next(self.chunks, None)
                if self.pending is None:
                    break
            chunk, self.pending = self.pending, None
            if len(chunk) > n - learned:
                chunk, self.pending = chunk.take(np.arange(n - learned)), chunk.take(np.arange(n - learned, len(chunk)))
            y = self.model.labels.encode(chunk, self.reader.source_name)
            learn_block(self.model, chunk, y, self.reader.source_name)
            learned += len(chunk)
        self.learned += learned
        return {"learned": learned, "divergence": self.divergence() if self.dynamic else None}

    def divergence(self) -> float:
        """‖f − r‖², f this shard's model, r the last mixed model, in the RKHS:
        αᵀKα − 2 βᵀK_rf α + βᵀK_rβ (Kamp et al. 2014: the local condition ‖f − r‖² ≤ Δ)."""
        learner = self.model.learner
        n = len(learner.support)
        rows, beta, rr = self.reference
        if n == 0:
            return rr
        alpha = online_rows(learner)  # n × classes (a binary learner: one column)
        ff = np.sum(alpha * (learner.gram() @ alpha))
        fr = 0.0
        if len(beta):  # classes seen since the mix have a zero prototype in r
            beta = np.pad(beta, ((0, 0), (0, alpha.shape[1] - beta.shape[1])))
            fr = np.sum(beta * (learner.kernel_matrix(*rows) @ alpha))
        return max(float(ff - 2.0 * fr + rr), 0.0)  # rounding may leave a tiny negative

    def report(self) -> dict:
        """What mixing needs: the model, its averaged coefficients and the examples learned since the last
        report (the shard's weight in the mix)."""
        learner = self.model.learner
        learner.notes.clear()  # a rebuild after each mix is the protocol, not news
        header, arrays = learner.state()
        for name in learner.resume_arrays(header):  # rebuilt where needed, never sent
            arrays.pop(name, None)
        learned, self.learned = self.learned, 0
        return {"header": header, "arrays": arrays, "average": averaged_rows(learner), "learned": learned,
                "labels": self.model.labels.to_dict(), "skipped": (self.reader.n_skipped, self.reader.skipped[:1])}

    def resume_at(self, position: int, common: tuple | None, rng_state) -> None:
        """Take up a lost shard's work: skip the `position` examples it had learned, adopt the last mixed
        model `common` (header, arrays, labels; None before the first mix), and its random stream."""
        skipped = 0
        while skipped < position:
            chunk = next(self.chunks, None)
            if chunk is None:
                raise DataError(self.reader.source_name, 0, None, f"holds fewer than the {position:,} examples the "
                                "checkpoint had read from it: not the input the checkpoint was made from")
            if len(chunk) > position - skipped:
                self.pending = chunk.take(np.arange(position - skipped, len(chunk)))
                chunk = chunk.take(np.arange(position - skipped))
            skipped += len(chunk)
        if common is not None:
            self.adopt(*common)
        if rng_state is not None:
            self.model.learner.rng_state[:] = rng_state

    def adopt(self, header: dict, arrays: dict, labels: dict) -> None:
        """Go on from the mixed model, with this shard's own random stream."""
        own = self.model.learner.rng_state.copy()
        learner = registry.get(header["algorithm"]).from_state(header, arrays)
        learner.rng_state[:] = own
        self.model = Model(learner, labels_from_dict(labels))
        if self.dynamic:
            self.reference = _reference(learner)

    def close(self) -> None:
        self.reader.close()


def _reference(learner) -> tuple:
    """A mixed model as `Shard.divergence` measures from it: its support vectors (CSR), coefficients β
    and ‖r‖² = βᵀKβ; the zero function for None."""
    if learner is None or not len(learner.support):
        return (np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0)), np.zeros((0, 1)), 0.0
    beta = online_rows(learner).copy()
    return learner.support.to_csr(), beta, float(np.sum(beta * (learner.gram() @ beta)))


def online_rows(learner) -> np.ndarray:
    """The hypothesis' coefficients, a row per support vector and a column per class (true units;
    a binary learner's α as one column)."""
    if learner.multiclass:
        return learner.coefficients()
    return learner.slot["alpha"][:len(learner.support), None]


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


def with_rows(cls, arrays: dict, online: np.ndarray, average: np.ndarray, T: int) -> dict:
    """`arrays` with the coefficients of the mix: online and averaged, n × classes in true units (the
    averaged hypothesis as the running sums that divide by T to give it, restarted at T)."""
    n = len(online)
    if not cls.multiclass:
        return dict(arrays, alpha=online[:, 0].copy(), avg_sum=average[:, 0] * max(T, 1),
                    avg_stamp=np.full(n, T + 1.0))
    # Σ_{s≤T} f_s = avg_base + (C + scale) coef − U (multiclass.py): C = 0, scale 1, U = coef make it T·average
    return dict(arrays, coef=online.copy(), scale=np.ones(1), avg_base=average * T,
                avg_offset=online.copy(), avg_scalars=np.array([0.0, 1.0]))


def mix(reports: list[dict], base_counters: np.ndarray, labels: dict | None = None,
        base: dict | None = None) -> tuple[dict, dict]:
    """The mixed model (header, arrays) of the shards' reports: f = Σ_w (n_w/n) f_w over the union of
    their support sets (identical vectors merged), counters base + Σ_w (counters_w − base).

    The averaged hypothesis is the average over every example of every shard: its running sum is the
    last mix's sum (`base`, a report of the last mixed model; None before the first) plus what each
    shard added to it since, Σ_w sum_w − (k − 1)·sum_base, each shard's sum its average times its
    count.  A learner that evicts keeps no sums for the vectors it evicted, so there the average is
    the shares' mix of the shards' averages instead.  For a multiclass learner `labels` is the merged
    label map (`merged_labels`): each shard's classes are put in its order; a vector that serves one class
    only (`row_classes`: mc-projectron++) is merged only with the same vector of that class.  Other
    per-slot arrays (Pegasos' `born`) are each vector's first occurrence's."""
    cls = registry.get(reports[0]["header"]["algorithm"])
    merged = labels_from_dict(labels).values if cls.multiclass else None
    counters = base_counters + sum(r["arrays"]["counters"] - base_counters for r in reports)
    T = int(counters[EXAMPLES])
    total = sum(r["learned"] for r in reports)
    union = _Union(1 if merged is None else len(merged),
                   [name for name, kind in cls.slot_arrays.items()
                    if kind == "vector" and name not in ("alpha", "avg_sum", "avg_stamp")])
    for r in reports:
        if cls.evicts and not r["learned"]:
            continue  # it adds nothing, and the vectors it kept may be ones the others evicted
        share = r["learned"] / total
        union.add(r, merged, share, share * T if cls.evicts else int(r["arrays"]["counters"][EXAMPLES]),
                  cls.row_classes(r["arrays"]))
    if base is not None and not cls.evicts:
        union.add(base, merged, 0.0, -(len(reports) - 1) * int(base["arrays"]["counters"][EXAMPLES]),
                  cls.row_classes(base["arrays"]))
    header = dict(reports[0]["header"], n_features=max(r["header"]["n_features"] for r in reports),
                  counters={c: int(v) for c, v in zip(COUNTER_NAMES, counters)})
    if merged is not None:
        header["n_classes"] = len(merged)
    lengths = [len(idx) for idx, _ in union.rows]
    learned = [r["arrays"] for r in reports if r["learned"]]
    arrays = dict(reports[0]["arrays"],  # rng_state: shard 0's
                  sv_indptr=np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64),
                  sv_indices=np.concatenate([i for i, _ in union.rows] or [np.zeros(0, np.int32)]).astype(np.int32),
                  sv_values=np.concatenate([v for _, v in union.rows] or [np.zeros(0)]).astype(np.float64),
                  counters=counters, scalars=cls.mix_scalars([a["scalars"] for a in learned],
                                                             [a["counters"] for a in learned], counters),
                  **{name: np.array(values, np.float64) for name, values in union.first.items()})
    online, sums = (np.array(x).reshape(-1, union.width) for x in (union.online, union.sums))
    if cls.row_classes(reports[0]["arrays"]) is not None:
        arrays = cls.with_row_classes(arrays, np.array(union.classes, np.int64).reshape(-1), union.width)
    return header, with_rows(cls, arrays, online, sums / max(T, 1), T)


class _Union:
    """The union of expansions' support vectors (identical ones merged, in order of first sight), with a
    weighted sum of their online coefficients and one of their running sums."""

    def __init__(self, width: int, others: list[str]):
        self.width, self.slots, self.rows, self.online, self.sums = width, {}, [], [], []
        self.first = {name: [] for name in others}
        self.classes = []  # each row's class (merged columns) for a learner whose rows serve one class

    def add(self, report: dict, merged: list | None, weight: float, count: float, row_classes=None) -> None:
        """online += weight · the report's coefficients, sums += count · its averaged ones; with
        `row_classes` (KernelLearner.row_classes) a vector is merged only with one of its own class."""
        columns = None if merged is None else [merged.index(v) for v in labels_from_dict(report["labels"]).values]
        coef, avg = report_rows(report, columns)
        a = report["arrays"]
        indptr = a["sv_indptr"]
        for i in range(len(indptr) - 1):
            idx, val = a["sv_indices"][indptr[i]:indptr[i + 1]], a["sv_values"][indptr[i]:indptr[i + 1]]
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
            self.online[self.slots[key]][:coef.shape[1]] += weight * coef[i]
            self.sums[self.slots[key]][:avg.shape[1]] += count * avg[i]


def report_of(learner, labels: dict) -> dict:
    """A mixed model as a shard's report (`mix`'s `base`)."""
    header, arrays = learner.state()
    return {"header": header, "arrays": arrays, "average": averaged_rows(learner), "learned": 0, "labels": labels}


def averaged_rows(learner) -> np.ndarray:
    """The averaged hypothesis' coefficients as a report holds them: n (binary) or n × classes."""
    return learner.averaged_coefficients() if learner.multiclass else learner.averaged_alpha()


def compress(learner, budget: int):
    """The learner back at `budget` support vectors: the largest coefficients kept (|α|, or the norm of
    a multiclass row; ties to the earlier slot), the rest projected onto them (`onto_kept`), for the
    online and the averaged coefficients alike."""
    n = len(learner.support)
    if n <= budget:
        return learner
    if hasattr(learner, "compress_to"):  # a learner with a maintenance of its own (bpegasos) uses it
        union, mixed = learner.support.to_csr(), online_rows(learner).copy()
        return refit(learner.compress_to(budget), union, mixed)
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
    header, arrays = learner.state()
    for name in learner.resume_arrays(header):
        arrays.pop(name, None)
    average = averaged_rows(learner).reshape(len(beta), -1)
    cls = type(learner)
    return cls.from_state(header, with_rows(cls, arrays, beta, average, max(learner.counter("examples"), 1)))


def compress_to_span(learner, eta: float):
    """A mix's union brought back by the Projectron's own rule (Orabona, Keshet, Caputo, JMLR 2009,
    Fig. 2), for the learners that bound their support set by η instead of a budget (`mix_within_span`):
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


def span_keep(learner, eta: float, order: np.ndarray | None = None, whole: bool = False,
              block: int = 512) -> np.ndarray | None:
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
        which = order[start:start + block]
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
    return (np.concatenate([[0], np.cumsum(np.diff(indptr)[which])]).astype(np.int64),
            np.concatenate([idx[indptr[i]:indptr[i + 1]] for i in which] or [np.zeros(0, np.int32)]).astype(np.int32),
            np.concatenate([val[indptr[i]:indptr[i + 1]] for i in which] or [np.zeros(0)]).astype(np.float64))


def project_rest(learner, keep: np.ndarray, ridge: float):
    """The learner with only the slots `keep`, the others' coefficients (online and averaged) projected
    onto them by `onto_kept` with `ridge`."""
    n = len(learner.support)
    online = online_rows(learner).copy()
    average = averaged_rows(learner).reshape(len(online), -1)
    T = max(learner.counter("examples"), 1)
    drop = np.setdiff1d(np.arange(n), keep)
    csr = learner.support.to_csr()
    header, arrays = learner.state()
    kept = csr_rows(*csr, keep)
    arrays.update(sv_indptr=kept[0], sv_indices=kept[1], sv_values=kept[2],
                  **{name: arrays[name][keep] for name, kind in learner.slot_arrays.items()
                     if kind == "vector" and name not in ("alpha", "avg_sum", "avg_stamp")})
    for name in learner.resume_arrays(header):
        arrays.pop(name, None)
    cls, width = type(learner), online.shape[1]
    small = cls.from_state(header, with_rows(cls, arrays, online[keep], average[keep], T))
    moved = onto_kept(small, csr_rows(*csr, drop), np.vstack([online[drop].T, average[drop].T]), ridge=ridge)
    # moved: (2 · classes) × kept, the online coefficients' part, then the average's
    return cls.from_state(header, with_rows(cls, arrays, online[keep] + moved[:width].T,
                                            average[keep] + moved[width:].T, T))


def merged_labels(reports: list[dict], sources: list[str]) -> dict:
    """The one label map of the shards' maps (to_dict form).  A third label value over all shards, or a
    shard whose map contradicts the earlier shards' (one-label first blocks that fixed the signs
    differently), is a DataError naming the shard.  Multiclass: every shard's classes, in the order the
    shards met them, shard after shard."""
    maps = [labels_from_dict(r["labels"]) for r in reports]
    if isinstance(maps[0], MulticlassLabels):
        values, spellings = [], {}
        for labels in maps:
            values += [v for v in labels.values if v not in values]
            for v, spelling in labels.spellings.items():
                spellings.setdefault(v, spelling)
        return MulticlassLabels(values, spellings).to_dict()
    spellings: dict = {}
    for labels in maps:
        for v, spelling in labels.spellings.items():
            spellings.setdefault(v, spelling)
    seen: list = []  # label values in shard order
    for labels, source in zip(maps, sources):
        for v in (labels.negative, labels.positive):
            if v is not None and v not in seen:
                if len(seen) == 2:
                    shown = ", ".join(spellings.get(k, f"{k:g}") for k in seen)
                    raise DataError(source, 0, spellings.get(v, f"{v:g}"), third_label_message(shown))
                seen.append(v)
    signs: dict = {}  # label value -> ±1
    for labels, source in zip(maps, sources):
        for v, sign in ((labels.negative, -1), (labels.positive, 1)):
            if v is not None and (signs.setdefault(v, sign) != sign or sum(s == sign for s in signs.values()) > 1):
                raise DataError(source, 0, None, "its label map contradicts the earlier shards' (a shard's first "
                                "block held one label value): give every shard's first block both labels")
    by_sign = {s: v for v, s in signs.items()}
    return BinaryLabels(by_sign.get(-1), by_sign.get(1), spellings).to_dict()


def train(inputs, algorithm: str, kernel, params: dict, seed: int = 0, skip_bad_lines: bool = False,
          block_lines: int = 4096, backend: str = "serial", jobs: int = 1, scheduler: str | None = None,
          sync_every: int | None = None, sync: str | None = None, divergence: float | None = None,
          resume: Model | None = None, checkpoint_every: int | None = None, on_checkpoint=None,
          epochs: int | None = None):
    """One model learnt over the shards the inputs name (module docstring); a pipeline.TrainResult.
    ValueError for settings refused before any data is read (an algorithm that cannot be mixed among
    them), DataError for bad data in any shard (nothing is returned), RuntimeError for a cluster.

    `resume`: go on from this model.  A checkpoint of a sharded run over the same shards (its
    `sharding`) continues where it was taken, each shard at its reading position with its random
    stream, so the run ends with the model of a run never interrupted; any other model starts every
    shard at its beginning from the model.  `on_checkpoint(model)` is called at the first
    synchronisation after every `checkpoint_every` examples (all shards together) with the mixed
    model and its `sharding`.

    `sync`: "static" (mix every `sync_every` examples per shard) or "dynamic" (check every `sync_every`,
    mix when a shard's `divergence` exceeds Δ = `divergence`); None: a resumed checkpoint's, else
    dynamic when `divergence` is given, else static.  `epochs`: passes of every shard over its own
    input, the mixing going on across them (McDonald et al.'s epochs; None: a resumed checkpoint's,
    else 1)."""
    sources = shard_sources(inputs)
    carried = resume.sharding if resume is not None and resume.sharding else None
    if carried is not None and carried["sources"] != sources:
        carried = None  # other shards: a new run from the model
    sync_every, divergence = sync_settings(sync_every, sync, divergence, carried)
    epochs = epochs_setting(epochs, carried)
    cls = registry.get(algorithm if resume is None else resume.learner.name)
    if cls.unmixable:
        raise ValueError(f"{cls.name} cannot be trained on shards: {cls.unmixable}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
    started = time.perf_counter()
    if resume is None:
        check_settings(cls, kernel, params)
        with open_shard(sources[0], block_lines, skip_bad_lines) as reader:
            first = next(iter(reader), None)
        resolved = kernel.resolve(first.n_features if first is not None else 1)
        warnings = kernel_warnings(resolved, first, kernel.gamma is None and kernel.sigma is None) if first else []
        params = cls.resolve_params(params)
    else:
        resolved, params, seed, warnings = resume.learner.kernel, dict(resume.learner.hyper), resume.learner.seed, []
    shard_args = [(source, w, cls.name, resolved.to_dict(), params, seed, skip_bad_lines, block_lines,
                   divergence is not None, epochs) for w, source in enumerate(sources)]
    with cluster(backend, jobs, scheduler) as client:
        shards = ShardPool(client, shard_args, _start_from(resume, carried, seed, len(sources)))
        try:
            learner, labels, reports, rounds, checks = _rounds(cls, shards, sources, (sync_every, divergence),
                                                               resume, checkpoint_every, on_checkpoint)
        finally:
            shards.close()
    if learner.stale:  # the model file may be asked to hold the resume state
        learner._rebuild()
    learner.notes = _notes(len(sources), (sync_every, divergence), rounds, checks, shards, carried)
    skipped = [e for r in reports for e in r["skipped"][1]]
    source = sources[0] if len(sources) == 1 else f"{len(sources)} shards: {sources[0]} … {sources[-1]}"
    return TrainResult(Model(learner, labels_from_dict(labels), sharding=shards.sharding(sync_every, divergence)),
                       time.perf_counter() - started, source, sum(r["skipped"][0] for r in reports), skipped,
                       warnings + support_warnings(learner),
                       {"synchronisations": rounds, "checks": checks, "bytes_out": shards.bytes_out,
                        "bytes_in": shards.bytes_in})


def _notes(k: int, sync: tuple, rounds: int, checks: int, shards, carried) -> list[str]:
    """What a sharded run's summary says of the protocol: synchronisations, traffic, restarts."""
    sync_every, divergence = sync
    every = f"every {sync_every:,} examples per shard" if divergence is None else (
        f"when one had drifted more than {divergence:g} (checked every {sync_every:,} examples per shard, "
        f"{checks:,} times)")
    notes = [f"mixed {k} shards {every}" + (f" over {shards.epochs} passes" if shards.epochs > 1 else "")
             + f": {rounds:,} synchronisations" + (" after the checkpoint" if carried else ""),
             f"sent {shards.bytes_out / 1e6:,.1f} MB of arrays to the shards and received "
             f"{shards.bytes_in / 1e6:,.1f} MB from them"]
    if shards.restarts:
        notes.append(f"restarted a shard {shards.restarts} time(s) after its worker was lost, from the last mixed "
                     "model and its reading position")
    return notes


def epochs_setting(epochs: int | None, carried: dict | None) -> int:
    """The passes of every shard over its input (`train --epochs`): a resumed checkpoint's when not
    given; ValueError for one the checkpoint was not taken with."""
    taken = carried.get("epochs", 1) if carried else None
    if epochs is None:
        return taken or 1
    if type(epochs) is not int or epochs < 1:
        raise ValueError(f"--epochs {epochs!r}: give a whole number ≥ 1")
    if taken is not None and epochs != taken:
        raise ValueError(f"--epochs {epochs}: the checkpoint was taken with --epochs {taken}; give the same, or none")
    return epochs


def sync_settings(sync_every: int | None, sync: str | None, divergence: float | None,
                  carried: dict | None) -> tuple[int, float | None]:
    """(sync_every, Δ or None for static averaging) from the options and a checkpoint's `sharding`
    (`train`); ValueError for a combination refused, or one the checkpoint was not taken with."""
    if sync not in (None, "static", "dynamic"):
        raise ValueError(f"unknown synchronisation {sync!r} (known: static, dynamic)")
    if sync == "static" and divergence is not None:
        raise ValueError("--divergence is for --sync dynamic")
    if divergence is not None and not (np.isfinite(divergence) and divergence > 0):
        raise ValueError(f"--divergence {divergence!r}: give a positive number (a squared distance in the RKHS)")
    if sync == "dynamic" and divergence is None:
        raise ValueError("--sync dynamic needs --divergence Δ")
    if sync is None and divergence is None and carried:
        divergence = carried.get("divergence")
    if carried and divergence != carried.get("divergence"):
        taken = f"--sync dynamic --divergence {carried['divergence']:g}" if "divergence" in carried else "--sync static"
        raise ValueError(f"the checkpoint was taken with {taken}; give the same, or none")
    if sync_every is None:
        sync_every = carried["sync_every"] if carried else 10_000
    elif carried and sync_every != carried["sync_every"]:
        raise ValueError(f"--sync-every {sync_every:,}: the checkpoint was taken with --sync-every "
                         f"{carried['sync_every']:,}; give the same, or none")
    return sync_every, divergence


def _start_from(resume: Model | None, carried: dict | None, seed: int, k: int) -> tuple | None:
    """ShardPool's `start` for a resumed run: the model as the shards adopt it, and each shard's reading
    position and random stream (a checkpoint's own; else 0, and a stream seeded by (seed, shard, T))."""
    if resume is None:
        return None
    learner = resume.learner
    header, arrays = learner.state()
    for name in learner.resume_arrays(header):
        arrays.pop(name, None)
    if carried:
        return (header, arrays, resume.labels.to_dict()), carried["positions"], [
            np.array(r, np.uint64) for r in carried["streams"]]
    T = learner.counter("examples")
    return (header, arrays, resume.labels.to_dict()), [0] * k, [
        np.random.SeedSequence((seed, w, T)).generate_state(1, np.uint64) for w in range(k)]


def _rounds(cls, shards, sources, sync, resume, checkpoint_every, on_checkpoint) -> tuple:
    """Learn, mix and send back until every shard is through: (learner, labels, last reports,
    synchronisations, checks).  `sync` = (sync_every, divergence): every shard learns sync_every examples,
    then all are mixed (static), or only when one has drifted more than divergence (dynamic)."""
    sync_every, divergence = sync
    learner = resume.learner if resume is not None else None
    labels = resume.labels.to_dict() if resume is not None else None
    counters = learner.counters.copy() if learner is not None else np.zeros(len(COUNTER_NAMES), np.int64)
    last_checkpoint, rounds, checks = int(counters[EXAMPLES]), 0, 0
    while True:
        steps = shards.step(sync_every)
        checks += 1
        through = all(c["learned"] < sync_every for c in steps)  # every shard is at its end
        if divergence is not None and not through and all(c["divergence"] <= divergence for c in steps):
            continue  # every shard within Δ of the last mixed model: no synchronisation
        reports = shards.collect()
        if not any(r["learned"] for r in reports):
            break
        base = report_of(learner, labels) if learner is not None else None
        labels = merged_labels(reports, sources)
        learner = cls.from_state(*mix(reports, counters, labels, base))
        if "budget" in learner.hyper:
            learner = compress(learner, learner.hyper["budget"])
        elif cls.mix_within_span:
            learner = compress_to_span(learner, learner.hyper["eta"])
        learner.after_mix()
        counters = learner.counters.copy()
        rounds += 1
        if through:
            break
        header, arrays = learner.state()
        for name in learner.resume_arrays(header):  # each shard rebuilds it: not sent
            arrays.pop(name, None)
        shards.adopt(header, arrays, labels)
        if checkpoint_every and counters[EXAMPLES] - last_checkpoint >= checkpoint_every:
            last_checkpoint = int(counters[EXAMPLES])
            on_checkpoint(Model(learner, labels_from_dict(labels), sharding=shards.sharding(*sync)))
    if learner is None:
        raise DataError(sources[0], 0, None, "no examples to train on")
    return learner, labels, reports, rounds, checks


class ShardPool:
    """The shards of a run: `Shard`s of this process (client None), or dask actors spread over the
    workers in turn.  The pool remembers what restarting a shard needs (module docstring): the last
    mixed model and, per shard, its reading position and random stream after its last round."""

    def __init__(self, client, shard_args: list[tuple], start: tuple | None = None):
        """`start`: (the model to go on from as (header, arrays, labels), each shard's reading position,
        each shard's random stream), or None for fresh shards."""
        self.client, self.args = client, shard_args
        self.epochs = shard_args[0][-1]  # passes of every shard over its input (Shard's last argument)
        self.where = [None] * len(shard_args)  # each actor's worker
        self.position = [0] * len(shard_args)  # examples each shard had learned at its last report
        self.rng = [None] * len(shard_args)  # each shard's random stream at its last report
        self.since = [[] for _ in shard_args]  # each shard's steps since its last report, to replay
        self.common = None  # (header, arrays, labels) of the last mix
        self.restarts = 0
        self.bytes_in = self.bytes_out = 0  # the arrays' bytes the shards sent, and were sent
        futures = [self._submit(w) for w in range(len(shard_args))]
        self.shards = [f if client is None else f.result() for f in futures]
        if start is not None:
            self.common, self.position, self.rng = start[0], list(start[1]), list(start[2])
            calls = [self._begin(w, "resume_at", self.position[w], self.common, self.rng[w])
                     for w in range(len(self.shards))]
            for w, c in enumerate(calls):
                self._outcome(w, c, None)

    def sharding(self, sync_every: int, divergence: float | None) -> dict:
        """What a checkpoint holds to continue this run (Model.sharding); `divergence` only under dynamic
        averaging and `epochs` only above 1, so that a static one-pass run's checkpoint reads as before;
        the positions count examples over the passes."""
        out = {"sources": [a[0] for a in self.args], "sync_every": sync_every, "positions": list(self.position),
               "streams": [[int(v) for v in r] for r in self.rng]}
        if divergence is not None:
            out["divergence"] = divergence
        if self.epochs > 1:
            out["epochs"] = self.epochs
        return out

    def _submit(self, w: int):
        if self.client is None:
            return Shard(*self.args[w])
        workers = sorted(self.client.scheduler_info()["workers"])
        self.where[w] = workers[w % len(workers)]
        return self.client.submit(Shard, *self.args[w], actor=True, workers=[self.where[w]], pure=False)

    def step(self, n: int) -> list[dict]:
        """Every shard's next n examples, all at once on a cluster: what each learned (and its divergence)."""
        calls = [self._begin(w, "step", n) for w in range(len(self.shards))]
        checks = [self._outcome(w, c, "step", n) for w, c in enumerate(calls)]
        for w, c in enumerate(checks):
            self.since[w].append(n)
            self.bytes_in += 8 if c["divergence"] is not None else 0  # one float
        return checks

    def collect(self) -> list[dict]:
        """Every shard's report (`Shard.report`), in shard order."""
        calls = [self._begin(w, "report") for w in range(len(self.shards))]
        reports = [self._outcome(w, c, "report") for w, c in enumerate(calls)]
        for w, r in enumerate(reports):
            self.position[w] += r["learned"]
            self.rng[w] = r["arrays"]["rng_state"].copy()
            self.since[w] = []
            self.bytes_in += sum(a.nbytes for a in r["arrays"].values()) + r["average"].nbytes
        return reports

    def adopt(self, header: dict, arrays: dict, labels: dict) -> None:
        self.common = (header, arrays, labels)
        self.bytes_out += len(self.shards) * sum(a.nbytes for a in arrays.values())
        if self.client is None and len(self.shards) > 1:
            # One process simulates the cluster: every shard would rebuild the same state that is not sent
            # (Projectron++'s factor of the union, O(n³)) from the same arrays.  Shard 0 rebuilds it and the
            # others start from its result, which is what each of them would compute (the model files stay
            # those of a cluster, tests/test_distributed.py); traffic is counted as sent.
            self.shards[0].adopt(header, arrays, labels)
            first = self.shards[0].model.learner
            if first.stale:
                first._rebuild()
            header, arrays = first.state()
            done = 1  # shard 0 holds the mix already
        else:
            done = 0
        calls = {w: self._begin(w, "adopt", header, arrays, labels) for w in range(done, len(self.shards))}
        for w, c in calls.items():
            self._outcome(w, c, None)  # a shard started again has adopted it already

    def _begin(self, w: int, method: str, *args):
        """shard w's method(*args): its result (this process), a future (dask), or the exception calling it
        raised (an actor whose worker is known to be lost refuses the call at once); see `_outcome`."""
        try:
            return getattr(self.shards[w], method)(*args)
        except Exception as exc:
            return exc

    def _outcome(self, w: int, call, method: str | None, *args):
        """The result of shard w's call; when its worker was lost, the shard is started again on a live
        worker where it was, and `method` (if any) called again."""
        for attempt in range(RESTARTS + 1):
            try:
                if attempt:  # start the shard again, from the last mix, its stream and its position,
                    self.shards[w] = self._submit(w).result()  # and learn its steps since then again
                    self.shards[w].resume_at(self.position[w], self.common, self.rng[w]).result()
                    for n in self.since[w]:
                        self.shards[w].step(n).result()
                    if method is None:
                        return None
                    call = getattr(self.shards[w], method)(*args)
                if isinstance(call, Exception):
                    raise call
                return call if self.client is None else call.result()
            except DataError:
                raise
            except Exception:
                if self.client is None or not self._lost(w):
                    raise
                if attempt == RESTARTS:
                    raise RuntimeError(f"{self.args[w][0]}: the worker of this shard was lost {RESTARTS + 1} times "
                                       "in a row; the run stops") from None
            self.restarts += 1

    def _lost(self, w: int, wait: float = 10.0) -> bool:
        """True when shard w's worker has left the cluster (waiting up to `wait` s for the scheduler to
        notice a dead process)."""
        deadline = time.monotonic() + wait
        while self.where[w] in self.client.scheduler_info()["workers"]:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def close(self) -> None:
        for s in self.shards:
            with contextlib.suppress(Exception):  # a failed shard's reader is gone with it
                s.close() if self.client is None else s.close().result()


@contextlib.contextmanager
def cluster(backend: str, jobs: int, scheduler: str | None):
    """A dask.distributed Client on `scheduler`, or on a LocalCluster of `jobs` single-threaded worker
    processes started here; None for the serial backend."""
    if backend == "serial":
        if scheduler is not None:
            raise ValueError("--scheduler is for --backend dask")
        yield None
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise RuntimeError("--backend dask needs dask.distributed: pip install 'budgetlearn[dask]'") from None
    with contextlib.ExitStack() as stack:
        if scheduler is None:
            import dask

            # dask's statistical profiler samples every worker thread each 10 ms; with the learning loop
            # on the worker's one thread that cost 10–15% of its speed (bench/shards_speed.py).  On Linux
            # the workers are forked, not spawned: they start with this process's imports and its loaded
            # compiled code instead of importing dask, numpy and numba and loading the code again (1.5 s
            # of a 7.7 s run on two cores, a9a × 100 in two files).  The nannies fork from dask's event
            # loop thread while the main thread waits for the cluster; the script runs BLAS on one
            # thread (entry.run; OpenBLAS also stops its threads at a fork), and nothing here runs
            # OpenMP, which a fork would break.
            stack.enter_context(dask.config.set({
                "distributed.worker.profile.enabled": False,
                "distributed.worker.multiprocessing-method": "fork" if sys.platform == "linux" else "spawn"}))
            local = stack.enter_context(LocalCluster(n_workers=max(jobs, 1), threads_per_worker=1, processes=True,
                                                     dashboard_address=None, silence_logs=logging.ERROR))
            client = stack.enter_context(Client(local))
        else:
            try:
                client = stack.enter_context(Client(scheduler, timeout="10s"))
            except (OSError, TimeoutError) as exc:
                raise RuntimeError(f"cannot reach the dask scheduler at {scheduler}: {exc}") from None
        yield client
