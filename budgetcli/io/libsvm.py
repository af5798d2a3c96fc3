"""Streaming reader (and a small writer) for the LIBSVM / svmlight text format.

One example per line: ``label idx:val idx:val ...`` with strictly increasing
feature indices ≥ 0 (usually 1-based; scikit-learn's dump_svmlight_file writes
0-based ones, and svm-train reads index 0 as a feature: so does budgetlearn).  A
chunk's indices are the file's.  Blank lines and ``#`` comments are skipped,
``qid:N`` tokens are ignored.

How the reader stays fast without cutting corners on validation:

* The input is read in large blocks of bytes (the partial last line of a block
  is carried over to the next), and the compiled `fastparse.parse_lines` turns
  the lines of a block into the chunk's CSR arrays, checking everything as it
  goes.  It takes only lines it is sure to read exactly as ``parse_line``
  does, down to the last bit of every number (a feature value beyond its exact
  arithmetic is set here to Python's ``float()`` of the token).
* Every other line (comments, qid, BOM, very long or large numbers, garbage
  ...) goes through ``parse_line``, which checks everything token by token
  and produces the error message; the compiled parser then goes on after it.
* While fewer than ``_SMALL_INPUT`` bytes have been read, lines are parsed by
  ``parse_line`` alone: for a small input the compiled parser's first call in
  a process would cost more.

What the reader has, it hands over (so that `train --checkpoint-every N` writes a checkpoint at
the N-th example whatever the block size, and nothing read is lost):

* the good lines before a bad one, as a chunk, before the error is raised;
* on a stream (a pipe, a FIFO, a terminal: polled, never a regular file, whose reading stays one
  `read` per megabyte), the lines it has whenever the input pauses, and those it has when an
  interrupt (Ctrl-C, SIGTERM) comes while it waits for more, before the interrupt goes on.  With
  ``first_block_whole`` (a new model's first block decides its defaults: the algorithm, the
  kernel's γ, the label signs) the first chunk is still ``block_lines`` examples, or fewer only
  when the input ends, fails or is interrupted before.

A line may hold at most ``MAX_LINE_BYTES`` bytes (16 MiB; its newline not counted; inputs.py), so that
a source that never sends a newline cannot fill the memory: past it the line is a DataError naming
it (skipped under skip_bad_lines, its bytes read and dropped up to its newline).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import zlib
from typing import Iterator

import numpy as np

from ..base.core import MAX_INDEX, Chunk, DataError, concatenate, shortest_text
from .fastparse import PUNT, ROOM, parse_lines
from . import inputs
from .inputs import MAX_LINE_BYTES, is_stream, line_too_long, open_binary, poller
from .lines import Block, parse_line

__all__ = [
    "DataError",
    "Chunk",
    "LibsvmReader",
    "write_libsvm",
    "read_all",
    "concatenate",
    "MAX_INDEX",
]

_MAX_KEPT_ERRORS = 10
# Inputs smaller than this are parsed in Python alone (10 ms for 64 KiB of a9a): the first call of a
# compiled function costs a process about 0.3 s (see fewscores.py), which `predict` on a few lines
# does not pay otherwise.
_SMALL_INPUT = 1 << 16

_COMPRESSED_FILES = (gzip.GzipFile, bz2.BZ2File, lzma.LZMAFile)
# What reading a (possibly compressed) stream raises on truncation or corruption.
_READ_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)


class LibsvmReader:
    """Read a LIBSVM file as a stream of ``Chunk`` objects of up to ``block_lines`` examples.

    With ``skip_bad_lines`` a malformed line is counted in ``n_skipped`` (the
    first ten errors are kept in ``skipped``) instead of raising ``DataError``.
    A reader can be iterated once.

    A stream (standard input, a pipe: anything that is not seekable) that ends without a newline
    after its last line was cut mid-line, typically because its producer died: that line is a
    DataError naming it ("input ended in the middle of a line"), skipped under skip_bad_lines.
    A regular file may end without a final newline (editors write such files).
    ``first_line`` is the line number of the source's first line: a reader of a byte range of a
    file (parallel predict) numbers its lines as the whole file does.
    ``source`` may also be an iterable of lines with a ``name`` (the package's views of a file:
    a byte range, permuted lines: see `bounded_lines`).
    With ``labels=False`` a line may leave out its label (``1:1 5:1``, a line to score): its label is
    NaN.  By default every line must start with its label, and one that starts with a feature is a
    DataError naming it.
    The module docstring says when a chunk of fewer than ``block_lines`` examples is handed over
    (``first_block_whole``), and how long a line may be (``max_line_bytes``).
    """

    def __init__(
        self,
        source,
        block_lines: int = 4096,
        skip_bad_lines: bool = False,
        first_line: int = 1,
        labels: bool = True,
        first_block_whole: bool = False,
        max_line_bytes: int = MAX_LINE_BYTES,
    ):
        if block_lines < 1:
            raise ValueError(f"block_lines must be >= 1, got {block_lines}")
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be >= 1, got {max_line_bytes}")
        self._file, self.source_name = open_binary(source)
        # Close only what we opened: not stdin, not a caller's file object.
        self._owns_file = isinstance(source, (str, os.PathLike)) and source != "-"
        self._compressed = isinstance(self._file, _COMPRESSED_FILES)
        self._needs_final_newline = (isinstance(source, str) and source == "-") or is_stream(self._file)
        self._block_lines = block_lines
        self._first_block_whole = first_block_whole
        self._max_line = max_line_bytes
        self._poll = None if self._compressed else poller(self._file)  # a stream's: see inputs.pieces
        self._skip_bad_lines = skip_bad_lines
        self._labels = labels
        self._lineno = first_line - 1  # the last line read
        self._iterated = False
        self.n_examples = 0
        self._bytes_parsed = 0  # input bytes behind the chunks yielded so far (share_read)
        self.n_skipped = 0
        self.skipped: list[DataError] = []

    def close(self):
        if self._owns_file:
            self._file.close()

    def share_read(self) -> float | None:
        """Share of the input's bytes read so far, or None when its size is unknown (standard
        input, a pipe, a compressed file, an iterable of lines); for progress reports."""
        if self._compressed or self._needs_final_newline:
            return None
        try:
            size = os.fstat(self._file.fileno()).st_size
        except (AttributeError, OSError, ValueError):
            return None
        return min(1.0, self._bytes_parsed / size) if size else 1.0

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __iter__(self) -> Iterator[Chunk]:
        if self._iterated:
            raise RuntimeError("a LibsvmReader can only be iterated once")
        self._iterated = True
        try:
            yield from self._chunks()
        finally:
            self.close()

    def _chunks(self) -> Iterator[Chunk]:
        block = Block(min(self._block_lines, 4096))
        pieces = inputs.pieces(self._file, self._poll, self._max_line)
        tail: list[bytes] = []  # the line being read: what was read after the last newline
        tail_size = 0
        size = 0  # bytes read in all
        skipping = False  # dropping the rest of a line too long to keep (skip_bad_lines)
        stop = None  # what ended the reading early (a read error, an interrupt), raised after the lines before it
        while True:
            try:
                piece = next(pieces, b"")
            except _READ_ERRORS as exc:
                piece, stop = b"", exc
            except KeyboardInterrupt as exc:
                if self._poll is None:  # a file is still there to be read again
                    raise
                piece, stop = b"", exc  # a stream's lines would be gone: hand them over first
            if piece is inputs.PAUSE:
                if block.n_rows and (self.n_examples or not self._first_block_whole):
                    self._bytes_parsed = size - tail_size
                    yield self._finish(block)
                continue
            size += len(piece)
            at_end = not piece
            if skipping:
                newline = piece.find(b"\n")
                if newline < 0 and not at_end:
                    continue
                piece, skipping = piece[newline + 1 :], False
            newline = piece.find(b"\n")
            if tail_size + (newline if newline >= 0 else len(piece)) > self._max_line:
                yield from self._too_long(block, size - tail_size)
                tail, tail_size = [], 0
                if newline < 0:
                    skipping = True
                    continue
                piece = piece[newline + 1 :]
                newline = piece.find(b"\n")
            if newline < 0 and not at_end:
                tail.append(piece)
                tail_size += len(piece)
                continue
            data = b"".join(tail + [piece])
            end = data.rfind(b"\n") + 1
            if at_end and stop is None and not self._needs_final_newline:
                end = len(data)  # a file's last line may lack its newline
            yield from self._parse(block, data, end, size >= _SMALL_INPUT, size - len(data))
            tail, tail_size = [data[end:]], len(data) - end
            if at_end:
                break
        if isinstance(stop, KeyboardInterrupt):
            yield from self._hand_over(block, size - tail_size)
            raise stop
        if stop is not None:  # after the lines before it, which may hold an earlier error
            what = "truncated or corrupt compressed data" if self._compressed else "read error"
            error = DataError(self.source_name, self._lineno, None, f"{what} ({stop})")
            yield from self._hand_over(block, size - tail_size)
            raise error from stop
        if tail_size:
            try:
                self._cut_line(block, tail[0])
            except DataError:
                yield from self._hand_over(block, size - tail_size)
                raise
        self._bytes_parsed = size
        chunk = self._finish(block)
        if chunk is not None:
            yield chunk

    def _hand_over(self, block: Block, parsed: int) -> Iterator[Chunk]:
        """The block's rows as a chunk, if it holds any (the reading stops after them)."""
        if block.n_rows:
            self._bytes_parsed = parsed
            yield self._finish(block)

    def _too_long(self, block: Block, parsed: int) -> Iterator[Chunk]:
        """The next line holds more than max_line_bytes: an error naming it, after the rows before it
        (kept with skip_bad_lines)."""
        self._lineno += 1
        error = line_too_long(self.source_name, self._lineno, self._max_line)
        if not self._skip_bad_lines:
            yield from self._hand_over(block, parsed)
            raise error
        block.errors.append(error)

    def _parse(self, block: Block, data: bytes, end: int, compiled: bool, offset: int) -> Iterator[Chunk]:
        """Parse the lines of data[:end] into the block, yielding each chunk it completes (data
        starts at byte `offset` of the input)."""
        buf = np.frombuffer(data, dtype=np.uint8)
        pos = 0
        while pos < end:
            status = PUNT
            if compiled:
                status, pos, self._lineno, block.n_rows, n_deferred = parse_lines(
                    buf, pos, end, self._lineno, block.n_rows, self._block_lines, self._labels, *block.arrays()
                )
                if n_deferred:
                    entries, starts, stops = block.deferred[:n_deferred].T
                    block.values[entries] = [float(data[a:b]) for a, b in zip(starts.tolist(), stops.tolist())]
            if status in (PUNT, ROOM):
                newline = data.find(b"\n", pos, end)
                stop = end if newline < 0 else newline + 1
                if status == ROOM:  # a line has at most one feature per two bytes
                    block.reserve((stop - pos) // 2 + 1, stop - pos)
                    continue
                self._lineno += 1
                try:
                    self._parse_line(block, data[pos:stop])
                except DataError:
                    yield from self._hand_over(block, offset + pos)
                    raise
                pos = stop
            if block.n_rows == self._block_lines:
                self._bytes_parsed = offset + pos
                yield self._finish(block)

    def _parse_line(self, block: Block, raw: bytes) -> None:
        """Parse line self._lineno with parse_line into the block (an error raises, or is kept with
        skip_bad_lines)."""
        try:
            parsed = parse_line(raw, self._lineno, self.source_name, self._labels)
        except DataError as err:
            if not self._skip_bad_lines:
                raise
            block.errors.append(err)
            return
        if parsed is not None:  # None: blank or comment line
            block.add(self._lineno, *parsed)

    def _cut_line(self, block: Block, raw: bytes) -> None:
        """The stream ended inside its last line, `raw`: report it unless it holds no data."""
        self._lineno += 1
        try:  # a line that is malformed as well gets its own error, as any other line
            if parse_line(raw, self._lineno, self.source_name, self._labels) is None:
                return
            error = DataError(
                self.source_name,
                self._lineno,
                raw.split()[-1].decode("utf-8", "backslashreplace"),
                "input ended in the middle of a line (no newline at the end): its producer may have stopped early",
            )
        except DataError as malformed:
            error = malformed
        if not self._skip_bad_lines:
            raise error
        block.errors.append(error)

    def _finish(self, block: Block) -> Chunk | None:
        """A Chunk of the block's rows (None if none); count its skipped lines; clear the block."""
        self.n_skipped += len(block.errors)
        self.skipped.extend(block.errors[: max(0, _MAX_KEPT_ERRORS - len(self.skipped))])
        block.errors = []
        n, block.n_rows = block.n_rows, 0
        if not n:
            return None
        entries = int(block.indptr[n])
        labels = block.labels[:n].copy()
        self.n_examples += n
        return Chunk(
            indptr=block.indptr[: n + 1].copy(),
            indices=block.indices[:entries].copy(),
            values=block.values[:entries].copy(),
            labels=labels,
            line_numbers=block.line_numbers[:n].copy(),
            label_spellings={
                float(labels[r]): block.label_text[block.label_ptr[r] : block.label_ptr[r + 1]]
                .tobytes()
                .decode("ascii")
                for r in _first_rows(labels)
            },
        )


def _first_rows(labels: np.ndarray) -> list:
    """The row where each label value comes first, in row order (an unlabelled row's NaN has none)."""
    order = np.argsort(labels, kind="stable")  # a value's first row first among its rows
    ordered = labels[order]
    new = np.ones(len(labels), dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    new &= ~np.isnan(ordered)
    return np.sort(order[new]).tolist()


def write_libsvm(fileobj_text, indptr, indices, values, labels, label_strings=None) -> None:
    """Write CSR data (``indices`` are the file's) as LIBSVM text to a text file object.

    Values are written with ``repr`` and labels as the shortest text that reads back
    (``core.shortest_text``; or as the given ``label_strings``), so reading the file back gives
    bit-identical floats.
    """
    indptr = np.asarray(indptr, dtype=np.int64).tolist()
    file_indices = np.asarray(indices, dtype=np.int64).tolist()
    values = np.asarray(values, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.float64)
    # The reader rejects non-finite numbers, so do not write any.
    if not (np.isfinite(values).all() and np.isfinite(labels).all()):
        raise ValueError("labels and values must be finite")
    if label_strings is None:
        label_strings = [shortest_text(label) for label in labels.tolist()]
    if len(label_strings) != len(indptr) - 1:
        raise ValueError(f"{len(label_strings)} labels for {len(indptr) - 1} examples")
    values = values.tolist()
    write = fileobj_text.write
    for i, label in enumerate(label_strings):
        start, stop = indptr[i], indptr[i + 1]
        features = " ".join(map("%d:%r".__mod__, zip(file_indices[start:stop], values[start:stop])))
        write(f"{label} {features}\n" if features else f"{label}\n")


def read_all(source, **kw) -> Chunk:
    """Read the whole source into one Chunk (for tests and small data only)."""
    with LibsvmReader(source, **kw) as reader:
        return concatenate(list(reader))
