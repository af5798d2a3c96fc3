"""The regression task (budgetcli/task.py, issue #48): `--task` on the command line and in the model
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

from budgetcli import modelfile
from budgetcli.core import KernelSpec
from budgetcli.spec import TrainSpec

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
    with pytest.raises(ValueError, match="--task 'novelty'"):
        TrainSpec("klms", task="novelty")
    assert (
        TrainSpec("perceptron", KernelSpec("rbf", 0.5)).to_dict()
        == TrainSpec("perceptron", KernelSpec("rbf", 0.5), task="classification").to_dict()
    )  # a classification model's header is what it was
    assert "task" not in TrainSpec("perceptron").to_dict()


def test_the_default_regression_learner_and_a_threshold(files):
    out = cli("train", "--task", "regression", files / "train.txt", "-o", files / "d.model")
    assert "qklms: the default for regression" in out.stderr
    out = cli("predict", "--threshold", "0.5", files / "d.model", files / "test.txt", check=False)
    assert out.returncode == 2 and "regression model predicts its score" in out.stderr


def test_a_non_finite_target_names_its_line(files):
    (files / "nan.txt").write_text("0.5 1:1\n1.5 1:2\ninf 1:3\n")
    out = cli("train", "--task", "regression", "-a", "klms", files / "nan.txt", "-o", files / "n.model", check=False)
    assert out.returncode == 1 and f"{files / 'nan.txt'}:3:" in out.stderr and "not finite" in out.stderr
    from budgetcli.labels import RealTargets

    from .helpers import chunk_from_dense

    chunk = chunk_from_dense(np.ones((3, 1)), np.array([0.5, np.nan, 1.0]))
    with pytest.raises(Exception, match="not a finite number"):
        RealTargets().encode(chunk, "X")


def test_a_header_that_mixes_tasks_is_refused(files, tmp_path):
    """A regression header on class labels, or real targets on a classifier, is an invalid model."""
    from budgetcli.labels import RealTargets, labels_from_dict

    from budgetcli import registry

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
    """export, calibrate, tune, a sharded run, scikit-learn's and River's classifiers: refused, not wrong."""
    model = files / "e.model"
    cli("train", "--task", "regression", "-a", "norma", files / "train.txt", "-o", model)
    refusals = [
        (("export", model, "-o", files / "e.libsvm"), "export (LIBSVM's C-SVC format) takes a classification model"),
        (("calibrate", model, files / "test.txt", "-o", files / "c.model"), "calibrate (probabilities of classes)"),
        (("tune", "--task", "regression", files / "train.txt"), "tune ranks classification runs only"),
        (("tune", "-a", "qklms", files / "train.txt"), "tune ranks classification runs only"),
        (("train", "--task", "regression", "-v", "5", files / "train.txt"), "cross-validating a regression"),
        (
            ("train", "--task", "regression", "--curve", files / "c.csv", files / "train.txt", "-o", files / "v.model"),
            "a regression's curve of online errors is not done yet",
        ),
        (
            (
                "train",
                "--task",
                "regression",
                "-a",
                "klms",
                files / "train.txt",
                files / "test.txt",
                "-o",
                files / "s.model",
            ),
            "a sharded run (several inputs or --backend) does not do regression yet",
        ),
    ]
    for args, said in refusals:
        out = cli(*args, check=False)
        assert out.returncode in (1, 2) and said in out.stderr, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert not (files / "e.libsvm").exists() and not (files / "c.model").exists() and not (files / "s.model").exists()
    from budgetcli.model import Model

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
