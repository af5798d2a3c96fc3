"""tune --task novelty (issue #49): runs ranked by their AUC on --test, whose labels say which examples are
normal (--normal-label); the online flagged fraction beside ν; the refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.entry import main

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def ring(rng, n: int) -> np.ndarray:
    """Points near the circle of radius 3: the normal data."""
    angle, radius = rng.uniform(0, 2 * np.pi, n), 3 + 0.3 * rng.standard_normal(n)
    return np.c_[radius * np.cos(angle), radius * np.sin(angle)]


def write(path, X: np.ndarray, labels) -> None:
    path.write_text("".join(f"{lab:g} 1:{x[0]!r} 2:{x[1]!r}\n" for x, lab in zip(X.tolist(), labels)))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A ring of normal points labelled 2; the test file's novel points, labelled 1, fill the hole in the
    middle: a wide kernel (γ = 0.05) scores the middle as the most normal place, a narrow one (γ = 0.5)
    sees the hole."""
    d, rng = tmp_path_factory.mktemp("tune_novelty"), np.random.default_rng(0)
    write(d / "train.txt", ring(rng, 600), [2] * 600)
    test = np.r_[ring(rng, 240), 1.6 * rng.standard_normal((60, 2))]
    write(d / "test.txt", test, [2] * 240 + [1] * 60)
    return d


def test_runs_rank_by_the_held_out_auc_of_their_scores(files, tmp_path):
    """Each row's test AUC is scikit-learn's roc_auc_score of `predict --scores` of the model its setting's
    train command writes, normal = labelled 2; the rows are in the order of those AUCs.  Any other figure
    ranks them otherwise: grid order, support size (44 against 55) and the AUC with the default normal
    label 1 (1 − AUC here) all put γ = 0.05 first."""
    test = files / "test.txt"
    r = run(
        "tune", "--task", "novelty", "--grid", "gamma=0.05,0.5", "--permutations", "0",
        "--test", test, "--normal-label", "2", "--json", "--save-best", tmp_path / "best.model", files / "train.txt",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    table = json.loads(r.output.splitlines()[0])
    assert table["sort"] == "test-auc" and table["algorithm"] == "norma-novelty"
    normal = np.array([line.split()[0] == "2" for line in test.read_text().splitlines()])
    expected = {}
    for gamma in (0.05, 0.5):
        model = tmp_path / f"{gamma}.model"
        assert (
            run("train", "--task", "novelty", "--gamma", gamma, "-q", files / "train.txt", "-o", model).exit_code == 0
        )
        scores = [float(line.split()[1]) for line in run("predict", "--scores", model, test).output.splitlines()]
        expected[gamma] = sklearn_metrics.roc_auc_score(normal, scores)
    got = [(row["setting"]["gamma"], row["test_auc_mean"]) for row in table["rows"]]
    assert [g for g, _ in got] == sorted(expected, key=expected.get, reverse=True) == [0.5, 0.05]
    for gamma, auc in got:
        assert auc == pytest.approx(expected[gamma], abs=1e-12)
    assert 0.5 < expected[0.5] < 1 and expected[0.05] < 0.5  # neither a tie nor a trivial separation
    supports = {row["setting"]["gamma"]: row["support_size_mean"] for row in table["rows"]}
    assert supports[0.05] < supports[0.5]  # --sort support would put γ = 0.05 first
    for row in table["rows"]:  # the online flagged fraction, beside ν
        assert abs(row["online_flagged_fraction_mean"] - 0.1) < 0.05 and row["per_run"][0]["nu"] == 0.1
    assert "--gamma 0.5" in table["best"] and "--task novelty" in table["best"]
    best = run("predict", "--scores", tmp_path / "best.model", test).output
    assert best == run("predict", "--scores", tmp_path / "0.5.model", test).output


def test_the_printed_table_shows_auc_and_the_flagged_fraction_beside_nu(files):
    r = run(
        "tune", "--task", "novelty", "--grid", "nu=0.1,0.3", "--gamma", "0.5", "--permutations", "2",
        "--test", files / "test.txt", "--normal-label", "2", files / "train.txt",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "sorted by test-auc" in r.output and "test AUC" in r.output and "online flagged % (ν %)" in r.output
    assert "(10) │" in r.output and "(30) │" in r.output


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "give --test FILE"),
        (["--folds", "3"], "train -v does not cross-validate a novelty detector"),
        (["--sort", "test-accuracy"], "ranks classification runs; novelty ranks by test-auc"),
        (["--normal-label", "nan"], "'nan' is not a finite number"),
        (["--normal-label", "inf"], "'inf' is not a finite number"),
    ],
)
def test_refusals_are_one_line(files, args, message):
    r = run("tune", "--task", "novelty", *args, files / "train.txt")
    assert r.exit_code == 2 and message in r.output, r.output


def test_the_normal_label_is_checked_against_the_test_labels_and_the_task(files):
    r = run("tune", "--task", "novelty", "--test", files / "test.txt", "--normal-label", "5", files / "train.txt")
    assert r.exit_code == 1 and "no example is labelled 5, the normal label" in r.output
    r = run("tune", "--normal-label", "2", files / "train.txt")
    assert r.exit_code == 2 and "--normal-label is for --task novelty" in r.output
    r = run("tune", "-a", "norma-novelty", files / "train.txt")
    assert r.exit_code == 2 and "give --task novelty" in r.output
