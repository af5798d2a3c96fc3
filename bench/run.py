"""Benchmark: every registered algorithm on a9a (rbf γ = 0.04) beside LIBSVM and scikit-learn.

    pip install libsvm-official scikit-learn          # the peers (optional; rows are skipped without them)
    python bench/run.py [TRAIN TEST (default sample_data/a9a sample_data/a9a.t)] [--json bench/results.json]
    python bench/run.py --quick ...              # bounded learners at B = 300, RBP reference on 5,000 examples
    python bench/run.py --algorithms rbp,projectron++ ...   # a subset
    python bench/run.py --targets ...            # only the accuracy targets' rows beside the peers (minutes)

All times are CPU seconds (user + system; the machine is shared, so wall time measures the
neighbours).  Per run: examples/s end to end (the `budgetlearn train` command in a fresh process, parsing and
saving included) and for the learning loop alone (in process, data already parsed, compilation
excluded by a warm-up), online mistake rate, support size, peak RSS of the command, test accuracy.
Peers in the same run: LIBSVM's C-SVC (C = 1, same kernel) and Nystroem(500) + SGDClassifier(hinge)
by partial_fit in batches of 1,000 (one pass); the reference implementations of tests/reference.py
against our loop and our command on the same examples.  Ratios are peer ÷ ours.

The accuracy targets also get rows for the batch hypotheses of `budgetlearn online-to-batch` (average;
projected-average for learners that evict, so the model keeps its budget), timed two ways: in fresh
processes (that command, then the `eval` command), and in process (the same command called in this
process once its code is loaded, then a test pass: load, parse, score).  The Nystroem + SGD peer is timed
the same two ways (its script in a fresh process; its pipeline in this process), and the ≤ 500-SV target
compares like with like.  The Projectron++ target counts the better of its last and averaged hypotheses
and prints which one it was.

The compute floor of every run (bench/floor.py: kernel multiply-adds and exps plus the algorithm's
own update work, priced at the throughput of tight compiled loops measured in the same run) gives
the column loop ÷ floor; e2e ÷ floor sets the command's CPU seconds (start-up, parsing, learning,
writing) against that floor plus reading the file's bytes (bench/floor.py's `read_floor`).  The
issue's targets are checked at the end, each with its figure.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # for tests.reference
sys.path.insert(0, HERE)

import floor  # noqa: E402  (bench/floor.py)
from peers import installed_bytecode  # noqa: E402
from budgetcli.learning import algorithms  # noqa: E402
from budgetcli.run import pipeline  # noqa: E402
from budgetcli.base import registry  # noqa: E402
from budgetcli.io.libsvm import read_all  # noqa: E402
from budgetcli.numerics.kernels import Kernel  # noqa: E402
from budgetcli.model.model import Model  # noqa: E402
from repro.common import dataset  # noqa: E402

GAMMA = 0.04
BUDGETS = (100, 300, 800)
BUDGETED = ("rbp", "lbp", "forgetron", "budget-perceptron", "tighter-perceptron", "rbsop", "lbsop", "ahpatron")
BOUNDED = BUDGETED + ("projectron", "projectron++", "projectron-alma2")  # the support set stays bounded


def settings(budgets) -> dict:
    """algorithm -> list of parameter dicts (η of the Projectrons chosen for ~800 support vectors).

    Unbounded SOP is left out: it keeps (aI + K)⁻¹ over every mistake (~6,000² on a9a, O(m²) memory
    and time per mistake); rbsop/lbsop measure the same loop on a budget."""
    return {
        "perceptron": [{}],
        "pa-i": [{}],
        "spa": [{}],
        "alma2": [{}],
        "projectron": [{"eta": 0.31623}],
        "projectron++": [{"eta": 0.31623}],
        "projectron-alma2": [{"eta": 0.005}],
        **{a: [{"budget": b} for b in budgets] for a in BUDGETED},
    }


# The two accuracy targets are about hypotheses a user can take away: besides the last online
# one, the batch hypotheses of `online-to-batch` (average; projected-average for learners that evict, so
# the model keeps its budget).  η = 0.31623 gives Projectron++ ~800 SVs on a9a, η = ETA_SMALL ~450.
ETA_SMALL = 0.38
BATCH_CANDIDATES = (
    ("projectron++", {"eta": 0.31623}),
    ("projectron++", {"eta": ETA_SMALL}),
    ("projectron-alma2", {"eta": 0.005}),
    *((a, {"budget": b}) for a in ("rbp", "lbp", "forgetron") for b in (300, 500)),
)


def batch_method(algo) -> str:
    return "projected-average" if registry.get(algo).evicts else "average"


RSS_WRAPPER = (
    "import resource, sys\nfrom budgetcli.entry import main\n"
    "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
)


def flags(params: dict) -> list[str]:
    names = {"eta": "--eta", "budget": "--budget"}
    return [x for k, v in params.items() for x in (names[k], str(v))]


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cli_run(args):
    """CPU seconds of `budgetlearn ARGS` in a fresh process (start-up, parsing, saving included), its
    stdout and its peak RSS in MiB."""
    c0 = child_cpu()
    p = subprocess.run([sys.executable, "-c", RSS_WRAPPER, *args], capture_output=True, text=True, check=True)
    seconds = child_cpu() - c0
    return seconds, p.stdout, int(p.stderr.strip().splitlines()[-1]) / 1024  # MiB


def in_process(args):
    """CPU seconds and stdout of `budgetlearn ARGS` called in this process: after a first call, the imports
    are done and the compiled code is loaded, so this is the command's own work, measured as the Nystroem +
    SGD peer's in-process time is."""
    from budgetcli.entry import main as cli_main

    out = io.StringIO()
    t0 = time.process_time()
    with contextlib.redirect_stdout(out):
        cli_main(args, standalone_mode=False)
    return time.process_time() - t0, out.getvalue()


