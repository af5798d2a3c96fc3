"""How a command ends when something fails: one line on stderr and an exit code (cli/__init__.py's docstring
lists them), whatever a file name or an exception's text holds; a closed pipe ends it quietly."""

from __future__ import annotations

import contextlib
import errno
import os
import sys

import click


def fail(message: str, code: int = 1):
    # One line, whatever a file name or an exception's text holds; a stderr that cannot take it
    # leaves the exit code to tell.
    with contextlib.suppress(OSError):
        click.echo("budgetlearn: error: " + message.replace("\r", "\\r").replace("\n", "\\n"), err=True)
    sys.exit(code)


def _named(path: str) -> str:
    return "standard output" if path == "-" else path


def write_failed(path: str, what: str | None, exc: OSError):
    """End the command after writing `what` to `path` failed: quietly (exit 0) when the reader of a
    pipe went away (`| head`), else one line (exit 1)."""
    if exc.errno == errno.EPIPE:
        drop_stdout()
        sys.exit(0)
    fail(f"{_named(path)}: cannot write{' ' + what if what else ''}: {exc.strerror or exc}")


def drop_stdout():
    """Point fd 1 at /dev/null: what is still buffered for it goes nowhere, so the interpreter's
    final flush cannot fail a second time and print a traceback."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
