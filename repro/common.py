"""The protocol shared by the reproduction scripts of repro/.

Every experiment of the papers is one online pass of a learner over a permutation of a data set:

- `permutation(n, p)` is permutation number p (numpy `default_rng(p)`), the same for every
  algorithm, so that all learners of one run see the same stream;
- `online_run` drives a learner through the Python API chunk by chunk (chunk size = the curve
  step) and records, after every chunk, the average online error (mistakes / examples so far) and
  the support size |S| -- the two curves of the Projectron paper's Figs. 6 and 7;
- `mean_std` / `Summary` average the final figures over permutations;
- `verdict` compares ours with a published value: within the paper's spread when one is published,
  else within `tolerance` (one point of error rate by default, as the issue asks);
- `write_csv` and `plot_curves` / `plot_xy` write the table and the figure of an experiment;
  matplotlib is imported only inside the plotting functions (optional extra `repro`).

`dataset` finds a data set: a9a in the project's sample_data/, the others (letter, banana) under the
directory named by the environment variable BUDGETLEARN_DATASETS.
"""

from __future__ import annotations

import csv
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from budgetcli.learning import algorithms
from budgetcli.base import registry
from budgetcli.io.libsvm import Chunk
from budgetcli.numerics.kernels import Kernel

PROJECT = Path(__file__).resolve().parents[1]
OUT = PROJECT / "docs" / "repro"  # default home of the CSVs and PNGs


SAMPLE_DATA = PROJECT / "sample_data"  # a9a and a9a.t ship with the project
SHIPPED = {"a9a/a9a": SAMPLE_DATA / "a9a", "a9a/a9a.t": SAMPLE_DATA / "a9a.t"}


def dataset(relative: str) -> Path:
    """Path of a data set named as in LIBSVM's collection, 'NAME/FILE' (e.g. 'banana/banana'): a9a's
    files from sample_data/, any other under $BUDGETLEARN_DATASETS.  Exits with a message naming the
    variable when it is not set or the file is not under it."""
    if relative in SHIPPED:
        return SHIPPED[relative]
    root = os.environ.get("BUDGETLEARN_DATASETS")
    if not root:
        raise SystemExit(
            f"{relative} is not in sample_data/: set BUDGETLEARN_DATASETS to the directory "
            f"holding {relative}, or give the file's path"
        )
    path = Path(root) / relative
    if not path.is_file():
        raise SystemExit(f"{path}: no such file (BUDGETLEARN_DATASETS is {root})")
    return path


def available(name: str) -> bool:
    """True when the registry holds an algorithm of this name (rows of algorithms built in other
    branches are reported as not available instead of failing)."""
    return name in algorithms.load_all()


def permutation(n: int, p: int) -> np.ndarray:
    """Permutation number p of n examples, the same for every algorithm."""
    return np.random.default_rng(p).permutation(n)


def chunk_from_dense(X: np.ndarray, y: np.ndarray) -> Chunk:
    """A Chunk of the rows of a dense matrix (zeros are left out, as the reader would)."""
    return Chunk.from_dense(X, y)


@dataclass
class Run:
    """One online pass: curves sampled after every `step` examples (and at the end) and the totals."""

    examples: np.ndarray  # number of examples seen at each curve point
    online_error: np.ndarray  # mistakes / examples at each curve point
    support: np.ndarray  # |S| at each curve point
    mistakes: int
    seconds: float  # learning loop only
    learner: object = field(repr=False)
    test_accuracy: float | None = None  # of the last hypothesis, when the experiment has a test set


def make_learner(algo: str, kernel: Kernel, seed: int = 0, **params):
    return registry.get(algo)(kernel, seed=seed, **params)