def training_args(algo, params, train, out, method=None):
    """The arguments of the `train` command (or `online-to-batch --method METHOD`) with a JSON summary."""
    command = ["train"] if method is None else ["online-to-batch", "--method", method]
    return [*command, "-a", algo, "--gamma", str(GAMMA), "-q", "--json", *flags(params), train, "-o", out]


def end_to_end(algo, params, train, out, method=None):
    """CPU seconds of the `train` command (or `online-to-batch --method METHOD`) in a fresh process, its
    summary and peak RSS in MiB."""
    seconds, stdout, rss = cli_run(training_args(algo, params, train, out, method))
    return seconds, json.loads(stdout), rss


def test_pass(model_path, test) -> float:
    """Test accuracy of a saved binary model: load it, parse the test file, score (what the Nystroem + SGD
    peer's time includes after training; in process, as the peer is)."""
    model = Model.load(model_path)
    right = total = 0
    for chunk, f in pipeline.scores(model, test):
        right += int(np.sum(np.where(f > 0, model.labels.positive, model.labels.negative) == chunk.labels))
        total += len(f)
    return right / total


def batch_row(algo, params, method, train, test, tmp):
    """The hypothesis `online-to-batch --method METHOD` writes, end to end: the command's CPU seconds
    (after a warm-up of the same command on 200 lines, so on-disk compile caches are warm, as a user's are),
    then its test accuracy by the `eval` command in a fresh process and by an in-process test pass.
    Training and testing are timed both ways, to compare like with like with the Nystroem + SGD peer:
    fresh processes (the online-to-batch command, then the eval command) and in process (the same
    online-to-batch command called in this process, then the test pass)."""
    out = os.path.join(tmp, "batch.model")
    end_to_end(algo, params, prefix_file(train, 200, os.path.join(tmp, "warm.txt")), out, method)
    train_s, summary, rss = end_to_end(algo, params, train, out, method)
    eval_s, stdout, _ = cli_run(["eval", "--json", out, test])
    acc = json.loads(stdout)["accuracy"]
    args = training_args(algo, params, train, out, method)  # the command end_to_end ran
    in_process(args)  # loads the compiled code in this process
    train_in_s, stdout = in_process(args)
    assert json.loads(stdout)["mistakes"] == summary["mistakes"], "the in-process run must be the same run"
    test_pass(out, test)  # compiles the scorer in this process
    t0 = time.process_time()
    assert test_pass(out, test) == acc, "eval and the test pass must agree"
    test_s = time.process_time() - t0
    return {
        "algorithm": algo,
        "params": params,
        "hypothesis": method,
        "end_to_end_seconds": train_s,
        "end_to_end_examples_per_s": summary["examples"] / train_s,
        "eval_command_seconds": eval_s,
        "test_pass_seconds": test_s,
        "train_and_test_seconds": train_s + test_s,
        "fresh_processes_seconds": train_s + eval_s,
        "in_process_train_seconds": train_in_s,
        "in_process_seconds": train_in_s + test_s,
        "online_mistake_rate": summary["online_mistake_rate"],
        "online_support_size": summary["online_support_size"],
        "support_size": summary["support_size"],
        "peak_rss_mib": rss,
        "test_accuracy": acc,
    }


