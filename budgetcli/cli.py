"""The `budgetlearn` command: parses options, wires the pipeline stages together, prints.

Exit codes: 0 success; 1 bad data, bad model file, an output that cannot be written (standard
output included: a full disk, an I/O error) or a failed run (one line on stderr naming the file and
line); 2 bad usage (unknown option, bad parameter value); 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM).  A reader of standard output that goes away (`| head -1`) ends the command quietly with
exit 0, as a pipeline expects.  Results go to stdout, summaries and progress to stderr.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import sys
import zipfile

import click
import numpy as np

from . import algorithms, bounds, metrics, pipeline, registry
from .exits import fail, write_failed
from .atomic import (
    SameFileError,
    interrupt_exit_code,
    interrupt_name,
    output_file,
    output_kind,
    refuse_same_files,
    stop_signals_deferred,
    stop_signals_raise_interrupt,
    writable_problem,
)
from . import predict as predict_
from . import tune as tune_
from .core import DataError, KernelSpec, parse_number, shortest_text, unique
from .io.libsvm import read_once, write_libsvm
from .kernels import KERNEL_PARAMS
from .curve import CurveWriteError, LearningCurve, describe
from .progress import Progress
from .export import IMPORTABLE
from .model import HYPOTHESES, Model, UnloadableModel
from .modelfile import ModelFileError
from .spec import (
    AVERAGES,
    BACKENDS,
    FROM_MODEL,
    MAX_THREADS,
    DefaultRefuses,
    NotResumable,
    Sharding,
    TrainSpec,
    refuse_resume,
)
from .synthetic import GENERATORS

ALGORITHMS = algorithms.load_all()
SEED = click.IntRange(min=0)  # numpy's generators (--shuffle, tune's permutations) take no negative seed


class AlgorithmName(click.ParamType):
    """An algorithm's name in any case; a typo gets "did you mean" (registry.canonical)."""

    name = "algorithm"

    def convert(self, value, param, ctx):
        try:
            return registry.canonical(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)

    def shell_complete(self, ctx, param, incomplete):
        from click.shell_completion import CompletionItem

        return [CompletionItem(n) for n in sorted(ALGORITHMS) if n.startswith(incomplete.lower())]


class Jobs(click.types.IntParamType):
    """A --jobs value, by the rule every edge checks (bounds.check_jobs)."""

    def convert(self, value, param, ctx):
        try:
            return bounds.check_jobs(super().convert(value, param, ctx))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


# positional paths: typed so that the shells complete them as files (click's Path, no check made here)
DATA_PATH = click.Path(allow_dash=True)
MODEL_PATH = click.Path()
WRITTEN = {"average": "running-average", "last": "online"}  # train --hypothesis: the spec's hypothesis


def _refuse_same_files(inputs, outputs, may_replace=()) -> None:
    """One line and exit 2, as `cp` refuses, when an output is an input or another output
    (atomic.refuse_same_files); checked before anything is opened for writing."""
    try:
        refuse_same_files(inputs, outputs, may_replace)
    except SameFileError as exc:
        fail(str(exc), 2)


def _console(**kwargs):
    """A rich console on stdout whose closed pipe ends the command as every other write does (rich's
    own handling exits 1)."""
    from rich.console import Console

    class StdoutConsole(Console):
        def on_broken_pipe(self):
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return StdoutConsole(**kwargs)


def _param_options(f):
    """One click option per algorithm parameter, generated from its one declaration (registry.PARAMS)."""
    for name in sorted(registry.params(), reverse=True):
        p = registry.PARAMS[name]
        by_default: dict = {}
        for algo, cls in sorted(ALGORITHMS.items()):
            for q in cls.params:
                if q.name == name:
                    by_default.setdefault(q.default_text or q.default, []).append(algo)
        defaults = "; ".join(
            f"{d:g} for {', '.join(algos)}" if isinstance(d, float) else f"{d} for {', '.join(algos)}"
            for d, algos in by_default.items()
        )
        f = click.option(*p.flags, name, type=p.type, default=None, help=f"{p.help}. Default: {defaults}.")(f)
    return f


def _kernel_options(f):
    """One click option per kernel parameter, from its one declaration (kernels.KERNEL_PARAMS)."""
    for p in reversed(KERNEL_PARAMS.values()):
        default = f"; default {p.default_text}" if p.default_text else ""
        f = click.option(
            *p.flags,
            p.name,
            type=click.Choice(p.choices) if p.choices else p.type,
            default=p.default,
            show_default=p.default is not None,
            help=p.help + default + ".",
        )(f)
    return f


