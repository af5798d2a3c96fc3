"""The commands about models and algorithms: `export`, `import`, `info` and `algorithms`."""

from __future__ import annotations

import json

import click

from ..base import registry
from ..base.exits import fail, write_failed
from ..base.atomic import (
    output_file,
)
from ..base.core import DataError
from ..model.export import IMPORTABLE, IMPORTABLE_NOVELTY, IMPORTABLE_REGRESSION
from ..model.model import UnloadableModel

from .common import ALGORITHMS, MODEL_PATH, SEED, _load, _refuse_same_files


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
    LIBSVM C-SVC model that gives the same predictions, a regression model (--task regression) as a
    LIBSVM ε-SVR model (svm_type epsilon_svr) whose svm-predict values are its predictions, a novelty
    model (--task novelty) as a LIBSVM one-class model (svm_type one_class) whose svm-predict +1 / -1 are
    its predictions.

    Multiclass models, models that saw one label only and non-integer labels are refused:
    LIBSVM's format cannot express them. Nothing is written on failure."""
    from ..model.export import ExportError, libsvm_text

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
    type=click.Choice(IMPORTABLE + IMPORTABLE_REGRESSION + IMPORTABLE_NOVELTY, case_sensitive=False),
    default=None,
    help="Algorithm that goes on learning from the imported model with train --resume: one of "
    f"{', '.join(IMPORTABLE)} for a C-SVC model (default perceptron), {', '.join(IMPORTABLE_REGRESSION)} for an "
    "ε-SVR or ν-SVR model (a regression model; default klms), norma-novelty for a one-class model (a novelty "
    "model).",
)
@click.option("-C", "--cost", type=float, default=None, help="C of pa-i / pa-ii (default 1).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed stored in the model.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="budgetlearn model file to write.")
def import_(libsvm_model, algorithm, cost, seed, output):
    """Read a binary LIBSVM C-SVC model, an ε-SVR or ν-SVR model (a regression model), or a one-class
    model (svm-train -s 2: a novelty model), with a linear, poly or rbf kernel as a budgetlearn model, which
    predicts as svm-predict does and is a starting point for `train --resume`.

    Its support vectors, coefficients, kernel, bias (−rho) and labels are kept (LIBSVM's first label
    is the one with positive scores); predict, eval, export and a resumed run keep the bias as it is
    (no algorithm here learns one); its counters start at zero."""
    from ..model.export import SVR_TYPES, ExportError, import_libsvm, read_libsvm_model

    _refuse_same_files([("LIBSVM_MODEL", libsvm_model)], [("-o", output)])
    params = {} if cost is None else {"cost": cost}
    try:
        if algorithm is None:  # the default of the file's task
            svm_type = read_libsvm_model(libsvm_model)["svm_type"]
            algorithm = (
                IMPORTABLE_REGRESSION[0]
                if svm_type in SVR_TYPES
                else IMPORTABLE_NOVELTY[0]
                if svm_type == "one_class"
                else "perceptron"
            )
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
    from ..info import describe, format_text

    d = describe(_load(model_path), model_path)
    click.echo(json.dumps(d) if as_json else format_text(d))


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
        f"  real-valued targets  {'--task regression':<30} {registry.DEFAULT['regression']}, or krls, fbkrls\n"
        f"  novelty, one class   {'--task novelty':<30} {registry.DEFAULT['novelty']}: flags a fraction ν\n"
    )
    for name in sorted(ALGORITHMS):
        cls = ALGORITHMS[name]
        click.echo(f"{name}\n    {cls.summary}\n    paper: {cls.paper}\n    weights: {cls.weighting or 'none'}")
        for p in cls.params:
            click.echo(f"    {'/'.join(p.flags)} (default {p.default_text or p.default}): {p.help}")
