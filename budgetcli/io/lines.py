"""One line of LIBSVM text parsed strictly, token by token, with the message that names what is wrong
(the reader's Python path, and the words of every error the compiled path punts to it), and the block of
rows a reader fills."""

from __future__ import annotations

import math

import re

import numpy as np

from ..base.core import MAX_INDEX, DataError, parse_number


BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark, allowed before the first line
TOKEN = re.compile(rb"[^ \t\r\n]+")


class Block:
    """The rows of the next chunk, in the arrays `parse_lines` fills (see there); reused from block to
    block, grown when a row does not fit."""

    def __init__(self, rows: int):
        self.n_rows = 0
        self.indptr = np.zeros(rows + 1, dtype=np.int64)
        self.labels = np.empty(rows, dtype=np.float64)
        self.line_numbers = np.empty(rows, dtype=np.int64)
        self.label_ptr = np.zeros(rows + 1, dtype=np.int64)
        self.label_text = np.empty(4 * rows, dtype=np.uint8)
        self.indices = np.empty(16 * rows, dtype=np.int32)  # 0-based
        self.values = np.empty(16 * rows, dtype=np.float64)
        self.deferred = np.empty((16 * rows, 3), dtype=np.int64)  # values left to float(), per call
        self.errors: list[DataError] = []  # lines skipped (skip_bad_lines)

    def arrays(self) -> tuple:
        return (
            self.indptr,
            self.labels,
            self.line_numbers,
            self.label_ptr,
            self.label_text,
            self.indices,
            self.values,
            self.deferred,
        )

    def reserve(self, entries: int, text: int) -> None:
        """Room for one more row of `entries` features and `text` bytes of label.  The row arrays grow
        together: parse_lines fills as many rows as every one of them holds."""
        n, e, t = self.n_rows, int(self.indptr[self.n_rows]), int(self.label_ptr[self.n_rows])
        rows = max(2 * len(self.labels), n + 1) if n + 1 > len(self.labels) else len(self.labels)
        for name, need in (
            ("indptr", rows + 1),
            ("labels", rows),
            ("line_numbers", rows),
            ("label_ptr", rows + 1),
            ("label_text", t + text),
            ("indices", e + entries),
            ("values", e + entries),
            ("deferred", entries),
        ):
            old = getattr(self, name)
            if need > len(old):
                new = np.empty((max(2 * len(old), need),) + old.shape[1:], dtype=old.dtype)
                new[: len(old)] = old
                setattr(self, name, new)

    def add(self, lineno: int, label_token: bytes, label: float, indices: list, values: list) -> None:
        """Append a row that parse_line parsed."""
        self.reserve(len(indices), len(label_token))
        n, e, t = self.n_rows, int(self.indptr[self.n_rows]), int(self.label_ptr[self.n_rows])
        self.indices[e : e + len(indices)] = indices
        self.values[e : e + len(values)] = values
        self.label_text[t : t + len(label_token)] = np.frombuffer(label_token, dtype=np.uint8)
        self.labels[n], self.line_numbers[n] = label, lineno
        self.indptr[n + 1], self.label_ptr[n + 1] = e + len(indices), t + len(label_token)
        self.n_rows = n + 1


def parse_line(raw: bytes, lineno: int, source: str, labels: bool = True):
    """Parse one line checking everything, token by token.

    Returns None for a blank or comment line, else
    (label token as bytes, label, indices, values); raises DataError
    for the first problem in the line.  A line whose first token is a feature has no label: with
    ``labels`` that is an error, else its label is NaN (token b"").
    """

    def error(reason, token):
        return DataError(source, lineno, token, reason)

    if lineno == 1 and raw.startswith(BOM):
        raw = raw[len(BOM) :]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error("not valid text (invalid UTF-8)", token_at(raw, exc.start)) from None
    data = text.rstrip("\r\n").partition("#")[0]
    # Only spaces and tabs separate tokens (str.split() would also split on
    # other control and Unicode whitespace characters, which are errors here).
    tokens = [tok for tok in data.replace("\t", " ").split(" ") if tok]
    if not tokens:
        return None

    for tok in tokens:
        if not (tok.isascii() and tok.isprintable()):
            raise error("not valid text (control or non-ASCII character)", tok)
    if ":" in tokens[0]:  # `1:1 5:1`, or `qid:3 1:1`: no label
        if labels:
            raise error(
                "no label: the line starts with a feature, where its label must come first "
                "(predict scores lines without one)",
                tokens[0],
            )
        tokens.insert(0, "")
        label = math.nan
    else:
        label = strict_number(tokens[0], "label", tokens[0], error)
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
        index = strict_index(index_str, tok, error)
        if indices and index <= indices[-1]:
            if index == indices[-1]:
                raise error(f"duplicate feature index {index}", tok)
            raise error(
                f"feature indices must be strictly increasing ({index} after {indices[-1]})",
                tok,
            )
        indices.append(index)
        values.append(strict_number(value_str, "feature value", tok, error))
    return tokens[0].encode("ascii"), label, indices, values


def strict_number(text: str, what: str, token: str, error) -> float:
    number = parse_number(text)
    if number is None:
        raise error(f"{what} is not a number", token)
    if not math.isfinite(number):
        raise error(f"{what} is not finite (NaN, infinity or overflow)", token)
    return number


def strict_index(text: str, token: str, error) -> int:
    if not text.isdigit():  # text is ASCII here, so this means 0-9 only
        raise error("feature index must be a whole number ≥ 0", token)
    digits = text.lstrip("0")
    # The length test keeps int() away from absurdly long digit strings.
    if len(digits) > len(str(MAX_INDEX)) or int(digits or "0") > MAX_INDEX:
        raise error(f"feature index exceeds {MAX_INDEX}", token)
    return int(digits or "0")  # 0 is a feature, as svm-train and scikit-learn's zero-based files have it


def token_at(raw: bytes, pos: int) -> str:
    """The whitespace-separated token of ``raw`` that contains byte ``pos``, printable."""
    for match in TOKEN.finditer(raw):
        if match.end() > pos:
            return match.group().decode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")