def _train_options(f):
    """The options of `train`, shared by `online-to-batch`."""
    for decorator in reversed(
        [
            click.option(
                "-a",
                "--algorithm",
                type=AlgorithmName(),
                metavar="NAME",
                help=f"Learning algorithm (see `budgetlearn algorithms`). Default: {registry.DEFAULT['binary']} "
                f"for two labels, {registry.DEFAULT['multiclass']} for more (by the first block's labels); "
                "a resumed model's own.",
            ),
            _kernel_options,
            _param_options,
            click.option(
                "--class-weight",
                "class_weight",
                multiple=True,
                metavar="LABEL:W",
                help="The cost of an update on an example of class LABEL, as svm-train's -wLABEL W sets C_i = W·C "
                "(repeat for several classes; the others weigh 1): how each algorithm takes it, `budgetlearn "
                "algorithms` says; the others refuse it. A resumed model keeps its own.",
            ),
            click.option(
                "-w",
                "weight_options",
                nargs=2,
                multiple=True,
                metavar="LABEL W",
                help="svm-train's spelling of --class-weight LABEL:W: -w1 3, -w-1 0.5.",
            ),
            click.option(
                "--seed",
                type=SEED,
                default=0,
                show_default=True,
                help="Seed of the algorithm's random choices and of --shuffle.",
            ),
            click.option(
                "--epochs",
                type=click.IntRange(min=1),
                default=1,
                show_default=True,
                help="Passes over DATA. A file is streamed again for each pass; stdin, a pipe or a FIFO is kept "
                "in memory.",
            ),
            click.option(
                "--shuffle",
                is_flag=True,
                help="Shuffle the examples in every pass (seeded by --seed); reads DATA into memory.",
            ),
            click.option(
                "--scale",
                is_flag=True,
                help="Scale every feature onto [-1, 1] as svm-scale does, by ranges the model keeps and applies "
                "wherever it scores (predict, eval, calibrate, the Python API): the ranges of a first pass over "
                "DATA when it is a file, of its first block when it is a stream (a feature first seen later is "
                "left out). A resumed model keeps its own.",
            ),
            click.option(
                "--scale-ranges",
                type=click.Path(dir_okay=False),
                default=None,
                metavar="FILE",
                help="Scale by the ranges of FILE (budgetlearn scale -s, or svm-scale -s), kept in the model "
                "as with --scale.",
            ),
            click.option(
                "--threads",
                type=click.IntRange(min=1, max=MAX_THREADS),
                default=1,
                show_default=True,
                metavar="N",
                help="projectron and projectron++: the factor's products on N threads, from 256 support "
                "vectors; the same model file, byte for byte, as one thread.",
            ),
            click.option(
                "-o",
                "--output",
                type=click.Path(dir_okay=False),
                default=None,
                help="Model file to write (default DATA.model; required when DATA is '-').",
            ),
            click.option(
                "--resume",
                "resume_path",
                type=click.Path(dir_okay=False),
                default=None,
                metavar="MODEL",
                help="Continue training MODEL where it stopped (its algorithm, kernel, parameters, labels, "
                "counters and random state): bit for bit when it was saved with --save-resume (or is a "
                "checkpoint), else after rebuilding its resume state from the support vectors (a note says "
                "when that is not bit for bit); -o may name the same file.",
            ),
            click.option(
                "--skip-bad-lines", is_flag=True, help="Skip malformed lines (and report how many) instead of failing."
            ),
            click.option(
                "--save-resume",
                is_flag=True,
                help="Also write the resume state (the Gram inverse or matrix of the Projectron, SOP, CKS "
                "and Ahpatron families: |S|² numbers; the archive of evicted vectors an evicting learner's "
                "average keeps), so that --resume continues bit for bit. Without it the model holds what "
                "prediction needs and the small state, and --resume rebuilds the rest from the support "
                "vectors (as Vowpal Wabbit's --save_resume); the summary says whether that is bit for bit.",
            ),
            click.option(
                "--checkpoint-every",
                type=click.IntRange(min=1),
                default=None,
                metavar="N",
                help="Every N examples, write the model so far to the -o file (atomically, as the final "
                "save, and with the resume state). Interrupted or killed, the file holds the last "
                "complete checkpoint; --resume continues from it bit for bit.",
            ),
            click.option("-q", "--quiet", is_flag=True, help="No summary or progress on stderr."),
            click.option(
                "--progress/--no-progress",
                default=None,
                help="Vowpal Wabbit's progress table on stderr: a row at 1, 2, 4, 8, ... examples with the "
                "online mistake rate so far and since the last row, examples, support vectors, and the "
                "share of the input read and the time left when its size is known. Default: on when "
                "stderr is a terminal (with a live line below the rows), off otherwise.",
            ),
            click.option(
                "--json",
                "as_json",
                is_flag=True,
                help='Print the summary as one JSON object on stdout; its "warnings" list (empty when none) '
                "holds the summary's warning lines.",
            ),
            click.option(
                "--curve",
                "curve_path",
                type=click.Path(dir_okay=False),
                default=None,
                metavar="FILE.csv",
                help="Log a learning curve to FILE.csv: t, mistakes, online_rate, support_size, seconds, "
                "every --curve-every examples and at the end (`budgetlearn plot` draws it).",
            ),
            click.option(
                "--curve-every",
                type=click.IntRange(min=1),
                default=1000,
                show_default=True,
                metavar="K",
                help="Examples between two rows of --curve.",
            ),
            click.argument("data", type=DATA_PATH),
            click.pass_context,
        ]
    ):
        f = decorator(f)
    return f


def _algorithm_in(args: list[str]) -> str | None:
    """The -a NAME of a command line, before click parses it (for --help, which is handled first)."""
    for i, arg in enumerate(args):
        if arg in ("-a", "--algorithm") and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--algorithm="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-a") and not arg.startswith("--") and len(arg) > 2:
            value = arg[2:]
        else:
            continue
        try:
            return registry.canonical(value)
        except ValueError:
            return None
    return None


