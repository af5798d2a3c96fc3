"""How a run stops: SIGTERM (a cron timeout, `kill`) unwinds as Ctrl-C does, so that an output being
written is removed and its target keeps its last complete content (atomic.py); a checkpoint's save holds
signals back until it is whole; and the shell's exit codes for both."""

from __future__ import annotations

import contextlib
import signal
from typing import Iterator


class Terminated(KeyboardInterrupt):
    """SIGTERM (a cron timeout, `kill`) turned into the same clean stop as Ctrl-C."""


@contextlib.contextmanager
def stop_signals_raise_interrupt() -> Iterator[None]:
    """While training, SIGTERM unwinds like Ctrl-C (KeyboardInterrupt), so the temporary file of a
    save in progress is removed and the target keeps its last complete content."""

    def on_term(signum, frame):
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread: leave the default
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def stop_signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM arriving inside the block take effect when it ends.  A checkpoint save
    and the note of what it holds happen together, so the message after Ctrl-C names the
    checkpoint that is really in the file.

    Python-level handlers, not a signal mask: a mask holds only for the calling thread, and a
    process-directed signal may go to any other thread (numba's, a BLAS pool's), whose delivery
    Python then turns into KeyboardInterrupt in the main thread anyway."""
    pending: list[int] = []

    def hold(signum, frame):
        pending.append(signum)

    try:
        previous = {s: signal.signal(s, hold) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: signals are not ours to handle
        yield
        return
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if signal.SIGTERM in pending:
        raise Terminated()
    if pending:
        raise KeyboardInterrupt()


def interrupt_name(exc: KeyboardInterrupt) -> str:
    return "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"


def interrupt_exit_code(exc: KeyboardInterrupt) -> int:
    """The shell's convention, 128 + the signal number: 130 for Ctrl-C, 143 for SIGTERM."""
    return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
