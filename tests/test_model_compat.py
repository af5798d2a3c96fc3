"""Model files written by an earlier build load in a later one, or are refused with a version message.

tests/data/models/ holds one model per algorithm written by budgetlearn 0.1.0, and the scores each
gave on a fixed probe set.  Every later build must load them and give the same scores; a change of
layout therefore needs a default for what old files lack (`KernelLearner.layout_defaults`) or a new
format version.  Never regenerate these files to make a failing test pass: they stand for the files
users already have.  For a new algorithm, add its file with

    python -m tests.test_model_compat
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from budgetcli.learning import algorithms
from budgetcli.base import modelfile
from budgetcli.numerics.kernels import Kernel

from budgetcli.model.model import Model
from budgetcli.base.modelfile import ModelFileError

from .helpers import chunk_from_dense, label_map, random_stream

GOLDEN = Path(__file__).resolve().parent / "data" / "models"
SCORES = GOLDEN / "scores.json"
ALGORITHMS = algorithms.load_all()


def probe():
    X, y = random_stream(40, 4, 12)
    return chunk_from_dense(X, y)


def golden_files():
    return sorted(GOLDEN.glob("*.model"))


@pytest.mark.parametrize("path", golden_files(), ids=lambda p: p.stem)
def test_a_model_of_an_earlier_build_loads_and_scores_the_same(path):
    expected = json.loads(SCORES.read_text())[path.name]
    model = Model.load(path)
    assert model.learner.name == expected["algorithm"]
    np.testing.assert_allclose(model.learner.decision_function(probe()), expected["scores"], rtol=1e-12, atol=1e-12)
    # and it can be resumed
    X, y = random_stream(30, 4, 13)
    more = chunk_from_dense(X, y)
    model.learner.learn(more, model.labels.encode(more, "resume"))
    assert model.learner.counter("examples") == expected["examples"] + 30


@pytest.fixture
def perceptron_file(tmp_path):
    header, arrays = modelfile.load(GOLDEN / "perceptron.model")
    return tmp_path, header, arrays


def test_a_missing_array_without_a_default_is_refused_with_a_version_message(perceptron_file):
    tmp_path, header, arrays = perceptron_file
    del arrays["avg_sum"]  # as if a later layout had added it
    path = tmp_path / "old.model"
    modelfile.save(path, header, arrays)
    with pytest.raises(ModelFileError) as info:
        Model.load(path)
    assert str(info.value) == (
        f"{path}: written by budgetlearn 0.1.0 without 'avg_sum', which budgetlearn "
        f"0.1.0 needs for perceptron; retrain the model, or use budgetlearn 0.1.0"
    )


def test_a_missing_header_field_is_refused_with_a_version_message(perceptron_file):
    tmp_path, header, arrays = perceptron_file
    del header["n_features"]
    path = tmp_path / "old.model"
    modelfile.save(path, header, arrays)
    with pytest.raises(ModelFileError, match="without 'n_features'.*retrain the model"):
        Model.load(path)


def test_a_missing_array_with_a_declared_default_is_filled(perceptron_file, monkeypatch):
    tmp_path, header, arrays = perceptron_file
    full = Model.load(GOLDEN / "perceptron.model").learner
    n = len(full.support)
    del arrays["avg_stamp"]
    del arrays["avg_sum"]
    arrays["counters"] = arrays["counters"][:2]  # a later build added counters: they start at 0
    path = tmp_path / "old.model"
    modelfile.save(path, header, arrays)
    monkeypatch.setattr(ALGORITHMS["perceptron"], "layout_defaults", {"avg_sum": 0.0, "avg_stamp": 7.0})
    learner = Model.load(path).learner
    assert learner.slot["avg_sum"][:n].tolist() == [0.0] * n
    assert learner.slot["avg_stamp"][:n].tolist() == [7.0] * n
    np.testing.assert_array_equal(learner.slot["alpha"][:n], full.slot["alpha"][:n])
    assert learner.counters.tolist() == full.counters[:2].tolist() + [0] * (len(full.counters) - 2)


def test_more_counters_than_this_build_knows_is_refused(perceptron_file):
    tmp_path, header, arrays = perceptron_file
    arrays["counters"] = np.concatenate([arrays["counters"], [5]])
    path = tmp_path / "new.model"
    modelfile.save(path, header, arrays)
    with pytest.raises(ModelFileError, match="cannot use this model.*5 counters"):
        Model.load(path)


def write_golden(names) -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    scores = json.loads(SCORES.read_text()) if SCORES.exists() else {}
    X, y = random_stream(120, 4, 11)
    chunk = chunk_from_dense(X, y)
    for name in names:
        path = GOLDEN / f"{name}.model"
        if path.exists():
            continue  # never rewrite a file users could already have
        cls = ALGORITHMS[name]
        params = {"budget": 8} if "budget" in {p.name for p in cls.params} else {}
        learner = cls(Kernel("rbf", 0.5), seed=1, **params)
        labels = label_map(cls)  # its first task's (task.py)
        learner.learn(chunk, labels.encode(chunk, "golden"))
        Model(learner, labels).save(path)
        scores[path.name] = {"algorithm": name, "examples": 120, "scores": learner.decision_function(probe()).tolist()}
        print(f"wrote {path.name}", file=sys.stderr)
    SCORES.write_text(json.dumps(scores, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    write_golden(sorted(ALGORITHMS))


def test_a_projectron_file_holding_k_inverse_loads_and_rebuilds_the_factor_that_replaced_it():
    """Files written before the Projectron kept the inverse Cholesky factor hold K⁻¹ as `kinv`: it is
    accepted, never read, and the factor is made afresh from the support set when the model learns."""
    header, arrays = modelfile.load(GOLDEN / "projectron++.model")
    assert "kinv" in arrays and "kinv_factor" not in arrays
    model = Model.load(GOLDEN / "projectron++.model", resume=True)
    learner = model.learner
    assert learner.stale == {"kinv_factor"}
    X, y = random_stream(30, 4, 13)
    more = chunk_from_dense(X, y)
    learner.learn(more, model.labels.encode(more, "resume"))
    assert not learner.stale
    n = len(learner.support)
    W = learner.slot["kinv_factor"][:n, :n]
    K = learner.gram()
    assert np.abs(W.T @ W @ K - np.eye(n)).max() < 1e-8
    assert "kinv" not in learner.state()[1]  # the file it writes has the new layout
