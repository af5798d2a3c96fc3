"""The CKS Budget Perceptron against the reference, its identity with the Perceptron, and exactness
of its cached margins."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.base import registry
from budgetcli.numerics.kernels import Kernel

from . import reference
from .helpers import chunk_from_dense, random_stream
from .test_algorithms import assert_matches_reference, ref_kernel, run_stepwise


@pytest.mark.parametrize("update,beta", [("perceptron", 0.0), ("perceptron", 0.5), ("mira", 0.0), ("svm", 1.0)])
@pytest.mark.parametrize("kernel", [Kernel("rbf", 0.5), Kernel("poly", 0.3, 1.0, 2)], ids=lambda k: k.kind)
def test_matches_reference(update, beta, kernel):
    X, y = random_stream(160, 4, seed=31)
    learner = registry.get("budget-perceptron")(kernel, budget=12, beta=beta, update=update, cost=0.7)
    trace = reference.cks_budget_perceptron(X, y, ref_kernel(kernel), 12, beta, update, C=0.7)
    assert_matches_reference(learner, trace, X, y)
    if update != "mira":
        assert len(trace.support) == 12 and sum(trace.mistakes) > 20  # removals happened


def test_large_budget_is_the_perceptron():
    X, y = random_stream(200, 4, seed=32)
    k = Kernel("rbf", 0.5)
    s1, m1, _ = run_stepwise(registry.get("budget-perceptron")(k, budget=500), X, y)
    s2, m2, _ = run_stepwise(registry.get("perceptron")(k), X, y)
    assert m1 == m2
    np.testing.assert_array_equal(s1, s2)


def test_cached_margins_and_gram_stay_exact():
    X, y = random_stream(400, 4, seed=33)
    k = Kernel("rbf", 0.5)
    learner = registry.get("budget-perceptron")(k, budget=15, beta=0.3)
    run_stepwise(learner, X, y)
    n = len(learner.support)
    indptr, idx, val = learner.support.to_csr()
    gram = learner.kernel_matrix(indptr, idx, val)
    np.testing.assert_allclose(learner.slot["gram"][:n, :n], gram, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(learner.slot["fsv"][:n], gram @ learner.slot["alpha"][:n], rtol=1e-9, atol=1e-9)


def test_unknown_update_rule_is_refused():
    with pytest.raises(ValueError, match="update"):
        registry.get("budget-perceptron")(Kernel("rbf", 0.5), update="adam")


@pytest.mark.parametrize("eval_set", ["all", "support", "random", "flip"])
@pytest.mark.parametrize("update,beta", [("perceptron", 0.0), ("svm", 1.0), ("mira", 0.0)])
def test_tighter_matches_reference(eval_set, update, beta):
    X, y = random_stream(150, 4, seed=34)
    k = Kernel("rbf", 0.5)
    learner = registry.get("tighter-perceptron")(
        k, seed=4, budget=10, beta=beta, update=update, cost=0.7, eval_set=eval_set, eval_size=15
    )
    trace = reference.tighter_budget_perceptron(
        X, y, ref_kernel(k), 10, eval_set, q=15, beta=beta, update=update, C=0.7, seed=4
    )
    assert len(trace.support) == 10 and sum(trace.mistakes) > 20  # removals happened
    assert_matches_reference(learner, trace, X, y)


@pytest.mark.parametrize("eval_set", ["all", "random", "flip"])
def test_tighter_evaluation_caches_stay_exact(eval_set):
    X, y = random_stream(300, 4, seed=35)
    k = Kernel("rbf", 0.5)
    learner = registry.get("tighter-perceptron")(k, budget=12, eval_set=eval_set, eval_size=20)
    learner.learn(chunk_from_dense(X, y), y)
    m, n = len(learner.evalset), len(learner.support)
    assert m == (300 if eval_set == "all" else 20)
    e_indptr, e_idx, e_val = learner.evalset.to_csr()
    block = learner.kernel_matrix(e_indptr, e_idx, e_val)
    np.testing.assert_allclose(learner.eval_block[:m, :n], block, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(learner.eval["e_f"][:m], block @ learner.slot["alpha"][:n], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("update,beta", [("perceptron", 0.5), ("svm", 1.0)])
def test_variable_size_matches_reference(update, beta):
    X, y = random_stream(160, 4, seed=36)
    k = Kernel("rbf", 0.5)
    # a budget the stream never fills: only the variable-size rule removes anything
    learner = registry.get("budget-perceptron")(k, budget=500, beta=beta, update=update, size="variable")
    trace = reference.cks_budget_perceptron(X, y, ref_kernel(k), 500, beta, update, variable=True)
    fixed = reference.cks_budget_perceptron(X, y, ref_kernel(k), 500, beta, update)
    assert len(trace.support) < len(fixed.support)  # redundant support vectors were dropped
    assert_matches_reference(learner, trace, X, y)
