"""The ranges of feature scaling as LIBSVM's svm-scale finds and files them: the map they define, their
tally over data, and the range file.

**The map** (svm-scale.c).  Each feature j with a range [min_j, max_j] over the data, where an example
that does not hold j counts as a 0 (a sparse file's zero), is mapped linearly onto [lower, upper]
(default [−1, 1]): min_j → lower, max_j → upper, v → lower + (upper − lower)(v − min_j)/(max_j − min_j).
A feature with min_j = max_j (constant, or never seen) is dropped, and so, when ranges come from a file, is
a feature the file does not list ("scaled to 0", as svm-scale -r says).  A value outside its range is
mapped by the same line (beyond [lower, upper]); nothing is clipped.  A scaled value of exactly 0 is not
written: zeros stay sparse.  Targets are mapped the same way with -y.

**The range file** is svm-scale's own (`-s` writes it, `-r` reads it, in either program)::

    y                     (only with -y)
    y_lower y_upper
    y_min y_max
    x
    lower upper
    index min max         (one line per feature with min < max, increasing index)

with every number written as C's %.17g.  One difference: index 0 (a 0-based file's first feature) is a
feature here like any other (its zeros count, its range is saved), where svm-scale assumes indices from 1,
neither counts its zeros nor saves its range; svm-scale reads such a file as it reads any other.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from ..base.core import MAX_INDEX, Chunk, DataError, unique

LOWER, UPPER = -1.0, 1.0  # svm-scale's defaults
MAX_RANGE_LINE = 1024  # bytes: a range line holds an index and two numbers


@dataclass(eq=False)
class Ranges:
    """Per-feature ranges and the interval they map onto, as svm-scale saves them: `indices` (int64,
    increasing) are the features with min < max; `y` is (y_lower, y_upper, y_min, y_max) when targets
    are scaled too."""

    lower: float
    upper: float
    indices: np.ndarray
    mins: np.ndarray
    maxs: np.ndarray
    y: tuple | None = None

    def __post_init__(self):
        self.indices = np.asarray(self.indices, np.int64)
        self.mins = np.asarray(self.mins, np.float64)
        self.maxs = np.asarray(self.maxs, np.float64)
        check(self.lower, self.upper, self.indices, self.mins, self.maxs)
        if self.y is not None:
            y = tuple(float(v) for v in self.y)
            if len(y) != 4 or not all(math.isfinite(v) for v in y) or not y[1] > y[0] or not y[3] >= y[2]:
                raise ValueError(f"target scaling {self.y!r} is not (y_lower < y_upper, y_min ≤ y_max), finite")
            self.y = y

    def __len__(self) -> int:
        return len(self.indices)

    @property
    def feature_count(self) -> int:
        """The features the scaling keeps, counted as LIBSVM counts a file's (Chunk.feature_count): the
        largest kept index, one more when index 0 is kept."""
        if not len(self.indices):
            return 0
        return int(self.indices[-1]) + int(self.indices[0] == 0)

    def factors(self) -> np.ndarray:
        """a_j = (upper − lower)/(max_j − min_j): the slope of each kept feature's map."""
        return (self.upper - self.lower) / (self.maxs - self.mins)

    def image(self, positions: np.ndarray, values: np.ndarray) -> np.ndarray:
        """svm-scale's output() of each value of the kept feature at `positions`, operation for operation:
        min → lower and max → upper exactly, else lower + (upper − lower)(v − min)/(max − min)."""
        lo, hi = self.mins[positions], self.maxs[positions]
        with np.errstate(over="ignore", invalid="ignore"):
            mapped = self.lower + (self.upper - self.lower) * (values - lo) / (hi - lo)
        return np.where(values == lo, self.lower, np.where(values == hi, self.upper, mapped))

    def target(self, labels: np.ndarray) -> np.ndarray:
        """svm-scale's output_target(): the labels mapped by the y ranges (as they are without -y)."""
        if self.y is None:
            return labels
        y_lower, y_upper, y_min, y_max = self.y
        with np.errstate(divide="ignore", invalid="ignore"):
            mapped = y_lower + (y_upper - y_lower) * (labels - y_min) / (y_max - y_min)
        return np.where(labels == y_min, y_lower, np.where(labels == y_max, y_upper, mapped))

    def apply(self, chunk: Chunk, shift: bool = True) -> Chunk:
        """The chunk scaled: svm-scale's whole map (`shift`), or its slopes alone (module docstring). Features
        without a range are dropped, exact zeros are not stored; labels, lines and spellings stay."""
        indices = chunk.indices.astype(np.int64)
        pos = np.minimum(np.searchsorted(self.indices, indices), max(len(self.indices) - 1, 0))
        kept = (self.indices[pos] == indices) if len(self.indices) else np.zeros(len(indices), bool)
        rows = np.repeat(np.arange(len(chunk)), np.diff(chunk.indptr))[kept]
        pos, values = pos[kept], chunk.values[kept]
        if shift:
            values = self.image(pos, values)
            # the kept features an example does not hold are its zeros, mapped too where 0 maps to non-zero
            zero = self.image(np.arange(len(self.indices)), np.zeros(len(self.indices)))
            moved = np.flatnonzero(zero != 0)
            if len(moved) and len(chunk):
                held = np.zeros((len(chunk), len(moved)), bool)
                where = np.searchsorted(moved, pos)
                hit = where < len(moved)
                hit[hit] = moved[where[hit]] == pos[hit]
                held[rows[hit], where[hit]] = True
                absent_rows, absent_cols = np.nonzero(~held)
                rows = np.concatenate([rows, absent_rows])
                pos = np.concatenate([pos, moved[absent_cols]])
                values = np.concatenate([values, zero[moved][absent_cols]])
                order = np.lexsort((pos, rows))
                rows, pos, values = rows[order], pos[order], values[order]
        else:
            values = values * self.factors()[pos]
        nonzero = values != 0
        rows, pos, values = rows[nonzero], pos[nonzero], values[nonzero]
        indptr = np.zeros(len(chunk) + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=len(chunk)), out=indptr[1:])
        return Chunk(
            indptr,
            self.indices[pos].astype(np.int32),
            values,
            chunk.labels,
            chunk.line_numbers,
            chunk.label_spellings,
            chunk.weights,
        )


