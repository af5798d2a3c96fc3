"""Novelty detection (issue #49) on the issue's streams: one class of a labelled set is normal, every other
class novel.  norma-novelty learns online from the normal class's training lines, their labels removed
(`budgetlearn train --task novelty`, a fresh process), and is scored on the held-out part with every class
(`budgetlearn eval --normal-label L --json`); scikit-learn's batch OneClassSVM, with the same γ and ν, is fitted
on the same normal rows and scored on the same held-out rows.

    BUDGETLEARN_DATASETS=DIR python bench/novelty.py [--nu 0.1] [--seeds 3] [--streams letter,mushrooms,mixture]
        [--json novelty.json] [-- TRAIN FLAGS]

Flags after `--` go to every `budgetlearn train` (e.g. `-- --norma-lambda 0.01 -B 200`).

Streams (--streams): letter (letter.scale / letter.scale.t; A, E and O in turn), mushrooms
(mushrooms/mushrooms, a seeded two-thirds / one-third split; each label in turn), mixture (200,000 examples
of `budgetlearn generate novelty-mixture`, learnt whole with its 1% novelties, held out: 40,000 of another
seed; OneClassSVM is not fitted on more than 20,000 rows).  Each seed permutes the normal training rows (the online
learner's order; the batch SVM does not depend on it).  Prints, per stream: our AUC (mean over seeds, and its
range), the fraction of the normal test rows flagged beside ν, and OneClassSVM's AUC and normal flagged fraction.
Not measured here yet: times (the issue's 200,000-example stream), LIBSVM `-s 2`, River and SGDOneClassSVM.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from repro.common import dataset  # noqa: E402

MIXTURE = 200_000  # examples of the novelty-mixture stream (`budgetlearn generate novelty-mixture`); held out: a fifth
BATCH_LIMIT = 20_000  # training rows above which the batch OneClassSVM is not fitted (its time grows as n² or more)


def read_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


def generated(n: int, seed: int) -> list[str]:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "mixture"
        budgetlearn("generate", "novelty-mixture", "-n", n, "--seed", seed, "-o", path)
        return read_lines(path)


def streams(names: list[str]) -> list[tuple[str, list[str], list[str], str, bool]]:
    """(name, training lines, held-out lines, the normal label, whether to learn from the normal lines
    only) of every stream named."""
    out = []
    if "letter" in names:
        train, test = read_lines(dataset("letter/letter.scale")), read_lines(dataset("letter/letter.scale.t"))
        for letter in "AEO":
            out.append((f"letter {letter}", train, test, str(ord(letter) - ord("A") + 1), True))
    if "mushrooms" in names:
        rows = read_lines(dataset("mushrooms/mushrooms"))
        order = np.random.default_rng(49).permutation(len(rows))
        cut = 2 * len(rows) // 3
        train, test = [rows[i] for i in order[:cut]], [rows[i] for i in order[cut:]]
        for label in sorted({line.split()[0] for line in rows}):
            out.append((f"mushrooms {label}", train, test, label, True))
    if "mixture" in names:  # the whole stream, its 1% novelties in it, as a stream comes
        out.append(("mixture", generated(MIXTURE, 0), generated(MIXTURE // 5, 1), "+1", False))
    return out


def budgetlearn(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "budgetcli", *map(str, args)], capture_output=True, text=True, env=env)
    if out.returncode:
        raise SystemExit(f"budgetlearn {' '.join(map(str, args))}: {out.stderr.strip()}")
    return out


def one_class_svm(normal: list[str], test: list[str], normal_label: str, gamma: float, nu: float) -> tuple:
    from sklearn.datasets import load_svmlight_files
    from sklearn.metrics import roc_auc_score
    from sklearn.svm import OneClassSVM

    with tempfile.TemporaryDirectory() as d:
        a, b = Path(d) / "a", Path(d) / "b"
        a.write_text("\n".join("0 " + line for line in normal) + "\n")
        b.write_text("\n".join(test) + "\n")
        X, _, Xt, yt = load_svmlight_files([str(a), str(b)])
    X, Xt = X.toarray(), Xt.toarray()  # scikit-learn's SVMs refuse the loader's 64-bit sparse indices
    g = OneClassSVM(gamma=gamma, nu=nu).fit(X).decision_function(Xt)
    is_normal = yt == float(normal_label)
    return roc_auc_score(is_normal, g), float(np.mean(g[is_normal] <= 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nu", type=float, default=0.1)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", dest="json_path")
    parser.add_argument("--streams", default="letter,mushrooms", help="of letter, mushrooms, mixture")
    parser.add_argument("train_flags", nargs="*", help="after --: more flags of every train")
    args = parser.parse_args()
    rows = []
    print(f"{'stream':<14} {'ours AUC':>9} {'(range)':>17} {'flagged':>8}  {'OneClassSVM AUC':>15} {'flagged':>8}")
    for name, train, test, label, normal_only in streams(args.streams.split(",")):
        normal = [line.split(" ", 1)[1] for line in train if line.split()[0] == label or not normal_only]
        aucs, flagged = [], []
        with tempfile.TemporaryDirectory() as d:
            held_out = Path(d) / "test"
            held_out.write_text("\n".join(test) + "\n")
            for seed in range(args.seeds):
                order = np.random.default_rng(seed).permutation(len(normal))
                data, model = Path(d) / "normal", Path(d) / "m.model"
                data.write_text("\n".join(normal[i] for i in order) + "\n")
                summary = json.loads(
                    budgetlearn(
                        "train", "--task", "novelty", "--nu", args.nu, *args.train_flags, data, "-o", model, "--json"
                    ).stdout
                )
                report = json.loads(budgetlearn("eval", "--json", "--normal-label", label, model, held_out).stdout)
                aucs.append(report["auc"])
                flagged.append(report["flagged_normal_fraction"])
        gamma = summary["kernel"]["gamma"]
        svm_auc = svm_flagged = float("nan")
        if len(normal) <= BATCH_LIMIT:
            svm_auc, svm_flagged = one_class_svm(normal, test, label, gamma, args.nu)
        rows.append(
            {
                "stream": name,
                "normal_training_rows": len(normal),
                "gamma": gamma,
                "nu": args.nu,
                "auc": aucs,
                "normal_flagged": flagged,
                "one_class_svm_auc": svm_auc,
                "one_class_svm_normal_flagged": svm_flagged,
            }
        )
        print(
            f"{name:<14} {np.mean(aucs):>9.4f} {f'({min(aucs):.4f}-{max(aucs):.4f})':>17} {np.mean(flagged):>8.3f}  "
            f"{svm_auc:>15.4f} {svm_flagged:>8.3f}"
        )
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
