"""The `budgetlearn` command: parses options, wires the pipeline stages together, prints.

Exit codes: 0 success; 1 bad data, bad model file, or a failed run (one line on stderr naming the
file and line); 2 bad usage (unknown option, bad parameter value); 130 interrupted (Ctrl-C).
Results go to stdout, summaries and progress to stderr.
"""

from __future__ import annotations

import json
import os
import sys

import click
import numpy as np

from . import __version__, metrics, pipeline, registry
from .io.libsvm import DataError, write_libsvm
from .model import Model
from .modelfile import ModelFileError
from .params import FLAGS
from .synthetic import GENERATORS

ALGORITHMS = registry.load_all()
AVERAGES = ("average", "projected-average")  # online-to-batch methods that average f_1 .. f_T


def fail(message: str, code: int = 1):
    click.echo(f"budgetlearn: error: {message}", err=True)
    sys.exit(code)


def _param_options(f):
    """One click option per algorithm parameter name, generated from the algorithms' declarations."""
    by_name: dict[str, list] = {}
    for cls in ALGORITHMS.values():
        for p in cls.params:
            by_name.setdefault(p.name, []).append((cls.name, p))
    for name in sorted(by_name, reverse=True):
        uses = by_name[name]
        first = uses[0][1]
        by_default: dict = {}
        for algo, p in uses:
            by_default.setdefault(p.default, []).append(algo)
        defaults = "; ".join(f"{d:g} for {', '.join(algos)}" if isinstance(d, float) else f"{d} for {', '.join(algos)}"
                             for d, algos in by_default.items())
        flags = FLAGS[name]
        f = click.option(*flags, name, type=first.type, default=None,
                         help=f"{first.help}. Default: {defaults}.")(f)
    return f


def _kernel_options(f):
    f = click.option("--coef0", type=float, default=0.0, show_default=True, help="poly: (γ x·y + coef0)^degree.")(f)
    f = click.option("--degree", type=int, default=3, show_default=True, help="poly kernel degree.")(f)
    f = click.option("--sigma", type=float, default=None,
                     help="rbf width σ as in exp(−‖x−y‖²/(2σ²)); same as --gamma 1/(2σ²).")(f)
    f = click.option("--gamma", type=float, default=None,
                     help="γ of rbf exp(−γ‖x−y‖²) and poly; default 1/k, k = largest feature index in the "
                          "first 4,096 examples (LIBSVM: 1/#features).")(f)
    f = click.option("--kernel", type=click.Choice(["rbf", "poly", "linear"]), default="rbf", show_default=True)(f)
    return f


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="budgetlearn")
def main():
    """Budgeted online kernel learning: Perceptron, Projectron, Projectron++ and friends on
    LIBSVM-format data (files, '-' for stdin, .gz/.bz2/.xz)."""


def _train_options(f):
    """The options of `train`, shared by `online-to-batch`."""
    for decorator in reversed([
        click.option("-a", "--algorithm", type=click.Choice(sorted(ALGORITHMS)),
                     help="Learning algorithm (see `budgetlearn algorithms`); required unless --resume."),
        _kernel_options,
        _param_options,
        click.option("--seed", type=int, default=0, show_default=True,
                     help="Seed of the algorithm's random choices and of --shuffle."),
        click.option("--epochs", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Passes over DATA. A file is streamed again for each pass; stdin is kept in memory."),
        click.option("--shuffle", is_flag=True,
                     help="Shuffle the examples in every pass (seeded by --seed); reads DATA into memory."),
        click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
                     help="Model file to write (default DATA.model; required when DATA is '-')."),
        click.option("--resume", "resume_path", type=click.Path(dir_okay=False), default=None, metavar="MODEL",
                     help="Continue training MODEL exactly where it stopped (its algorithm, kernel, parameters, "
                          "labels, counters and random state); -o may name the same file."),
        click.option("--skip-bad-lines", is_flag=True,
                     help="Skip malformed lines (and report how many) instead of failing."),
        click.option("-q", "--quiet", is_flag=True, help="No summary or progress on stderr."),
        click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object on stdout."),
        click.argument("data"),
        click.pass_context,
    ]):
        f = decorator(f)
    return f


