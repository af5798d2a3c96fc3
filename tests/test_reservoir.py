"""report.Reservoir, the sample of a run's examples on which the written model is checked: Vitter's
algorithm R written plainly, one example at a time, keeps the same examples in the same slots, whatever
the blocks the stream comes in, however often its pieces are joined."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.base.core import Chunk
from budgetcli.run.report import Reservoir

SEED = 20240601  # the reservoir's own


def stream(n: int, weighted: bool, seed: int = 0) -> list[tuple]:
    """n examples (indices, values, label, line, weight, spelling): labels ±1, the +1 spelt '+1' in the
    first half and '1' in the second, so that each block's spelling shows."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        indices = np.sort(rng.choice(50, size=rng.integers(0, 6), replace=False)).astype(np.int32) + 1
        label = 1.0 if rng.random() < 0.5 else -1.0
        spelling = ("+1" if i < n // 2 else "1") if label > 0 else "-1"
        weight = float(rng.integers(1, 4)) if weighted else 1.0
        out.append((indices, rng.normal(size=len(indices)), label, i + 1, weight, spelling))
    return out


def chunk_of(examples: list[tuple], weighted: bool) -> Chunk:
    indptr = np.cumsum([0] + [len(e[0]) for e in examples])
    spellings = {}
    for e in examples:
        spellings.setdefault(e[2], e[5])  # a block's first spelling of a label, as the reader records it
    return Chunk(
        indptr.astype(np.int64),
        np.concatenate([e[0] for e in examples]).astype(np.int32),
        np.concatenate([e[1] for e in examples]),
        np.array([e[2] for e in examples]),
        np.array([e[3] for e in examples], np.int64),
        spellings,
        np.array([e[4] for e in examples]) if weighted else None,
    )


def algorithm_r(blocks: list[list[tuple]], size: int) -> list[tuple]:
    """The kept examples, each with its label's spelling in its block."""
    rng, kept, i = np.random.default_rng(SEED), [], 0
    for block in blocks:
        spellings = chunk_of(block, False).label_spellings
        for e in block:
            e = (*e[:5], spellings[e[2]])
            if i < size:
                kept.append(e)
            else:
                j = int(np.floor(rng.random() * (i + 1)))
                if j < size:
                    kept[j] = e
            i += 1
    return kept


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(
    "sizes", [[4096], [1, 2, 3, 500, 7, 1000, 2000, 487], [37] * 108], ids=["one", "mixed", "small"]
)
def test_the_reservoir_keeps_what_algorithm_r_keeps(sizes, weighted):
    examples, size = stream(sum(sizes), weighted), 100  # 40× the sample: its pieces are joined several times
    blocks = [examples[sum(sizes[:k]) : sum(sizes[: k + 1])] for k in range(len(sizes))]
    reservoir = Reservoir(size)
    for block in blocks:
        reservoir.add(chunk_of(block, weighted))
    kept, expected = reservoir.chunk(), algorithm_r(blocks, size)
    assert len(kept) == len(expected) == size
    for i, e in enumerate(expected):
        indices, values = kept.row(i)
        assert indices.tolist() == e[0].tolist() and values.tolist() == e[1].tolist()
    assert kept.labels.tolist() == [e[2] for e in expected]
    assert kept.line_numbers.tolist() == [e[3] for e in expected]
    assert (kept.indices.dtype, kept.values.dtype, kept.labels.dtype) == (np.int32, np.float64, np.float64)
    if weighted:
        assert kept.weights.dtype == np.float64 and kept.weights.tolist() == [e[4] for e in expected]
    else:
        assert kept.weights is None
    assert kept.label_spellings == {e[2]: e[5] for e in expected}  # a label's spelling of its last slot


def test_a_stream_shorter_than_the_sample_is_kept_whole_and_draws_nothing():
    examples = stream(30, False)
    reservoir = Reservoir(100)
    reservoir.add(chunk_of(examples[:10], False))
    reservoir.add(chunk_of(examples[10:], False))
    assert reservoir.random is None  # numpy.random not even imported for it (a short run's start-up)
    assert reservoir.chunk().line_numbers.tolist() == list(range(1, 31))
    assert Reservoir(100).chunk() is None
