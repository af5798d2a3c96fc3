"""budgetcli.river.BudgetClassifier and BudgetRegressor: River's own estimator checks, and agreement with
`budgetlearn train`."""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import pickle
import random

import numpy as np
import pytest

pytest.importorskip("river")
pd = pytest.importorskip("pandas")
from click.testing import CliRunner  # noqa: E402
from river import checks, datasets, evaluate, metrics, preprocessing  # noqa: E402

from budgetcli.learning import algorithms  # noqa: E402
from budgetcli.base import modelfile  # noqa: E402
from budgetcli.entry import main  # noqa: E402
from budgetcli.model.model import Model  # noqa: E402
from budgetcli.base.modelfile import ModelFileError  # noqa: E402
from budgetcli.river import BudgetClassifier, BudgetRegressor  # noqa: E402

from .helpers import assert_same_state  # noqa: E402
from budgetcli.learning.retired import ARCHIVE_ARRAYS  # noqa: E402

CONFIGS = {
    "perceptron": {},
    "rbp": {"algorithm": "rbp", "budget": 5, "seed": 3},
    "projectron++": {"algorithm": "projectron++", "eta": 0.1},
    "pa-linear": {"algorithm": "pa", "kernel": "linear"},
    "mc-perceptron": {"algorithm": "mc-perceptron"},
    "bpegasos": {"algorithm": "bpegasos", "budget": 10, "maintenance": "merge"},
    "bpegasos-smallest": {"algorithm": "bpegasos", "budget": 10, "maintenance": "smallest"},
}
# Merging finds the merged point by a golden-section search that stops at 1e-8 (pegasos.py), so the
# order in which a shuffled example's features are summed can move a merged point by ~1e-8 and a
# class probability of ~1e-17 by more than River's 1e-6 relative tolerance: the other
# maintenances run this check; merging is checked for everything else.
NOT_FOR = {("bpegasos", "check_shuffle_features_no_impact")}
# The regressor's prediction is the score itself, compared at River's 1e-6: on TrumpApproval's unscaled
# features (ordinal_date ≈ 7.4e5) the rbf kernel's ‖a‖² + ‖b‖² − 2a·b, summed in another feature order,
# rounds differently enough to move f by ~4e-5 relative; behind River's StandardScaler the two orders agree
# to 4e-15 (test_shuffled_features_agree_behind_a_scaler).  A classifier's decisions hide it.
REGRESSOR_CONFIGS = {f"regressor-{i}": config for i, config in enumerate(BudgetRegressor._unit_test_params())}
NOT_FOR |= {(name, "check_shuffle_features_no_impact") for name in REGRESSOR_CONFIGS}


def river_checks():
    """(id, config, check) for every check River's check_estimator runs (river.checks.yield_checks);
    none is expected to fail."""
    if importlib.util.find_spec("sklearn") is None:  # river.checks builds some of its data sets with it
        yield pytest.param(None, None, None, marks=pytest.mark.skip(reason="river.checks needs scikit-learn"))
        return
    for name, config in [*CONFIGS.items(), *REGRESSOR_CONFIGS.items()]:
        cls = BudgetRegressor if name in REGRESSOR_CONFIGS else BudgetClassifier
        for i, check in enumerate(checks.yield_checks(cls(**config))):
            if (name, check.__name__.split("(")[0]) not in NOT_FOR:
                yield pytest.param(cls, config, check, id=f"{name}-{check.__name__}-{i}")


@pytest.mark.parametrize("cls,config,check", list(river_checks()))
def test_river_checks(cls, config, check):
    random.seed(0)  # some checks shuffle with the global generator: the same shuffle in any test order
    check(cls(**config).clone())  # as check_estimator calls them


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def phishing():
    return list(datasets.Phishing())


def write_libsvm(path, rows, columns, label):
    """The rows as a LIBSVM file: feature `name` is index columns[name], labels label(y)."""
    with open(path, "w") as f:
        for x, y in rows:
            feats = sorted((columns[k], float(v)) for k, v in x.items() if v != 0)
            f.write(f"{label(y)} " + " ".join(f"{j}:{v!r}" for j, v in feats) + "\n")


