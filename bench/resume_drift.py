"""Resuming a compact model (issue #17): how many decisions of the second day differ from one
uninterrupted run, when the resume state (K⁻¹ and the like) is rebuilt from the support vectors
instead of read from a --save-resume model.

    python bench/resume_drift.py [A9A (default sample_data/a9a)] [--letter FILE (default
                                 $BUDGETLEARN_DATASETS/letter/letter.scale; skipped without it)]

The stream is cut in two halves ("days").  Both runs learn day 1 identically; one goes on over day 2
with its kept state, the other from a compact model file of day 1 (saved, loaded, the state
rebuilt by one Cholesky factorisation).  A decision is a round's outcome, mistake or not; the figure
is the number of day-2 rounds whose outcome differs, with each run's mistakes and support size.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from budgetcli.base import registry  # noqa: E402
from budgetcli.io.libsvm import read_all  # noqa: E402
from budgetcli.numerics.kernels import Kernel  # noqa: E402
from budgetcli.learning.labels import BinaryLabels, MulticlassLabels  # noqa: E402
from budgetcli.model.model import Model  # noqa: E402
from repro.common import dataset  # noqa: E402

CASES = [  # (data, algorithm, γ, parameters)
    ("a9a", "projectron++", 0.04, {"eta": 0.1}),
    ("a9a", "projectron", 0.04, {"eta": 0.1}),
    ("a9a", "rbsop", 0.04, {"budget": 300}),
    ("letter", "mc-projectron++", 0.5, {"eta": 0.5}),
    ("letter", "bpegasos", 0.5, {"budget": 300, "maintenance": "project"}),
]


def outcomes(learner, chunk, y) -> list[bool]:
    """Learn the chunk one example at a time; per round, whether it was a mistake."""
    out = []
    for t in range(len(chunk)):
        before = learner.counter("mistakes")
        learner.learn(chunk.take(np.arange(t, t + 1)), y[t : t + 1])
        out.append(learner.counter("mistakes") > before)
    return out


def case(path: str, algorithm: str, gamma: float, params: dict, tmp: str) -> str:
    chunk = read_all(path)
    cls = registry.get(algorithm)
    labels = MulticlassLabels() if cls.multiclass else BinaryLabels()
    y = labels.encode(chunk, path)
    half = len(chunk) // 2
    day1, day2 = chunk.take(np.arange(half)), chunk.take(np.arange(half, len(chunk)))
    kept = cls(Kernel("rbf", gamma), seed=1, **params)
    kept.learn(day1, y[:half])
    file = os.path.join(tmp, "day1.model")
    Model(kept, labels).save(file)  # compact
    rebuilt = Model.load(file, resume=True).learner
    assert rebuilt.stale, "the compact model should leave the resume state to rebuild"
    a = outcomes(kept, day2, y[half:])
    b = outcomes(rebuilt, day2, y[half:])
    differ = sum(x != z for x, z in zip(a, b))
    return (
        f"{algorithm:<16} {os.path.basename(path):<14} day 2: {len(a):,} rounds, {differ:,} outcomes differ "
        f"({100 * differ / len(a):.3f}%); mistakes kept {sum(a):,} / rebuilt {sum(b):,}; |S| kept "
        f"{len(kept.support):,} / rebuilt {len(rebuilt.support):,}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a9a", nargs="?", default=str(dataset("a9a/a9a")))
    ap.add_argument("--letter", default=None)
    args = ap.parse_args()
    letter = args.letter or (str(dataset("letter/letter.scale")) if os.environ.get("BUDGETLEARN_DATASETS") else None)
    with tempfile.TemporaryDirectory() as tmp:
        for data, algorithm, gamma, params in CASES:
            path = args.a9a if data == "a9a" else letter
            if path is None:
                print(f"{algorithm}: skipped (no letter: set BUDGETLEARN_DATASETS or give --letter)")
                continue
            print(case(path, algorithm, gamma, params, tmp), flush=True)


if __name__ == "__main__":
    main()
