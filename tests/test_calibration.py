"""Platt's sigmoid (Lin, Lin and Weng's fit) and Wu, Lin and Weng's pairwise coupling (calibration.py),
checked against what defines them rather than against themselves: the fit is where the regularised
likelihood's gradient vanishes, and scikit-learn's own sigmoid calibration (a different optimiser on
the same objective) finds the same point; the coupling satisfies the optimality conditions of its
quadratic problem."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.model import calibration


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


# ---- degenerate held-out data: the command and the Python API warn alike, as eval warns ---------------


@pytest.fixture(scope="module")
def held_out(tmp_path_factory):
    """A binary and a 3-class model of 1,500 lines of a9a, and the next 1,000 lines (the 3-class labels:
    1 + line % 3), with their scores."""
    from click.testing import CliRunner

    from budgetcli.entry import main
    from tests.helpers import SAMPLE_DATA

    tmp = tmp_path_factory.mktemp("calibrate")
    lines = (SAMPLE_DATA / "a9a").read_text().splitlines()[:2500]
    multi = [f"{1 + i % 3}{line[line.index(' ') :]}" for i, line in enumerate(lines)]
    for name, rows in (("b", lines), ("m", multi)):
        (tmp / name).write_text("\n".join(rows[:1500]) + "\n")
        args = ["train", "-q", "-a", "projectron++" if name == "b" else "mc-projectron++", str(tmp / name)]
        assert CliRunner().invoke(main, args + ["-o", str(tmp / f"{name}.model")]).exit_code == 0
    return tmp, lines[1500:], multi[1500:]


def _calibrate(tmp, rows, model="b.model"):
    """(the command's warnings, the Python API's) on the held-out `rows`."""
    import warnings

    from click.testing import CliRunner

    import budgetcli
    from budgetcli.entry import main

    (tmp / "ho").write_text("\n".join(rows) + "\n")
    r = CliRunner().invoke(main, ["calibrate", str(tmp / model), str(tmp / "ho"), "-o", str(tmp / "c.model")])
    assert r.exit_code == 0, r.output
    printed = [line[len("warning: ") :] for line in r.stderr.splitlines() if line.startswith("warning: ")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        budgetcli.calibrate(budgetcli.load(tmp / model), tmp / "ho")
    assert [str(w.message) for w in caught] == printed
    return printed


def _scores(tmp, rows, model="b.model"):
    import budgetcli
    from budgetcli.run import pipeline

    (tmp / "s").write_text("\n".join(rows) + "\n")
    return np.concatenate([f for _, f in pipeline.scores(budgetcli.load(tmp / model), str(tmp / "s"))])


def test_held_out_data_enough_and_well_ranked_give_no_warning(held_out):
    tmp, rows, _ = held_out
    assert _calibrate(tmp, rows[:300]) == []


def test_two_lines_ranked_the_wrong_way_round_warn(held_out):
    tmp, rows, _ = held_out
    f = _scores(tmp, rows)
    positive = np.array([row.startswith("+1") for row in rows])
    worst_positive = int(np.flatnonzero(positive)[np.argmin(f[positive])])
    best_negative = int(np.flatnonzero(~positive)[np.argmax(f[~positive])])
    printed = _calibrate(tmp, [rows[worst_positive], rows[best_negative]])
    assert len(printed) == 2
    assert printed[0].startswith("only 1 of -1, 1 of +1 in the held-out data (fewer than 10)")
    assert printed[1].startswith("the fitted sigmoid of +1 against -1 (A = ") and "does not grow" in printed[1]


def test_one_outlying_score_warns():
    """One wrongly labelled example with a far-off score flattens the fit to A ≥ 0 (probabilities that
    contradict predict on 42% of the examples), which calibrate_model says."""
    from budgetcli.learning.labels import BinaryLabels
    from budgetcli.model.model import Model

    rng = np.random.default_rng(0)
    y = rng.random(50) < 0.5
    f = np.append(np.where(y, 1.0, -1.0) + 0.5 * rng.normal(size=50), -1e4)
    y = np.append(y, True)

    class Chunk:
        labels = np.where(y, 1.0, -1.0)

    model = Model(None, BinaryLabels(-1.0, 1.0))
    warnings = calibration.calibrate_model(model, [(Chunk, f)])
    assert model.calibration["A"][0] >= 0 and len(warnings) == 1 and "does not grow with the score" in warnings[0]


def test_a_class_missing_and_labels_never_seen_warn_in_eval_s_words(held_out):
    tmp, _, multi = held_out
    rows = [row for row in multi if not row.startswith("3")][:400] + ["7" + row[1:] for row in multi[:20]]
    printed = _calibrate(tmp, rows, "m.model")
    assert printed[0] == (
        "the data holds labels the model never saw: 7 (20 examples); the model's labels are 1, 2, 3, and they "
        "are left out of the fit (a 0/1 file against a ±1 model?)"
    )
    assert printed[1].startswith(
        "the held-out data hold no example of 3: the probabilities of its pairs are not fitted"
    )
