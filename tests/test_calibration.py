"""Platt's sigmoid (Lin, Lin and Weng's fit) and Wu, Lin and Weng's pairwise coupling (calibration.py),
checked against what defines them rather than against themselves: the fit is where the regularised
likelihood's gradient vanishes, and scikit-learn's own sigmoid calibration (a different optimiser on
the same objective) finds the same point; the coupling satisfies the optimality conditions of its
quadratic problem."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli import calibration


def _objective_gradient(f, positive, A, B):
    """∂/∂(A, B) of −Σ t log p + (1 − t) log(1 − p), p = 1/(1 + exp(A f + B)), Platt's targets."""
    n1 = positive.sum()
    n0 = len(f) - n1
    t = np.where(positive, (n1 + 1) / (n1 + 2), 1 / (n0 + 2))
    p = 1 / (1 + np.exp(A * f + B))
    return np.array([np.sum(f * (t - p)), np.sum(t - p)])


@pytest.mark.parametrize("seed", range(5))
def test_the_fit_is_where_the_likelihood_is_flat(seed):
    rng = np.random.default_rng(seed)
    f = rng.normal(size=500) * 2
    positive = rng.random(500) < 1 / (1 + np.exp(-1.5 * f + 0.3))
    A, B = calibration.fit_sigmoid(f, positive)
    assert A < 0  # the +1 class grows more likely with f
    assert np.abs(_objective_gradient(f, positive, A, B)).max() < 1e-5


def test_the_fit_agrees_with_scikit_learn_s_sigmoid_calibration():
    sk = pytest.importorskip("sklearn.calibration")
    rng = np.random.default_rng(7)
    f = rng.normal(size=2000)
    positive = rng.random(2000) < 1 / (1 + np.exp(-3 * f))
    A, B = calibration.fit_sigmoid(f, positive)
    a, b = sk._sigmoid_calibration(f, positive.astype(int))
    assert abs(A - a) < 1e-3 and abs(B - b) < 1e-3


def test_one_class_and_no_example_give_finite_fits():
    A, B = calibration.fit_sigmoid(np.array([0.5, 1.0, 2.0]), np.array([False, False, False]))
    assert np.isfinite([A, B]).all() and calibration.sigmoid(np.array([1.0]), A, B)[0] < 0.5
    assert calibration.fit_sigmoid(np.zeros(0), np.zeros(0, bool)) == (0.0, 0.0)  # B = log(1): p = 1/2


def test_probabilities_are_clipped_as_libsvm_clips_them():
    p = calibration.sigmoid(np.array([-1e6, 0.0, 1e6]), -1.0, 0.0)
    assert p.tolist() == [1e-7, 0.5, 1 - 1e-7]


@pytest.mark.parametrize("k", [3, 5, 26])
def test_the_coupling_solves_its_problem(k):
    """Wu, Lin and Weng's method 2: p on the simplex with Qp − (pᵀQp)·1 ≈ 0 (their stopping rule)."""
    rng = np.random.default_rng(k)
    r = np.zeros((k, k))
    for i, j in calibration.pairs(k):
        r[i, j] = rng.uniform(0.05, 0.95)
        r[j, i] = 1 - r[i, j]
    p = calibration.couple(r)
    Q = np.where(np.eye(k, dtype=bool), 0, -r.T * r)
    np.fill_diagonal(Q, [sum(r[j, t] ** 2 for j in range(k) if j != t) for t in range(k)])
    assert abs(p.sum() - 1) < 1e-12
    assert np.abs(Q @ p - p @ Q @ p).max() < 0.005 / k


def test_consistent_pairwise_probabilities_give_the_class_probabilities_back():
    """r_ij = p_i / (p_i + p_j) for a p: the coupling returns p (to its tolerance)."""
    p = np.array([0.5, 0.3, 0.15, 0.05])
    r = np.array([[p[i] / (p[i] + p[j]) if i != j else 0 for j in range(4)] for i in range(4)])
    assert np.abs(calibration.couple(r) - p).max() < 5e-3


def test_a_calibration_of_a_multiclass_model_fits_each_pair_on_its_own_classes():
    rng = np.random.default_rng(3)
    classes = rng.integers(0, 3, 600)
    scores = rng.normal(size=(600, 3)) + 2 * np.eye(3)[classes]
    cal = calibration.calibrate(scores, classes, 3)
    assert cal["method"] == "platt-pairwise" and len(cal["A"]) == 3
    rows = (classes == 0) | (classes == 2)
    assert (cal["A"][1], cal["B"][1]) == calibration.fit_sigmoid(scores[rows, 0] - scores[rows, 2], classes[rows] == 0)
    probs = calibration.probabilities(cal, scores)
    assert probs.shape == (600, 3) and np.allclose(probs.sum(axis=1), 1)
    assert np.mean(probs.argmax(axis=1) == classes) > 0.8
    with pytest.raises(ValueError, match="calibration A is not 3 finite numbers"):
        calibration.check(dict(cal, A=[1.0, float("nan"), 2.0]), 3)


def _libsvm_multiclass_probability(k, r):
    """LIBSVM's multiclass_probability (svm.cpp), line by line: the reference the vectorised coupling
    must reproduce."""
    Q = [[0.0] * k for _ in range(k)]
    p = [1.0 / k] * k
    for t in range(k):
        for j in range(t):
            Q[t][t] += r[j][t] * r[j][t]
            Q[t][j] = Q[j][t]
        for j in range(t + 1, k):
            Q[t][t] += r[j][t] * r[j][t]
            Q[t][j] = -r[j][t] * r[t][j]
    eps = 0.005 / k
    for _ in range(max(100, k)):
        Qp = [sum(Q[t][j] * p[j] for j in range(k)) for t in range(k)]
        pQp = sum(p[t] * Qp[t] for t in range(k))
        if max(abs(Qp[t] - pQp) for t in range(k)) < eps:
            break
        for t in range(k):
            diff = (-Qp[t] + pQp) / Q[t][t]
            p[t] += diff
            pQp = (pQp + diff * (diff * Q[t][t] + 2 * Qp[t])) / (1 + diff) / (1 + diff)
            for j in range(k):
                Qp[j] = (Qp[j] + diff * Q[t][j]) / (1 + diff)
                p[j] /= 1 + diff
    return p


@pytest.mark.parametrize("k", [2, 3, 7, 26])
def test_the_coupling_of_many_rows_at_once_is_libsvm_s_on_each_row(k):
    rng = np.random.default_rng(100 + k)
    n = 40
    r = np.zeros((n, k, k))
    for i, j in calibration.pairs(k):
        r[:, i, j] = np.clip(rng.beta(0.7, 0.7, n), 1e-7, 1 - 1e-7)  # near 0 and 1 too: rows stop at different rounds
        r[:, j, i] = 1 - r[:, i, j]
    got = calibration.couple_rows(r)
    want = np.array([_libsvm_multiclass_probability(k, row.tolist()) for row in r])
    assert np.abs(got - want).max() < 1e-12  # the same iterations; only the order of a sum's terms differs
    assert (got.argmax(axis=1) == want.argmax(axis=1)).all()
