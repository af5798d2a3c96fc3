"""`train --threads N` against one thread (issue #51): the Projectron++ run of the target as whole processes,
interleaved, and the model files compared byte for byte.

    python bench/factor_threads.py [TRAIN (default sample_data/a9a)] [--threads 2] [--runs 5]
                                   [--options "-a projectron++ --eta 0.1 --gamma 0.04 --average"] [--installed]

Each round runs `budgetlearn train OPTIONS TRAIN -o M1` and the same with `--threads N` (which goes first
alternates from round to round), as bench/peers.py measures a process (`measure`: wall, CPU = user +
system, peak RSS), with the load average before each run: the machine may be shared, and a busy core
takes from the threads' share first.  Printed: every run, the medians, the ratio of the median wall
times (target ≤ 0.6 for N = 2 on 2 cores) and whether every model file of the threaded runs is the
one-thread file byte for byte.  Our side is `python -m budgetcli` of this interpreter in the checkout (with
--installed: the budgetlearn installed in its environment), on the path `budgetlearn --version` names (first
line).
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from loops import fmt_load  # noqa: E402
from peers import INSTALLED_HELP, budgetlearn, use_installed  # noqa: E402
from repro.common import dataset  # noqa: E402

TARGET = 0.6  # the threaded run's wall time ÷ one thread's, for 2 threads on 2 cores


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("train", nargs="?", default=str(dataset("a9a/a9a")))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--options", default="-a projectron++ --eta 0.1 --gamma 0.04 --average")
    ap.add_argument("--installed", action="store_true", help=INSTALLED_HELP)
    args = ap.parse_args()
    if args.installed:
        use_installed()
    print(budgetlearn("--version").out.splitlines()[-1], flush=True)
    options = shlex.split(args.options)
    sides = {1: [], args.threads: []}
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.runs):
            order = list(sides) if r % 2 == 0 else list(sides)[::-1]
            for threads in order:
                model = os.path.join(tmp, f"{threads}.model")
                load = os.getloadavg()
                p = budgetlearn("train", *options, "--threads", threads, "-q", args.train, "-o", model)
                sides[threads].append(p)
                print(
                    f"round {r + 1}: {threads} thread{'s' if threads > 1 else ' '}  wall {p.wall:7.2f} s  CPU "
                    f"{p.cpu:7.2f} s  RSS {p.rss:5.0f} MB  load before {fmt_load(load)}",
                    flush=True,
                )
            with (
                open(os.path.join(tmp, "1.model"), "rb") as a,
                open(os.path.join(tmp, f"{args.threads}.model"), "rb") as b,
            ):
                same = same and a.read() == b.read()
    wall = {t: statistics.median(p.wall for p in runs) for t, runs in sides.items()}
    cpu = {t: statistics.median(p.cpu for p in runs) for t, runs in sides.items()}
    ratio = wall[args.threads] / wall[1]
    print(
        f"medians over {args.runs} rounds: 1 thread {wall[1]:.2f} s wall, {cpu[1]:.2f} s CPU; {args.threads} threads "
        f"{wall[args.threads]:.2f} s wall, {cpu[args.threads]:.2f} s CPU; wall ratio {ratio:.2f} (target ≤ {TARGET} "
        f"for 2 threads: {'met' if ratio <= TARGET else 'NOT MET'}); load average now {fmt_load(os.getloadavg())}"
    )
    print(f"model files byte for byte the same in every round: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