def prefix_file(src, n, path):
    """The first n lines of src, written to path."""
    with open(src, "rb") as f, open(path, "wb") as out:
        for _ in range(n):
            out.write(f.readline())
    return path


def loop_only(algo, params, data):
    cls = registry.get(algo)
    cls(Kernel("rbf", GAMMA), **params).learn(data.take(np.arange(200)), data.labels[:200])  # compile
    learner = cls(Kernel("rbf", GAMMA), **params)
    t0 = time.process_time()
    learner.learn(data, data.labels)
    return time.process_time() - t0, learner


NYSTROEM_SGD = """
import sys
import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import SGDClassifier


def nystroem_sgd(train, test, gamma):
    X, y = load_svmlight_file(train, n_features=123)
    Xt, yt = load_svmlight_file(test, n_features=123)
    ny = Nystroem(gamma=gamma, n_components=500, random_state=0).fit(X[:500])
    clf = SGDClassifier(loss="hinge", random_state=0)
    for a in range(0, X.shape[0], 1000):
        clf.partial_fit(ny.transform(X[a:a + 1000]), y[a:a + 1000], classes=[-1.0, 1.0])
    return float(np.mean(clf.predict(ny.transform(Xt)) == yt))


if __name__ == "__main__":
    print(nystroem_sgd(sys.argv[1], sys.argv[2], float(sys.argv[3])))
"""  # load, train, test: the peer's whole pipeline, run in this process and as a script in a fresh one


def peers(train, test, our_seconds):
    rows = []
    try:
        from libsvm.svmutil import svm_predict, svm_read_problem, svm_train

        y, x = svm_read_problem(train)
        yt, xt = svm_read_problem(test)
        t0 = time.process_time()
        m = svm_train(y, x, f"-t 2 -g {GAMMA} -c 1 -q")
        train_s = time.process_time() - t0
        _, (acc, _, _), _ = svm_predict(yt, xt, m, "-q")
        s = time.process_time() - t0
        rows.append(
            {
                "peer": "LIBSVM C-SVC (C=1)",
                "seconds": s,
                "train_seconds": train_s,
                "test_accuracy": acc / 100,
                "support_size": m.get_nr_sv(),
                "time_ratio_to_ours": s / our_seconds,
            }
        )
    except ImportError:
        print("libsvm-official not installed: LIBSVM row skipped", file=sys.stderr)
    try:
        pipeline_ = {}
        exec(NYSTROEM_SGD, pipeline_)  # its imports, outside the timed part
        t0 = time.process_time()  # CPU of all threads (BLAS may use both cores)
        acc = pipeline_["nystroem_sgd"](train, test, GAMMA)
        s = time.process_time() - t0
        # the same as a user's script: a fresh process, interpreter start-up and imports included, as our rows
        c0 = child_cpu()
        subprocess.run([sys.executable, "-c", NYSTROEM_SGD, train, test, str(GAMMA)], check=True, capture_output=True)
        fresh_s = child_cpu() - c0
        rows.append(
            {
                "peer": "Nystroem(500) + SGD hinge, 1 pass",
                "seconds": s,
                "fresh_process_seconds": fresh_s,
                "test_accuracy": acc,
                "support_size": 500,
                "time_ratio_to_ours": s / our_seconds,
            }
        )
    except ImportError:
        print("scikit-learn not installed: Nystroem row skipped", file=sys.stderr)
    return rows


