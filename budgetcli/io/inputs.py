"""Where the reader's bytes come from: a path (.gz, .bz2 and .xz decompressed), `-` for standard input or
an open file; which of them can be read only once (a pipe, a FIFO, a terminal, a socket), and whether a
read of one would return at once; the pieces of bytes the reader takes it in (`pieces`: a pause on a
stream that has nothing to read at once); and lines of bounded length, so that a source that never sends a
newline cannot fill the memory."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
import sys
from typing import BinaryIO, Iterator

from ..base.core import DataError


#: The most bytes a line may hold (its newline not counted): far above the longest lines of the
#: LIBSVM collection (webspam's trigram lines hold some MB), far below what would strain memory.
MAX_LINE_BYTES = 16 << 20

READ_SIZE = 1 << 20  # bytes a reader asks for at once (`pieces`)
PAUSE = None  # what `pieces` yields when a stream has nothing to read at once

_DECOMPRESSORS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def open_binary(source) -> tuple[BinaryIO, str]:
    """Open ``source`` for binary reading; return (file object, display name).

    ``source`` is a path (str or PathLike; ``.gz``, ``.bz2`` and ``.xz`` are
    decompressed), ``'-'`` for standard input, or an already open binary file
    object, which is returned as it is.
    """
    if isinstance(source, str) and source == "-":
        return sys.stdin.buffer, "<stdin>"
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        name = os.fsdecode(path)
        opener = _DECOMPRESSORS.get(os.path.splitext(name)[1].lower(), open)
        try:
            return opener(path, "rb"), name
        except OSError as exc:
            raise DataError(name, 0, None, f"cannot open: {exc.strerror or exc}") from exc
    return source, str(getattr(source, "name", "<stream>"))


def read_once(source) -> str | None:
    """What makes `source` readable only once, or None: "standard input" for '-', "a FIFO", "a
    character device" (/dev/stdin on a pipe or a terminal) or "a socket" for a path to one.  A
    regular file (compressed or not) and the package's views of one can be read again for a
    second pass; a path that does not exist is left to the reader to report."""
    if isinstance(source, str) and source == "-":
        return "standard input"
    if not isinstance(source, (str, os.PathLike)):
        return None
    try:
        return stream_kind(os.stat(source).st_mode)
    except (OSError, ValueError):
        return None


def stream_kind(mode: int) -> str | None:
    """ "a FIFO", "a character device" or "a socket" for a file mode of one (a stream), else None."""
    for test, what in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return None


def poller(f):
    """For a file object on a pipe, FIFO, terminal or socket: a function telling whether a read would
    return at once (data, or the end); None for a regular file or anything else (never polled)."""
    try:
        fd = f.fileno()
        if stream_kind(os.fstat(fd).st_mode) is None:
            return None
    except (AttributeError, OSError, ValueError):
        return None
    import select

    if not hasattr(select, "poll"):
        return lambda: bool(select.select([fd], [], [], 0)[0])
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return lambda: bool(poll.poll(0))


def line_too_long(source: str, lineno: int, limit: int = MAX_LINE_BYTES) -> DataError:
    return DataError(source, lineno, None, f"the line is longer than {limit:,} bytes, the most a line may hold")


def bounded_lines(f, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[bytes, int]]:
    """(line, bytes it takes in f) for each line of the binary file f, the line with its newline
    (the last may lack it): the package's views of a file read it this way, never holding more than
    `limit` + 1 bytes of a line.  A longer line is given as its first limit + 1 bytes without a
    newline (the reader refuses it as too long), the rest of it read and dropped."""
    while line := f.readline(limit + 1):
        taken = len(line)
        if taken > limit and not line.endswith(b"\n"):
            while rest := f.readline(limit + 1):
                taken += len(rest)
                if rest.endswith(b"\n"):
                    break
        yield line, taken


def is_stream(f) -> bool:
    """True for a file object that says it cannot seek (a pipe, a socket).  An iterable of lines
    without `seekable` is one of the package's own views of a regular file (a byte range for
    parallel predict, permuted lines for tune): its missing final newline is the file's own."""
    try:
        return not f.seekable()
    except AttributeError:
        return False
    except (OSError, ValueError):
        return True


def pieces(f, poll, max_line: int) -> Iterator[bytes | None]:
    """The input `f` (a binary file, or an iterable of lines) as pieces of bytes of up to about READ_SIZE (at
    most `max_line`), and on a stream PAUSE whenever it has nothing to read at once (`poll`, its `poller`, says
    the next read would wait; None: never)."""
    # read1: what is there, up to the size (a pipe's lines are parsed as they come), and one
    # decompression step at a time, so that truncated data is reported after the last whole line
    read = getattr(f, "read1", None) or getattr(f, "read", None)
    size = min(READ_SIZE, max_line)  # a line within one piece is never too long
    if read is not None:
        while True:
            if poll is not None and not poll():
                yield PAUSE
            piece = read(size)
            if not piece:
                return
            yield piece
    # An iterable of lines, each with its newline (a file's last line may lack it, and permuted, it is not last).
    batch, size = [], 0
    for line in f:
        line = line if line.endswith(b"\n") else line + b"\n"
        if len(line) > max_line + 1:  # on its own, so that the reader sees its length (bounded_lines)
            if batch:
                yield b"".join(batch)
                batch, size = [], 0
            yield line
            continue
        batch.append(line)
        size += len(line)
        if size >= READ_SIZE:
            yield b"".join(batch)
            batch, size = [], 0
    if batch:
        yield b"".join(batch)
