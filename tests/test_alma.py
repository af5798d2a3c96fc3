"""ALMA₂ and its projected version against the reference."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.base import registry
from budgetcli.numerics.kernels import Kernel

from . import reference
from .helpers import chunk_from_dense, random_stream
from .test_algorithms import KERNELS, assert_matches_reference, ref_kernel


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize("params", [{}, {"alma_alpha": 0.5, "alma_b": 2.0, "alma_c": 0.3}])
def test_alma2_matches_reference(kernel, params):
    X, y = random_stream(150, 4, seed=51)
    learner = registry.get("alma2")(kernel, **params)
    ref = {
        "alpha": params.get("alma_alpha", 0.0),
        "B": params.get("alma_b", 1.0),
        "C": params.get("alma_c", np.sqrt(2) - 1),
    }
    trace = reference.alma2(X, y, ref_kernel(kernel), **ref)
    assert any(trace.margin_updates)
    assert_matches_reference(learner, trace, X, y)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize("eta", [0.0, 0.02, 0.1])
def test_projectron_alma2_matches_reference(kernel, eta):
    X, y = random_stream(150, 4, seed=52)
    learner = registry.get("projectron-alma2")(kernel, eta=eta)
    trace = reference.alma2(X, y, ref_kernel(kernel), eta=eta)
    assert_matches_reference(learner, trace, X, y)
    if kernel.kind == "rbf" and eta > 0:
        assert learner.counter("projections") > 0


def test_projected_alma2_with_eta_zero_decides_like_alma2():
    X, y = random_stream(300, 5, seed=53, sparsity=0.0)
    k = Kernel("rbf", 0.5)
    plain, proj = registry.get("alma2")(k), registry.get("projectron-alma2")(k, eta=0.0)
    for learner in (plain, proj):
        learner.learn(chunk_from_dense(X, y), y)
    assert plain.counters.tolist()[:3] == proj.counters.tolist()[:3]


def test_norm_is_tracked_and_at_most_one():
    X, y = random_stream(400, 4, seed=54)
    learner = registry.get("alma2")(Kernel("rbf", 0.5))
    learner.learn(chunk_from_dense(X, y), y)
    n = len(learner.support)
    indptr, idx, val = learner.support.to_csr()
    gram = learner.kernel_matrix(indptr, idx, val)
    a = learner.slot["alpha"][:n]
    assert a @ gram @ a == pytest.approx(learner.scalars[0], rel=1e-9)
    assert learner.scalars[0] <= 1 + 1e-12