class _TrainCommand(click.Command):
    """train's and online-to-batch's help: the general options, then a pointer to `-a NAME --help`,
    which lists that algorithm's own options instead of the parameters of all of them."""

    def parse_args(self, ctx, args):
        ctx.meta["help_algorithm"] = _algorithm_in(args)
        return super().parse_args(ctx, args)

    def format_options(self, ctx, formatter):
        name = ctx.meta.get("help_algorithm")
        own = {p.name: p for p in ALGORITHMS[name].params} if name else {}
        general, algorithm = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.name not in registry.params():
                general.append(record)
            elif param.name in own:  # its own default, not every algorithm's
                q = own[param.name]
                default = q.default_text or (f"{q.default:g}" if isinstance(q.default, float) else q.default)
                algorithm.append((record[0], f"{q.help}. Default: {default}."))
        with formatter.section("Options"):
            formatter.write_dl(general)
        if name:
            with formatter.section(f"Options of {name}"):
                formatter.write_dl(algorithm or [("(none)", "")])
        else:
            with formatter.section("Options of an algorithm"):
                formatter.write_text(
                    f"budgetlearn {ctx.info_name} -a NAME --help lists them; budgetlearn algorithms lists the names."
                )


class _MoreData(click.Argument):
    """train's further inputs (shards), left out of the usage line, which stays `DATA` as scripts
    matching it expect; the command's help names them."""

    def get_usage_pieces(self, ctx):
        return []


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
    "from the other folds' examples in file order. DATA is read into memory.",
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
    (budgetcli/distributed/); the algorithms that cannot be mixed are refused. With --epochs, every
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
    """train -v K: the folds' accuracy on stdout as svm-train prints it (crossval.py), no model written."""
    from . import crossval

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
    try:
        cv = crossval.cross_validate(spec, options["data"], k)
    except DefaultRefuses as exc:
        raise click.UsageError(str(exc)) from None
    except DataError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail("interrupted", 130)
    click.echo(json.dumps(cv.to_dict()) if options["as_json"] else crossval.accuracy_line(cv.accuracy))
    if not options["quiet"]:
        lines = [f"note            {cv.note}"] if cv.note else []
        lines.append(
            f"folds           {len(cv.folds)} of {cv.examples:,} examples (stratified, --seed {spec.seed}): "
            + ", ".join(f"{100 * f.correct / f.examples:.2f}%" for f in cv.folds)
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


def _given(ctx, name: str) -> bool:
    return ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT


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


def _scale(scale: bool, ranges_path: str | None):
    """TrainSpec.scale of --scale and --scale-ranges FILE (read here: a bad file is one line, exit 1)."""
    if ranges_path is None:
        return scale
    if scale:
        raise click.UsageError("--scale takes the data's ranges, --scale-ranges a file's; choose one")
    from .scaling import read_ranges

    try:
        return read_ranges(ranges_path)
    except DataError as exc:
        fail(str(exc))


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
        curve = _open_curve(outputs, curve_path, options["curve_every"])
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
    from .distributed.sources import is_url, shard_sources  # only a sharded run pays for its import

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
    from . import distributed

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


def _open_curve(outputs: contextlib.ExitStack, curve_path: str | None, every: int) -> LearningCurve | None:
    """The --curve file, written through a temporary file like every output: a run that fails leaves
    an existing curve as it was."""
    if curve_path is None:
        return None
    try:
        curve_file = outputs.enter_context(output_file(curve_path))
    except OSError as exc:
        raise CurveWriteError(f"{curve_path}: cannot write the curve: {exc.strerror or exc}") from None
    return LearningCurve(curve_file, every, curve_path)


def _data_kind(summary: dict) -> str:
    return "multiclass data" if summary["algorithm"] == registry.DEFAULT["multiclass"] else "two labels"


def _train_summary(result, spec: TrainSpec, output) -> dict:
    learner = result.model.learner
    t = learner.counter("examples")
    mistakes = learner.counter("mistakes")
    return {
        "algorithm": spec.algorithm,
        "params": learner.hyper,
        "kernel": learner.kernel.to_dict()
        | {"sigma": learner.kernel.sigma if learner.kernel.kind != "linear" else None},
        "data": result.source,
        "examples": t,
        "mistakes": mistakes,
        "online_mistake_rate": mistakes / t if t else 0.0,
        "margin_updates": learner.counter("margin_updates"),
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
        f"mistakes        {s['mistakes']:,} ({100 * s['online_mistake_rate']:.2f}% online)",
        f"margin updates  {s['margin_updates']:,}",
        "{:<15} {}".format(*result.model.learner.summary_row()),  # its hypothesis' size, as its kind says it
        f"seconds         {s['seconds']:.2f}",
        f"model           {s['model']} (predicts with {HYPOTHESES[s['hypothesis']]})",
    ]
    if s["resume_exact"] is not None:
        lines.append(
            "resume          "
            + (
                "bit for bit"
                if s["resume_exact"]
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


def _looks_like_output(path: str) -> bool:
    """A second train input that is rather the model svm-train's order names: a path that does not
    exist yet, or a model file."""
    if os.path.lexists(path):  # an existing name is that file, whatever characters it holds
        return _is_model(path)
    from .distributed.sources import is_url, is_pattern

    return not is_url(path) and not is_pattern(path)


def _is_model(path: str) -> bool:
    if not os.path.isfile(path):  # never opens a FIFO or a device
        return False
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"PK" and zipfile.is_zipfile(f) and "__header__.npy" in zipfile.ZipFile(f).namelist()
    except OSError:
        return False


def _load(model_path, resume: bool = False, data: str | None = None) -> Model:
    """MODEL loaded, or one line; with `data`, the hint that the two were swapped when DATA is the model."""
    try:
        return Model.load(model_path, resume=resume)
    except ModelFileError as exc:
        ctx = click.get_current_context(silent=True)
        if data is not None and data != "-" and _is_model(data) and ctx is not None:
            fail(f"{exc}; the order is MODEL DATA: `budgetlearn {ctx.info_name} {data} {model_path}`", 2)
        fail(str(exc))


@click.command()
@click.argument("model_path", metavar="MODEL", type=MODEL_PATH)
@click.argument("data", type=DATA_PATH)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    help="Where to write predictions (default stdout). The file appears whole or not at all: it is "
    "written to a temporary file and renamed over FILE only when every line was predicted.",
)
@click.option(
    "--scores",
    is_flag=True,
    help="Binary model: write 'label score' per line, score = f(x) (positive: the model's +1 label). "
    "Multiclass model: a first line 'labels L1 ... Lm' (the class order), then 'label f_1 ... f_m' "
    "per example.",
)
@click.option(
    "--proba",
    "-b",
    "proba",
    is_flag=True,
    help="Probabilities (a calibrated model: budgetlearn calibrate), as LIBSVM's svm-predict -b 1 writes "
    "them: a first line 'labels L1 ... Lm' (a binary model's +1 label first), then 'label p_1 ... p_m' "
    "per example, label the most probable.",
)
@click.option(
    "--threshold",
    type=float,
    default=0.0,
    show_default=True,
    metavar="T",
    help="Binary model: predict its +1 label where the score f(x) > T, the other elsewhere (a higher T "
    "trades the +1 label's recall for its precision).",
)
@click.option("--skip-bad-lines", is_flag=True, help="Skip malformed lines instead of failing.")
@click.option(
    "-j",
    "--jobs",
    type=Jobs(),
    default=1,
    show_default=True,
    help="Worker processes (-1: one per core), each reading its own byte range of DATA; the output is "
    "the same as with 1. Compressed files and stdin are read serially.",
)
def predict(model_path, data, output, scores, proba, threshold, skip_bad_lines, jobs):
    """Predict one label per example of DATA, in input order."""
    if scores and proba:
        raise click.UsageError("--scores and --proba are two outputs; choose one")
    if proba and threshold != 0:
        raise click.UsageError("--threshold moves the score's cut; --proba writes the most probable label")
    _refuse_same_files([("MODEL", model_path), ("DATA", data)], [("-o", output)])
    model = _load(model_path, data=data)
    try:
        model.check_threshold(threshold)
    except ValueError as exc:
        raise click.UsageError(f"{model_path}: --threshold {threshold:g}: {exc}") from None
    if proba and model.calibration is None:
        fail(
            f"{model_path}: the model is not calibrated; "
            f"`budgetlearn calibrate {model_path} HELD_OUT -o MODEL` fits its probabilities"
        )
    jobs, note = predict_.parallel_jobs(data, jobs)
    if note:
        click.echo(f"budgetlearn: note: {note}", err=True)
    try:
        with output_file(output) as out:
            columns = "probabilities" if proba else "scores" if scores else "labels"
            predict_.write_predictions(model, model_path, data, out, columns, skip_bad_lines, jobs, threshold)
    except DataError as exc:
        fail(str(exc))
    except OSError as exc:
        write_failed(output, "the predictions", exc)
    except KeyboardInterrupt:
        fail("interrupted; no predictions file written" if output != "-" else "interrupted", 130)


@click.command(name="eval")
@click.argument("model_path", metavar="MODEL", type=MODEL_PATH)
@click.argument("data", type=DATA_PATH)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--skip-bad-lines", is_flag=True, help="Skip malformed lines instead of failing.")
def eval_(model_path, data, as_json, skip_bad_lines):
    """Accuracy, precision/recall/F1 per class, AUC and confusion matrix of MODEL on DATA."""
    model = _load(model_path, data=data)
    labels = model.labels
    all_scores, all_true = [], []  # binary: f(x); multiclass: the predicted class (memory: O(examples))
    tally = metrics.ProbabilityTally() if model.calibration is not None else None
    try:
        for chunk, f in pipeline.scores(model, data, skip_bad_lines=skip_bad_lines):
            if tally is not None:
                tally.add(model.probabilities(f), labels.index_of(chunk.labels))
            all_scores.append(labels.predict_index(f) if model.learner.multiclass else f)
            all_true.append(chunk.labels)
            for v, s in chunk.label_spellings.items():
                labels.spellings.setdefault(v, s)
    except DataError as exc:
        fail(str(exc))
    true = np.concatenate(all_true) if all_true else np.zeros(0)
    if true.size == 0:
        fail(f"{data}: no examples to evaluate")
    if model.learner.multiclass:
        report = metrics.multiclass_report(labels.classes, labels.spelling, true, np.concatenate(all_scores))
    else:
        report = metrics.binary_report(labels, true, np.concatenate(all_scores))
    if tally is not None:
        report |= tally.report()
    report["warnings"] = metrics.warnings(report, [labels.spelling(v) for v in labels.classes])
    if as_json:
        click.echo(json.dumps(report))
    else:
        _print_eval(report)
        for warning in report["warnings"]:
            click.echo(f"warning: {warning}", err=True)


def _print_eval(r: dict) -> None:
    from rich.table import Table

    console = _console(highlight=False)
    if r.get("multiclass"):  # AUC is binary-only
        auc = ""
    elif r["auc"] is None:
        auc = f"\nAUC       n/a (one class only) (positive label {r['positive_label']})"
    else:
        auc = f"\nAUC       {r['auc']:.4f} (positive label {r['positive_label']})"
    probabilities = ""
    if r.get("log_loss") is not None:
        probabilities = f"\nlog loss  {r['log_loss']:.4f}\nECE       {r['ece']:.4f} (10 bins of the top probability)"
    console.print(
        f"examples  {r['examples']:,}\naccuracy  {100 * r['accuracy']:.2f}%\nerror     {100 * r['error']:.2f}%{auc}"
        + probabilities
    )
    table = Table(title="per class", title_justify="left")
    for col in ("label", "precision", "recall", "F1", "support"):
        table.add_column(col, justify="right")
    for name, m in r["classes"].items():
        table.add_row(name, f"{m['precision']:.4f}", f"{m['recall']:.4f}", f"{m['f1']:.4f}", f"{m['support']:,}")
    console.print(table)
    cm = r["confusion_matrix"]
    table = Table(title="confusion matrix", title_justify="left")
    table.add_column("true \\ predicted", justify="right")
    for name in cm["labels"]:
        table.add_column(name, justify="right")
    for name, row in zip(cm["labels"], cm["rows_true_columns_predicted"]):
        table.add_row(name, *(f"{v:,}" for v in row))
    console.print(table)


@click.command()
@click.argument("model_path", metavar="MODEL", type=MODEL_PATH)
@click.argument("data", type=DATA_PATH)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="The calibrated model file to write; may name MODEL itself (replaced whole, atomically).",
)
@click.option("--skip-bad-lines", is_flag=True, help="Skip malformed lines instead of failing.")
def calibrate(model_path, data, output, skip_bad_lines):
    """Fit the probabilities of MODEL on the held-out DATA (examples it was not trained on): Platt's
    sigmoid of the scores, fitted as LIBSVM's -b 1 fits it (Lin, Lin and Weng 2007); for several classes
    a sigmoid per pair of classes on the difference of their scores, coupled as LIBSVM couples them
    (Wu, Lin and Weng 2004, method 2).  The model predicts as before; predict --proba writes
    probabilities and eval reports their log loss and calibration error.  Training the model further
    drops its calibration."""
    from .api import fit_calibration

    _refuse_same_files([("MODEL", model_path), ("DATA", data)], [("-o", output)], may_replace={("MODEL", "-o")})
    problem = writable_problem(output)  # before the held-out data is read
    if problem:
        fail(f"{output}: cannot write the model: {problem}")
    model = _load(model_path, resume=True, data=data)
    try:
        warnings = fit_calibration(model, data, skip_bad_lines=skip_bad_lines)
    except DataError as exc:
        fail(str(exc))
    except ValueError as exc:
        fail(f"{data}: {exc}")
    try:
        model.save(output, resume=model.resume_state)
    except UnloadableModel as exc:
        fail(f"{output}: {exc}")
    except OSError as exc:
        write_failed(output, "the model", exc)
    c = model.calibration
    sigmoids = (
        f"Platt's sigmoid A={c['A'][0]:.6g}, B={c['B'][0]:.6g}"
        if c["method"] == "platt"
        else (f"{len(c['A'])} pairwise sigmoids")
    )
    click.echo(f"calibrated on {c['examples']:,} examples of {data}: {sigmoids}; wrote {output}", err=True)
    for warning in warnings:  # as eval prints its own
        click.echo(f"warning: {warning}", err=True)


@click.command()
@click.argument("model_path", metavar="MODEL", type=MODEL_PATH)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["libsvm"]),
    default="libsvm",
    show_default=True,
    help="libsvm: LIBSVM's model text format, read by svm-predict and libsvm's svm_load_model.",
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="File to write ('-' for stdout).",
)
def export(model_path, fmt, output):
    """Write MODEL in another tool's format: a binary model with a linear, poly or rbf kernel as a
    LIBSVM C-SVC model that gives the same predictions.

    Multiclass models, models that saw one label only and non-integer labels are refused:
    LIBSVM's format cannot express them. Nothing is written on failure."""
    from .export import ExportError, libsvm_text

    _refuse_same_files([("MODEL", model_path)], [("-o", output)])
    model = _load(model_path)
    try:
        text = libsvm_text(model, model_path)
    except ExportError as exc:
        fail(str(exc))
    try:
        with output_file(output) as f:
            f.write(text)
    except OSError as exc:
        write_failed(output, "the LIBSVM model", exc)


