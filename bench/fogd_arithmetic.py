"""FOGD's map arithmetics side by side: test accuracy over seeds, as a user gets it (`budgetlearn train -a
fogd|mc-fogd --map-arithmetic A --seed S TRAIN -o M`, then `budgetlearn eval M TEST`, fresh processes), for
the decision of issue #51: `single` (float32 map) becomes the default for new models only if its mean test
accuracy over 5 seeds is within 0.1 point of `vectorised`'s (float64, the default before) on every set.

    python bench/fogd_arithmetic.py [--seeds 5] [--sets a9a,letter,banana,mushrooms] [--arithmetics vectorised,single]
                                  [--installed]

Sets: a9a (sample_data/a9a, tested on a9a.t; fogd), letter (letter.scale, letter.scale.t; mc-fogd) and the
binary banana and mushrooms (fogd), from BUDGETLEARN_DATASETS; these two have no test file, so every
fourth line (the 4th, 8th, ...) is held out as the test set and the rest trained on, in file order.
Everything else at its default (D = 400, γ = 1/#features of the first chunk, η = 0.5, the averaged
hypothesis).  Prints per set and arithmetic the test accuracy of each seed, their mean, the mean's
difference from the first arithmetic's, the online accuracy and the train process's reading + learning
seconds (its own timing, median over the seeds; the path the loops run on is printed first).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import peers  # noqa: E402  (bench/peers.py: OURS_CWD, where our processes start; --installed)
from repro.common import dataset  # noqa: E402

SETS = {  # name: (algorithm, train file, test file; None: every fourth line of the train file)
    "a9a": ("fogd", "a9a/a9a", "a9a/a9a.t"),
    "letter": ("mc-fogd", "letter/letter.scale", "letter/letter.scale.t"),
    "banana": ("fogd", "banana/banana", None),
    "mushrooms": ("fogd", "mushrooms/mushrooms", None),
}
THRESHOLD = 0.1  # points of mean test accuracy (issue #51)


def budgetlearn(*args: str) -> str:
    p = subprocess.run([sys.executable, "-m", "budgetcli", *args], capture_output=True, text=True, cwd=peers.OURS_CWD)
    if p.returncode:
        sys.exit(f"budgetlearn {' '.join(args)} failed:\n{p.stderr[-2000:]}")
    return p.stdout


def held_out(path: str, tmp: str, name: str) -> tuple[str, str]:
    """(train, test): every fourth line held out as the test set, the others kept, in file order."""
    with open(path) as f:
        lines = [line for line in f if line.strip()]
    train, test = os.path.join(tmp, f"{name}.train"), os.path.join(tmp, f"{name}.test")
    with open(train, "w") as a, open(test, "w") as b:
        for i, line in enumerate(lines):
            (b if i % 4 == 3 else a).write(line)
    return train, test


def run(algorithm: str, arithmetic: str, seed: int, train: str, test: str, tmp: str) -> dict:
    model = os.path.join(tmp, "m.model")
    summary = json.loads(
        budgetlearn("train", "-a", algorithm, "--map-arithmetic", arithmetic, "--seed", str(seed), "-q", "--json",
                    train, "-o", model)
    )  # fmt: skip
    accuracy = json.loads(budgetlearn("eval", "--json", model, test))["accuracy"]
    return {"test": 100 * accuracy, "online": 100 * (1 - summary["online_mistake_rate"]), "seconds": summary["seconds"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--arithmetics", default="vectorised,single")
    ap.add_argument("--installed", action="store_true", help=peers.INSTALLED_HELP)
    args = ap.parse_args()
    if args.installed:
        peers.use_installed()
    arithmetics = args.arithmetics.split(",")
    print(budgetlearn("--version").splitlines()[-1], flush=True)
    verdict = True
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets.split(","):
            algorithm, train_name, test_name = SETS[name]
            train = str(dataset(train_name))
            train, test = (train, str(dataset(test_name))) if test_name else held_out(train, tmp, name)
            first = None
            for arithmetic in arithmetics:
                runs = [run(algorithm, arithmetic, seed, train, test, tmp) for seed in range(args.seeds)]
                mean = statistics.mean(r["test"] for r in runs)
                first = mean if first is None else first
                within = abs(mean - first) <= THRESHOLD
                verdict = verdict and within
                tests = " ".join(f"{r['test']:6.2f}" for r in runs)
                print(
                    f"{name:10s} {algorithm:8s} {arithmetic:10s} test {tests}  mean {mean:6.3f}% "
                    f"({mean - first:+.3f}{'' if within else ' PAST ' + str(THRESHOLD)})  online "
                    f"{statistics.mean(r['online'] for r in runs):6.3f}%  reading + learning "
                    f"{statistics.median(r['seconds'] for r in runs):.3f} s",
                    flush=True,
                )
    print(
        f"every set's mean within {THRESHOLD} point of {arithmetics[0]}'s: {'yes' if verdict else 'NO'} "
        f"({args.seeds} seeds)"
    )


if __name__ == "__main__":
    main()
