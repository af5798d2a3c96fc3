"""Benchmark: every registered algorithm on a9a (rbf γ = 0.04) beside LIBSVM and scikit-learn.

    pip install libsvm-official scikit-learn          # the peers (optional; rows are skipped without them)
    python bench/run.py ../shared/datasets/a9a/a9a ../shared/datasets/a9a/a9a.t [--json bench/results.json]

Per run: examples/s end to end (the `budgetlearn train` command in a fresh process, parsing and
saving included) and for the learning loop alone (in process, data already parsed, compilation
excluded by a warm-up), online mistake rate, support size, peak RSS of the command, test accuracy.
Peers in the same run: LIBSVM's C-SVC (C = 1, same kernel) and Nystroem(500) + SGDClassifier(hinge)
by partial_fit in batches of 1,000 (one pass); the reference implementations of tests/reference.py
on the first 1,000 examples against our loop on the same examples.  Ratios are peer ÷ ours.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # for tests.reference

from budgetcli import registry  # noqa: E402
from budgetcli.io.libsvm import read_all  # noqa: E402
from budgetcli.kernels import Kernel  # noqa: E402

GAMMA = 0.04
BUDGETS = (100, 300, 800)
SETTINGS = {  # algorithm -> list of parameter dicts
    "perceptron": [{}], "pa-i": [{}], "spa": [{}], "alma2": [{}],
    "projectron": [{"eta": 0.31623}], "projectron++": [{"eta": 0.31623}], "projectron-alma2": [{"eta": 0.005}],
    **{a: [{"budget": b} for b in BUDGETS] for a in ("rbp", "lbp", "forgetron", "budget-perceptron",
                                                      "tighter-perceptron")},
}
RSS_WRAPPER = ("import resource, sys\nfrom budgetcli.cli import main\n"
               "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
               "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n")


def flags(params: dict) -> list[str]:
    names = {"eta": "--eta", "budget": "--budget"}
    return [x for k, v in params.items() for x in (names[k], str(v))]


def end_to_end(algo, params, train, out):
    cmd = [sys.executable, "-c", RSS_WRAPPER, "train", "-a", algo, "--gamma", str(GAMMA), "-q", "--json",
           *flags(params), train, "-o", out]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t0
    return seconds, json.loads(p.stdout), int(p.stderr.strip().splitlines()[-1]) / 1024  # MiB


def loop_only(algo, params, data):
    cls = registry.get(algo)
    cls(Kernel("rbf", GAMMA), **params).learn(data.take(np.arange(200)), data.labels[:200])  # compile
    learner = cls(Kernel("rbf", GAMMA), **params)
    t0 = time.perf_counter()
    learner.learn(data, data.labels)
    return time.perf_counter() - t0, learner


def peers(train, test, our_seconds):
    rows = []
    try:
        from libsvm.svmutil import svm_predict, svm_read_problem, svm_train
        y, x = svm_read_problem(train)
        yt, xt = svm_read_problem(test)
        t0 = time.perf_counter()
        m = svm_train(y, x, f"-t 2 -g {GAMMA} -c 1 -q")
        _, (acc, _, _), _ = svm_predict(yt, xt, m, "-q")
        s = time.perf_counter() - t0
        rows.append({"peer": "LIBSVM C-SVC (C=1)", "seconds": s, "test_accuracy": acc / 100,
                     "support_size": m.get_nr_sv(), "time_ratio_to_ours": s / our_seconds})
    except ImportError:
        print("libsvm-official not installed: LIBSVM row skipped", file=sys.stderr)
    try:
        from sklearn.datasets import load_svmlight_file
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import SGDClassifier
        t0 = time.perf_counter()
        X, y = load_svmlight_file(train, n_features=123)
        Xt, yt = load_svmlight_file(test, n_features=123)
        ny = Nystroem(gamma=GAMMA, n_components=500, random_state=0).fit(X[:500])
        clf = SGDClassifier(loss="hinge", random_state=0)
        for a in range(0, X.shape[0], 1000):
            clf.partial_fit(ny.transform(X[a:a + 1000]), y[a:a + 1000], classes=[-1.0, 1.0])
        acc = float(np.mean(clf.predict(ny.transform(Xt)) == yt))
        s = time.perf_counter() - t0
        rows.append({"peer": "Nystroem(500) + SGD hinge, 1 pass", "seconds": s, "test_accuracy": acc,
                     "support_size": 500, "time_ratio_to_ours": s / our_seconds})
    except ImportError:
        print("scikit-learn not installed: Nystroem row skipped", file=sys.stderr)
    return rows


def reference_ratios(data):
    from tests import reference
    X = data.take(np.arange(1000)).to_dense(123)
    y = data.labels[:1000]
    k = reference.make_kernel("rbf", GAMMA)
    rows = []
    for algo, run in (("perceptron", lambda: reference.perceptron(X, y, k)),
                      ("projectron++", lambda: reference.projectron(X, y, k, 0.31623, plusplus=True))):
        params = {"eta": 0.31623} if algo != "perceptron" else {}
        t0 = time.perf_counter()
        run()
        ref_s = time.perf_counter() - t0
        ours_s, _ = loop_only(algo, params, data.take(np.arange(1000)))
        rows.append({"reference": algo, "examples": 1000, "reference_seconds": ref_s, "our_seconds": ours_s,
                     "speedup": ref_s / ours_s})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--json", default=os.path.join(HERE, "results.json"))
    args = ap.parse_args()
    data = read_all(args.train)
    test = read_all(args.test)
    results = {"ours": [], "peers": [], "reference": []}
    print(f"{'algorithm':20s} {'setting':12s} {'e2e ex/s':>9s} {'loop ex/s':>10s} {'online err':>10s} "
          f"{'|S|':>6s} {'RSS MiB':>8s} {'test acc':>8s}")
    with tempfile.TemporaryDirectory() as tmp:
        for algo in sorted(registry.load_all()):
            if registry.get(algo).multiclass:  # a binary benchmark; repro/pegasos_letter.py measures these
                continue
            for params in SETTINGS.get(algo, [{}]):
                e2e, summary, rss = end_to_end(algo, params, args.train, os.path.join(tmp, "m.model"))
                loop_s, learner = loop_only(algo, params, data)
                acc = float(np.mean(np.where(learner.decision_function(test) > 0, 1.0, -1.0) == test.labels))
                row = {"algorithm": algo, "params": params, "end_to_end_examples_per_s": len(data) / e2e,
                       "loop_examples_per_s": len(data) / loop_s, "online_mistake_rate": summary["online_mistake_rate"],
                       "support_size": summary["support_size"], "peak_rss_mib": rss, "test_accuracy": acc,
                       "end_to_end_seconds": e2e, "loop_seconds": loop_s}
                results["ours"].append(row)
                setting = ",".join(f"{k}={v}" for k, v in params.items()) or "-"
                print(f"{algo:20s} {setting:12s} {row['end_to_end_examples_per_s']:9.0f} "
                      f"{row['loop_examples_per_s']:10.0f} {100 * row['online_mistake_rate']:9.2f}% "
                      f"{row['support_size']:6d} {rss:8.0f} {100 * acc:7.2f}%", flush=True)
    ours = next(r for r in results["ours"] if r["algorithm"] == "projectron++")
    results["peers"] = peers(args.train, args.test, ours["end_to_end_seconds"])
    for p in results["peers"]:
        print(f"{p['peer']:36s} {p['seconds']:7.2f} s  test acc {100 * p['test_accuracy']:.2f}%  "
              f"|S| {p['support_size']}  time ÷ our projectron++ end to end: {p['time_ratio_to_ours']:.1f}×")
    results["reference"] = reference_ratios(data)
    for r in results["reference"]:
        print(f"reference {r['reference']:14s} on 1,000 examples: {r['reference_seconds']:.2f} s vs "
              f"{r['our_seconds'] * 1000:.1f} ms ours ({r['speedup']:.0f}×)")
    with open(args.json, "w") as f:
        json.dump(results, f, indent=1)
    print(f"written {args.json}")


if __name__ == "__main__":
    main()
