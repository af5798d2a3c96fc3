"""The commands about data and curves: `generate`, `scale` and `plot`."""

from __future__ import annotations

import contextlib

import click
import numpy as np

from ..base.exits import fail, write_failed
from ..base.atomic import (
    output_file,
)
from ..base.core import DataError, shortest_text, unique
from ..io.libsvm import write_libsvm
from ..run.synthetic import GENERATORS, REGRESSION_STREAMS

from .common import DATA_PATH, MODEL_PATH, SEED, _refuse_same_files


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
    """Draw online error rate (a regression's online mean squared error) and support size against
    examples from `train --curve` files, one line per file. Needs matplotlib (pip install
    'budgetlearn[plot]')."""
    from ..plot import PlotError, plot_curves

    _refuse_same_files([("FILE.csv", c) for c in curves], [("-o", output)])
    try:
        plot_curves(list(curves), output, labels=list(labels) or None, title=title, width=size[0], height=size[1])
    except PlotError as exc:
        fail(str(exc))
    except OSError as exc:
        write_failed(output, "the image", exc)


@click.command(
    help="Write a synthetic data set of the papers in LIBSVM format (values rounded to 6 decimals).\n\n"
    f"GENERATOR is one of: {', '.join(sorted(set(GENERATORS) - set(REGRESSION_STREAMS)))}, whose labels are "
    f"classes; and {', '.join(REGRESSION_STREAMS)}, whose targets are real (train them with --task "
    "regression; mackey-glass's lines are 10 lagged values and the next one).  novelty-mixture's label +1 marks a "
    "normal example, -1 a novel one (1% of them): train it with --task novelty, eval with --normal-label 1."
)
@click.argument("generator", type=click.Choice(sorted(GENERATORS)), metavar="GENERATOR")
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
    try:
        X, y = GENERATORS[generator](examples, seed=seed)
    except ValueError as e:  # e.g. fewer examples than a shifting stream has chunks
        raise click.UsageError(f"{generator}: {e}") from None
    X, y = np.round(X, 6), np.round(y, 6)
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
    from ..model import ranges as ranges_, scaling

    if restore_ranges is not None and (lower is not None or upper is not None or target_range is not None):
        raise click.UsageError("-r takes the interval from its file; drop -l, -u and -y")
    lower, upper = ranges_.LOWER if lower is None else lower, ranges_.UPPER if upper is None else upper
    if not (upper > lower and np.isfinite([lower, upper]).all()):
        raise click.UsageError(f"-u {upper:g} must be greater than -l {lower:g}")
    if target_range is not None and not (target_range[1] > target_range[0] and np.isfinite(target_range).all()):
        raise click.UsageError(f"-y {target_range[0]:g} {target_range[1]:g}: the upper end must be greater")
    _refuse_same_files([("DATA", data), ("-r", restore_ranges)], [("-o", output), ("-s", save_ranges)])
    try:
        ranges = None if restore_ranges is None else ranges_.read_ranges(restore_ranges)
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
