"""The `serve` command: a learner that answers and learns lines for as long as they come (serving/)."""

from __future__ import annotations

import click

from ..numerics import fewscores
from ..run import pipeline
from ..base.atomic import output_kind, writable_problem
from ..base.signals import Terminated, interrupt_exit_code
from ..base.exits import fail, write_failed
from ..model.model import UnloadableModel
from ..serving.answers import Answerer, Checkpoints, Stopped
from ..serving.transport import OutputFailed, Server
from ..run.session import Session, Watch
from ..model.spec import NotResumable

from .common import _given, _load
from .train_options import _model_options
from .training import _resumed, _same_file, _train_spec

MAX_LINE = 1 << 20  # --max-line's default: 1 MiB, far above a LIBSVM line of any usual data set


@click.command()
@_model_options
@click.option(
    "--model",
    "model_path",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Start from this model, resumed exactly as `train --resume` resumes it (its algorithm, kernel, "
    "parameters, labels, counters and random state). Without it, a new model of -a and its settings.",
)
@click.option("--readonly", is_flag=True, help="Only predict (every line, labelled or not); learn nothing.")
@click.option(
    "--save",
    "save_path",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Write the model (with its resume state, as train --save-resume) to FILE, atomically: every "
    "--checkpoint-every examples and --checkpoint-seconds, on SIGHUP (going on), and when the server stops "
    "(end of input, SIGTERM, SIGINT). May be the --model file.",
)
@click.option(
    "--checkpoint-every",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Write --save every N examples learnt (at the N-th exactly).",
)
@click.option(
    "--checkpoint-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="S",
    help="Write --save when S seconds have passed since the last checkpoint (and something was learnt).",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=None, metavar="P", help="Listen on TCP port P (0: any free one)."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address --port listens on (0.0.0.0: every interface; anyone who reaches it can teach the model).",
)
@click.option(
    "--socket",
    "socket_path",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="PATH",
    help="Listen on a Unix socket at PATH (a socket nobody listens at is replaced, anything else refused).",
)
@click.option(
    "--max-clients", type=click.IntRange(min=1), default=64, show_default=True, help="Connections served at once."
)
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="S",
    help="Close a connection that sent nothing for S seconds.",
)
@click.option(
    "--max-line",
    type=click.IntRange(min=1),
    default=MAX_LINE,
    show_default=True,
    metavar="BYTES",
    help="A longer line gets an error answer, its bytes dropped.",
)
@click.option(
    "--scores", is_flag=True, help="Answer 'label score' ('label f_1 ... f_m' multiclass), as predict --scores."
)
@click.option("-q", "--quiet", is_flag=True, help="Nothing on stderr but errors.")
@click.pass_context
def serve(
    ctx,
    model_path,
    readonly,
    save_path,
    checkpoint_every,
    checkpoint_seconds,
    port,
    host,
    socket_path,
    max_clients,
    idle_timeout,
    max_line,
    scores,
    quiet,
    **options,
):
    """Answer LIBSVM lines from standard input (or --port, --socket), one answer per line, in order.

    A labelled line is predicted, then learnt: its answer is the prediction made before learning it
    (progressive validation, the predictions train's online mistakes count). A line that starts with a
    feature (`1:0.5 3:1`) is only predicted, by the hypothesis the model is written with. A blank or comment
    line gets an empty answer; a malformed line, one longer than --max-line, a label the model cannot take
    gets 'error: SOURCE:LINE: reason' and changes nothing. Lines that arrive together are answered as one
    batch, which changes no answer.

    docs/SERVE.md says what a client may lose when the server is killed, and how to talk to it."""
    log = (lambda text: None) if quiet else (lambda text: click.echo(f"budgetlearn: {text}", err=True))
    if readonly and (save_path or checkpoint_every or checkpoint_seconds):
        raise click.UsageError("--readonly learns nothing: --save and the checkpoint options do not go with it")
    if (checkpoint_every or checkpoint_seconds) and save_path is None:
        raise click.UsageError("--checkpoint-every and --checkpoint-seconds need --save FILE")
    if readonly and model_path is None:
        raise click.UsageError("--readonly serves a model: give --model FILE")
    given = [p.opts[-1] for p in ctx.command.params if p.name in options and _given(ctx, p.name)]
    if readonly and given:
        raise click.UsageError(f"--readonly serves the model as it is; drop {', '.join(given)}")
    if save_path is not None:
        if output_kind(save_path) != "replace":
            raise click.UsageError(
                f"--save needs a regular file (a checkpoint is replaced and resumed from); {save_path} is not one"
            )
        problem = writable_problem(save_path)
        if problem:
            fail(f"{save_path}: cannot write the model: {problem}")
    if readonly:
        answerer = Answerer(model=_load(model_path), columns="scores" if scores else "labels", max_line=max_line)
    else:
        answerer = _learning(ctx, model_path, save_path, checkpoint_every, checkpoint_seconds, options, max_line)
        answerer.columns = "scores" if scores else "labels"
    fewscores.long_running()
    answerer.warm_up()
    server = Server(answerer, max_line, max_clients, idle_timeout, log)
    try:
        if port is not None:
            address = server.listen_tcp(host, port)
            log(f"serving on {address[0]}:{address[1]}")
        if socket_path is not None:
            server.listen_unix(socket_path)
            log(f"serving on {socket_path}")
    except OSError as exc:
        fail(f"{exc.filename or f'{host}:{port}'}: cannot listen: {exc.strerror or exc}")
    if port is None and socket_path is None:
        server.use_stdio()
    held = lambda: (  # noqa: E731
        f"{save_path} holds the checkpoint after {answerer.checkpoints.last_count:,} examples"
        if save_path and answerer.checkpoints.last_count is not None
        else "no model written"
    )
    try:
        stopped_by = server.run()
    except OutputFailed as exc:
        write_failed("-", "the answers", exc.error)
    except Stopped as exc:
        fail(f"{exc}; {held()}")
    except (OSError, UnloadableModel) as exc:
        fail(f"{save_path}: cannot write the model: {getattr(exc, 'strerror', None) or exc}; {held()}")
    if stopped_by is not None:
        name = "terminated (SIGTERM)" if stopped_by == 15 else "interrupted"
        log(f"{name}; {held()}")
        ctx.exit(interrupt_exit_code(Terminated() if stopped_by == 15 else KeyboardInterrupt()))


