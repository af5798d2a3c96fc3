"""Feature scaling as LIBSVM's svm-scale does it, on the ranges of ranges.py: the scaling a model carries
(`train --scale`, `--scale-ranges`), where a run's ranges come from, and `budgetlearn scale`.

**The scaling a model carries** (`Scaling`): the same ranges, applied to every example the model learns
from or scores (train, predict, eval, calibrate, the Python API, the scikit-learn and River classes; a
resumed run keeps them).  With the rbf kernel the shift of svm-scale's map is left out: rbf depends on
x − y only, and (a_j x_j + c_j) − (a_j y_j + c_j) = a_j (x_j − y_j), so each value is multiplied by
a_j = (upper − lower)/(max_j − min_j) and a sparse example stays sparse, with the kernel values of
svm-scale'd data.  The linear and poly kernels see the whole map, so an example holds every kept
feature whose 0 maps to a non-zero (as svm-scale's output does; `budgetlearn scale -l 0 -s FILE` keeps
non-negative sparse features sparse).
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass

import numpy as np

from ..base.core import Chunk, DataError
from .ranges import Ranges, RangeTally, tally, write_ranges


FROM = ("data", "first block", "ranges file")  # where a model's ranges came from (its header says)
ARRAYS = ("scale_indices", "scale_min", "scale_max")  # the model file's arrays of a scaling


@dataclass(eq=False)
class Scaling:
    """The ranges a model applies to every example before its kernel sees it (module docstring);
    `shift`: the whole map (linear, poly) or its slopes alone (rbf)."""

    ranges: Ranges
    shift: bool
    source: str = "data"  # FROM

    @classmethod
    def for_kernel(cls, ranges: Ranges, kernel_kind: str, source: str) -> "Scaling":
        return cls(ranges, shift=kernel_kind != "rbf", source=source)

    def apply(self, chunk: Chunk) -> Chunk:
        return self.ranges.apply(chunk, self.shift)

    def scorer(self, learner) -> "ScaledScorer":
        return ScaledScorer(learner, self)

    def describe(self) -> str:
        r = self.ranges
        where = {"data": "a first pass over the data", "first block": "the data's first block"}.get(
            self.source, "a range file"
        )
        return f"scaled to [{r.lower:g}, {r.upper:g}] by the ranges of {len(r):,} features, from {where}"

    # the model file: a header field and three arrays
    def header(self) -> dict:
        return {"lower": self.ranges.lower, "upper": self.ranges.upper, "from": self.source}

    def arrays(self) -> dict:
        r = self.ranges
        return dict(zip(ARRAYS, (r.indices, r.mins, r.maxs)))

    @classmethod
    def from_file(cls, field, arrays: dict, kernel_kind: str) -> "Scaling":
        """From a model file's header field and arrays: ValueError naming what is wrong (statecheck)."""
        if not isinstance(field, dict) or set(field) != {"lower", "upper", "from"} or field["from"] not in FROM:
            raise ValueError(f"scaling = {field!r} is not a scaling's lower, upper and source")
        indices, mins, maxs = (arrays.get(name) for name in ARRAYS)
        if indices is None or mins is None or maxs is None:
            raise ValueError(f"scaling without its arrays {', '.join(ARRAYS)}")
        return cls.for_kernel(Ranges(field["lower"], field["upper"], indices, mins, maxs), kernel_kind, field["from"])


def saved_arrays(header: dict, members: dict) -> dict:
    """name -> (shape, dtype) of a scaling's arrays in a model file whose header has one (statecheck's
    check before any array is read; their sizes are bounded as every array's, by the file's size)."""
    from ..learning import statecheck

    if "scaling" not in header:
        return {}
    k = statecheck.vector_length(members, ARRAYS[0])
    return {ARRAYS[0]: ((k,), statecheck.I64), ARRAYS[1]: ((k,), statecheck.F64), ARRAYS[2]: ((k,), statecheck.F64)}


class ScaledScorer:
    """A learner's decision_function of scaled examples (what Model.scorer gives a scaled model)."""

    def __init__(self, learner, scaling: Scaling):
        self.learner, self.scaling = learner, scaling

    def decision_function(self, chunk: Chunk) -> np.ndarray:
        return self.learner.decision_function(self.scaling.apply(chunk))


# ---- where a training run's ranges come from ------------------------------------------------------


def two_passes(data) -> bool:
    """`data` can be read twice: a path to a regular file (compressed or not), or arrays; not standard
    input, a pipe, or an iterable of lines."""
    return isinstance(data, Chunk) or (isinstance(data, (str, os.PathLike)) and data != "-" and os.path.isfile(data))


def of_data(
    data, kernel_kind: str, skip_bad_lines: bool = False, block_lines: int = 4096, labels: bool = True
) -> Scaling:
    """The scaling `train --scale` gives a model trained on `data` (two_passes): the ranges of all of it,
    read once more before training (arrays: all rows).  `labels=False`: a line may leave its label out (a
    task that reads none, task.Novelty), as the training pass reads it."""
    from ..io.libsvm import LibsvmReader

    if isinstance(data, Chunk):
        found = tally([data])
    else:
        with LibsvmReader(data, block_lines=block_lines, skip_bad_lines=skip_bad_lines, labels=labels) as reader:
            found = tally(reader)
    return Scaling.for_kernel(found.ranges(), kernel_kind, "data")


def of_first_block(chunk: Chunk, kernel_kind: str) -> Scaling:
    """The scaling `train --scale` gives a model trained on a stream, which cannot be read twice: the
    ranges of its first block; a feature first seen later has no range and is dropped (svm-scale -r)."""
    return Scaling.for_kernel(tally([chunk]).ranges(), kernel_kind, "first block")