def cli_model(tmp_path, rows, columns, label, *options):
    data, out = tmp_path / "stream.txt", tmp_path / "cli.model"
    write_libsvm(data, rows, columns, label)
    r = run("train", *options, "--json", "-q", "--save-resume", data, "-o", out)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout), Model.load(out, resume=True)


def assert_same_learner(a, b):
    h1, a1 = a.state()
    h2, a2 = b.state()
    assert h1 == h2
    for name in type(a).average_arrays:  # a plain model file leaves the multiclass running average out
        a1.pop(name), a2.pop(name)
    for name in ARCHIVE_ARRAYS:  # what an evicting learner keeps for the CLI's average, beside the online learner
        a1.pop(name, None), a2.pop(name, None)
    assert_same_state(a1, a2)


@pytest.mark.parametrize(
    "algorithm,params,options",
    [
        ("perceptron", {}, []),
        ("rbp", {"budget": 30}, ["-B", "30"]),
        ("projectron++", {"eta": 0.3}, ["--eta", "0.3"]),
    ],
)
def test_progressive_validation_makes_the_mistakes_of_budgetlearn_train(tmp_path, algorithm, params, options):
    rows = phishing()
    model = BudgetClassifier(algorithm, gamma=0.5, average=False, **params)  # predicts as the online rounds
    metric = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    cm = metric.cm
    errors = cm.total_weight - sum(cm[c][c] for c in cm.classes)
    # the stream in LIBSVM form: columns in order of first appearance (every row has the same 9 keys)
    columns = {name: j + 1 for j, name in enumerate(rows[0][0])}
    summary, cli = cli_model(
        tmp_path, rows, columns, lambda y: "+1" if y else "-1", "-a", algorithm, "--gamma", "0.5", *options
    )
    # every round was scored: a fresh binary model predicts False (f = 0), the first label is True, so
    # round 1 is a mistake for both; with an rbf kernel and a non-empty support set f(x) is never 0,
    # so no later round is a tie, where the two counts could differ (see the module's docstring)
    assert rows[0][1] is True
    assert cm.total_weight == summary["examples"] == 1250
    assert errors == summary["mistakes"] == model.learner.counter("mistakes")
    assert model.features == columns
    assert_same_learner(model.learner, cli.learner)


def test_multiclass_learn_one_and_learn_many_are_budgetlearn_train(tmp_path):
    rows = list(datasets.ImageSegments())
    names = list(dict.fromkeys(y for _, y in rows))  # classes in order of first appearance
    columns = {name: j + 1 for j, name in enumerate(rows[0][0])}
    _, cli = cli_model(
        tmp_path,
        rows,
        columns,
        lambda y: names.index(y) + 1,
        "-a",
        "mrbp",
        "-B",
        "40",
        "--gamma",
        "0.001",
        "--seed",
        "4",
    )
    one = BudgetClassifier("mrbp", budget=40, gamma=0.001, seed=4)
    for x, y in rows:
        one.learn_one(x, y)
    many = BudgetClassifier("mrbp", budget=40, gamma=0.001, seed=4)
    X, y = pd.DataFrame([x for x, _ in rows]), pd.Series([y for _, y in rows])
    for a in range(0, len(rows), 500):
        many.learn_many(X[a : a + 500], y[a : a + 500])
    assert one.classes == many.classes == {name: i for i, name in enumerate(names)}
    assert one.features == many.features == columns
    assert_same_learner(one.learner, cli.learner)
    assert_same_learner(many.learner, cli.learner)
    assert one.predict_many(X[:300]).tolist() == [one.predict_one(x) for x, _ in rows[:300]]