@main.command()
@_train_options
def train(ctx, **options):
    """Train ALGORITHM online, one pass over DATA, and write the model.

    Nothing is written when training fails: an existing model file stays as it was."""
    _train(ctx, "online", **options)


@main.command(name="online-to-batch")
@click.option("--method", type=click.Choice(["average", "projected-average", "last"]), default="average",
              show_default=True,
              help="average: (1/T) Σ f_t over the T rounds; projected-average: the same with the part of "
                   "evicted support vectors projected onto the final support set (stays within the budget); "
                   "last: f_T.")
@_train_options
def online_to_batch(ctx, method, **options):
    """Train ALGORITHM online, one pass over DATA, and write a batch hypothesis.

    The averaged hypothesis (Cesa-Bianchi, Conconi, Gentile 2004) keeps a running sum per
    coefficient during training; for the Perceptron and Projectron family it lives on exactly
    the online support set. For algorithms that evict support vectors the exact average also
    needs the evicted ones (kept in memory during training) and so grows beyond the budget;
    projected-average stays within it. A batch model can be used by predict and eval, not resumed."""
    _train(ctx, method, **options)


def _train(ctx, hypothesis, algorithm, kernel, gamma, sigma, degree, coef0, seed, epochs, shuffle, output,
           resume_path, skip_bad_lines, quiet, as_json, data, **params):
    params = {k: v for k, v in params.items() if v is not None}
    resume = None
    if resume_path is not None:
        given = [p.opts[-1] for p in ctx.command.params
                 if p.name not in ("output", "resume_path", "skip_bad_lines", "quiet", "as_json", "data", "method",
                                   "epochs", "shuffle")
                 and ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT]
        if given:
            raise click.UsageError(f"--resume continues the model's own settings; drop {', '.join(given)}")
        resume = _load(resume_path)
        if resume.hypothesis not in ("online", "last"):
            fail(f"{resume_path}: an averaged batch model cannot be resumed; resume the online model")
        if hypothesis in AVERAGES and resume.learner.evicts:
            raise click.UsageError(f"{resume_path}: the vectors {resume.learner.name} evicted before this run were "
                                   "not kept, so its average cannot be completed; use --method last")
        algorithm = resume.learner.name
    elif algorithm is None:
        raise click.UsageError("give -a/--algorithm (or --resume MODEL)")
    accepted = {p.name for p in ALGORITHMS[algorithm].params}
    for name in params:
        if name not in accepted:
            flag = FLAGS[name][-1]
            raise click.UsageError(f"{flag} does not apply to {algorithm} "
                                   f"(it takes: {', '.join(FLAGS[n][-1] for n in accepted) or 'no parameters'})")
    if output is None:
        if data == "-":
            raise click.UsageError("-o/--output is required when DATA is '-'")
        output = data + ".model"
    if output == "-":
        raise click.UsageError("a model file cannot be written to stdout; give a path with -o")
    target_dir = os.path.dirname(os.path.abspath(output))
    if not os.access(target_dir, os.W_OK):  # fail before a long run, not after it
        fail(f"{output}: cannot write the model: directory {target_dir} is missing or not writable")
    spec = pipeline.KernelSpec(kernel, gamma, sigma, degree, coef0)
    try:  # refuse bad parameters and kernels before reading anything
        ALGORITHMS[algorithm].resolve_params(resume.learner.hyper if resume else params)
        spec.resolve(1)
    except ValueError as exc:
        raise click.UsageError(str(exc))

    progress = _Progress(enabled=not quiet and sys.stderr.isatty())
    try:
        with progress:
            result = pipeline.train(data, algorithm, spec, params, seed=seed, skip_bad_lines=skip_bad_lines,
                                    on_chunk=progress.update, resume=resume, epochs=epochs, shuffle=shuffle,
                                    keep_retired=hypothesis in AVERAGES)
        online_size = len(result.model.learner.support)
        if hypothesis in AVERAGES:
            result.model = result.model.averaged(projected=hypothesis == "projected-average")
        result.model.save(output)
    except DataError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{output}: cannot write the model: {exc.strerror or exc}")
    except KeyboardInterrupt:
        click.echo("budgetlearn: interrupted; no model written", err=True)
        sys.exit(130)

    summary = _train_summary(result, algorithm, output)
    summary["hypothesis"] = hypothesis
    summary["online_support_size"] = online_size
    if as_json:
        click.echo(json.dumps(summary))
    if not quiet:
        _print_train_summary(summary, result)


