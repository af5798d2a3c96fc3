"""Compiled parsing of LIBSVM lines into the CSR arrays of the reader's next chunk (its hot path).

`parse_lines` takes the lines of a byte buffer one by one and accepts a line only when what it
gives is sure to be exactly what `lines.parse_line` gives for it.  At any other line it stops
and returns that line's position: the reader hands the line to `parse_line` (which words the
error, or parses the unusual line) and calls `parse_lines` again after it.  What it accepts:

- tokens separated by spaces and tabs, up to a ``\\n`` (``\\r`` right before it are stripped, as
  `parse_line` strips them) or the end of the buffer; a line of spaces and tabs only is blank;
- the label, a number, then features ``index:value``: the index digits only (leading zeros
  allowed), from 0 to 2³¹ − 1, greater than the one before; the value a number.  Unless `labelled`,
  a line may start with a feature (``digits:``): it has no label (NaN, its label token empty), as
  `parse_line(..., labels=False)` reads it — the novelty task's lines and `predict`'s;
- numbers ``[+-]digits[.digits][(e|E)[+-]digits]`` (one digit run may be empty, not both) whose
  decimal significand w is at most 2⁵³ and whose power of ten q has |q| ≤ 22.  Then w and 10^|q|
  are exact doubles and w·10^q (w / 10^−q) is one correctly rounded IEEE operation, so the result
  is the correctly rounded value of the decimal, which is what Python's float() returns (Clinger's
  fast path).
- a feature value outside that fast path (e.g. the 17 digits ``repr`` writes) but of at most 40
  characters and an exponent of at most 99 is taken too: its position is listed in `deferred`, and
  the reader sets it to Python's float() of the token.  Such a number is below 10^139, so it is
  finite, as `parse_line` requires.

Labels outside the fast path, larger numbers, inf, nan, '_', comments, qid, a BOM, other
characters and every error go to `parse_line`.
"""

from __future__ import annotations

import numpy as np

from ..numerics._jit import njit
from ..base.core import MAX_INDEX

#: `parse_lines` stopped at the end of the buffer / because the chunk holds `max_rows` rows / because
#: an array is full (grow it, call again) / at a line for `parse_line`.
DONE, FULL, ROOM, PUNT = range(4)

_POW10 = np.array([float(10**k) for k in range(23)])  # exact: 10^k = 5^k · 2^k and 5^22 < 2^53
_MAX_SIGNIFICAND = 2**53
_MAX_DEFERRED_CHARS, _MAX_DEFERRED_EXPONENT = 40, 99
_SPACE, _TAB, _NEWLINE, _CR, _COLON = 32, 9, 10, 13, 58


@njit(cache=True, inline="always")
def _digit(c) -> bool:
    return 48 <= c <= 57


