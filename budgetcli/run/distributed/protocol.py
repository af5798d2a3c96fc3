"""The rounds of iterative parameter mixing: learn, mix, compress, send back, checkpoint."""

from __future__ import annotations

import time

import numpy as np

from ...base.core import DataError
from ...io.inputs import read_once
from ...numerics.kernels import Kernel
from ...learning.labels import labels_from_dict
from ...learning.records import COUNTER_NAMES, EXAMPLES
from ...model.model import Model
from ..pipeline import TrainResult, Watch
from ..report import kernel_warnings
from ...model.spec import TrainSpec
from .average import merged_labels, mix, report_of
from .pool import ShardPool, cluster
from .sources import expand, open_shard, pattern_notes


def train(spec: TrainSpec, resume: Model | None = None, watch: Watch | None = None) -> TrainResult:
    """One model learnt over the shards `spec.sharding` names (the package's docstring), in the
    hypothesis the spec names; a pipeline.TrainResult.  ValueError for settings refused before any
    data is read (an algorithm that cannot be mixed among them), DataError for bad data in any shard
    (nothing is returned), RuntimeError for a cluster.

    `resume`: go on from this model.  A checkpoint of a sharded run over the same shards (its
    `sharding`) continues where it was taken, each shard at its reading position with its random
    stream, so the run ends with the model of a run never interrupted; any other model starts every
    shard at its beginning from the model.  `watch.on_checkpoint(model)` is called at the first
    synchronisation after every `spec.checkpoint_every` examples (all shards together) with the mixed
    model and its `sharding`.

    The sharding's `sync`: "static" (mix every `sync_every` examples per shard) or "dynamic" (check every
    `sync_every`, mix when a shard's `divergence` exceeds Δ); None: a resumed checkpoint's, else dynamic
    when Δ is given, else static.  `spec.epochs`: passes of every shard over its own input, the mixing
    going on across them (McDonald et al.'s epochs; None: a resumed checkpoint's, else 1)."""
    watch = watch or Watch()
    sharding = spec.sharding
    expansions = expand(sharding.inputs)
    sources = [source for _, found in expansions for source in found]
    for source in sources:  # shard 0's first block is read twice, a lost worker's shard again from its start
        what = read_once(source)
        if what:
            raise ValueError(f"{source}: a shard is read more than once, and {what} can be read once: give a file")
    carried = resume.sharding if resume is not None and resume.sharding else None
    if carried is not None and carried["sources"] != sources:
        carried = None  # other shards: a new run from the model
    sync = sync_settings(sharding.sync_every, sharding.sync, sharding.divergence, carried)
    epochs = epochs_setting(spec.epochs, carried)
    if resume is not None:
        spec = spec.resuming(resume)
    cls = spec.learner_class
    if cls.mixing.reason:
        raise ValueError(f"{cls.name} cannot be trained on shards: {cls.mixing.reason}")
    if cls.mixing.at_end and spec.checkpoint_every:
        raise ValueError(
            f"--checkpoint-every: {cls.name}'s shards are mixed once, at the end, with nothing to checkpoint"
        )
    started = time.perf_counter()
    before = resume.learner.counter("examples") if resume is not None else 0
    if resume is None:
        with open_shard(sources[0], spec.block_lines, spec.skip_bad_lines) as reader:
            first = next(iter(reader), None)
        kernel = Kernel.of(spec.kernel, first.feature_count if first is not None else 1)
        warnings = kernel_warnings(kernel, first, spec.kernel.default_gamma) if first else []
    else:
        kernel, warnings = resume.learner.kernel, []
    shard_args = [
        (
            source,
            w,
            cls.name,
            kernel.to_dict(),
            spec.params,
            spec.seed,
            spec.skip_bad_lines,
            spec.block_lines,
            sync[1] is not None,
            epochs,
        )
        for w, source in enumerate(sources)
    ]
    with cluster(sharding.backend, sharding.jobs, sharding.scheduler) as client:
        shards = ShardPool(client, shard_args, _start_from(resume, carried, spec.seed, len(sources)))
        try:
            learner, labels, reports, rounds, checks = _rounds(spec, shards, sources, sync, resume, watch)
        finally:
            shards.close()
    learner.rebuild_stale()  # the model file may be asked to hold the resume state
    learner.notes = _notes(cls, len(sources), sync, rounds, checks, shards, carried) + pattern_notes(expansions)
    skipped = [e for r in reports for e in r["skipped"][1]]
    source = sources[0] if len(sources) == 1 else f"{len(sources)} shards: {sources[0]} … {sources[-1]}"
    model = _mixed(learner, labels, shards, sync, spec, resume, reports)
    return TrainResult(
        model.as_written(spec.written, _run(spec, resume, sync)),
        time.perf_counter() - started,
        source,
        sum(r["skipped"][0] for r in reports),
        skipped,
        warnings + learner.size_warnings(),
        {"synchronisations": rounds, "checks": checks, "bytes_out": shards.bytes_out, "bytes_in": shards.bytes_in},
        online=model,
        spec=spec,
        examples=learner.counter("examples") - before,
    )