def test_learn_many_numbers_features_as_learn_one_does():
    """Row by row, left to right; NaN and None are absent; a present zero takes its column."""
    batch = [{"a": 1.0, "b": 0.0}, {"c": 2.0, "a": -1.0}, {"d": np.nan, "e": 0.5, "b": 1.5}, {"d": 3.0, "f": None}]
    labels = [True, False, True, False]
    X = pd.DataFrame(batch, columns=["f", "e", "d", "c", "b", "a"])  # columns in another order than the rows'
    many = BudgetClassifier("perceptron", gamma=0.3)
    many.learn_many(X, pd.Series(labels))
    one = BudgetClassifier("perceptron", gamma=0.3)
    for x, y in zip(X.to_dict("records"), labels):  # rows as dicts in the frame's column order
        one.learn_one(x, y)
    # row 0 adds b (present with 0) and a, in the frame's column order; row 1 adds c, row 2 e, row 3 d;
    # f is never present
    assert many.features == one.features == {"b": 1, "a": 2, "c": 3, "e": 4, "d": 5}
    assert_same_learner(many.learner, one.learner)
    # gamma=None is 1/d with d the features of the first call: 2 for the first row, 5 for the frame
    first_one, first_many = BudgetClassifier(), BudgetClassifier()
    first_one.learn_one(batch[0], True)
    first_many.learn_many(X, pd.Series(labels))
    assert (first_one.learner.kernel.gamma, first_many.learner.kernel.gamma) == (1 / 2, 1 / 5)


def test_predictions_many_are_predictions_one_with_unseen_and_missing_features():
    rows = phishing()[:200]
    model = BudgetClassifier("rbp", budget=20, gamma=0.5)
    for x, y in rows[:150]:
        model.learn_one(x, y)
    queries = [dict(x) for x, _ in rows[150:]]
    for i, q in enumerate(queries):
        if i % 3 == 0:
            q["unseen"] = 0.5 * i
        if i % 4 == 0:
            q.pop("https")
    X = pd.DataFrame(queries)
    assert model.predict_many(X).tolist() == [model.predict_one(q) for q in queries]
    proba = model.predict_proba_many(X)
    assert list(proba.columns) == [False, True]
    for i, q in enumerate(queries):
        assert proba.iloc[i].to_dict() == model.predict_proba_one(q)
    assert "unseen" not in model.features


def test_an_unseen_feature_adds_only_its_norm():
    model = BudgetClassifier("perceptron", gamma=0.25)
    model.learn_one({"a": 1.0, "b": 2.0}, True)  # a mistake (f = 0): f = k(x0, ·) from now on
    x = {"a": 0.5, "new": 3.0}
    before = pickle.dumps(model)
    f = math.exp(-0.25 * ((0.5 - 1.0) ** 2 + 2.0**2 + 3.0**2))
    assert model.predict_proba_one(x)[True] == pytest.approx(1 / (1 + math.exp(-f)), rel=1e-15)
    assert pickle.dumps(model) == before  # prediction keeps no new feature
    linear = BudgetClassifier("perceptron", kernel="linear")
    linear.learn_one({"a": 1.0, "b": 2.0}, True)
    assert linear.predict_proba_one({"a": 0.5, "new": 3.0})[True] == pytest.approx(1 / (1 + math.exp(-0.5)), rel=1e-15)


def test_binary_labels():
    model = BudgetClassifier("perceptron", gamma=1.0)
    assert model.predict_proba_one({"a": 1.0}) == {False: 0.5, True: 0.5}  # nothing learnt: River's bools
    assert model.predict_one({"a": 1.0}) is False
    model.learn_one({"a": 1.0}, np.bool_(False))
    assert model.classes == {False: -1.0, True: 1.0}  # bools: both known at once, True is +1
    assert set(model.predict_proba_one({"a": 1.0})) == {False, True}

    words = BudgetClassifier("perceptron", gamma=1.0)
    words.learn_one({"a": 1.0}, "spam")
    assert words.classes == {"spam": -1.0}  # a first label that is not a number > 0 is −1
    assert words.predict_proba_one({"a": 1.0}) == {"spam": 1.0}
    assert words.predict_one({"b": 1.0}) == "spam"
    words.learn_one({"b": 1.0}, "ham")
    assert words.classes == {"spam": -1.0, "ham": 1.0}
    assert list(words.predict_proba_one({"a": 1.0})) == ["spam", "ham"]
    before = pickle.dumps(words)
    with pytest.raises(
        ValueError,
        match=r"label 'eggs': a third label value in binary training \(labels so far: "
        r"'spam', 'ham'\); this algorithm is binary-only, the multiclass ones are: "
        r".*mc-perceptron",
    ):
        words.learn_one({"c": 1.0}, "eggs")
    with pytest.raises(ValueError, match="a third label"):
        words.learn_many(pd.DataFrame([{"a": 1.0}, {"c": 1.0}]), pd.Series(["ham", "eggs"]))
    assert pickle.dumps(words) == before  # the refused example changed nothing, nor its feature

    numbers = BudgetClassifier("perceptron", gamma=1.0)
    numbers.learn_one({"a": 1.0}, 2)
    numbers.learn_one({"b": 1.0}, 1)
    assert numbers.classes == {2: 1.0, 1: -1.0}  # the CLI's rule for a first label seen alone: 2 > 0 is +1