def reference_ratios(data, train_path, n_rbp, tmp):
    """Reference implementations against ours on the same examples: perceptron and projectron++ on the
    first 1,000 and 300 (loop against loop); RBP B = 300 on the first n_rbp (ours: loop, and the command end to end
    on a file of those lines)."""
    from tests import reference

    k = reference.make_kernel("rbf", GAMMA)
    rows = []
    for algo, n_ref in (("perceptron", 1000), ("projectron++", 300)):  # the reference solves K afresh: O(|S|³)
        X = data.take(np.arange(n_ref)).to_dense(123)
        y = data.labels[:n_ref]
        run = (
            (lambda: reference.perceptron(X, y, k))
            if algo == "perceptron"
            else (lambda: reference.projectron(X, y, k, 0.31623, plusplus=True))
        )
        params = {"eta": 0.31623} if algo != "perceptron" else {}
        t0 = time.process_time()
        run()
        ref_s = time.process_time() - t0
        ours_s, _ = loop_only(algo, params, data.take(np.arange(n_ref)))
        rows.append(
            {
                "reference": algo,
                "params": params,
                "examples": n_ref,
                "reference_seconds": ref_s,
                "our_seconds": ours_s,
                "speedup": ref_s / ours_s,
            }
        )
    n = min(n_rbp, len(data))
    part = data.take(np.arange(n))
    t0 = time.process_time()
    ref_tr = reference.rbp_lbp(part.to_dense(123), part.labels, k, 300, "random", seed=0)
    ref_s = time.process_time() - t0
    path = prefix_file(train_path, n, os.path.join(tmp, "prefix.txt")) if n < len(data) else train_path
    e2e, summary, _ = end_to_end("rbp", {"budget": 300}, path, os.path.join(tmp, "rbp.model"))
    loop_s, learner = loop_only("rbp", {"budget": 300}, part)
    assert summary["mistakes"] == int(np.sum(ref_tr.mistakes)), "reference and ours disagree"
    rows.append(
        {
            "reference": "rbp",
            "params": {"budget": 300},
            "examples": n,
            "reference_seconds": ref_s,
            "our_seconds": loop_s,
            "speedup": ref_s / loop_s,
            "our_end_to_end_seconds": e2e,
            "end_to_end_speedup": ref_s / e2e,
        }
    )
    return rows


