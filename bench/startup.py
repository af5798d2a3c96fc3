"""Start-up benchmark (issue #34, "the loops compiled at install"): short commands as whole processes,
each a fresh `python -m budgetcli` (what the installed `budgetlearn` script runs), on the path the loops
run on: compiled at install (`budgetlearn --version` says so), or the JIT with --jit (BUDGETLEARN_JIT=1).

    python bench/startup.py [TRAIN TEST (default sample_data/a9a sample_data/a9a.t)] [--runs 7] [--jit]
                            [--no-first-runs] [--installed]

Per command: the minimum and median wall time, the median CPU time (user + system) and the peak RSS of
the process (its own: GNU time's, see bench/peers.py's measure), and the median's difference from the
floor's, `python -c "import numpy, click"`, measured in the same rounds: what any command costs before
our code.  Targets (issue #51): `train` and `predict` of 10 lines within FLOOR_MARGIN (0.07 s) of the
floor, medians; `train` ≤ 60 MB.  The commands run interleaved, round after round, warm (a first
uncounted round fills the file cache and, on the JIT path, numba's cache), and the load average is
printed before and after: the machines are shared.

Then (unless --no-first-runs) the first run of every algorithm "after a fresh install": `train -a NAME`
on the 1,000 lines with an empty NUMBA_CACHE_DIR of its own, then the same command again; target: the
first no slower than 1.5× the second (on the JIT path the first compiles the algorithm's loop: seconds).

Then the train run broken down, in one child process timing its own steps: the interpreter (a bare
`python -c pass`, measured apart), importing the commands (cli/: click, numpy, every algorithm),
importing numba and its first call (making the compiled functions and loading their machine code from
the cache: the JIT path only), and the rest of the command (reading, learning, writing).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

import peers  # noqa: E402  (bench/peers.py: OURS_CWD, where our processes start)
from peers import editable_hook_note, measure  # noqa: E402  (bench/peers.py: wall, CPU and own peak RSS)
from repro.common import dataset  # noqa: E402

BREAKDOWN = r"""
import os, sys, time
t0 = time.perf_counter()
from budgetcli import cli
from budgetcli.numerics import _jit
from budgetcli.entry import main
t1 = time.perf_counter()
jit = os.environ.get("BUDGETLEARN_JIT") == "1"
if jit:
    import numba
t2 = time.perf_counter()
if jit:
    _jit.compile_all()
t3 = time.perf_counter()
try:
    main(sys.argv[1:], prog_name="budgetlearn")
except SystemExit as e:
    assert not e.code, e.code
