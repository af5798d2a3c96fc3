"""Projectron paper, Fig. 6 setting on a9a: rbf γ = 0.04, one online pass over 5 random
permutations; final support size and online mistakes of Perceptron, Projectron and Projectron++
for η = 0.1 (our convention, ‖δ‖ ≤ η) and η = √0.1 (DOGMA's ‖δ‖² ≤ 0.1, which the paper ran),
and of RBP / LBP / Forgetron at the budget of Projectron's final size.

    python repro/projectron_a9a.py ../shared/datasets/a9a/a9a [--test ../shared/datasets/a9a/a9a.t] [--runs ...]

Prints one row per (algorithm, η) with mean ± std over the permutations, and writes the rows as
JSON to stdout's last line.  The paper reports |S| = 793 for Projectron at its η = 0.1 (Fig. 6).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from budgetcli import registry
from budgetcli.io.libsvm import read_all
from budgetcli.kernels import Kernel

BUDGETED = ("rbp", "lbp", "forgetron")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("--test")
    ap.add_argument("--permutations", type=int, default=5)
    ap.add_argument("--gamma", type=float, default=0.04)
    ap.add_argument("--runs", nargs="+", default=["perceptron", "projectron:0.1", "projectron:0.31623",
                                                  "projectron++:0.1", "projectron++:0.31623", "rbp:773", "lbp:773",
                                                  "forgetron:773"],
                    help="ALGO[:VALUE] with VALUE = η for the Projectron family, B for rbp/lbp/forgetron "
                         "(default B = 773, our Projectron's size at η = √0.1)")
    args = ap.parse_args()
    data = read_all(args.train)
    test = read_all(args.test) if args.test else None
    runs = [(r.split(":")[0], float(r.split(":")[1]) if ":" in r else None) for r in args.runs]
    rows = []
    for algo, eta in runs:
        res = []
        for p in range(args.permutations):
            ch = data.take(np.random.default_rng(p).permutation(len(data)))
            params = {} if eta is None else {"budget": int(eta)} if algo in BUDGETED else {"eta": eta}
            learner = registry.get(algo)(Kernel("rbf", args.gamma), **params)
            t0 = time.perf_counter()
            learner.learn(ch, ch.labels)
            secs = time.perf_counter() - t0
            acc = float(np.mean(np.where(learner.decision_function(test) > 0, 1, -1) == test.labels)) if test else None
            res.append((learner.counter("mistakes") / len(ch), len(learner.support), secs, acc))
        r = np.array([[v if v is not None else np.nan for v in x] for x in res])
        row = {"algorithm": algo, "eta": eta, "online_error_mean": r[:, 0].mean(), "online_error_std": r[:, 0].std(),
               "support_mean": r[:, 1].mean(), "support_std": r[:, 1].std(), "seconds_mean": r[:, 2].mean(),
               "test_accuracy_mean": None if test is None else r[:, 3].mean()}
        rows.append(row)
        eta_s = "-" if eta is None else f"{eta:g}"
        acc_s = "" if test is None else f"  test acc {100 * row['test_accuracy_mean']:.2f}%"
        print(f"{algo:13s} {'B' if algo in BUDGETED else 'η'}={eta_s:7s} online error {100 * row['online_error_mean']:.2f}% ± "
              f"{100 * row['online_error_std']:.2f}  |S| {row['support_mean']:.0f} ± {row['support_std']:.0f}  "
              f"{row['seconds_mean']:.1f} s{acc_s}", flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
