"""The `budgetlearn` command group, light enough that `budgetlearn --version` loads nothing else.

The subcommands live in the package cli/, which imports every algorithm (their options are generated from the
registry) and numpy: the group adds a command (cli.command) when it is named, importing that command's
module alone, and lists them (cli.WHERE) without importing any.  How a command ends on an error is
exits.py, which both use.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings

import click

from . import __version__
from .base.exits import fail, write_failed


class _Main(click.Group):
    """The command group; writing to standard output is checked here once for every subcommand,
    --help and --version: a full disk or an I/O error gives one line and exit 1, a closed pipe a
    quiet exit 0 (click's own handling would exit 1 on a closed pipe and let other errors end in a
    traceback)."""

    def get_command(self, ctx, name):
        if name not in self.commands:  # loaded when named: `train` imports neither tune's nor plot's module
            from .cli import command

            found = command(name)
            if found is None:
                return None
            self.add_command(found, name)
        return self.commands[name]

    def list_commands(self, ctx):
        from .cli import WHERE

        return sorted(WHERE)

    def make_context(self, *args, **kwargs):  # --help and --version write while parsing
        try:
            return super().make_context(*args, **kwargs)
        except OSError as exc:
            write_failed("-", None, exc)
        except _HELP_WITHOUT_ARGUMENTS:
            raise  # `budgetlearn` alone: click prints the help on stderr, as it is, and exits 2
        except click.UsageError as exc:
            raise OneLineUsageError(exc) from None

    def invoke(self, ctx):
        try:
            with warnings.catch_warnings():
                # numpy's warnings (overflow, invalid value) never reach stderr: a number that is not
                # finite is refused in words where it matters (a score, a model, a setting)
                warnings.simplefilter("ignore", RuntimeWarning)
                result = super().invoke(ctx)
            sys.stdout.flush()
            return result
        except OSError as exc:  # the commands name their own files; what reaches here is a stream
            write_failed("-", None, exc)
        except click.UsageError as exc:
            raise OneLineUsageError(exc) from None
        except MemoryError as exc:  # numpy's names the allocation it could not make
            fail(f"out of memory{': ' + str(exc) if str(exc) else ''}")


# click ≥ 8.2 raises this (a UsageError whose message is the whole help) for a group called without a
# command; older releases print the help themselves
_HELP_WITHOUT_ARGUMENTS = getattr(click.exceptions, "NoArgsIsHelpError", ())


class OneLineUsageError(click.ClickException):
    """A usage error (bad option, bad value, settings refused before anything runs) as one line on
    stderr, exit 2, like every other error here: `budgetlearn: error: MESSAGE (see 'budgetlearn
    COMMAND --help')`, where click would print the usage line and a hint first."""

    exit_code = 2

    def __init__(self, error: click.UsageError):
        command = error.ctx.command_path if error.ctx is not None else "budgetlearn"
        super().__init__(f"{error.format_message()} (see '{command} --help')")

    def show(self, file=None):
        with contextlib.suppress(OSError):
            click.echo(
                "budgetlearn: error: " + self.format_message().replace("\r", "\\r").replace("\n", "\\n"), err=True
            )


# BLAS libraries read these when numpy loads them; dask's nanny sets the same for its workers.
BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def run():
    """The `budgetlearn` script: `main`, with numpy's BLAS on one thread unless the user set its thread
    count.  Every learning loop here is single-threaded, and OpenBLAS's idle threads spin: in a sharded
    run on two cores, the driver's spinning BLAS thread took 1.3 s of CPU from the workers in a 6.4 s
    run (20% of their core).  And a sharded run's shards do the same arithmetic in the driver (serial)
    as on dask's workers, whose BLAS runs on one thread: a different thread count may round a product
    differently, and the model files must be byte-identical."""
    for name in BLAS_THREADS:
        os.environ.setdefault(name, "1")
    os.environ.setdefault("PYTHONWARNINGS", "ignore::RuntimeWarning")  # for worker processes too (see invoke)
    main(prog_name="budgetlearn")


def _version(ctx: click.Context) -> None:
    from .numerics import _aot

    click.echo(f"budgetlearn, version {__version__}\n{_aot.status()}")
    ctx.exit()


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _, value: _version(ctx) if value and not ctx.resilient_parsing else None,
    help="Show the version, and whether the loops were compiled at install, and exit.",
)
def main():
    """Budgeted online kernel learning: Perceptron, Projectron, Projectron++ and friends on
    LIBSVM-format data (files, '-' for stdin, .gz/.bz2/.xz)."""
