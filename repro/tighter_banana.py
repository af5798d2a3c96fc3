"""Weston, Bordes, Bottou 2005, Fig. 12 setting: banana with 10% of the training labels flipped;
test error of Perceptron, CKS Budget Perceptron and Tighter Budget Perceptron vs cache size p.

    python repro/tighter_banana.py ../shared/datasets/banana/banana [--splits 5] [--gamma 1]

Each split shuffles the 5,300 points (numpy default_rng(split)), trains one online pass on the first
4,000 with 10% of their labels flipped, and tests the last hypothesis on the other 1,300 (clean labels).
Prints mean ± std test error per (algorithm, p), then the rows as JSON.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from budgetcli import registry
from budgetcli.io.libsvm import read_all
from budgetcli.kernels import Kernel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 25, 50, 100])
    args = ap.parse_args()
    data = read_all(args.data)
    runs = [("perceptron", None, {})]
    for p in args.sizes:
        runs += [("budget-perceptron", p, {"budget": p}),
                 ("tighter-perceptron", p, {"budget": p, "eval_set": "flip"}),
                 ("tighter-perceptron", p, {"budget": p, "eval_set": "all"})]
    rows = []
    for algo, p, params in runs:
        errors = []
        for split in range(args.splits):
            rng = np.random.default_rng(split)
            order = rng.permutation(len(data))
            train, test = data.take(order[:4000]), data.take(order[4000:])
            y = train.labels.copy()
            flip = rng.random(len(y)) < 0.1
            y[flip] = -y[flip]
            learner = registry.get(algo)(Kernel("rbf", args.gamma), seed=split, **params)
            learner.learn(train, y)
            pred = np.where(learner.decision_function(test) > 0, 1.0, -1.0)
            errors.append(float(np.mean(pred != test.labels)))
        name = algo + (f" ({params['eval_set']})" if "eval_set" in params else "")
        row = {"algorithm": name, "p": p, "test_error_mean": float(np.mean(errors)),
               "test_error_std": float(np.std(errors)), "support": len(learner.support)}
        rows.append(row)
        print(f"{name:28s} p={str(p):4s} test error {100 * row['test_error_mean']:.2f}% ± "
              f"{100 * row['test_error_std']:.2f}  |S| {row['support']}", flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
