"""Streaming reader (and a small writer) for the LIBSVM / svmlight text format.

One example per line: ``label idx:val idx:val ...`` with 1-based, strictly
increasing feature indices.  Blank lines and ``#`` comments are skipped,
``qid:N`` tokens are ignored.

How the reader stays fast without cutting corners on validation:

* Lines are read as bytes.  A line that matches ``_PLAIN_LINE`` (only digits,
  signs, dots, exponents, colons, spaces and tabs, in the shape
  ``label idx:val ...``) takes the *fast path*: one ``replace``/``split`` for
  the whole line and C-level ``map(int, ...)`` / ``map(float, ...)`` over its
  tokens.
* What the fast path cannot see per line (index range, strictly increasing
  indices, finite numbers) is checked once per block with numpy.
* Every other line (comments, qid, BOM, garbage ...) and every line that
  fails a fast-path conversion or a block check goes through
  ``_parse_strict``, which checks everything token by token and produces the
  error message.  The fast path only ever accepts lines that the strict
  parser accepts too, with the same result.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
import os
import re
import sys
import zlib
from array import array
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator

import numpy as np

__all__ = [
    "DataError",
    "Chunk",
    "LibsvmReader",
    "open_binary",
    "write_libsvm",
    "read_all",
    "concatenate",
    "MAX_INDEX",
]

#: Largest accepted (1-based) feature index: ``index - 1`` must fit in int32.
MAX_INDEX = 2**31 - 1

_TOKEN_DISPLAY_CHARS = 40
_MAX_KEPT_ERRORS = 10
_BOM = b"\xef\xbb\xbf"

# Shape of a line the fast path may take.  The character classes of
# neighbouring parts are disjoint, so a failed match costs linear time even on
# a line with a million features.
_PLAIN_LINE = re.compile(
    rb"[ \t]*[0-9eE+\-.]+(?:[ \t]+[0-9]+:[0-9eE+\-.]+)*[ \t]*\r?\n?"
)
_TOKEN = re.compile(rb"[^ \t\r\n]+")

_DECOMPRESSORS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_COMPRESSED_FILES = (gzip.GzipFile, bz2.BZ2File, lzma.LZMAFile)
# What reading a (possibly compressed) stream raises on truncation or corruption.
_READ_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)


class DataError(ValueError):
    """A problem with the input data, located by source name and line number."""

    def __init__(self, source, line: int, token: str | None, reason: str):
        self.source = str(source)
        self.line = int(line)
        self.token = None if token is None else str(token)[:_TOKEN_DISPLAY_CHARS]
        self.reason = reason
        # line 0: about the source as a whole (cannot open it, no examples in it)
        message = f"{self.source}:{self.line}: {reason}" if self.line else f"{self.source}: {reason}"
        if self.token is not None:
            message += f" (token {self.token!r})"
        super().__init__(message)

    def __reduce__(self):
        # The default pickling replays __init__ with self.args (the message
        # only); joblib workers need the real arguments.
        return (type(self), (self.source, self.line, self.token, self.reason))


@dataclass(eq=False)
class Chunk:
    """A block of examples in CSR form."""

    indptr: np.ndarray  # int64, (n + 1,)
    indices: np.ndarray  # int32, 0-based, strictly increasing within a row
    values: np.ndarray  # float64
    labels: np.ndarray  # float64, (n,)
    line_numbers: np.ndarray  # int64, (n,), 1-based line of each example
    label_spellings: dict = field(default_factory=dict)  # label -> first spelling

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def n_features(self) -> int:
        """Largest 0-based index + 1, or 0 if the chunk has no features at all."""
        return int(self.indices.max()) + 1 if len(self.indices) else 0

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(indices, values) of example ``i``, as views."""
        start, stop = self.indptr[i], self.indptr[i + 1]
        return self.indices[start:stop], self.values[start:stop]

    def take(self, rows) -> "Chunk":
        """A new Chunk of the given rows, in the given order (for shuffled epochs)."""
        rows = np.asarray(rows, dtype=np.int64)
        lengths = np.diff(self.indptr)[rows]
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        # entry positions of each taken row: its start plus 0 .. length-1
        starts = np.repeat(self.indptr[rows] - indptr[:-1], lengths)
        entries = starts + np.arange(indptr[-1])
        present = set(self.labels[rows].tolist())
        spellings = {v: s for v, s in self.label_spellings.items() if v in present}
        return Chunk(indptr, self.indices[entries], self.values[entries], self.labels[rows],
                     self.line_numbers[rows], spellings)

    @classmethod
    def from_dense(cls, X, y) -> "Chunk":
        """A Chunk of the non-zeros of the rows of X (0-based indices), as the reader would make
        them, lines numbered 1..n and labels spelt %g; for tests, generated streams and small data."""
        X = np.asarray(X, np.float64)
        rows, cols = np.nonzero(X)
        indptr = np.zeros(X.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=X.shape[0]), out=indptr[1:])
        labels = np.asarray(y, np.float64)
        return cls(indptr=indptr, indices=cols.astype(np.int32), values=X[rows, cols], labels=labels,
                   line_numbers=np.arange(1, X.shape[0] + 1, dtype=np.int64),
                   label_spellings={float(v): format(v, "g") for v in np.unique(labels)})

    def to_dense(self, n_features: int) -> np.ndarray:
        """Dense (n, n_features) float64 copy; for tests and small data."""
        if self.n_features > n_features:
            raise ValueError(
                f"n_features={n_features} is too small, the chunk needs {self.n_features}"
            )
        dense = np.zeros((len(self), n_features), dtype=np.float64)
        rows = np.repeat(np.arange(len(self)), np.diff(self.indptr))
        dense[rows, self.indices] = self.values
        return dense


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