t4 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3)
"""


FLOOR = ["-c", "import numpy, click"]  # what any command costs before our code: the interpreter and two imports
FLOOR_MARGIN = 0.07  # s: train and predict of 10 lines within this of the floor, medians (issue #51)


def run(args: list[str], env: dict | None = None) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one `python -m budgetcli ARGS` process (peers.measure); FLOOR as is."""
    p = measure([sys.executable, *(args if args is FLOOR else ["-m", "budgetcli", *args])], peers.OURS_CWD, env)
    return p.wall, p.cpu, p.rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train", nargs="?", default=str(dataset("a9a/a9a")))
    ap.add_argument("test", nargs="?", default=str(dataset("a9a/a9a.t")))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--jit", action="store_true", help="the JIT path (BUDGETLEARN_JIT=1)")
    ap.add_argument("--no-first-runs", action="store_true", help="leave out every algorithm's first run")
    ap.add_argument("--installed", action="store_true", help=peers.INSTALLED_HELP)
    args = ap.parse_args()
    if args.installed:
        peers.use_installed()
    os.environ["BUDGETLEARN_JIT"] = "1" if args.jit else "0"  # inherited by every child
    print(measure([sys.executable, "-m", "budgetcli", "--version"], peers.OURS_CWD).out.splitlines()[-1])
    if note := editable_hook_note():
        print(note)
    with tempfile.TemporaryDirectory() as tmp:
        model, ten, thousand = (os.path.join(tmp, n) for n in ("m.model", "ten.txt", "thousand.txt"))
        for src_path, dst_path, n in ((args.test, ten, 10), (args.train, thousand, 1000)):
            with open(src_path, "rb") as src, open(dst_path, "wb") as dst:
                for _ in range(n):
                    dst.write(src.readline())
        run(["train", "-q", os.path.abspath(args.train), "-o", model])  # the default model (~160 SVs)
        small = os.path.join(tmp, "s.model")
        train = ["train", "-a", "rbp", "-B", "100", "--gamma", "0.04", "-q", thousand, "-o", small]
        floor = "floor: python -c 'import numpy, click'"
        rows = [  # (name, command, within FLOOR_MARGIN of the floor, MB)
            (floor, FLOOR, False, None),
            ("budgetlearn --version", ["--version"], False, None),
            ("budgetlearn info (default model)", ["info", model], False, None),
            ("budgetlearn predict (10 lines, default model)", ["predict", model, ten], True, None),
            ("budgetlearn train (10 lines, defaults)", ["train", "-q", ten, "-o", small], True, 60),
            ("budgetlearn train (1,000 lines, rbp B = 100)", train, False, None),
        ]
        for _, cmd, _, _ in rows:
            run(cmd)  # warm the file cache and numba's on-disk cache
        load = [os.getloadavg()]
        times: dict[str, list] = {name: [] for name, *_ in rows}
        for _ in range(args.runs):
            for name, cmd, _, _ in rows:
                times[name].append(run(cmd))
        load.append(os.getloadavg())
        base = statistics.median(t[0] for t in times[floor])
        print(
            f"{'command':48s} {'wall min':>9s} {'median':>7s} {'− floor':>8s} {'CPU med':>8s} {'peak RSS':>9s}  target"
        )
        for name, _, near_floor, rss_target in rows:
            wall = [t[0] for t in times[name]]
            cpu = statistics.median(t[1] for t in times[name])
            rss = max(t[2] for t in times[name])
            over = statistics.median(wall) - base
            target = []
            if near_floor:
                target.append(f"≤ floor + {FLOOR_MARGIN} s {'met' if over <= FLOOR_MARGIN else 'NOT MET'}")
            if rss_target:
                target.append(f"≤ {rss_target} MB {'met' if rss <= rss_target else 'NOT MET'}")
            print(
                f"{name:48s} {min(wall):8.3f}s {statistics.median(wall):6.3f}s {over:+7.3f}s {cpu:7.3f}s "
                f"{rss:7.1f}MB  " + ", ".join(target)
            )
        if not args.no_first_runs:
            first_runs(thousand, tmp)
        bare = min(_bare_python() for _ in range(args.runs))
        steps = [
            [
                float(x)
                for x in subprocess.run(
                    [sys.executable, "-c", BREAKDOWN, *train],
                    cwd=peers.OURS_CWD,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout.split()
            ]
            for _ in range(args.runs)
        ]
        parts = [statistics.median(s[i] for s in steps) for i in range(4)]
        print(
            f"\ntrain on 1,000 lines, medians: interpreter {bare:.3f} s, importing the commands {parts[0]:.3f} s, "
            f"importing numba {parts[1]:.3f} s, numba's first call (making and loading the compiled functions) "
            f"{parts[2]:.3f} s, reading + learning + writing {parts[3]:.3f} s"
        )
        print(
            "load average (1, 5, 15 min): before "
            + " ".join(f"{x:.2f}" for x in load[0])
            + ", after "
            + " ".join(f"{x:.2f}" for x in load[-1])
        )


def first_runs(data: str, tmp: str) -> None:
    """Every algorithm's first `train` with an empty numba cache of its own, then its second."""
    from budgetcli.base import registry
    from budgetcli.learning.algorithms import ALGORITHMS

    multiclass_data = os.path.join(tmp, "three.txt")
    with open(data) as src, open(multiclass_data, "w") as dst:
        for i, line in enumerate(src):
            dst.write(f"{1 + i % 3}{line[line.index(' ') :]}")
    worst = (0.0, "")
    print(f"\n{'first train of':20s} {'first':>7s} {'second':>7s} {'ratio':>6s}")
    for name in sorted(ALGORITHMS):
        cache = tempfile.mkdtemp(dir=tmp)
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        source = multiclass_data if registry.get(name).multiclass else data
        tasks = registry.get(name).tasks  # a regression learner takes the ±1 labels as real targets
        task = [] if "classification" in tasks else ["--task", tasks[0]]
        cmd = ["train", "-q", "-a", name, *task, source, "-o", os.path.join(tmp, "f.model")]
        first, second = run(cmd, env)[0], run(cmd, env)[0]
        worst = max(worst, (first / second, name))
        print(f"{name:20s} {first:6.2f}s {second:6.2f}s {first / second:6.2f}")
    verdict = "met" if worst[0] <= 1.5 else "NOT MET"
    print(f"worst first ÷ second: {worst[0]:.2f} ({worst[1]}); target ≤ 1.5: {verdict}")


def _bare_python() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
