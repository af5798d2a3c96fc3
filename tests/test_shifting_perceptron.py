"""SPA against the reference, λ = 0 is the Perceptron, and the lazy scale survives extreme decay."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.base import registry
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.labels import BinaryLabels
from budgetcli.model.model import Model

from . import reference
from .helpers import chunk_from_dense, random_stream
from .test_algorithms import KERNELS, assert_matches_reference, ref_kernel, run_stepwise


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize("lam", [0.05, 1.0, 8.0])
def test_matches_reference(kernel, lam):
    X, y = random_stream(180, 4, seed=21)
    learner = registry.get("spa")(kernel, spa_lambda=lam)
    assert_matches_reference(learner, reference.shifting_perceptron(X, y, ref_kernel(kernel), lam), X, y)


def test_lambda_zero_is_the_perceptron():
    X, y = random_stream(250, 4, seed=22)
    k = Kernel("rbf", 0.5)
    s1, m1, _ = run_stepwise(registry.get("spa")(k, spa_lambda=0.0), X, y)
    s2, m2, _ = run_stepwise(registry.get("perceptron")(k), X, y)
    assert m1 == m2
    np.testing.assert_array_equal(s1, s2)


def test_strong_decay_in_one_chunk_stays_finite_and_matches_stepwise():
    """λ = 60 drives the lazy scale below 1e-100 within one chunk; folding keeps 1/c finite, and one
    big chunk gives the same hypothesis as feeding the examples one at a time."""
    X, y = random_stream(600, 4, seed=23)
    k = Kernel("rbf", 0.5)
    big = registry.get("spa")(k, spa_lambda=60.0)
    big.learn(chunk_from_dense(X, y), y)
    assert big.counter("mistakes") > 100
    small = registry.get("spa")(k, spa_lambda=60.0)
    run_stepwise(small, X, y)
    n = len(big.support)
    assert np.all(np.isfinite(big.slot["alpha"][:n]))
    np.testing.assert_allclose(big.slot["alpha"][:n], small.slot["alpha"][:n], rtol=1e-9, atol=1e-300)


def test_averaged_spa_equals_brute_force_mean():
    X, y = random_stream(200, 4, seed=24)
    Xt, yt = random_stream(30, 4, seed=25)
    test = chunk_from_dense(Xt, yt)
    learner = registry.get("spa")(Kernel("rbf", 0.5), spa_lambda=0.5)
    total = np.zeros(30)
    for a in range(0, 200, 7):  # chunks of 7: folds at every call, decay within a call
        ch = chunk_from_dense(X[a : a + 7], y[a : a + 7])
        # brute force needs f_t after every round: evaluate on a copy fed one example at a time
        for t in range(a, min(a + 7, 200)):
            probe = registry.get("spa").from_state(*learner.state())
            probe.learn(chunk_from_dense(X[a : t + 1], y[a : t + 1]), y[a : t + 1])
            total += probe.decision_function(test)
        learner.learn(ch, y[a : a + 7])
    avg = Model(learner, BinaryLabels()).averaged()
    np.testing.assert_allclose(avg.learner.decision_function(test), total / 200, rtol=1e-9, atol=1e-9)
