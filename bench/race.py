"""The practical race (issues #19, #34): the fastest budgetlearn commands that reach ≥ 84.5% on a9a.t with
≤ 500 SVs in one pass, train + eval as fresh processes, against the Nystroem(500) + SGD script of
bench/run.py in a fresh process, in wall time.

    python bench/race.py [TRAIN TEST (default sample_data/a9a sample_data/a9a.t)] [--runs 5]

Whole processes, interleaved round after round (round 0 fills the caches and is not counted); wall,
CPU (user + system) and peak RSS from bench/peers.py's `measure`; the ratio is the paired median of
(online-to-batch + eval) ÷ the peer's script.  Target: ≤ 0.5 (#34; #19's was 0.6).  The commands
are the `--targets` rows of bench/run.py that reach 84.5% at B = 300 (docs/BENCHMARK.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from loops import fmt_load  # noqa: E402
from peers import editable_hook_note, interleaved  # noqa: E402
from run import GAMMA, NYSTROEM_SGD  # noqa: E402

OURS = {"lbp": ["-B", "300"], "rbp": ["-B", "300"], "forgetron": ["-B", "300"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train", nargs="?", default=os.path.join(ROOT, "sample_data", "a9a"))
    ap.add_argument("test", nargs="?", default=os.path.join(ROOT, "sample_data", "a9a.t"))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    py, tmp = sys.executable, tempfile.mkdtemp()
    if note := editable_hook_note():
        print(note)
    cmds = {"peer": [py, "-c", NYSTROEM_SGD, args.train, args.test, str(GAMMA)]}
    for name, opts in OURS.items():
        model = os.path.join(tmp, f"{name}.model")
        cmds[f"{name} train"] = [
            py,
            "-m",
            "budgetcli",
            "online-to-batch",
            "-a",
            name,
            *opts,
            "--gamma",
            str(GAMMA),
            "--method",
            "projected-average",
            "-q",
            args.train,
            "-o",
            model,
        ]
        cmds[f"{name} eval"] = [py, "-m", "budgetcli", "eval", model, args.test]
    print("load average before: " + fmt_load(os.getloadavg()))
    runs = interleaved(cmds, args.runs, ROOT)
    print("load average after:  " + fmt_load(os.getloadavg()))
    for k, ps in runs.items():
        print(
            f"{k:18s} wall {statistics.median(p.wall for p in ps):6.3f} s  CPU "
            f"{statistics.median(p.cpu for p in ps):6.3f} s"
            f"  peak RSS {statistics.median(p.rss for p in ps):6.1f} MB"
        )
    for name in OURS:
        accuracy = runs[f"{name} eval"][-1].out.split("accuracy")[1].split()[0]
        pairs = [
            (t.wall + e.wall) / p.wall for t, e, p in zip(runs[f"{name} train"], runs[f"{name} eval"], runs["peer"])
        ]
        print(
            f"{name} B = 300 projected average ({accuracy}): train + eval ÷ the peer, wall "
            f"{statistics.median(pairs):.2f}"
            f" (target ≤ 0.5)"
        )


if __name__ == "__main__":
    main()
