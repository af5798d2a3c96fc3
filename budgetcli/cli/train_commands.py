"""The `train` and `online-to-batch` commands, and `train -v K` (cross-validation)."""

from __future__ import annotations

import json
import os

import click

from ..base.exits import fail
from ..base.core import DataError
from ..model.spec import (
    BACKENDS,
    DefaultRefuses,
)

from .common import DATA_PATH, Jobs, WRITTEN, _given, _is_model
from .train_options import _MoreData, _TrainCommand, _train_options
from .training import _train, _train_spec


@click.command(cls=_TrainCommand)
@_train_options
@click.argument("more_data", nargs=-1, cls=_MoreData, type=DATA_PATH)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default=None,
    help="Train one model over several inputs (shards: paths, globs, fsspec URLs) by iterative parameter "
    "mixing: serial (in this process) or dask (one actor per shard). Default: serial when several "
    "inputs are given.",
)
@click.option(
    "-j",
    "--jobs",
    type=Jobs(),
    default=1,
    show_default=True,
    help="--backend dask: worker processes of the local cluster started for the run (-1: one per core).",
)
@click.option(
    "--scheduler", default=None, metavar="ADDRESS", help="--backend dask: the scheduler of a running cluster."
)
@click.option(
    "--sync-every",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    metavar="N",
    help="Examples each shard learns between two synchronisations, or between two checks of "
    "--sync dynamic (a resumed checkpoint: its own).",
)
@click.option(
    "--sync",
    type=click.Choice(["static", "dynamic"]),
    default=None,
    help="static: mix the shards' models every --sync-every examples per shard; dynamic: only when a "
    "shard's model has drifted more than --divergence from the last mixed one (dynamic averaging; "
    "far fewer bytes sent). Default: static (a resumed checkpoint: its own).",
)
@click.option(
    "--divergence",
    type=float,
    default=None,
    metavar="DELTA",
    help="--sync dynamic: the drift ‖f − r‖² (squared RKHS distance of a shard's model f from the last "
    "mixed model r) that makes the shards synchronise.",
)
@click.option(
    "--hypothesis",
    type=click.Choice(sorted(WRITTEN)),
    default=None,
    help="What the model predicts with. average: the averaged hypothesis (1/T) Σ f_t (as scikit-learn's "
    "SGDClassifier(average=True)), usually far better on held-out data than the last one; the model still "
    "resumes the online learner, and learners that evict keep an archive of at most 2·max(B, 64) evicted "
    "vectors (constant memory), folded onto the kept ones in the file. last: the last hypothesis f_T, the "
    "online learner as it stands. "
    "Default: average, but for the learners that track drift (budgetlearn algorithms says which) and for a "
    "sharded run of a learner that evicts (last); a resumed model's own.",
)
@click.option("--average", is_flag=True, help="The same as --hypothesis average.")
@click.option(
    "-v",
    "--folds",
    type=click.IntRange(min=2),
    default=None,
    metavar="K",
    help="K-fold cross-validation, as svm-train -v: print 'Cross Validation Accuracy = P%' (the share of DATA's "
    "examples that the model trained with these options on the other folds predicts right) and write no "
    "model. Folds are stratified as LIBSVM's and seeded by --seed; each fold's model is the one train writes "
    "from the other folds' examples in file order. DATA is read into memory. With --task regression: "
    "'Cross Validation Mean squared error = M' and 'Cross Validation Squared correlation coefficient = R', "
    "svm-train -s 3 -v's lines (folds not stratified, as svm-train's for SVR).",
)
def train(
    ctx, more_data, backend, jobs, scheduler, sync_every, sync, divergence, hypothesis, average, folds, **options
):
    """Train an algorithm online over DATA (one pass, or --epochs passes) and write the model (DATA.model).

    With no -a, the algorithm is projectron++ for two labels and mc-projectron++ for more; the model
    predicts with the averaged hypothesis (--hypothesis). `budgetlearn train -a NAME --help` lists
    the algorithm's own options.

    With several inputs (DATA DATA...) or --backend, each input (a path, a glob, an fsspec URL) is a shard with
    its own learner, and the models are mixed every --sync-every examples per shard into one
    (budgetcli/run/distributed/); the algorithms that cannot be mixed are refused. With --epochs, every
    shard passes that many times over its own input, the models mixed throughout.

    Nothing is written when training fails: an existing model file stays as it was.

    Settings that provably learn nothing are refused before DATA is read (projectron and
    projectron++ with --eta ≥ 1 and the rbf kernel, mc-projectron++ with --eta ≥ √2, projectron-alma2
    with --eta ≥ min(C, 1)). The summary warns about a run that ended with no support vector or
    with one after several mistakes, a default γ that comes from an outlying feature index, and a
    kernel that is numerically constant or diagonal on a sample of the first 4,096 examples."""
    sharding = None
    if len(more_data) == 1 and not backend and options["output"] is None and _looks_like_output(more_data[0]):
        raise click.UsageError(
            f"{more_data[0]} is not an input; svm-train's `DATA MODEL` order is written here "
            f"`budgetlearn train {options['data']} -o {more_data[0]}` (several DATA are the shards of one run)"
        )
    if more_data or backend:
        given = ctx.get_parameter_source("sync_every") is not click.core.ParameterSource.DEFAULT
        sharding = {
            "inputs": (options["data"],) + more_data,
            "backend": backend or "serial",
            "jobs": jobs,
            "scheduler": scheduler,
            "sync_every": sync_every if given else None,
            "sync": sync,
            "divergence": divergence,
        }
    elif sync or divergence is not None:
        raise click.UsageError("--sync and --divergence are for a sharded run (several inputs or --backend)")
    if average and hypothesis == "last":
        raise click.UsageError("--average and --hypothesis last contradict each other")
    written = WRITTEN["average" if average else hypothesis] if average or hypothesis else None
    if folds is not None:
        _cross_validate(ctx, folds, written, sharding, options)
        return
    _train(ctx, written, sharding, options)


