"""The edges over arrays (the Python API, the scikit-learn class, the River class, one example at a time
and many at a time) check what they are given before any compiled code sees it, through one function
(io/arrays.py: csr_chunk, checked_labels), and refuse alike."""

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


# ---- label spellings: no digit lost, and a label means one class at every edge ----------------------


def _write(path, X, labels) -> None:
    from budgetcli.io.libsvm import write_libsvm

    nz = X != 0
    rows, cols = np.nonzero(nz)
    indptr = np.concatenate([[0], np.cumsum(nz.sum(axis=1))])
    with open(path, "w") as f:
        write_libsvm(f, indptr, cols + 1, X[rows, cols], np.zeros(len(X)), [str(v) for v in labels])


def _cli(*args):
    from click.testing import CliRunner

    from budgetcli.entry import main

    return CliRunner().invoke(main, [str(a) for a in args])


def test_labels_that_differ_in_the_tenth_digit_stay_two_labels_at_every_edge(tmp_path):
    from budgetcli.base.core import shortest_text
    from budgetcli.io.libsvm import write_libsvm

    X = np.array([[1.0], [-1.0], [0.9], [-0.8]])
    y = np.array([1.0, 1.0000000001, 1.0, 1.0000000001])
    model = budgetcli.train(budgetcli.TrainSpec("perceptron", budgetcli.KernelSpec("linear")), X, y)
    model.save(tmp_path / "api.model")
    _write(tmp_path / "d", X, ["1", "1.0000000001", "1", "1.0000000001"])
    r = _cli("predict", tmp_path / "api.model", tmp_path / "d")
    assert r.stdout.split() == ["1", "1.0000000001", "1", "1.0000000001"]
    BudgetClassifier = pytest.importorskip("budgetcli.sklearn").BudgetClassifier
    clf = BudgetClassifier("perceptron", kernel="linear").fit(X, ["1", "1.0000000001", "1", "1.0000000001"])
    assert sorted(clf.to_model().labels.spellings.values()) == ["1", "1.0000000001"]
    assert shortest_text(0.1) == "0.1" and shortest_text(1e22) == "1e+22" and shortest_text(-3.0) == "-3"
    with open(tmp_path / "w", "w") as f:
        write_libsvm(f, np.array([0, 0, 0]), np.zeros(0, int), np.zeros(0), np.array([0.1, 1.0000000001]))
    assert (tmp_path / "w").read_text() == "0.1\n1.0000000001\n"


def test_an_imported_libsvm_model_keeps_its_labels_digits(tmp_path):
    libsvm = tmp_path / "m.svm"
    libsvm.write_text(
        "svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 1\nrho 0\nlabel 1234567 -1\nnr_sv 1 0\nSV\n1 1:1\n"
    )
    assert _cli("import", libsvm, "-o", tmp_path / "m.model").exit_code == 0
    (tmp_path / "d").write_text("1234567 1:1\n-1 1:-1\n")
    assert _cli("predict", tmp_path / "m.model", tmp_path / "d").stdout.split() == ["1234567", "-1"]
    r = _cli("export", tmp_path / "m.model", "-o", "-")
    assert "label 1234567 -1" in r.stdout


def test_a_class_whose_text_is_a_number_is_that_number_in_the_model_file(tmp_path):
    """A scikit-learn or River class '1' is the label 1 of a data file, whichever class came first (River
    gave the first string label the value −1 and eval then counted every right prediction wrong)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] > 0, "1", "-1")
    y[0] = "1"
    X[0, 0] = 1.0
    _write(tmp_path / "d", X, y)
    river = pytest.importorskip("budgetcli.river")
    import pandas as pd

    online = river.BudgetClassifier("perceptron", kernel="linear")
    online.learn_many(pd.DataFrame(X), pd.Series(y))
    online.save(tmp_path / "river.model")
    right = float(np.mean(online.predict_many(pd.DataFrame(X)).to_numpy() == y))
    report = _cli("eval", "--json", tmp_path / "river.model", tmp_path / "d")
    assert report.exit_code == 0 and f'"accuracy": {right}' in report.stdout and right > 0.9
    BudgetClassifier = pytest.importorskip("budgetcli.sklearn").BudgetClassifier
    clf = BudgetClassifier("perceptron", kernel="linear").fit(X, y)
    clf.to_model().save(tmp_path / "sk.model")
    report = _cli("eval", "--json", tmp_path / "sk.model", tmp_path / "d")
    assert f'"accuracy": {clf.score(X, y)}' in report.stdout
    with pytest.raises(ValueError, match="the labels '1' and 1.0 are both 1 in a data file"):
        from budgetcli.learning.labels import label_values

        label_values(["1", 1.0])


def test_a_model_file_whose_spelling_lost_digits_predicts_its_labels_with_them(tmp_path):
    """A file the Python API wrote before spelt the label 1.0000000001 as 1."""
    from budgetcli.base import modelfile

    X = np.array([[1.0], [-1.0]])
    budgetcli.train(SPEC, X, [1.0, 1.0000000001]).save(tmp_path / "m.model")
    header, arrays = modelfile.load(tmp_path / "m.model")
    header["labels"]["spellings"] = [[1.0, "1"], [1.0000000001, "1"]]
    modelfile.save(tmp_path / "old.model", header, arrays)
    assert sorted(budgetcli.load(tmp_path / "old.model").labels.spellings.values()) == ["1", "1.0000000001"]
