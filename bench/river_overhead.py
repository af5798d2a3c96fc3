"""Overhead of the River classifier (budgetcli.river) over the learner's own loop, per example.

    python bench/river_overhead.py sample_data/a9a [-a rbp] [--params budget=100] [--gamma 0.04]

Learns DATA once in each of three ways, with the same algorithm and kernel:
  learner.learn   the compiled loop on the reader's 4,096-line chunks, as `budgetlearn train` runs it
                  (reading and parsing not counted);
  learn_many      BudgetClassifier.learn_many on DataFrames of --batch rows (built beforehand: a River
                  user who has mini-batches has them as frames);
  learn_one       BudgetClassifier.learn_one on each example as a dict {LIBSVM index: value}.
Prints CPU microseconds per example (user + system, time.process_time: the overhead of one process's
calls, whatever its neighbours do) and each run's mistakes, which must agree.  Every way is warmed up
first (numba's compile cache, the first call of each compiled function).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from budgetcli.base import registry
from budgetcli.io.libsvm import LibsvmReader
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.labels import BinaryLabels, MulticlassLabels
from budgetcli.river import BudgetClassifier


def value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("-a", "--algorithm", default="rbp")
    ap.add_argument("--params", nargs="*", default=["budget=100"], help="NAME=VALUE algorithm parameters")
    ap.add_argument("--gamma", type=float, default=0.04)
    ap.add_argument("--batch", type=int, default=1000)
    args = ap.parse_args()
    params = {k: value(v) for k, v in (p.split("=", 1) for p in args.params)}
    cls = registry.get(args.algorithm)

    with LibsvmReader(args.data) as reader:
        chunks = list(reader)
    labels = MulticlassLabels() if cls.multiclass else BinaryLabels()
    encoded = [labels.encode(c) for c in chunks]
    rows, ys = [], []
    for chunk in chunks:
        for i in range(len(chunk)):
            idx, val = chunk.row(i)
            rows.append(dict(zip((idx + 1).tolist(), val.tolist())))
        ys.extend(chunk.labels.tolist())
    n = len(rows)
    frames = [
        (pd.DataFrame(rows[a : a + args.batch]), pd.Series(ys[a : a + args.batch])) for a in range(0, n, args.batch)
    ]

    def loop(k):
        learner = cls(Kernel("rbf", args.gamma), **params)
        for chunk, y in zip(chunks, encoded):
            if k <= 0:
                break
            learner.learn(chunk if len(chunk) <= k else chunk.take(np.arange(k)), y[:k])
            k -= len(chunk)
        return learner

    def many(k):
        model = BudgetClassifier(args.algorithm, gamma=args.gamma, **params)
        for X, y in frames[: -(-k // args.batch)]:  # the batches holding the first k examples
            model.learn_many(X, y)
        return model.learner

    def one(k):
        model = BudgetClassifier(args.algorithm, gamma=args.gamma, **params)
        for x, y in zip(rows[:k], ys[:k]):
            model.learn_one(x, y)
        return model.learner

    print(
        f"{args.data}: {n:,} examples, {args.algorithm} {params}, rbf gamma = {args.gamma:g}, batches of {args.batch:,}"
    )
    report(
        "learning",
        [("learner.learn", loop), ("learn_many", many), ("learn_one", one)],
        2 * args.batch,
        n,
        lambda learner, _: f"mistakes {learner.counter('mistakes'):,}, |S| {len(learner.support):,}",
    )

    # predictions, as label values: the learner of the first way on the reader's chunks, decoded by
    # its label map (what `budgetlearn predict` does); predict_many on the frames and predict_one on
    # the dicts of a BudgetClassifier that has learnt the same stream
    learner = loop(n)
    model = BudgetClassifier(args.algorithm, gamma=args.gamma, **params)
    for X, y in frames:
        model.learn_many(X, y)

    def scores(k):
        return [float(p) for chunk in chunks for p in labels.decode(learner.decision_function(chunk))][:k]

    def predict_many(k):
        return [float(p) for X, _ in frames[: -(-k // args.batch)] for p in model.predict_many(X)][:k]

    def predict_one(k):
        return [float(model.predict_one(x)) for x in rows[:k]]

    report(
        "prediction",
        [("decision_function", scores), ("predict_many", predict_many), ("predict_one", predict_one)],
        2 * args.batch,
        n,
        lambda got, first: f"{sum(a == b for a, b in zip(got, first)):,} the same as the first",
    )


def report(what: str, ways, warm: int, n: int, describe) -> None:
    """CPU µs per example of each way (name, run(k)) over the first n examples, after a warm-up on `warm`;
    describe(result, first way's result) says what came out."""
    print(what)
    base = first = None
    for name, run in ways:
        run(warm)
        t0 = time.process_time()
        result = run(n)
        seconds = time.process_time() - t0
        if base is None:
            base, first = seconds, result
        print(
            f"  {name:<18} {1e6 * seconds / n:8.2f} µs/example  ({seconds:.2f} s CPU, {seconds / base:5.2f}× the "
            "first)  "
            f"{describe(result, first)}"
        )


if __name__ == "__main__":
    main()
