"""Start-up benchmark (issue #19, "a light start-up"): short commands as whole processes, warm (numba's
compile cache and the file cache filled by a first run), each run a fresh `python -m budgetcli`, which is
what the installed `budgetlearn` script runs.

    python bench/startup.py [TRAIN TEST (default sample_data/a9a sample_data/a9a.t)] [--runs 7]

Per command: the minimum and median wall time, the median CPU time (user + system) and the peak RSS of
the process (its own: GNU time's, see bench/peers.py's measure), and the target: `--version` ≤ 0.15 s; `predict` of
10 lines ≤ 0.3 s
and ≤ 80 MB; `train` on 1,000 lines ≤ 0.6 s.  The commands run interleaved, round after round, and the
load average is printed before and after: the machines are shared.

Then the train run broken down, in one child process timing its own steps: the interpreter (a bare
`python -c pass`, measured apart), importing the commands (cli.py: click, numpy, every algorithm),
importing numba, numba's first call (making the compiled functions and loading their machine code
from the cache), and the rest of the command (reading, learning, writing).
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

from peers import measure  # noqa: E402  (bench/peers.py: wall, CPU and the child's own peak RSS)
from repro.common import dataset  # noqa: E402

BREAKDOWN = r"""
import sys, time
t0 = time.perf_counter()
from budgetcli import cli, _jit
t1 = time.perf_counter()
import numba
t2 = time.perf_counter()
_jit.compile_all()
t3 = time.perf_counter()
try:
    cli.main(sys.argv[1:], prog_name="budgetlearn")
except SystemExit as e:
    assert not e.code, e.code
t4 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3)
"""


def run(args: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one `python -m budgetcli ARGS` process (peers.measure)."""
    p = measure([sys.executable, "-m", "budgetcli", *args], ROOT)
    return p.wall, p.cpu, p.rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train", nargs="?", default=str(dataset("a9a/a9a")))
    ap.add_argument("test", nargs="?", default=str(dataset("a9a/a9a.t")))
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model, ten, thousand = (os.path.join(tmp, n) for n in ("m.model", "ten.txt", "thousand.txt"))
        for src_path, dst_path, n in ((args.test, ten, 10), (args.train, thousand, 1000)):
            with open(src_path, "rb") as src, open(dst_path, "wb") as dst:
                for _ in range(n):
                    dst.write(src.readline())
        run(
            [
                "train",
                "-a",
                "projectron++",
                "--eta",
                "0.31623",
                "--gamma",
                "0.04",
                "--average",
                "-q",
                os.path.abspath(args.train),
                "-o",
                model,
            ]
        )
        train = [
            "train",
            "-a",
            "rbp",
            "-B",
            "100",
            "--gamma",
            "0.04",
            "-q",
            thousand,
            "-o",
            os.path.join(tmp, "k.model"),
        ]
        rows = [
            ("budgetlearn --version", ["--version"], 0.15, None),
            ("budgetlearn --help", ["--help"], None, None),
            ("budgetlearn info (~800 SVs)", ["info", model], None, None),
            ("budgetlearn predict (10 lines, ~800 SVs)", ["predict", model, ten], 0.3, 80),
            ("budgetlearn train (1,000 lines, rbp B = 100)", train, 0.6, None),
        ]
        for _, cmd, _, _ in rows:
            run(cmd)  # warm the file cache and numba's on-disk cache
        load = [os.getloadavg()]
        times: dict[str, list] = {name: [] for name, *_ in rows}
        for _ in range(args.runs):
            for name, cmd, _, _ in rows:
                times[name].append(run(cmd))
        load.append(os.getloadavg())
        print(f"{'command':46s} {'wall min':>9s} {'median':>7s} {'CPU med':>8s} {'peak RSS':>9s}  target")
        for name, _, wall_target, rss_target in rows:
            wall = [t[0] for t in times[name]]
            cpu = statistics.median(t[1] for t in times[name])
            rss = max(t[2] for t in times[name])
            target = []
            if wall_target:
                target.append(f"≤ {wall_target} s {'met' if statistics.median(wall) <= wall_target else 'NOT MET'}")
            if rss_target:
                target.append(f"≤ {rss_target} MB {'met' if rss <= rss_target else 'NOT MET'}")
            print(
                f"{name:46s} {min(wall):8.3f}s {statistics.median(wall):6.3f}s {cpu:7.3f}s {rss:7.1f}MB  "
                + ", ".join(target)
            )
        bare = min(_bare_python() for _ in range(args.runs))
        steps = [
            [
                float(x)
                for x in subprocess.run(
                    [sys.executable, "-c", BREAKDOWN, *train], cwd=ROOT, check=True, capture_output=True, text=True
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


def _bare_python() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
