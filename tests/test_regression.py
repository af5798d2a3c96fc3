"""The regression task (budgetcli/learning/task.py, issue #48): `--task` on the command line and in the model
header, never guessed; targets as reals; predict's `%.10g` lines; eval's MSE, RMSE, MAE, R² beside the
training mean's; the "no better than the running mean" warning; the refusals of every mix of tasks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from budgetcli.base import modelfile
from budgetcli.base.core import KernelSpec
from budgetcli.model.spec import TrainSpec

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, check=True):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "budgetcli", *map(str, args)], capture_output=True, text=True, env=env)
    if check:
        assert out.returncode == 0, out.stderr
    return out


def regression_lines(n: int, seed: int, offset: float = 0.0) -> list[str]:
    """y = sin(3 x1) + x2² + noise, two features in [−1, 1]."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.standard_normal(n) + offset
    return [f"{t!r} 1:{a!r} 2:{b!r}\n" for t, (a, b) in zip(y.tolist(), X.tolist())]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("regression")
    (d / "train.txt").write_text("".join(regression_lines(600, 1)))
    (d / "test.txt").write_text("".join(regression_lines(200, 2)))
    (d / "binary.txt").write_text("".join(f"{'+1' if i % 3 else '-1'} 1:{i % 7} 2:{i % 5}\n" for i in range(60)))
    return d


def test_real_labels_without_the_flag_are_refused_naming_it(files):
    out = cli("train", files / "train.txt", "-o", files / "x.model", check=False)
    assert out.returncode == 1
    (line,) = out.stderr.strip().splitlines()
    assert f"{files / 'train.txt'}:1:" in line and "--task regression" in line
    assert not (files / "x.model").exists()


def test_train_predict_eval_end_to_end(files):
    model = files / "q.model"
    out = cli(
        "train", "--task", "regression", "-a", "qklms", "--gamma", "2", files / "train.txt", "-o", model, "--json"
    )
    summary = json.loads(out.stdout)
    assert summary["task"] == "regression" and summary["examples"] == 600 and "mistakes" not in summary
    assert "online MSE" in out.stderr and "mistakes" not in out.stderr
    assert modelfile.load(model)[0]["task"] == "regression"
    predicted = cli("predict", model, files / "test.txt").stdout.splitlines()
    assert len(predicted) == 200
    f = np.array([float(p) for p in predicted])
    assert all(p == f"{v:.10g}" for p, v in zip(predicted, f))  # %.10g, one real a line
    y = np.array([float(line.split()[0]) for line in (files / "test.txt").read_text().splitlines()])
    report = json.loads(cli("eval", "--json", model, files / "test.txt").stdout)
    # the report from the written predictions (to their 10 digits) and the training targets' own mean
    mse = np.mean((y - f) ** 2)
    train_y = np.array([float(line.split()[0]) for line in (files / "train.txt").read_text().splitlines()])
    np.testing.assert_allclose(report["mse"], mse, rtol=1e-8)
    np.testing.assert_allclose(report["rmse"], np.sqrt(mse), rtol=1e-8)
    np.testing.assert_allclose(report["mae"], np.mean(np.abs(y - f)), rtol=1e-8)
    np.testing.assert_allclose(report["r2"], 1 - np.sum((y - f) ** 2) / np.sum((y - y.mean()) ** 2), rtol=1e-8)
    np.testing.assert_allclose(report["baseline"]["prediction"], train_y.mean(), rtol=1e-12)
    np.testing.assert_allclose(report["baseline"]["mse"], np.mean((y - train_y.mean()) ** 2), rtol=1e-12)
    assert report["mse"] < 0.5 * report["baseline"]["mse"] and report["warnings"] == []
    text = cli("eval", model, files / "test.txt").stdout
    assert "RMSE" in text and "R²" in text and "training mean" in text


def test_a_model_no_better_than_the_running_mean_is_warned_of(files):
    """Targets far from 0 and a step too small to move: the written model predicts about 0, the mean is 100."""
    (files / "far.txt").write_text("".join(regression_lines(300, 3, offset=100.0)))
    out = cli(
        "train", "--task", "regression", "-a", "klms", "--step-size", "1e-9", files / "far.txt", "-o", files / "f.model"
    )
    assert "no better than the running mean" in out.stderr
    good = cli("train", "--task", "regression", "-a", "klms", files / "train.txt", "-o", files / "g.model")
    assert "no better than the running mean" not in good.stderr
    assert "no better than predicting the training mean" in cli("eval", files / "f.model", files / "far.txt").stderr