def _notes(cls, k: int, sync: tuple, rounds: int, checks: int, shards, carried) -> list[str]:
    """What a sharded run's summary says of the protocol: synchronisations, traffic, restarts."""
    sync_every, divergence = sync
    every = (
        f"every {sync_every:,} examples per shard"
        if divergence is None
        else (
            f"when one had drifted more than {divergence:g} (checked every {sync_every:,} examples per shard, "
            f"{checks:,} times)"
        )
    )
    if cls.mixing.at_end:
        every = f"once, at the end ({cls.name}'s state beside its coefficients is no average: not resumable)"
    notes = [
        f"mixed {k} shards {every}"
        + (f" over {shards.epochs} passes" if shards.epochs > 1 else "")
        + f": {rounds:,} synchronisations"
        + (" after the checkpoint" if carried else ""),
        f"sent {shards.bytes_out / 1e6:,.1f} MB of arrays to the shards and received "
        f"{shards.bytes_in / 1e6:,.1f} MB from them",
    ]
    if shards.restarts:
        notes.append(
            f"restarted a shard {shards.restarts} time(s) after its worker was lost, from the last mixed "
            "model and its reading position"
        )
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


def sync_settings(
    sync_every: int | None, sync: str | None, divergence: float | None, carried: dict | None
) -> tuple[int, float | None]:
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
        raise ValueError(
            f"--sync-every {sync_every:,}: the checkpoint was taken with --sync-every "
            f"{carried['sync_every']:,}; give the same, or none"
        )
    return sync_every, divergence


def _start_from(resume: Model | None, carried: dict | None, seed: int, k: int) -> tuple | None:
    """ShardPool's `start` for a resumed run: the model as the shards adopt it, and each shard's reading
    position and random stream (a checkpoint's own; else 0, and a stream seeded by (seed, shard, T))."""
    if resume is None:
        return None
    learner = resume.learner
    header, arrays = learner.portable_state()
    if carried:
        return (
            (header, arrays, resume.labels.to_dict()),
            carried["positions"],
            [np.array(r, np.uint64) for r in carried["streams"]],
        )
    T = learner.counter("examples")
    return (
        (header, arrays, resume.labels.to_dict()),
        [0] * k,
        [np.random.SeedSequence((seed, w, T)).generate_state(1, np.uint64) for w in range(k)],
    )


def _rounds(spec: TrainSpec, shards, sources, sync, resume, watch: Watch) -> tuple:
    """Learn, mix and send back until every shard is through: (learner, labels, last reports,
    synchronisations, checks).  `sync` = (sync_every, divergence): every shard learns sync_every examples,
    then all are mixed (static), or only when one has drifted more than divergence (dynamic)."""
    cls, (sync_every, divergence) = spec.learner_class, sync
    learner = resume.learner if resume is not None else None
    labels = resume.labels.to_dict() if resume is not None else None
    counters = learner.counters.copy() if learner is not None else np.zeros(len(COUNTER_NAMES), np.int64)
    last_checkpoint, rounds, checks = int(counters[EXAMPLES]), 0, 0
    while True:
        steps = shards.step(sync_every)
        checks += 1
        through = all(c["learned"] < sync_every for c in steps)  # every shard is at its end
        if not through and cls.mixing.at_end:
            continue  # mixed once, at the end (a filter's state is no average)
        if divergence is not None and not through and all(c["divergence"] <= divergence for c in steps):
            continue  # every shard within Δ of the last mixed model: no synchronisation
        reports = shards.collect()
        if not any(r["learned"] for r in reports):
            break
        base = report_of(learner, labels) if learner is not None else None
        labels = merged_labels(reports, sources)
        learner = cls.mixing.compress(cls.from_state(*mix(reports, counters, labels, base)))
        cls.mixing.after_mix(learner)
        counters = learner.counters.copy()
        rounds += 1
        if through:
            break
        shards.adopt(*learner.portable_state(), labels)  # the resume state each shard rebuilds: not sent
        if spec.checkpoint_every and counters[EXAMPLES] - last_checkpoint >= spec.checkpoint_every:
            last_checkpoint = int(counters[EXAMPLES])
            checkpoint = _mixed(learner, labels, shards, sync, spec, resume, reports)
            watch.on_checkpoint(checkpoint.as_written(spec.written, _run(spec, resume, sync)))
    if learner is None:
        raise DataError(sources[0], 0, None, "no examples to train on")
    return learner, labels, reports, rounds, checks


def _mixed(learner, labels: dict, shards, sync: tuple, spec: TrainSpec, resume: Model | None, reports: list) -> Model:
    """The mixed model, as a checkpoint and the run write it: its features numbered from 0 once any shard,
    or the resumed model, met index 0 (Model.first_index)."""
    first_index = min([r["first_index"] for r in reports] + [resume.first_index if resume is not None else 1])
    return Model(
        learner,
        labels_from_dict(labels),
        sharding=shards.sharding(*sync),
        run=_run(spec, resume, sync),
        first_index=first_index,
    )


def _run(spec: TrainSpec, resume: Model | None, sync: tuple) -> dict:
    """What decided the model, for its header: a resumed model's own (Model.as_written), else the spec's
    with the protocol as it ran (`sync`: the interval and Δ, defaults settled)."""
    sync_every, divergence = sync
    protocol = {
        "sync_every": sync_every,
        "sync": "static" if divergence is None else "dynamic",
        "divergence": divergence,
    }
    if resume is not None and resume.run is not None:
        # a model mixed once at the end says it was (spec.refuse_resume), whichever run it went on from
        return resume.run | {"sharding": protocol} if spec.learner_class.mixing.at_end else resume.run
    return spec.to_dict() | {"sharding": protocol}
