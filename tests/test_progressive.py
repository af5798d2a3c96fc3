"""The answers a compiled loop gives as it learns (contract.Learner.learn with `answers`, records.give_answer):
for every registered algorithm and variant, each example's answer is what decision_function of the online
learner gave it right before its round, as the row-by-row path computes it (decision_function of one row,
then learn that row: kept here as the reference), and the learner it leaves is the one plain `learn` leaves.

Labels are compared exactly (the sign of a binary score, the arg max of the class scores); the scores to
a relative 1e-12: the loop and decision_function sum the same products in the same order for every
algorithm today, but nothing in the contract asks them to (a loop may keep a running score, or sum
its kernel row in another order than the blocked product of decision_function), and a reordered sum
of |S| ≤ 200 terms differs from another by at most ~|S| ε relative to the sum of the magnitudes (ε =
2.2e-16: ~4e-14), far below 1e-12 and far above what a score taken after the update moves (the tests
below show that such a loop fails)."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.base import bounds, registry
from budgetcli.base.core import Chunk, KernelSpec
from budgetcli.run.session import Session, TrainingStopped, Watch
from budgetcli.model.spec import TrainSpec

from .helpers import assert_same_state, chunk_from_dense
from .test_contract import CASE_IDS, CASES, learner, stream

N, CHUNK = 160, 64  # a multiclass stream's third class is first seen mid-chunk (test_contract.stream)


def row_by_row(model, X, y) -> tuple[np.ndarray, np.ndarray]:
    """The reference: decision_function of the online learner on example t, then learn example t alone; a
    multiclass row holds −inf for a class the learner had not met before it.  With each round's mistake."""
    scores, mistakes = [], []
    for t in range(len(y)):
        one = chunk_from_dense(X[t : t + 1], y[t : t + 1])
        scores.append(model.decision_function(one)[0])
        before = model.counter("mistakes")
        model.learn(one, y[t : t + 1])
        mistakes.append(model.counter("mistakes") > before)
    if not model.multiclass:
        return np.array(scores), np.array(mistakes)
    m = max(len(f) for f in scores)
    return np.array([np.concatenate([f, np.full(m - len(f), -np.inf)]) for f in scores]), np.array(mistakes)


def progressive(model, X, y, size: int) -> np.ndarray:
    """The loop's answers, learning chunks of `size` examples."""
    pieces = [
        model.learn(chunk_from_dense(X[a : a + size], y[a : a + size]), y[a : a + size], answers=True)
        for a in range(0, len(y), size)
    ]
    if not model.multiclass:
        return np.concatenate(pieces)
    m = max(p.shape[1] for p in pieces)
    return np.vstack([np.pad(p, ((0, 0), (0, m - p.shape[1])), constant_values=-np.inf) for p in pieces])


def predicted(scores: np.ndarray, multiclass: bool) -> np.ndarray:
    """The label an answer predicts: the side of 0, or the arg max of the classes met (ties to the first;
    −1 while none was met)."""
    if not multiclass:
        return np.where(scores > 0, 1.0, -1.0)
    return np.where(np.isneginf(scores).all(axis=1), -1, np.argmax(scores, axis=1))


def wrong(scores: np.ndarray, y: np.ndarray, multiclass: bool) -> np.ndarray:
    """The answers the online mistakes count as wrong: y f ≤ 0 (a score of 0 answers no side), or a true
    class that does not score above every other class met (a tie is a mistake; with one class met, none)."""
    if not multiclass:
        return y * scores <= 0.0
    rows = np.arange(len(y))
    others = scores.copy()
    others[rows, y] = -np.inf
    return (others.max(axis=1) > -np.inf) & (scores[rows, y] <= others.max(axis=1))


@pytest.mark.parametrize("name,params,run", CASES, ids=CASE_IDS)
def test_the_loops_answers_are_the_scores_before_each_round(name, params, run):
    cls = registry.get(name)
    X, y = stream(cls, N, seed=4)
    reference = learner(name, params)
    expected, mistakes = row_by_row(reference, X, y)
    model = learner(name, params)
    given = progressive(model, X, y, CHUNK)
    assert given.shape == expected.shape
    np.testing.assert_array_equal(np.isneginf(given), np.isneginf(expected))  # the classes not met yet
    finite = np.isfinite(expected)
    np.testing.assert_allclose(given[finite], expected[finite], rtol=1e-12, atol=1e-300)
    assert_same_state(reference.state()[1], model.state()[1])  # asking for answers changes nothing
    if "classification" not in cls.tasks:
        return
    np.testing.assert_array_equal(predicted(given, cls.multiclass), predicted(expected, cls.multiclass))
    met = np.ones(N, bool)
    if cls.multiclass:  # the first example of a class: the answer cannot name it, the loop scores the class 0
        met = ~np.isneginf(given[np.arange(N), y])
    np.testing.assert_array_equal(wrong(given, y, cls.multiclass)[met], mistakes[met])
    assert mistakes.sum() == model.counter("mistakes")
    assert 0 < mistakes[met].sum() < N  # the stream exercised the rule


def session_answers(session, chunk) -> np.ndarray:
    """The reference at the session: decision_function of the online learner on each row, then learn it."""
    scores = []
    for row in range(len(chunk)):
        one = chunk.take(np.arange(row, row + 1))
        if session.model is None:
            session.begin(one)
        scores.append(session.model.learner.decision_function(one)[0])
        session.learn(one)
    m = max(len(f) for f in scores)
    return np.array([np.concatenate([f, np.full(m - len(f), -np.inf)]) for f in scores])


def test_a_class_past_the_bound_stops_learning_at_its_row_with_the_rows_before_answered(monkeypatch):
    """A chunk whose classes would pass bounds.MAX_COEFFICIENTS (test_resource_bounds): the rows before the
    first class that does not fit are learnt and answered, as one row at a time learnt and answered them;
    then TrainingStopped names that row, with a checkpoint cut inside the chunk."""
    monkeypatch.setattr(bounds, "MAX_COEFFICIENTS", 2000)
    rng = np.random.default_rng(0)
    chunk = Chunk.from_dense(rng.normal(size=(40, 2)), np.arange(40.0))
    spec = TrainSpec("mc-perceptron", KernelSpec(gamma=1.0), checkpoint_every=5)
    reference, session = (
        Session(spec, watch=Watch(on_checkpoint=lambda m: None)),
        Session(spec, watch=Watch(on_checkpoint=lambda m: None)),
    )
    with pytest.raises(TrainingStopped) as stopped:
        session.learn_progressive(chunk)
    assert stopped.value.row == 16 and stopped.value.line == 17  # 64 slots × 32 classes > 2,000
    expected = session_answers(reference, chunk.take(np.arange(16)))
    np.testing.assert_array_equal(stopped.value.answered, expected)
    assert_same_state(reference.model.learner.state()[1], session.model.learner.state()[1])
