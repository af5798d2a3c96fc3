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


# ---- cross-validation ------------------------------------------------------------------------------


def hand_made_folds(lines: list[str], k: int, seed: int) -> list[int]:
    """crossval.py's folds, written out from its docstring: one numpy generator; for each label in order of
    first appearance, its examples' positions (file order) permuted, the f-th slice [f·n//k, (f+1)·n//k)
    to fold f."""
    labels = [float(line.split()[0]) for line in lines]
    rng = np.random.default_rng(seed)
    fold = [None] * len(lines)
    for label in dict.fromkeys(labels):
        positions = rng.permutation([i for i, v in enumerate(labels) if v == label])
        for f in range(k):
            for i in positions[f * len(positions) // k : (f + 1) * len(positions) // k]:
                fold[int(i)] = f
    return fold


def hand_made_accuracy(tmp_path, lines: list[str], k: int, seed: int, options: tuple) -> tuple[int, int]:
    """(right, total) of k models trained by `budgetlearn train` on the other folds' lines (file order) and
    scored by `budgetlearn eval` on their fold."""
    fold = hand_made_folds(lines, k, seed)
    right = total = 0
    for f in range(k):
        (tmp_path / f"train{f}").write_text("".join(line + "\n" for line, g in zip(lines, fold) if g != f))
        (tmp_path / f"test{f}").write_text("".join(line + "\n" for line, g in zip(lines, fold) if g == f))
        r = run("train", "-q", *options, "--seed", seed, tmp_path / f"train{f}", "-o", tmp_path / f"m{f}")
        assert r.exit_code == 0, r.output
        report = json.loads(run("eval", "--json", tmp_path / f"m{f}", tmp_path / f"test{f}").stdout)
        right += round(report["accuracy"] * report["examples"])
        total += report["examples"]
    return right, total


CV_CASES = {
    "a9a, the defaults": (lambda: (ROOT / "sample_data" / "a9a").read_text().splitlines()[:1500], ()),
    "three labels, mc-perceptron, scaled, two passes": (
        lambda: [
            f"{1 + i % 3} 1:{(i * 7) % 11} 2:{(i * 5) % 13 - 6}" + (" 3:40" if i % 4 == 0 else "") for i in range(400)
        ],
        ("-a", "mc-perceptron", "--scale", "--epochs", "2"),
    ),
}


@pytest.mark.parametrize("case", sorted(CV_CASES))
def test_train_v_is_a_hand_made_k_fold_split(tmp_path, case):
    make, options = CV_CASES[case]
    lines = make()
    data = tmp_path / "data.txt"
    data.write_text("\n".join(lines) + "\n")
    right, total = hand_made_accuracy(tmp_path, lines, 5, 3, options)
    r = run("train", *options, "--seed", 3, "-v", 5, data)
    assert r.exit_code == 0, r.output
    assert r.stdout == "Cross Validation Accuracy = %g%%\n" % (100.0 * right / total)  # svm-train -v's line
    assert json.loads(run("train", *options, "--seed", 3, "-v", 5, "--json", data).stdout)["correct"] == right
    assert not (tmp_path / "data.txt.model").exists()  # -v writes no model


def test_tune_folds_ranks_by_the_hand_made_cross_validation(tmp_path):
    lines = (ROOT / "sample_data" / "a9a").read_text().splitlines()[:1200]
    data = tmp_path / "data.txt"
    data.write_text("\n".join(lines) + "\n")
    r = run(
        "tune",
        "-a",
        "rbp",
        "--grid",
        "budget=20,200",
        "--grid",
        "gamma=2**-6..2**-4:2",
        "--folds",
        5,
        "--json",
        data,
        "--save-best",
        tmp_path / "best.model",
    )
    assert r.exit_code == 0, r.output
    table = json.loads(r.stdout)
    expected = {}
    for row in table["rows"]:
        setting = row["setting"]
        options = ("-a", "rbp", "-B", setting["budget"], "--gamma", repr(setting["gamma"]))
        right, total = hand_made_accuracy(tmp_path, lines, 5, 0, options)
        expected[(setting["budget"], setting["gamma"])] = right / total
        assert row["cv_accuracy_mean"] == right / total
    assert sorted(expected) == [(20, 2**-6), (20, 2**-4), (200, 2**-6), (200, 2**-4)]
    ranked = [(row["setting"]["budget"], row["setting"]["gamma"]) for row in table["rows"]]
    assert ranked == sorted(expected, key=lambda s: -expected[s])  # best first (ties: grid order)
    best = ranked[0]
    assert table["best"] == f"budgetlearn train -a rbp --gamma {best[1]!r} --budget {best[0]} {data}"
    # --save-best saves the model of that command, which cross-validation estimated
    assert run(*table["best"].split()[1:], "-o", tmp_path / "again.model").exit_code == 0
    saved = run("predict", "--scores", tmp_path / "best.model", data).stdout
    assert saved and saved == run("predict", "--scores", tmp_path / "again.model", data).stdout


@pytest.mark.parametrize(
    "spec,values",
    [
        ("gamma=2**-5..2**3", [2.0**e for e in range(-5, 4)]),
        ("gamma=2**-15..2**3:2", [2.0**e for e in range(-15, 4, 2)]),
        ("gamma=10**-4..10**0", [1e-4, 1e-3, 1e-2, 0.1, 1.0]),
        ("gamma=2**3..2**-1:-2", [8.0, 2.0, 0.5]),
        ("gamma=0.01,2**-3", [0.01, 0.125]),
        ("eta=0.1..0.4:0.1", [0.1, 0.2, 0.3, 0.4]),
        ("budget=100..400:100", [100, 200, 300, 400]),
        ("budget=2**5..2**7", [32, 64, 128]),
    ],
)
def test_grid_ranges_as_grid_py(spec, values):
    from budgetcli.run.grid import parse_grid

    algorithm = "rbp" if spec.startswith("budget") else "projectron++"
    ((_, got),) = parse_grid([spec], algorithm)
    assert got == values and all(type(v) is type(values[0]) for v in got)


@pytest.mark.parametrize(
    "spec,message",
    [
        ("gamma=2**-5..10**3", "one base B"),
        ("gamma=2**1..2**5:-1", "does not lead from 1 to 5"),
        ("gamma=0.1..0.5", "give the step"),
        ("budget=2**-1..2**2", "is not a whole number"),
        ("gamma=2**0.5", "not a power B**E"),
        ("gamma=2**-20..2**20:0", "does not lead"),
        ("budget=1..100000", "more than 10,000"),
    ],
)
def test_a_bad_range_is_refused_naming_it(spec, message):
    algorithm = "rbp" if spec.startswith("budget") else "projectron++"
    r = run("tune", "-a", algorithm, "--grid", spec, "missing.txt")
    assert r.exit_code == 2 and message in r.stderr, r.stderr
