"""The `tune` command: a parameter grid run in parallel, its table and its best model."""

from __future__ import annotations

import dataclasses
import os
import sys

import click

from ..base import bounds, registry
from ..run import pipeline
from ..base.exits import fail, write_failed
from ..base.atomic import (
    writable_problem,
)
from ..learning import task as task_
from ..run import grid as grid_, tune as tune_
from ..run.tune_table import describe, write_csv
from . import tune_output
from ..base.core import DataError, KernelSpec, unique
from ..io.inputs import read_once
from ..model.model import UnloadableModel
from ..model.spec import (
    TrainSpec,
)

from .common import (
    AlgorithmName,
    DATA_PATH,
    FINITE_FLOAT,
    Jobs,
    SEED,
    WRITTEN,
    _given,
    _kernel_options,
    _param_options,
    _refuse_same_files,
    _scale,
)


@dataclasses.dataclass(frozen=True)
class _Run:
    """The runs' own options: what each run of the grid trains, as `train` takes them."""

    algorithm: str | None
    task: str | None
    seed: int
    epochs: int
    hypothesis: str | None
    scale: bool
    scale_ranges: str | None


@dataclasses.dataclass(frozen=True)
class _Search:
    """What tune searches and how it ranks: the grid, the runs of a setting, the figure it sorts by."""

    grids: tuple
    permutations: int
    folds: int | None
    test: str | None
    sort: str | None
    normal_label: float | None


@dataclasses.dataclass(frozen=True)
class _Workers:
    """Where the runs run."""

    jobs: int | None
    backend: str
    scheduler: str | None


@dataclasses.dataclass(frozen=True)
class _Outputs:
    """What tune writes beside its table."""

    as_json: bool
    csv_path: str | None
    save_best: str | None


def _taken(group, options: dict):
    """The `group` (one of the dataclasses above) of the command's options, taken out of `options`."""
    return group(**{f.name: options.pop(f.name) for f in dataclasses.fields(group)})


def _tune_run(runs, settings, grid, workers: _Workers, sort, outputs: _Outputs, writing: list):
    """Run the grid; write the table and the best model as asked, appending (path, what) to `writing`
    before each.  Returns the sorted rows and the best run (None without --save-best)."""
    csv_path, save_best = outputs.csv_path, outputs.save_best
    results = tune_.run_all(runs, workers.jobs, workers.backend, workers.scheduler)
    rows = tune_.table(settings, results, sort)
    if csv_path is not None:
        writing.append((csv_path, "the table"))
        write_csv(csv_path, rows, [n for n, _ in grid], runs[0].spec.epochs)
    best = None
    if save_best is not None and runs[0].folds:  # the model of the best setting's train command: all of DATA
        model = pipeline.train(tune_.setting_spec(runs[0].spec, rows[0].setting), runs[0].data).model
        writing.append((save_best, "the model"))
        model.save(save_best)
    elif save_best is not None:
        best = tune_.best_run(rows[0], sort)
        run = next(r for r in runs if (r.setting, r.permutation) == (best.setting, best.permutation))
        model = tune_.retrain(run, best)
        writing.append((save_best, "the model"))
        model.save(save_best)
    return rows, best


def _no_grid_contradiction(grid, params: dict, gamma, sigma) -> None:
    """ValueError when a --grid name is also given a fixed value (γ and σ are one width)."""
    widths = {n for n, v in (("gamma", gamma), ("sigma", sigma)) if v is not None}
    for name, _ in grid:
        if name in params or name in ("gamma", "sigma") and widths:
            raise ValueError(
                f"--grid {name} and a fixed {' '.join('--' + w for w in widths) or '--' + name} contradict each other"
            )