def test_resuming_across_tasks_is_refused_in_one_line(files):
    cli("train", files / "binary.txt", "-o", files / "b.model")
    header = modelfile.load(files / "b.model")[0]
    assert "task" not in header and "task" not in header["run"]  # a classification file is what it was
    cli("train", "--task", "regression", "-a", "klms", files / "train.txt", "-o", files / "r.model")
    out = cli(
        "train",
        "--task",
        "regression",
        "--resume",
        files / "b.model",
        files / "train.txt",
        "-o",
        files / "c.model",
        check=False,
    )
    assert out.returncode == 2 and "a classification model cannot go on learning regression" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    out = cli(
        "train",
        "--task",
        "classification",
        "--resume",
        files / "r.model",
        files / "binary.txt",
        "-o",
        files / "c.model",
        check=False,
    )
    assert out.returncode == 2 and "a regression model cannot go on learning classification" in out.stderr
    # without --task, the model's own task goes on, and real targets still refuse a classification model
    out = cli("train", "--resume", files / "b.model", files / "train.txt", "-o", files / "c.model", check=False)
    assert out.returncode == 1 and "--task regression" in out.stderr and not (files / "c.model").exists()
    cli("train", "--resume", files / "r.model", files / "train.txt", "-o", files / "r2.model")


def test_a_learner_declares_its_tasks():
    with pytest.raises(ValueError, match="klms learns regression, not classification; give --task regression"):
        TrainSpec("klms")
    with pytest.raises(ValueError, match="perceptron learns classification, not regression$"):
        TrainSpec("perceptron", task="regression")
    # a classifier whose loop also learns regression names its regression form (JMLR 2016's learners)
    for name, form in (("fogd", "fogd-regression"), ("bogd-fifo", "bogd-regression"), ("nogd", "nogd-regression")):
        with pytest.raises(ValueError, match=f"^{name} learns classification, not regression; for regression: {form}$"):
            TrainSpec(name, task="regression")
    with pytest.raises(ValueError, match="^fogd-regression learns regression, not classification; give --task regr"):
        TrainSpec("fogd-regression")
    with pytest.raises(ValueError, match=r"^--loss does not apply to fogd \(it takes: --components, "):
        TrainSpec("fogd", params={"loss": "squared"})
    with pytest.raises(ValueError, match=r"^norma-epsilon: --norma-nu must be in \[0, 1\], got 2.0$"):
        TrainSpec("norma-epsilon", params={"norma_nu": 2.0}, task="regression")
    with pytest.raises(
        ValueError, match="^bogd-regression: --loss must be one of squared, epsilon-insensitive, squared-o"
    ):
        TrainSpec("bogd-regression", params={"loss": "hinge"}, task="regression")
    with pytest.raises(ValueError, match="class weights are for classification"):
        TrainSpec("klms", task="regression", class_weight={1: 2.0})
    with pytest.raises(ValueError, match="--task 'ranking'"):
        TrainSpec("klms", task="ranking")
    with pytest.raises(ValueError, match="klms learns regression, not novelty$"):
        TrainSpec("klms", task="novelty")
    assert (
        TrainSpec("perceptron", KernelSpec("rbf", 0.5)).to_dict()
        == TrainSpec("perceptron", KernelSpec("rbf", 0.5), task="classification").to_dict()
    )  # a classification model's header is what it was
    assert "task" not in TrainSpec("perceptron").to_dict()


def test_the_default_regression_learner_and_a_threshold(files):
    out = cli("train", "--task", "regression", files / "train.txt", "-o", files / "d.model")
    assert "krlst: the default for regression" in out.stderr
    out = cli("predict", "--threshold", "0.5", files / "d.model", files / "test.txt", check=False)
    assert out.returncode == 2 and "regression model predicts its score" in out.stderr


def test_a_non_finite_target_names_its_line(files):
    (files / "nan.txt").write_text("0.5 1:1\n1.5 1:2\ninf 1:3\n")
    out = cli("train", "--task", "regression", "-a", "klms", files / "nan.txt", "-o", files / "n.model", check=False)
    assert out.returncode == 1 and f"{files / 'nan.txt'}:3:" in out.stderr and "not finite" in out.stderr
    from budgetcli.learning.targets import RealTargets

    from .helpers import chunk_from_dense

    chunk = chunk_from_dense(np.ones((3, 1)), np.array([0.5, np.nan, 1.0]))
    with pytest.raises(Exception, match="not a finite number"):
        RealTargets().encode(chunk, "X")


