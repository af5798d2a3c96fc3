"""Speed-up of `budgetlearn tune` with 2 jobs over 1 job on a small grid (issue #11).

    python bench/tune_speedup.py [DATA (default sample_data/a9a)] [--jobs 2] [--repeat 1] [--grid rbp]

Runs the same `tune` command (by default Projectron, η ∈ {0.3, 0.5} × γ ∈ {0.04, 0.1}, 2 permutations:
8 runs; `--grid rbp`: RBP, B ∈ {100, 300} × γ ∈ {0.04, 0.1}) in a fresh process with --jobs 1 and with --jobs N,
times each end to end (wall clock, worker
start-up included), checks that both tables are identical apart from the seconds, and prints the
speed-up with the load average of the machine before and after (a loaded machine lowers it) and
the runs' own seconds summed over each table (equal in both when every worker had a core to itself;
larger with 2 jobs when the workers had to share the CPUs).
The last line of stdout is the result as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from repro.common import dataset  # noqa: E402

# The Projectron grid's runs take seconds each; the RBP grid's under one, so there the start-up of the
# worker processes (imports, numba's cache) weighs on the speed-up.
GRIDS = {
    "projectron": ["-a", "projectron", "--grid", "eta=0.3,0.5", "--grid", "gamma=0.04,0.1", "--permutations", "2"],
    "rbp": ["-a", "rbp", "--grid", "B=100,300", "--grid", "gamma=0.04,0.1", "--permutations", "2"],
}
GRID = GRIDS["projectron"]


def tune(data: str, jobs: int) -> tuple[float, dict]:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "budgetcli", "tune", *GRID, "--jobs", str(jobs), "--json", data],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - started, json.loads(out.stdout)


def without_seconds(table: dict) -> dict:
    for row in table["rows"]:
        row.pop("seconds_mean"), row.pop("seconds_std")
        for run in row["per_run"]:
            run.pop("seconds")
    return table


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default=str(dataset("a9a/a9a")), help="training file")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1, help="time each setting this many times, keep the fastest")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="projectron", help="which grid to tune")
    args = ap.parse_args()
    global GRID
    GRID = GRIDS[args.grid]
    data = os.path.abspath(args.data)  # the command runs from the project root
    tune(str(ROOT / "sample_data" / "synthetic.train"), 1)  # fill numba's compile cache: neither timing pays for it
    load_before = os.getloadavg()
    serial = min((tune(data, 1) for _ in range(args.repeat)), key=lambda r: r[0])
    parallel = min((tune(data, args.jobs) for _ in range(args.repeat)), key=lambda r: r[0])
    load_after = os.getloadavg()
    # the runs' own learning seconds, summed: about equal in both when each worker had a core to itself
    learning = [sum(r["seconds"] for row in t[1]["rows"] for r in row["per_run"]) for t in (serial, parallel)]
    identical = without_seconds(serial[1]) == without_seconds(parallel[1])
    result = {
        "grid": args.grid,
        "runs": sum(len(r["per_run"]) for r in serial[1]["rows"]),
        "jobs": args.jobs,
        "seconds_1_job": round(serial[0], 2),
        f"seconds_{args.jobs}_jobs": round(parallel[0], 2),
        "speedup": round(serial[0] / parallel[0], 3),
        "identical_tables": identical,
        "run_seconds_sum_1_job": round(learning[0], 2),
        f"run_seconds_sum_{args.jobs}_jobs": round(learning[1], 2),
        "loadavg_1min_before": round(load_before[0], 2),
        "loadavg_1min_after": round(load_after[0], 2),
        "cpus": os.cpu_count(),
    }
    print(
        f"tune, {result['runs']} runs: 1 job {serial[0]:.1f} s, {args.jobs} jobs {parallel[0]:.1f} s, "
        f"speed-up {result['speedup']:.2f}x; identical tables: {identical}; runs' own seconds summed "
        f"{learning[0]:.1f} vs {learning[1]:.1f}; "
        f"load average {load_before[0]:.2f} -> {load_after[0]:.2f} on {os.cpu_count()} CPUs"
    )
    print(json.dumps(result))
    if not identical:
        sys.exit(1)


if __name__ == "__main__":
    main()
