"""Shifting experiments of Cavallanti, Cesa-Bianchi, Gentile (MLJ 2007, §4, Figs. 3-4): online
error vs budget B of PERC, SPA, RBP, LBP, FA (self-tuned Forgetron), SOP, RBSOP and LBSOP on
streams with 0, 1, 3 and 7 shifts, with a polynomial kernel of degree 4.

    python -m repro.shifting [--datasets 4] [--budgets 50 100 200 400 800 1600]

The paper's RCV1 streams are not available; `budgetlearn generate shifting-K` draws a stand-in
(budgetcli/run/synthetic.py): 20,000 examples, K + 1 equal chunks labelled by concepts from a pool of
four, in a random order (7 shifts repeat the order twice), 5% label noise.  As in the paper each
group (0, 1, 3, 7 shifts) averages 4 data sets (seeds 0-3, each with its own concepts and order);
each stream is run once in its order (it is a stream: permuting it would remove the shifts).
The kernel is ((x·y + 1)/2)^4, so that k(x, x) = 1 as the Forgetron's analysis assumes.  SOP-family algorithms use a
= 1 (the paper's setting); SPA's λ is
tuned per group over --lambdas as the paper does ("manually tuned ... for each group"), and the
best λ is reported.  Algorithms the registry does not hold are reported as not available.

The paper plots these curves without numbers; its only table (Table I: support sizes of PERC and SOP
trained on single chunks of 20,000 / 10,000 / 5,000 / 2,500 RCV1 examples) is printed beside ours
(`--table1-only` runs just that) to show how far our stand-in is from RCV1's regime; it is not a
verdict on the algorithms.  The verdicts are the paper's stated claims (§4).
Writes docs/repro/shifting.csv, shifting_table1.csv and shifting.png.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from budgetcli.base import registry
from budgetcli.numerics.kernels import Kernel
from budgetcli.run.synthetic import shifting_stream
from repro import common
from repro.projectron_fig6 import claim

BASELINES = [("PERC", "perceptron"), ("SOP", "sop")]
BUDGETED = [("RBP", "rbp"), ("LBP", "lbp"), ("FA", "forgetron"), ("RBSOP", "rbsop"), ("LBSOP", "lbsop")]
# ((x·y + 1)/2)^4: the degree-4 polynomial kernel scaled so that k(x, x) = 1 on the unit sphere.  The
# scale changes nothing for PERC, SPA, RBP, LBP (their decisions are scale-free) but the Forgetron's
# shrinking assumes k(x, x) ≤ 1 (Dekel et al.); with (x·y + 1)^4 = 16 on the diagonal it never shrinks
# and runs exactly as LBP.  SOP's a = 1 is likewise meant against a unit-diagonal kernel.
KERNEL = Kernel("poly", gamma=0.5, coef0=0.5, degree=4)


def params_for(algo: str, **extra) -> dict:
    names = {p.name for p in registry.get(algo).params}
    return {**({"sop_a": 1.0} if "sop_a" in names else {}), **extra}


def error(algo: str, streams, **params) -> tuple[float, float]:
    errs = [
        common.online_run(
            common.make_learner(algo, KERNEL, seed=s, **params_for(algo, **params)), data, step=len(data)
        ).online_error[-1]
        for s, data in enumerate(streams)
    ]
    return common.mean_std(errs)


TABLE_I = {20000: (1368, 152), 10000: (772, 84), 5000: (445, 50), 2500: (260, 32)}  # PERC: mean, ± spread


def table1(args) -> list[dict]:
    """Support size of PERC (and SOP when registered) trained on each single chunk of the streams
    with 0, 1, 3, 7 shifts (chunks of n, n/2, n/4, n/8 examples), beside the paper's Table I."""
    rows = []
    for k in (0, 1, 3, 7):
        size = args.examples // (k + 1)
        for label, algo in BASELINES:
            if not common.available(algo):
                continue
            sizes = []
            for s in range(args.datasets):
                data = common.chunk_from_dense(*shifting_stream(args.examples, k, seed=s))
                for c in range(k + 1):
                    part = data.take(np.arange(c * size, (c + 1) * size))
                    learner = common.make_learner(algo, KERNEL, seed=s, **params_for(algo))
                    learner.learn(part, part.labels)
                    sizes.append(len(learner.support))
            m, sd = common.mean_std(sizes)
            paper = TABLE_I.get(size) if label == "PERC" else None
            rows.append(
                {
                    "chunk_size": size,
                    "algorithm": label,
                    "support_mean": m,
                    "support_std": sd,
                    "paper_rcv1_mean": paper[0] if paper else "",
                    "paper_rcv1_spread": paper[1] if paper else "",
                }
            )
            print(
                f"Table I  chunk {size:6d}  {label:5s} |S| {m:7.1f} ± {sd:5.1f}"
                + (f"   (RCV1: {paper[0]} ± {paper[1]})" if paper else ""),
                flush=True,
            )
    common.write_csv(args.out / "shifting_table1.csv", rows)
    return rows


BASELINE_COLORS = {"PERC": "black", "SPA": "tab:gray", "SOP": "tab:brown"}


