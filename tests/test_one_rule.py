"""One rule in one place: each rule below is one function that every edge (the command, the Python API,
`tune`, the scikit-learn and River classes) calls, so that the edges cannot disagree."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import budgetcli
from budgetcli.entry import main
from budgetcli.io.libsvm import write_libsvm
from budgetcli.model.model import Model

from .helpers import random_stream


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    """(folder, X, y): 300 examples of a binary problem, written 1-based to `folder/train`."""
    folder = tmp_path_factory.mktemp("rule")
    X, y = random_stream(300, 5, 0)
    nz = X != 0
    rows, cols = np.nonzero(nz)
    indptr = np.concatenate([[0], np.cumsum(nz.sum(axis=1))])
    with open(folder / "train", "w") as f:
        write_libsvm(f, indptr, cols + 1, X[rows, cols], y, ["+1" if v > 0 else "-1" for v in y])
    return folder, X, y


# ---- whether a model can be resumed -------------------------------------------------------------


def test_the_python_api_refuses_a_batch_model_s_resume_in_the_command_s_words(stream):
    folder, X, y = stream
    batch = folder / "batch.model"
    assert (
        run("online-to-batch", "-q", "-a", "perceptron", "--gamma", "0.5", folder / "train", "-o", batch).exit_code == 0
    )
    r = run("train", "-q", "--resume", batch, folder / "train", "-o", folder / "x.model")
    assert r.exit_code == 1
    with pytest.raises(ValueError) as refused:
        budgetcli.train(budgetcli.TrainSpec(), X, y, resume=budgetcli.load(batch))
    assert r.stderr.strip() == f"budgetlearn: error: {batch}: {refused.value}"
    assert "an averaged batch model cannot be resumed" in str(refused.value)
    clf = pytest.importorskip("budgetcli.sklearn").BudgetClassifier.from_model(batch)
    with pytest.raises(ValueError, match="an averaged batch model cannot be resumed"):
        clf.partial_fit(X, y)


def test_an_average_that_cannot_be_completed_is_refused_by_every_edge(stream):
    folder, X, y = stream
    online = folder / "rbp.model"
    common = ["-q", "-a", "rbp", "-B", "10", "--gamma", "0.5", "--hypothesis", "last"]
    assert run("train", *common, folder / "train", "-o", online).exit_code == 0
    r = run("train", "-q", "--resume", online, "--hypothesis", "average", folder / "train", "-o", folder / "y.model")
    assert r.exit_code == 2 and "evicted before this run were not kept" in r.output
    with pytest.raises(ValueError, match="evicted before this run were not kept, so its average cannot be completed"):
        budgetcli.train(budgetcli.TrainSpec(hypothesis="running-average"), X, y, resume=budgetcli.load(online))


def test_a_resumed_spec_that_names_other_settings_is_refused_not_silently_replaced(stream):
    folder, X, y = stream
    model = budgetcli.train(budgetcli.TrainSpec("projectron++", budgetcli.KernelSpec(gamma=0.5), {"eta": 0.3}), X, y)
    for spec, named in (
        (budgetcli.TrainSpec("rbp", params={"budget": 20}), "algorithm rbp"),
        (budgetcli.TrainSpec("projectron++", params={"eta": 0.2}), "eta 0.2"),
        (budgetcli.TrainSpec(kernel=budgetcli.KernelSpec(gamma=0.1)), "kernel gamma 0.1"),
        (budgetcli.TrainSpec(seed=3), "seed 3"),
    ):
        with pytest.raises(ValueError, match=f"continues the model's own settings; the spec gives {named}"):
            budgetcli.train(spec, X, y, resume=model)
    # the model's own values, or the defaults, are no contradiction
    same = budgetcli.TrainSpec("projectron++", budgetcli.KernelSpec(gamma=0.5), {"eta": 0.3})
    assert budgetcli.train(same, X[:10], y[:10], resume=model).learner.counter("examples") == 310


# ---- the kernel's settings -----------------------------------------------------------------------


def test_a_kernel_spec_is_made_from_its_options_in_one_place():
    from budgetcli.base.core import KernelSpec
    from budgetcli.numerics.kernels import KERNEL_PARAMS

    assert sorted(KernelSpec.PARAM_NAMES.values()) == sorted(KERNEL_PARAMS)
    spec = KernelSpec("poly", 0.5, None, 4, 1.5, "libm")
    assert KernelSpec.from_params(spec.params() | {"eta": 0.1}) == spec


# ---- --jobs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["0", "-2", "1.5"])
def test_every_jobs_option_and_sharding_take_one_rule(stream, jobs):
    folder, _, _ = stream
    rule = "give a whole number ≥ 1, or -1 for one per core"
    data, model = folder / "train", folder / "j.model"
    for args in (
        ("predict", "--jobs", jobs, model, data),
        ("tune", "-a", "perceptron", "--jobs", jobs, data),
        ("train", "-a", "perceptron", "--backend", "dask", "--jobs", jobs, data, "-o", model),
    ):
        r = run(*args)
        assert r.exit_code == 2 and ("is not a valid integer" in r.output if jobs == "1.5" else rule in r.output), args
    if jobs != "1.5":
        with pytest.raises(ValueError, match=rule):
            budgetcli.Sharding((str(data),), jobs=int(jobs))


# ---- accuracy and the warnings of a model no better than a constant --------------------------------


def test_eval_tune_and_the_python_api_count_accuracy_and_warn_alike(stream, tmp_path):
    import json
    import warnings

    from budgetcli.run import tune

    folder, X, y = stream
    model_path = folder / "acc.model"
    assert run("train", "-q", "-a", "perceptron", "--gamma", "0.5", folder / "train", "-o", model_path).exit_code == 0
    test = tmp_path / "test"
    y_test = np.where(np.arange(len(y)) % 10 == 0, 0.0, y)  # a label the model never saw: always wrong
    text = (folder / "train").read_text().splitlines()
    test.write_text(
        "".join(("0" if v == 0 else line.split()[0]) + line[line.index(" ") :] + "\n" for v, line in zip(y_test, text))
    )
    report = json.loads(run("eval", "--json", model_path, test).stdout)
    model = budgetcli.load(model_path)
    with warnings.catch_warnings(record=True) as from_path:
        warnings.simplefilter("always")
        on_path = budgetcli.accuracy(model, test)
    with warnings.catch_warnings(record=True) as from_arrays:
        warnings.simplefilter("always")
        on_arrays = budgetcli.accuracy(model, X, y_test)
    assert report["accuracy"] == on_path == on_arrays == tune.test_accuracy(model, str(test))
    assert report["warnings"] and "never saw: 0 (30 examples)" in report["warnings"][0]
    assert [str(w.message) for w in from_path] == report["warnings"] == [str(w.message) for w in from_arrays]


def test_train_and_the_python_api_warn_of_a_model_no_better_than_a_constant_alike(tmp_path):
    import json

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (200, 3))
    y = np.where(np.arange(200) % 100 < 43, 1.0, -1.0)
    data = tmp_path / "d"
    with open(data, "w") as f:
        write_libsvm(
            f, np.arange(0, 601, 3), np.tile([1, 2, 3], 200), X.ravel(), y, ["+1" if v > 0 else "-1" for v in y]
        )
    r = run("train", "-q", "--json", "-a", "projectron", "--kernel", "linear", "--eta", "1", data, "-o", tmp_path / "m")
    expected = json.loads(r.stdout)["warnings"]
    assert any("is not above the 57.00% of always answering their most frequent label -1" in w for w in expected)
    spec = budgetcli.TrainSpec("projectron", budgetcli.KernelSpec("linear"), {"eta": 1.0})
    with pytest.warns(UserWarning) as warned:
        budgetcli.train(spec, X, y)
    got = [str(w.message) for w in warned]
    assert got == expected


# ---- feature numbering: the edges agree ----------------------------------------------------------


def test_every_edge_gives_the_same_scores_on_a_zero_based_dump_and_its_arrays(tmp_path):
    """The command, the Python API (a path and arrays), scikit-learn (fit and from_model of the command's
    model) and River, on the same examples, give the same scores bit for bit: a model trained by the
    command on scikit-learn's dump_svmlight_file output (0-based) knows that an array's column j is its
    index j (it scored 50% through from_model where eval gave 96%)."""
    import pandas as pd

    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    river = pytest.importorskip("budgetcli.river")
    from budgetcli.sklearn import BudgetClassifier

    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(400, 5)), 6)  # values the dump's %.16g writes exactly
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3, 1.0, -1.0)
    X_test, X = X[300:], X[:300]
    y_test, y = y[300:], y[:300]
    sklearn_datasets.dump_svmlight_file(X, y, str(tmp_path / "train"))  # zero_based=True: indices 0..4
    sklearn_datasets.dump_svmlight_file(X_test, y_test, str(tmp_path / "test"))
    assert (tmp_path / "train").read_text().split()[1].startswith("0:")
    model = tmp_path / "cli.model"
    assert (
        run("train", "-q", "-a", "projectron++", "--hypothesis", "last", tmp_path / "train", "-o", model).exit_code == 0
    )
    lines = run("predict", "--scores", model, tmp_path / "test").stdout.splitlines()
    expected = budgetcli.load(model).decision_function(X_test)
    written = np.array([float(line.split()[1]) for line in lines])  # predict --scores writes 10 digits
    np.testing.assert_array_equal(written, [float(f"{v:.10g}") for v in expected])
    spec = budgetcli.TrainSpec("projectron++", hypothesis="online")
    scores = {
        "api, a path": budgetcli.train(spec, tmp_path / "train").decision_function(X_test),
        "api, arrays": budgetcli.train(spec, X, y).decision_function(X_test),
        "scikit-learn fit": BudgetClassifier("projectron++", average=False).fit(X, y).decision_function(X_test),
        "scikit-learn from_model": BudgetClassifier.from_model(model).decision_function(X_test),
    }
    online = river.BudgetClassifier("projectron++", average=False)
    online.learn_many(pd.DataFrame(X), pd.Series(y))
    scores["river"] = online.to_model().decision_function(X_test)
    for edge, got in scores.items():
        np.testing.assert_array_equal(got, expected, err_msg=edge)
    report = run("eval", "--json", model, tmp_path / "test").stdout
    accuracy = BudgetClassifier.from_model(model).score(X_test, y_test)
    assert f'"accuracy": {accuracy}' in report and accuracy > 0.7
    assert budgetcli.accuracy(budgetcli.load(model), X_test, y_test) == accuracy
    assert run("info", "--json", model).stdout.count('"first_index": 0') == 1


def test_a_model_numbers_its_features_as_its_data_did_and_old_files_from_1(stream, tmp_path):
    from budgetcli.model.model import Model

    folder, X, y = stream
    one = tmp_path / "one.model"
    assert run("train", "-q", "-a", "perceptron", "--gamma", "0.5", folder / "train", "-o", one).exit_code == 0
    loaded = Model.load(one)
    assert loaded.first_index == 1
    header = __import__("budgetcli.base.modelfile", fromlist=["load"]).load(one)[0]
    assert "first_index" not in header  # a 1-based model's file is as it was before the field
    np.testing.assert_array_equal(
        loaded.decision_function(X),
        budgetcli.train(budgetcli.TrainSpec("perceptron", budgetcli.KernelSpec(gamma=0.5)), X, y).decision_function(X),
    )
    # index 0 met on a resumed day: the model's features are numbered from 0 from then on
    zero = tmp_path / "zero.txt"
    zero.write_text("+1 0:1 1:0.5\n-1 0:-1 2:0.5\n")
    both = tmp_path / "both.model"
    assert run("train", "-q", "--resume", one, zero, "-o", both).exit_code == 0
    assert Model.load(both).first_index == 0
    sharded = tmp_path / "sharded.model"  # one shard that meets index 0 is enough
    assert (
        run("train", "-q", "-a", "perceptron", "--gamma", "0.5", folder / "train", zero, "-o", sharded).exit_code == 0
    )
    assert Model.load(sharded).first_index == 0
    # a hostile header
    import budgetcli.base.modelfile as modelfile

    header, arrays = modelfile.load(both)
    header["first_index"] = 2
    modelfile.save(tmp_path / "bad.model", header, arrays)
    r = run("info", tmp_path / "bad.model")
    assert r.exit_code == 1 and "first_index 2 is neither 0 nor 1" in r.stderr


# ---- one set of defaults -------------------------------------------------------------------------


def test_every_interface_makes_the_same_default_model(tmp_path):
    """With no arguments, train, the Python API (TrainSpec()), tune (no grid, the file's own order),
    scikit-learn's BudgetClassifier() and River's BudgetClassifier() make the same model from the same
    part of a9a: the default algorithm (projectron++), its parameters and γ = 1/k, its averaged hypothesis;
    the files byte for byte, the others' state arrays and scores bit for bit.  (River used to default to
    an unbounded perceptron's last hypothesis.)"""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("sklearn")
    river = pytest.importorskip("budgetcli.river")
    from budgetcli.io.libsvm import read_all
    from budgetcli.sklearn import BudgetClassifier

    from .helpers import SAMPLE_DATA, assert_same_state

    data, test = tmp_path / "a9a", tmp_path / "a9a.t"
    data.write_text("".join((SAMPLE_DATA / "a9a").read_text().splitlines(keepends=True)[:2000]))
    test.write_text("".join((SAMPLE_DATA / "a9a.t").read_text().splitlines(keepends=True)[:500]))
    assert run("train", "-q", data, "-o", tmp_path / "cli.model").exit_code == 0
    budgetcli.train(budgetcli.TrainSpec(), data).save(tmp_path / "api.model")
    r = run("tune", "--permutations", "0", "--save-best", tmp_path / "tune.model", data)
    assert r.exit_code == 0 and "best: budgetlearn train -a projectron++ " in r.stdout
    cli = (tmp_path / "cli.model").read_bytes()
    assert (tmp_path / "api.model").read_bytes() == cli == (tmp_path / "tune.model").read_bytes()
    model = budgetcli.load(tmp_path / "cli.model")
    assert (model.learner.name, model.hypothesis) == ("projectron++", "running-average")

    chunk = read_all(data)
    k = int(chunk.indices.max())  # train's γ = 1/k: the largest index of the first block (all of it here)
    X = np.zeros((len(chunk), k))
    X[np.repeat(np.arange(len(chunk)), np.diff(chunk.indptr)), chunk.indices - 1] = chunk.values
    held = read_all(test)
    X_test = np.zeros((len(held), k))
    inside = held.indices <= k  # a feature beyond the training file's meets no support vector
    X_test[np.repeat(np.arange(len(held)), np.diff(held.indptr))[inside], held.indices[inside] - 1] = held.values[
        inside
    ]
    expected = model.decision_function(X_test)
    clf = BudgetClassifier().fit(X, chunk.labels)
    stream = river.BudgetClassifier()
    stream.learn_many(pd.DataFrame(X, columns=range(1, k + 1)), pd.Series(chunk.labels))
    written = Model.load(tmp_path / "cli.model", resume=True).learner  # its online state, as the file holds it
    for name, learner, scores in (
        ("scikit-learn", clf.learner_, clf.decision_function(X_test)),
        ("river", stream.learner, stream.to_model().decision_function(X_test)),
    ):
        assert learner.name == "projectron++" and learner.hyper == model.learner.hyper, name
        assert learner.kernel.gamma == model.learner.kernel.gamma == 1 / k, name
        assert_same_state(learner.portable_state()[1], written.portable_state()[1])
        np.testing.assert_array_equal(scores, expected, err_msg=name)
    assert clf.to_model().hypothesis == stream.to_model().hypothesis == "running-average"
