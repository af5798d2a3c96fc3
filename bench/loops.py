"""Learning loops of this checkout against another checkout of the project (issue #18's "no loop slower
by more than 3%, numba's first-call time included"), for every registered algorithm.

    git worktree add ../base REV                 # the baseline: any revision, in a directory of its own
    python bench/loops.py TRAIN_BINARY TRAIN_MULTICLASS --baseline ../base [--rounds 5]
           [--algorithms a,b] [--examples N] [--json FILE]

TRAIN_BINARY (e.g. a9a) feeds the binary algorithms, TRAIN_MULTICLASS (e.g. letter.scale) the multiclass
ones; rbf kernel, γ = 0.04 on the binary data and 0.5 on the multiclass data, seed 1, the settings of
SETTINGS (B = 300 wherever an algorithm takes a budget).  Every measurement is a fresh process whose cwd
and PYTHONPATH are the checkout measured, so `import budgetcli` is that checkout's code (printed once per
checkout; a child that imports any other copy stops).  A child reads the data, encodes the labels, builds
the learner and times two calls of `learn`:
- first: the first 1,000 examples, a fresh process's first call, so it includes numba's loading of the
  cached compiled code and its dispatch (a throwaway process per checkout and algorithm fills the cache
  beforehand, so no compilation is timed; a child that compiles anyway is flagged).  numba's one-time
  start-up in a process is paid before, by the reader's compiled parser, as in `budgetlearn train`;
- loop: the remaining examples (up to --examples in all), the loop's steady state.
The child also times `import budgetcli` + `algorithms.load_all()` (printed below the table).
CPU time (time.process_time) and wall time of each.  Per round and algorithm the baseline and the current
checkout run alternately, the one going first alternating.  The table shows per call the medians over the
rounds, their ratio current ÷ baseline, the ratio of the two minima (best: on a shared machine the run
least disturbed by neighbours), the range of the rounds ((max − min) ÷ median, the larger of the two
checkouts'), and the ratios of the median wall times.  A row whose median CPU time (first call or loop) is
more than 3% above the baseline's is flagged SLOWER.  The online mistakes, the support size and a digest
of the decision values on the first 1,000 examples must be identical in both checkouts (MISMATCH
otherwise).  Exit status 1 when a row is SLOWER, MISMATCHed, compiled while timed or failed.  The load
average is printed before the warm-up and after the last round.

Both checkouts holding the same code measure the noise floor against which 3% is judged.

    python bench/loops.py --task-cost [FILE] [--budgets 100,500] [--examples 4000] [--rounds 5]

`--task-cost` is issue #48's per-example cost of the regression learners against the classifiers at the
same budget, in this checkout.  The regression stream is FILE (LIBSVM, real targets) or, without it,
`budgetlearn generate friedman1 -n EXAMPLES --seed 1` (10 features); the classification stream is the
same inputs labelled +1 where the target is above its median, −1 elsewhere (same dimension, balanced
classes).  rbf kernel, γ = 1/#features, seed 1; at each B every learner that takes a budget gets B, fogd
and fogd-regression get D = B features (qklms's -B caps its codebook; its centres printed).  One
process learns everything, interleaved: after a warm-up (numba compiles and loads there), each round
learns the whole stream with a fresh learner of each regression learner and of each classifier, the
order reversed every other round; CPU time (time.process_time, one OpenBLAS thread) per example.  Each regression
learner is set against its counterpart (COUNTERPART: the same algorithm on the other task; rbp, the budgeted
kernel Perceptron, for the filters, which have none) and against rbp and rbsop (the budgeted
second-order Perceptron, O(B²) a mistake like the KRLS family) at the same B: the ratio of the medians
over the rounds and of the minima (best).  The target: ≤ 2 at B = 100.  The load average is printed
before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

FIRST = 1000  # examples of the timed first call
GAMMA = {False: 0.04, True: 0.5}  # rbf γ of the binary (a9a) and the multiclass (letter) data
BUDGET = 300  # B of every algorithm that takes a budget, unless SETTINGS says otherwise
# Parameters beyond B; bounded where the algorithm allows, so that a round stays short.
SETTINGS = {
    "projectron": {"eta": 0.31623},  # ~800 support vectors on a9a, as in bench/run.py (η = 0.1: ~3,500, 20-40 s)
    "projectron++": {"eta": 0.31623},
    "projectron-alma2": {"eta": 0.005},  # ~420 support vectors (η = 0.1 keeps 8)
    "mc-projectron++": {"eta": 0.5},
    "tighter-perceptron": {"eval_set": "flip"},
    "bpegasos": {"budget": 100, "maintenance": "merge"},
}
# Unbounded learners whose work grows faster than the support set: examples they learn at most.
MAX_EXAMPLES = {"sop": 8000}
SLOWER = 1.03
# --task-cost: each regression learner's classification counterpart (the rest: rbp), and the classifiers
# every regression learner is also set against.
COUNTERPART = {"fogd-regression": "fogd", "nogd-regression": "nogd", "bogd-regression": "bogd"}
REFERENCES = ("rbp", "rbsop")
COST_TARGET = 2.0  # issue #48: a regression learner at B = 100 costs at most twice a classifier at B = 100

COST_CHILD = r"""
import json, sys, time
import numpy as np
from budgetcli.learning import algorithms
from budgetcli.learning.targets import RealTargets
from budgetcli.io.libsvm import read_all
from budgetcli.numerics.kernels import Kernel
spec = json.loads(sys.argv[1])
registered = algorithms.load_all()
data = read_all(spec["data"])
data = data.take(range(min(len(data), spec["examples"])))
y = RealTargets().encode(data)
targets = {"regression": y, "classification": np.where(y > np.median(y), 1.0, -1.0)}
gamma = 1.0 / data.n_features