# The number grammar is written out once, inside the token loop: as an inlined helper taking `buf`,
# numba would count references to the array at each call, which doubled the time per token.
@njit(cache=True)
def parse_lines(
    buf,
    pos,
    end,
    lineno,
    n_rows,
    max_rows,
    labelled,
    indptr,
    labels,
    line_numbers,
    label_ptr,
    label_text,
    indices,
    values,
    deferred,
):
    """Parse the lines of buf[pos:end] into rows n_rows, n_rows + 1, … of the arrays.

    Line `lineno` + 1 starts at `pos`; every line in the range but the last ends with a newline.
    Row r gets its label, its line number, its features in indices (the file's) and values from
    indptr[r] to indptr[r + 1], and its label token in label_text from label_ptr[r] to
    label_ptr[r + 1].  Each row of deferred[:n_deferred] is (entry, start, end): values[entry] is
    float(buf[start:end]), left to the caller.  Returns (status, pos, lineno, n_rows, n_deferred):
    where it stopped (the start of the line it did not take, for ROOM and PUNT), the number of the
    last line taken, the rows filled, the values deferred.  `labelled`: every line must start with its
    label (else a line starting with ``digits:`` has none: NaN, an empty label token).
    """
    n_deferred = 0
    # rows the arrays hold (numba does not bounds-check: each row array is checked, whatever grew it)
    row_room = min(labels.shape[0], line_numbers.shape[0], indptr.shape[0] - 1, label_ptr.shape[0] - 1)
    while pos < end:
        newline = pos
        while newline < end and buf[newline] != _NEWLINE:
            newline += 1
        stop = newline
        while stop > pos and buf[stop - 1] == _CR:
            stop -= 1
        i = pos
        label_start = label_end = -1
        label = 0.0
        entry = indptr[n_rows]
        previous = -1  # index 0 is a feature like any other (as svm-train reads it)
        deferred_before = n_deferred  # what a line not taken leaves deferred
        if not labelled:  # a first token `digits:` is a feature: the line has no label (an empty token, NaN)
            j = i
            while j < stop and (buf[j] == _SPACE or buf[j] == _TAB):
                j += 1
            k = j
            while k < stop and _digit(buf[k]):
                k += 1
            if j < k < stop and buf[k] == _COLON:
                label_start, label_end, label = j, j, np.nan
        while True:  # the tokens: the label, then index:value
            while i < stop and (buf[i] == _SPACE or buf[i] == _TAB):
                i += 1
            if i == stop:
                break
            token_start = i
            if label_start >= 0:
                index = 0
                while i < stop and _digit(buf[i]):
                    if index <= MAX_INDEX:  # beyond, it is out of range whatever follows
                        index = index * 10 + (buf[i] - 48)
                    i += 1
                # no digits, out of order or out of range: lines.parse_line says which
                if i == token_start or i == stop or buf[i] != _COLON or index <= previous or index > MAX_INDEX:
                    return PUNT, pos, lineno, n_rows, deferred_before
                i += 1
            # the number: sign, significand w (its digits without the point), power of ten q
            number_start = i
            negative = i < stop and buf[i] == 45
            if i < stop and (buf[i] == 45 or buf[i] == 43):
                i += 1
            w = 0
            q = 0
            start = i
            while i < stop and _digit(buf[i]):
                if w <= _MAX_SIGNIFICAND:  # beyond, w is not exact anyway (and never overflows)
                    w = w * 10 + (buf[i] - 48)
                i += 1
            digits = i - start
            if i < stop and buf[i] == 46:  # '.'
                i += 1
                start = i
                while i < stop and _digit(buf[i]):
                    if w <= _MAX_SIGNIFICAND:
                        w = w * 10 + (buf[i] - 48)
                        q -= 1
                    i += 1
                digits += i - start
            if digits == 0:
                return PUNT, pos, lineno, n_rows, deferred_before
            if i < stop and (buf[i] == 101 or buf[i] == 69):  # 'e', 'E'
                i += 1
                negative_exponent = i < stop and buf[i] == 45
                if i < stop and (buf[i] == 45 or buf[i] == 43):
                    i += 1
                exponent = 0
                start = i
                while i < stop and _digit(buf[i]):
                    exponent = exponent * 10 + (buf[i] - 48)
                    if exponent > _MAX_DEFERRED_EXPONENT:  # out of the fast path, and too large to defer
                        return PUNT, pos, lineno, n_rows, deferred_before
                    i += 1
                if i == start:
                    return PUNT, pos, lineno, n_rows, deferred_before
                q += -exponent if negative_exponent else exponent
            if not (i == stop or buf[i] == _SPACE or buf[i] == _TAB):
                return PUNT, pos, lineno, n_rows, deferred_before
            exact = w <= _MAX_SIGNIFICAND and -22 <= q <= 22
            value = 0.0
            if exact:
                value = float(w) * _POW10[q] if q >= 0 else float(w) / _POW10[-q]
                if negative:
                    value = -value
            elif label_start < 0 or i - number_start > _MAX_DEFERRED_CHARS:
                return PUNT, pos, lineno, n_rows, deferred_before
            if label_start < 0:
                label_start, label_end, label = token_start, i, value
                continue
            if entry == indices.shape[0] or n_deferred == deferred.shape[0]:
                return ROOM, pos, lineno, n_rows, deferred_before
            if not exact:
                deferred[n_deferred, 0] = entry
                deferred[n_deferred, 1] = number_start
                deferred[n_deferred, 2] = i
                n_deferred += 1
            indices[entry] = index
            values[entry] = value
            entry += 1
            previous = index
        if label_start < 0:  # blank line
            pos, lineno = min(newline + 1, end), lineno + 1
            continue
        text = label_ptr[n_rows]
        if n_rows >= row_room or text + label_end - label_start > label_text.shape[0]:
            return ROOM, pos, lineno, n_rows, deferred_before
        for k in range(label_start, label_end):
            label_text[text + k - label_start] = buf[k]
        pos, lineno = min(newline + 1, end), lineno + 1
        labels[n_rows] = label
        line_numbers[n_rows] = lineno
        n_rows += 1
        indptr[n_rows] = entry
        label_ptr[n_rows] = text + label_end - label_start
        if n_rows == max_rows:
            return FULL, pos, lineno, n_rows, n_deferred
    return DONE, pos, lineno, n_rows, n_deferred