def test_a_header_that_mixes_tasks_is_refused(files, tmp_path):
    """A regression header on class labels, or real targets on a classifier, is an invalid model."""
    from budgetcli.learning.labels import labels_from_dict
    from budgetcli.learning.targets import RealTargets

    from budgetcli.base import registry

    with pytest.raises(ValueError, match="class labels in a model whose task is 'regression'"):
        labels_from_dict({"kind": "binary", "negative": -1.0, "positive": 1.0, "spellings": []}).check(
            registry.get("perceptron"), {"task": "regression"}
        )
    with pytest.raises(ValueError, match="real targets for perceptron"):
        RealTargets().check(registry.get("perceptron"), {"task": "regression"})
    with pytest.raises(ValueError, match="class labels for klms"):
        labels_from_dict({"kind": "binary", "negative": -1.0, "positive": 1.0, "spellings": []}).check(
            registry.get("klms"), {}
        )


def test_every_edge_not_doing_regression_refuses_a_regression_model_in_one_line(files):
    """calibrate, scikit-learn's and River's classifiers, tune's classification
    figures: refused, not wrong."""
    model = files / "e.model"
    cli("train", "--task", "regression", "-a", "norma", files / "train.txt", "-o", model)
    refusals = [
        (("calibrate", model, files / "test.txt", "-o", files / "c.model"), "calibrate (probabilities of classes)"),
        (("tune", "-a", "qklms", files / "train.txt"), "qklms learns regression; give --task regression"),
        (("tune", "--task", "regression", "--sort", "error", files / "train.txt"), "--sort error ranks classification"),
    ]
    for args, said in refusals:
        out = cli(*args, check=False)
        assert out.returncode in (1, 2) and said in out.stderr, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert not (files / "c.model").exists()
    from budgetcli.model.model import Model

    with pytest.raises(ValueError, match="BudgetClassifier takes a classification model; this one is a regression"):
        pytest.importorskip("budgetcli.sklearn").BudgetClassifier.from_model(model)
    with pytest.raises(ValueError, match="takes a classification model"):
        Model.load(model).refuse_task("the River BudgetClassifier")
    info = json.loads(cli("info", "--json", model).stdout)
    assert info["task"] == "regression" and info["labels"] == {"kind": "regression"} and info["online_mse"] > 0


def test_the_python_api_learns_reals_and_predict_writes_what_it_predicts(files, tmp_path):
    import budgetcli
    from budgetcli.io.libsvm import read_all

    chunk = read_all(files / "train.txt")
    X = np.zeros((len(chunk), 2))
    for i in range(len(chunk)):
        idx, val = chunk.row(i)
        X[i, idx - 1] = val
    spec = budgetcli.TrainSpec("qklms", budgetcli.KernelSpec("rbf", 2.0), task="regression")
    model = budgetcli.train(spec, X, chunk.labels)
    assert model.task.name == "regression"
    model.save(tmp_path / "api.model")
    predicted = np.array([float(v) for v in cli("predict", tmp_path / "api.model", files / "train.txt").stdout.split()])
    np.testing.assert_array_equal(predicted, [float(f"{v:.10g}") for v in model.predict(X)])
    with pytest.raises(ValueError, match="klms learns regression, not classification; give --task regression"):
        budgetcli.train(budgetcli.TrainSpec("klms"), X, chunk.labels)