def _cross_validate(ctx, k: int, hypothesis: str | None, sharding: dict | None, options: dict) -> None:
    """train -v K: the folds' accuracy (a regression's MSE and squared correlation) on stdout as svm-train
    prints it (crossval.py), no model written."""
    from ..run import crossval

    given = [
        flag
        for name, flag in (
            ("output", "-o"),
            ("resume_path", "--resume"),
            ("checkpoint_every", "--checkpoint-every"),
            ("curve_path", "--curve"),
            ("save_resume", "--save-resume"),
        )
        if _given(ctx, name)
    ] + (["several inputs"] if sharding else [])
    if given:
        raise click.UsageError(f"-v writes no model (as svm-train -v): drop {', '.join(given)}")
    spec = _train_spec(ctx, hypothesis, None, options)
    if spec.task == "novelty":  # a novelty detector's cross-validation would report its AUC
        raise click.UsageError(
            "-v reports accuracy or MSE; cross-validating a novelty detector (its AUC) is not done yet"
        )
    try:
        cv = crossval.cross_validate(spec, options["data"], k)
    except DefaultRefuses as exc:
        raise click.UsageError(str(exc)) from None
    except DataError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail("interrupted", 130)
    click.echo(json.dumps(cv.to_dict()) if options["as_json"] else "\n".join(cv.lines()))
    if not options["quiet"]:
        lines = [f"note            {cv.note}"] if cv.note else []
        examples = sum(f.examples for f in cv.folds)
        strata = "stratified, " if cv.task.name == "classification" else ""
        lines.append(
            f"folds           {len(cv.folds)} of {examples:,} examples ({strata}--seed {spec.seed}): "
            + ", ".join(cv.task.fold_text(f) for f in cv.folds)
        )
        lines += [f"warning         fold {k}: {w}" for k, fold in enumerate(cv.folds, 1) for w in fold.warnings]
        click.echo("\n".join(lines), err=True)


@click.command(name="online-to-batch", cls=_TrainCommand)
@click.option(
    "--method",
    type=click.Choice(["average", "projected-average", "last"]),
    default="average",
    show_default=True,
    help="average: (1/T) Σ f_t over the T rounds; projected-average: the same with the part of "
    "evicted support vectors projected onto the final support set (stays within the budget); "
    "last: f_T.",
)
@_train_options
def online_to_batch(ctx, method, **options):
    """Train ALGORITHM online over DATA (one pass, or --epochs passes) and write a batch hypothesis.

    The averaged hypothesis (Cesa-Bianchi, Conconi, Gentile 2004) keeps a running sum per
    coefficient during training; for the Perceptron and Projectron family it lives on exactly
    the online support set. For algorithms that evict support vectors the exact average also
    needs the evicted ones (kept in memory during training) and so grows beyond the budget;
    projected-average stays within it. A batch model can be used by predict and eval, not resumed."""
    _train(ctx, method, None, options)


def _looks_like_output(path: str) -> bool:
    """A second train input that is rather the model svm-train's order names: a path that does not
    exist yet, or a model file."""
    if os.path.lexists(path):  # an existing name is that file, whatever characters it holds
        return _is_model(path)
    from ..run.distributed.sources import is_url, is_pattern

    return not is_url(path) and not is_pattern(path)
