"""The budgetlearn command with multiclass data: labels in the file's spelling, per-class scores,
the eval report, resume with a label first seen on a later day, and the refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from budgetcli.model.model import Model

from .test_cli import run
from .test_multiclass import mc_stream

SPELLINGS = ("01", "7", "12", "26")  # label values 1, 7, 12, 26; "01" is how the file spells 1


def write_mc(path, n=240, seed=1, rows=slice(None)):
    X, y = mc_stream(n, 4, 4, seed)
    X, y = X[rows], y[rows]
    with open(path, "w") as f:
        for row, lab in zip(X, y):
            feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0)
            f.write(f"{SPELLINGS[lab]} {feats}\n")
    return X, y


@pytest.fixture
def mc(tmp_path):
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    write_mc(train, seed=1)
    write_mc(test, seed=1, n=240)  # the same centres: a learnable test set
    return train, test


@pytest.mark.parametrize(
    "algorithm,extra",
    [
        ("mc-perceptron", []),
        ("mc-pa", []),
        ("mrbp", ["-B", "30"]),
        ("mc-projectron++", ["--eta", "0.3"]),
        ("pegasos", ["--lambda", "0.01"]),
        ("bpegasos", ["-B", "30", "--maintenance", "merge", "--lambda", "0.01"]),
    ],
)
def test_predict_scores_and_eval_agree(mc, tmp_path, algorithm, extra):
    train, test = mc
    model = tmp_path / "m.model"
    r = run("train", "-a", algorithm, "--gamma", "0.5", *extra, "-q", train, "-o", model)
    assert r.exit_code == 0, r.output
    labels = run("predict", model, test).stdout.splitlines()
    assert set(labels) <= set(SPELLINGS) and len(set(labels)) >= 3
    scored = run("predict", "--scores", model, test).stdout.splitlines()
    assert scored[0].split() == ["labels", "01", "12", "7", "26"]  # order of first appearance in train.txt
    names = scored[0].split()[1:]
    for line, lab in zip(scored[1:], labels):
        parts = line.split()
        assert parts[0] == lab
        assert names[int(np.argmax([float(v) for v in parts[1:]]))] == lab
    truth = [line.split()[0] for line in test.read_text().splitlines()]
    report = json.loads(run("eval", "--json", model, test).stdout)
    assert report["auc"] is None and report["examples"] == len(truth)
    assert report["accuracy"] == pytest.approx(np.mean(np.array(labels) == np.array(truth)))
    majority = max(truth.count(name) for name in names) / len(truth)
    assert report["accuracy"] > majority + 0.1  # it learned something beyond the largest class
    cm = np.array(report["confusion_matrix"]["rows_true_columns_predicted"])
    assert report["confusion_matrix"]["labels"] == names
    for i, name in enumerate(names):
        assert cm[i].sum() == truth.count(name) == report["classes"][name]["support"]
        assert cm[:, i].sum() == labels.count(name)
    text = run("eval", model, test).stdout
    assert "confusion matrix" in text and "per class" in text and "AUC" not in text


def test_a_label_first_seen_on_a_later_day_joins_on_resume(tmp_path):
    full = tmp_path / "all.txt"
    write_mc(full, n=240, seed=1)
    lines = full.read_text().splitlines(keepends=True)
    assert not any(line.startswith("26 ") for line in lines[:120])  # class 26 is new on day 2
    day1, day2 = tmp_path / "d1.txt", tmp_path / "d2.txt"
    day1.write_text("".join(lines[:120]))
    day2.write_text("".join(lines[120:]))
    one, nightly = tmp_path / "one.model", tmp_path / "nightly.model"
    args = [
        "-a",
        "bpegasos",
        "-B",
        "25",
        "--maintenance",
        "project",
        "--lambda",
        "0.01",
        "--gamma",
        "0.5",
        "-q",
        "--save-resume",
        "--hypothesis",
        "last",  # the online learner, bit for bit (a running average folds at the day's end: test_cli)
    ]
    assert run("train", *args, full, "-o", one).exit_code == 0
    assert run("train", *args, day1, "-o", nightly).exit_code == 0
    assert Model.load(nightly).labels.names == ["01", "12", "7"]
    assert run("train", "--resume", nightly, "--save-resume", "-q", day2, "-o", nightly).exit_code == 0
    a, b = Model.load(one, resume=True), Model.load(nightly, resume=True)
    assert b.labels.names == ["01", "12", "7", "26"]
    assert a.learner.state()[0] == b.learner.state()[0]
    for name, arr in a.learner.state()[1].items():
        np.testing.assert_array_equal(b.learner.state()[1][name], arr, err_msg=name)


def test_binary_algorithm_refuses_multiclass_data_and_names_the_multiclass_ones(mc, tmp_path):
    train, _ = mc
    model = tmp_path / "m.model"
    r = run("train", "-a", "projectron++", train, "-o", model)
    assert r.exit_code == 1
    assert (
        "binary-only" in r.output
        and "bpegasos, mc-fogd, mc-nogd, mc-pa, mc-perceptron, mc-projectron++, mrbp, pegasos" in r.output
    )
    assert not model.exists()


def test_merge_with_a_poly_kernel_is_a_usage_error(mc, tmp_path):
    train, _ = mc
    model = tmp_path / "m.model"
    r = run("train", "-a", "bpegasos", "--maintenance", "merge", "--kernel", "poly", train, "-o", model)
    assert r.exit_code == 2 and "Gaussian" in r.output
    assert not model.exists()
    assert (
        run(
            "train", "-a", "bpegasos", "--maintenance", "project", "--kernel", "poly", "-q", train, "-o", model
        ).exit_code
        == 0
    )


def test_binary_data_through_a_multiclass_learner_predicts_its_spelling(tmp_path):
    path = tmp_path / "b.txt"
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 2))
    with open(path, "w") as f:
        for x in X:
            f.write(f"{'+1' if x[0] * x[1] > 0 else '-1'} 1:{float(x[0])!r} 2:{float(x[1])!r}\n")
    model = tmp_path / "m.model"
    assert (
        run(
            "train", "-a", "bpegasos", "-B", "50", "--lambda", "0.001", "--gamma", "1", "-q", path, "-o", model
        ).exit_code
        == 0
    )
    report = json.loads(run("eval", "--json", model, path).stdout)
    assert set(report["classes"]) == {"+1", "-1"} and report["accuracy"] > 0.85


@pytest.mark.parametrize("generator,d,classes", [("checkerboard", 2, {"1", "2"}), ("waveform", 21, {"0", "1", "2"})])
def test_generate_multiclass_streams(tmp_path, generator, d, classes):
    out = tmp_path / "g.txt"
    assert run("generate", generator, "-n", "3000", "--seed", "4", "-o", out).exit_code == 0
    lines = out.read_text().splitlines()
    labels = [line.split()[0] for line in lines]
    X = np.array([[float(t.split(":")[1]) for t in line.split()[1:]] for line in lines])
    assert set(labels) == classes and X.shape == (3000, d)
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=0.1)
    np.testing.assert_allclose(X.std(axis=0), 1, atol=0.1)
    if generator == "checkerboard":  # the 4 × 4 board: neighbouring squares differ
        square = np.floor((X * 4 / np.sqrt(12) + 2)).astype(int)
        parity = square.sum(axis=1) % 2 == 0
        assert np.all(parity == (np.array(labels) == "1"))