def test_multiclass_labels_of_any_kind():
    model = BudgetClassifier("mc-perceptron", gamma=1.0)
    assert model.predict_one({"a": 1.0}) is None and model.predict_proba_one({"a": 1.0}) == {}
    stream = [({"a": 1.0}, ("x", 1)), ({"b": 1.0}, 7), ({"c": 1.0}, "z"), ({"a": 1.0, "c": 0.5}, 7)]
    for x, y in stream:
        model.learn_one(x, y)
    assert model.classes == {("x", 1): 0, 7: 1, "z": 2}
    p = model.predict_proba_one({"c": 1.0})
    assert list(p) == [("x", 1), 7, "z"] and math.isclose(sum(p.values()), 1.0)
    scores = model._scores(model._frame(pd.DataFrame([{"c": 1.0}]))[0])[0]  # of the averaged hypothesis
    assert p == pytest.approx(dict(zip(p, np.exp(scores) / np.exp(scores).sum())), rel=1e-12)  # softmax
    assert model.predict_one({"c": 1.0}) == list(p)[int(np.argmax(scores))]


def test_a_zero_score_predicts_the_negative_label_but_is_a_learner_mistake():
    model = BudgetClassifier("perceptron", kernel="linear")
    model.learn_one({"a": 1.0}, True)
    x = {"b": 1.0}  # orthogonal to the support vector: f(x) = 0
    assert model.predict_one(x) is False and model.predict_proba_one(x) == {False: 0.5, True: 0.5}
    model.learn_one(x, False)  # predicted right, yet y·f = 0 is a mistake for the learner (its update)
    assert model.learner.counter("mistakes") == 2

    classes = BudgetClassifier("mc-perceptron", kernel="linear")
    classes.learn_one({"a": 1.0}, "A")  # one class known: no rival, no mistake
    classes.learn_one({"b": 1.0}, "B")  # f_B = 0 = f_A: a tie, a mistake
    x = {"c": 1.0}  # orthogonal to both support vectors: f_A = f_B = 0
    assert classes.predict_one(x) == "A"  # the class seen first
    classes.learn_one(x, "A")  # predicted right, yet f_A ≤ f_B is a mistake for the learner
    assert classes.learner.counter("mistakes") == 2


def test_bad_values_are_refused_and_change_nothing():
    model = BudgetClassifier("perceptron", gamma=1.0)
    model.learn_one({"a": 1.0}, True)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="feature 'colour' has the value 'red', not a number; encode it first"):
        model.learn_one({"b": 1.0, "colour": "red"}, False)
    with pytest.raises(ValueError, match="feature 'b' is inf; the kernels need finite values"):
        model.learn_one({"b": math.inf}, False)
    with pytest.raises(ValueError, match="column 'colour' of X holds values that are not numbers"):
        model.learn_many(pd.DataFrame({"b": [1.0], "colour": ["red"]}), pd.Series([False]))
    with pytest.raises(ValueError, match="column 'b' of X holds an infinite value"):
        model.learn_many(pd.DataFrame({"a": [1.0, 2.0], "b": [1.0, -math.inf]}), pd.Series([False, True]))
    with pytest.raises(ValueError, match="duplicate column names"):
        model.learn_many(pd.DataFrame([[1.0, 2.0]], columns=["a", "a"]), pd.Series([False]))
    assert pickle.dumps(model) == before