@click.command(name="import")
@click.argument("libsvm_model", metavar="LIBSVM_MODEL", type=MODEL_PATH)
@click.option(
    "-a",
    "--algorithm",
    type=click.Choice(IMPORTABLE, case_sensitive=False),
    default="perceptron",
    show_default=True,
    help="Algorithm that goes on learning from the imported model with train --resume.",
)
@click.option("-C", "--cost", type=float, default=None, help="C of pa-i / pa-ii (default 1).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed stored in the model.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="budgetlearn model file to write.")
def import_(libsvm_model, algorithm, cost, seed, output):
    """Read a binary LIBSVM C-SVC model (linear, poly or rbf kernel) as a budgetlearn model, which
    predicts as svm-predict does and is a starting point for `train --resume`.

    Its support vectors, coefficients, kernel, bias (−rho) and labels are kept (LIBSVM's first label
    is the one with positive scores); predict, eval, export and a resumed run keep the bias as it is
    (no algorithm here learns one); its counters start at zero."""
    from .export import ExportError, import_libsvm

    _refuse_same_files([("LIBSVM_MODEL", libsvm_model)], [("-o", output)])
    params = {} if cost is None else {"cost": cost}
    try:
        model = import_libsvm(libsvm_model, ALGORITHMS[algorithm], params, seed=seed)
    except (DataError, ExportError) as exc:
        fail(str(exc))
    except ValueError as exc:  # a parameter the algorithm does not take or a bad value
        raise click.UsageError(str(exc))
    try:
        model.save(output)
    except UnloadableModel as exc:
        fail(f"{output}: {exc}")
    except OSError as exc:
        fail(f"{output}: cannot write the model: {exc.strerror or exc}")


@click.command()
@click.argument("model_path", metavar="MODEL", type=MODEL_PATH)
@click.option("--json", "as_json", is_flag=True, help="Print the description as one JSON object.")
def info(model_path, as_json):
    """Describe MODEL: algorithm, parameters, kernel, labels, hypothesis, support size, bytes and
    training counters."""
    from .info import describe, format_text

    d = describe(_load(model_path), model_path)
    click.echo(json.dumps(d) if as_json else format_text(d))


@click.command()
@click.argument("curves", nargs=-1, required=True, metavar="FILE.csv...", type=MODEL_PATH)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="Image to write; the format follows the extension (.png, .svg, .pdf).",
)
@click.option("--label", "labels", multiple=True, help="Legend entry of each FILE.csv, in order (default: file names).")
@click.option("--title", default=None, help="Title above the two panels.")
@click.option(
    "--size",
    nargs=2,
    type=click.FloatRange(min=1, max=50),
    default=(8.0, 6.0),
    show_default=True,
    metavar="W H",
    help="Figure size in inches (at 100 dots per inch), 1 to 50 each.",
)
def plot(curves, output, labels, title, size):
    """Draw online error rate and support size against examples from `train --curve` files, one line
    per file. Needs matplotlib (pip install 'budgetlearn[plot]')."""
    from .plot import PlotError, plot_curves

    _refuse_same_files([("FILE.csv", c) for c in curves], [("-o", output)])
    try:
        plot_curves(list(curves), output, labels=list(labels) or None, title=title, width=size[0], height=size[1])
    except PlotError as exc:
        fail(str(exc))
    except OSError as exc:
        write_failed(output, "the image", exc)