# ---- budgetlearn scale ----------------------------------------------------------------------------

SCALED_ENTRIES = 1 << 22  # at most this many scaled values in one block written (a shifted map fills rows)


def text(chunk: Chunk, ranges: Ranges) -> str:
    """svm-scale's output of a scaled chunk: the label as %.17g (scaled by -y), each non-zero value as
    `index:%g`, every token followed by a space; a line without a label (label NaN) has none."""
    tokens = [f"{i}:{v:g} " for i, v in zip(chunk.indices.tolist(), chunk.values.tolist())]
    labels = ["" if math.isnan(v) else "%.17g " % v for v in ranges.target(chunk.labels).tolist()]
    ptr = chunk.indptr.tolist()
    return "".join(labels[r] + "".join(tokens[ptr[r] : ptr[r + 1]]) + "\n" for r in range(len(chunk)))


@dataclass
class ScaleReport:
    """What `scale` says beside its output: svm-scale's warnings, as counts."""

    examples: int = 0
    nonzeros_before: int = 0
    nonzeros_after: int = 0
    unranged: list | None = None  # -r: features of the data with min < max that the file has no range for
    skipped: int = 0
    first_skipped: str | None = None

    def warnings(self, data: str, restore: str | None) -> list[str]:
        out = []
        if self.unranged:
            shown = ", ".join(map(str, self.unranged[:5])) + (", ..." if len(self.unranged) > 5 else "")
            out.append(
                f"{len(self.unranged):,} features of {data} have no range in {restore} ({shown}): they are "
                "scaled to 0 (left out), as svm-scale -r does"
            )
        if self.nonzeros_after > self.nonzeros_before:
            out.append(
                f"the scaled data hold {self.nonzeros_after:,} non-zeros, the original {self.nonzeros_before:,}: "
                "for non-negative sparse features, -l 0 keeps the zeros zero (svm-scale's advice)"
            )
        return out


def scale(data, out, ranges: Ranges | None, lower: float, upper: float, y, save=None, skip_bad_lines=False):
    """`budgetlearn scale`: write `data` scaled, as svm-scale writes it, to the text file `out`; the
    ranges are `ranges` (-r) or the data's own, found in a first pass (a file is read twice; standard
    input is held in memory, as its parsed examples), and written to the text file `save` (-s) before
    the output.  Returns a ScaleReport; DataError for a bad line (unless skip_bad_lines)."""
    from ..io.libsvm import LibsvmReader

    restored, held, first = ranges is not None, None, None
    if not restored:
        with LibsvmReader(data, skip_bad_lines=skip_bad_lines, labels=False) as first:
            if two_passes(data):
                found = tally(first)
            else:
                held = list(first)
                found = tally(held)
        try:
            ranges = found.ranges(lower, upper, y)
        except ValueError as exc:
            raise DataError(first.source_name, 0, None, str(exc)) from None
    if save is not None:
        write_ranges(save, ranges)
    moved = np.count_nonzero(ranges.image(np.arange(len(ranges)), np.zeros(len(ranges))))
    block = max(1, min(4096, SCALED_ENTRIES // max(moved, 1)))  # rows of up to `moved` + their own values
    report, own = ScaleReport(), RangeTally() if restored else None  # -r: the data's own ranges, for the warning
    with contextlib.ExitStack() as stack:
        reader = None
        if held is None:
            reader = stack.enter_context(LibsvmReader(data, block, skip_bad_lines=skip_bad_lines, labels=False))
        for chunk in reader if reader is not None else held:
            if own is not None:
                own.add(chunk)
            report.examples += len(chunk)
            report.nonzeros_before += len(chunk.indices)
            for a in range(0, len(chunk), block):
                scaled = ranges.apply(chunk.take(np.arange(a, min(a + block, len(chunk)))), shift=True)
                report.nonzeros_after += len(scaled.indices)
                out.write(text(scaled, ranges))
    counted = reader if reader is not None else first
    report.skipped, report.first_skipped = counted.n_skipped, str(counted.skipped[0]) if counted.skipped else None
    if own is not None and own.rows:
        varies = own.indices[own.mins < own.maxs]
        report.unranged = varies[~np.isin(varies, ranges.indices)].tolist()
    return report


# ---- the warning about features on different scales ---------------------------------------------------

SPREAD = 100  # the widest feature's range over the median one's beyond which the data want scaling


def spread_warning(chunk: Chunk, hint: str) -> list[str]:
    """A warning when the features' ranges on `chunk` (the first block, as svm-scale counts them) differ by
    more than SPREAD times, widest against median: any kernel then sees little but the widest features
    (breast cancer: 8,712×, wine: 369×; a9a, mushrooms, banana, digits, letter, heart and LIBSVM's scaled
    regression sets: at most 1.1×)."""
    found = tally([chunk])
    spans = found.maxs - found.mins
    varying = np.flatnonzero(spans > 0)
    if len(varying) < 2:
        return []
    ordered = np.sort(spans[varying])  # np.median's value; np.median itself imports numpy.ma (~10 ms a process)
    half = len(ordered) // 2
    median = float(ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2.0)
    widest = int(varying[np.argmax(spans[varying])])
    if spans[widest] <= SPREAD * median:
        return []
    return [
        f"the features are on different scales: on the first block feature {found.indices[widest]} spans "
        f"{spans[widest]:.4g}, {spans[widest] / median:,.0f}× the median feature's {median:.4g}, so the kernel sees "
        f"little but the widest features; scale them{hint}"
    ]