def online_run(learner, data: Chunk, y: np.ndarray | None = None, step: int = 1000) -> Run:
    """One online pass of `learner` over `data` in order (labels `y`, default data.labels),
    `step` examples at a time; the curves hold one point per chunk."""
    y = data.labels if y is None else np.asarray(y, np.float64)
    n = len(data)
    ends = list(range(step, n, step)) + [n]
    examples, error, support = [], [], []
    seconds, start = 0.0, 0
    for end in ends:
        part = data.take(np.arange(start, end))
        t0 = time.perf_counter()
        learner.learn(part, y[start:end])
        seconds += time.perf_counter() - t0
        examples.append(end)
        error.append(learner.counter("mistakes") / end)
        support.append(len(learner.support))
        start = end
    return Run(np.array(examples), np.array(error), np.array(support), learner.counter("mistakes"), seconds, learner)


def error_rate(learner, test: Chunk, y: np.ndarray | None = None) -> float:
    """Error rate of the learner's current hypothesis on a test chunk (a zero score counts as −1)."""
    y = test.labels if y is None else y
    return float(np.mean(np.where(learner.decision_function(test) > 0, 1.0, -1.0) != y))


def mean_std(values) -> tuple[float, float]:
    v = np.asarray(values, np.float64)
    return float(v.mean()), float(v.std())


def verdict(
    mean: float,
    std: float,
    paper: float | None,
    low: float | None = None,
    high: float | None = None,
    tolerance: float | None = None,
) -> str:
    """'within' when ours falls within the paper's spread [low, high] (when the paper publishes one)
    or within `tolerance` of the paper's value, else 'MISS'; 'n/a' without a paper value.

    Our spread counts too: ours is within when mean ± std overlaps the accepted interval."""
    if paper is None:
        return "n/a"
    if low is None or high is None:
        if tolerance is None:
            raise ValueError("a verdict needs the paper's spread or a tolerance")
        low, high = paper - tolerance, paper + tolerance
    return "within" if mean + std >= low and mean - std <= high else "MISS"


def write_csv(path: Path, rows: list[dict]) -> Path:
    """Rows (dicts with the same keys) as a CSV file with a header line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    return path


def curve_rows(label: str, runs: list[Run]) -> list[dict]:
    """CSV rows of the mean ± std curves of several runs of one algorithm (same length)."""
    err = np.array([r.online_error for r in runs])
    sup = np.array([r.support for r in runs])
    return [
        {
            "algorithm": label,
            "examples": int(x),
            "online_error_mean": float(em),
            "online_error_std": float(es),
            "support_mean": float(sm),
            "support_std": float(ss),
        }
        for x, em, es, sm, ss in zip(runs[0].examples, err.mean(0), err.std(0), sup.mean(0), sup.std(0))
    ]


def pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # the figures are optional: pip install '.[repro]'
        raise SystemExit("drawing the figure needs matplotlib: pip install '.[repro]' (or pass --no-plot)") from e
    return plt


def plot_curves(path: Path, curves: dict[str, list[Run]], title: str) -> Path:
    """The Projectron paper's two panels: average online error and |S| vs examples, mean ± std."""
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for label, runs in curves.items():
        x = runs[0].examples
        for ax, key in ((a, "online_error"), (b, "support")):
            v = np.array([getattr(r, key) for r in runs])
            m, s = v.mean(0), v.std(0)
            ax.plot(x, m, label=label)
            ax.fill_between(x, m - s, m + s, alpha=0.2)
    a.set(xlabel="examples", ylabel="average online error", title=title)
    b.set(xlabel="examples", ylabel="support size |S|")
    a.legend(fontsize=8)
    return save_figure(fig, path)


def plot_xy(path: Path, series: dict[str, tuple], xlabel: str, ylabel: str, title: str, logx: bool = False) -> Path:
    """One panel of lines with error bars: series[label] = (x, mean, std)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, (x, m, s) in series.items():
        ax.errorbar(x, m, yerr=s, label=label, marker="o", ms=3, capsize=2)
    if logx:
        ax.set_xscale("log")
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def save_figure(fig, path: Path) -> Path:
    """Lay out, write (80 dpi, the size docs/repro/ keeps) and close a figure."""
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    pyplot().close(fig)
    return path


def relative(path: Path) -> str:
    """A path as printed to the user: relative to the working directory when below it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