def _tune_run(runs, settings, grid, jobs, backend, scheduler, sort, csv_path, save_best, writing: list):
    """Run the grid; write the table and the best model as asked, appending (path, what) to `writing`
    before each.  Returns the sorted rows and the best run (None without --save-best)."""
    results = tune_.run_all(runs, jobs, backend, scheduler)
    rows = tune_.table(settings, results, sort)
    if csv_path is not None:
        writing.append((csv_path, "the table"))
        tune_.write_csv(csv_path, rows, [n for n, _ in grid], runs[0].spec.epochs)
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
@click.option("--test", type=click.Path(dir_okay=False), default=None, help="Test file: accuracy of every run.")
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
    help="Order of the table, best first [default: test-accuracy with --test, else error].",
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
@_kernel_options
@_param_options
@click.argument("data", type=DATA_PATH)
def tune(
    algorithm,
    grids,
    permutations,
    seed,
    epochs,
    test,
    jobs,
    backend,
    scheduler,
    sort,
    as_json,
    csv_path,
    save_best,
    hypothesis,
    folds,
    scale,
    scale_ranges,
    data,
    **options,
):
    """Train every (setting, permutation) pair of a parameter grid in parallel and print mean ± std
    of the online mistake rate, support size, test accuracy and seconds per setting.

    Options outside --grid fix a parameter for every setting. Each run reads DATA (and --test) from
    its path in the worker, so on a cluster the paths must be readable by every worker. Results
    are the same whatever --jobs or --backend: only the seconds differ.

    A grid value that provably learns nothing is refused, as train refuses it. The notes column
    refers to the warnings of a setting's runs, listed under the table (and in --json and --csv);
    a setting with a run that ended with no support vector is marked "nothing learned" and ranks
    after every setting that learned something, whatever --sort says."""
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
        algorithm = _default_algorithm(data)
    if folds and _given(ctx, "permutations"):
        raise click.UsageError("--folds K makes a setting's runs its K folds; drop --permutations")
    sort = sort or ("cv-accuracy" if folds else "test-accuracy" if test else "error")
    if sort == "test-accuracy" and not test:
        raise click.UsageError("--sort test-accuracy needs --test")
    if sort == "cv-accuracy" and not folds:
        raise click.UsageError("--sort cv-accuracy needs --folds K")
    scaled = _scale(scale, scale_ranges)
    _refuse_same_files([("DATA", data), ("--test", test)], [("--csv", csv_path), ("--save-best", save_best)])
    for path, what in ((csv_path, "the table"), (save_best, "the model")):
        problem = path and writable_problem(path)
        if problem:
            fail(f"{path}: cannot write {what}: {problem}")
    try:
        grid = tune_.parse_grid(list(grids), algorithm)
        _no_grid_contradiction(grid, params, kernel.gamma, kernel.sigma)
        settings = tune_.settings_of(grid)
        base = TrainSpec(
            algorithm,
            kernel,
            params,
            seed,
            epochs,
            hypothesis=WRITTEN[hypothesis] if hypothesis else None,
            scale=scaled,
        )
        runs = tune_.plan(data, test, base, settings, permutations, folds or 0)
    except ValueError as exc:
        raise click.UsageError(str(exc))
    if scaled is True and not folds:  # a permuted run reads DATA in another order: the ranges of train --scale DATA
        from .scaling import of_data

        try:
            ranges = of_data(data, kernel.kind).ranges
        except DataError as exc:
            fail(str(exc))
        runs = [dataclasses.replace(r, spec=dataclasses.replace(r.spec, scale=ranges)) for r in runs]

    if scheduler is None:  # local processes or threads; a cluster's own workers decide there
        jobs, note = bounds.workers(jobs, len(runs), "run")
        if note:
            click.echo(f"budgetlearn: note: {note}", err=True)
    writing = []  # (path, what) of the output being written
    try:
        rows, best = _tune_run(runs, settings, grid, jobs, backend, scheduler, sort, csv_path, save_best, writing)
        best_command = _best_command(
            algorithm, kernel, params, rows[0], sort, data, epochs, hypothesis, seed, folds, scale, scale_ranges
        )
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
    if as_json:
        click.echo(
            json.dumps(
                {
                    "algorithm": algorithm,
                    "sort": sort,
                    "permutations": permutations,
                    "seed": seed,
                    "epochs": epochs,
                    "rows": [r.to_dict() for r in rows],
                    "best": best_command,
                }
            )
        )
    else:
        _print_tune(algorithm, sort, rows, epochs, best_command)
    if save_best is not None:
        seed_note = f", seed {best.seed}" if best is not None else ""
        click.echo(f"best model: {save_best} ({tune_._describe(rows[0].setting)}{seed_note})", err=True)


