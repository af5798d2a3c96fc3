"""Class and sample weights (issue #46): `train -wLABEL W` / `--class-weight LABEL:W`, the Python API's
`sample_weight`, scikit-learn's `class_weight` and `sample_weight`, River's `learn_one(x, y, w)`; and
`predict --threshold T`.  How each algorithm takes a weight is tested against its reference in
tests/test_contract.py; here, that every edge hands the weights to it alike, keeps them, and refuses
what it cannot take in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import budgetcli
from budgetcli.base import registry
from budgetcli.entry import main
from budgetcli.io.libsvm import read_all
from budgetcli.model.model import Model
from budgetcli.model.spec import TrainSpec

from .helpers import SAMPLE_DATA, assert_same_state


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="budgetlearn")


@pytest.fixture(scope="module")
def a9a_part(tmp_path_factory):
    """The first 2,000 lines of a9a to train on, 2,000 of a9a.t to test on."""
    d = tmp_path_factory.mktemp("a9a")
    (d / "train").write_text("".join((SAMPLE_DATA / "a9a").read_text().splitlines(keepends=True)[:2000]))
    (d / "test").write_text("".join((SAMPLE_DATA / "a9a.t").read_text().splitlines(keepends=True)[:2000]))
    return d


def recall_and_accuracy(model_path, test) -> tuple[float, float]:
    report = json.loads(run("eval", "--json", model_path, test).stdout)
    return report["classes"]["+1"]["recall"], report["accuracy"]


def test_class_weights_move_recall_as_libsvm_s_w_does(a9a_part, tmp_path):
    """-w1 W raises the recall of +1 as W grows (LIBSVM's -w1 W on a9a: bench/class_weights.py), svm-train's
    spelling and --class-weight make the same file, and a weight of 1 is the unweighted file byte for byte."""
    data, test = a9a_part / "train", a9a_part / "test"
    recalls = []
    for w in ("1", "2", "3"):
        out = tmp_path / f"w{w}.model"
        assert run("train", "-q", "-w1", w, data, "-o", out).exit_code == 0
        recalls.append(recall_and_accuracy(out, test)[0])
    assert recalls[0] < recalls[1] < recalls[2] and recalls[2] - recalls[0] > 0.1, recalls
    assert run("train", "-q", "--class-weight", "1:3", data, "-o", tmp_path / "long.model").exit_code == 0
    assert (tmp_path / "long.model").read_bytes() == (tmp_path / "w3.model").read_bytes()
    assert run("train", "-q", data, "-o", tmp_path / "none.model").exit_code == 0
    assert (tmp_path / "none.model").read_bytes() == (tmp_path / "w1.model").read_bytes()
    assert run("train", "-q", "-w-1", "0.5", data, "-o", tmp_path / "neg.model").exit_code == 0
    assert recall_and_accuracy(tmp_path / "neg.model", test)[0] > recalls[0]  # the other class weighs less
    model = Model.load(tmp_path / "w3.model")
    assert model.class_weight == {1.0: 3.0} and model.run["class_weight"] == [[1.0, 3.0]]
    assert json.loads(run("info", "--json", tmp_path / "w3.model").stdout)["class_weight"] == {"+1": 3.0}
    assert "class weights   +1: 3" in run("info", tmp_path / "w3.model").stdout.splitlines()


def test_a_resumed_run_keeps_its_class_weights(a9a_part, tmp_path):
    """A model trained with -w goes on with its weights: two days resumed are the one run, byte for byte;
    a resume that gives weights is refused (the model's own settings go on)."""
    lines = (a9a_part / "train").read_text().splitlines(keepends=True)
    (tmp_path / "day1").write_text("".join(lines[:1000]))
    (tmp_path / "day2").write_text("".join(lines[1000:]))
    one, days = tmp_path / "one.model", tmp_path / "days.model"
    weighted = ("-q", "-w1", "2.5", "--gamma", "0.01", "--save-resume")  # γ given: the first block's differs
    assert run("train", *weighted, a9a_part / "train", "-o", one).exit_code == 0
    assert run("train", *weighted, tmp_path / "day1", "-o", days).exit_code == 0
    r = run("train", "-q", "--resume", days, "--save-resume", tmp_path / "day2", "-o", days)
    assert r.exit_code == 0, r.output
    assert days.read_bytes() == one.read_bytes()
    r = run("train", "--resume", days, "-w1", "3", tmp_path / "day2", "-o", days)
    assert r.exit_code == 2 and "--resume continues the model's own settings; drop -w" in r.stderr
    resumed = budgetcli.train(TrainSpec(), str(tmp_path / "day2"), resume=Model.load(one, resume=True))
    assert resumed.class_weight == {1.0: 2.5}
    with pytest.raises(ValueError, match="class weights"):
        budgetcli.train(TrainSpec(class_weight={-1: 2}), str(tmp_path / "day2"), resume=Model.load(one, resume=True))


@pytest.mark.parametrize(
    "args,message",
    [
        (("-a", "forgetron", "-w1", "3"), "forgetron takes no example or class weights (the algorithms that do: "),
        (("-a", "pa", "--class-weight", "1:3"), "pa takes no example or class weights"),
        (("-w1", "x"), "class weight '-w1 x': give LABEL:W (--class-weight 1:3) or -wLABEL W (-w1 3)"),
        (("--class-weight", "1"), "class weight '1': give LABEL:W"),
        (("--class-weight", "1:-2"), "class weight of label 1.0: -2.0 is not a finite number > 0"),
        (("--class-weight", "1:3", "-w1", "2"), "class weight '-w1 2': label 1 has a weight already"),
        (("-a", "rbp", "-w1", "2", "--backend", "serial"), "class weights are for a run in one process"),
    ],
)
def test_bad_class_weights_are_one_line_and_nothing_is_written(a9a_part, tmp_path, args, message):
    r = run("train", *args, a9a_part / "train", "-o", tmp_path / "m.model")
    assert r.exit_code == 2 and not (tmp_path / "m.model").exists()
    assert len(r.stderr.splitlines()) == 1 and message in r.stderr, r.stderr


def test_a_class_weight_of_a_label_the_data_lacks_is_warned(a9a_part, tmp_path):
    r = run("train", "-q", "--json", "-w2", "3", a9a_part / "train", "-o", tmp_path / "m.model")
    assert r.exit_code == 0
    assert "a class weight names 2, which no example of this run has" in json.loads(r.stdout)["warnings"]


def arrays(path: Path, n: int | None = None):
    chunk = read_all(path)
    X = np.zeros((len(chunk), chunk.n_features - 1))
    X[np.repeat(np.arange(len(chunk)), np.diff(chunk.indptr)), chunk.indices - 1] = chunk.values
    return (X, chunk.labels) if n is None else (X[:n], chunk.labels[:n])


def test_sample_weights_are_the_cost_of_each_row(a9a_part):
    """The Python API's sample_weight: a row of weight 0 is left out (the model of the data without it,
    bit for bit), weights multiply the class weights, and 1 everywhere is the unweighted model."""
    X, y = arrays(a9a_part / "train", 600)
    spec = TrainSpec("rbp", params={"budget": 50})
    plain = budgetcli.train(spec, X, y).learner.state()
    assert_same_state(budgetcli.train(spec, X, y, sample_weight=np.ones(600)).learner.state()[1], plain[1])
    w = np.where(np.arange(600) % 3 == 0, 0.0, 1.0)
    keep = w > 0
    assert_same_state(
        budgetcli.train(spec, X, y, sample_weight=w).learner.state()[1],
        budgetcli.train(spec, X[keep], y[keep]).learner.state()[1],
    )
    both = budgetcli.train(TrainSpec("rbp", params={"budget": 50}, class_weight={1: 2.0}), X, y, sample_weight=w + 1)
    product = budgetcli.train(spec, X, y, sample_weight=(w + 1) * np.where(y > 0, 2.0, 1.0))
    assert_same_state(both.learner.state()[1], product.learner.state()[1])
    with pytest.raises(ValueError, match="sample_weight:4: the weight is not a finite number ≥ 0"):
        budgetcli.train(spec, X[:10], y[:10], sample_weight=[1, 1, 1, -1, 1, 1, 1, 1, 1, 1][::-1][::-1])
    with pytest.raises(ValueError, match="no examples to train on: every weight is zero"):
        budgetcli.train(spec, X[:10], y[:10], sample_weight=np.zeros(10))
    with pytest.raises(ValueError, match="^forgetron takes no example or class weights"):
        budgetcli.train(TrainSpec("forgetron"), X[:10], y[:10], sample_weight=np.full(10, 2.0))
    with pytest.raises(TypeError, match="sample_weight is for arrays"):
        budgetcli.train(spec, str(a9a_part / "train"), sample_weight=np.ones(2000))


def test_scikit_learn_s_class_weight_and_sample_weight_are_train_s_weights(a9a_part):
    pytest.importorskip("sklearn")
    from sklearn.utils.class_weight import compute_class_weight

    from budgetcli.sklearn import BudgetClassifier

    X, y = arrays(a9a_part / "train", 800)
    labels = np.where(y > 0, "yes", "no")
    spec = TrainSpec(class_weight={1: 3.0})
    ours = BudgetClassifier(class_weight={"yes": 3.0}).fit(X, labels)
    assert_same_state(ours.learner_.state()[1], budgetcli.train(spec, X, y).learner.state()[1])
    assert ours.to_model().class_weight == {1.0: 3.0}
    balanced = BudgetClassifier(class_weight="balanced").fit(X, labels)
    weights = compute_class_weight("balanced", classes=np.array(["no", "yes"]), y=labels)
    expected = budgetcli.train(TrainSpec(class_weight={-1: weights[0], 1: weights[1]}), X, y)
    assert_same_state(balanced.learner_.state()[1], expected.learner.state()[1])
    w = np.linspace(0.5, 2.0, 800)
    fitted = BudgetClassifier("pa-i", gamma=0.01).fit(X, labels, sample_weight=w)
    assert_same_state(
        fitted.learner_.state()[1],
        budgetcli.train(TrainSpec("pa-i", budgetcli.KernelSpec(gamma=0.01)), X, y, sample_weight=w).learner.state()[1],
    )
    half = BudgetClassifier("pa-i", gamma=0.01).partial_fit(X[:400], labels[:400], sample_weight=w[:400])
    half.partial_fit(X[400:], labels[400:], sample_weight=w[400:])
    assert_same_state(half.learner_.state()[1], fitted.learner_.state()[1])
    with pytest.raises(ValueError, match="class_weight='balanced' is not supported for partial_fit"):
        BudgetClassifier(class_weight="balanced").partial_fit(X[:10], labels[:10], classes=["no", "yes"])
    with pytest.raises(ValueError, match="takes no example or class weights"):
        BudgetClassifier("forgetron", class_weight={"yes": 2.0}).fit(X, labels)


def test_class_weight_moves_predictions_as_scikit_learn_s_check_asks():
    """scikit-learn's check_class_weight_classifiers, with a γ for its clusters' scale: class 0 weighing
    10⁷ times class 1 is predicted for more than 87% of the test rows (46% without the weights)."""
    pytest.importorskip("sklearn")
    from sklearn.datasets import make_blobs
    from sklearn.model_selection import train_test_split

    from budgetcli.sklearn import BudgetClassifier

    for centers, weights in ((2, {0: 1000, 1: 0.0001}), (3, {0: 1000, 1: 0.0001, 2: 0.0001})):
        X, y = make_blobs(centers=centers, random_state=0, cluster_std=20)
        X_train, X_test, y_train, _ = train_test_split(X, y, test_size=0.5, random_state=0)
        weighted = BudgetClassifier(gamma=0.01, class_weight=weights).fit(X_train, y_train)
        plain = BudgetClassifier(gamma=0.01).fit(X_train, y_train)
        assert np.mean(weighted.predict(X_test) == 0) > 0.87 > np.mean(plain.predict(X_test) == 0)


def test_river_weighs_learn_one_as_train_weighs_a_row(a9a_part):
    pytest.importorskip("river")
    import pandas as pd

    from budgetcli.river import BudgetClassifier

    X, y = arrays(a9a_part / "train", 300)
    w = np.linspace(0.5, 3.0, 300)
    frame = pd.DataFrame(X, columns=range(1, X.shape[1] + 1))
    one = BudgetClassifier("pa-i", gamma=0.01, class_weight={1.0: 2.0})  # γ given: River counts columns
    for i in range(300):
        one.learn_one(frame.iloc[i].to_dict(), y[i], w=w[i])
    many = BudgetClassifier("pa-i", gamma=0.01, class_weight={1.0: 2.0})
    many.learn_many(frame, pd.Series(y), w=w)
    spec = TrainSpec("pa-i", budgetcli.KernelSpec(gamma=0.01), class_weight={1: 2.0})
    expected = budgetcli.train(spec, X, y, sample_weight=w).learner.state()[1]
    assert_same_state(one.learner.state()[1], expected)
    assert_same_state(many.learner.state()[1], expected)
    assert one.to_model().class_weight == {1.0: 2.0}
    skipped = BudgetClassifier("pa-i")
    skipped.learn_one(frame.iloc[0].to_dict(), y[0], w=0.0)  # a weight 0 leaves the example out
    assert skipped.learner is None
    with pytest.raises(ValueError, match="takes no example or class weights"):
        BudgetClassifier("forgetron", class_weight={1.0: 2.0})
    refused = BudgetClassifier("forgetron")
    with pytest.raises(ValueError, match="takes no example or class weights"):
        refused.learn_one(frame.iloc[0].to_dict(), y[0], w=2.0)
    assert refused.learner is None  # nothing changed


def test_predict_threshold_trades_the_positive_label_s_recall(a9a_part, tmp_path):
    """predict --threshold T: the +1 label where f > T, as its --scores say; the Python API and the parallel
    path agree; a multiclass model and --proba refuse it in one line."""
    model = tmp_path / "m.model"
    assert run("train", "-q", a9a_part / "train", "-o", model).exit_code == 0
    test = a9a_part / "test"
    scores = np.array([float(line.split()[1]) for line in run("predict", "--scores", model, test).stdout.splitlines()])
    for t in (-0.5, 0.0, 0.3):
        r = run("predict", "--threshold", t, model, test)
        assert r.exit_code == 0
        assert r.stdout.split() == ["+1" if f > t else "-1" for f in scores]
        loaded = budgetcli.load(model)
        assert budgetcli.predictions(loaded, test, threshold=t).tolist() == [1.0 if f > t else -1.0 for f in scores]
    plain = run("predict", model, test).stdout
    assert run("predict", "--threshold", "0", model, test).stdout == plain
    assert (
        run("predict", "-j", "2", "--threshold", "-0.5", model, test).stdout
        == run("predict", "--threshold", "-0.5", model, test).stdout
    )
    low = run("predict", "--threshold", "-0.5", model, test).stdout.split()
    assert low.count("+1") > plain.split().count("+1")
    r = run("predict", "--proba", "--threshold", "1", model, test)
    assert r.exit_code == 2 and "--threshold moves the score's cut; --proba writes the most probable label" in r.stderr
    three = tmp_path / "three"
    three.write_text("".join(f"{1 + i % 3} 1:{i % 3}.5 2:{(i * 7) % 5}\n" for i in range(90)))
    assert run("train", "-q", three, "-o", tmp_path / "mc.model").exit_code == 0
    r = run("predict", "--threshold", "0.5", tmp_path / "mc.model", three)
    assert r.exit_code == 2 and "a threshold is for a binary model" in r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_scikit_learn_s_threshold_is_on_its_decision_function(a9a_part):
    pytest.importorskip("sklearn")
    from budgetcli.sklearn import BudgetClassifier

    X, y = arrays(a9a_part / "train", 500)
    labels = np.where(y > 0, "yes", "no")
    clf = BudgetClassifier(threshold=-0.4).fit(X, labels)
    f = clf.decision_function(X)
    assert clf.predict(X).tolist() == np.where(f > -0.4, "yes", "no").tolist()
    assert (clf.predict(X) == "yes").sum() > (clf.set_params(threshold=0.0).predict(X) == "yes").sum()
    three = np.array(["a", "b", "c"] * 100)
    with pytest.raises(ValueError, match="is for two classes"):
        BudgetClassifier(threshold=0.5).fit(X[:300], three).predict(X[:5])


def test_the_algorithms_command_says_which_take_weights():
    r = run("algorithms")
    for name, cls in registry.ALGORITHMS.items():
        block = r.stdout[r.stdout.index(f"\n{name}\n") + 1 :].splitlines()[:4]
        assert block[3] == f"    weights: {cls.weighting or 'none'}", name