@pytest.mark.parametrize(
    "args,kwargs,message",
    [
        (("svm",), {}, "unknown algorithm 'svm'"),
        (("perceptron",), {"eta": 0.1}, "--eta does not apply to perceptron"),
        (("projectron",), {"etta": 0.1}, "BudgetClassifier has no parameter etta"),
        (("projectron",), {"eta": -1.0}, "--eta must be"),
        (("perceptron",), {"kernel": "sigmoid"}, "unknown kernel 'sigmoid'"),
        (("perceptron",), {"gamma": 1.0, "sigma": 1.0}, "give --gamma or --sigma, not both"),
        (("bpegasos",), {"kernel": "linear"}, "merge"),
        (("perceptron",), {"rbf_exp": "fast"}, "exp must be one of vectorised, libm"),
    ],
)
def test_bad_parameters_fail_at_construction(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        BudgetClassifier(*args, **kwargs)


def test_pickle_and_clone():
    rows = phishing()
    model = BudgetClassifier("projectron++", eta=0.3, gamma=0.5)
    for x, y in rows[:300]:
        model.learn_one(x, y)
    copy = pickle.loads(pickle.dumps(model))
    for x, y in rows[300:600]:
        assert copy.predict_proba_one(x) == model.predict_proba_one(x)
        copy.learn_one(x, y)
        model.learn_one(x, y)
    assert_same_learner(copy.learner, model.learner)
    fresh = model.clone()
    assert repr(fresh) == repr(model) and fresh.learner is None and fresh.features == {} and fresh.classes == {}


def test_save_load_and_the_cli_read_the_same_model(tmp_path):
    rows = phishing()
    model = BudgetClassifier("rbp", budget=25, gamma=0.5, seed=2)
    for x, y in rows[:600]:
        model.learn_one(x, y)
    path = tmp_path / "r.model"
    model.save(path)
    loaded = BudgetClassifier.load(path)
    assert repr(loaded) == repr(model)
    assert loaded.features == model.features and loaded.classes == model.classes
    assert_same_learner(loaded.learner, model.learner)

    # the CLI reads the file: info, predict (labels spelt as River's), and train --resume goes on exactly
    r = run("info", "--json", path)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["labels"] == {"kind": "binary", "positive": "True", "negative": "False"}
    rest = tmp_path / "rest.txt"
    write_libsvm(rest, rows[600:], model.features, lambda y: int(y))
    r = run("predict", path, rest)
    assert r.exit_code == 0, r.output
    assert r.stdout.split() == [str(model.predict_one(x)) for x, _ in rows[600:]]
    r = run("eval", "--json", path, rest)
    assert r.exit_code == 0, r.output
    right = sum(model.predict_one(x) == y for x, y in rows[600:])
    assert json.loads(r.stdout)["accuracy"] == pytest.approx(right / len(rows[600:]), abs=1e-12)
    r = run("train", "--resume", path, rest, "-o", tmp_path / "resumed.model", "-q")
    assert r.exit_code == 0, r.output
    for x, y in rows[600:]:
        loaded.learn_one(x, y)
    assert_same_learner(loaded.learner, Model.load(tmp_path / "resumed.model").learner)


@pytest.mark.parametrize("exp", ["vectorised", "libm"])
def test_rbf_exp_is_train_s_rbf_exp(tmp_path, exp):
    """rbf_exp is `train --rbf-exp`, and a loaded classifier keeps its file's exp: libm's for a file from
    before the choice, whose saved parameters do not name it."""
    rows = phishing()[:400]
    model = BudgetClassifier("projectron++", gamma=0.5, eta=0.3, rbf_exp=exp)
    for x, y in rows:
        model.learn_one(x, y)
    columns = {name: j + 1 for j, name in enumerate(rows[0][0])}
    _, cli = cli_model(
        tmp_path,
        rows,
        columns,
        lambda y: "+1" if y else "-1",
        "-a",
        "projectron++",
        "--gamma",
        "0.5",
        "--eta",
        "0.3",
        "--rbf-exp",
        exp,
    )
    assert model.learner.kernel.exp == exp
    assert_same_learner(model.learner, cli.learner)

    path = tmp_path / "r.model"
    model.save(path)
    header, arrays = modelfile.load(path)
    params = header["river"]["params"]["dict"]  # [name, value] pairs (river.learner.to_json)
    assert ["rbf_exp", exp] in params
    params.remove(["rbf_exp", exp])  # as a file written before rbf_exp was a parameter
    modelfile.save(path, header, arrays)
    loaded = BudgetClassifier.load(path)
    assert loaded.rbf_exp == exp
    for x, y in rows[:50]:
        loaded.learn_one(x, y)
        model.learn_one(x, y)
    assert_same_learner(loaded.learner, model.learner)


def test_save_keeps_names_and_labels_of_several_types(tmp_path):
    model = BudgetClassifier("mc-pa", kernel="poly", gamma=0.5, degree=2, coef0=1.0)
    stream = [({("word", 1): 1.0, 3: 2.0}, 10), ({"x": 1.5, 2.5: 1.0, True: 0.5}, ("t", None)), ({3: 1.0}, "s")]
    for x, y in stream:
        model.learn_one(x, y)
    model.save(tmp_path / "m.model")
    loaded = BudgetClassifier.load(tmp_path / "m.model")
    assert list(loaded.features.items()) == list(model.features.items())
    assert list(loaded.classes.items()) == list(model.classes.items())
    assert loaded._get_params() == model._get_params()
    assert [loaded.predict_proba_one(x) for x, _ in stream] == [model.predict_proba_one(x) for x, _ in stream]
    # the CLI sees a number as itself and other labels as the smallest whole numbers no label takes (0, 1),
    # spelt as the labels where a data file could hold them as a token (no whitespace, printable ASCII),
    # else as the number: ('t', None) holds a space
    labels = Model.load(tmp_path / "m.model").labels
    assert labels.names == ["10", "0", "s"] and labels.classes == [10.0, 0.0, 1.0]
    assert loaded.predict_one(stream[1][0]) == ("t", None)  # River's own labels are its own


def test_save_refusals(tmp_path):
    with pytest.raises(ValueError, match="has learnt nothing yet"):
        BudgetClassifier().save(tmp_path / "a.model")
    model = BudgetClassifier()
    model.learn_one({frozenset({"a"}): 1.0}, True)
    with pytest.raises(ValueError, match=r"cannot save frozenset\(\{'a'\}\) \(frozenset\) in a model file"):
        model.save(tmp_path / "a.model")
    assert not (tmp_path / "a.model").exists()
    plain = tmp_path / "plain.model"
    model.learn_one({"b": 1.0}, False)
    model.to_model().save(plain)  # a model file without the River header field
    with pytest.raises(ModelFileError, match="plain.model: not written by budgetcli.river"):
        BudgetClassifier.load(plain)


def test_in_a_pipeline_with_learn_many():
    rows = phishing()[:400]
    X, y = pd.DataFrame([x for x, _ in rows]), pd.Series([y for _, y in rows])
    model = preprocessing.StandardScaler() | BudgetClassifier("rbp", budget=30, gamma=0.2)
    model.learn_many(X[:300], y[:300])
    assert model.predict_many(X[300:]).tolist() == [model.predict_one(x) for x, _ in rows[300:]]
    assert model["BudgetClassifier"].learner.counter("examples") == 300


@pytest.mark.parametrize("average", [True, None])
def test_average_predicts_as_the_model_train_writes_by_default(tmp_path, average):
    """average=True predicts with the averaged hypothesis, as `budgetlearn train` writes it by default (and
    so does average=None, the algorithm's default): the same predictions on the stream, and its saved file
    predicts with the average too; average=False with the last hypothesis."""
    rows = phishing()
    columns = {name: j + 1 for j, name in enumerate(rows[0][0])}
    model = BudgetClassifier("perceptron", gamma=0.5, average=average)
    for x, y in rows:
        model.learn_one(x, y)
    _, cli = cli_model(tmp_path, rows, columns, lambda y: "+1" if y else "-1", "-a", "perceptron", "--gamma", "0.5")
    assert cli.hypothesis == "running-average"
    X = pd.DataFrame([x for x, _ in rows])
    f = cli.scorer().decision_function(csr_chunk_of(X, columns))
    ours = model.predict_many(X).tolist()
    assert ours == [f_i > 0 for f_i in f]
    online = BudgetClassifier("perceptron", gamma=0.5, average=False)
    for x, y in rows:
        online.learn_one(x, y)
    assert online.predict_many(X).tolist() != ours  # the option changes the predictions
    model.save(tmp_path / "avg.model")
    assert Model.load(tmp_path / "avg.model").hypothesis == "running-average"


def csr_chunk_of(X, columns):
    from budgetcli.io.arrays import csr_chunk

    order = sorted(X.columns, key=columns.get)
    return csr_chunk(X[order].to_numpy(float), np.zeros(len(X)), np.array([columns[c] for c in order]))


def test_average_of_an_evicting_learner_saves_its_archive_and_goes_on_exactly(tmp_path):
    """average=True with a learner that evicts keeps the archive of evicted vectors `budgetlearn train`
    keeps (the same learner, archive included, as the CLI's run over the stream), and `save` writes it:
    a loaded classifier goes on as the one that was never saved, and predicts as it does."""
    rows = phishing()
    columns = {name: j + 1 for j, name in enumerate(rows[0][0])}
    model = BudgetClassifier("rbp", budget=5, gamma=0.5, seed=2, average=True)
    for x, y in rows[:900]:
        model.learn_one(x, y)
    assert model.learner.retired.compressions > 0
    model.save(tmp_path / "r.model")
    loaded = BudgetClassifier.load(tmp_path / "r.model")
    for x, y in rows[900:]:
        model.learn_one(x, y)
        loaded.learn_one(x, y)
    assert_same_state(loaded.learner.state()[1], model.learner.state()[1])
    X = pd.DataFrame([x for x, _ in rows])
    assert loaded.predict_proba_many(X).equals(model.predict_proba_many(X))
    options = ["-a", "rbp", "-B", "5", "--gamma", "0.5", "--seed", "2", "--average"]
    _, cli = cli_model(tmp_path, rows, columns, lambda y: "+1" if y else "-1", *options)
    assert_same_state(cli.learner.state()[1], model.learner.state()[1])


def test_an_example_refused_for_overflow_keeps_neither_its_features_nor_its_label():
    model = BudgetClassifier("perceptron", kernel="linear")
    with pytest.raises(ValueError, match="row 0: the example's squared norm"):
        model.learn_one({"a": 1e200}, "x")
    assert (model.learner, model.features, model.classes) == (None, {}, {})
    model.learn_one({"a": 1.0}, "x")
    with pytest.raises(ValueError, match="row 0: the example's squared norm"):
        model.learn_one({"z": 1e200}, "y")
    assert (model.learner.counter("examples"), model.features, model.classes) == (1, {"a": 1}, {"x": -1.0})
    # many at a time: the rows before the refused one were learnt, and only theirs are kept
    many = BudgetClassifier("mc-perceptron", kernel="linear")
    X = pd.DataFrame({"a": [1.0, 0.5, None], "b": [None, 2.0, None], "c": [None, None, 1e200]})
    with pytest.raises(ValueError, match="row 2: the example's squared norm"):
        many.learn_many(X, pd.Series(["p", "q", "r"]))
    assert (many.learner.counter("examples"), many.features, many.classes) == (2, {"a": 1, "b": 2}, {"p": 0, "q": 1})
    many.learn_one({"d": 1.0}, "s")  # the next new feature and class take the next column and code
    assert many.features == {"a": 1, "b": 2, "d": 3} and many.classes == {"p": 0, "q": 1, "s": 2}


def regression_rows(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    rows = []
    for a, b, c in rng.uniform(-1, 1, (n, 3)).tolist():
        x = {"a": a, "b": b} if c > -0.6 else {"b": b, "c": c}  # features arrive in several orders
        rows.append((x, math.sin(3 * a) + b * b + 0.05 * c))
    return rows


@pytest.mark.parametrize("algorithm", sorted(n for n, c in algorithms.load_all().items() if "regression" in c.tasks))
def test_the_regressor_is_budgetlearn_train_both_ways(tmp_path, algorithm):
    """learn_one over a stream is `budgetlearn train --task regression` on its file (the same learner, and
    River's progressive MSE is train's online MSE); learn_many is learn_one; the saved file predicts in the
    CLI what predict_one does, and train --resume of it goes on as the loaded regressor does."""
    rows, rest = regression_rows(300, 1), regression_rows(100, 2)
    model = BudgetRegressor(algorithm, gamma=2.0)
    squared = 0.0
    for x, y in rows:
        squared += (y - model.predict_one(x)) ** 2
        model.learn_one(x, y)
    summary, cli = cli_model(
        tmp_path, rows, model.features, repr, "--task", "regression", "-a", algorithm, "--gamma", "2"
    )
    assert_same_learner(model.learner, cli.learner)
    assert summary["online_mse"] == pytest.approx(squared / len(rows), rel=1e-12)
    frame = BudgetRegressor(algorithm, gamma=2.0)
    frame.learn_many(pd.DataFrame([x for x, _ in rows]), pd.Series([y for _, y in rows]))
    assert_same_learner(frame.learner, model.learner)
    X = pd.DataFrame([x for x, _ in rest])
    assert frame.predict_many(X).tolist() == [model.predict_one(x) for x, _ in rest]

    path = tmp_path / "r.model"
    model.save(path)
    loaded = BudgetRegressor.load(path)
    assert repr(loaded) == repr(model) and loaded.features == model.features
    write_libsvm(tmp_path / "rest.txt", rest, model.features, repr)
    r = run("predict", path, tmp_path / "rest.txt")
    assert r.exit_code == 0, r.output
    assert r.stdout.split() == [f"{model.predict_one(x):.10g}" for x, _ in rest]
    r = run("train", "--resume", path, tmp_path / "rest.txt", "-o", tmp_path / "resumed.model", "-q", "--save-resume")
    assert r.exit_code == 0, r.output
    for x, y in rest:
        loaded.learn_one(x, y)
    assert_same_learner(loaded.learner, Model.load(tmp_path / "resumed.model", resume=True).learner)


@pytest.mark.parametrize("algorithm, rel", [("qklms", 1e-12), (None, 1e-9)])
def test_shuffled_features_agree_behind_a_scaler(algorithm, rel):
    """River's shuffle check, behind its StandardScaler (see REGRESSOR_CONFIGS): predictions within 1e-12 for
    an LMS filter; the default, krlst, grows the summation order's last-place differences through its
    inverse Q to ~4e-11 relative on this stream (River's own check allows 1e-6)."""
    stream = list(datasets.TrumpApproval())[:200]
    a = preprocessing.StandardScaler() | BudgetRegressor(algorithm)
    b = preprocessing.StandardScaler() | BudgetRegressor(algorithm)
    rng = random.Random(0)
    for x, y in stream:
        names = list(x)
        rng.shuffle(names)
        shuffled = {k: x[k] for k in names}
        assert b.predict_one(shuffled) == pytest.approx(a.predict_one(x), rel=rel)
        a.learn_one(x, y)
        b.learn_one(shuffled, y)


def test_the_tasks_refuse_each_other_in_one_line(tmp_path):
    classifier = BudgetClassifier("mc-perceptron")
    classifier.learn_one({"a": 0.5}, 0.5)
    classifier.learn_one({"a": 1.5}, 1.5)
    with pytest.raises(ValueError, match="not all whole numbers.*budgetcli.river.BudgetRegressor learns"):
        classifier.learn_one({"a": 2.5}, 2.5)
    assert len(classifier.classes) == 2  # the refused example changed nothing
    with pytest.raises(ValueError, match="BudgetRegressor learns"):
        BudgetClassifier().learn_many(pd.DataFrame({"a": [0.1, 0.2, 0.3]}), pd.Series([0.1, 0.2, 0.7]))
    with pytest.raises(ValueError, match="perceptron learns classification, not regression"):
        BudgetRegressor("perceptron")
    with pytest.raises(ValueError, match="not a finite number"):
        BudgetRegressor().learn_one({"a": 1.0}, math.inf)
    regressor = BudgetRegressor("klms")
    regressor.learn_one({"a": 1.0}, 0.3)
    regressor.save(tmp_path / "r.model")
    classifier.save(tmp_path / "c.model")
    with pytest.raises(ValueError, match=r"a regression model \(budgetcli.river.BudgetRegressor.load takes it\)"):
        BudgetClassifier.load(tmp_path / "r.model")
    with pytest.raises(ValueError, match=r"a classification model \(budgetcli.river.BudgetClassifier.load"):
        BudgetRegressor.load(tmp_path / "c.model")