def _default_algorithm(data: str) -> str:
    """train's default algorithm for DATA, by the labels of its first block (registry.default_for)."""
    from .io.libsvm import LibsvmReader

    try:
        with LibsvmReader(data) as reader:
            first = next(iter(reader), None)
    except DataError as exc:
        fail(str(exc))
    if first is None:
        fail(f"{data}: no examples to train on")
    return registry.default_for(len(unique(first.labels)))


def _best_command(algorithm, kernel, params, top, sort, data, epochs, hypothesis, seed, folds, scale, ranges) -> str:
    """The `budgetlearn train` command whose model the table's best setting is: with --folds the model its
    cross-validation estimates (train -v K of the same command prints its accuracy); else its best run's
    (`--shuffle --seed S` for a permuted run), as --save-best saves it."""
    from .grid import train_command

    setting_kernel = {k: v for k, v in top.setting.items() if k in tune_.KERNEL_GRID}
    default = KernelSpec().params()
    given_kernel = {k: v for k, v in kernel.params().items() if v != default[k] and v is not None}
    more = [] if epochs == 1 else ["--epochs", str(epochs)]
    more += ["--hypothesis", hypothesis] if hypothesis else []
    more += ["--scale"] if scale else ["--scale-ranges", ranges] if ranges else []
    run = None if folds else tune_.best_run(top, sort)
    if run is not None and run.permutation >= 0:
        more += ["--shuffle", "--seed", str(run.seed)]
    elif seed:
        more += ["--seed", str(seed)]
    setting_params = {k: v for k, v in top.setting.items() if k not in tune_.KERNEL_GRID}
    return train_command(algorithm, given_kernel | setting_kernel, params | setting_params, data, tuple(more))


