"""The compiled learners against the reference implementations of tests/reference.py, and the
identities the Projectron paper states."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.base import registry
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.learner import KernelLearner

from . import reference
from .helpers import chunk_from_dense, random_stream

KERNELS = [Kernel("rbf", 0.5), Kernel("poly", 0.3, 1.0, 2), Kernel("linear")]
# the multiclass learners take class indices; their chunking and round-trip tests are in test_multiclass.py


def run_stepwise(learner: KernelLearner, X, y):
    """Feed one example at a time, recording f_{t−1}(x_t), mistakes and margin updates per round."""
    scores, mistakes, margins = [], [], []
    for t in range(len(y)):
        ch = chunk_from_dense(X[t : t + 1], y[t : t + 1])
        scores.append(float(learner.decision_function(ch)[0]))
        before = learner.counters.copy()
        learner.learn(ch, y[t : t + 1])
        mistakes.append(bool(learner.counter("mistakes") - before[1]))
        margins.append(bool(learner.counter("margin_updates") - before[2]))
    return np.array(scores), mistakes, margins


def support_dense(learner: KernelLearner, d: int) -> np.ndarray:
    indptr, idx, val = learner.support.to_csr()
    out = np.zeros((len(indptr) - 1, d))
    for i in range(len(indptr) - 1):
        out[i, idx[indptr[i] : indptr[i + 1]] - 1] = val[indptr[i] : indptr[i + 1]]  # index j: column j − 1
    return out


def assert_matches_reference(learner, trace, X, y):
    scores, mistakes, margins = run_stepwise(learner, X, y)
    assert mistakes == trace.mistakes
    assert margins == trace.margin_updates
    np.testing.assert_allclose(scores, trace.scores, rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(support_dense(learner, X.shape[1]), X[trace.support])
    n = len(learner.support)
    np.testing.assert_allclose(learner.slot["alpha"][:n], trace.alpha, rtol=1e-8, atol=1e-8)


def ref_kernel(k: Kernel):
    return reference.make_kernel(k.kind, k.gamma, k.coef0, k.degree)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize("seed", [0, 1])
def test_perceptron_matches_reference(kernel, seed):
    X, y = random_stream(150, 4, seed)
    learner = registry.get("perceptron")(kernel)
    assert_matches_reference(learner, reference.perceptron(X, y, ref_kernel(kernel)), X, y)


@pytest.mark.parametrize(
    "algorithm, params",
    [("projectron", {}), ("projectron++", {}), ("projectron++", {"margin_step": "projectron"})],
    ids=["projectron", "projectron++", "projectron++-margin-step-projectron"],
)
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize("eta", [0.0, 0.1, 0.5])
def test_projectron_family_matches_reference(algorithm, params, kernel, eta):
    if params and kernel.kind == "poly" and eta == 0:
        # adding every independent margin error fills the 15-dimensional feature space of this degree-2
        # kernel with cond(K) ≈ 1.5e8 on this stream; there Fig. 4's incremental K⁻¹ and the reference's
        # direct solves part at 1e-4 in the scores (the decisions agree).  Fig. 2 and Fig. 5 part the same
        # way on other streams (seeds 4 and 8): a property of η = 0 with a finite feature space.
        pytest.skip("ill-conditioned: η = 0 fills the poly kernel's feature space")
    X, y = random_stream(150, 4, seed=int(eta * 10) + 3)
    learner = registry.get(algorithm)(kernel, eta=eta, **params)
    trace = reference.projectron(X, y, ref_kernel(kernel), eta, plusplus=algorithm == "projectron++", **params)
    assert_matches_reference(learner, trace, X, y)
    if kernel.kind == "rbf" and eta > 0:
        # the comparison exercised what it is meant to: projections happened and (for ++) margin updates
        assert learner.counter("projections") > 0
        if algorithm == "projectron++":
            assert learner.counter("margin_updates") > 0


def test_projectron_with_eta_zero_makes_the_perceptrons_decisions():
    X, y = random_stream(400, 5, seed=11, sparsity=0.0)
    k = Kernel("rbf", 0.5)
    s_proj, m_proj, _ = run_stepwise(registry.get("projectron")(k, eta=0.0), X, y)
    s_perc, m_perc, _ = run_stepwise(registry.get("perceptron")(k), X, y)
    assert m_proj == m_perc
    np.testing.assert_allclose(s_proj, s_perc, rtol=1e-9, atol=1e-9)


def test_linear_projectron_never_holds_more_than_d_support_vectors():
    d = 5
    X, y = random_stream(2000, d, seed=5, sparsity=0.0)
    learner = registry.get("projectron")(Kernel("linear"), eta=1e-6)
    learner.learn(chunk_from_dense(X, y), y)
    assert learner.counter("mistakes") > 2 * d  # many updates had to be projected
    assert len(learner.support) == d


def test_incremental_inverse_matches_direct_inverse_after_500_updates():
    X, y = random_stream(4000, 8, seed=8, sparsity=0.0)
    k = Kernel("rbf", 0.25)
    learner = registry.get("projectron")(k, eta=0.2)
    learner.learn(chunk_from_dense(X, y), y)
    n = len(learner.support)
    assert n >= 500 and learner.counter("projections") > 0  # 500+ block-inverse updates, some projections
    S = support_dense(learner, 8)
    K = np.exp(-k.gamma * ((S[:, None, :] - S[None, :, :]) ** 2).sum(-1))
    direct = np.linalg.inv(K)
    W = learner.slot["kinv_factor"][:n, :n]  # the kept inverse Cholesky factor: K⁻¹ = WᵀW
    assert not np.triu(W, 1).any()
    error = np.linalg.norm(W.T @ W - direct) / np.linalg.norm(direct)
    # a stable update loses at most a small multiple of cond(K)·ε; 1e-13·cond is ~500 ε·cond
    assert error <= 1e-13 * np.linalg.cond(K)


def test_projectron_plus_plus_beats_perceptron_with_fewer_support_vectors():
    """Fig. 6a/7 in small: on the paper's synthetic Gaussians Projectron++ makes fewer online
    mistakes than the Perceptron, with a much smaller support set."""
    from budgetcli.run.synthetic import projectron_gaussians

    X, y = projectron_gaussians(3000, seed=1)
    k = Kernel("rbf", 1.0)
    perc = registry.get("perceptron")(k)
    pp = registry.get("projectron++")(k, eta=0.1)
    for learner in (perc, pp):
        learner.learn(chunk_from_dense(X, y), y)
    assert pp.counter("mistakes") < perc.counter("mistakes")
    assert len(pp.support) < len(perc.support) / 3


@pytest.mark.parametrize("algorithm", ["perceptron", "projectron", "projectron++"])
def test_averaged_hypothesis_equals_brute_force_mean_of_the_online_hypotheses(algorithm):
    """(1/T) Σ_t f_t(x), with f_t evaluated after each round, against the running sums; a save and
    reload half way must not disturb them."""
    from budgetcli.learning.labels import BinaryLabels
    from budgetcli.model.model import Model

    X, y = random_stream(240, 4, seed=6)
    Xt, yt = random_stream(50, 4, seed=7)
    test = chunk_from_dense(Xt, yt)
    cls = registry.get(algorithm)
    learner = cls(Kernel("rbf", 0.5))
    total = np.zeros(50)
    for t in range(240):
        if t == 120:
            learner = cls.from_state(*learner.state())
        learner.learn(chunk_from_dense(X[t : t + 1], y[t : t + 1]), y[t : t + 1])
        total += learner.decision_function(test)
    averaged = Model(learner, BinaryLabels()).averaged()
    assert len(averaged.learner.support) == len(learner.support)  # the online support set, no more
    np.testing.assert_allclose(averaged.learner.decision_function(test), total / 240, rtol=1e-9, atol=1e-9)
    # and it is not simply the last hypothesis
    assert not np.allclose(learner.decision_function(test), total / 240)