def main():
    installed_bytecode()  # fresh processes are timed as an installed copy runs (bench/peers.py)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train", nargs="?", default=str(dataset("a9a/a9a")))
    ap.add_argument("test", nargs="?", default=str(dataset("a9a/a9a.t")))
    ap.add_argument("--json", default=os.path.join(HERE, "results.json"))
    ap.add_argument(
        "--quick",
        action="store_true",
        help="the bounded learners only, B = 300, and the RBP reference on the first 5,000 examples",
    )
    ap.add_argument("--algorithms", default=None, help="comma-separated subset of the algorithms")
    ap.add_argument("--no-peers", action="store_true", help="skip LIBSVM and Nystroem + SGD")
    ap.add_argument(
        "--targets",
        action="store_true",
        help="only the accuracy targets: the online-to-batch rows (and Projectron++'s last hypothesis "
        "through the same command) beside the peers; no per-algorithm table, no references",
    )
    args = ap.parse_args()
    budgets = (300,) if args.quick else BUDGETS
    table = settings(budgets)
    if args.targets:
        names = []
    elif args.algorithms is not None:
        names = args.algorithms.split(",")
    else:  # the unbounded learners grow thousands of support vectors on a9a: the long part of a full run
        names = sorted(a for a in algorithms.load_all() if not args.quick or a in BOUNDED)
    for a in names:
        registry.get(a)  # unknown names fail here, before the long run
    data = read_all(args.train)
    test = read_all(args.test)
    rates = floor.throughput()
    results = {
        "machine": machine(),
        "quick": args.quick,
        "targets_only": args.targets,
        "throughput_start": rates,
        "ours": [],
        "batch": [],
        "peers": [],
        "reference": [],
    }
    print(
        f"tight compiled loops: {rates['madd_per_s'] / 1e6:.0f} M multiply-adds/s sequential "
        f"({rates['madd_per_s_4_accumulators'] / 1e6:.0f} M with 4 accumulators), "
        f"{rates['exp_per_s'] / 1e6:.0f} M exp/s",
        flush=True,
    )
    if names:
        print(
            f"{'algorithm':18s} {'setting':11s} {'e2e ex/s':>9s} {'loop ex/s':>10s} {'online err':>10s} "
            f"{'|S|':>5s} {'RSS MiB':>7s} {'test acc':>8s} {'floor s':>8s} {'loop/floor':>10s} {'e2e/floor':>9s}"
        )
        read_s = floor.read_floor(args.train)
        print(f"(e2e/floor: the command's CPU seconds over the floor plus {read_s:.3f} s of reading the file's bytes)")
    with tempfile.TemporaryDirectory() as tmp:
        for algo in names:
            if registry.get(algo).multiclass:  # a binary benchmark; repro/pegasos_letter.py measures these
                continue
            for params in table.get(algo, [{}]):
                e2e, summary, rss = end_to_end(algo, params, args.train, os.path.join(tmp, "m.model"))
                rates = floor.throughput()  # next to the loop it prices: the neighbours' load drifts
                loop_s, learner = loop_only(algo, params, data)
                t0 = time.process_time()
                acc = float(np.mean(np.where(learner.decision_function(test) > 0, 1.0, -1.0) == test.labels))
                test_s = time.process_time() - t0
                work = floor.replay(algo, params, data, GAMMA)
                assert work["mistakes"] == summary["mistakes"], "the replay must be the same run"
                floor_s = floor.floor_seconds(work, rates)
                row = {
                    "algorithm": algo,
                    "params": params,
                    "hypothesis": "last",
                    "end_to_end_examples_per_s": len(data) / e2e,
                    "loop_examples_per_s": len(data) / loop_s,
                    "online_mistake_rate": summary["online_mistake_rate"],
                    "support_size": summary["support_size"],
                    "peak_rss_mib": rss,
                    "test_accuracy": acc,
                    "end_to_end_seconds": e2e,
                    "loop_seconds": loop_s,
                    "test_pass_seconds": test_s,
                    "train_and_test_seconds": e2e + test_s,
                    "floor_work": work,
                    "floor_seconds": floor_s,
                    "loop_over_floor": loop_s / floor_s,
                    "read_floor_seconds": read_s,
                    "end_to_end_over_floor": e2e / (floor_s + read_s),
                    "throughput": rates,
                }
                results["ours"].append(row)
                setting = ",".join(f"{k}={v}" for k, v in params.items()) or "-"
                print(
                    f"{algo:18s} {setting:11s} {row['end_to_end_examples_per_s']:9.0f} "
                    f"{row['loop_examples_per_s']:10.0f} {100 * row['online_mistake_rate']:9.2f}% "
                    f"{row['support_size']:5d} {rss:7.0f} {100 * acc:7.2f}% {floor_s:8.3f} "
                    f"{row['loop_over_floor']:10.2f} {row['end_to_end_over_floor']:9.2f}",
                    flush=True,
                )
        chosen = args.algorithms.split(",") if args.algorithms is not None else [a for a, _ in BATCH_CANDIDATES]
        batch = [(a, p, batch_method(a)) for a, p in BATCH_CANDIDATES if a in chosen]
        if args.targets:  # the last hypothesis through the same command, for the comparison in one run
            batch.insert(0, ("projectron++", {"eta": 0.31623}, "last"))
        if batch:
            print(
                f"\n{'algorithm':18s} {'setting':11s} {'hypothesis':17s} {'e2e s':>6s} {'e2e ex/s':>9s} "
                f"{'eval s':>6s} {'in-proc s':>9s} {'online err':>10s} {'online |S|':>10s} {'|S|':>5s} "
                f"{'RSS MiB':>7s} {'test acc':>8s}"
            )
        for algo, params, method in batch:
            row = batch_row(algo, params, method, args.train, args.test, tmp)
            results["batch"].append(row)
            setting = ",".join(f"{k}={v}" for k, v in params.items())
            print(
                f"{algo:18s} {setting:11s} {method:17s} {row['end_to_end_seconds']:6.2f} "
                f"{row['end_to_end_examples_per_s']:9.0f} {row['eval_command_seconds']:6.2f} "
                f"{row['in_process_seconds']:9.2f} "
                f"{100 * row['online_mistake_rate']:9.2f}% {row['online_support_size']:10d} {row['support_size']:5d} "
                f"{row['peak_rss_mib']:7.0f} {100 * row['test_accuracy']:7.2f}%",
                flush=True,
            )
        pp = next((r for r in results["ours"] + results["batch"] if r["algorithm"] == "projectron++"), None)
        if not args.no_peers:
            results["peers"] = peers(args.train, args.test, pp["end_to_end_seconds"] if pp else float("nan"))
        for p in results["peers"]:
            fresh = f" (a fresh process: {p['fresh_process_seconds']:.2f} s)" if "fresh_process_seconds" in p else ""
            print(
                f"{p['peer']:36s} {p['seconds']:7.2f} s{fresh}  test acc {100 * p['test_accuracy']:.2f}%  "
                f"|S| {p['support_size']}  time ÷ our projectron++ end to end: {p['time_ratio_to_ours']:.1f}×",
                flush=True,
            )
        if not args.targets:
            results["reference"] = reference_ratios(data, args.train, 5000 if args.quick else len(data), tmp)
    for r in results["reference"]:
        extra = (
            f"; our command end to end {r['our_end_to_end_seconds']:.2f} s ({r['end_to_end_speedup']:.1f}×)"
            if "our_end_to_end_seconds" in r
            else ""
        )
        print(
            f"reference {r['reference']:13s} on {r['examples']:,} examples: {r['reference_seconds']:.2f} s vs "
            f"our loop {r['our_seconds'] * 1000:.1f} ms ({r['speedup']:.0f}×){extra}"
        )
    results["throughput_end"] = floor.throughput()
    results["targets"] = targets(results)
    for t in results["targets"]:
        print(
            f"target {'MET    ' if t['met'] else 'NOT MET' if t['met'] is not None else 'n/a    '} "
            f"{t['target']}: {t['figure']}"
        )
    text = json.dumps(results, indent=1, default=lambda o: o.item())  # numpy scalars; before opening the file
    with open(args.json, "w") as f:
        f.write(text)
    print(f"written {args.json}")


