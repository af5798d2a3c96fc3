"""Scaling and parsing benchmark (issue #7).

    python bench/scaling.py [TRAIN (default sample_data/a9a)] [--lines 5000000] [--json bench/scaling.json]
    python bench/scaling.py --parsing-only [--rounds 7] [--baseline CHECKOUT]

1. time vs stream length at fixed B: RBP B = 300 (rbf γ = 0.04), learning loop over a9a repeated
   to 8k .. 128k examples; CPU µs per example should stay flat (linear time).
2. time vs B: RBP on a9a for B = 50 .. 800; per-example cost grows with B (the kernel row is O(B)).
3. peak RSS vs stream length: `budgetlearn train -a rbp -B 100` in a fresh process reading a generated
   stream (`budgetlearn generate projectron-gaussians`, --lines lines, written to a temporary file) from
   stdin, for prefixes of 1%, 10% and 100% of it; peak RSS should not grow.
4. parsing: the reader's lines/s on a9a (chunks only, as `train` streams them) against `wc -l`,
   scikit-learn's load_svmlight_file on the same file (which holds the whole file in memory) and,
   with --baseline, the reader of another checkout of the project (`git worktree add DIR REV`),
   in interleaved rounds (medians), with the load average before and after.

All times are CPU seconds (the machine is shared; wall time would measure the neighbours).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from budgetcli.base import registry  # noqa: E402
from budgetcli.io.libsvm import LibsvmReader, read_all  # noqa: E402
from budgetcli.numerics.kernels import Kernel  # noqa: E402
from repro.common import dataset  # noqa: E402

GAMMA = 0.04
RSS_WRAPPER = (
    "import resource, sys\nfrom budgetcli.entry import main\n"
    "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
)


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def loop_cpu(data, budget) -> float:
    cls = registry.get("rbp")
    cls(Kernel("rbf", GAMMA), budget=budget).learn(data.take(np.arange(100)), data.labels[:100])  # compile
    learner = cls(Kernel("rbf", GAMMA), budget=budget)
    t0 = time.process_time()
    learner.learn(data, data.labels)
    return time.process_time() - t0


def time_vs_length(data) -> list[dict]:
    rows = []
    for n in (8192, 32768, 131072):
        stream = data.take(np.arange(n) % len(data))
        s = loop_cpu(stream, 300)
        rows.append({"examples": n, "cpu_seconds": s, "us_per_example": 1e6 * s / n})
        print(f"RBP B=300, {n:7,} examples: {s:6.2f} s CPU, {1e6 * s / n:6.1f} µs/example", flush=True)
    return rows


def time_vs_budget(data) -> list[dict]:
    rows = []
    for b in (50, 100, 200, 400, 800):
        s = loop_cpu(data, b)
        rows.append({"budget": b, "cpu_seconds": s, "us_per_example": 1e6 * s / len(data)})
        print(f"RBP B={b:3d} on a9a: {s:6.2f} s CPU, {1e6 * s / len(data):6.1f} µs/example", flush=True)
    return rows


def rss_vs_length(lines: int, tmp: str) -> list[dict]:
    path = os.path.join(tmp, "stream.txt")
    c0 = child_cpu()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "budgetcli",
            "generate",
            "projectron-gaussians",
            "-n",
            str(lines),
            "--seed",
            "1",
            "-o",
            path,
        ],
        check=True,
        cwd=ROOT,
    )
    print(
        f"generated {lines:,} lines ({os.path.getsize(path) / 2**20:.0f} MiB) in {child_cpu() - c0:.1f} s CPU",
        flush=True,
    )
    rows = []
    for n in (lines // 100, lines // 10, lines):
        cmd = (
            f'head -n {n} {path} | {sys.executable} -c "$WRAPPER" train -a rbp -B 100 --gamma 1 -q --json - '
            f"-o {os.path.join(tmp, 'm.model')}"
        )
        c0 = child_cpu()
        p = subprocess.run(
            ["bash", "-c", cmd],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env=os.environ | {"WRAPPER": RSS_WRAPPER},
        )
        s = child_cpu() - c0
        summary = json.loads(p.stdout)
        rss = int(p.stderr.strip().splitlines()[-1]) / 1024
        assert summary["examples"] == n
        rows.append({"lines": n, "peak_rss_mib": rss, "cpu_seconds": s, "support_size": summary["support_size"]})
        print(f"train rbp B=100 on {n:9,} streamed lines: peak RSS {rss:6.1f} MiB, {s:6.1f} s CPU", flush=True)
    return rows


def baseline_reader(checkout: str):
    """LibsvmReader of another checkout of the project (e.g. `git worktree add /tmp/before REV`), imported under
    another package name so that both readers can be timed in one process."""
    init = os.path.join(checkout, "budgetcli", "__init__.py")
    spec = importlib.util.spec_from_file_location(
        "baseline_budgetcli", init, submodule_search_locations=[os.path.dirname(init)]
    )
    sys.modules["baseline_budgetcli"] = package = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(package)
    return importlib.import_module("baseline_budgetcli.io.libsvm").LibsvmReader


def parsing(path: str, rounds: int = 7, baseline: str | None = None) -> dict:
    """Lines/s of the reader (chunks only, as `train` streams them), of scikit-learn's load_svmlight_file (which
    holds the whole file in memory) and, with `baseline`, of another checkout's reader: CPU seconds, medians of
    `rounds` interleaved rounds after one warm-up each (file cache, numba's cache); and `wc -l`."""
    c0 = child_cpu()
    n_lines = int(subprocess.run(["wc", "-l", path], capture_output=True, text=True, check=True).stdout.split()[0])
    wc_s = child_cpu() - c0

    def streamed(reader_class):
        return lambda: sum(len(chunk) for chunk in reader_class(path))

    contenders = {"reader": streamed(LibsvmReader)}
    if baseline:
        contenders["baseline"] = streamed(baseline_reader(baseline))
    try:
        from sklearn.datasets import load_svmlight_file

        contenders["sklearn"] = lambda: load_svmlight_file(path)[1].size
    except ImportError:
        print("scikit-learn not installed: load_svmlight_file skipped", file=sys.stderr)
    for read in contenders.values():
        assert read() == n_lines
    load_before = os.getloadavg()
    seconds = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, read in contenders.items():
            t0 = time.process_time()
            read()
            seconds[name].append(time.process_time() - t0)
    load_after = os.getloadavg()
    out = {
        "lines": n_lines,
        "rounds": rounds,
        "load_average_before": load_before,
        "load_average_after": load_after,
        "wc_seconds": wc_s,
        "wc_lines_per_s": n_lines / max(wc_s, 1e-3),
    }
    for name, times in seconds.items():
        out[f"{name}_seconds"] = float(np.median(times))
        out[f"{name}_lines_per_s"] = n_lines / out[f"{name}_seconds"]
    ours = out["reader_lines_per_s"]
    print(
        f"parsing {n_lines:,} lines, medians of {rounds} interleaved rounds (CPU s), load average "
        f"{load_before[0]:.2f} before, {load_after[0]:.2f} after:",
        flush=True,
    )
    print(
        f"  reader {ours:,.0f} lines/s; wc -l {out['wc_lines_per_s']:,.0f} lines/s "
        f"({out['wc_lines_per_s'] / ours:.1f}× ours)",
        flush=True,
    )
    if "sklearn_seconds" in out:
        print(
            f"  load_svmlight_file {out['sklearn_lines_per_s']:,.0f} lines/s "
            f"(ours ÷ theirs {ours / out['sklearn_lines_per_s']:.2f})",
            flush=True,
        )
    if baseline:
        print(
            f"  baseline reader ({baseline}) {out['baseline_lines_per_s']:,.0f} lines/s "
            f"(ours ÷ baseline {ours / out['baseline_lines_per_s']:.2f})",
            flush=True,
        )
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train", nargs="?", default=str(dataset("a9a/a9a")), help="a9a (LIBSVM format)")
    ap.add_argument("--lines", type=int, default=5_000_000, help="length of the generated stream for peak RSS")
    ap.add_argument("--json", default=os.path.join(HERE, "scaling.json"))
    ap.add_argument("--parsing-only", action="store_true", help="only part 4 (the other results in --json are kept)")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds of the parsing comparison")
    ap.add_argument("--baseline", metavar="CHECKOUT", help="also time the reader of this checkout of the project")
    args = ap.parse_args()
    results = {}
    if args.parsing_only and os.path.exists(args.json):
        with open(args.json) as f:
            results = json.load(f)
    results["parsing"] = parsing(args.train, args.rounds, args.baseline)
    if not args.parsing_only:
        data = read_all(args.train)
        results["time_vs_length"] = time_vs_length(data)
        results["time_vs_budget"] = time_vs_budget(data)
        with tempfile.TemporaryDirectory() as tmp:
            results["rss_vs_length"] = rss_vs_length(args.lines, tmp)
    text = json.dumps(results, indent=1, default=lambda o: o.item())
    with open(args.json, "w") as f:
        f.write(text)
    print(f"written {args.json}")


if __name__ == "__main__":
    main()