def test_eval_is_the_task_s_report_on_every_interface(files, tmp_path):
    """eval --json, budgetcli.evaluate on the file and on arrays give one report; predict --scores of a
    regression writes its prediction once (the score is the prediction); --proba and accuracy refuse."""
    import budgetcli
    from budgetcli.io.libsvm import read_all

    model_path = files / "ev.model"
    cli("train", "--task", "regression", "-a", "klms", "--gamma", "2", files / "train.txt", "-o", model_path)
    report = json.loads(cli("eval", "--json", model_path, files / "test.txt").stdout)
    model = budgetcli.load(model_path)
    assert budgetcli.evaluate(model, files / "test.txt") == report
    chunk = read_all(files / "test.txt")
    X = np.array([[dict(zip(*chunk.row(i))).get(j, 0.0) for j in (1, 2)] for i in range(len(chunk))])
    from_arrays = budgetcli.evaluate(model, X, chunk.labels)
    assert from_arrays.keys() == report.keys()
    for key in ("mse", "mae", "r2"):
        np.testing.assert_allclose(from_arrays[key], report[key], rtol=1e-12)
    plain = cli("predict", model_path, files / "test.txt").stdout
    assert cli("predict", "--scores", model_path, files / "test.txt").stdout == plain
    assert all(len(line.split()) == 1 for line in plain.splitlines())
    out = cli("predict", "--proba", model_path, files / "test.txt", check=False)
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1
    assert "predict --proba (probabilities of classes) takes a classification model" in out.stderr
    with pytest.raises(ValueError, match="evaluate\\(\\) reports a regression's errors"):
        budgetcli.accuracy(model, files / "test.txt")
    (tmp_path / "empty.txt").write_text("")
    out = cli("eval", model_path, tmp_path / "empty.txt", check=False)
    assert out.returncode == 1 and "no examples to evaluate" in out.stderr


def test_the_error_tally_block_by_block_is_the_one_pass_figures():
    """MSE, MAE and R² summed over blocks of targets far from 0 (where Σy² − nȳ² would cancel) are numpy's
    on the whole arrays; the baseline's MSE is the training mean's own."""
    from budgetcli.learning.metrics import ErrorTally

    rng = np.random.default_rng(5)
    y = 1e6 + rng.standard_normal(1000)
    f = y + 0.3 * rng.standard_normal(1000)
    tally = ErrorTally(1e6 + 0.25)
    for piece in np.array_split(np.arange(1000), 7):
        tally.add(y[piece], f[piece])
    r = tally.report()
    np.testing.assert_allclose(r["mse"], np.mean((y - f) ** 2), rtol=1e-12)
    np.testing.assert_allclose(r["mae"], np.mean(np.abs(y - f)), rtol=1e-12)
    sst = np.sum((y - y.mean()) ** 2)
    np.testing.assert_allclose(r["r2"], 1 - np.sum((y - f) ** 2) / sst, rtol=1e-9)
    np.testing.assert_allclose(r["baseline"]["mse"], np.mean((y - (1e6 + 0.25)) ** 2), rtol=1e-9)
    np.testing.assert_allclose(r["baseline"]["r2"], 1 - np.sum((y - (1e6 + 0.25)) ** 2) / sst, rtol=1e-9)


