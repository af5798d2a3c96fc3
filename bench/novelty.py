"""Novelty detection (issue #49) on the issue's streams: one class of a labelled set is normal, every other
class novel.  Each learner (--algorithms: norma-novelty, fogd-novelty and nogd-novelty by default) learns
online from the normal class's training lines, their labels removed (`budgetlearn train --task novelty -a
NAME`, a fresh process), and is scored on the held-out part with every class (`budgetlearn eval
--normal-label L --json`); scikit-learn's batch OneClassSVM, with the same γ and ν, is fitted on the same
normal rows and scored on the same held-out rows, and so is LIBSVM's `svm-train -s 2` when --svm-train is
given (its AUC from its model's decision values, by LIBSVM's Python bindings).

    BUDGETLEARN_DATASETS=DIR python bench/novelty.py [--nu 0.1] [--seeds 3] [--streams letter,mushrooms,mixture]
        [--algorithms norma-novelty,fogd-novelty,nogd-novelty] [--svm-train PATH [--svm-predict PATH]]
        [--json novelty.json] [-- TRAIN FLAGS]

Flags after `--` go to every `budgetlearn train` (e.g. `-- --norma-lambda 0.01 -B 200`).

Streams (--streams): letter (letter.scale / letter.scale.t; A, E and O in turn), mushrooms
(mushrooms/mushrooms, a seeded two-thirds / one-third split; each label in turn), mixture (200,000 examples
of `budgetlearn generate novelty-mixture`, learnt whole with its 1% novelties, held out: 40,000 of another
seed; OneClassSVM is fitted on a seeded sample of --batch-limit rows, 20,000 by default, of a longer stream).
Each seed permutes the normal training rows (the online learner's order; the batch SVM does not depend on it).
Prints, per stream and learner: its AUC (mean over seeds, and its range), the fraction of the normal test rows
flagged beside ν, and the wall seconds of its train + eval processes (mean over seeds); then OneClassSVM's
and LIBSVM's AUC and normal flagged fraction.

On the mixture stream it also times, with the same γ and ν (the issue's targets; a second table, the load
average before and after):
- ours: the `budgetlearn train` and `budgetlearn eval` processes, wall and CPU time of the whole processes
  (start-up, imports and reading included), mean over seeds;
- LIBSVM (--svm-train PATH, --svm-predict PATH): `svm-train -s 2 -g G -n NU` and `svm-predict` on the held-out
  file, whole processes; its AUC from the decision values of the model svm-train wrote, by LIBSVM's own
  Python bindings (`libsvm.svmutil`; not measured when they are not installed);
- scikit-learn's OneClassSVM (the sample above), Nystroem(n_components=--components, our budget by default) +
  SGDOneClassSVM on the whole stream, and River's RBFSampler(n_components=--components) | anomaly.OneClassSVM
  (when River is installed) learnt one row at a time on the first --river-rows rows, then scoring the held-out
  rows (fit, then score): library calls in this process, the wall and CPU time of fit + score only (the data
  already in memory), so their times leave out start-up and reading that ours include.
A peer fitted on fewer rows than ours is marked so: its time would grow with the rows.
Each of our learners first runs once untimed on 1,000 rows: a checkout compiles its loops at their first use
(an installed package has them compiled), so the timed processes start as a user's do.
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

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))

from loops import fmt_load  # noqa: E402  (bench/loops.py)
from peers import measure  # noqa: E402  (bench/peers.py: a whole process's wall and CPU time, and its stdout)
from repro.common import dataset  # noqa: E402

MIXTURE = 200_000  # examples of the novelty-mixture stream (`budgetlearn generate novelty-mixture`); held out: a fifth
BATCH_LIMIT = 20_000  # training rows the batch OneClassSVM is fitted on at most (its time grows as n² or more)
RIVER_ROWS = 20_000  # rows River's OneClassSVM learns one at a time (about 1.7 ms a row with 500 components here)


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


def ours(*args):
    """A budgetlearn process of this checkout, timed whole (bench/peers.py's measure)."""
    return measure(
        [sys.executable, "-m", "budgetcli", *map(str, args)], str(ROOT), dict(os.environ, PYTHONPATH=str(ROOT))
    )


def budgetlearn(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "budgetcli", *map(str, args)], capture_output=True, text=True, env=env)
    if out.returncode:
        raise SystemExit(f"budgetlearn {' '.join(map(str, args))}: {out.stderr.strip()}")
    return out


