"""Every algorithm with its default settings, as a new user runs it: `budgetlearn train -a NAME DATA` (no
other flag), then `budgetlearn eval` on the test file, in fresh processes.  For the table behind the
default algorithm and the defaults (docs/ALGORITHMS.md, "Which algorithm with its defaults").

    python bench/defaults.py [--data a9a] [--hypotheses average,last] [--json defaults.json]

Data sets: a9a (sample_data/a9a, a9a.t), letter (multiclass, from BUDGETLEARN_DATASETS), the Projectron
paper's synthetic set (sample_data/synthetic.train, .test), and a drifting stream (`shifting`, for the
learners that track drift).  Binary algorithms run on the binary sets,
multiclass ones on every set.  Prints, per algorithm: test accuracy, the test set's majority-class
rate, whether every prediction was one class, support vectors, the train command's wall seconds, and
the warnings `train` printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from budgetcli.learning import algorithms  # noqa: E402
from repro.common import dataset  # noqa: E402

SETS = {
    "a9a": (ROOT / "sample_data" / "a9a", ROOT / "sample_data" / "a9a.t", False),
    "synthetic": (ROOT / "sample_data" / "synthetic.train", ROOT / "sample_data" / "synthetic.test", False),
    "letter": (None, None, True),  # from BUDGETLEARN_DATASETS, when given
    "shifting": (None, None, False),  # generated: `generate shifting-7`, its last 1,000 examples held out
}
SHIFTING_EXAMPLES, SHIFTING_HELD_OUT = 20_000, 1_000


def shifting(where: str) -> tuple[Path, Path]:
    """A drifting stream (7 changes of the target concept, budgetcli/run/synthetic.py): train on all but its
    last 1,000 examples, test on those, drawn from the concept of the stream's last stretch, so that the
    test asks what a tracker is for: the model of the current concept."""
    p, _ = run(["generate", "shifting-7", "-n", str(SHIFTING_EXAMPLES), "--seed", "1"])
    lines = p.stdout.splitlines(keepends=True)
    train, test = Path(where, "shifting.train"), Path(where, "shifting.test")
    train.write_text("".join(lines[:-SHIFTING_HELD_OUT]))
    test.write_text("".join(lines[-SHIFTING_HELD_OUT:]))
    return train, test


def run(args: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    started = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "budgetcli", *args], capture_output=True, text=True, cwd=ROOT)
    return p, time.perf_counter() - started


def row(name: str, train: Path, test: Path, hypothesis: str | None, where: str) -> dict:
    model = os.path.join(where, f"{name}.model")
    extra = ["--hypothesis", hypothesis] if hypothesis else []
    p, seconds = run(["train", "-a", name, *extra, "--json", "-q", str(train), "-o", model])
    if p.returncode:
        return {"algorithm": name, "hypothesis": hypothesis or "default", "error": p.stderr.strip().splitlines()[-1]}
    summary = json.loads(p.stdout)
    e, _ = run(["eval", "--json", model, str(test)])
    report = json.loads(e.stdout)
    conf = report["confusion_matrix"]["rows_true_columns_predicted"]
    majority = max(sum(r) for r in conf) / report["examples"]
    predicted = [sum(r[j] for r in conf) for j in range(len(conf))]
    return {
        "algorithm": name,
        "hypothesis": summary["hypothesis"],
        "accuracy": report["accuracy"],
        "majority": majority,
        "one_class": sum(1 for n in predicted if n) == 1,
        "support": summary["support_size"],
        "seconds": round(seconds, 2),
        "warnings": summary["warnings"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="a9a,synthetic,letter")
    ap.add_argument("--hypotheses", default="default", help="default, average, last (comma-separated)")
    ap.add_argument("--algorithms", default="")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    names = args.algorithms.split(",") if args.algorithms else sorted(algorithms.load_all())
    rows = []
    with tempfile.TemporaryDirectory() as where:
        for data in args.data.split(","):
            train, test, multiclass = SETS[data]
            if data == "letter":
                try:
                    train, test = dataset("letter/letter.scale"), dataset("letter/letter.scale.t")
                except SystemExit as exc:
                    print(f"letter skipped: {exc}", file=sys.stderr)
                    continue
            if data == "shifting":
                train, test = shifting(where)
            for name in names:
                if multiclass and not algorithms.load_all()[name].multiclass:
                    continue
                for hypothesis in args.hypotheses.split(","):
                    r = row(name, train, test, None if hypothesis == "default" else hypothesis, where)
                    r["data"] = data
                    rows.append(r)
                    if "error" in r:
                        print(f"{data:9s} {name:18s} {r['hypothesis']:8s} refused: {r['error']}", flush=True)
                        continue
                    flag = (
                        "ONE CLASS" if r["one_class"] else ("below majority" if r["accuracy"] <= r["majority"] else "")
                    )
                    print(
                        f"{data:9s} {name:18s} {r['hypothesis']:16s} {100 * r['accuracy']:6.2f}% (majority "
                        f"{100 * r['majority']:5.2f}%) |S| {r['support']:6d} {r['seconds']:6.2f} s "
                        f"warned {len(r['warnings'])} {flag}",
                        flush=True,
                    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
