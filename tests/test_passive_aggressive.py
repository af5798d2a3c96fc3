"""PA, PA-I, PA-II against the reference, and PA-I with C → ∞ equals PA."""

from __future__ import annotations

import math

import numpy as np
import pytest

from budgetcli.base import registry
from budgetcli.numerics.kernels import Kernel

from . import reference
from .helpers import random_stream
from .test_algorithms import KERNELS, assert_matches_reference, ref_kernel, run_stepwise


@pytest.mark.parametrize("variant", ["pa", "pa-i", "pa-ii"])
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
def test_matches_reference(variant, kernel):
    X, y = random_stream(150, 4, seed=12)
    params = {} if variant == "pa" else {"cost": 0.3}
    learner = registry.get(variant)(kernel, **params)
    trace = reference.passive_aggressive(X, y, ref_kernel(kernel), variant, C=0.3)
    assert any(trace.margin_updates)
    assert_matches_reference(learner, trace, X, y)


def test_pa_i_with_infinite_cost_is_pa():
    X, y = random_stream(200, 4, seed=13)
    k = Kernel("rbf", 0.5)
    s1, m1, g1 = run_stepwise(registry.get("pa-i")(k, cost=math.inf), X, y)
    s2, m2, g2 = run_stepwise(registry.get("pa")(k), X, y)
    assert m1 == m2 and g1 == g2
    np.testing.assert_array_equal(s1, s2)


def test_cost_must_be_positive():
    with pytest.raises(ValueError, match="cost"):
        registry.get("pa-i")(Kernel("rbf", 0.5), cost=0.0)