def test_train_v_reports_svm_train_s_regression_lines(files):
    """train -v K of a regression: svm-train -s 3 -v's two lines, from folds made as svm-train makes an
    SVR's (one seeded permutation dealt out in K slices), each fold's model train's on the others in file
    order; the figures computed here from the folds' own models."""
    import budgetcli
    from budgetcli.io.libsvm import read_all

    out = cli("train", "--task", "regression", "-a", "klms", "--gamma", "2", "-v", "4", files / "train.txt")
    mse_line, r2_line = out.stdout.splitlines()
    chunk = read_all(files / "train.txt")
    n = len(chunk)
    perm = np.random.default_rng(0).permutation(n)
    fold = np.empty(n, int)
    for k in range(4):
        fold[perm[k * n // 4 : (k + 1) * n // 4]] = k
    X = np.array([[dict(zip(*chunk.row(i))).get(j, 0.0) for j in (1, 2)] for i in range(n)])
    f = np.empty(n)
    spec = budgetcli.TrainSpec("klms", budgetcli.KernelSpec("rbf", 2.0), task="regression")
    for k in range(4):
        model = budgetcli.train(spec, X[fold != k], chunk.labels[fold != k])
        f[fold == k] = model.predict(X[fold == k])
    y = chunk.labels
    assert mse_line == "Cross Validation Mean squared error = %g" % np.mean((y - f) ** 2)
    assert r2_line == "Cross Validation Squared correlation coefficient = %g" % (np.corrcoef(f, y)[0, 1] ** 2)
    report = json.loads(
        cli(
            "train", "--task", "regression", "-a", "klms", "--gamma", "2", "-v", "4", "--json", files / "train.txt"
        ).stdout
    )
    np.testing.assert_allclose(report["cross_validation_mse"], np.mean((y - f) ** 2), rtol=1e-12)
    assert [p["examples"] for p in report["per_fold"]] == [150] * 4
    assert "stratified" not in out.stderr and "MSE" in out.stderr


def test_tune_ranks_a_regression_by_held_out_mse(files, tmp_path):
    """tune --task regression: --folds ranks by cv-mse, each setting's the MSE train -v prints for its command;
    --test ranks by test-mse, and --save-best's model has its run's test MSE in eval."""

    def tune(*args):
        return json.loads(
            cli("tune", "--task", "regression", "-a", "klms", *args, "--json", files / "train.txt").stdout
        )

    folds = tune("--grid", "gamma=0.5,2,8", "--folds", "3")
    assert folds["sort"] == "cv-mse"
    means = [row["cv_mse_mean"] for row in folds["rows"]]
    assert means == sorted(means) and "cv_accuracy_mean" not in folds["rows"][0]
    for row in folds["rows"]:
        gamma = row["setting"]["gamma"]
        cv = cli(
            "train", "--task", "regression", "-a", "klms", "--gamma", gamma, "-v", "3", "--json", files / "train.txt"
        )
        assert row["cv_mse_mean"] == pytest.approx(json.loads(cv.stdout)["cross_validation_mse"], rel=1e-12)
    assert folds["best"].startswith("budgetlearn train -a klms --gamma 8") and "--task regression" in folds["best"]
    best = tmp_path / "best.model"
    tested = tune("--grid", "gamma=0.5,8", "--permutations", "2", "--test", files / "test.txt", "--save-best", best)
    assert tested["sort"] == "test-mse"
    top = tested["rows"][0]
    assert top["test_mse_mean"] <= tested["rows"][1]["test_mse_mean"]
    run = min(top["per_run"], key=lambda r: (r["test_mse"], r["permutation"]))
    report = json.loads(cli("eval", "--json", best, files / "test.txt").stdout)
    assert report["mse"] == pytest.approx(run["test_mse"], rel=1e-12)
    text = cli("tune", "--task", "regression", "-a", "klms", "--grid", "gamma=2,8", files / "train.txt").stdout
    assert "online MSE" in text and "sorted by online-mse" in text and "online error" not in text


def test_the_curve_of_a_regression_is_its_online_squared_error(files, tmp_path):
    """train --curve of a regression logs Σ(y − f(x))² and its mean, each row the summary of train on the
    rows so far; a resumed run goes on with the model's columns; plot draws it, and refuses to draw it beside
    a classification's curve in one line."""
    pytest.importorskip("matplotlib")
    lines = (files / "train.txt").read_text().splitlines(keepends=True)
    args = ("--task", "regression", "-a", "klms", "--gamma", "2")
    cli(
        "train",
        *args,
        files / "train.txt",
        "-o",
        tmp_path / "m.model",
        "--curve",
        tmp_path / "c.csv",
        "--curve-every",
        "250",
        "-q",
    )
    text = (tmp_path / "c.csv").read_text().splitlines()
    assert text[0].startswith("# klms") and text[1] == "t,squared_error,online_mse,support_size,seconds"
    rows = [row.split(",") for row in text[2:]]
    assert [int(r[0]) for r in rows] == [250, 500, 600]
    for r in rows:
        (tmp_path / "prefix.txt").write_text("".join(lines[: int(r[0])]))
        s = json.loads(cli("train", *args, tmp_path / "prefix.txt", "-o", tmp_path / "p.model", "--json").stdout)
        assert float(r[1]) == pytest.approx(s["online_squared_error"], rel=1e-9)
        assert float(r[2]) == pytest.approx(s["online_mse"], rel=1e-5)  # %.6g
    cli(
        "train",
        "--resume",
        tmp_path / "m.model",
        files / "test.txt",
        "-o",
        tmp_path / "m2.model",
        "--curve",
        tmp_path / "c2.csv",
        "-q",
    )
    assert (tmp_path / "c2.csv").read_text().splitlines()[1] == text[1]
    cli("plot", tmp_path / "c.csv", tmp_path / "c2.csv", "-o", tmp_path / "c.png")
    assert (tmp_path / "c.png").read_bytes().startswith(b"\x89PNG")
    cli("train", files / "binary.txt", "-o", tmp_path / "b.model", "--curve", tmp_path / "b.csv", "-q")
    out = cli("plot", tmp_path / "c.csv", tmp_path / "b.csv", "-o", tmp_path / "mixed.png", check=False)
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1 and "no axis in common" in out.stderr
    assert not (tmp_path / "mixed.png").exists()
