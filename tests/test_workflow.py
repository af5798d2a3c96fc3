"""A LIBSVM user's workflow (issue 46): help without arguments, `info`'s feature count, lines without a label,
cross-validation (`train -v K`, `tune --folds K`) and grid ranges."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import budgetcli
from budgetcli.entry import main

ROOT = Path(__file__).resolve().parents[1]


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def lines_of(rng, n: int, features: int = 6, zero_based: bool = False) -> list[str]:
    """n labelled lines of a small separable-ish problem; features 1..features (0..features − 1)."""
    out = []
    for _ in range(n):
        x = rng.normal(size=features).round(3)
        y = "+1" if x[0] + 0.5 * x[1] > 0 else "-1"
        base = 0 if zero_based else 1
        out.append(y + " " + " ".join(f"{j + base}:{v:g}" for j, v in enumerate(x) if v != 0))
    return out


def test_no_arguments_prints_the_help_as_click_does():
    r = subprocess.run(
        [sys.executable, "-m", "budgetcli"],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert r.returncode == 2  # click's exit for a group called without a command
    assert r.stdout == ""
    assert r.stderr.startswith("Usage: budgetlearn [OPTIONS] COMMAND [ARGS]...\n")
    assert "\n  train " in r.stderr and "\\n" not in r.stderr and "budgetlearn: error" not in r.stderr


@pytest.mark.parametrize("zero_based", [False, True])
def test_info_counts_the_features_of_a_file_as_libsvm_does(tmp_path, zero_based):
    data = tmp_path / "d.txt"
    data.write_text("\n".join(lines_of(np.random.default_rng(1), 60, features=5, zero_based=zero_based)) + "\n")
    assert run("train", "-q", "-a", "perceptron", data, "-o", tmp_path / "m").exit_code == 0
    r = run("info", "--json", tmp_path / "m")
    d = json.loads(r.stdout)
    assert d["n_features"] == 5  # a 1-based file's indices 1..5, a 0-based one's 0..4: five features either way
    assert d["max_feature_index"] == (4 if zero_based else 5)
    assert "5 features, indices up to " + ("4" if zero_based else "5") in run("info", tmp_path / "m").stdout


def test_info_counts_a9a_as_its_largest_index(tmp_path):
    lines = (ROOT / "sample_data" / "a9a").read_text().splitlines(True)[:3000]
    (tmp_path / "a9a.head").write_text("".join(lines))
    largest = max(int(token.split(":")[0]) for line in lines for token in line.split()[1:])
    assert run("train", "-q", tmp_path / "a9a.head", "-o", tmp_path / "m").exit_code == 0
    assert json.loads(run("info", "--json", tmp_path / "m").stdout)["n_features"] == largest  # was largest + 1


@pytest.fixture
def model_and_lines(tmp_path):
    labelled = lines_of(np.random.default_rng(2), 200)
    data = tmp_path / "train.txt"
    data.write_text("\n".join(labelled) + "\n")
    assert run("train", "-q", "-a", "perceptron", data, "-o", tmp_path / "m").exit_code == 0
    return tmp_path / "m", labelled


def test_predict_scores_lines_without_a_label(tmp_path, model_and_lines):
    model, labelled = model_and_lines
    (tmp_path / "with.txt").write_text("\n".join(labelled) + "\n")
    # the label left out, or with qid: the same examples
    bare = [line.split(" ", 1)[1] for line in labelled]
    bare[3] = "qid:7 " + bare[3]
    (tmp_path / "without.txt").write_text("\n".join(bare) + "\n")
    with_labels = run("predict", "--scores", model, tmp_path / "with.txt")
    without = run("predict", "--scores", model, tmp_path / "without.txt")
    assert with_labels.exit_code == 0 and without.exit_code == 0, without.output
    assert without.stdout == with_labels.stdout and len(without.stdout.splitlines()) == 200
    loaded = budgetcli.load(model)
    expected = [float(line.split()[0]) for line in with_labels.stdout.splitlines()]
    assert budgetcli.predictions(loaded, tmp_path / "without.txt").tolist() == expected
    assert budgetcli.predictions(loaded, tmp_path / "with.txt").tolist() == expected
    # a mix of both, from stdin
    mixed = "\n".join(labelled[:2] + bare[2:4]) + "\n"
    r = run("predict", model, "-", input=mixed)
    assert r.exit_code == 0 and r.stdout.splitlines() == [
        line.split()[0] for line in with_labels.stdout.splitlines()[:4]
    ]


@pytest.mark.parametrize("command", ["eval", "calibrate", "train", "online-to-batch"])
def test_commands_that_need_labels_name_the_line_without_one(tmp_path, model_and_lines, command):
    model, labelled = model_and_lines
    data = tmp_path / "d.txt"
    data.write_text("\n".join(labelled[:5] + ["3:1 4:0.5"] + labelled[5:]) + "\n")
    out = tmp_path / "out.model"
    inputs = [model, data] if command in ("eval", "calibrate") else [data]
    args = [command, *inputs] + ([] if command == "eval" else ["-o", out])
    r = run(*args)
    assert r.exit_code == 1
    assert r.stderr == (
        f"budgetlearn: error: {data}:6: no label: the line starts with a feature, where its label must come "
        "first (predict scores lines without one) (token '3:1')\n"
    )
    assert not out.exists()
    with pytest.raises(budgetcli.DataError, match=":6: no label"):
        budgetcli.accuracy(budgetcli.load(model), data)