def make(name, budget):
    cls = registered[name]
    params = {p.name for p in cls.params}
    size = {"budget": budget} if "budget" in params else {"components": budget} if "components" in params else {}
    return cls(Kernel("rbf", gamma), seed=1, **size)

def learn(name, budget):
    learner = make(name, budget)
    task = "regression" if "regression" in registered[name].tasks else "classification"
    c0 = time.process_time()
    learner.learn(data, targets[task])
    return time.process_time() - c0, len(getattr(learner, "support", ()) or ())

names = spec["regression"] + spec["classification"]
runs = {str(b): {n: [] for n in names} for b in spec["budgets"]}
support = {str(b): {} for b in spec["budgets"]}
for b in spec["budgets"]:  # warm-up: numba compiles and loads every loop here, untimed
    for n in names:
        learn(n, b)
for r in range(spec["rounds"]):
    for b in spec["budgets"]:
        order = names if r % 2 == 0 else names[::-1]
        for n in order:
            t, s = learn(n, b)
            runs[str(b)][n].append(t / len(data))
            support[str(b)][n] = s
print(json.dumps({"examples": len(data), "features": data.n_features, "gamma": gamma, "runs": runs,
                  "support": support}))
"""

CHILD = r"""
import hashlib, json, os, sys, time
spec = json.loads(sys.argv[1])
c0, w0 = time.process_time(), time.perf_counter()
import budgetcli
here = os.path.realpath(os.path.join(os.path.dirname(budgetcli.__file__), os.pardir))
if here != os.path.realpath(os.getcwd()):
    sys.exit(f"imported budgetcli from {budgetcli.__file__}, not from the checkout {os.getcwd()}")
from budgetcli.learning import algorithms
from budgetcli.base import registry
algorithms.load_all()
imported = (time.process_time() - c0, time.perf_counter() - w0)
if spec["mode"] == "list":
    algos = {name: {"multiclass": bool(getattr(cls, "multiclass", False)), "params": [p.name for p in cls.params],
                    "tasks": list(getattr(cls, "tasks", ("classification",)))}
             for name, cls in algorithms.load_all().items()}
    print(json.dumps({"file": budgetcli.__file__, "algorithms": algos}))
    sys.exit()
import numpy as np
from numba.core import event
from budgetcli.learning import labels
from budgetcli.io.libsvm import read_all
from budgetcli.numerics.kernels import Kernel
cls = registry.get(spec["algorithm"])
data = read_all(spec["data"])
y = (labels.MulticlassLabels() if cls.multiclass else labels.BinaryLabels()).encode(data)
n = min(len(data), spec["examples"])
first, rest = data.take(range(spec["first"])), data.take(range(spec["first"], n))
learner = cls(Kernel("rbf", spec["gamma"]), seed=1, **spec["params"])
times = []
with event.install_recorder("numba:compile") as compiled:
    for chunk, labels_ in ((first, y[:spec["first"]]), (rest, y[spec["first"]:n])):
        c0, w0 = time.process_time(), time.perf_counter()
        learner.learn(chunk, labels_)
        times.append((time.process_time() - c0, time.perf_counter() - w0))
