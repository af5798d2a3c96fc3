"""The learning session (budgetcli/run/session.py): fed one line, a batch or a block at a time, with checkpoints
taken on the way or not, a session makes the model `train` makes, byte for byte; progressive validation
answers the predictions the online mistakes count; an overflow names its row."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.run import pipeline
from budgetcli.base.core import KernelSpec
from budgetcli.io.libsvm import read_all
from budgetcli.model.model import Model
from budgetcli.run.session import Session, TrainingStopped, Watch
from budgetcli.model.spec import TrainSpec

from .helpers import random_stream

N = 400


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    """(path, examples): a binary stream as a data file, and read."""
    path = tmp_path_factory.mktemp("session") / "stream.txt"
    X, y = random_stream(N, 4, 5)
    path.write_text(
        "".join(
            f"{v:g} " + " ".join(f"{j + 1}:{float(a)!r}" for j, a in enumerate(x) if a) + "\n" for x, v in zip(X, y)
        )
    )
    return path, read_all(path)


def pieces(examples, sizes):
    """The stream cut into consecutive chunks of these sizes (cycled)."""
    at, k = 0, 0
    while at < len(examples):
        size = sizes[k % len(sizes)]
        yield examples.take(np.arange(at, min(at + size, len(examples))))
        at, k = at + size, k + 1


@pytest.mark.parametrize("algorithm,params", [("rbp", {"budget": 20}), ("projectron++", {}), ("fogd", {})])
def test_a_session_fed_in_any_pieces_with_checkpoints_writes_train_s_model(tmp_path, stream, algorithm, params):
    path, examples = stream
    spec = TrainSpec(algorithm, KernelSpec("rbf", 0.5), params, seed=2, hypothesis="running-average")
    pipeline.train(spec, path).model.save(tmp_path / "train.model", resume=True)
    checkpoints = []
    session = Session(
        TrainSpec(algorithm, KernelSpec("rbf", 0.5), params, seed=2, hypothesis="running-average", checkpoint_every=37),
        watch=Watch(on_checkpoint=lambda m: checkpoints.append(m.learner.counter("examples"))),
    )
    for chunk in pieces(examples, [1, 5, 64, 1, 3]):  # one line, a few, a batch
        session.learn(chunk, "stream")
    session.checkpoint().save(tmp_path / "session.model", resume=True)
    assert (tmp_path / "session.model").read_bytes() == (tmp_path / "train.model").read_bytes()
    assert checkpoints == list(range(37, N + 1, 37))
    assert (session.learnt, session.examples) == (N, N)


def test_a_resumed_session_goes_on_as_one_run(tmp_path, stream):
    path, examples = stream
    spec = TrainSpec("rbp", KernelSpec("rbf", 0.5), {"budget": 20}, seed=2, hypothesis="running-average")
    pipeline.train(spec, path).model.save(tmp_path / "one.model", resume=True)
    first = Session(spec)
    first.learn(examples.take(np.arange(150)), "day 1")
    first.checkpoint().save(tmp_path / "days.model", resume=True)
    second = Session.resumed(TrainSpec(), Model.load(tmp_path / "days.model", resume=True))
    second.learn(examples.take(np.arange(150, N)), "day 2")
    second.checkpoint().save(tmp_path / "days.model", resume=True)
    assert (tmp_path / "days.model").read_bytes() == (tmp_path / "one.model").read_bytes()
    assert (second.learnt, second.examples) == (N - 150, N)


@pytest.mark.parametrize("algorithm,params", [("rbp", {"budget": 20}), ("pa", {}), ("fogd", {})])
def test_progressive_validation_answers_the_predictions_the_mistakes_count(tmp_path, stream, algorithm, params):
    """Each answer is the online hypothesis' score of the line before it is learnt: y·f ≤ 0 on exactly
    the rounds the learner counts as mistakes; and answering changes nothing in the model."""
    _, examples = stream
    spec = TrainSpec(algorithm, KernelSpec("rbf", 0.5), params, seed=2)
    answering, plain = Session(spec), Session(spec)
    answers = []
    for chunk in pieces(examples, [1, 7, 50]):
        before = answering.mistakes
        f = answering.learn_progressive(chunk, "stream")
        assert f.shape == (len(chunk),)
        assert int(np.sum(chunk.labels * f <= 0)) == answering.mistakes - before  # labels ±1: the learner's codes
        answers.append(f)
        plain.learn(chunk, "stream")
    assert 0 < answering.mistakes < N
    answering.checkpoint().save(tmp_path / "a.model", resume=True)
    plain.checkpoint().save(tmp_path / "b.model", resume=True)
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()


def test_an_overflow_names_the_row_of_the_chunk_given_and_keeps_the_rows_before():
    X, y = random_stream(10, 3, 1)
    X[6, 0] = 1e200  # ‖x‖² overflows
    session = Session(TrainSpec("perceptron", KernelSpec("rbf", 0.5)))
    from budgetcli.io.arrays import csr_chunk

    chunk = csr_chunk(X, y)
    with pytest.raises(TrainingStopped) as stopped:
        session.learn(chunk, "X")
    assert (stopped.value.row, stopped.value.line) == (6, 7)
    assert "squared norm" in stopped.value.why and str(stopped.value).startswith("X:7: training stopped: ")
    assert session.examples == 6
