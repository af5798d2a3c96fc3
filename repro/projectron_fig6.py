"""Projectron paper (Orabona, Keshet, Caputo, JMLR 2009), Fig. 6: a9a, rbf γ = 0.04, one online
pass over 5 permutations; average online error and support size vs examples for Perceptron,
Projectron, Projectron++, RBP and Forgetron (B = Projectron's final size) and PA-I (C = 1).

    python -m repro.projectron_fig6 [TRAIN (default sample_data/a9a)] [--test sample_data/a9a.t]
                                    [--norm-convention] [--permutations 5]

η: the paper writes ‖δ‖ ≤ η = 0.1 but ran DOGMA, which compares ‖δ‖² with η, so its runs are our
η = √0.1 ("DOGMA convention", the default here).  --norm-convention adds the runs at our η = 0.1
(the paper's text; ~50 s and ~120 s per pass).  B for RBP, LBP and Forgetron is the mean final size
of our Projectron in the DOGMA convention (the paper: "B = final size of Projectron", 793).

With --test, also the test accuracy of the last hypothesis of every run.
Writes docs/repro/fig6_curves.csv, fig6_summary.csv and fig6.png, and prints ours beside the
paper's value (|S| = 793; no spread published: within ±5%) and the figure's claims.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from budgetcli.io.libsvm import read_all
from budgetcli.numerics.kernels import Kernel
from repro import common

DOGMA_ETA = math.sqrt(0.1)
SIZE_TOLERANCE = 0.05  # relative, for published support sizes without a spread


def curves_experiment(
    data,
    gamma: float,
    runs: list[tuple[str, str, dict]],
    permutations: int,
    step: int,
    budget_from: str | None = None,
    test=None,
) -> dict[str, list]:
    """runs: (label, algorithm, params); params {"budget": None} takes B from the mean final size of
    the run labelled `budget_from` (run earlier in the list).  Returns label -> list of Runs."""
    out: dict[str, list] = {}
    for label, algo, params in runs:
        params = dict(params)
        if params.get("budget", 0) is None:
            params["budget"] = int(round(np.mean([r.support[-1] for r in out[budget_from]])))
        res = []
        for p in range(permutations):
            stream = data.take(common.permutation(len(data), p))
            learner = common.make_learner(algo, Kernel("rbf", gamma), seed=p, **params)
            run = common.online_run(learner, stream, step=step)
            if test is not None:
                run.test_accuracy = 1 - common.error_rate(learner, test)
            run.learner = None  # free the model: only the curves are kept
            res.append(run)
        out[label] = res
        err = common.mean_std([r.online_error[-1] for r in res])
        sup = common.mean_std([r.support[-1] for r in res])
        acc = "" if test is None else f"   test accuracy {100 * np.mean([r.test_accuracy for r in res]):.2f}%"
        print(
            f"{label:28s} online error {100 * err[0]:6.2f}% ± {100 * err[1]:.2f}   |S| {sup[0]:7.1f} ± {sup[1]:5.1f}"
            f"   {np.mean([r.seconds for r in res]):6.1f} s/pass{acc}",
            flush=True,
        )
    return out


def summary_rows(curves: dict[str, list], paper: dict[str, float]) -> list[dict]:
    rows = []
    for label, res in curves.items():
        err = common.mean_std([r.online_error[-1] for r in res])
        sup = common.mean_std([r.support[-1] for r in res])
        pv = paper.get(label)
        rows.append(
            {
                "algorithm": label,
                "online_error_mean": err[0],
                "online_error_std": err[1],
                "support_mean": sup[0],
                "support_std": sup[1],
                "seconds_per_pass": float(np.mean([r.seconds for r in res])),
                "test_accuracy_mean": float(np.mean([r.test_accuracy for r in res]))
                if res[0].test_accuracy is not None
                else "",
                "paper_support": "" if pv is None else pv,
                "verdict": "" if pv is None else common.verdict(*sup, pv, tolerance=SIZE_TOLERANCE * pv),
            }
        )
    return rows


def write_and_print_sizes(out: Path, figure: str, curves: dict[str, list], rows: list[dict], digits: int) -> None:
    """FIGURE_summary.csv and FIGURE_curves.csv in `out`, then our support sizes beside the paper's."""
    common.write_csv(out / f"{figure}_summary.csv", rows)
    common.write_csv(
        out / f"{figure}_curves.csv", [r for label, res in curves.items() for r in common.curve_rows(label, res)]
    )
    for r in rows:
        if r["paper_support"] != "":
            print(
                f"{r['algorithm']}: |S| ours {r['support_mean']:.{digits}f} ± {r['support_std']:.{digits}f}, "
                f"paper {r['paper_support']} -> {r['verdict']}"
            )


def final(curves, label, key="online_error"):
    return float(np.mean([getattr(r, key)[-1] for r in curves[label]]))


def claim(text: str, holds: bool) -> str:
    line = f"claim: {text}: {'holds' if holds else 'FAILS'}"
    print(line)
    return line


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("train", nargs="?", default=str(common.dataset("a9a/a9a")))
    ap.add_argument("--test", help="test file: report the last hypothesis' accuracy on it")
    ap.add_argument("--permutations", type=int, default=5)
    ap.add_argument("--gamma", type=float, default=0.04)
    ap.add_argument("--step", type=int, default=1000, help="examples between two curve points")
    ap.add_argument("--norm-convention", action="store_true", help="also run η = 0.1 as ‖δ‖ ≤ 0.1 (slow)")
    ap.add_argument("--out", type=Path, default=common.OUT)
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args()
    data = read_all(args.train)
    test = read_all(args.test) if args.test else None
    P = "projectron (η=√0.1, DOGMA 0.1)"
    runs = [
        ("perceptron", "perceptron", {}),
        (P, "projectron", {"eta": DOGMA_ETA}),
        ("projectron++ (η=√0.1)", "projectron++", {"eta": DOGMA_ETA}),
    ]
    if args.norm_convention:
        runs += [
            ("projectron (η=0.1, norm)", "projectron", {"eta": 0.1}),
            ("projectron++ (η=0.1, norm)", "projectron++", {"eta": 0.1}),
        ]
    runs += [
        ("rbp (B=|S| projectron)", "rbp", {"budget": None}),
        ("forgetron (B=|S| projectron)", "forgetron", {"budget": None}),
        ("lbp (B=|S| projectron)", "lbp", {"budget": None}),
        ("pa-i (C=1)", "pa-i", {"cost": 1.0}),
    ]
    curves = curves_experiment(data, args.gamma, runs, args.permutations, args.step, budget_from=P, test=test)
    rows = summary_rows(curves, {P: 793})
    write_and_print_sizes(args.out, "fig6", curves, rows, digits=0)
    pp = "projectron++ (η=√0.1)"
    claim("Projectron++ errs less than the Perceptron online", final(curves, pp) < final(curves, "perceptron"))
    claim("Projectron++ errs less than Projectron", final(curves, pp) < final(curves, P))
    claim("Projectron++ keeps fewer SVs than Projectron", final(curves, pp, "support") < final(curves, P, "support"))
    claim(
        "RBP and Forgetron at B err more than Projectron++",
        min(final(curves, "rbp (B=|S| projectron)"), final(curves, "forgetron (B=|S| projectron)")) > final(curves, pp),
    )
    claim("PA-I errs least", final(curves, "pa-i (C=1)") == min(final(curves, k) for k in curves))
    if not args.no_plot:
        print("figure:", common.relative(common.plot_curves(args.out / "fig6.png", curves, f"a9a, γ={args.gamma}")))


if __name__ == "__main__":
    main()
