"""Start-up benchmark (issue #7): `budgetlearn --help` and `predict` on a 10-line file, each in a fresh
process, warm (numba's compile cache already on disk), best of five.

    python bench/startup.py [TRAIN TEST (default sample_data/a9a sample_data/a9a.t)]

Reports CPU seconds (user + system of the process) and wall seconds; on a shared machine the CPU
figure is the one that does not depend on the neighbours.  The target is under 1 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from repro.common import dataset  # noqa: E402


def run(args) -> tuple[float, float]:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "budgetcli.cli", *args], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train", nargs="?", default=str(dataset("a9a/a9a")))
    ap.add_argument("test", nargs="?", default=str(dataset("a9a/a9a.t")))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model, ten = os.path.join(tmp, "m.model"), os.path.join(tmp, "ten.txt")
        with open(args.test, "rb") as src, open(ten, "wb") as dst:
            for _ in range(10):
                dst.write(src.readline())
        subprocess.run([sys.executable, "-m", "budgetcli.cli", "train", "-a", "projectron++", "--eta", "0.31623",
                        "--gamma", "0.04", "-q", os.path.abspath(args.train), "-o", model], check=True, cwd=ROOT)
        for name, cmd in (("budgetlearn --help", ["--help"]),
                          ("budgetlearn predict (10 lines, ~800 SVs)", ["predict", model, ten])):
            run(cmd)  # warm the file cache and numba's on-disk cache
            times = [run(cmd) for _ in range(5)]
            cpu, wall = min(t[0] for t in times), min(t[1] for t in times)
            print(f"{name:42s} {cpu:5.2f} s CPU  {wall:5.2f} s wall  (best of 5) "
                  f"{'under' if cpu < 1 else 'OVER'} 1 s")


if __name__ == "__main__":
    main()
