"""The edges over arrays (the Python API, the scikit-learn class, the River class, one example at a time
and many at a time) check what they are given before any compiled code sees it, through one function
(estimator.csr_chunk, checked_labels), and refuse alike."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import budgetcli

SPEC = budgetcli.TrainSpec("perceptron", budgetcli.KernelSpec(gamma=0.5))


@pytest.mark.parametrize(
    "X, y, message",
    [
        (np.ones((3, 2)), [1.0, -1.0], r"y has shape \(2,\); X has 3 rows"),
        (np.ones((2, 2)), [[1.0, -1.0]], r"y has shape \(1, 2\); X has 2 rows"),
        (np.array([[1.0, np.inf], [1.0, 1.0]]), [1.0, -1.0], "X:1: a feature value is not a finite number"),
        (np.array([[1.0, 1.0], [np.nan, 1.0]]), [1.0, -1.0], "X:2: a feature value is not a finite number"),
        (np.ones((2, 2)), [1.0, np.nan], "y:2: the label is not a finite number"),
        (np.ones(3), [1.0, -1.0, 1.0], "X has 1 dimension"),
    ],
)
def test_the_python_api_refuses_bad_arrays_before_learning_or_predicting(X, y, message):
    with pytest.raises(ValueError, match=message):
        budgetcli.train(SPEC, X, y)


@pytest.mark.parametrize(
    "X, message",
    [
        (np.array([[1.0, np.inf]]), "X:1: a feature value is not a finite number"),
        (np.array([[1.0, 1.0], [np.nan, 1.0]]), "X:2: a feature value is not a finite number"),
        (np.ones(3), "X has 1 dimension"),
    ],
)
def test_a_model_refuses_bad_arrays_to_predict(X, message):
    model = budgetcli.train(SPEC, np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), [1.0, -1.0, 1.0])
    for predict in (model.predict, model.decision_function):
        with pytest.raises(ValueError, match=message):
            predict(X)


def test_scikit_learn_refuses_a_y_of_another_length():
    BudgetClassifier = pytest.importorskip("budgetcli.sklearn").BudgetClassifier
    clf = BudgetClassifier("perceptron", gamma=0.5).fit(np.eye(4), [1, -1, 1, -1])
    with pytest.raises(ValueError):
        clf.partial_fit(np.eye(4), [1, -1])
    with pytest.raises(ValueError, match="not a finite number|NaN|infinity"):
        clf.decision_function(np.array([[np.inf, 0, 0, 0]]))


LEARN_MANY = """
import numpy as np, pandas as pd
from budgetcli.river import BudgetClassifier
X = pd.DataFrame(np.random.default_rng(0).normal(size=(10, 3)))
model = BudgetClassifier("perceptron", gamma=0.5)
for rows, labels in ((10, [1, -1, 1]), (3, [1, -1, 1, 1, 1, 1, -1])):
    try:
        model.learn_many(X.iloc[:rows], pd.Series(labels))
    except ValueError as exc:
        print(exc)
print(model.learner, model.features, model.classes)
"""


def test_river_learn_many_refuses_a_y_of_another_length_and_learns_nothing():
    """It hung at 100% CPU with fewer labels than rows and learned phantom examples with more."""
    pytest.importorskip("river")
    out = subprocess.run([sys.executable, "-c", LEARN_MANY], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "y has shape (3,); X has 10 rows: give one label per row",
        "y has shape (7,); X has 3 rows: give one label per row",
        "None {} {}",
    ]
