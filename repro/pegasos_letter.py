"""Multiclass Pegasos paper (Wang, Crammer, Vucetic, ICML 2010), Table 1 rows: one online pass of
bpegasos with each budget maintenance (merge, project, smallest, random) at B = 100 and 500,
λ = 1e-4, and the multiclass Projectron++ at the same size; Gaussian kernel with γ from the paper's
grid {2⁰, 2², 2⁴, 2⁶}/d; test accuracy, mean ± std over permutations of the training stream.

    python -m repro.pegasos_letter [TRAIN TEST]    # default: letter/letter.scale and .t under $BUDGETLEARN_DATASETS
    python -m repro.pegasos_letter --generate checkerboard 20000 10000
    python -m repro.pegasos_letter --generate waveform 20000 10000

Protocol (repro/common.py): permutation p of the training set is `common.permutation(n, p)`,
p = --seed … --seed + --permutations − 1 (the paper: 5 permutations).  The paper optimised γ "for
each combination of data set, algorithm and budget" on the test accuracy; we do the same on the
first permutation only (all four γ) and run the other permutations at that γ (running the grid on
every permutation would cost 4× the CPU).  Projectron++ ("mc-projectron++", Orabona et al. §5):
the paper "set the Projectron++ threshold such that the number of SVs is equal to B ... at the end
of training"; for each γ of the grid we bisect η on the first permutation (--eta-steps halvings of
log(√2 − η), keeping the η whose final |S| is closest to B, stopping within 2% of B), keep the γ
(and its η) of the best test accuracy among those whose |S| came within 5% of B (a large γ may
not get down to B at any η < √2), and run the other permutations at them.  |S| of Projectron++
counts stored (vector, class) pairs; a bpegasos SV holds one vector with a coefficient per class.
The generated sets use --seed for the training draw and --seed + 1 for the test draw.

Verdicts: ours is within when our mean ± std overlaps the paper's mean ± std.  The claims checked:
merge and project above smallest and random at every B, and above Projectron++ (the paper:
"BPegasosM with merging and projection significantly outperformed both their removal cousin and
Projectron++").  Writes docs/repro/pegasos_<data>.csv and .png (--out).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from budgetcli.base import registry
from budgetcli.io.libsvm import read_all
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.labels import MulticlassLabels
from budgetcli.run.synthetic import GENERATORS
from repro import common
from repro.projectron_fig6 import claim

MODES = ("merge", "project", "smallest", "random")
PPP = "projectron++"
# Table 1 test accuracy %, (mean, std) at B = 100 and 500: BPM+MRG, +PROJ, +SMAL, +RAND, PRJTRN++
PAPER = {
    "letter": {
        "merge": ((72.0, 1.3), (89.5, 0.3)),
        "project": ((76.3, 0.9), (87.3, 0.6)),
        "smallest": ((41.7, 0.7), (68.5, 1.1)),
        "random": ((39.9, 1.8), (68.1, 0.8)),
        PPP: ((46.3, 1.8), (76.6, 1.1)),
    },
    "checkerboard": {
        "merge": ((99.5, 0.1), (99.8, 0.0)),
        "project": ((98.2, 0.3), (99.0, 0.2)),
        "smallest": ((83.9, 1.1), (90.9, 0.5)),
        "random": ((83.6, 1.0), (90.3, 0.4)),
        PPP: ((96.9, 0.4), (98.2, 0.3)),
    },
    "waveform": {
        "merge": ((85.9, 0.6), (86.9, 0.1)),
        "project": ((85.0, 0.4), (86.1, 0.2)),
        "smallest": ((79.1, 2.9), (82.9, 1.0)),
        "random": ((79.1, 1.1), (82.7, 0.6)),
        PPP: ((80.7, 0.8), (83.5, 0.5)),
    },
}


def paper_value(data: str, algorithm: str, budget: int):
    table = PAPER.get(data, {}).get(algorithm)
    return None if table is None or budget not in (100, 500) else table[(100, 500).index(budget)]


def accuracy(learner, labels, test) -> float:
    pred = np.array(labels.classes)[labels.predict_index(learner.decision_function(test))]
    return float(np.mean(pred == test.labels))


def one_pass(algo: str, gamma: float, train, test, seed: int, **params) -> tuple[float, int, float]:
    """Test accuracy, final |S| and loop seconds of one pass over `train`."""
    labels = MulticlassLabels()
    y = labels.encode(train)
    learner = registry.get(algo)(Kernel("rbf", gamma), seed=seed, **params)
    t0 = time.perf_counter()
    learner.learn(train, y)
    return accuracy(learner, labels, test), len(learner.support), time.perf_counter() - t0


def eta_for_size(gamma: float, train, test, budget: int, steps: int) -> tuple[float, tuple]:
    """η of mc-projectron++ whose final |S| on `train` is closest to `budget`, and that pass's
    (accuracy, |S|, seconds).  |S| shrinks as η grows, and ‖δ‖² = ‖δ_y‖² + ‖δ_r‖² ≤ 2 for an rbf
    kernel, so η ≥ √2 would project every update; budgets of a few hundred sit just below √2, so the
    bisection runs on log(√2 − η) between 1e-5 and √2 (the passes with small η are slow)."""
    top = float(np.sqrt(2))
    lo, hi, best = np.log(1e-5), np.log(top), (np.inf, top / 2, None)  # lo: large η (few SVs)
    for _ in range(steps):
        eta = top - float(np.exp((lo + hi) / 2))
        res = one_pass("mc-projectron++", gamma, train, test, 0, eta=eta)
        print(f"    projectron++ γ={gamma:.4g} η={eta:.6f}: |S| = {res[1]}, accuracy {100 * res[0]:.1f}", flush=True)
        if abs(res[1] - budget) < best[0]:
            best = (abs(res[1] - budget), eta, res)
        if res[1] > budget:  # too many vectors: move η up, i.e. √2 − η down
            hi = (lo + hi) / 2
        else:
            lo = (lo + hi) / 2
        if abs(res[1] - budget) <= 0.02 * budget:  # close enough: the paper matched the sizes, not to the vector
            break
    return best[1], best[2]


def row(name, B, algo, gamma, perms, results, extra=None):
    acc_m, acc_s = common.mean_std([r[0] for r in results])
    sup_m, sup_s = common.mean_std([r[1] for r in results])
    paper = paper_value(name, algo, B)
    return {
        "data": name,
        "budget": B,
        "algorithm": algo,
        "gamma": gamma,
        "permutations": len(perms),
        "accuracy_mean": acc_m,
        "accuracy_std": acc_s,
        "accuracy_per_permutation": json.dumps([r[0] for r in results]),
        "support_mean": sup_m,
        "support_std": sup_s,
        "seconds_mean": common.mean_std([r[2] for r in results])[0],
        "paper_accuracy": "" if paper is None else paper[0] / 100,
        "paper_std": "" if paper is None else paper[1] / 100,
        "verdict": "n/a"
        if paper is None
        else common.verdict(acc_m, acc_s, paper[0] / 100, (paper[0] - paper[1]) / 100, (paper[0] + paper[1]) / 100),
        "eta": "",
        "grid_accuracy_first_permutation": "",
    } | (extra or {})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("train", nargs="?")
    ap.add_argument("test", nargs="?")
    ap.add_argument(
        "--generate",
        nargs=3,
        metavar=("GENERATOR", "N_TRAIN", "N_TEST"),
        help="use a synthetic stream of budgetcli.run.synthetic instead of files (test seed = train seed + 1)",
    )
    ap.add_argument("--budgets", type=int, nargs="+", default=[100, 500])
    ap.add_argument("--maintenance", nargs="+", default=list(MODES))
    ap.add_argument("--lam", type=float, default=1e-4)
    ap.add_argument("--grid", type=float, nargs="+", default=[1, 4, 16, 64], help="γ·d values (paper: 2⁰ 2² 2⁴ 2⁶)")
    ap.add_argument("--seed", type=int, default=0, help="first permutation of the training stream (and generator seed)")
    ap.add_argument("--permutations", type=int, default=5)
    ap.add_argument("--no-projectron", action="store_true", help="leave out the Projectron++ column")
    ap.add_argument("--eta-steps", type=int, default=12, help="bisection steps for Projectron++'s η")
    ap.add_argument("--out", type=Path, default=common.OUT)
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args()
    if args.generate:
        gen, n_train, n_test = args.generate[0], int(args.generate[1]), int(args.generate[2])
        train = common.chunk_from_dense(*GENERATORS[gen](n_train, seed=args.seed))
        test = common.chunk_from_dense(*GENERATORS[gen](n_test, seed=args.seed + 1))
        name = gen
    else:
        if bool(args.train) != bool(args.test):
            ap.error("give TRAIN and TEST files, or neither for letter, or --generate")
        paths = (
            (args.train, args.test)
            if args.train
            else (common.dataset("letter/letter.scale"), common.dataset("letter/letter.scale.t"))
        )
        train, test = read_all(paths[0]), read_all(paths[1])
        name = Path(paths[0]).name.split(".")[0]
    d = max(train.n_features, test.n_features)
    perms = list(range(args.seed, args.seed + args.permutations))
    streams = [train.take(common.permutation(len(train), p)) for p in perms]
    print(
        f"{name}: {len(train)} training, {len(test)} test examples, d = {d}, λ = {args.lam:g}, permutations {perms}",
        flush=True,
    )
    rows, chosen = [], {}
    for B in args.budgets:
        for mode in args.maintenance:
            grid = [
                one_pass("bpegasos", g / d, streams[0], test, perms[0], lambda_=args.lam, budget=B, maintenance=mode)
                for g in args.grid
            ]
            best = int(np.argmax([r[0] for r in grid]))
            gamma = chosen[B, mode] = args.grid[best] / d
            results = [grid[best]] + [
                one_pass("bpegasos", gamma, s, test, p, lambda_=args.lam, budget=B, maintenance=mode)
                for p, s in zip(perms[1:], streams[1:])
            ]
            rows.append(
                row(
                    name,
                    B,
                    mode,
                    gamma,
                    perms,
                    results,
                    {"grid_accuracy_first_permutation": json.dumps([r[0] for r in grid])},
                )
            )
        if not args.no_projectron:  # γ from the grid as for bpegasos, each with its own η for |S| ≈ B
            fits = {g / d: eta_for_size(g / d, streams[0], test, B, args.eta_steps) for g in args.grid}
            # only a γ whose |S| reached B (within 5%) is a fair comparison; none: the closest size
            fair = [g for g in fits if abs(fits[g][1][1] - B) <= 0.05 * B]
            gamma = max(fair, key=lambda g: fits[g][1][0]) if fair else min(fits, key=lambda g: abs(fits[g][1][1] - B))
            eta = fits[gamma][0]
            results = [fits[gamma][1]] + [
                one_pass("mc-projectron++", gamma, s, test, p, eta=eta) for p, s in zip(perms[1:], streams[1:])
            ]
            rows.append(
                row(
                    name,
                    B,
                    PPP,
                    gamma,
                    perms,
                    results,
                    {"eta": eta, "grid_accuracy_first_permutation": json.dumps([fits[g][1][0] for g in fits])},
                )
            )
        for r in rows:
            if r["budget"] == B:
                paper = (
                    ""
                    if r["paper_accuracy"] == ""
                    else (f"   paper {100 * r['paper_accuracy']:.1f} ± {100 * r['paper_std']:.1f} -> {r['verdict']}")
                )
                print(
                    f"B={B:4d} {r['algorithm']:13s} γ={r['gamma']:.4g}  acc {100 * r['accuracy_mean']:5.1f} ± "
                    f"{100 * r['accuracy_std']:.1f}  |S| {r['support_mean']:.0f}  {r['seconds_mean']:.1f} s{paper}",
                    flush=True,
                )
    for B in args.budgets:
        acc = {r["algorithm"]: r["accuracy_mean"] for r in rows if r["budget"] == B}
        if set(MODES) <= set(acc):
            claim(
                f"B={B}: merge and project above smallest and random",
                min(acc["merge"], acc["project"]) > max(acc["smallest"], acc["random"]),
            )
        if {"merge", "project", PPP} <= set(acc):
            claim(
                f"B={B}: merge and project above Projectron++ at the same size",
                min(acc["merge"], acc["project"]) > acc[PPP],
            )
    print("table:", common.relative(common.write_csv(args.out / f"pegasos_{name}.csv", rows)))
    if not args.no_plot:
        series = {}
        for algo in dict.fromkeys(r["algorithm"] for r in rows):
            mine = [r for r in rows if r["algorithm"] == algo]
            series[algo] = (
                [r["budget"] for r in mine],
                [r["accuracy_mean"] for r in mine],
                [r["accuracy_std"] for r in mine],
            )
        print(
            "figure:",
            common.relative(
                common.plot_xy(
                    args.out / f"pegasos_{name}.png",
                    series,
                    "budget B",
                    "test accuracy",
                    f"{name}: multiclass Pegasos Table 1",
                    logx=True,
                )
            ),
        )


if __name__ == "__main__":
    main()
