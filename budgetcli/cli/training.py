"""A training run from the command line: its spec from the options (checked, one line per rule), its
inputs and outputs checked before anything is read or written, the run, the model written, the summary."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys

import click

from ..base import bounds, registry
from ..run import pipeline
from ..learning import task as task_
from ..base.exits import fail
from ..base.atomic import output_file, output_kind, writable_problem
from ..base.signals import interrupt_exit_code, interrupt_name, stop_signals_deferred, stop_signals_raise_interrupt
from ..base.core import DataError, KernelSpec, parse_number
from ..io.inputs import read_once
from ..numerics.kernels import KERNEL_PARAMS
from ..run.curve import CurveWriteError, LearningCurve, describe
from ..run.progress import Progress
from ..model.model import HYPOTHESES, Model, UnloadableModel
from ..model.spec import (
    AVERAGES,
    FROM_MODEL,
    DefaultRefuses,
    NotResumable,
    Sharding,
    TrainSpec,
    refuse_resume,
)

from .common import _given, _load, _refuse_same_files, _scale


def _spec_field(option: str) -> str | None:
    """The TrainSpec field a train option sets (None: an option of the command's input and output)."""
    if option == "scale_ranges":
        return "scale"
    if option == "weight_options":
        return "class_weight"
    if option in KERNEL_PARAMS:
        return "kernel"
    if option in registry.params():
        return "params"
    if option in SHARDING_OPTIONS:
        return "sharding"
    return option if option in TRAIN_SPEC_FIELDS else None


TRAIN_SPEC_FIELDS = {f.name for f in dataclasses.fields(TrainSpec)}
SHARDING_OPTIONS = {f.name for f in dataclasses.fields(Sharding)} | {"more_data"}


def _train_spec(ctx, hypothesis: str | None, sharding: dict | None, options: dict) -> TrainSpec:
    """The run's TrainSpec from the command line, checked: one line per rule (exit 2)."""
    params = {name: options[name] for name in registry.params() if options.get(name) is not None}
    kernel = KernelSpec.from_params(options)
    epochs = options["epochs"] if _given(ctx, "epochs") or not sharding else None  # a sharded checkpoint's
    scale = _scale(options["scale"], options["scale_ranges"])
    class_weight = _class_weight(options["class_weight"], options["weight_options"])
    try:
        return TrainSpec(
            algorithm=options["algorithm"],
            kernel=kernel,
            params=params,
            seed=options["seed"],
            epochs=epochs,
            shuffle=options["shuffle"],
            hypothesis=hypothesis,
            skip_bad_lines=options["skip_bad_lines"],
            checkpoint_every=options["checkpoint_every"],
            save_resume=options["save_resume"],
            threads=options["threads"],
            sharding=None if sharding is None else Sharding(**sharding),
            resumed=options["resume_path"] is not None,
            scale=scale,
            class_weight=class_weight,
            task=options["task"],
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


def _class_weight(given: tuple, pairs: tuple) -> dict:
    """TrainSpec.class_weight of --class-weight LABEL:W and -w LABEL W (svm-train's -wLABEL W): label value ->
    weight, the label a number as a data file spells it; a label given twice is a usage error."""
    out: dict = {}
    for text, (label, weight) in [(t, t.rpartition(":")[::2]) for t in given] + [
        (f"-w{a} {b}", (a, b)) for a, b in pairs
    ]:
        value, w = parse_number(label.strip()), parse_number(weight.strip())
        if value is None or w is None:
            raise click.UsageError(f"class weight {text!r}: give LABEL:W (--class-weight 1:3) or -wLABEL W (-w1 3)")
        if value in out:
            raise click.UsageError(f"class weight {text!r}: label {label} has a weight already")
        out[value] = w
    return out


def _resumed(ctx, resume_path: str, hypothesis: str | None) -> Model:
    """The model `--resume` continues, refused when a setting the model keeps is given (the TrainSpec
    fields FROM_MODEL), or when it cannot go on (spec.refuse_resume, every edge's rule)."""
    given = [p.opts[-1] for p in ctx.command.params if _spec_field(p.name) in FROM_MODEL and _given(ctx, p.name)]
    if given:
        raise click.UsageError(f"--resume continues the model's own settings; drop {', '.join(given)}")
    resume = _load(resume_path, resume=True)
    try:
        refuse_resume(resume, hypothesis)
    except NotResumable as exc:
        if exc.settings:
            raise click.UsageError(f"{resume_path}: {exc}") from None
        fail(f"{resume_path}: {exc}")
    return resume


def _model_output(output: str | None, data: str, checkpoint_every: int | None) -> str:
    """The model's path (default DATA.model), checked writable before a long run, not after it."""
    if output is None:
        if data == "-":
            raise click.UsageError("-o/--output is required when DATA is '-'")
        what = read_once(data) or _system_directory(data)  # /dev/stdin.model is no place for a model
        if what:
            raise click.UsageError(f"-o/--output is required when DATA is {what} ({data})")
        output = data + ".model"
    if output == "-":
        raise click.UsageError("a model file cannot be written to stdout; give a path with -o")
    if checkpoint_every is not None and output_kind(output) != "replace":
        raise click.UsageError(
            f"--checkpoint-every needs a regular file for -o (a checkpoint is rewritten and "
            f"resumed from); {output} is not one"
        )
    problem = writable_problem(output)
    if problem:
        fail(f"{output}: cannot write the model: {problem}")
    return output


SYSTEM_DIRECTORIES = ("/dev", "/proc")  # where DATA.model may not go


def _system_directory(path: str) -> str | None:
    """ "in /dev" or "in /proc" for a path there (/dev/stdin, /dev/fd/0, /proc/self/fd/0: what a
    shell gives for a stream, whatever file it is), else None."""
    directory = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    for system in SYSTEM_DIRECTORIES:
        if directory == system or directory.startswith(system + "/"):
            return f"in {system}"
    return None


def _train(ctx, hypothesis: str | None, sharding: dict | None, options: dict) -> None:
    """train and online-to-batch: the run's spec from the options, its inputs and outputs checked
    before anything is read or written, then the run, the model written, the summary."""
    data, resume_path, curve_path, quiet = (
        options["data"],
        options["resume_path"],
        options["curve_path"],
        options["quiet"],
    )
    if curve_path is None and _given(ctx, "curve_every"):
        raise click.UsageError("--curve-every needs --curve FILE.csv")
    if sharding and curve_path:
        raise click.UsageError("--curve is not available for a sharded run (several inputs or --backend)")
    if sharding and options["output"] is None:
        raise click.UsageError("a sharded run (several inputs or --backend) needs -o/--output")
    resume = _resumed(ctx, resume_path, hypothesis) if resume_path is not None else None
    if resume is not None:
        options = dict(options, algorithm=resume.learner.name)
    spec = _train_spec(ctx, hypothesis, sharding, options)
    if resume is not None:
        try:
            spec = spec.resuming(resume)
        except NotResumable as exc:  # what the run's own settings contradict (a scaled model, sharded)
            fail(f"{resume_path}: {exc}", 2 if exc.settings else 1)
    if curve_path is not None and spec.task == "novelty":
        raise click.UsageError("--curve logs online mistakes or errors; a curve of flagged rounds is not done yet")
    output = _model_output(options["output"], data, spec.checkpoint_every)
    shards = _shards(spec, quiet)
    if shards is not None:
        spec = dataclasses.replace(spec, sharding=dataclasses.replace(spec.sharding, jobs=shards[1]))
    _refuse_same_files(
        [("DATA", data)] + [("DATA", s) for s in (shards[0] if shards else ())] + [("--resume", resume_path)],
        [("-o", output), ("--curve", curve_path)],
        # train goes on from a model and may write it back; online-to-batch writes a batch model
        may_replace={("--resume", "-o")} if hypothesis in (None, "online", "running-average") else (),
    )
    checkpoints = []  # the model's example count (resumed ones included) at each checkpoint written
    # train --resume M … -o M: M is replaced only while it is the file read (another run may continue it too)
    read = resume.read_from if resume is not None and _same_file(output, resume_path) else None

    def checkpoint(model):
        with stop_signals_deferred():
            model.save(output, resume=model.hypothesis not in AVERAGES, expect=read)
            checkpoints.append(model.learner.counter("examples"))

    terminal = sys.stderr.isatty()
    progress = Progress(
        rows=not quiet and (terminal if options["progress"] is None else options["progress"]),
        live=not quiet and terminal and options["progress"] is not False,
    )
    with _training_failures(output, resume_path, checkpoints), contextlib.ExitStack() as outputs:
        task = resume.task if resume is not None else task_.named(spec.task)  # a resumed model goes on with its own
        curve = _open_curve(outputs, curve_path, options["curve_every"], task)
        watch = pipeline.Watch(progress, curve, checkpoint, progress.update)
        with progress, stop_signals_raise_interrupt():
            if spec.sharding:
                result = _train_sharded(spec, resume, watch)
            else:
                result = pipeline.train(spec, data, resume, watch)
            kept = result.examples == 0 and read is not None
            if not kept:
                result.model.save(output, resume=spec.save_resume, expect=read)
    summary = _train_summary(result, result.spec or spec, output)
    if result.examples == 0:  # a resumed model over an empty day: no error in a cron job
        left = f"; {output} left as it was" if kept else ""
        summary["notes"].insert(0, f"{result.source} holds no examples: the model learned nothing new{left}")
    if options["algorithm"] is None and resume is None:
        summary["notes"].insert(0, f"{summary['algorithm']}: the default for {_data_kind(summary)} (-a NAME chooses)")
    if options["as_json"]:
        click.echo(json.dumps(summary))
    if not quiet:
        _print_train_summary(summary, result)


def _same_file(path: str, other: str | None) -> bool:
    try:
        return other is not None and os.path.samefile(path, other)
    except (OSError, ValueError):
        return False


def _shards(spec: TrainSpec, quiet: bool) -> tuple[list, int] | None:
    """A sharded run's shards that are files (a glob that matches nothing is said later, in its
    place) and its local cluster's workers, at most one per shard and per core (said when --jobs is
    lowered)."""
    if spec.sharding is None:
        return None
    from ..run.distributed.sources import is_url, shard_sources  # only a sharded run pays for its import

    shards = []
    with contextlib.suppress(ValueError, ImportError):
        shards = shard_sources(spec.sharding.inputs)
    jobs = spec.sharding.jobs
    if spec.sharding.backend == "dask" and spec.sharding.scheduler is None:
        jobs, note = bounds.workers(jobs, max(len(shards), 1), "shard")
        if note and not quiet:
            click.echo(f"budgetlearn: note: {note}", err=True)
    return [s for s in shards if not is_url(s)], jobs


def _train_sharded(spec: TrainSpec, resume, watch):
    """distributed.train, its refusals as one line: settings (exit 2), a cluster (exit 1)."""
    from ..run import distributed

    try:
        return distributed.train(spec, resume, watch)
    except DataError:
        raise
    except ValueError as exc:
        fail(str(exc), 2)
    except RuntimeError as exc:
        fail(str(exc))


@contextlib.contextmanager
def _training_failures(output: str, resume_path: str | None, checkpoints: list):
    """One line for each way a training run can fail, saying what `output` holds then."""
    held = f" ({output} holds the checkpoint after {{:,}} examples)"
    try:
        yield
    except DefaultRefuses as exc:
        raise click.UsageError(str(exc)) from None
    except (DataError, CurveWriteError, UnloadableModel) as exc:
        fail(
            (f"{output}: {exc}" if isinstance(exc, UnloadableModel) else str(exc))
            + (held.format(checkpoints[-1]) if checkpoints else "")
        )
    except ArithmeticError as exc:  # a division by 0 in a loop: a resumed state that is finite but inconsistent
        where = (
            f"{resume_path}: cannot go on from this model: its saved state is inconsistent"
            if resume_path
            else "training failed"
        )
        fail(f"{where} ({type(exc).__name__}: {exc})")
    except OSError as exc:
        fail(f"{output}: cannot write the model: {exc.strerror or exc}")
    except KeyboardInterrupt as exc:
        fail(
            f"{interrupt_name(exc)}; "
            + (
                f"{output} holds the checkpoint after {checkpoints[-1]:,} examples"
                if checkpoints
                else "no model written"
            ),
            interrupt_exit_code(exc),
        )


def _open_curve(outputs: contextlib.ExitStack, curve_path: str | None, every: int, task=None) -> LearningCurve | None:
    """The --curve file, written through a temporary file like every output: a run that fails leaves
    an existing curve as it was."""
    if curve_path is None:
        return None
    try:
        curve_file = outputs.enter_context(output_file(curve_path))
    except OSError as exc:
        raise CurveWriteError(f"{curve_path}: cannot write the curve: {exc.strerror or exc}") from None
    return LearningCurve(curve_file, every, curve_path, task)


def _data_kind(summary: dict) -> str:
    if summary.get("task") in ("regression", "novelty"):
        return "regression" if summary["task"] == "regression" else "novelty detection"
    return "multiclass data" if summary["algorithm"] == registry.DEFAULT["multiclass"] else "two labels"


def _train_summary(result, spec: TrainSpec, output) -> dict:
    learner = result.model.learner
    t = learner.counter("examples")
    return {
        "algorithm": spec.algorithm,
        "params": learner.hyper,
        "kernel": learner.kernel.to_dict()
        | {"sigma": learner.kernel.sigma if learner.kernel.kind != "linear" else None},
        "data": result.source,
        "examples": t,
        **({} if result.model.task.name == "classification" else {"task": result.model.task.name}),
        **result.model.task.summary(result.model.hypothesis_learner()),  # a novelty model's ρ: the written one
        "projections": learner.counter("projections"),
        "support_size": learner.support_size(),
        "skipped_lines": result.n_skipped,
        "seconds": round(result.seconds, 4),
        "model": output,
        "warnings": result.warnings,
        "notes": list(result.online.learner.notes),  # the online learner's (a batch model is a copy)
        "hypothesis": spec.written,
        "online_support_size": result.online.learner.support_size(),
        # whether `train --resume` from the file written goes on bit for bit (null: a batch model)
        "resume_exact": None if spec.written in AVERAGES else result.model.inexact_resume() is None,
        "resume_not_exact": result.model.inexact_resume(),
    }


def _print_train_summary(s: dict, result) -> None:
    lines = [
        describe(result.model.learner),
        f"examples        {s['examples']:,}",
        *result.model.task.summary_lines(s),
        "{:<15} {}".format(*result.model.learner.summary_row()),  # its hypothesis' size, as its kind says it
        f"seconds         {s['seconds']:.2f}",
        f"model           {s['model']} (predicts with "
        + ("the shards' mixed last hypotheses)" if result.model.mixed_once() else f"{HYPOTHESES[s['hypothesis']]})"),
    ]
    if s["resume_exact"] is not None:
        lines.append(
            "resume          "
            + (
                "bit for bit"
                if s["resume_exact"]
                else f"not resumable: {s['resume_not_exact']}"
                if result.model.mixed_once()
                else f"not bit for bit: {s['resume_not_exact']} (--save-resume keeps it)"
            )
        )
    if s["support_size"] > s["online_support_size"]:
        lines.append(
            f"note            the exact average keeps {s['support_size'] - s['online_support_size']:,} "
            f"evicted support vectors beyond the online {s['online_support_size']:,}; "
            "--method projected-average stays within the budget"
        )
    if s["skipped_lines"]:
        lines.append(f"skipped         {s['skipped_lines']:,} malformed lines (first: {result.skipped[0]})")
    lines += [f"note            {n}" for n in s["notes"]]
    lines += [f"warning         {w}" for w in s["warnings"]]
    click.echo("\n".join(lines), err=True)