def machine() -> dict:
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": model, "cores": os.cpu_count(), "load_average_1min": os.getloadavg()[0]}


def targets(results) -> list[dict]:
    """The issue's targets that this run measures, each with its figure; met is None when not measured."""
    ours, out = results["ours"], []
    bounded = [r for r in ours if r["algorithm"] in BOUNDED]
    if bounded:
        worst = max(bounded, key=lambda r: r["loop_over_floor"])
        out.append(
            {
                "target": "every bounded learner's loop ≤ 2× its compute floor",
                "met": bool(worst["loop_over_floor"] <= 2.0),
                "figure": f"worst {worst['algorithm']} {worst['params']}: {worst['loop_over_floor']:.2f}×; "
                + ", ".join(
                    f"{r['algorithm']}{list(r['params'].values()) or ''} {r['loop_over_floor']:.2f}" for r in bounded
                ),
            }
        )
    rbp = next((r for r in results["reference"] if r["reference"] == "rbp"), None)
    if rbp:
        out.append(
            {
                "target": "end to end RBP B = 300 ≥ 5× faster than the per-example reference",
                "met": bool(rbp["end_to_end_speedup"] >= 5.0),
                "figure": f"{rbp['end_to_end_speedup']:.1f}× on {rbp['examples']:,} examples "
                f"({rbp['reference_seconds']:.1f} s vs {rbp['our_end_to_end_seconds']:.2f} s)",
            }
        )
    libsvm = next((p for p in results["peers"] if p["peer"].startswith("LIBSVM")), None)
    # the online rows' last hypotheses and the online-to-batch rows: a target counts the better one
    hypotheses = ours + results.get("batch", [])
    pp = [r for r in hypotheses if r["algorithm"] == "projectron++" and r["params"] == {"eta": 0.31623}]
    if libsvm and pp:
        best = max(pp, key=lambda r: r["test_accuracy"])
        speed = libsvm["train_seconds"] / best["end_to_end_seconds"]
        gap = 100 * (libsvm["test_accuracy"] - best["test_accuracy"])
        out.append(
            {
                "target": "Projectron++ (~800 SVs) ≥ 20× faster than LIBSVM training, accuracy within 2 points",
                "met": bool(speed >= 20 and gap <= 2),
                "hypothesis": best["hypothesis"],
                "figure": f"{best['hypothesis']} hypothesis: {speed:.1f}× ({libsvm['train_seconds']:.1f} s vs "
                f"{best['end_to_end_seconds']:.1f} s, {best['support_size']} SVs), accuracy "
                f"{100 * best['test_accuracy']:.2f}% vs {100 * libsvm['test_accuracy']:.2f}%"
                + "".join(f"; {r['hypothesis']} {100 * r['test_accuracy']:.2f}%" for r in pp if r is not best),
            }
        )
    nys = next((p for p in results["peers"] if p["peer"].startswith("Nystroem")), None)
    # like with like: our two commands in fresh processes against the peer's script in a fresh process, and
    # our command called in process (then the test pass) against the peer's pipeline in process
    small = [r for r in results.get("batch", []) if r["algorithm"] in BOUNDED and r["support_size"] <= 500]
    if nys and small:
        best = max(small, key=lambda r: r["test_accuracy"])
        fresh, inproc = best["fresh_processes_seconds"], best["in_process_seconds"]
        out.append(
            {
                "target": "most accurate bounded learner with ≤ 500 SVs: ≥ 84.5% on the test set in less time "
                "than Nystroem + SGD",
                "met": bool(
                    best["test_accuracy"] >= 0.845 and fresh < nys["fresh_process_seconds"] and inproc < nys["seconds"]
                ),
                "hypothesis": best["hypothesis"],
                "figure": f"{best['algorithm']} {best['params']} {best['hypothesis']} hypothesis, "
                f"{best['support_size']} SVs, {100 * best['test_accuracy']:.2f}% vs Nystroem + SGD "
                f"{100 * nys['test_accuracy']:.2f}%; fresh processes {fresh:.2f} s (online-to-batch "
                f"{best['end_to_end_seconds']:.2f} s + eval {best['eval_command_seconds']:.2f} s) vs "
                f"{nys['fresh_process_seconds']:.2f} s (its script); in process {inproc:.2f} s vs "
                f"{nys['seconds']:.2f} s (load, train, test)",
            }
        )
    return out


if __name__ == "__main__":
    main()