def _train_summary(result, algorithm, output) -> dict:
    learner = result.model.learner
    t = learner.counter("examples")
    mistakes = learner.counter("mistakes")
    return {
        "algorithm": algorithm,
        "params": learner.hyper,
        "kernel": learner.kernel.to_dict() | {"sigma": learner.kernel.sigma if learner.kernel.kind != "linear" else None},
        "data": result.source,
        "examples": t,
        "mistakes": mistakes,
        "online_mistake_rate": mistakes / t if t else 0.0,
        "margin_updates": learner.counter("margin_updates"),
        "projections": learner.counter("projections"),
        "support_size": len(learner.support),
        "skipped_lines": result.n_skipped,
        "seconds": round(result.seconds, 4),
        "model": output,
    }


def _print_train_summary(s: dict, result) -> None:
    learner = result.model.learner
    params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in s["params"].items())
    lines = [
        f"{s['algorithm']}{' (' + params + ')' if params else ''}, kernel {learner.kernel.describe()}",
        f"examples        {s['examples']:,}",
        f"mistakes        {s['mistakes']:,} ({100 * s['online_mistake_rate']:.2f}% online)",
        f"margin updates  {s['margin_updates']:,}",
        f"support vectors {s['support_size']:,}",
        f"seconds         {s['seconds']:.2f}",
        f"model           {s['model']}" + ("" if s["hypothesis"] == "online" else f" ({s['hypothesis']} hypothesis)"),
    ]
    if s["support_size"] > s["online_support_size"]:
        lines.append(f"note            the exact average keeps {s['support_size'] - s['online_support_size']:,} "
                     f"evicted support vectors beyond the online {s['online_support_size']:,}; "
                     "--method projected-average stays within the budget")
    if s["skipped_lines"]:
        lines.append(f"skipped         {s['skipped_lines']:,} malformed lines (first: {result.skipped[0]})")
    click.echo("\n".join(lines), err=True)


