"""Multiclass Pegasos paper (Wang, Crammer, Vucetic, ICML 2010), Table 1 setting: one online pass
of bpegasos with each budget maintenance at B = 100 and 500, λ = 1e-4, Gaussian kernel with γ from
the paper's grid {2⁰, 2², 2⁴, 2⁶}/d (the best γ per data set, maintenance and budget, as the paper
chose it), test accuracy.  Paper, letter: merge 72.0 / 89.5, project 76.3 / 87.3, random 39.9 / 68.1,
smallest 41.7 / 68.5 (B = 100 / 500; mean of 5 permutations).

    python repro/pegasos_letter.py ../shared/datasets/letter/letter.scale ../shared/datasets/letter/letter.scale.t
    python repro/pegasos_letter.py --generate checkerboard 100000 10000
    python repro/pegasos_letter.py --generate waveform 100000 10000

Prints one row per (B, maintenance): the accuracy for every γ of the grid, the best, the seconds of
the best run; then whether the paper's ordering merge ≳ project > smallest ≈ random holds
(min(merge, project) > max(smallest, random) at every B); the last line is all rows as JSON.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from budgetcli import registry
from budgetcli.io.libsvm import Chunk, read_all
from budgetcli.kernels import Kernel
from budgetcli.labels import MulticlassLabels
from budgetcli.synthetic import GENERATORS

MODES = ("merge", "project", "smallest", "random")


def dense_chunk(X, y) -> Chunk:
    n, d = X.shape
    return Chunk(indptr=np.arange(0, n * d + 1, d, dtype=np.int64), indices=np.tile(np.arange(d, dtype=np.int32), n),
                 values=X.ravel().astype(np.float64), labels=np.asarray(y, np.float64),
                 line_numbers=np.arange(1, n + 1, dtype=np.int64))


def accuracy(learner, labels, test) -> float:
    pred = np.array(labels.classes)[labels.predict_index(learner.decision_function(test))]
    return float(np.mean(pred == test.labels))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train", nargs="?")
    ap.add_argument("test", nargs="?")
    ap.add_argument("--generate", nargs=3, metavar=("GENERATOR", "N_TRAIN", "N_TEST"),
                    help="use a synthetic stream of budgetcli.synthetic instead of files (test seed = train seed + 1)")
    ap.add_argument("--budgets", type=int, nargs="+", default=[100, 500])
    ap.add_argument("--maintenance", nargs="+", default=list(MODES))
    ap.add_argument("--lam", type=float, default=1e-4)
    ap.add_argument("--grid", type=float, nargs="+", default=[1, 4, 16, 64], help="γ·d values (paper: 2⁰ 2² 2⁴ 2⁶)")
    ap.add_argument("--seed", type=int, default=0, help="permutation of the training stream (and generator seed)")
    args = ap.parse_args()
    if args.generate:
        gen, n_train, n_test = args.generate[0], int(args.generate[1]), int(args.generate[2])
        train = dense_chunk(*GENERATORS[gen](n_train, seed=args.seed))
        test = dense_chunk(*GENERATORS[gen](n_test, seed=args.seed + 1))
        name = gen
    else:
        train, test = read_all(args.train), read_all(args.test)
        train = train.take(np.random.default_rng(args.seed).permutation(len(train)))
        name = args.train
    d = max(train.n_features, test.n_features)
    print(f"{name}: {len(train)} training, {len(test)} test examples, d = {d}, λ = {args.lam:g}", flush=True)
    rows = []
    for B in args.budgets:
        for mode in args.maintenance:
            accs, secs = [], []
            for g in args.grid:
                labels = MulticlassLabels()
                y = labels.encode(train)
                learner = registry.get("bpegasos")(Kernel("rbf", g / d), lambda_=args.lam, budget=B,
                                                   maintenance=mode, seed=args.seed)
                t0 = time.perf_counter()
                learner.learn(train, y)
                secs.append(time.perf_counter() - t0)
                accs.append(accuracy(learner, labels, test))
            best = int(np.argmax(accs))
            row = {"data": name, "budget": B, "maintenance": mode, "gamma_times_d": args.grid,
                   "accuracy": accs, "best_accuracy": accs[best], "best_gamma": args.grid[best] / d,
                   "seconds": secs, "seconds_best": secs[best]}
            rows.append(row)
            grid = "  ".join(f"{100 * a:5.1f}" for a in accs)
            print(f"B={B:4d} {mode:9s} acc per γ·d {args.grid}: {grid}   best {100 * accs[best]:.1f} "
                  f"(γ={args.grid[best]:g}/{d}, {secs[best]:.1f} s)", flush=True)
    for B in args.budgets:
        best = {r["maintenance"]: r["best_accuracy"] for r in rows if r["budget"] == B}
        if set(MODES) <= set(best):
            ok = min(best["merge"], best["project"]) > max(best["smallest"], best["random"])
            print(f"B={B}: merge/project ({100 * best['merge']:.1f}/{100 * best['project']:.1f}) above smallest/random "
                  f"({100 * best['smallest']:.1f}/{100 * best['random']:.1f}): {'yes' if ok else 'NO'}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
