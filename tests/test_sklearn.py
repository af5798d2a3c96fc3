"""budgetcli.sklearn.BudgetClassifier: scikit-learn's own estimator checks, and agreement with the CLI's learners."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

pytest.importorskip("sklearn")
import scipy.sparse as sp  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from budgetcli import registry  # noqa: E402
from budgetcli.core import KernelSpec  # noqa: E402
from budgetcli.kernels import Kernel  # noqa: E402
from budgetcli.model import Model  # noqa: E402
from budgetcli.sklearn import BudgetClassifier  # noqa: E402

from .helpers import assert_same_state, chunk_from_dense, random_stream  # noqa: E402


def expected_failed_checks(estimator):
    """The checks that do not apply, with the reason (README, scikit-learn section)."""
    if estimator._algorithm_params():
        # The issue asks for BudgetClassifier(algorithm=..., **params).  This check reads only the
        # __init__ signature, so it counts the keyword parameters as stray attributes, although
        # get_params / set_params / clone handle them (test_keyword_parameters_are_parameters).
        return {"check_no_attributes_set_in_init": "algorithm parameters are **params, not named in __init__"}
    return {}


@parametrize_with_checks(
    [BudgetClassifier(), BudgetClassifier("projectron++", eta=0.1), BudgetClassifier("rbp", budget=5, seed=3)],
    expected_failed_checks=expected_failed_checks,
)
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def data(n=200, seed=0, d=5):
    return random_stream(n, d, seed)


def cli_learner(algorithm, X, y, gamma, **params):
    """The learner the CLI's pipeline builds, trained on the same examples in the same order."""
    learner = registry.get(algorithm)(Kernel("rbf", gamma), seed=0, **params)
    learner.learn(chunk_from_dense(X, y), np.where(y > 0, 1.0, -1.0))
    return learner


@pytest.mark.parametrize(
    "algorithm,params",
    [
        ("projectron++", {"eta": 0.3}),
        ("rbp", {"budget": 15}),
        ("forgetron", {"budget": 15}),
        ("spa", {"spa_lambda": 0.2}),
    ],
)
def test_fit_is_the_online_learner(algorithm, params):
    X, y = data()
    clf = BudgetClassifier(algorithm, gamma=0.5, **params).fit(X, y)
    ref = cli_learner(algorithm, X, y, 0.5, **params)
    h1, a1 = clf.learner_.state()
    h2, a2 = ref.state()
    assert h1 == h2
    assert_same_state(a1, a2)
    Xt, _ = data(100, seed=1)
    np.testing.assert_array_equal(clf.decision_function(Xt), ref.decision_function(chunk_from_dense(Xt, np.ones(100))))
    assert list(clf.classes_) == [-1.0, 1.0]


def test_sparse_input_is_the_same_as_dense():
    X, y = data()
    dense = BudgetClassifier("projectron", eta=0.2, gamma=0.5).fit(X, y)
    sparse = BudgetClassifier("projectron", eta=0.2, gamma=0.5).fit(sp.csr_matrix(X), y)
    Xt, _ = data(100, seed=1)
    np.testing.assert_array_equal(dense.decision_function(Xt), sparse.decision_function(sp.csc_matrix(Xt)))
    assert dense.learner_.counter("mistakes") == sparse.learner_.counter("mistakes")


def test_partial_fit_in_pieces_is_fit_in_one():
    X, y = data(300)
    whole = BudgetClassifier("projectron++", eta=0.3, gamma=0.5).fit(X, y)
    pieces = BudgetClassifier("projectron++", eta=0.3, gamma=0.5)
    for a in range(0, 300, 70):
        pieces.partial_fit(X[a : a + 70], y[a : a + 70], classes=[-1, 1])
    h1, a1 = whole.learner_.state()
    h2, a2 = pieces.learner_.state()
    assert h1 == h2
    assert_same_state(a1, a2)


