"""Sharded training on a local dask cluster against one process (issue #20, "what to measure" 3), each
worker's memory against its shard's length, and a projection to more workers.

    python bench/shards_speed.py TRAIN [--repeat 100] [--jobs 2] [--sync-every 100000] [--runs 3]

1. Speed.  TRAIN repeated --repeat times is written to a temporary directory once whole and once cut
   into --jobs files of equal line counts.  Whole processes, interleaved round after round (medians;
   wall, CPU of the process tree, peak RSS: bench/peers.py's measure):
       budgetlearn train -a rbp -B 300 --gamma 0.04 WHOLE -o M
       budgetlearn train -a rbp -B 300 --gamma 0.04 PART... --backend dask --jobs J --sync-every N -o M
   The second starts its LocalCluster of J single-threaded worker processes itself, so its wall time
   includes the cluster's start.  Goal: one process ÷ sharded ≥ 1.7 with two workers.
2. Memory.  The same sharded run in this process against a LocalCluster started here, on TRAIN
   repeated --repeat/10 and --repeat times: each worker's peak resident memory (VmHWM of
   /proc/self/status, its own process's mark) after the run.  Flat means the same for 10× the lines.
3. Projection (a model, stated as such, from the figures measured in 1 and 2): the time for W workers on
   a 1-billion-line stream, W = 8, 64, 512, as N/(W·r) + (N/(W·n)) · (m(W) + 2·W·b/β): r the examples per
   second one worker learns (its shard's lines over the sharded run's learning time), n = --sync-every,
   b the bytes of one shard's model each way per synchronisation (measured), β the driver's network
   bandwidth (1.25 GB/s, a 10 Gbit/s link: every model passes through the driver, which sends and
   receives W of them per synchronisation), m(W) the driver's mixing time, measured here for the
   union of W budgets of B = 300 vectors (mix + compress).  Reading is assumed to scale with the
   workers (each reads its own shard from storage that keeps up).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

from peers import measure  # noqa: E402
from loops import fmt_load  # noqa: E402

TRAIN = ["train", "-a", "rbp", "-B", "300", "--gamma", "0.04", "-q", "--json"]
BANDWIDTH = 1.25e9  # bytes/s at the driver: 10 Gbit/s


def write_copies(src: str, repeat: int, parts: int, where: str) -> tuple[str, list[str]]:
    """TRAIN repeated `repeat` times: the whole file and its `parts` files of equal line counts."""
    with open(src, "rb") as f:
        lines = f.readlines()
    whole = os.path.join(where, f"x{repeat}")
    with open(whole, "wb") as out:
        for _ in range(repeat):
            out.writelines(lines)
    total, size, paths = len(lines) * repeat, -(-len(lines) * repeat // parts), []
    for p in range(parts):
        paths.append(os.path.join(where, f"x{repeat}-part{p}"))
        with open(paths[-1], "wb") as out:
            for i in range(p * size, min((p + 1) * size, total)):
                out.write(lines[i % len(lines)])
    return whole, paths


def speed(whole, parts, args, tmp) -> dict:
    cmds = {
        "one process": [*TRAIN, whole, "-o", os.path.join(tmp, "one.model")],
        f"dask, {args.jobs} workers": [
            *TRAIN,
            *parts,
            "--backend",
            "dask",
            "--jobs",
            str(args.jobs),
            "--sync-every",
            str(args.sync_every),
            "-o",
            os.path.join(tmp, "d.model"),
        ],
    }
    runs = {k: [] for k in cmds}
    print(f"load average before: {fmt_load(os.getloadavg())}", flush=True)
    for _ in range(args.runs):
        for k, cmd in cmds.items():
            runs[k].append(measure([sys.executable, "-m", "budgetcli", *cmd], ROOT))
    print(f"load average after:  {fmt_load(os.getloadavg())}")
    out = {}
    for k, procs in runs.items():
        out[k] = {f: statistics.median(getattr(p, f) for p in procs) for f in ("wall", "cpu", "rss")}
        print(f"{k:20s} wall {out[k]['wall']:6.2f} s  CPU {out[k]['cpu']:6.2f} s  peak RSS {out[k]['rss']:6.1f} MB")
    one, two = (out[k]["wall"] for k in cmds)
    print(f"one process ÷ sharded, wall: {one / two:.2f} (goal ≥ 1.7)")
    return out


def worker_peaks(paths: list[str], jobs: int, sync_every: int) -> tuple[list[float], object]:
    """Each worker's VmHWM (MB) after one sharded run on a LocalCluster started here; the run's result."""
    import logging

    from distributed import Client, LocalCluster

    from budgetcli.run import distributed
    from budgetcli.base.core import KernelSpec
    from budgetcli.model.spec import Sharding, TrainSpec

    def vmhwm():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024

    with (
        LocalCluster(
            n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
        ) as cluster,
        Client(cluster) as client,
    ):
        sharding = Sharding(tuple(paths), "dask", scheduler=cluster.scheduler_address, sync_every=sync_every)
        result = distributed.train(TrainSpec("rbp", KernelSpec("rbf", 0.04), {"budget": 300}, sharding=sharding))
        return sorted(client.run(vmhwm).values()), result


def mixing_time(W: int) -> float:
    """The driver's time to mix W shards' models of 300 support vectors and compress to 300, timed here
    on synthetic a9a-like reports (14 binary features of 123 each)."""
    import numpy as np

    from budgetcli.learning import mixing
    from budgetcli.base import registry
    from budgetcli.run.distributed import average
    from budgetcli.numerics.kernels import Kernel

    rng = np.random.default_rng(0)
    reports = []
    for w in range(W):
        learner = registry.get("rbp")(Kernel("rbf", 0.04), budget=300)
        header, arrays = learner.state()
        idx = np.sort(rng.choice(123, (300, 14)), axis=1).astype(np.int32).ravel()
        arrays.update(
            sv_indptr=np.arange(0, 300 * 14 + 1, 14, dtype=np.int64),
            sv_indices=idx,
            sv_values=np.ones(300 * 14),
            alpha=rng.choice([-1.0, 1.0], 300),
            counters=np.array([1000, 200, 0, 0], np.int64),
        )
        reports.append(
            {"header": header | {"n_features": 123}, "arrays": arrays, "average": arrays["alpha"] / 2, "learned": 1000}
        )
    t0 = time.perf_counter()
    mixed = registry.get("rbp").from_state(*average.mix(reports, np.zeros(4, np.int64)))
    mixing.compress_to_budget(mixed, 300)
    return time.perf_counter() - t0


def project(per_worker_rate: float, bytes_per_sync: float, sync_every: int) -> None:
    N = 1e9
    print(
        f"\nprojection (a model, not a measurement): N = 1e9 lines, r = {per_worker_rate:,.0f} examples/s per "
        f"worker, b = {bytes_per_sync / 1e3:,.0f} kB per model and direction, n = {sync_every:,}, "
        f"β = {BANDWIDTH / 1e9:.2f} GB/s at the driver"
    )
    for W in (8, 64, 512):
        rounds = N / (W * sync_every)
        m = mixing_time(W)
        learn = N / (W * per_worker_rate)
        comm = rounds * 2 * W * bytes_per_sync / BANDWIDTH
        total = learn + rounds * m + comm
        print(
            f"  W = {W:3d}: learning {learn / 3600:6.2f} h, mixing {rounds * m / 3600:6.2f} h ({m * 1e3:,.0f} ms × "
            f"{rounds:,.0f}), network {comm / 3600:6.2f} h: {total / 3600:6.2f} h"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train")
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--sync-every", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        whole, parts = write_copies(args.train, args.repeat, args.jobs, tmp)
        speed(whole, parts, args, tmp)
        small = write_copies(args.train, max(args.repeat // 10, 1), args.jobs, tmp)[1]
        (peak_small, _), (peak_big, result) = (worker_peaks(p, args.jobs, args.sync_every) for p in (small, parts))
    print(
        f"\nworkers' peak resident memory: {', '.join(f'{x:.0f}' for x in peak_small)} MB on "
        f"{max(args.repeat // 10, 1)}× TRAIN, {', '.join(f'{x:.0f}' for x in peak_big)} MB on {args.repeat}×"
    )
    lines = result.model.learner.counter("examples")
    rate = lines / args.jobs / result.seconds  # per worker; the run's own seconds: actors' start, reading, mixing
    syncs = max(result.traffic["synchronisations"], 1)
    project(rate, result.traffic["bytes_in"] / syncs / args.jobs, args.sync_every)


if __name__ == "__main__":
    main()
