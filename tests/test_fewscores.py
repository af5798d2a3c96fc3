"""The numpy scorer for small chunks gives the compiled scorer's values to the last bit."""

import numpy as np
import pytest

from budgetcli.numerics import fewscores
from budgetcli.base import registry
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.learner import binary_scores

from .helpers import chunk_from_dense, random_stream


def compiled_scores(learner, chunk):
    learner._ensure_scratch(chunk.n_features)
    out = np.empty(len(chunk))
    binary_scores(
        learner.support.arrays,
        learner.kernel.args(),
        learner.slot["alpha"],
        learner.slot["krow"],
        chunk.indptr,
        chunk.indices,
        chunk.values,
        learner.scratch,
        out,
    )
    return out


@pytest.mark.parametrize(
    "kernel", [Kernel("rbf", 0.04), Kernel("rbf", 0.7), Kernel("rbf", 0.7, exp="vectorised"), Kernel("linear")]
)
@pytest.mark.parametrize("algo,params", [("perceptron", {}), ("projectron++", {"eta": 0.3}), ("rbp", {"budget": 20})])
@pytest.mark.parametrize("seed", range(3))
def test_bit_identical_to_compiled_scores(kernel, algo, params, seed):
    X, y = random_stream(400, 12, seed, sparsity=0.4)
    learner = registry.get(algo)(kernel, seed=seed, **params)
    learner.learn(chunk_from_dense(X[:300], y[:300]), y[:300])
    assert len(learner.support) > 5
    test = chunk_from_dense(X[300:], y[300:])
    ours = fewscores.binary_scores(
        learner.support.arrays,
        kernel.code,
        kernel.gamma,
        learner.slot["alpha"],
        test.indptr,
        test.indices,
        test.values,
        learner.scratch,
    )
    assert ours.tobytes() == compiled_scores(learner, test).tobytes()
    assert not learner.scratch.any()  # the scratch vector is left all zeros, as the compiled loops expect


def test_pool_with_garbage_and_features_beyond_the_training_set():
    # rbp replaces vectors in place (garbage in the pool); the test examples use features the
    # learner never saw during training
    X, y = random_stream(500, 8, 5)
    learner = registry.get("rbp")(Kernel("rbf", 0.3), seed=1, budget=10)
    learner.learn(chunk_from_dense(X, y), y)
    assert learner.support.arrays.meta[2] > 0  # there is garbage in the pool
    Xt = np.hstack([random_stream(50, 8, 9)[0], np.random.default_rng(0).standard_normal((50, 4))])
    test = chunk_from_dense(Xt, np.ones(50))
    learner._ensure_scratch(test.n_features)
    ours = fewscores.binary_scores(
        learner.support.arrays, 2, 0.3, learner.slot["alpha"], test.indptr, test.indices, test.values, learner.scratch
    )
    assert ours.tobytes() == compiled_scores(learner, test).tobytes()


def test_decision_function_uses_it_only_for_small_rbf_and_linear_chunks():
    assert fewscores.handles(2, 10, 800) and fewscores.handles(0, 10, 800)
    assert not fewscores.handles(1, 10, 800)  # poly: numba's integer power differs from libm pow
    assert not fewscores.handles(2, 4096, 800)


def test_empty_support_set_scores_zero():
    learner = registry.get("perceptron")(Kernel("rbf", 1.0))
    X, y = random_stream(5, 3, 0)
    assert learner.decision_function(chunk_from_dense(X, y)).tolist() == [0.0] * 5
