"""The self-tuned Forgetron against the reference, its damage invariant, and the closed-form φ."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.base import registry
from budgetcli.learning.algorithms.forgetron import shrink_factor
from budgetcli.numerics.kernels import Kernel

from . import reference
from .helpers import chunk_from_dense, random_stream
from .test_algorithms import KERNELS, assert_matches_reference, ref_kernel, run_stepwise


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize("budget", [3, 15])
def test_matches_reference(kernel, budget):
    X, y = random_stream(200, 4, seed=41)
    learner = registry.get("forgetron")(kernel, budget=budget)
    trace = reference.forgetron(X, y, ref_kernel(kernel), budget)
    assert sum(trace.mistakes) > budget + 10  # shrinking and removal happened
    assert_matches_reference(learner, trace, X, y)


def test_damage_stays_below_15_32_of_mistakes():
    X, y = random_stream(1500, 4, seed=42)
    learner = registry.get("forgetron")(Kernel("rbf", 0.5), budget=10)
    learner.learn(chunk_from_dense(X, y), y)
    assert 0 < learner.scalars[0] <= 15 / 32 * learner.counter("mistakes")


def test_large_budget_is_the_perceptron():
    X, y = random_stream(200, 4, seed=43)
    k = Kernel("rbf", 0.5)
    s1, m1, _ = run_stepwise(registry.get("forgetron")(k, budget=500), X, y)
    s2, m2, _ = run_stepwise(registry.get("perceptron")(k), X, y)
    assert m1 == m2
    np.testing.assert_array_equal(s1, s2)


@pytest.mark.parametrize("seed", range(5))
def test_shrink_factor_is_the_largest_feasible(seed):
    rng = np.random.default_rng(seed)
    for _ in range(2000):
        a, b, c = rng.normal() * 3, abs(rng.normal()) + 1e-3, -abs(rng.normal()) - 1e-6
        phi = shrink_factor(a, b, c)
        assert 0 < phi <= 1
        assert a * phi * phi + b * phi + c <= 1e-9
        grid = np.linspace(phi, 1, 200)[1:]  # nothing larger is feasible, unless phi is 1 already
        assert phi == 1 or np.all(a * grid * grid + b * grid + c > -1e-9)


def test_shrink_factor_of_a_vector_with_coefficient_zero_is_one():
    """σ = 0 (a = b = 0): only a mix over shards makes it, merging identical vectors of opposite labels;
    evicting it does no damage, so no shrinking."""
    assert shrink_factor(0.0, 0.0, -0.5) == 1.0
