"""Every row of issue #34 (Performance III) from one command, on one path: the loops compiled at install,
or the JIT with --jit (BUDGETLEARN_JIT=1, inherited by every process of ours).  Run it once per path.

    python bench/issue34.py [--kol KOL] [--budgetedsvm DIR] [--baseline CHECKOUT] [--runs N] [--jit]
                            [--only startup,peers,race,libsvm,eta]

The parts, in this order, each the script that measures it (their docstrings say how):
  startup  bench/startup.py: train and predict of 10 lines, and the first run of every algorithm
  peers    bench/peers.py --long: RBP, Forgetron and Projectron++ against LIBOKL's KOL on a9a and on a9a
           repeated 16 times, and BSGD against BudgetedSVM (without --kol or --budgetedsvm: the peer's
           figures of an earlier run, labelled as such)
  race     bench/race.py: train + eval of the practical race against Nystroem(500) + SGD
  libsvm   bench/run.py --targets: Projectron++ averaged at ~780 vectors against LIBSVM's svm-train
           (needs libsvm-official and scikit-learn installed; the script says what it skips)
  eta      `train -a projectron++ --eta 0.1 --gamma 0.04 --average` (3,447 vectors on a9a) against the
           same command run by CHECKOUT, a checkout of the commit the issue measured (37421d6, `git
           worktree add ../base 37421d6`), interleaved round after round; target: ours ≤ 0.5× of it.
           Without --baseline our side alone.

Every part prints its own table, its targets and the load average before and after: the machines are
shared.  Whole processes throughout (start-up, imports and reading the file included).
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

from loops import fmt_load  # noqa: E402
from peers import measure  # noqa: E402
from repro.common import dataset  # noqa: E402

PARTS = ("startup", "peers", "race", "libsvm", "eta")
ETA_ROW = ["train", "-a", "projectron++", "--eta", "0.1", "--gamma", "0.04", "--average", "-q"]


def script(name: str, *args: str) -> None:
    """Run bench/NAME with this interpreter; its output goes straight to ours."""
    argv = [sys.executable, os.path.join(HERE, name), *args]
    print(f"$ python bench/{name} {' '.join(args)}", flush=True)
    code = subprocess.run(argv, cwd=ROOT).returncode
    if code:
        print(f"bench/{name} exited with {code}", flush=True)


def eta_row(train: str, baseline: str | None, runs: int) -> None:
    """The --eta 0.1 Projectron++ run, ours against the baseline checkout's, interleaved."""
    sides = {"budgetlearn": ROOT} | ({"baseline": os.path.abspath(baseline)} if baseline else {})
    if baseline:
        if not os.path.isfile(os.path.join(baseline, "budgetcli", "__init__.py")):
            sys.exit(f"issue34.py: {baseline} is not a checkout of budgetlearn (no budgetcli/__init__.py)")
        compileall.compile_dir(os.path.join(baseline, "budgetcli"), quiet=1)  # as its install would
    tmp = tempfile.mkdtemp()
    model, head = os.path.join(tmp, "eta.model"), os.path.join(tmp, "head")
    with open(train) as src, open(head, "w") as dst:
        dst.writelines(line for _, line in zip(range(1000), src))
    print(f"$ python -m budgetcli {' '.join(ETA_ROW)} {train}  (each side in its checkout, {runs} rounds)")
    times: dict[str, list] = {side: [] for side in sides}
    try:
        for side, cwd in sides.items():  # not timed: fills the file cache and a JIT side's numba cache
            measure([sys.executable, "-m", "budgetcli", *ETA_ROW, head, "-o", model], cwd)
        print(f"load average before: {fmt_load(os.getloadavg())}", flush=True)
        for _ in range(runs):
            for side, cwd in sides.items():
                p = measure([sys.executable, "-m", "budgetcli", *ETA_ROW, train, "-o", model], cwd)
                times[side].append(p)
                print(f"  {side:12s} {p.wall:6.2f} s wall {p.cpu:6.2f} s CPU {p.rss:6.0f} MB", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average after:  {fmt_load(os.getloadavg())}")
    ours = statistics.median(p.wall for p in times["budgetlearn"])
    if baseline:
        base = statistics.median(p.wall for p in times["baseline"])
        ratio = ours / base
        verdict = "met" if ratio <= 0.5 else "NOT MET"
        print(f"  median wall: ours {ours:.2f} s, baseline {base:.2f} s: ratio {ratio:.2f}, target ≤ 0.5: {verdict}")
    else:
        print(f"  median wall: ours {ours:.2f} s (no --baseline: no ratio)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kol", metavar="PATH", help="LIBOKL's KOL executable (bench/peers.py)")
    ap.add_argument("--budgetedsvm", metavar="DIR", help="BudgetedSVM's bin directory (bench/peers.py)")
    ap.add_argument("--baseline", metavar="CHECKOUT", help="a checkout of the commit the issue measured (eta)")
    ap.add_argument("--runs", type=int, default=3, help="rounds of every part")
    ap.add_argument("--jit", action="store_true", help="the JIT path (BUDGETLEARN_JIT=1)")
    ap.add_argument("--only", metavar="PART,...", help=f"just these parts ({', '.join(PARTS)})")
    args = ap.parse_args()
    parts = PARTS if not args.only else tuple(p.strip() for p in args.only.split(","))
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        sys.exit(f"issue34.py: no part {', '.join(unknown)} (the parts: {', '.join(PARTS)})")
    os.environ["BUDGETLEARN_JIT"] = "1" if args.jit else "0"
    runs = ["--runs", str(args.runs)]
    jit = ["--jit"] if args.jit else []
    train = str(dataset("a9a/a9a"))
    for part in parts:
        print(f"\n=== {part} ===", flush=True)
        if part == "startup":
            script("startup.py", *runs, *jit)
        elif part == "peers":
            peers = [f"--kol={args.kol}"] if args.kol else []
            peers += [f"--budgetedsvm={args.budgetedsvm}"] if args.budgetedsvm else []
            script("peers.py", "--long", *peers, *runs, *jit)
        elif part == "race":
            script("race.py", *runs)
        elif part == "libsvm":
            script("run.py", "--targets", "--json", os.devnull)
        else:
            eta_row(train, args.baseline, args.runs)


if __name__ == "__main__":
    main()
