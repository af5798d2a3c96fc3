"""The LMS filters (budgetcli/learning/algorithms/lms.py: klms, qklms, norma) against their references written from
the papers and KAFBOX (tests/reference.py), prediction by prediction, and against KAFBOX's own figures on
its Mackey–Glass series (sample_data/mg30.dat, shipped with KAFBOX's licence beside it).

KAFBOX's setting (its kafbox_data and demo_prediction): the input of sample n is the 10 values before it,
most recent first, [s(n), s(n−1), ..., s(n−9)], the first 9 rows padded with zeros; the target is s(n+1);
each row is predicted, then learnt (prequential); the figure is 10·log10 of the mean squared error over
rows 1001..4999; the Gaussian kernel exp(−‖a − b‖²/2σ²) with σ = 1, i.e. γ = 0.5; every other setting at
the class's default.  KAFBOX 2.2 under GNU Octave 7.3 gives KLMS −28.8669, QKLMS −29.2610 (2,160 centres),
NORMA −21.0303 dB."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from budgetcli.learning import algorithms  # noqa: F401  (algorithms registers them)
from budgetcli.base import registry
from budgetcli.io.libsvm import read_all
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.task import SQUARED_ERROR

from . import reference
from .helpers import SAMPLE_DATA, chunk_from_dense

MG30 = SAMPLE_DATA / "mg30.dat"
LAGS = 10
KERNEL = Kernel("rbf", 0.5)  # σ = 1


def mg30_rows() -> tuple[np.ndarray, np.ndarray]:
    """KAFBOX's time embedding of mg30: X (4999 × 10, most recent first, zero-padded), y = the next value."""
    s = np.loadtxt(MG30)
    X = np.zeros((len(s) - 1, LAGS))
    for lag in range(LAGS):
        X[lag:, lag] = s[: len(s) - 1 - lag]
    return X, s[1:]


def mg30_file(tmp_path) -> Path:
    X, y = mg30_rows()
    path = tmp_path / "mg30.txt"
    path.write_text(
        "".join(
            f"{t!r} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(x) if v) + "\n"
            for x, t in zip(X.tolist(), y.tolist())
        )
    )
    return path


def prequential_db(name: str, params: dict, data, kernel: Kernel = KERNEL) -> tuple[float, object]:
    """KAFBOX's figure: the online squared errors of rows 1001..4999 (learnt after the first 1000, the
    learner's own sum of them), in dB."""
    learner = registry.get(name)(kernel, **params)
    first, rest = data.take(np.arange(1000)), data.take(np.arange(1000, len(data)))
    learner.learn(first, first.labels)
    before = learner.scalars[SQUARED_ERROR]
    learner.learn(rest, rest.labels)
    return 10 * np.log10((learner.scalars[SQUARED_ERROR] - before) / len(rest)), learner


@pytest.fixture(scope="module")
def mg30(tmp_path_factory):
    return read_all(mg30_file(tmp_path_factory.mktemp("mg30")))


@pytest.mark.parametrize(
    "name, params, kafbox, size",
    [
        ("klms", {}, -28.8669, 4999),
        ("qklms", {}, -29.2610, 2160),
        ("norma", {"norma_error": "after-shrink"}, -21.0303, 500),
    ],
)
@pytest.mark.parametrize("exp", ["libm", "vectorised"])  # the rbf's exp: the C library's, or the CLI's default
def test_kafbox_s_mg30_figures(mg30, name, params, kafbox, size, exp):
    db, learner = prequential_db(name, params, mg30, Kernel("rbf", 0.5, exp=exp))
    assert round(db, 4) == kafbox
    assert len(learner.support) == size


def test_norma_s_paper_step_is_within_a_db_of_kafbox_s_order(mg30):
    """The paper's step (the error of f_t, before the shrink) is the default; on mg30 it is 0.11 dB from
    KAFBOX's order, within the issue's 1 dB."""
    db, _ = prequential_db("norma", {}, mg30)
    assert round(db, 4) == -20.9206
    assert abs(db - -21.0303) < 1


@pytest.mark.parametrize(
    "name, params, run",
    [
        ("klms", {"budget": 250}, lambda X, y, k: reference.klms(X, y, k, budget=250)),
        ("qklms", {}, lambda X, y, k: reference.qklms(X, y, k)),
        ("qklms", {"quantization": 0.3}, lambda X, y, k: reference.qklms(X, y, k, epsu=0.3)),
        ("qklms", {"budget": 50}, lambda X, y, k: reference.qklms(X, y, k, budget=50)),
        ("norma", {"budget": 60}, lambda X, y, k: reference.norma(X, y, k, tau=60)),
        (
            "norma",
            {"budget": 60, "norma_error": "after-shrink"},
            lambda X, y, k: reference.norma(X, y, k, tau=60, error="after-shrink"),
        ),
    ],
    ids=["klms", "qklms", "qklms-0.3", "qklms-cap", "norma", "norma-after-shrink"],
)
def test_every_prediction_on_mg30_equals_the_reference(name, params, run):
    """The first 400 rows of mg30, one at a time: each prediction f_t(x_t) equals the reference's, and so
    does the final expansion (the budgets are reached: KLMS stops, NORMA truncates, QKLMS merges, and with -B 50
    stops growing)."""
    X, y = mg30_rows()
    X, y = X[:400], y[:400]
    trace = run(X, y, reference.make_kernel("rbf", KERNEL.gamma))
    learner = registry.get(name)(KERNEL, **params)
    predictions = []
    for t in range(len(y)):
        one = chunk_from_dense(X[t : t + 1], y[t : t + 1])
        predictions.append(learner.decision_function(one)[0])
        learner.learn(one, y[t : t + 1])
    np.testing.assert_allclose(predictions, trace.scores, rtol=1e-12, atol=1e-13)
    assert len(learner.support) == len(trace.support) < len(y)
    # the learner's own online errors are those of its predictions
    np.testing.assert_allclose(learner.scalars[SQUARED_ERROR], np.sum((y - np.array(trace.scores)) ** 2), rtol=1e-12)
    test = chunk_from_dense(X[:50], y[:50])
    expected = [
        sum(a * reference.make_kernel("rbf", 0.5)(X[s], x) for a, s in zip(trace.alpha, trace.support)) for x in X[:50]
    ]
    np.testing.assert_allclose(learner.decision_function(test), expected, rtol=1e-12, atol=1e-13)


def test_train_reports_the_online_errors_end_to_end(tmp_path):
    """`train --task regression` on mg30: the summary's online MSE is the mean of the squared a priori errors,
    as the reference's predictions give them."""
    data = mg30_file(tmp_path)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "budgetcli",
            "train",
            "--task",
            "regression",
            "-a",
            "klms",
            "--gamma",
            "0.5",
            str(data),
            "-o",
            str(tmp_path / "m.model"),
            "--json",
            "-q",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads(out.stdout)
    assert summary["task"] == "regression" and summary["examples"] == 4999 and summary["support_size"] == 4999
    assert "mistakes" not in summary
    _, learner = prequential_db("klms", {}, read_all(data))
    # the CLI's rbf takes numba's vectorised exp (kernels.Kernel.exp), this learner libm's: a few ulps apart
    np.testing.assert_allclose(summary["online_squared_error"], learner.scalars[SQUARED_ERROR], rtol=1e-13)
    assert summary["online_mse"] == summary["online_squared_error"] / 4999
