"""The options of `train` and `online-to-batch`, and their help: the general options, then the
algorithm's own (`budgetlearn train -a NAME --help`)."""

from __future__ import annotations


import click

from ..base import registry
from ..model.spec import (
    MAX_THREADS,
)

from .common import ALGORITHMS, AlgorithmName, DATA_PATH, SEED, _kernel_options, _param_options


def _model_options(f):
    """The options that decide a new model (its algorithm, task, kernel, parameters, weights, seed, scaling,
    threads): train's, shared by `serve`."""
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
            click.option(
                "--task",
                type=click.Choice(["classification", "regression", "novelty"]),
                default=None,
                help="What to learn: classification (labels are classes, the default), regression (labels are "
                f"real targets; default algorithm {registry.DEFAULT['regression']}) or novelty (one class, as "
                f"LIBSVM's one_class: lines need no label, and a label given is ignored; default algorithm "
                f"{registry.DEFAULT['novelty']}). Never guessed: a label that is not a whole number needs --task "
                "regression. A resumed model keeps its own.",
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
        ]
    ):
        f = decorator(f)
    return f


def _train_options(f):
    """The options of `train`, shared by `online-to-batch`."""
    for decorator in reversed(
        [
            _model_options,
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
                help="Log a learning curve to FILE.csv: t, mistakes, online_rate, support_size, seconds (a "
                "regression's: t, squared_error, online_mse, support_size, seconds), every --curve-every examples "
                "and at the end (`budgetlearn plot` draws it).",
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