class _Block:
    """Rows accumulated for the next chunk; the buffers are reused from block to block."""

    def __init__(self):
        self.indptr = array("q", [0])
        # 1-based as in the file, and int64 so out-of-range indices can be caught.
        self.indices = array("q")
        self.values = array("d")
        self.labels = array("d")
        self.line_numbers = array("q")
        self.label_tokens: list[bytes] = []
        self.raw_lines: list[bytes] = []  # to re-parse a row that fails the block checks
        self.errors: list[DataError] = []  # lines skipped (skip_bad_lines)

    def clear(self):
        del self.indptr[1:]
        for buf in (self.indices, self.values, self.labels, self.line_numbers):
            del buf[:]
        self.label_tokens.clear()
        self.raw_lines.clear()
        self.errors.clear()


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
    """

    def __init__(self, source, block_lines: int = 4096, skip_bad_lines: bool = False, first_line: int = 1):
        if block_lines < 1:
            raise ValueError(f"block_lines must be >= 1, got {block_lines}")
        self._file, self.source_name = open_binary(source)
        # Close only what we opened: not stdin, not a caller's file object.
        self._owns_file = isinstance(source, (str, os.PathLike)) and source != "-"
        self._compressed = isinstance(self._file, _COMPRESSED_FILES)
        self._needs_final_newline = (isinstance(source, str) and source == "-") or _is_stream(self._file)
        self._block_lines = block_lines
        self._skip_bad_lines = skip_bad_lines
        self._first_line = first_line
        self._iterated = False
        self.n_examples = 0
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
            return min(1.0, self._file.tell() / size) if size else 1.0
        except (AttributeError, OSError, ValueError):
            return None

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
        block = _Block()
        # Local names for everything used per line: this loop is the hot path.
        plain = _PLAIN_LINE.fullmatch
        indptr, indices, values = block.indptr, block.indices, block.values
        labels, line_numbers = block.labels, block.line_numbers
        label_tokens, raw_lines = block.label_tokens, block.raw_lines
        block_lines = self._block_lines
        source = self.source_name
        lineno = self._first_line - 1
        # Only reading the file raises the exceptions caught below: the loop
        # body parses, and its own errors are DataError (a ValueError).
        try:
            for lineno, raw in enumerate(self._file, self._first_line):
                parts = None
                if plain(raw):
                    parts = raw.replace(b":", b" ").split()
                    try:
                        label = float(parts[0])
                        indices.extend(map(int, parts[1::2]))
                        values.extend(map(float, parts[2::2]))
                    except (ValueError, OverflowError):
                        # e.g. '1.2.3' or an index beyond int64: undo the
                        # partial row and let the strict parser explain.
                        del indices[indptr[-1]:], values[indptr[-1]:]
                        parts = None
                    else:
                        label_token = parts[0]
                if parts is None:
                    try:
                        parsed = _parse_strict(raw, lineno, source)
                    except DataError as err:
                        if not self._skip_bad_lines:
                            self._finish(block)  # an earlier line of the block may be bad too
                            raise
                        block.errors.append(err)
                        continue
                    if parsed is None:  # blank or comment line
                        continue
                    label_token, label, row_indices, row_values = parsed
                    indices.extend(row_indices)
                    values.extend(row_values)
                labels.append(label)
                indptr.append(len(indices))
                line_numbers.append(lineno)
                label_tokens.append(label_token)
                raw_lines.append(raw)
                if len(labels) == block_lines:
                    if raw[-1:] != b"\n" and self._needs_final_newline:
                        break  # only the last line can lack its newline: it was cut (below)
                    chunk = self._finish(block)
                    if chunk is not None:
                        yield chunk
        except _READ_ERRORS as exc:
            self._finish(block)
            what = "truncated or corrupt compressed data" if self._compressed else "read error"
            raise DataError(source, lineno, None, f"{what} ({exc})") from exc
        if lineno and raw[-1:] != b"\n" and self._needs_final_newline:
            self._drop_cut_line(block, lineno, raw)
        chunk = self._finish(block)
        if chunk is not None:
            yield chunk

    def _drop_cut_line(self, block: _Block, lineno: int, raw: bytes) -> None:
        """The stream ended inside line `lineno`: take its row out of the block and report it."""
        if not block.line_numbers or block.line_numbers[-1] != lineno:
            return  # blank, comment, or already refused by the parser (named by its own error)
        start = block.indptr[-2]
        del block.indices[start:], block.values[start:], block.indptr[-1]
        for buf in (block.labels, block.line_numbers, block.label_tokens, block.raw_lines):
            buf.pop()
        try:  # a line that is malformed as well gets its own error, as on the strict path
            _parse_strict(raw, lineno, self.source_name)
            tokens = raw.split()
            error = DataError(self.source_name, lineno, tokens[-1].decode("utf-8", "backslashreplace"),
                              "input ended in the middle of a line (no newline at the end): its producer may "
                              "have stopped early")
        except DataError as malformed:
            error = malformed
        if not self._skip_bad_lines:
            self._finish(block)  # an earlier line of the block may be bad too: report that first
            raise error
        block.errors.append(error)

    def _finish(self, block: _Block) -> Chunk | None:
        """Check the block's rows, build a Chunk from the good ones (None if none), clear the block.

        Without skip_bad_lines the first bad row raises its DataError.
        """
        indptr = np.array(block.indptr, dtype=np.int64)
        indices = np.array(block.indices, dtype=np.int64)
        values = np.array(block.values, dtype=np.float64)
        labels = np.array(block.labels, dtype=np.float64)
        line_numbers = np.array(block.line_numbers, dtype=np.int64)
        label_tokens = list(block.label_tokens)
        errors = list(block.errors)
        bad_rows = _bad_rows(indptr, indices, values, labels)
        if bad_rows.size:
            row_errors = [
                self._explain(block.raw_lines[r], int(line_numbers[r])) for r in bad_rows
            ]
            if not self._skip_bad_lines:
                raise row_errors[0]
            keep = np.ones(len(labels), dtype=bool)
            keep[bad_rows] = False
            entry_keep = np.repeat(keep, np.diff(indptr))
            indices, values = indices[entry_keep], values[entry_keep]
            indptr = np.concatenate(([0], np.cumsum(np.diff(indptr)[keep])))
            labels, line_numbers = labels[keep], line_numbers[keep]
            label_tokens = [tok for tok, k in zip(label_tokens, keep) if k]
            errors = sorted(errors + row_errors, key=lambda e: e.line)
        block.clear()

        self.n_skipped += len(errors)
        self.skipped.extend(errors[: max(0, _MAX_KEPT_ERRORS - len(self.skipped))])
        if not len(labels):
            return None
        spellings: dict = {}
        for label, token in zip(labels.tolist(), label_tokens):
            if label not in spellings:
                spellings[label] = token.decode("ascii")
        self.n_examples += len(labels)
        return Chunk(
            indptr=indptr,
            indices=(indices - 1).astype(np.int32),
            values=values,
            labels=labels,
            line_numbers=line_numbers,
            label_spellings=spellings,
        )

    def _explain(self, raw: bytes, lineno: int) -> DataError:
        """The DataError of a line that failed the block checks."""
        try:
            _parse_strict(raw, lineno, self.source_name)
        except DataError as err:
            return err
        raise AssertionError(f"line {lineno} failed the block checks but parses strictly")


def _is_stream(f) -> bool:
    """True for a file object that says it cannot seek (a pipe, a socket).  An iterable of lines
    without `seekable` is one of the package's own views of a regular file (a byte range for
    parallel predict, permuted lines for tune): its missing final newline is the file's own."""
    try:
        return not f.seekable()
    except AttributeError:
        return False
    except (OSError, ValueError):
        return True