def _print_tune(algorithm, sort, rows, epochs, best_command: str) -> None:
    from rich.table import Table

    table = Table(
        title=f"{algorithm}, {len(rows[0].runs)} run(s) per setting of {epochs} pass(es), sorted by {sort}",
        title_justify="left",
    )
    cv = ("cv accuracy %",) if rows[0].stats("cv_accuracy")[0] is not None else ()
    for col in ("rank", "setting", *cv, "online error %", "support size", "test accuracy %", "seconds", "notes"):
        table.add_column(col, justify="left" if col in ("setting", "notes") else "right")
    cells, legend = tune_.format_table(rows, sort)
    for row in cells:
        table.add_row(*row)
    console = _console(highlight=False)
    console.width = max(120 if cv else 100, console.width)
    console.print(table)
    click.echo(f"best: {best_command}")
    if any(r.learned_nothing for r in rows):
        click.echo("nothing learned: a run ended with f = 0 (0 support vectors); such settings rank last")
    for line in legend:  # whole lines, never wrapped
        click.echo(line)


@click.command()
def algorithms():
    """List the algorithms with their parameters and papers, after where to start."""
    click.echo(
        "Start here (docs/ALGORITHMS.md has every algorithm measured with its defaults):\n"
        f"  two labels           {registry.DEFAULT['binary']:<30} the default: train DATA (a9a.t 85.10%)\n"
        f"  three or more labels {registry.DEFAULT['multiclass']:<30} the default for more labels (letter 76.46%)\n"
        f"  a hard memory bound  {'forgetron, bpegasos -B N':<30} constant memory on an endless stream\n"
        f"  a drifting target    {'spa':<30} it writes the last hypothesis\n"
        f"  unbalanced classes   {'-w1 W, predict --threshold T':<30} as svm-train -w: an update's cost on label 1\n"
    )
    for name in sorted(ALGORITHMS):
        cls = ALGORITHMS[name]
        click.echo(f"{name}\n    {cls.summary}\n    paper: {cls.paper}\n    weights: {cls.weighting or 'none'}")
        for p in cls.params:
            click.echo(f"    {'/'.join(p.flags)} (default {p.default_text or p.default}): {p.help}")


