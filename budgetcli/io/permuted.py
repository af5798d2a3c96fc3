"""A file's examples in a seeded random order, read by seeking: memory 16 bytes per line, not the data.

`train --shuffle` reads the data into memory to permute it.  A `tune` worker runs many permuted
passes and should hold one model and one chunk, so it reads them this way instead:

1. one streaming pass with the ordinary reader checks every line (errors name FILE:LINE exactly
   as a plain `train` reports them) and notes the byte offset of each example's line;
2. the examples are permuted with the same generator as `pipeline.epochs_of` uses for pass 0,
   `default_rng((seed, 0)).permutation(n)`;
3. `PermutedLines` yields the example lines in that order (seek + readline each), and the reader
   parses them again as a stream of example lines.

The chunks of the second reading hold the same examples, in the same order and the same blocks of
`block_lines`, as `epochs_of(..., shuffle=True, seed=seed)` yields for pass 0, so training on them
gives the same model bit for bit.  Two things differ and are put right by the caller (`tune`):
the line numbers of the second reading are positions in the permuted stream (all lines were checked
in the first pass, so only the label map can still fail, and `label_problem` checks it up front),
and a label spelled two ways ('+1', '1') gets its first spelling in permuted order rather than in
the file (`model_spellings` gives what the in-memory shuffle leaves in the model, in its order).
Memory: 8 bytes per line (offsets) and 16 per example (line number, label) during the first pass,
8 per example (offsets) during training.
"""

from __future__ import annotations

import os
from array import array

import numpy as np

from ..learning.labels import kept_spelling, third_label_message
from .inputs import MAX_LINE_BYTES, bounded_lines
from .libsvm import DataError, LibsvmReader

_BOM = b"\xef\xbb\xbf"


class _RecordOffsets:
    """The lines of a binary file, noting the byte offset where each starts."""

    def __init__(self, f, name: str):
        self.f, self.name = f, name
        self.offsets = array("q")

    def __iter__(self):
        pos = 0
        for line, taken in bounded_lines(self.f):
            self.offsets.append(pos)
            pos += taken
            yield line


class PermutedExamples:
    """Scan `path` once; then `lines()` yields its example lines in the permuted order."""

    def __init__(self, path, seed: int, block_lines: int = 4096):
        self.path = path
        self.name = os.fsdecode(path)
        self.block_lines = block_lines
        line_numbers, labels = [], []
        self.spellings: dict = {}  # label value -> first spelling in the file
        self.label_lines: dict = {}  # label value -> first line holding it
        with open(path, "rb") as f:
            recorder = _RecordOffsets(f, self.name)
            with LibsvmReader(recorder, block_lines=block_lines) as reader:
                for chunk in reader:
                    line_numbers.append(chunk.line_numbers)
                    labels.append(chunk.labels)
                    for v, s in chunk.label_spellings.items():
                        self.spellings.setdefault(v, s)
                    for v, line in zip(*np.unique(chunk.labels, return_index=True)):
                        self.label_lines.setdefault(float(v), int(chunk.line_numbers[line]))
        numbers = np.concatenate(line_numbers) if line_numbers else np.zeros(0, np.int64)
        if numbers.size == 0:
            raise DataError(self.name, 0, None, "no examples to train on")
        offsets = np.frombuffer(recorder.offsets, dtype=np.int64)
        order = np.random.default_rng((seed, 0)).permutation(numbers.size)
        self.offsets = offsets[numbers - 1][order]  # byte offset of each example, in permuted order
        # the block in which each label first comes in the permuted stream
        permuted_labels = np.concatenate(labels)[order]
        self.first_block = {v: int(np.argmax(permuted_labels == v)) // block_lines for v in self.spellings}

    def label_problem(self) -> DataError | None:
        """A third label value (for a binary learner), named by its first line in the file."""
        if len(self.label_lines) <= 2:
            return None
        third = sorted(self.label_lines.items(), key=lambda kv: kv[1])[2]
        known = ", ".join(self.spellings[v] for v, _ in sorted(self.label_lines.items(), key=lambda kv: kv[1])[:2])
        return DataError(self.name, third[1], self.spellings[third[0]], third_label_message(known))

    def model_spellings(self) -> dict:
        """The label spellings as training on the in-memory shuffle leaves them in the model: each
        label's first spelling in the file, in the order the labels are met (block by block of the
        permuted stream; within a block, in file order), each as a model file keeps it (kept_spelling)."""
        order = sorted(self.spellings, key=lambda v: (self.first_block[v], self.label_lines[v]))
        return {v: kept_spelling(v, self.spellings[v]) for v in order}

    def lines(self) -> "PermutedLines":
        return PermutedLines(self.path, self.name, self.offsets)


class PermutedLines:
    """Iterable of the example lines at `offsets`, in that order, with a `name` for the reader."""

    def __init__(self, path, name: str, offsets: np.ndarray):
        self.path, self.name, self.offsets = path, name, offsets

    def __iter__(self):
        with open(self.path, "rb") as f:
            for offset in self.offsets.tolist():
                f.seek(offset)
                line = f.readline(MAX_LINE_BYTES + 1)  # every example line was read whole before: never cut
                if offset == 0 and line.startswith(_BOM):  # the reader only strips it on its own line 1
                    line = line[len(_BOM) :]
                yield line