def _bad_rows(indptr, indices, values, labels) -> np.ndarray:
    """Sorted rows with an index out of range or out of order, or a non-finite number."""
    bad = (indices < 1) | (indices > MAX_INDEX) | ~np.isfinite(values)
    not_increasing = np.zeros(len(indices), dtype=bool)
    not_increasing[1:] = indices[1:] <= indices[:-1]
    row_starts = indptr[:-1][np.diff(indptr) > 0]
    not_increasing[row_starts] = False  # a row's first entry has no predecessor
    bad |= not_increasing
    # The row holding entry p is the last r with indptr[r] <= p ('right' skips empty rows).
    rows = np.searchsorted(indptr, np.flatnonzero(bad), side="right") - 1
    # a row mask rather than np.union1d: np.unique imports numpy.ma (~0.1 s of every command's start-up)
    bad_row = ~np.isfinite(labels)
    bad_row[rows] = True
    return np.flatnonzero(bad_row)


def _parse_strict(raw: bytes, lineno: int, source: str):
    """Parse one line checking everything, token by token.

    Returns None for a blank or comment line, else
    (label token as bytes, label, 1-based indices, values); raises DataError
    for the first problem in the line.
    """

    def error(reason, token):
        return DataError(source, lineno, token, reason)

    if lineno == 1 and raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error("not valid text (invalid UTF-8)", _token_at(raw, exc.start)) from None
    data = text.rstrip("\r\n").partition("#")[0]
    # Only spaces and tabs separate tokens (str.split() would also split on
    # other control and Unicode whitespace characters, which are errors here).
    tokens = [tok for tok in data.replace("\t", " ").split(" ") if tok]
    if not tokens:
        return None

    for tok in tokens:
        if not (tok.isascii() and tok.isprintable()):
            raise error("not valid text (control or non-ASCII character)", tok)
    label = _strict_number(tokens[0], "label", tokens[0], error)
    indices: list[int] = []
    values: list[float] = []
    for tok in tokens[1:]:
        index_str, colon, value_str = tok.partition(":")
        if index_str == "qid":
            if not value_str.isdigit():
                raise error("qid must be a non-negative integer", tok)
            continue
        if not colon:
            raise error("expected index:value", tok)
        if not index_str:
            raise error("missing feature index before ':'", tok)
        if not value_str:
            raise error("missing feature value after ':'", tok)
        index = _strict_index(index_str, tok, error)
        if indices and index <= indices[-1]:
            if index == indices[-1]:
                raise error(f"duplicate feature index {index}", tok)
            raise error(
                f"feature indices must be strictly increasing ({index} after {indices[-1]})",
                tok,
            )
        indices.append(index)
        values.append(_strict_number(value_str, "feature value", tok, error))
    return tokens[0].encode("ascii"), label, indices, values


