"""What a compiled learning loop takes, counts and raises (the learner contract's side that numba sees,
contract.py): the records it takes (`Rows`, `Book` with its `RetireLog`, and the `State` and `Hyper`
types made per field list), the counters it updates, the exceptions it raises when a round's numbers are
not finite, and the helpers every loop opens with.

Records are named tuples, which numba passes as one argument; their types are registered once
(`_jit.record`), and numba's on-disk cache and the compiled-at-install entry points
(aot_signatures.json) name them by module and name.
"""

from __future__ import annotations

import re
from collections import namedtuple
from typing import NamedTuple

import numpy as np

from ..numerics._jit import njit, record

# Training counters, kept in one int64 array so the compiled loops can update them.
EXAMPLES, MISTAKES, MARGIN_UPDATES, PROJECTIONS = range(4)
COUNTER_NAMES = ("examples", "mistakes", "margin_updates", "projections")

# Stand-ins for arrays a variant of a family does not keep (its loop never touches them), shared so
# that the cached loop arguments stay valid (`loop_args`).
NO_VECTOR, NO_MATRIX = np.zeros(0), np.zeros((0, 0))

# The weights of a chunk whose examples all weigh 1 (`Rows.weight`): read by no loop.
NO_WEIGHTS = np.zeros(0)

# Where a loop asked for no answers writes them (`Rows.answers`): nowhere, and it reads nothing more.
NO_ANSWERS = np.zeros(0)


class NonFiniteRound(ArithmeticError):
    """Raised by a compiled loop when a round's numbers are not finite (subclasses say which), before
    it counts the round unless `counted`; contract.Learner.learn turns it into `Overflow`, naming the example."""

    reason = ""
    counted = False


class ExampleOverflow(NonFiniteRound):
    reason = "the example's squared norm ‖x‖² is not a finite number: a feature value is too large (scale the features)"


class ScoreOverflow(NonFiniteRound):
    reason = "the model's score of this example is not a finite number: its numbers overflowed with these settings"


class TooLarge(ValueError):
    """A learner's arrays would pass a bound of bounds.py; str(e) says which."""


class Overflow(ArithmeticError):
    """Learning stopped at row `row` (file line `line`) of a chunk whose numbers are not finite; the
    learner's state is that after the rounds before it, and it should not be saved or used.  `answered`:
    the answers of the rows before it, when the learner was asked for them (contract.Learner.learn)."""

    def __init__(self, row: int, line: int, reason: str):
        super().__init__(reason)
        self.row, self.line, self.reason = row, line, reason
        self.answered = None


@record
class RetireLog(NamedTuple):
    """Evictions of one call of a learner loop: pool range of the evicted vector and the sum of its
    coefficient over the rounds it was in the hypothesis (empty for a learner that never evicts)."""

    start: np.ndarray
    length: np.ndarray
    coef_sum: np.ndarray
    count: np.ndarray  # int64[1]


@record
class Rows(NamedTuple):
    """A chunk as the loops take it: CSR rows, their encoded labels (±1.0, or class indices), their
    weights (`example_weight`: empty when every weight is 1, so that an unweighted run reads nothing)
    and where the loop writes each example's answer, the score the online hypothesis gave it right
    before its update (`give_answer`: progressive validation; empty when none is asked)."""

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    answers: np.ndarray


@record
class Book(NamedTuple):
    """The bookkeeping every loop shares."""

    counters: np.ndarray  # int64[len(COUNTER_NAMES)]
    rng_state: np.ndarray  # the model's splitmix64 stream (rng.py)
    scalars: np.ndarray  # an algorithm's running numbers (`n_scalars`, saved)
    scratch: np.ndarray  # dense copy of x_t for kernel rows; all zeros between uses
    log: RetireLog
    keep_retired: bool


def record_type(kind: str, fields: tuple[str, ...]) -> type:
    """The named tuple type of a loop's `kind` record ("State" or "Hyper") with these fields.

    Kept as a global of this module under a name that spells the fields (`__getattr__` makes it from
    the name alone), because numba's on-disk cache refers to a record type by module and name: a
    process may load cached code for record types it has not made yet."""
    name = kind + "".join(f"_{len(f)}{f}" for f in fields)
    return globals().get(name) or __getattr__(name)


def __getattr__(name: str):
    """The record type a `record_type` name spells (a module __getattr__, PEP 562)."""
    kind, fields, rest = name[:5], [], name[5:]
    while kind in ("State", "Hyper") and (m := re.match(r"_(\d+)", rest)):
        size, rest = int(m.group(1)), rest[m.end() :]
        fields.append(rest[:size])
        rest = rest[size:]
    if kind not in ("State", "Hyper") or rest:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    made = globals()[name] = record(namedtuple(name, fields, module=__name__))
    return made


# ---- compiled pieces every loop uses -------------------------------------------------------------

# The loops take the records whole, but read the arrays they use out of them once, before their
# per-example loop, and hand these to their helpers: an array read out of a record inside the loop
# costs a reference-count update at every example (~10% of RBP's time on a9a, bench/loops.py).


@njit(cache=True, inline="always")
def loop_arrays(rows, book):
    """What every loop reads out of its records first: indptr, indices, values, y, scratch, counters."""
    return rows.indptr, rows.indices, rows.values, rows.y, book.scratch, book.counters


@njit(cache=True, inline="always")
def example_weight(weights, t):
    """The weight of example t of a chunk whose weights are `weights` (Rows.weight): 1 when it has none."""
    return 1.0 if weights.shape[0] == 0 else weights[t]


@njit(cache=True, inline="always")
def give_answer(answers, at, f):
    """Write f, what the online hypothesis' decision_function gives x_t right before the round updates
    it (a binary score, a regression prediction, a novelty score g = f − ρ, a class score), at `at` of
    `answers` (Rows.answers: one per example, or a row of classes per example, multiclass.give_class_answers);
    nothing when no answers are asked (an empty array)."""
    if answers.shape[0] != 0:
        answers[at] = f


@njit(cache=True, inline="always")
def example(indptr, indices, values, t):
    """x_t of a chunk as its sparse (indices, values)."""
    lo, hi = indptr[t], indptr[t + 1]
    return indices[lo:hi], values[lo:hi]


@njit(cache=True, inline="always")
def hinge_round(counters, margin):
    """Count a round of a learner on the hinge loss by its margin y f(x): a mistake at y f ≤ 0, a margin
    update at 0 < y f < 1.  True when the loss is positive, y f < 1 (strict: the subgradient at the kink
    is taken as 0, as LIBOKL's hinge loss takes it)."""
    if margin <= 0.0:
        counters[MISTAKES] += 1
    elif margin < 1.0:
        counters[MARGIN_UPDATES] += 1
    return margin < 1.0