def check(lower, upper, indices, mins, maxs) -> None:
    """ValueError naming what is wrong with a scaling's numbers (a range file's, a model file's)."""
    if not (isinstance(lower, (int, float)) and isinstance(upper, (int, float))):
        raise ValueError(f"scaling lower = {lower!r}, upper = {upper!r} are not numbers")
    if not (math.isfinite(lower) and math.isfinite(upper) and upper > lower):
        raise ValueError(f"scaling interval [{lower:g}, {upper:g}] is not finite with upper > lower")
    if not (indices.ndim == mins.ndim == maxs.ndim == 1 and len(indices) == len(mins) == len(maxs)):
        raise ValueError("scaling ranges are not one index, min and max per feature")
    if len(indices) and (indices[0] < 0 or indices[-1] > MAX_INDEX or (np.diff(indices) <= 0).any()):
        raise ValueError(f"scaling indices are not increasing feature indices in 0..{MAX_INDEX}")
    finite = np.isfinite(mins) & np.isfinite(maxs)
    if not finite.all():
        raise ValueError(f"the range of feature {indices[np.flatnonzero(~finite)[0]]} is not finite")
    with np.errstate(over="ignore"):
        slope = (upper - lower) / (maxs - mins)
    bad = ~(mins < maxs) | ~np.isfinite(slope) | (slope == 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"the range [{mins[i]:g}, {maxs[i]:g}] of feature {indices[i]} is not one with min < max")


class RangeTally:
    """The ranges of a stream of chunks, as svm-scale's pass 2 finds them (an example that does not hold
    a feature counts as a 0 for it), in memory O(features); and the labels' range for -y."""

    def __init__(self):
        self.indices = np.zeros(0, np.int64)
        self.mins = np.zeros(0)
        self.maxs = np.zeros(0)
        self.rows = 0
        self.y_min, self.y_max = math.inf, -math.inf

    def add(self, chunk: Chunk) -> None:
        n = len(chunk)
        if not n:
            return
        labels = chunk.labels[~np.isnan(chunk.labels)]
        if len(labels):
            self.y_min, self.y_max = min(self.y_min, float(labels.min())), max(self.y_max, float(labels.max()))
        index = chunk.indices.astype(np.int64)
        order = np.argsort(index, kind="stable")
        index, values = index[order], chunk.values[order]
        starts = np.flatnonzero(np.concatenate(([True], index[1:] != index[:-1]))) if len(index) else np.zeros(0, int)
        here = index[starts]
        low = np.minimum.reduceat(values, starts) if len(index) else np.zeros(0)
        high = np.maximum.reduceat(values, starts) if len(index) else np.zeros(0)
        partly = np.diff(np.append(starts, len(index))) < n  # a feature is once per example at most
        low[partly], high[partly] = np.minimum(low[partly], 0), np.maximum(high[partly], 0)
        merged = unique(np.concatenate([self.indices, here]))  # np.union1d's, without np.unique's import of numpy.ma
        before, now = np.searchsorted(merged, self.indices), np.searchsorted(merged, here)
        # a feature's range so far and in this chunk; where it was absent from all rows, their 0
        old_min, old_max = np.full(len(merged), math.inf), np.full(len(merged), -math.inf)
        if self.rows:
            old_min[:] = old_max[:] = 0.0
        old_min[before], old_max[before] = self.mins, self.maxs
        new_min, new_max = np.zeros(len(merged)), np.zeros(len(merged))
        new_min[now], new_max[now] = low, high
        self.indices, self.mins, self.maxs = merged, np.minimum(old_min, new_min), np.maximum(old_max, new_max)
        self.rows += n

    def ranges(self, lower: float = LOWER, upper: float = UPPER, y: tuple | None = None) -> Ranges:
        """The ranges found (features with min < max), mapped onto [lower, upper]; with `y` = (y_lower,
        y_upper), the labels' range too."""
        varies = self.mins < self.maxs
        target = None
        if y is not None:
            if self.y_min > self.y_max:
                raise ValueError("-y: the data hold no label to scale")
            target = (y[0], y[1], self.y_min, self.y_max)
        return Ranges(lower, upper, self.indices[varies], self.mins[varies], self.maxs[varies], target)