def _strict_number(text: str, what: str, token: str, error) -> float:
    # float() also takes digit separators ('1_0'), which the format does not have.
    try:
        number = None if "_" in text else float(text)
    except ValueError:
        number = None
    if number is None:
        raise error(f"{what} is not a number", token)
    if not math.isfinite(number):
        raise error(f"{what} is not finite (NaN, infinity or overflow)", token)
    return number


def _strict_index(text: str, token: str, error) -> int:
    if not text.isdigit():  # text is ASCII here, so this means 0-9 only
        raise error("feature index must be a positive integer", token)
    digits = text.lstrip("0")
    # The length test keeps int() away from absurdly long digit strings.
    if len(digits) > len(str(MAX_INDEX)) or int(digits or "0") > MAX_INDEX:
        raise error(f"feature index exceeds {MAX_INDEX}", token)
    if not digits:
        raise error("feature index must be >= 1 (indices are 1-based)", token)
    return int(digits)


def _token_at(raw: bytes, pos: int) -> str:
    """The whitespace-separated token of ``raw`` that contains byte ``pos``, printable."""
    for match in _TOKEN.finditer(raw):
        if match.end() > pos:
            return match.group().decode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")


def write_libsvm(fileobj_text, indptr, indices, values, labels, label_strings=None) -> None:
    """Write CSR data (0-based ``indices``) as LIBSVM text to a text file object.

    Values are written with ``repr`` and labels with ``'%.17g'`` (or as the
    given ``label_strings``), so reading the file back gives bit-identical floats.
    """
    indptr = np.asarray(indptr, dtype=np.int64).tolist()
    file_indices = (np.asarray(indices, dtype=np.int64) + 1).tolist()
    values = np.asarray(values, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.float64)
    # The reader rejects non-finite numbers, so do not write any.
    if not (np.isfinite(values).all() and np.isfinite(labels).all()):
        raise ValueError("labels and values must be finite")
    if label_strings is None:
        label_strings = ["%.17g" % label for label in labels.tolist()]
    if len(label_strings) != len(indptr) - 1:
        raise ValueError(
            f"{len(label_strings)} labels for {len(indptr) - 1} examples"
        )
    values = values.tolist()
    write = fileobj_text.write
    for i, label in enumerate(label_strings):
        start, stop = indptr[i], indptr[i + 1]
        features = " ".join(
            map("%d:%r".__mod__, zip(file_indices[start:stop], values[start:stop]))
        )
        write(f"{label} {features}\n" if features else f"{label}\n")