def _learning(ctx, model_path, save_path, checkpoint_every, checkpoint_seconds, options, max_line) -> Answerer:
    """The Answerer of a learning server: a session over the --model resumed, or over a new model of the
    options, whose settings are given, not taken from a first batch (how lines are batched changes nothing)."""
    options = dict(
        options,
        epochs=1,
        shuffle=False,
        skip_bad_lines=False,
        save_resume=True,
        checkpoint_every=checkpoint_every,
        resume_path=model_path,
    )
    resume = _resumed(ctx, model_path, None) if model_path is not None else None
    if resume is not None:
        options["algorithm"] = resume.learner.name
    spec = _train_spec(ctx, None, None, options)
    if resume is None:
        if spec.algorithm is None and spec.task != "regression":
            raise click.UsageError("serve a new model with -a NAME (train's default is chosen from a first block)")
        if spec.kernel.default_gamma and spec.kernel.kind != "linear":
            raise click.UsageError("serve a new model with --gamma or --sigma (train's default 1/k is a first block's)")
        if spec.scale is True:
            raise click.UsageError("--scale takes a first block's ranges; serve with --scale-ranges FILE")
    expect = resume.read_from if resume is not None and save_path and _same_file(save_path, model_path) else None
    checkpoints = Checkpoints(save_path, checkpoint_seconds, expect) if save_path else None
    watch = Watch(on_checkpoint=checkpoints.write if checkpoints else None)
    try:
        if resume is not None:
            session = Session.resumed(spec, resume, watch)
        else:
            session = Session(spec, watch=watch, scaling=pipeline._scaling(spec, "-"))  # --scale-ranges'
    except NotResumable as exc:
        fail(f"{model_path}: {exc}", 2 if exc.settings else 1)
    if checkpoints is not None and resume is not None:
        checkpoints.last_count = resume.learner.counter("examples") if expect is not None else None
    return Answerer(session=session, checkpoints=checkpoints, max_line=max_line)
