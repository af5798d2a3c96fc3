"""The commands that score data with a model: `predict`, `eval` and `calibrate`."""

from __future__ import annotations

import json

import click

from ..run import pipeline
from ..base.exits import fail, write_failed
from ..base.atomic import (
    output_file,
    writable_problem,
)
from ..run import predictions
from ..base.core import DataError
from ..model.model import UnloadableModel

from .common import DATA_PATH, FINITE_FLOAT, Jobs, MODEL_PATH, _console, _load, _refuse_same_files


@click.command()
@click.argument("model_path", metavar="MODEL", type=MODEL_PATH, required=False)
@click.argument("data", type=DATA_PATH, required=False)
@click.option(
    "--server",
    metavar="ADDRESS",
    default=None,
    help="Send DATA (the only argument) to a running `budgetlearn serve` at HOST:PORT or a Unix socket's "
    "path, and write its answers: one per line, in order, a labelled line learnt unless the server is "
    "--readonly (docs/SERVE.md). Exit 1 when a line was answered with an error.",
)
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
    "per example. Regression model: its score f(x) is its prediction, written once a line, as without "
    "--scores.",
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
def predict(model_path, data, server, output, scores, proba, threshold, skip_bad_lines, jobs):
    """Predict one label per example of DATA, in input order (with a MODEL, or --server)."""
    if server is not None:
        if scores or proba or threshold != 0 or skip_bad_lines or jobs != 1:
            raise click.UsageError("--server writes the server's answers as it gives them (serve --scores)")
        return _predict_by_server(server, model_path, data, output)
    if model_path is None or data is None:
        raise click.UsageError(f"Missing argument '{'MODEL' if model_path is None else 'DATA'}'.")
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
    if proba:
        try:
            model.refuse_task("predict --proba (probabilities of classes)")
        except ValueError as exc:
            fail(f"{model_path}: {exc}")
    if proba and model.calibration is None:
        fail(
            f"{model_path}: the model is not calibrated; "
            f"`budgetlearn calibrate {model_path} HELD_OUT -o MODEL` fits its probabilities"
        )
    jobs, note = predictions.parallel_jobs(data, jobs)
    if note:
        click.echo(f"budgetlearn: note: {note}", err=True)
    try:
        with output_file(output) as out:
            columns = "probabilities" if proba else "scores" if scores else "labels"
            predictions.write_predictions(model, model_path, data, out, columns, skip_bad_lines, jobs, threshold)
    except DataError as exc:
        fail(str(exc))
    except OSError as exc:
        write_failed(output, "the predictions", exc)
    except KeyboardInterrupt:
        fail("interrupted; no predictions file written" if output != "-" else "interrupted", 130)


def _predict_by_server(server: str, data: str | None, extra: str | None, output: str) -> None:
    """predict --server ADDRESS DATA: the server's answers to DATA's lines, written as predictions are."""
    from ..serving.client import ServerError, ask

    if data is None or extra is not None:
        raise click.UsageError("--server answers from the server's model: give DATA alone")
    _refuse_same_files([("DATA", data)], [("-o", output)])
    try:
        with output_file(output, binary=True) as out:
            answered, errors = ask(server, data, out)
    except DataError as exc:
        fail(str(exc))
    except ServerError as exc:
        fail(str(exc))
    except OSError as exc:
        write_failed(output, "the answers", exc)
    if errors:
        fail(f"{errors:,} of {answered:,} lines were answered with an error (the answers say which)")


@click.command(name="eval")
@click.argument("model_path", metavar="MODEL", type=MODEL_PATH)
@click.argument("data", type=DATA_PATH)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--skip-bad-lines", is_flag=True, help="Skip malformed lines instead of failing.")
@click.option(
    "--normal-label",
    type=FINITE_FLOAT,
    default=None,
    metavar="L",
    help="A novelty model's: examples labelled L are normal, every other is novel (default 1, LIBSVM's and "
    "scikit-learn's +1).",
)
def eval_(model_path, data, as_json, skip_bad_lines, normal_label):
    """Classification: accuracy, precision/recall/F1 per class, AUC and confusion matrix of MODEL on DATA.
    Regression: MSE, RMSE, MAE and R², beside those of predicting the mean of the training targets.
    Novelty: the AUC of its score, the precision and recall of the examples it flags, the fraction it flags."""
    model = _load(model_path, data=data)
    if normal_label is not None and model.task.name != "novelty":
        raise click.UsageError(f"--normal-label is for a novelty model; this one is a {model.task.name} model")
    given = {} if normal_label is None else {"normal_label": normal_label}  # the novelty task's default else
    try:
        report = model.task.evaluate(model, pipeline.scores(model, data, skip_bad_lines=skip_bad_lines), **given)
    except DataError as exc:
        fail(str(exc))
    except ValueError as exc:  # no examples
        fail(f"{data}: {exc}")
    if as_json:  # the report holds its warnings
        click.echo(json.dumps(report))
        return
    model.task.print_report(report, _console(highlight=False))
    for warning in report["warnings"]:
        click.echo(f"warning: {warning}", err=True)


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
    from ..api import fit_calibration

    _refuse_same_files([("MODEL", model_path), ("DATA", data)], [("-o", output)], may_replace={("MODEL", "-o")})
    problem = writable_problem(output)  # before the held-out data is read
    if problem:
        fail(f"{output}: cannot write the model: {problem}")
    model = _load(model_path, resume=True, data=data)
    try:
        model.refuse_task("calibrate (probabilities of classes)")
    except ValueError as exc:
        fail(f"{model_path}: {exc}")
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
