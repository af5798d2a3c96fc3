"""Class weights as LIBSVM's `-w` moves them: the recall of the +1 label and the accuracy on a9a.t of
`budgetlearn train -w1 W` (its defaults otherwise: projectron++, averaged, γ = 1/k) beside LIBSVM's
`svm-train -w1 W` (libsvm-official's bindings, svm-train's defaults: C-SVC, C = 1, rbf γ = 1/#features),
for W in 1, 2, 3, 4 (issue #46's target: the weights trade the +1 label's recall as LIBSVM's do).

    python bench/class_weights.py [--weights 1,2,3,4] [--subsample N] [-a NAME] [--json FILE]

Ours: a fresh `budgetlearn train` process per weight, then `budgetlearn eval --json` on the test file.
LIBSVM trains in this process (about a minute a weight on all of a9a, 2 cores; `--subsample N` trains
both on the first N lines).  Seconds are wall seconds of the training alone (ours: the whole process).
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

TRAIN, TEST = ROOT / "sample_data" / "a9a", ROOT / "sample_data" / "a9a.t"


def ours(data: Path, w: float, algorithm: str | None, where: str) -> dict:
    model = os.path.join(where, f"w{w:g}.model")
    command = [sys.executable, "-m", "budgetcli", "train", "-q", "-w1", f"{w:g}", str(data), "-o", model]
    command[5:5] = ["-a", algorithm] if algorithm else []
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    report = json.loads(
        subprocess.run(
            [sys.executable, "-m", "budgetcli", "eval", "--json", model, str(TEST)],
            check=True,
            capture_output=True,
            text=True,
            cwd=ROOT,
        ).stdout
    )
    return {"recall": report["classes"]["+1"]["recall"], "accuracy": report["accuracy"], "seconds": seconds}


def libsvm(data: Path, w: float) -> dict | None:
    try:
        from libsvm.svmutil import svm_predict, svm_read_problem, svm_train
    except ImportError:
        return None
    y, x = svm_read_problem(str(data))
    yt, xt = svm_read_problem(str(TEST))
    started = time.perf_counter()
    model = svm_train(y, x, f"-w1 {w:g} -q")  # svm-train's defaults: -s 0 -t 2 -c 1 -g 1/#features
    seconds = time.perf_counter() - started
    predicted, _, _ = svm_predict(yt, xt, model, "-q")
    positives = [p for p, t in zip(predicted, yt) if t > 0]
    recall = sum(p > 0 for p in positives) / len(positives)
    accuracy = sum(p == t for p, t in zip(predicted, yt)) / len(yt)
    return {"recall": recall, "accuracy": accuracy, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", default="1,2,3,4", help="the weights W of the +1 label")
    parser.add_argument("--subsample", type=int, default=None, metavar="N", help="train on the first N lines")
    parser.add_argument("-a", "--algorithm", default=None, help="ours: -a NAME (default: train's default)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as where:
        data = TRAIN
        if args.subsample:
            data = Path(where, "train")
            with open(TRAIN) as f:
                data.write_text("".join(line for _, line in zip(range(args.subsample), f)))
        rows = []
        for w in (float(v) for v in args.weights.split(",")):
            rows.append({"w": w, "ours": ours(data, w, args.algorithm, where), "libsvm": libsvm(data, w)})
    examples = sum(1 for _ in open(data)) if args.subsample else 32561
    print(
        f"a9a, {examples:,} training lines, tested on a9a.t; ours: {args.algorithm or 'projectron++ (the default)'}; "
        "LIBSVM: svm-train's defaults"
    )
    print(
        "| w (-w1 w) | ours: recall of +1 | ours: accuracy | LIBSVM: recall of +1 | LIBSVM: accuracy "
        "| ours s | LIBSVM s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        cells = [f"{r['w']:g}"]
        for side in ("ours", "libsvm"):  # LIBSVM's cells: – without libsvm-official
            got = r[side]
            cells += [f"{100 * got['recall']:.2f}%", f"{100 * got['accuracy']:.2f}%"] if got else ["–", "–"]
        cells += [f"{r[side]['seconds']:.1f}" if r[side] else "–" for side in ("ours", "libsvm")]
        print("| " + " | ".join(cells) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