scores = np.ascontiguousarray(learner.decision_function(first), np.float64)
print(json.dumps({"import_cpu": imported[0], "import_wall": imported[1], "first_cpu": times[0][0],
                  "first_wall": times[0][1], "loop_cpu": times[1][0], "loop_wall": times[1][1], "examples": n,
                  "mistakes": learner.counter("mistakes"), "support": len(learner.support),
                  "scores": hashlib.sha256(scores.tobytes()).hexdigest()[:12], "compiled": len(compiled.buffer)}))
"""


def child(checkout: str, spec: dict) -> dict:
    """Run CHILD in a fresh process on `checkout`'s code; its JSON answer, or {"error": last stderr line}."""
    env = {**os.environ, "PYTHONPATH": checkout}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(spec)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode:
        lines = proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"]
        return {"error": lines[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def revision(checkout: str) -> str:
    proc = subprocess.run(
        ["git", "-C", checkout, "describe", "--always", "--dirty"], capture_output=True, text=True, check=False
    )
    return proc.stdout.strip() or "?"


def settings(name: str, info: dict) -> dict:
    params = {"budget": BUDGET} if "budget" in info["params"] else {}
    return {**params, **SETTINGS.get(name, {})}


def median(runs: list, key: str) -> float:
    return statistics.median(r[key] for r in runs)


def cells(base: list, cur: list, key: str, unit: float, fmt: str) -> str:
    """Medians of both checkouts, their ratio current ÷ baseline, the ratio of their minima (best), and the
    larger of the two checkouts' (max − min) ÷ median over the rounds."""
    times = [[r[key] for r in rs] for rs in (base, cur)]
    med = [statistics.median(t) for t in times]
    spread = max(100 * (max(t) - min(t)) / m for t, m in zip(times, med))
    return (
        f"{unit * med[0]:{fmt}} {unit * med[1]:{fmt}} {med[1] / med[0]:6.3f} {min(times[1]) / min(times[0]):6.3f}"
        f" {spread:5.1f}%"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train_binary", nargs="?")
    ap.add_argument("train_multiclass", nargs="?")
    ap.add_argument("--baseline", help="checkout to compare with (a directory of `git worktree add`)")
    ap.add_argument(
        "--task-cost",
        nargs="?",
        const="",
        metavar="FILE",
        help="per-example cost of the regression learners against the classifiers at the same budget, on FILE "
        "(default: a generated Friedman #1 stream); no baseline",
    )
    ap.add_argument("--budgets", default="100,500", help="--task-cost: the budgets B (default 100,500)")
    ap.add_argument("--rounds", type=int, default=5, help="measurements per checkout and algorithm (default 5)")
    ap.add_argument("--algorithms", help="comma-separated subset (default: every registered algorithm)")
    ap.add_argument("--examples", type=int, default=None, help="examples learnt per run (default: all)")
    ap.add_argument("--json", help="write every measurement to this file")
    args = ap.parse_args()
    if args.rounds < 1 or (args.examples is not None and args.examples <= FIRST):
        ap.error(f"--rounds must be at least 1 and --examples more than {FIRST}")
    if args.task_cost is not None:
        try:
            budgets = [int(b) for b in args.budgets.split(",")]
        except ValueError:
            ap.error(f"--budgets {args.budgets}: not a comma-separated list of whole numbers")
        if min(budgets) < 1:
            ap.error("--budgets: each budget must be at least 1")
        sys.exit(task_cost(args.task_cost, budgets, args.examples or 4000, args.rounds, args.json))
    if not (args.train_binary and args.train_multiclass and args.baseline):
        ap.error("TRAIN_BINARY, TRAIN_MULTICLASS and --baseline are required (without --task-cost)")
    if not os.path.isdir(args.baseline):
        ap.error(f"--baseline {args.baseline}: not a directory")
    checkouts = {
        "baseline": os.path.realpath(args.baseline),
        "current": os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)),
    }
    registered = {}
    for side, path in checkouts.items():
        listing = child(path, {"mode": "list"})
        if "error" in listing:
            sys.exit(f"loops.py: {side} {path}: {listing['error']}")
        registered[side] = listing["algorithms"]
        print(f"{side:8s} {revision(path):12s} budgetcli from {listing['file']}")
    names = sorted(set(registered["baseline"]) | set(registered["current"]))
    if args.algorithms:
        wanted = args.algorithms.split(",")
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            sys.exit(f"loops.py: unknown algorithm {', '.join(unknown)}; registered: {', '.join(names)}")
        names = [n for n in names if n in wanted]

    specs = {}  # algorithm -> the run both checkouts make
    for name in names:
        info = registered["current"].get(name) or registered["baseline"][name]
        mc = info["multiclass"]
        examples = min(args.examples or sys.maxsize, MAX_EXAMPLES.get(name, sys.maxsize))
        data = args.train_multiclass if mc else args.train_binary
        specs[name] = {
            "mode": "run",
            "algorithm": name,
            "data": os.path.abspath(data),
            "gamma": GAMMA[mc],
            "params": settings(name, info),
            "first": FIRST,
            "examples": examples,
        }
    sides = {name: [s for s in checkouts if name in registered[s]] for name in names}

    t0 = time.perf_counter()
    load = [os.getloadavg()]
    for name in names:  # fill numba's cache of each checkout; what these compile is not timed
        for side in sides[name]:
            child(checkouts[side], {**specs[name], "examples": 2 * FIRST})
    runs = {name: {side: [] for side in sides[name]} for name in names}
    for r in range(args.rounds):
        for i, name in enumerate(names):
            order = sides[name] if (r + i) % 2 == 0 else sides[name][::-1]
            for side in order:
                runs[name][side].append(child(checkouts[side], specs[name]))
        load.append(os.getloadavg())
        print(f"round {r + 1}/{args.rounds} done, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    bad = report(names, specs, runs)
    print(
        f"load average (1, 5, 15 min): before {fmt_load(load[0])}, after {fmt_load(load[-1])}; "
        f"{args.rounds} rounds in {time.perf_counter() - t0:.0f} s"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "checkouts": {s: {"path": p, "revision": revision(p)} for s, p in checkouts.items()},
                    "load_average": load,
                    "specs": specs,
                    "runs": runs,
                },
                f,
                indent=1,
            )
    sys.exit(1 if bad else 0)


def task_cost(data: str, budgets: list, examples: int, rounds: int, json_file) -> int:
    """--task-cost: run COST_CHILD in one fresh process of this checkout, print its table; exit status 1
    when a regression learner at B = 100 costs more than COST_TARGET × its counterpart."""
    root = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
    # one BLAS thread: nogd's LAPACK calls leave OpenBLAS's worker threads spinning, and time.process_time
    # charges their CPU to whichever learner of the round comes next
    env = {**os.environ, "PYTHONPATH": root, "OPENBLAS_NUM_THREADS": "1"}
    listing = child(root, {"mode": "list"})
    if "error" in listing:
        sys.exit(f"loops.py: {root}: {listing['error']}")
    print(f"current  {revision(root):12s} budgetcli from {listing['file']}")
    with tempfile.TemporaryDirectory() as tmp:
        if not data:
            data = os.path.join(tmp, "friedman1.txt")
            generate = ["-m", "budgetcli", "generate", "friedman1", "-n", str(examples), "--seed", "1", "-o", data]
            subprocess.run([sys.executable, *generate], env=env, cwd=root, check=True)
            source = f"budgetlearn generate friedman1 -n {examples} --seed 1"
        else:
            source = data
        regression = sorted(n for n, info in listing["algorithms"].items() if "regression" in info["tasks"])
        classification = sorted({COUNTERPART.get(n, REFERENCES[0]) for n in regression} | set(REFERENCES))
        spec = {
            "data": os.path.abspath(data),
            "examples": examples,
            "budgets": budgets,
            "rounds": rounds,
            "regression": regression,
            "classification": classification,
        }
        t0 = time.perf_counter()
        load = [os.getloadavg()]
        proc = subprocess.run(
            [sys.executable, "-c", COST_CHILD, json.dumps(spec)], cwd=root, env=env, capture_output=True, text=True
        )
        load.append(os.getloadavg())
    if proc.returncode:
        sys.exit(f"loops.py: --task-cost: {(proc.stderr.strip().splitlines() or ['exit status'])[-1]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    print(
        f"\nregression: {source} ({out['examples']} examples, {out['features']} features); classification: the"
        f" same inputs, label sign(target − median); rbf γ = {out['gamma']:.4g}; {rounds} rounds, one process,"
        " interleaved"
    )
    refs = " ".join(f"{'÷ ' + r:>13s}" for r in REFERENCES)
    print(
        f"\n{'B':>5s} {'regression':16s} {'µs/ex':>7s} {'|S|':>5s} | {'counterpart':11s} {'µs/ex':>7s} "
        f"{'ratio':>6s} {'best':>6s} | {refs}"
    )
    over = False
    for b in budgets:
        runs, support = out["runs"][str(b)], out["support"][str(b)]
        for n in regression:
            other = COUNTERPART.get(n, REFERENCES[0])
            ratios = []
            for c in (other, *REFERENCES):
                ratios.append((statistics.median(runs[n]) / statistics.median(runs[c]), min(runs[n]) / min(runs[c])))
            over = over or (b == 100 and ratios[0][0] > COST_TARGET)
            print(
                f"{b:5d} {n:16s} {1e6 * statistics.median(runs[n]):7.2f} {support[n]:5d} | {other:11s}"
                f" {1e6 * statistics.median(runs[other]):7.2f} {ratios[0][0]:6.2f} {ratios[0][1]:6.2f} | "
                + " ".join(f"{r:6.2f} ({best:4.2f})" for r, best in ratios[1:])
            )
        print(
            f"{'':5s} classifiers: "
            + ", ".join(f"{c} {1e6 * statistics.median(runs[c]):.2f} µs (|S| {support[c]})" for c in classification)
        )
    print(
        f"CPU µs per example, medians of {rounds} rounds (ratio: medians; best: minima); load average (1, 5, 15 min):"
        f" before {fmt_load(load[0])}, after {fmt_load(load[-1])}; {time.perf_counter() - t0:.0f} s"
    )
    if json_file:
        with open(json_file, "w") as f:
            json.dump({"revision": revision(root), "source": source, "load_average": load, "spec": spec, **out}, f)
    return 1 if over else 0


def fmt_load(load) -> str:
    return " ".join(f"{v:.2f}" for v in load)


def report(names, specs, runs) -> bool:
    """Print the table; True when a row is slower, mismatched, compiled while timed or failed."""
    cols = f"{'base':>7s} {'cur':>7s} {'ratio':>6s} {'best':>6s} {'range':>6s}"
    print(f"\n{'':20s} {'':28s} {'':6s} | {'first call, ms CPU':^37s} | {'loop, s CPU':^37s} | {'wall ratio':^11s} |")
    print(
        f"{'algorithm':20s} {'settings':28s} {'n':>6s} | {cols} | {cols} | {'1st':>5s} {'loop':>5s} |"
        f" {'mistakes':>8s} {'|S|':>6s}"
    )
    bad = False
    for name in names:
        head = f"{name:20s} {' '.join(f'{k}={v}' for k, v in specs[name]['params'].items()) or 'defaults':28s}"
        sides = runs[name]
        failed = [f"{s}: {r['error']}" for s, rs in sides.items() for r in rs if "error" in r]
        if failed:
            print(f"{head} FAILED {failed[0]}")
            bad = True
            continue
        if len(sides) == 1:
            ((side, rs),) = sides.items()
            print(
                f"{head} {rs[0]['examples']:6d} | only in the {side} checkout: first call "
                f"{1e3 * median(rs, 'first_cpu'):.1f} ms, loop {median(rs, 'loop_cpu'):.3f} s CPU"
            )
            continue
        base, cur = sides["baseline"], sides["current"]
        notes = []
        if max(median(cur, k) / median(base, k) for k in ("first_cpu", "loop_cpu")) > SLOWER:
            notes.append("SLOWER")
        outcomes = {(r["mistakes"], r["support"], r["scores"]) for r in base + cur}
        if len(outcomes) > 1:
            notes.append("MISMATCH " + " / ".join(f"{m} mistakes |S| {s} scores {h}" for m, s, h in sorted(outcomes)))
        if any(r["compiled"] for r in base + cur):
            notes.append("compiled while timed")
        bad = bad or bool(notes)
        m, s, _ = next(iter(outcomes))
        wall = " ".join(f"{median(cur, k) / median(base, k):5.2f}" for k in ("first_wall", "loop_wall"))
        print(
            f"{head} {cur[0]['examples']:6d} | {cells(base, cur, 'first_cpu', 1e3, '7.1f')} |"
            f" {cells(base, cur, 'loop_cpu', 1, '7.3f')} | {wall} | {m:8d} {s:6d} {' '.join(notes)}"
        )
    done = [{s: rs for s, rs in sides.items() if all("error" not in r for r in rs)} for sides in runs.values()]
    imports = {s: [r for sides in done for r in sides.get(s, [])] for s in ("baseline", "current")}
    if all(imports.values()):
        base, cur = (1e3 * median(imports[s], "import_cpu") for s in ("baseline", "current"))
        print(
            f"import budgetcli + algorithms.load_all() (numba's import included), median of every run: "
            f"{base:.0f} ms CPU baseline, {cur:.0f} ms current, ratio {cur / base:.3f}"
        )
    return bad


if __name__ == "__main__":
    main()