@click.command()
@click.argument("generator", type=click.Choice(sorted(GENERATORS)))
@click.option("-n", "--examples", type=click.IntRange(min=1), default=10000, show_default=True)
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    help="Output file (default stdout); written atomically.",
)
def generate(generator, examples, seed, output):
    """Write a synthetic data set of the papers in LIBSVM format (values rounded to 6 decimals)."""
    try:
        X, y = GENERATORS[generator](examples, seed=seed)
    except ValueError as e:  # e.g. fewer examples than a shifting stream has chunks
        raise click.UsageError(f"{generator}: {e}") from None
    X = np.round(X, 6)
    n, d = X.shape
    indptr = np.arange(0, n * d + 1, d, dtype=np.int64)
    indices = np.tile(np.arange(d, dtype=np.int32), n)
    binary = set(unique(y).tolist()) <= {-1.0, 1.0}
    names = ["+1" if v > 0 else "-1" for v in y] if binary else [shortest_text(v) for v in y]
    try:
        with output_file(output) as out:
            write_libsvm(out, indptr, indices, X.ravel(), y, label_strings=names)
    except OSError as exc:
        write_failed(output, "the data", exc)


@click.command()
@click.argument("data", type=DATA_PATH)
@click.option("-l", "--lower", type=float, default=None, help="Lower end of every feature's scaled range. Default: -1.")
@click.option("-u", "--upper", type=float, default=None, help="Upper end of every feature's scaled range. Default: 1.")
@click.option(
    "-y",
    "--target-range",
    type=float,
    nargs=2,
    default=None,
    metavar="LOWER UPPER",
    help="Also scale the labels (targets) onto [LOWER, UPPER]. Default: labels as they are.",
)
@click.option(
    "-s",
    "--save-ranges",
    type=click.Path(dir_okay=False, allow_dash=False),
    default=None,
    metavar="FILE",
    help="Write the ranges found to FILE (svm-scale's range file), for -r and train --scale-ranges.",
)
@click.option(
    "-r",
    "--restore-ranges",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Scale by the ranges of FILE (written by -s or by svm-scale -s) instead of DATA's own: DATA is read "
    "once, as a stream; a feature FILE has no range for is left out (svm-scale's 'scaled to 0').",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    help="Where to write the scaled data (default stdout); written atomically.",
)
@click.option("--skip-bad-lines", is_flag=True, help="Skip malformed lines (and report how many) instead of failing.")
def scale(data, lower, upper, target_range, save_ranges, restore_ranges, output, skip_bad_lines):
    """Scale every feature of DATA linearly onto [-l, -u] as LIBSVM's svm-scale does, and write DATA so
    scaled, in svm-scale's own output (labels %.17g, values %g, zeros left out), with svm-scale's range
    files (-s, -r): each program reads the other's.

    A feature's range is its min and max over DATA, where an example without the feature counts as 0; a
    feature with min = max is left out. Without -r, DATA is read twice (once for the ranges); standard
    input, which cannot be, is held in memory (about 12 bytes per value): for a stream larger than memory,
    save the ranges of a sample with -s and scale the stream with -r. Lines without a label are scaled
    too (and written without one); qid tokens and comments are left out."""
    from . import scaling

    if restore_ranges is not None and (lower is not None or upper is not None or target_range is not None):
        raise click.UsageError("-r takes the interval from its file; drop -l, -u and -y")
    lower, upper = scaling.LOWER if lower is None else lower, scaling.UPPER if upper is None else upper
    if not (upper > lower and np.isfinite([lower, upper]).all()):
        raise click.UsageError(f"-u {upper:g} must be greater than -l {lower:g}")
    if target_range is not None and not (target_range[1] > target_range[0] and np.isfinite(target_range).all()):
        raise click.UsageError(f"-y {target_range[0]:g} {target_range[1]:g}: the upper end must be greater")
    _refuse_same_files([("DATA", data), ("-r", restore_ranges)], [("-o", output), ("-s", save_ranges)])
    try:
        ranges = None if restore_ranges is None else scaling.read_ranges(restore_ranges)
        with contextlib.ExitStack() as files:
            out = files.enter_context(output_file(output))
            save = None if save_ranges is None else files.enter_context(output_file(save_ranges))
            report = scaling.scale(data, out, ranges, lower, upper, target_range, save, skip_bad_lines)
    except DataError as exc:
        fail(str(exc))
    except OSError as exc:
        write_failed(output, "the scaled data", exc)
    if report.skipped:
        click.echo(
            f"budgetlearn: note: skipped {report.skipped:,} malformed lines (first: {report.first_skipped})", err=True
        )
    for warning in report.warnings(data if data != "-" else "<stdin>", restore_ranges):
        click.echo(f"budgetlearn: warning: {warning}", err=True)


COMMANDS = (
    train,
    online_to_batch,
    calibrate,
    predict,
    eval_,
    export,
    import_,
    info,
    plot,
    tune,
    algorithms,
    generate,
    scale,
)
