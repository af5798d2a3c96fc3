"""Sharded training against one process (issue #20, "what to measure" 1 and 2, in the serial simulation).

    python bench/shards.py TRAIN TEST [--shards 1,2,4,8] [--sync-every 1000,5000] [--algorithms rbp,projectron++]
           [--divergence 10,30] [--seeds 0,1,2] [--orders 5] [--shard-epochs 8] [--json FILE]

TRAIN is cut into k contiguous parts of equal line counts (the shards, written to a temporary
directory), and `budgetcli.run.distributed.train` learns one model over them with --backend serial: the
same protocol as on a cluster, whose model files are byte-identical (tests/test_distributed.py), so
accuracy and communication do not depend on the backend.  Per algorithm, k and sync interval the
table gives the test accuracy on TEST of the last hypothesis and of the averaged one (not for learners
that evict, whose shards do not keep the evicted vectors the average needs; one process: projected),
the number of synchronisations, the bytes of arrays the shards sent and were sent, the support size,
and the CPU seconds of the run.  The one-process `train` on TRAIN comes first, as the reference: the
goal is to stay within 1 point of its test accuracy for k ≤ 8.  Settings: rbf γ = 0.04 (--gamma),
seed 0, rbp, mrbp, forgetron and budget-perceptron B = 300, projectron++ and mc-projectron++ η = 0.5,
bpegasos B = 100 with merging, the others (fogd among them) at their defaults (multiclass: letter.scale
with --gamma 0.5).

With --divergence, every static row (the models mixed every --sync-every examples per shard) gets one
row per Δ of dynamic averaging beside it (each shard checks ‖f − r‖² ≤ Δ every --sync-every examples,
and the shards synchronise only when one has drifted further): the goal is ≥ 10× fewer bytes than the
static row at its accuracy within 0.5 point.  --seeds repeats everything per seed (rbp's evictions,
and so its accuracy, vary with the seed), --orders per order of the training lines (the file's, then
random permutations); with either, the means over them end the table.  --shard-epochs E makes every
shard pass E times over its part (`train --epochs` on a sharded run; with E = k a shard makes as many
steps as one process's single pass, which stays one pass).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

from budgetcli.run import distributed, pipeline  # noqa: E402
from budgetcli.base.core import KernelSpec  # noqa: E402
from budgetcli.model.spec import Sharding, TrainSpec  # noqa: E402
from budgetcli.io.libsvm import read_all  # noqa: E402

SETTINGS = {
    "rbp": {"budget": 300},
    "projectron++": {"eta": 0.5},
    "forgetron": {"budget": 300},
    "budget-perceptron": {"budget": 300},
    "pa": {},
    "perceptron": {},
    "bpegasos": {"budget": 100, "maintenance": "merge"},
    "pegasos": {},
    "mc-pa": {},
    "mc-perceptron": {},
    "mrbp": {"budget": 300},
    "mc-projectron++": {"eta": 0.5},
    "fogd": {},
}
KERNEL = KernelSpec("rbf", 0.04)  # --gamma sets it


def accuracy(model, test) -> float:
    scores = model.learner.decision_function(test)
    if model.learner.multiclass:
        predicted = np.array(model.labels.values)[model.labels.predict_index(scores)]
    else:
        predicted = np.where(scores > 0, model.labels.positive, model.labels.negative)
    return float(np.mean(predicted == test.labels))


def ordered(train: str, order: int, where: str) -> str:
    """TRAIN for order 0, else a copy of it with its lines in a random order (numpy's generator seeded
    with `order`): one data order is one draw, and a comparison within a point needs several."""
    if order == 0:
        return train
    with open(train, "rb") as f:
        lines = f.readlines()
    path = os.path.join(where, f"order-{order}.svm")
    with open(path, "wb") as out:
        out.writelines(lines[i] for i in np.random.default_rng(order).permutation(len(lines)))
    return path


def split(train: str, k: int, where: str) -> list[str]:
    with open(train, "rb") as f:
        lines = f.readlines()
    size = -(-len(lines) // k)
    paths = []
    for w in range(k):
        path = os.path.join(where, f"shard-{k}-{w:03d}.svm")
        with open(path, "wb") as out:
            out.writelines(lines[w * size : (w + 1) * size])
        paths.append(path)
    return paths


def sharded_row(paths, name, params, sync, divergence, seed, order, test, epochs=1) -> dict:
    """One sharded run (static averaging for divergence None, else dynamic) and its figures."""
    t0 = time.process_time()
    result = distributed.train(
        TrainSpec(
            name, KERNEL, params, seed, epochs, sharding=Sharding(tuple(paths), sync_every=sync, divergence=divergence)
        )
    )
    cpu = time.process_time() - t0
    learner = result.model.learner
    # the shards do not keep the vectors an evicting learner discards: no average to measure
    avg = None if learner.evicts else accuracy(result.model.averaged(), test)
    return {
        "algorithm": name,
        "k": len(paths),
        "sync_every": sync,
        "divergence": divergence,
        "seed": seed,
        "order": order,
        "accuracy_last": accuracy(result.model, test),
        "accuracy_average": avg,
        "synchronisations": result.traffic["synchronisations"],
        "mb_out": result.traffic["bytes_out"] / 1e6,
        "mb_in": result.traffic["bytes_in"] / 1e6,
        "support": len(learner.support),
        "cpu": cpu,
    }


def show(row) -> None:
    avg = "     —  " if row["accuracy_average"] is None else f"{100 * row['accuracy_average']:7.2f}%"
    mode = "static" if row["divergence"] is None else f"Δ={row['divergence']:g}"
    print(
        f"{row['algorithm']:14s} {row['seed']:4d} {row['order']:5d} {row['k']:3d} {row['sync_every']:6d} {mode:>8s} "
        f"{100 * row['accuracy_last']:8.2f}% {avg} {row['synchronisations']:6d} {row['mb_out']:7.2f} "
        f"{row['mb_in']:7.2f} {row['support']:5d} {row['cpu']:6.2f}",
        flush=True,
    )


def one_process(train, name, params, seed, order, test) -> dict:
    t0 = time.process_time()
    # the online learner: `accuracy` scores the last hypothesis, Model.averaged (evicted vectors included) the average
    one = pipeline.train(TrainSpec(name, KERNEL, params, seed, hypothesis="running-average"), train)
    cpu = time.process_time() - t0
    last, avg = accuracy(one.model, test), accuracy(one.model.averaged(), test)
    print(
        f"{name:14s} {seed:4d} {order:5d} {'one process':>19s} {100 * last:8.2f}% {100 * avg:7.2f}% {'':6s} "
        f"{'':7s} {'':7s} {len(one.model.learner.support):5d} {cpu:6.2f}",
        flush=True,
    )
    return {
        "algorithm": name,
        "k": 0,
        "seed": seed,
        "order": order,
        "accuracy_last": last,
        "accuracy_average": avg,
        "cpu": cpu,
    }


def means(rows) -> None:
    """Over the seeds and orders: each setting's mean test accuracy, last hypothesis (and averaged),
    beside the one-process mean, and its mean bytes."""
    print("\nmeans over seeds and orders (accuracy last / averaged, and the difference from one process):")
    groups: dict = {}
    for row in rows:
        groups.setdefault((row["algorithm"], row["k"], row.get("sync_every"), row.get("divergence")), []).append(row)
    for (name, k, sync, divergence), group in groups.items():
        one = groups[(name, 0, None, None)]
        parts = []
        for key in ("accuracy_last", "accuracy_average"):
            if group[0][key] is not None:
                mean = 100 * np.mean([r[key] for r in group])
                parts.append(f"{mean:6.2f}% ({mean - 100 * np.mean([r[key] for r in one]):+.2f})")
        where = "one process" if k == 0 else f"k={k} sync {sync}" + ("" if divergence is None else f" Δ={divergence:g}")
        traffic = "" if k == 0 else f"  {np.mean([r['mb_out'] + r['mb_in'] for r in group]):.2f} MB"
        print(f"{name:14s} {where:28s} {' / '.join(parts)}{traffic}  ({len(group)} runs)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--shards", default="1,2,4,8")
    ap.add_argument("--sync-every", default="1000,5000")
    ap.add_argument("--divergence", default="", help="Δ values of dynamic averaging, run beside the static rows")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--orders", type=int, default=1, help="data orders: the file's, then random ones (seeds 1, 2, ...)")
    ap.add_argument(
        "--shard-epochs",
        type=int,
        default=1,
        help="passes of every shard over its part (train --epochs); the one-process row stays one pass",
    )
    ap.add_argument("--algorithms", default="rbp,projectron++")
    ap.add_argument("--gamma", type=float, default=0.04, help="rbf γ (letter: 0.5)")
    ap.add_argument("--json")
    args = ap.parse_args()
    global KERNEL
    KERNEL = KernelSpec("rbf", args.gamma)
    test = read_all(args.test)
    modes = [None] + [float(d) for d in args.divergence.split(",") if d]
    rows = []
    print(
        f"{'algorithm':14s} {'seed':>4s} {'order':>5s} {'k':>3s} {'sync':>6s} {'mode':>8s} {'acc last':>9s} "
        f"{'acc avg':>8s} {'syncs':>6s} {'MB out':>7s} {'MB in':>7s} {'|S|':>5s} {'CPU s':>6s}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for order in range(args.orders):
            train = ordered(args.train, order, tmp)
            for name in args.algorithms.split(","):
                for seed in map(int, args.seeds.split(",")):
                    rows.append(one_process(train, name, SETTINGS[name], seed, order, test))
                    for k in map(int, args.shards.split(",")):
                        paths = split(train, k, tmp)
                        for sync in map(int, args.sync_every.split(",")):
                            for divergence in modes:
                                rows.append(
                                    sharded_row(
                                        paths,
                                        name,
                                        SETTINGS[name],
                                        sync,
                                        divergence,
                                        seed,
                                        order,
                                        test,
                                        args.shard_epochs,
                                    )
                                )
                                show(rows[-1])
    if len(rows) > len({(r["algorithm"], r["k"], r.get("sync_every"), r.get("divergence")) for r in rows}):
        means(rows)
    print("load average (1, 5, 15 min): " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