def features(normal: list[str], test: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The normal training rows and the held-out rows as dense arrays, and the held-out labels."""
    from sklearn.datasets import load_svmlight_files

    with tempfile.TemporaryDirectory() as d:
        a, b = Path(d) / "a", Path(d) / "b"
        a.write_text("\n".join("0 " + line for line in normal) + "\n")
        b.write_text("\n".join(test) + "\n")
        X, _, Xt, yt = load_svmlight_files([str(a), str(b)])
    return X.toarray(), Xt.toarray(), yt  # scikit-learn's SVMs refuse the loader's 64-bit sparse indices


def timed(fit_score) -> tuple:
    """fit_score()'s result, and its wall and CPU seconds."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fit_score()
    return out, time.perf_counter() - t0, time.process_time() - c0


def one_class_svm(X: np.ndarray, Xt: np.ndarray, gamma: float, nu: float) -> tuple:
    """scikit-learn's batch OneClassSVM: the held-out scores, higher is more normal, wall and CPU seconds."""
    from sklearn.svm import OneClassSVM

    return timed(lambda: OneClassSVM(gamma=gamma, nu=nu).fit(X).decision_function(Xt))


def nystroem_sgd(X: np.ndarray, Xt: np.ndarray, gamma: float, nu: float, components: int) -> tuple:
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import SGDOneClassSVM
    from sklearn.pipeline import make_pipeline

    model = make_pipeline(Nystroem(gamma=gamma, n_components=components, random_state=0), SGDOneClassSVM(nu=nu))
    return timed(lambda: model.fit(X).decision_function(Xt))


def river_one_class(X: np.ndarray, Xt: np.ndarray, gamma: float, nu: float, components: int) -> tuple:
    """River's kernel one-class SVM, RBFSampler features, learnt row by row, then scoring the held-out rows.
    Its score_one is w·x − intercept, the one-class decision function: higher is more normal (though River's
    detectors' convention is the other way round), so it is taken as it is."""
    from river import anomaly, feature_extraction

    model = feature_extraction.RBFSampler(gamma=gamma, n_components=components, seed=0) | anomaly.OneClassSVM(nu=nu)

    def fit_score():
        for x in X:
            model.learn_one(dict(enumerate(x.tolist())))
        return np.array([model.score_one(dict(enumerate(x.tolist()))) for x in Xt])

    return timed(fit_score)


def libsvm_one_class(args, train: Path, test: Path, gamma: float, d: Path) -> tuple:
    """LIBSVM `-s 2` as a user runs it: svm-train, then svm-predict on the held-out file (whole processes);
    the held-out decision values of its model by LIBSVM's Python bindings (None when not installed)."""
    model = d / "libsvm.model"
    fit = measure(
        [args.svm_train, "-s", "2", "-g", repr(gamma), "-n", repr(args.nu), "-q", str(train), str(model)], str(d)
    )
    wall, cpu = fit.wall, fit.cpu
    if args.svm_predict:
        p = measure(
            [args.svm_predict, "-q", str(test), str(model), str(d / "libsvm.out")], str(d)
        )  # str: its error joins argv
        wall, cpu = wall + p.wall, cpu + p.cpu
    try:
        from libsvm.svmutil import svm_load_model, svm_predict, svm_read_problem
    except ImportError:
        return None, wall, cpu
    # the rows as svm-train read them: the bindings shift a numpy row's indices by one, the stream's start at 0
    _, rows = svm_read_problem(str(test))
    _, _, values = svm_predict([], rows, svm_load_model(str(model)), "-q")
    return np.array(values)[:, 0], wall, cpu  # one-class decision values are f(x) − ρ: higher is more normal


def auc_flagged(scores: np.ndarray, is_normal: np.ndarray) -> tuple[float, float]:
    from sklearn.metrics import roc_auc_score

    return roc_auc_score(is_normal, scores), float(np.mean(scores[is_normal] <= 0))


def timing_table(args, train: list[str], test: list[str], normal: list[str], label: str, gamma: float, ours) -> list:
    """The mixture stream's peers against ours (`ours`: each learner's AUCs, walls and CPU seconds per seed)."""
    X, Xt, yt = features(normal, test)
    is_normal = yt == float(label)
    peers = []  # (name, rows fitted, AUC, wall, CPU, how timed)
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        if args.svm_train:
            (d / "train").write_text("\n".join(train) + "\n")
            (d / "test").write_text("\n".join(test) + "\n")
            scores, wall, cpu = libsvm_one_class(args, d / "train", d / "test", gamma, d)
            auc = auc_flagged(scores, is_normal)[0] if scores is not None else float("nan")
            how = "svm-train" + (" + svm-predict" if args.svm_predict else "") + ", processes"
            peers.append(("LIBSVM -s 2", len(X), auc, wall, cpu, how))
    sample = X
    if args.batch_limit and len(X) > args.batch_limit:
        sample = X[np.sort(np.random.default_rng(0).choice(len(X), args.batch_limit, replace=False))]
    scores, wall, cpu = one_class_svm(sample, Xt, gamma, args.nu)
    peers.append(("OneClassSVM", len(sample), auc_flagged(scores, is_normal)[0], wall, cpu, "fit + score, call"))
    scores, wall, cpu = nystroem_sgd(X, Xt, gamma, args.nu, args.components)
    name = f"Nystroem({args.components}) + SGDOneClassSVM"
    peers.append((name, len(X), auc_flagged(scores, is_normal)[0], wall, cpu, "fit + score, call"))
    try:
        import river  # noqa: F401
    except ImportError:
        print("River is not installed: its OneClassSVM not measured")
    else:
        rows = X[: args.river_rows] if args.river_rows else X
        scores, wall, cpu = river_one_class(rows, Xt, gamma, args.nu, args.components)
        name = f"River RBFSampler({args.components}) | OneClassSVM"
        peers.append((name, len(rows), auc_flagged(scores, is_normal)[0], wall, cpu, "learn, then score, call"))
    print(f"\nmixture, the issue's targets: γ = {gamma:.6g}, ν = {args.nu}; times in seconds; ratio: our wall / theirs")
    print(f"{'':38} {'rows':>8} {'AUC':>7} {'wall':>8} {'CPU':>8}  ratio (each of ours)  timed as")
    for algorithm, (aucs, walls, cpus) in ours.items():
        print(
            f"{algorithm + ' (' + str(len(aucs)) + ' seeds)':38} {len(X):>8} {np.mean(aucs):>7.4f} "
            f"{np.mean(walls):>8.2f} {np.mean(cpus):>8.2f}  {'':20}  train + eval, processes"
        )
    out = []
    for name, rows, auc, wall, cpu, how in peers:
        fewer = " (fewer rows)" if rows < len(X) else ""
        ratios = " ".join(f"{np.mean(w) / wall:.3f}" for _, w, _ in ours.values())
        print(f"{name:38} {rows:>8} {auc:>7.4f} {wall:>8.2f} {cpu:>8.2f}  {ratios:20}  {how}{fewer}")
        out.append({"peer": name, "rows": rows, "auc": auc, "wall": wall, "cpu": cpu, "timed_as": how})
    return out


def learn_and_score(args, algorithm: str, normal: list[str], held_out: Path, label: str, d: Path) -> dict:
    """`algorithm` over each seed's permutation of the normal rows (train, then eval on the held-out rows,
    fresh processes): AUCs, flagged fractions of the normal held-out rows, wall and CPU seconds, γ."""
    out = {"auc": [], "normal_flagged": [], "wall": [], "cpu": []}
    # one untimed run on a few rows first: a checkout compiles its loops into numba's cache at their first
    # use, once (an installed package has them compiled already); the timed runs then load them as a user's do
    warm = d / "warm"
    warm.write_text("\n".join(normal[:1000]) + "\n")
    ours("train", "--task", "novelty", "-a", algorithm, "--nu", args.nu, *args.train_flags, warm, "-o", d / "w.model")
    ours("eval", "--normal-label", label, d / "w.model", held_out)
    for seed in range(args.seeds):
        order = np.random.default_rng(seed).permutation(len(normal))
        data, model = d / "normal", d / "m.model"
        data.write_text("\n".join(normal[i] for i in order) + "\n")
        flags = ("--task", "novelty", "-a", algorithm, "--nu", args.nu, *args.train_flags)
        fit = ours("train", *flags, data, "-o", model, "--json")
        score = ours("eval", "--json", "--normal-label", label, model, held_out)
        summary, report = json.loads(fit.out), json.loads(score.out)
        out["auc"].append(report["auc"])
        out["normal_flagged"].append(report["flagged_normal_fraction"])
        out["wall"].append(fit.wall + score.wall)
        out["cpu"].append(fit.cpu + score.cpu)
    out["gamma"] = summary["kernel"]["gamma"]
    return out


def libsvm_scores(args, normal: list[str], test: list[str], gamma: float):
    """LIBSVM -s 2's held-out decision values, trained on the normal rows (None without its Python bindings)."""
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "train").write_text("\n".join("1 " + line for line in normal) + "\n")
        (d / "test").write_text("\n".join(test) + "\n")
        return libsvm_one_class(args, d / "train", d / "test", gamma, d)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nu", type=float, default=0.1)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", dest="json_path")
    parser.add_argument("--streams", default="letter,mushrooms", help="of letter, mushrooms, mixture")
    parser.add_argument("--algorithms", default="norma-novelty,fogd-novelty,nogd-novelty", help="our learners")
    parser.add_argument("--svm-train", help="LIBSVM's svm-train, timed on the mixture stream")
    parser.add_argument("--svm-predict", help="LIBSVM's svm-predict, timed with svm-train on the mixture stream")
    parser.add_argument("--batch-limit", type=int, default=BATCH_LIMIT, help="OneClassSVM's rows at most (0: all)")
    parser.add_argument("--river-rows", type=int, default=RIVER_ROWS, help="River's rows on the mixture (0: all)")
    parser.add_argument("--components", type=int, default=500, help="Nystroem's and RBFSampler's features")
    parser.add_argument("train_flags", nargs="*", help="after --: more flags of every train")
    args = parser.parse_args()
    rows = []
    print(f"load average {fmt_load(os.getloadavg())}")
    print(f"{'stream':<14} {'learner':<18} {'AUC':>7} {'(range)':>15} {'flagged':>8} {'wall s':>7}")
    for name, train, test, label, normal_only in streams(args.streams.split(",")):
        normal = [line.split(" ", 1)[1] for line in train if line.split()[0] == label or not normal_only]
        row = {"stream": name, "normal_training_rows": len(normal), "nu": args.nu, "learners": {}}
        with tempfile.TemporaryDirectory() as d:
            held_out = Path(d) / "test"
            held_out.write_text("\n".join(test) + "\n")
            for algorithm in args.algorithms.split(","):
                ran = row["learners"][algorithm] = learn_and_score(args, algorithm, normal, held_out, label, Path(d))
                aucs = ran["auc"]
                print(
                    f"{name:<14} {algorithm:<18} {np.mean(aucs):>7.4f} {f'({min(aucs):.4f}-{max(aucs):.4f})':>15} "
                    f"{np.mean(ran['normal_flagged']):>8.3f} {np.mean(ran['wall']):>7.2f}"
                )
        gamma = row["gamma"] = ran["gamma"]
        if name != "mixture":  # the mixture's peers are in its own table below
            X, Xt, yt = features(normal, test)
            peers = {"OneClassSVM": one_class_svm(X, Xt, gamma, args.nu)[0]}
            if args.svm_train:
                peers["LIBSVM -s 2"] = libsvm_scores(args, normal, test, gamma)
            for peer, scores in peers.items():
                auc, flagged = auc_flagged(scores, yt == float(label)) if scores is not None else (np.nan, np.nan)
                row[peer] = {"auc": auc, "normal_flagged": flagged}
                print(f"{name:<14} {peer:<18} {auc:>7.4f} {'':>15} {flagged:>8.3f}")
        rows.append(row)
        if name == "mixture":
            ours_runs = {a: (r["auc"], r["wall"], r["cpu"]) for a, r in row["learners"].items()}
            row["peers"] = timing_table(args, train, test, normal, label, gamma, ours_runs)
    print(f"load average {fmt_load(os.getloadavg())}")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