def tally(chunks) -> RangeTally:
    out = RangeTally()
    for chunk in chunks:
        out.add(chunk)
    return out


# ---- the range file ------------------------------------------------------------------------------


def write_ranges(f, ranges: Ranges) -> None:
    """svm-scale's range file (module docstring) to the text file `f`."""
    if ranges.y is not None:
        f.write("y\n%.17g %.17g\n%.17g %.17g\n" % ranges.y)
    f.write("x\n%.17g %.17g\n" % (ranges.lower, ranges.upper))
    f.writelines(
        "%d %.17g %.17g\n" % row for row in zip(ranges.indices.tolist(), ranges.mins.tolist(), ranges.maxs.tolist())
    )


def read_ranges(path) -> Ranges:
    """A range file (svm-scale's, or `budgetlearn scale -s`'s); DataError naming the file and line for
    anything else.  Lines of a feature with min = max are accepted and dropped (svm-scale skips such a
    feature); every line is at most MAX_RANGE_LINE bytes, so a file without newlines costs no memory."""
    name = os.fsdecode(path)
    try:
        f = open(path, "rb")
    except OSError as exc:
        raise DataError(name, 0, None, f"cannot open: {exc.strerror or exc}") from None
    with f:
        lines = _range_lines(f, name)
        y = None
        number, first = next(lines, (1, None))
        if first == ["y"]:
            y = _numbers(lines, 2, name) + _numbers(lines, 2, name)
            number, first = next(lines, (number + 3, None))
        if first != ["x"]:
            raise DataError(name, number, None, "not a range file: expected 'x' (or 'y') as svm-scale -s writes it")
        lower, upper = _numbers(lines, 2, name)
        rows = []
        for number, tokens in lines:
            rows.append(_row(tokens, name, number, rows[-1][0] if rows else -1))
    if not (upper > lower):
        raise DataError(name, 0, None, f"the interval [{lower:g}, {upper:g}] has upper ≤ lower")
    if y is not None and not (y[1] > y[0] and y[3] >= y[2]):
        raise DataError(name, 0, None, "its y section is not y_lower < y_upper, y_min ≤ y_max")
    rows = [r for r in rows if r[1] != r[2]]
    table = np.array(rows, np.float64).reshape(-1, 3)
    try:
        return Ranges(lower, upper, table[:, 0].astype(np.int64), table[:, 1], table[:, 2], y)
    except ValueError as exc:
        raise DataError(name, 0, None, str(exc)) from None


def _range_lines(f, name):
    """(line number, tokens) of each non-blank line."""
    number = 0
    while True:
        raw = f.readline(MAX_RANGE_LINE + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_RANGE_LINE and not raw.endswith(b"\n"):
            raise DataError(name, number, None, f"a line longer than {MAX_RANGE_LINE} bytes: not a range file")
        try:
            tokens = raw.decode("ascii").split()
        except UnicodeDecodeError:
            raise DataError(name, number, None, "not a range file (not ASCII text)") from None
        if tokens:
            yield number, tokens


def _number(token: str, name: str, number: int) -> float:
    try:
        value = float(token) if "_" not in token else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise DataError(name, number, token, "not a finite number")
    return value


def _numbers(lines, count: int, name: str) -> tuple:
    number, tokens = next(lines, (0, None))
    if tokens is None or len(tokens) != count:
        raise DataError(name, number, None, f"expected {count} numbers" + ("" if tokens else " (the file ends)"))
    return tuple(_number(t, name, number) for t in tokens)


def _row(tokens: list, name: str, number: int, previous: float) -> tuple:
    if len(tokens) != 3:
        raise DataError(name, number, None, "expected 'index min max'")
    if not tokens[0].isdigit() or len(tokens[0]) > 10 or int(tokens[0]) > MAX_INDEX:
        raise DataError(name, number, tokens[0], f"the feature index is not a whole number in 0..{MAX_INDEX}")
    index = int(tokens[0])
    if index <= previous:
        raise DataError(name, number, tokens[0], f"feature indices must increase ({index} after {int(previous)})")
    low, high = _number(tokens[1], name, number), _number(tokens[2], name, number)
    if low > high:
        raise DataError(name, number, None, f"min {low:g} > max {high:g}")
    return (index, low, high)


# ---- the scaling a model carries --------------------------------------------------------------------