def test_classes_arrive_mid_stream():
    X, y = data(200)
    names = np.where(y > 0, "a", "b")
    first = np.flatnonzero(names == "b")[:20]  # a first batch of class b only
    rest = np.setdiff1d(np.arange(200), first)
    clf = BudgetClassifier("perceptron", gamma=0.5)
    clf.partial_fit(X[first], names[first])
    assert list(clf.classes_) == ["b"]
    assert set(clf.predict(X[:5])) == {"b"}
    clf.partial_fit(X[rest], names[rest])
    assert list(clf.classes_) == ["a", "b"]
    # b came first and alone, so it is the learner's −1 class and "a" its +1; scikit-learn's positive
    # class is classes_[1] = "b": the decision function is the learner's f negated
    order = np.concatenate([first, rest])
    ref = cli_learner("perceptron", X[order], np.where(names[order] == "a", 1.0, -1.0), 0.5)
    Xt, _ = data(100, seed=1)
    f = ref.decision_function(chunk_from_dense(Xt, np.ones(100)))
    np.testing.assert_array_equal(clf.decision_function(Xt), -f)
    np.testing.assert_array_equal(clf.predict(Xt), np.where(f > 0, "a", "b"))
    with pytest.raises(ValueError, match="Only binary classification"):
        clf.partial_fit(X[:3], ["a", "b", "c"])


def test_keyword_parameters_are_parameters():
    clf = BudgetClassifier("projectron++", eta=0.25, gamma=0.5)
    assert clf.get_params()["eta"] == 0.25
    copy = clone(clf)
    assert copy.get_params() == clf.get_params() and copy is not clf
    X, y = data()
    clf.set_params(eta=0.0, algorithm="projectron")
    clf.fit(X, y)
    assert clf.learner_.hyper == {"eta": 0.0}
    assert clf.learner_.name == "projectron"
    # projectron with eta = 0 is the perceptron
    p = BudgetClassifier("perceptron", gamma=0.5).fit(X, y)
    assert clf.learner_.counter("mistakes") == p.learner_.counter("mistakes")


def test_bad_parameters_fail_in_fit_with_a_clear_message():
    X, y = data(50)
    BudgetClassifier("perceptron", eta=0.1)  # construction never fails
    with pytest.raises(ValueError, match="--eta does not apply to perceptron"):
        BudgetClassifier("perceptron", eta=0.1).fit(X, y)
    with pytest.raises(ValueError, match="no parameter etta"):
        BudgetClassifier("projectron", etta=0.1).fit(X, y)
    with pytest.raises(ValueError, match="unknown algorithm"):
        BudgetClassifier("svm").fit(X, y)
    with pytest.raises(ValueError, match="--eta must be"):
        BudgetClassifier("projectron", eta=-1.0).fit(X, y)


def test_pickle_and_to_model_predict_the_same(tmp_path):
    X, y = data()
    clf = BudgetClassifier("projectron++", eta=0.3, gamma=0.5).fit(X, y)
    Xt, _ = data(100, seed=1)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.decision_function(Xt), clf.decision_function(Xt))
    again.partial_fit(Xt, np.ones(100))  # the copy owns writable state and goes on learning
    path = tmp_path / "m.model"
    clf.to_model().save(path)
    model = Model.load(path)
    np.testing.assert_array_equal(
        model.learner.decision_function(chunk_from_dense(Xt, np.ones(100))), clf.decision_function(Xt)
    )
    assert model.labels.positive == 1.0 and model.labels.negative == -1.0


def test_default_gamma_is_one_over_features():
    X, y = data(d=8)
    assert BudgetClassifier().fit(X, y).learner_.kernel.gamma == pytest.approx(1 / 8)
    assert Kernel.of(KernelSpec(), 8).gamma == pytest.approx(1 / 8)


def test_a_multiclass_algorithm_is_refused_with_a_clear_message():
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="mc-perceptron is a multiclass learner"):
        BudgetClassifier(algorithm="mc-perceptron").fit(X, y)