@click.command()
@click.option(
    "-a",
    "--algorithm",
    type=AlgorithmName(),
    default=None,
    metavar="NAME",
    help=f"Learning algorithm (see `budgetlearn algorithms`). Default: train's, {registry.DEFAULT['binary']} for "
    f"two labels, {registry.DEFAULT['multiclass']} for more (by the first block of DATA).",
)
@click.option(
    "--grid",
    "grids",
    multiple=True,
    metavar="NAME=V1,V2,...",
    help="Values of one parameter (eta, B, beta, lambda, C, ..., or the kernel's gamma, sigma, degree, "
    "coef0); repeat for more. Every combination is a setting.",
)
@click.option(
    "--permutations",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="Runs per setting, each over a seeded permutation of DATA (run p: seed --seed + p, as "
    "`train --shuffle --seed`); 0: one run over DATA in its own order.",
)
@click.option(
    "--folds",
    type=click.IntRange(min=2),
    default=None,
    metavar="K",
    help="Rank the settings by K-fold cross-validated accuracy, each exactly `train -v K` with that setting "
    "(the folds seeded by --seed): a setting's runs are its K folds, each trained on the others in file "
    "order and scored on the one held out, with the hypothesis train writes. --test is then only reported.",
)
@click.option(
    "--seed",
    type=SEED,
    default=0,
    show_default=True,
    help="Seed of run 0; run p uses --seed + p. With --folds: the seed of the folds and of every run.",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Passes over DATA per run, as `train --epochs` (a permuted run: each pass its own "
    "permutation, as `train --shuffle`, with DATA in memory).",
)
@click.option(
    "--test",
    type=click.Path(dir_okay=False),
    default=None,
    help="Test file: accuracy of every run (a regression's MSE; a novelty detector's AUC, by its labels).",
)
@click.option(
    "--normal-label",
    type=FINITE_FLOAT,
    default=None,
    metavar="L",
    help="--task novelty: the examples of --test labelled L are normal, every other is novel, as eval "
    "--normal-label L (default 1).",
)
@click.option(
    "--hypothesis",
    type=click.Choice(sorted(WRITTEN)),
    default=None,
    help="What each run's model predicts --test with, as train writes it: average (the default, but "
    "last for the learners that track drift) or last.",
)
@click.option(
    "-j",
    "--jobs",
    type=Jobs(),
    default=1,
    show_default=True,
    help="Runs at once (-1: one per core). With dask, the cluster's workers decide.",
)
@click.option(
    "--backend",
    type=click.Choice(tune_.BACKENDS),
    default="loky",
    show_default=True,
    help="joblib backend: loky (local processes), threading (one process: the compiled loops hold "
    "the GIL, so no speed-up), dask (dask.distributed; a local cluster of --jobs processes unless "
    "--scheduler), ray.",
)
@click.option(
    "--scheduler", metavar="ADDRESS", default=None, help="dask scheduler (tcp://host:8786) or ray cluster address."
)
@click.option(
    "--sort",
    type=click.Choice(sorted(tune_.SORT_KEYS)),
    default=None,
    help="Order of the table, best first [default: cv-accuracy with --folds, test-accuracy with --test, else "
    "error; for --task regression cv-mse, test-mse, else online-mse; for --task novelty test-auc, which needs "
    "--test of labelled data].",
)
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON on stdout instead.")
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Also write the table as CSV.",
)
@click.option(
    "--save-best",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="MODEL",
    help="Save the model of the best run of the best setting (trained again here, identically); with --folds, "
    "the model the best setting's train command writes from all of DATA.",
)
@click.option(
    "--scale",
    is_flag=True,
    help="Every run scales as train --scale (the ranges of DATA; with "
    "--folds, of each fold's training part, as train -v --scale).",
)
@click.option(
    "--scale-ranges",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Every run scales by the ranges of FILE, as train --scale-ranges.",
)
@click.option(
    "--task",
    type=click.Choice(["classification", "regression", "novelty"]),
    default=None,
    help="classification (the default) or regression (real targets, as train --task regression): its runs "
    "are ranked by mean squared errors (--sort online-mse, test-mse, cv-mse) in place of mistakes and accuracies; "
    "novelty (as train --task novelty): ranked by the AUC on --test (--sort test-auc, --normal-label), the "
    "fraction flagged online shown beside ν.",
)
@_kernel_options
@_param_options
@click.argument("data", type=DATA_PATH)
def tune(data, **options):
    """Train every (setting, permutation) pair of a parameter grid in parallel and print mean ± std
    of the online mistake rate, support size, test accuracy and seconds per setting.

    Options outside --grid fix a parameter for every setting. Each run reads DATA (and --test) from
    its path in the worker, so on a cluster the paths must be readable by every worker. Results
    are the same whatever --jobs or --backend: only the seconds differ.

    A grid value that provably learns nothing is refused, as train refuses it. The notes column
    refers to the warnings of a setting's runs, listed under the table (and in --json and --csv);
    a setting with a run that ended with no support vector is marked "nothing learned" and ranks
    after every setting that learned something, whatever --sort says."""
    run, search = _taken(_Run, options), _taken(_Search, options)
    workers, outputs = _taken(_Workers, options), _taken(_Outputs, options)
    # the rest: the kernel's options and the algorithms' parameters, as `train` takes them
    algorithm, task, test, folds = run.algorithm, run.task, search.test, search.folds
    learns = registry.get(algorithm).tasks if algorithm is not None else ()
    figures = task_.named(task)
    if algorithm is not None and task is None and "classification" not in learns:
        raise click.UsageError(f"{algorithm} learns {' and '.join(learns)}; give --task {learns[0]}")
    if search.normal_label is not None and figures.name != "novelty":
        raise click.UsageError(f"--normal-label is for --task novelty; these runs learn {figures.name}")
    if folds and figures.TUNE["cv"] is None:
        raise click.UsageError(
            f"--folds cross-validates; {figures.name} runs are ranked by --test (train -v does not cross-validate "
            "a novelty detector)"
        )
    kernel = KernelSpec.from_params(options)
    params = {k: v for k, v in options.items() if k in registry.params() and v is not None}
    for name, path in (("DATA", data), ("--test", test)):
        what = path is not None and read_once(path)
        if what:
            raise click.UsageError(
                f"tune reads {name} once per run: give a regular file, not {'-' if path == '-' else path} ({what})"
            )
    ctx = click.get_current_context()
    if algorithm is None:
        algorithm = registry.task_default(task) or _default_algorithm(data)
        run = dataclasses.replace(run, algorithm=algorithm)
    if folds and _given(ctx, "permutations"):
        raise click.UsageError("--folds K makes a setting's runs its K folds; drop --permutations")
    sorts = figures.SORTS
    sort = search.sort or (sorts["cv"] if folds else sorts["test"] if test else sorts.get("online"))
    if sort is None:
        raise click.UsageError(
            f"tune ranks {figures.name} runs by the AUC on held-out labelled data: give --test FILE "
            "(--normal-label L: its normal label, default 1), or --sort support or seconds"
        )
    other = next(
        (t for t in task_.TASKS.values() if t is not figures and sort in getattr(t, "SORTS", {}).values()), None
    )
    if other is not None:
        raise click.UsageError(
            f"--sort {sort} ranks {other.name} runs; {figures.name} ranks by {', '.join(sorts.values())}"
        )
    if sort == sorts["test"] and not test:
        raise click.UsageError(f"--sort {sort} needs --test")
    if sort == sorts.get("cv") and not folds:
        raise click.UsageError(f"--sort {sort} needs --folds K")
    scaled = _scale(run.scale, run.scale_ranges)
    csv_path, save_best = outputs.csv_path, outputs.save_best
    _refuse_same_files([("DATA", data), ("--test", test)], [("--csv", csv_path), ("--save-best", save_best)])
    for path, what in ((csv_path, "the table"), (save_best, "the model")):
        problem = path and writable_problem(path)
        if problem:
            fail(f"{path}: cannot write {what}: {problem}")
    try:
        grid = grid_.parse_grid(list(search.grids), algorithm)
        _no_grid_contradiction(grid, params, kernel.gamma, kernel.sigma)
        settings = grid_.settings_of(grid)
        base = TrainSpec(
            algorithm,
            kernel,
            params,
            run.seed,
            run.epochs,
            hypothesis=WRITTEN[run.hypothesis] if run.hypothesis else None,
            scale=scaled,
            task=task,
        )
        scoring = {} if search.normal_label is None else {"normal_label": search.normal_label}
        runs = tune_.plan(data, test, base, settings, search.permutations, folds or 0, scoring)
    except ValueError as exc:
        raise click.UsageError(str(exc))
    if scaled is True and not folds:  # a permuted run reads DATA in another order: the ranges of train --scale DATA
        from ..model.scaling import of_data

        try:
            ranges = of_data(data, kernel.kind).ranges
        except DataError as exc:
            fail(str(exc))
        runs = [dataclasses.replace(r, spec=dataclasses.replace(r.spec, scale=ranges)) for r in runs]

    if workers.scheduler is None:  # local processes or threads; a cluster's own workers decide there
        jobs, note = bounds.workers(workers.jobs, len(runs), "run")
        workers = dataclasses.replace(workers, jobs=jobs)
        if note:
            click.echo(f"budgetlearn: note: {note}", err=True)
    writing = []  # (path, what) of the output being written
    try:
        rows, best = _tune_run(runs, settings, grid, workers, sort, outputs, writing)
        best_command = tune_output.best_command(run, kernel, params, rows[0], sort, data, folds)
    except DataError as exc:
        fail(str(exc))
    except UnloadableModel as exc:
        fail(f"{save_best}: {exc}")
    except RuntimeError as exc:
        fail(str(exc))
    except OSError as exc:
        if not writing:
            fail(f"{os.fsdecode(exc.filename) if exc.filename else 'tune'}: {exc.strerror or exc}")
        write_failed(*writing[-1], exc)
    except KeyboardInterrupt:
        click.echo("budgetlearn: interrupted; nothing written", err=True)
        sys.exit(130)
    if outputs.as_json:
        tune_output.print_json(algorithm, sort, search.permutations, run, rows, best_command)
    else:
        tune_output.print_table(algorithm, sort, rows, run.epochs, best_command)
    if save_best is not None:
        seed_note = f", seed {best.seed}" if best is not None else ""
        click.echo(f"best model: {save_best} ({describe(rows[0].setting)}{seed_note})", err=True)


def _default_algorithm(data: str) -> str:
    """train's default algorithm for DATA, by the labels of its first block (registry.default_for)."""
    from ..io.libsvm import LibsvmReader

    try:
        with LibsvmReader(data) as reader:
            first = next(iter(reader), None)
    except DataError as exc:
        fail(str(exc))
    if first is None:
        fail(f"{data}: no examples to train on")
    return registry.default_for(len(unique(first.labels)))