def read_all(source, **kw) -> Chunk:
    """Read the whole source into one Chunk (for tests and small data only)."""
    with LibsvmReader(source, **kw) as reader:
        return concatenate(list(reader))


def concatenate(chunks: list) -> Chunk:
    """One Chunk holding the given chunks' examples in order."""
    if not chunks:
        return Chunk(
            indptr=np.zeros(1, dtype=np.int64),
            indices=np.zeros(0, dtype=np.int32),
            values=np.zeros(0, dtype=np.float64),
            labels=np.zeros(0, dtype=np.float64),
            line_numbers=np.zeros(0, dtype=np.int64),
        )
    offsets = np.cumsum([0] + [int(c.indptr[-1]) for c in chunks[:-1]])
    spellings: dict = {}
    for chunk in chunks:
        for label, spelling in chunk.label_spellings.items():
            spellings.setdefault(label, spelling)
    return Chunk(
        indptr=np.concatenate(
            [np.zeros(1, dtype=np.int64)]
            + [c.indptr[1:] + off for c, off in zip(chunks, offsets)]
        ),
        indices=np.concatenate([c.indices for c in chunks]),
        values=np.concatenate([c.values for c in chunks]),
        labels=np.concatenate([c.labels for c in chunks]),
        line_numbers=np.concatenate([c.line_numbers for c in chunks]),
        label_spellings=spellings,
    )
