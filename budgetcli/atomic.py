"""Output files that appear whole or not at all.

`atomic_text_output(path)` gives a text file object to write to.  The text goes to a temporary file
in the target's directory; only when the `with` block ends without an exception is that file
flushed, fsynced and renamed over the target (`os.replace`, atomic on POSIX).  On any exception —
a data error half-way through, Ctrl-C, a full disk — the temporary file is removed and an existing
target keeps its old content, so a cron job never leaves half a predictions file behind.
`-` means standard output, which is passed through as it is.

SIGTERM during training is turned into the same clean stop as Ctrl-C (`stop_signals_raise_interrupt`).
`kill -9` cannot be caught: it may leave a `.NAME.*.tmp` file beside the target, never a partial target.

Model files are written the same way by modelfile.save.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
from typing import Iterator, TextIO

from .modelfile import _current_umask, _fsync_directory


@contextlib.contextmanager
def atomic_text_output(path: str) -> Iterator[TextIO]:
    if path == "-":
        yield sys.stdout
        return
    directory, name = os.path.split(os.path.abspath(path))
    fd, tmp_path = tempfile.mkstemp(dir=directory, prefix="." + name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        # mkstemp creates 0600 files; give the output the permissions a plain open() would.
        os.chmod(tmp_path, 0o666 & ~_current_umask())
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_path)
        raise
    _fsync_directory(directory)


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
