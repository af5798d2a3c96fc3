"""`train --average`: a model that predicts with the averaged hypothesis and still resumes the online
learner (issue: a good held-out model from the user's own commands)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from budgetcli import modelfile
from budgetcli.model import Model

from .test_cli import run, write_stream

RBF = ("--gamma", "0.5")


@pytest.fixture
def days(tmp_path):
    """Two halves of one stream, and the whole of it, as files."""
    whole, day1, day2 = tmp_path / "whole.txt", tmp_path / "day1.txt", tmp_path / "day2.txt"
    write_stream(whole, n=400, seed=5)
    lines = whole.read_text().splitlines(keepends=True)
    day1.write_text("".join(lines[:230]))
    day2.write_text("".join(lines[230:]))
    return whole, day1, day2


def scores(model, data) -> np.ndarray:
    r = run("predict", "--scores", model, data)
    assert r.exit_code == 0, r.output
    return np.array([float(line.split()[1]) for line in r.output.splitlines()])


@pytest.mark.parametrize("algo", [("perceptron",), ("projectron++", "--eta", "0.3"), ("pa-i",)])
def test_without_evictions_the_model_predicts_online_to_batch_s_average(days, tmp_path, algo):
    whole, _, _ = days
    avg, batch, online = tmp_path / "avg.model", tmp_path / "batch.model", tmp_path / "online.model"
    assert run("train", "-a", *algo, *RBF, "--average", whole, "-o", avg).exit_code == 0
    assert run("online-to-batch", "-a", *algo, *RBF, whole, "-o", batch).exit_code == 0
    assert run("train", "-a", *algo, *RBF, whole, "-o", online).exit_code == 0
    assert np.array_equal(scores(avg, whole), scores(batch, whole))
    assert not np.array_equal(scores(avg, whole), scores(online, whole))
    # the file holds the online state: loaded to resume, it is the plain train's learner
    resumed, plain = Model.load(avg, resume=True), Model.load(online, resume=True)
    assert resumed.hypothesis == "running-average"
    n = len(plain.learner.support)
    assert np.array_equal(resumed.learner.slot["alpha"][:n], plain.learner.slot["alpha"][:n])


def test_with_evictions_the_model_is_the_projected_average_within_the_budget(days, tmp_path):
    whole, _, _ = days
    avg, batch = tmp_path / "avg.model", tmp_path / "batch.model"
    r = run("train", "-a", "rbp", "-B", "10", *RBF, "--average", "-q", "--json", whole, "-o", avg)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["support_size"] == 10
    assert run("online-to-batch", "--method", "projected-average", "-a", "rbp", "-B", "10", *RBF, whole,
               "-o", batch).exit_code == 0
    # the same projection; train folds Σ_t coefficient, online-to-batch (1/T) Σ_t coefficient, into it:
    # equal up to the rounding of that division
    np.testing.assert_allclose(scores(avg, whole), scores(batch, whole), rtol=1e-12, atol=1e-12)
    header, _ = modelfile.load(avg)
    assert header["hypothesis"] == "running-average"


@pytest.mark.parametrize("algo", [("perceptron",), ("projectron", "--eta", "0.3")])
def test_a_resumed_second_day_is_the_one_run_average(days, tmp_path, algo):
    whole, day1, day2 = days
    one, two = tmp_path / "one.model", tmp_path / "two.model"
    assert run("train", "-a", *algo, *RBF, "--average", "--save-resume", whole, "-o", one).exit_code == 0
    assert run("train", "-a", *algo, *RBF, "--average", "--save-resume", day1, "-o", two).exit_code == 0
    r = run("train", "--resume", two, "--save-resume", day2, "-o", two)  # stays a running average by itself
    assert r.exit_code == 0, r.output
    assert "averaged hypothesis" in r.output
    assert np.array_equal(scores(one, whole), scores(two, whole))


def test_an_evicting_learner_resumes_its_average(days, tmp_path):
    whole, day1, day2 = days
    one, two = tmp_path / "one.model", tmp_path / "two.model"
    assert run("train", "-a", "rbp", "-B", "10", *RBF, "--average", whole, "-o", one).exit_code == 0
    assert run("train", "-a", "rbp", "-B", "10", *RBF, "--average", day1, "-o", two).exit_code == 0
    r = run("train", "--resume", two, "--average", "-q", "--json", day2, "-o", two)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["support_size"] == 10
    a, b = Model.load(one, resume=True).learner, Model.load(two, resume=True).learner
    assert a.counters.tolist() == b.counters.tolist()  # the online run is the same
    assert np.array_equal(a.slot["alpha"][:10], b.slot["alpha"][:10])
    # day 1's evicted vectors were projected onto day 1's support set, not the final one: the
    # averages are close, not equal
    sa, sb = scores(one, whole), scores(two, whole)
    assert np.mean(np.sign(sa) == np.sign(sb)) > 0.9


def test_refusals_say_why(days, tmp_path):
    whole, day1, _ = days
    out = tmp_path / "m.model"
    r = run("train", "-a", "mc-perceptron", *RBF, "--average", whole, "-o", out)
    assert r.exit_code == 2 and "multiclass learner" in r.output and not out.exists()
    assert run("train", "-a", "rbp", "-B", "10", *RBF, day1, "-o", out).exit_code == 0
    r = run("train", "--resume", out, "--average", whole, "-o", tmp_path / "x.model")
    assert r.exit_code == 2 and "evicted before this run were not kept" in r.output
    r = run("train", "-a", "rbp", "-B", "10", *RBF, "--average", day1, whole, "-o", tmp_path / "y.model")
    assert r.exit_code == 2 and "sharded run" in r.output


def test_info_and_the_summary_name_the_hypothesis(days, tmp_path):
    whole, _, _ = days
    avg, online = tmp_path / "avg.model", tmp_path / "online.model"
    r = run("train", "-a", "perceptron", *RBF, "--average", whole, "-o", avg)
    assert "(predicts with the averaged hypothesis" in r.output
    r = run("train", "-a", "perceptron", *RBF, whole, "-o", online)
    assert "(predicts with the last hypothesis" in r.output
    assert "hypothesis      running-average: predicts with the averaged" in run("info", avg).output
    assert json.loads(run("info", "--json", avg).output)["hypothesis"] == "running-average"


def test_a_multiclass_file_claiming_a_running_average_is_refused(tmp_path):
    data, model = tmp_path / "mc.txt", tmp_path / "mc.model"
    write_stream(data, n=60, seed=2, labels=("1", "2"))
    with open(data, "a") as f:
        f.write("3 1:0.5 2:0.25\n")
    assert run("train", "-a", "mc-perceptron", *RBF, data, "-o", model).exit_code == 0
    header, arrays = modelfile.load(model)
    header["hypothesis"] = "running-average"
    modelfile.save(model, header, arrays)
    r = run("predict", model, data)
    assert r.exit_code == 1 and "not kept by multiclass learners" in r.output