class _Progress:
    """A live line on a terminal's stderr (examples, online mistake rate, |S|); silent otherwise."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._live = None

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.live import Live

            self._live = Live("", console=Console(stderr=True), transient=True, refresh_per_second=4)
            self._live.__enter__()
        return self

    def update(self, model) -> None:
        if self._live is not None:
            ln = model.learner
            t, m = ln.counter("examples"), ln.counter("mistakes")
            self._live.update(f"{t:,} examples, {100 * m / max(t, 1):.2f}% online mistakes, "
                              f"{len(ln.support):,} support vectors")

    def __exit__(self, *exc):
        if self._live is not None:
            self._live.__exit__(*exc)


def _load(model_path) -> Model:
    try:
        return Model.load(model_path)
    except ModelFileError as exc:
        fail(str(exc))


@main.command()
@click.argument("model_path", metavar="MODEL")
@click.argument("data")
@click.option("-o", "--output", type=click.File("w"), default="-", help="Where to write predictions (default stdout).")
@click.option("--scores", is_flag=True, help="Write 'label score' per line, score = f(x) (positive: the model's +1 label).")
@click.option("--skip-bad-lines", is_flag=True, help="Skip malformed lines instead of failing.")
def predict(model_path, data, output, scores, skip_bad_lines):
    """Predict one label per example of DATA, in input order."""
    model = _load(model_path)
    try:
        for chunk, f in pipeline.scores(model, data, skip_bad_lines=skip_bad_lines):
            labels = model.labels.decode(f)
            if scores:
                text = "".join(f"{lab} {v:.10g}\n" for lab, v in zip(labels, f))
            else:
                text = "\n".join(labels) + "\n"
            output.write(text)
        output.flush()
    except DataError as exc:
        fail(str(exc))
    except BrokenPipeError:
        # The reader of our output went away (`| head`): stop quietly, as a pipeline expects.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)


@main.command(name="eval")
@click.argument("model_path", metavar="MODEL")
@click.argument("data")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--skip-bad-lines", is_flag=True, help="Skip malformed lines instead of failing.")
def eval_(model_path, data, as_json, skip_bad_lines):
    """Accuracy, precision/recall/F1 per class, AUC and confusion matrix of MODEL on DATA."""
    model = _load(model_path)
    labels = model.labels
    all_scores, all_true = [], []
    try:
        for chunk, f in pipeline.scores(model, data, skip_bad_lines=skip_bad_lines):
            all_scores.append(f)
            all_true.append(chunk.labels)
            for v, s in chunk.label_spellings.items():
                labels.spellings.setdefault(v, s)
    except DataError as exc:
        fail(str(exc))
    f = np.concatenate(all_scores) if all_scores else np.zeros(0)
    true = np.concatenate(all_true) if all_true else np.zeros(0)
    if f.size == 0:
        fail(f"{data}: no examples to evaluate")
    # classes: the model's two labels, then any label of DATA the model never saw
    classes = labels.classes + sorted(set(np.unique(true).tolist()) - set(labels.classes))
    pred_value = np.where(f > 0, labels.positive if labels.positive is not None else labels.negative,
                          labels.negative if labels.negative is not None else labels.positive)
    index = {v: i for i, v in enumerate(classes)}
    true_idx = np.array([index[v] for v in true.tolist()])
    pred_idx = np.array([index[v] for v in pred_value.tolist()])
    conf = metrics.confusion_matrix(true_idx, pred_idx, len(classes))
    accuracy = float(np.mean(true_idx == pred_idx))
    auc = metrics.auc(f, true == labels.positive) if labels.positive is not None else None
    names = [labels.spelling(v) for v in classes]
    report = {
        "examples": int(f.size),
        "accuracy": accuracy,
        "error": 1.0 - accuracy,
        "auc": auc,
        "positive_label": labels.spelling(labels.positive) if labels.positive is not None else None,
        "classes": {n: m for n, m in zip(names, metrics.per_class(conf))},
        "confusion_matrix": {"labels": names, "rows_true_columns_predicted": conf.tolist()},
    }
    if as_json:
        click.echo(json.dumps(report))
    else:
        _print_eval(report)


def _print_eval(r: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    auc = "n/a (one class only)" if r["auc"] is None else f"{r['auc']:.4f}"
    console.print(f"examples  {r['examples']:,}\naccuracy  {100 * r['accuracy']:.2f}%\n"
                  f"error     {100 * r['error']:.2f}%\nAUC       {auc} (positive label {r['positive_label']})")
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


@main.command()
def algorithms():
    """List the algorithms with their parameters and papers."""
    for name in sorted(ALGORITHMS):
        cls = ALGORITHMS[name]
        click.echo(f"{name}\n    {cls.summary}\n    paper: {cls.paper}")
        for p in cls.params:
            click.echo(f"    {'/'.join(FLAGS[p.name])} (default {p.default}): {p.help}")


@main.command()
@click.argument("generator", type=click.Choice(sorted(GENERATORS)))
@click.option("-n", "--examples", type=click.IntRange(min=1), default=10000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("-o", "--output", type=click.File("w"), default="-", help="Output file (default stdout).")
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
    write_libsvm(output, indptr, indices, X.ravel(), y, label_strings=["+1" if v > 0 else "-1" for v in y])


if __name__ == "__main__":  # pragma: no cover
    main()