def plot(rows: list[dict], path: Path) -> Path:
    """One panel per number of shifts: online error vs B, baselines as horizontal lines."""
    plt = common.pyplot()
    rows = [r for r in rows if r["online_error_mean"] not in ("", None)]
    shifts = sorted({int(r["shifts"]) for r in rows})
    fig, axes = plt.subplots(1, len(shifts), figsize=(4 * len(shifts), 3.6), sharey=True, squeeze=False)
    for ax, k in zip(axes[0], shifts):
        mine = [r for r in rows if int(r["shifts"]) == k]
        budgets = sorted({int(r["budget"]) for r in mine if r["budget"] != ""})
        for label in dict.fromkeys(r["algorithm"] for r in mine):
            pts = [r for r in mine if r["algorithm"] == label]
            if pts[0]["budget"] == "":
                ax.axhline(
                    float(pts[0]["online_error_mean"]),
                    ls="--",
                    lw=1,
                    color=BASELINE_COLORS.get(label),
                    label=f"{label} (B=∞)",
                )
            else:
                ax.errorbar(
                    [int(r["budget"]) for r in pts],
                    [float(r["online_error_mean"]) for r in pts],
                    yerr=[float(r["online_error_std"]) for r in pts],
                    marker="o",
                    ms=3,
                    capsize=2,
                    label=label,
                )
        ax.set_xscale("log")
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.minorticks_off()
        ax.set(title=f"{k} shifts", xlabel="budget B")
    axes[0][0].set_ylabel("online error")
    axes[0][-1].legend(fontsize=7)
    return common.save_figure(fig, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=20_000)
    ap.add_argument("--datasets", type=int, default=4)
    ap.add_argument("--shifts", type=int, nargs="+", default=[0, 1, 3, 7])
    ap.add_argument("--budgets", type=int, nargs="+", default=[50, 100, 200, 400, 800, 1600])
    ap.add_argument("--lambdas", type=float, nargs="+", default=[0.001, 0.01, 0.1, 1.0])
    ap.add_argument("--out", type=Path, default=common.OUT)
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--table1-only", action="store_true", help="only the support sizes on single chunks (Table I)")
    ap.add_argument("--plot-only", action="store_true", help="redraw shifting.png from shifting.csv")
    args = ap.parse_args()
    if args.plot_only:
        import csv

        print(
            "figure:",
            common.relative(plot(list(csv.DictReader(open(args.out / "shifting.csv"))), args.out / "shifting.png")),
        )
        return
    table1(args)
    if args.table1_only:
        return
    rows, panels = [], {}
    missing = [name for name, algo in BASELINES + BUDGETED if not common.available(algo)]
    if missing:
        print("not available in this build:", ", ".join(missing))
    for k in args.shifts:
        streams = [common.chunk_from_dense(*shifting_stream(args.examples, k, seed=s)) for s in range(args.datasets)]
        print(f"== {k} shifts ==", flush=True)
        res: dict[str, dict] = {}

        def record(label, B, m, s, note=""):
            res.setdefault(label, {})[B] = (m, s)
            rows.append(
                {
                    "shifts": k,
                    "algorithm": label,
                    "budget": "" if B is None else B,
                    "online_error_mean": m,
                    "online_error_std": s,
                    "note": note,
                }
            )

        for label, algo in BASELINES:
            if common.available(algo):
                m, s = error(algo, streams)
                record(label, None, m, s)
                print(f"{label:6s} B=∞     {100 * m:6.2f}% ± {100 * s:.2f}", flush=True)
            else:
                rows.append(
                    {
                        "shifts": k,
                        "algorithm": label,
                        "budget": "",
                        "online_error_mean": "",
                        "online_error_std": "",
                        "note": "not available",
                    }
                )
        best = min((error("spa", streams, spa_lambda=lam) + (lam,) for lam in args.lambdas), key=lambda t: t[0])
        record("SPA", None, best[0], best[1], note=f"lambda={best[2]:g}")
        print(f"SPA    B=∞     {100 * best[0]:6.2f}% ± {100 * best[1]:.2f}  (best λ = {best[2]:g})", flush=True)
        for label, algo in BUDGETED:
            if not common.available(algo):
                rows.append(
                    {
                        "shifts": k,
                        "algorithm": label,
                        "budget": "",
                        "online_error_mean": "",
                        "online_error_std": "",
                        "note": "not available",
                    }
                )
                continue
            for B in args.budgets:
                m, s = error(algo, streams, budget=B)
                record(label, B, m, s)
                print(f"{label:6s} B={B:<6d} {100 * m:6.2f}% ± {100 * s:.2f}", flush=True)
        panels[k] = res
        perc = res["PERC"][None][0]
        if k >= 3:
            claim(
                f"[{k} shifts] LBP and FA beat PERC at some small budget",
                min(res["LBP"][B][0] for B in args.budgets) < perc
                and min(res["FA"][B][0] for B in args.budgets) < perc,
            )
            claim(f"[{k} shifts] SPA with tuned λ beats PERC", res["SPA"][None][0] < perc)
        if k == 0:
            claim(
                "[0 shifts] budget versions err more than PERC at the smallest budget",
                all(res[lab][args.budgets[0]][0] > perc for lab in ("RBP", "LBP", "FA")),
            )
        if "LBSOP" in res:  # §5: "LBSOP achieves the lowest mistake rates among all algorithms"
            others = min(m for lab, by_b in res.items() if lab != "LBSOP" for m, _ in by_b.values())
            claim(
                f"[{k} shifts] LBSOP reaches the lowest error of all algorithms (at some budget)",
                min(m for m, _ in res["LBSOP"].values()) < others,
            )
        claim(
            f"[{k} shifts] RBP approaches PERC as B grows (error at the largest B below that at the smallest)",
            res["RBP"][args.budgets[-1]][0] < res["RBP"][args.budgets[0]][0],
        )
    common.write_csv(args.out / "shifting.csv", rows)
    if not args.no_plot:
        print("figure:", common.relative(plot(rows, args.out / "shifting.png")))


if __name__ == "__main__":
    main()
