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
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
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
    algos = {name: {"multiclass": bool(getattr(cls, "multiclass", False)), "params": [p.name for p in cls.params]}
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
    ap.add_argument("train_binary")
    ap.add_argument("train_multiclass")
    ap.add_argument("--baseline", required=True, help="checkout to compare with (a directory of `git worktree add`)")
    ap.add_argument("--rounds", type=int, default=5, help="measurements per checkout and algorithm (default 5)")
    ap.add_argument("--algorithms", help="comma-separated subset (default: every registered algorithm)")
    ap.add_argument("--examples", type=int, default=None, help="examples learnt per run (default: all)")
    ap.add_argument("--json", help="write every measurement to this file")
    args = ap.parse_args()
    if args.rounds < 1 or (args.examples is not None and args.examples <= FIRST):
        ap.error(f"--rounds must be at least 1 and --examples more than {FIRST}")
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
