"""Projectron paper (Orabona, Keshet, Caputo, JMLR 2009), Fig. 8(b): a9a, rbf γ = 0.04, one online
pass over 5 permutations; online error vs support size of Projectron++ over a grid of η, against
RBP and the Forgetron at the matching budget B (the mean final size of Projectron++ at that η).

    python -m repro.projectron_fig8 [TRAIN (default sample_data/a9a)] [--dogma-etas 0.05 0.1 0.2 0.4 0.7]

The grid is given in DOGMA's convention (‖δ‖² ≤ η, which the paper's runs used); we run our
η = √η_DOGMA.  The paper does not list its grid; ours spans support sizes of a few hundred to
about 1,500.  As in the paper, Projectron++ is drawn as one curve per permutation, RBP and the
Forgetron as mean ± std.  The paper gives no numbers in the text; the verdict is its claim that
Projectron++ errs less than RBP and the Forgetron at every matching budget.
Writes docs/repro/fig8.csv and fig8.png.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from budgetcli.io.libsvm import read_all
from budgetcli.numerics.kernels import Kernel
from repro import common
from repro.projectron_fig6 import claim


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("train", nargs="?", default=str(common.dataset("a9a/a9a")))
    ap.add_argument("--permutations", type=int, default=5)
    ap.add_argument("--gamma", type=float, default=0.04)
    ap.add_argument("--dogma-etas", type=float, nargs="+", default=[0.05, 0.1, 0.2, 0.4, 0.7])
    ap.add_argument("--out", type=Path, default=common.OUT)
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args()
    data = read_all(args.train)
    streams = [data.take(common.permutation(len(data), p)) for p in range(args.permutations)]
    kernel = Kernel("rbf", args.gamma)
    rows, pp_points, budgeted = [], [], {"rbp": [], "forgetron": []}
    for eta_d in args.dogma_etas:
        runs = [
            common.online_run(common.make_learner("projectron++", kernel, seed=p, eta=math.sqrt(eta_d)), s, step=len(s))
            for p, s in enumerate(streams)
        ]
        err, sup = common.mean_std([r.online_error[-1] for r in runs]), common.mean_std([r.support[-1] for r in runs])
        pp_points.append([(r.support[-1], r.online_error[-1]) for r in runs])
        rows.append(
            {
                "algorithm": "projectron++",
                "dogma_eta": eta_d,
                "eta": math.sqrt(eta_d),
                "budget": "",
                "support_mean": sup[0],
                "support_std": sup[1],
                "online_error_mean": err[0],
                "online_error_std": err[1],
            }
        )
        print(
            f"projectron++ η_DOGMA={eta_d:<5g} |S| {sup[0]:7.1f} ± {sup[1]:5.1f}  online error "
            f"{100 * err[0]:6.2f}% ± {100 * err[1]:.2f}",
            flush=True,
        )
        B = int(round(sup[0]))
        for algo in budgeted:
            e = common.mean_std(
                [
                    common.online_run(common.make_learner(algo, kernel, seed=p, budget=B), s, step=len(s)).online_error[
                        -1
                    ]
                    for p, s in enumerate(streams)
                ]
            )
            budgeted[algo].append((B, *e))
            rows.append(
                {
                    "algorithm": algo,
                    "dogma_eta": eta_d,
                    "eta": "",
                    "budget": B,
                    "support_mean": float(B),
                    "support_std": 0.0,
                    "online_error_mean": e[0],
                    "online_error_std": e[1],
                }
            )
            print(f"{algo:12s} B={B:<5d}             online error {100 * e[0]:6.2f}% ± {100 * e[1]:.2f}", flush=True)
    common.write_csv(args.out / "fig8.csv", rows)
    pp = [r["online_error_mean"] for r in rows if r["algorithm"] == "projectron++"]
    claim(
        "Projectron++ errs less than RBP and the Forgetron at every matching budget",
        all(p < min(budgeted["rbp"][i][1], budgeted["forgetron"][i][1]) for i, p in enumerate(pp)),
    )
    if not args.no_plot:
        plt = common.pyplot()
        fig, ax = plt.subplots(figsize=(6, 4))
        for p in range(args.permutations):
            pts = sorted(points[p] for points in pp_points)
            ax.plot(
                [x for x, _ in pts],
                [y for _, y in pts],
                color="tab:green",
                marker="o",
                ms=3,
                lw=1,
                label="projectron++ (one curve per permutation)" if p == 0 else None,
            )
        for algo, color in (("rbp", "tab:red"), ("forgetron", "tab:purple")):
            pts = np.array(sorted(budgeted[algo]))
            ax.errorbar(pts[:, 0], pts[:, 1], yerr=pts[:, 2], color=color, marker="s", ms=3, capsize=2, label=algo)
        ax.set(xlabel="support size", ylabel="average online error", title=f"a9a, γ={args.gamma}")
        ax.legend(fontsize=8)
        common.save_figure(fig, args.out / "fig8.png")
        print("figure:", common.relative(args.out / "fig8.png"))


if __name__ == "__main__":
    main()
