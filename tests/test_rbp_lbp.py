"""rbp and lbp against the reference of tests/reference.py, and their identities."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.base import registry
from budgetcli.io.libsvm import Chunk
from budgetcli.numerics.kernels import Kernel

from . import reference
from .helpers import chunk_from_dense, random_stream
from .test_algorithms import assert_matches_reference, ref_kernel, run_stepwise

POLICY = {"rbp": "random", "lbp": "oldest"}


@pytest.mark.parametrize("algorithm", ["rbp", "lbp"])
@pytest.mark.parametrize("budget,seed", [(1, 0), (7, 1), (25, 2)])
def test_matches_reference(algorithm, budget, seed):
    X, y = random_stream(250, 4, seed)
    k = Kernel("rbf", 0.5)
    learner = registry.get(algorithm)(k, seed=seed, budget=budget)
    trace = reference.rbp_lbp(X, y, ref_kernel(k), budget, POLICY[algorithm], seed=seed)
    assert sum(trace.mistakes) > budget + 10  # evictions happened
    assert_matches_reference(learner, trace, X, y)


@pytest.mark.parametrize("algorithm", ["rbp", "lbp"])
def test_with_budget_above_mistakes_equals_perceptron(algorithm):
    X, y = random_stream(300, 4, 3)
    k = Kernel("rbf", 0.5)
    s_b, m_b, _ = run_stepwise(registry.get(algorithm)(k, budget=300), X, y)
    s_p, m_p, _ = run_stepwise(registry.get("perceptron")(k), X, y)
    assert m_b == m_p
    np.testing.assert_array_equal(s_b, s_p)


def test_rbp_seed_changes_evictions_and_same_seed_repeats_them():
    X, y = random_stream(400, 4, 4)
    states = {}
    for seed in (1, 1, 2):
        learner = registry.get("rbp")(Kernel("rbf", 0.5), seed=seed, budget=20)
        learner.learn(chunk_from_dense(X, y), y)
        states.setdefault(seed, []).append(learner.state()[1]["sv_values"])
    np.testing.assert_array_equal(states[1][0], states[1][1])
    assert not np.array_equal(states[1][0], states[2][0])


def test_rbp_resume_continues_the_random_stream():
    X, y = random_stream(400, 4, 5)
    cls = registry.get("rbp")
    one = cls(Kernel("rbf", 0.5), seed=9, budget=15)
    one.learn(chunk_from_dense(X, y), y)
    first = cls(Kernel("rbf", 0.5), seed=9, budget=15)
    first.learn(chunk_from_dense(X[:170], y[:170]), y[:170])
    second = cls.from_state(*first.state())
    second.learn(chunk_from_dense(X[170:], y[170:]), y[170:])
    for name, arr in one.state()[1].items():
        np.testing.assert_array_equal(second.state()[1][name], arr, err_msg=name)


@pytest.mark.parametrize("budget", [0, -3])
def test_bad_budget_is_refused(budget):
    with pytest.raises(ValueError, match="budget"):
        registry.get("rbp")(Kernel("rbf", 0.5), budget=budget)


@pytest.mark.parametrize("algorithm", ["rbp", "lbp", "budget-perceptron"])  # β = 0: updates are mistakes
def test_exact_average_keeps_evicted_vectors_and_projection_agrees_on_the_kept_ones(algorithm):
    from budgetcli.learning.labels import BinaryLabels
    from budgetcli.model.model import Model

    X, y = random_stream(200, 4, 8)
    Xt, yt = random_stream(40, 4, 9)
    test = chunk_from_dense(Xt, yt)
    learner = registry.get(algorithm)(Kernel("rbf", 0.5), seed=3, budget=8)
    learner.keep_retired = True
    total = np.zeros(40)
    for t in range(200):
        learner.learn(chunk_from_dense(X[t : t + 1], y[t : t + 1]), y[t : t + 1])
        total += learner.decision_function(test)
    assert len(learner.retired) == learner.counter("mistakes") - 8  # every eviction was kept
    exact = Model(learner, BinaryLabels()).averaged()
    assert len(exact.learner.support) == learner.counter("mistakes")
    np.testing.assert_allclose(exact.learner.decision_function(test), total / 200, rtol=1e-9, atol=1e-9)

    projected = Model(learner, BinaryLabels()).averaged(projected=True)
    assert len(projected.learner.support) == 8
    # a projection onto span{k(s_i, ·)} keeps the function's values at every s_i
    # (up to the round-off ridge of the solve)
    indptr, idx, val = learner.support.to_csr()
    kept = Chunk(indptr, idx, val, np.ones(8), np.arange(1, 9), {1.0: "1"})
    np.testing.assert_allclose(
        projected.learner.decision_function(kept), exact.learner.decision_function(kept), rtol=1e-6, atol=1e-6
    )


def test_exact_average_holds_evicted_vectors_with_features_no_kept_vector_has():
    """The first examples alone have feature 6; LBP evicts them.  The exact average stores them back
    beside the kept vectors, so the support set's dense copy must cover every feature seen in training,
    not only the kept vectors' (it raised IndexError)."""
    from budgetcli.learning.labels import BinaryLabels
    from budgetcli.model.model import Model

    X, y = random_stream(200, 7, 8)
    X[3:, 6] = 0.0
    test = chunk_from_dense(*random_stream(40, 7, 9))
    learner = registry.get("lbp")(Kernel("rbf", 0.5), budget=8)
    learner.keep_retired = True
    total = np.zeros(40)
    for t in range(200):
        learner.learn(chunk_from_dense(X[t : t + 1], y[t : t + 1]), y[t : t + 1])
        total += learner.decision_function(test)
    indptr, idx, val = learner.support.to_csr()
    assert idx.max() < 7 and learner.n_features == 8  # feature index 7 (column 6) only in evicted vectors
    exact = Model(learner, BinaryLabels()).averaged()
    np.testing.assert_allclose(exact.learner.decision_function(test), total / 200, rtol=1e-9, atol=1e-9)


def test_exact_average_of_variable_size_cks_keeps_every_removed_vector():
    """The variable-size budget can drop several support vectors after one update: the eviction log
    must hold them all."""
    from budgetcli.learning.labels import BinaryLabels
    from budgetcli.model.model import Model

    X, y = random_stream(300, 4, 10)
    learner = registry.get("budget-perceptron")(Kernel("rbf", 0.5), budget=50, beta=0.5, size="variable")
    learner.keep_retired = True
    learner.learn(chunk_from_dense(X, y), y)
    updates = learner.counter("mistakes") + learner.counter("margin_updates")
    assert len(learner.retired) == updates - len(learner.support) > 0
    exact = Model(learner, BinaryLabels()).averaged()
    assert len(exact.learner.support) == updates
