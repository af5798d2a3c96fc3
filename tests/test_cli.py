"""The budgetlearn command: train / predict / eval end to end, bad input, labels, pipes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.learning import algorithms
from budgetcli.base import registry
from budgetcli.entry import main
from budgetcli.model.model import Model

from .helpers import assert_same_state, random_stream

GOOD = "+1 1:0.5 2:1\n-1 1:-1 3:0.25\n+1 2:0.75\n-1 1:-0.5 2:-1\n"


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def write_stream(path, n=300, seed=0, labels=("-1", "+1")):
    X, y = random_stream(n, 4, seed)
    with open(path, "w") as f:
        for row, lab in zip(X, y):
            feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0)
            f.write(f"{labels[int(lab > 0)]} {feats}\n")
    return X, y


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "train.txt"
    write_stream(path)
    return path


def test_train_writes_model_and_summary(data, tmp_path):
    out = tmp_path / "m.model"
    r = run("train", "-a", "projectron++", "--eta", "0.1", "--gamma", "0.5", data, "-o", out)
    assert r.exit_code == 0, r.output
    model = Model.load(out)
    assert model.learner.counter("examples") == 300
    assert model.learner.hyper == {"eta": 0.1, "margin_step": "fig5"}
    for word in ("examples", "mistakes", "margin updates", "support vectors", "seconds"):
        assert word in r.stderr
    assert r.stdout == ""


def test_json_summary_agrees_with_the_model(data, tmp_path):
    out = tmp_path / "m.model"
    r = run("train", "-a", "projectron", "--eta", "0.2", "--json", "-q", data, "-o", out)
    assert r.exit_code == 0
    s = json.loads(r.stdout)
    learner = Model.load(out).learner
    assert s["examples"] == 300
    assert s["mistakes"] == learner.counter("mistakes")
    assert s["support_size"] == len(learner.support)
    assert s["online_mistake_rate"] == pytest.approx(s["mistakes"] / 300)
    assert r.stderr == ""  # --quiet


def test_default_output_is_data_dot_model(data):
    r = run("train", "-a", "perceptron", "-q", data)
    assert r.exit_code == 0
    assert os.path.exists(f"{data}.model")


def test_default_gamma_is_one_over_largest_index(data, tmp_path):
    out = tmp_path / "m.model"
    assert run("train", "-a", "perceptron", "-q", data, "-o", out).exit_code == 0
    assert Model.load(out).learner.kernel.gamma == pytest.approx(1 / 4)


def test_sigma_sets_gamma(data, tmp_path):
    out = tmp_path / "m.model"
    assert run("train", "-a", "perceptron", "--sigma", "2", "-q", data, "-o", out).exit_code == 0
    assert Model.load(out).learner.kernel.gamma == pytest.approx(1 / 8)


@pytest.mark.parametrize(
    "args",
    [
        ("-a", "perceptron", "--eta", "0.1"),  # a parameter perceptron does not take
        ("-a", "projectron", "--eta", "-1"),  # out of range
        ("-a", "projectron", "--gamma", "1", "--sigma", "1"),
        ("-a", "projectron", "--gamma", "0"),
        ("-a", "nosuch"),
    ],
)
def test_usage_errors_exit_2_and_write_nothing(data, tmp_path, args):
    out = tmp_path / "m.model"
    r = run("train", *args, data, "-o", out)
    assert r.exit_code == 2
    assert not out.exists()


def test_unwritable_output_fails_before_training(data, tmp_path):
    r = run("train", "-a", "perceptron", data, "-o", tmp_path / "no" / "such" / "dir" / "m.model")
    assert r.exit_code == 1
    assert "cannot write the model" in r.stderr
    assert "examples" not in r.stderr  # no training summary: it stopped before reading


def test_stdin_needs_output(data):
    r = run("train", "-a", "perceptron", "-", input=data.read_text())
    assert r.exit_code == 2
    assert "-o" in r.output


def test_train_from_stdin_equals_train_from_file(data, tmp_path):
    a, b = tmp_path / "a.model", tmp_path / "b.model"
    assert run("train", "-a", "projectron", "--gamma", "0.5", "-q", data, "-o", a).exit_code == 0
    assert run("train", "-a", "projectron", "--gamma", "0.5", "-q", "-", "-o", b, input=data.read_text()).exit_code == 0
    sa, sb = Model.load(a).learner.state()[1], Model.load(b).learner.state()[1]
    for name in sa:
        np.testing.assert_array_equal(sa[name], sb[name])


def test_gzip_input(data, tmp_path):
    gz = tmp_path / "train.txt.gz"
    gz.write_bytes(gzip.compress(data.read_bytes()))
    out = tmp_path / "m.model"
    assert run("train", "-a", "perceptron", "-q", gz, "-o", out).exit_code == 0
    assert Model.load(out).learner.counter("examples") == 300


BAD_LINES = [
    ("abc 1:1", "abc"),
    ("+1 1:abc", "1:abc"),
    ("+1 -1:1", "-1:1"),
    ("+1 -2:1", "-2:1"),
    ("+1 5:1 3:1", "3:1"),
    ("+1 3:", "3:"),
    ("+1 :3", ":3"),
    ("+1 1:nan", "1:nan"),
    ("+1 1:inf", "1:inf"),
    ("nan 1:1", "nan"),
]


@pytest.mark.parametrize("line,token", BAD_LINES)
def test_malformed_line_names_file_and_line_and_writes_nothing(tmp_path, line, token):
    path = tmp_path / "bad.txt"
    path.write_text(GOOD + line + "\n" + GOOD)
    out = tmp_path / "m.model"
    r = run("train", "-a", "perceptron", path, "-o", out)
    assert r.exit_code == 1
    assert f"{path}:5:" in r.stderr
    assert token in r.stderr
    assert not out.exists()


def test_malformed_line_leaves_existing_model_untouched(data, tmp_path):
    out = tmp_path / "m.model"
    assert run("train", "-a", "perceptron", "-q", data, "-o", out).exit_code == 0
    before = out.read_bytes()
    bad = tmp_path / "bad.txt"
    bad.write_text(GOOD * 2000 + "+1 1:x\n")  # fails after several chunks were learned
    r = run("train", "-a", "perceptron", bad, "-o", out)
    assert r.exit_code == 1
    assert f"{bad}:8001:" in r.stderr
    assert out.read_bytes() == before


def test_skip_bad_lines_reports_and_trains(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text(GOOD + "+1 1:x\n" + GOOD + "+1 -1:1\n")
    out = tmp_path / "m.model"
    r = run("train", "-a", "perceptron", "--skip-bad-lines", "--json", path, "-o", out)
    assert r.exit_code == 0
    assert json.loads(r.stdout)["skipped_lines"] == 2
    assert "2 malformed lines" in r.stderr
    assert Model.load(out).learner.counter("examples") == 8


def test_third_label_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "three.txt"
    path.write_text("1 1:1\n2 1:2\n1 1:0.5\n3 1:3\n")
    out = tmp_path / "m.model"
    r = run("train", "-a", "perceptron", path, "-o", out)
    assert r.exit_code == 1
    assert f"{path}:4:" in r.stderr and "third label" in r.stderr
    assert not out.exists()


def test_empty_data_is_an_error(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("# nothing here\n\n")
    out = tmp_path / "m.model"
    r = run("train", "-a", "perceptron", path, "-o", out)
    assert r.exit_code == 1
    assert "no examples" in r.stderr
    assert not out.exists()


@pytest.mark.parametrize("labels", [("0", "1"), ("1", "2"), ("2", "4"), ("-1.0", "+1.0")])
def test_predict_writes_labels_in_the_files_spelling(tmp_path, labels):
    path = tmp_path / "train.txt"
    X, y = write_stream(path, labels=labels)
    out = tmp_path / "m.model"
    assert run("train", "-a", "perceptron", "--gamma", "0.5", "-q", path, "-o", out).exit_code == 0
    r = run("predict", out, path)
    assert r.exit_code == 0
    predicted = r.stdout.splitlines()
    assert len(predicted) == 300 and set(predicted) == set(labels)
    # the larger label is the positive class: scores > 0 predict it
    r = run("predict", "--scores", out, path)
    for line in r.stdout.splitlines():
        lab, score = line.split()
        assert lab == (labels[1] if float(score) > 0 else labels[0])
    # well above chance on its own training data: an inverted label map would score below 0.4
    truth = [labels[int(v > 0)] for v in y]
    assert np.mean(np.array(predicted) == np.array(truth)) > 0.65


def test_eval_report_agrees_with_predict(data, tmp_path):
    out = tmp_path / "m.model"
    assert run("train", "-a", "projectron++", "--gamma", "0.5", "-q", data, "-o", out).exit_code == 0
    test = tmp_path / "test.txt"
    X, y = write_stream(test, n=200, seed=9)
    scores = np.array([float(row.split()[1]) for row in run("predict", "--scores", out, test).stdout.splitlines()])
    r = run("eval", "--json", out, test)
    assert r.exit_code == 0
    rep = json.loads(r.stdout)
    pred = np.where(scores > 0, 1.0, -1.0)
    assert rep["examples"] == 200
    assert rep["accuracy"] == pytest.approx(np.mean(pred == y))
    pos, neg = scores[y > 0], scores[y < 0]
    pairs = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    assert rep["auc"] == pytest.approx(pairs / (len(pos) * len(neg)))
    cm = np.array(rep["confusion_matrix"]["rows_true_columns_predicted"])
    assert rep["confusion_matrix"]["labels"] == ["-1", "+1"]
    assert cm[1, 1] == np.sum((pred > 0) & (y > 0)) and cm[0, 1] == np.sum((pred > 0) & (y < 0))
    tp, fp, fn = cm[1, 1], cm[0, 1], cm[1, 0]
    assert rep["classes"]["+1"]["precision"] == pytest.approx(tp / (tp + fp))
    assert rep["classes"]["+1"]["recall"] == pytest.approx(tp / (tp + fn))
    text = run("eval", out, test)
    assert text.exit_code == 0 and "accuracy" in text.stdout and "confusion" in text.stdout


@pytest.mark.parametrize("content", [b"", b"not a model at all\n", b"PK\x03\x04garbage"])
def test_bad_model_file_is_one_line_error(data, tmp_path, content):
    bad = tmp_path / "bad.model"
    bad.write_bytes(content)
    r = run("predict", bad, data)
    assert r.exit_code == 1
    assert r.stderr.count("\n") == 1 and str(bad) in r.stderr


def test_algorithms_lists_every_algorithm_with_its_paper():
    r = run("algorithms")
    for name in ("perceptron", "projectron", "projectron++", "--eta", "JMLR 2009"):
        assert name in r.stdout


def test_generate_writes_the_papers_gaussians(tmp_path):
    out = tmp_path / "g.txt"
    assert run("generate", "projectron-gaussians", "-n", "500", "--seed", "3", "-o", out).exit_code == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 500
    first = np.array([[float(t.split(":")[1]) for t in line.split()[1:]] for line in lines])
    assert first.shape == (500, 2)
    # the second coordinate has variance 2, the first 0.2 (plus the ±1 means)
    assert np.var(first[:, 1]) > 2 * np.var(first[:, 0])


def test_predict_in_a_pipe_that_closes_early_exits_quietly(tmp_path):
    path = tmp_path / "train.txt"
    write_stream(path, n=300)
    big = tmp_path / "big.txt"
    big.write_text(path.read_text() * 200)  # 60,000 lines: more than a pipe buffer of output
    out = tmp_path / "m.model"
    assert run("train", "-a", "perceptron", "-q", path, "-o", out).exit_code == 0
    cmd = f'"{sys.executable}" -m budgetcli predict "{out}" "{big}" | head -n 2'
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, timeout=300)
    assert p.stdout.count("\n") == 2
    assert p.stderr == ""
    assert p.returncode == 0


@pytest.mark.parametrize("algorithm", sorted(algorithms.load_all()))
@pytest.mark.parametrize("hypothesis", ["last", "default"])
def test_resume_day_by_day_equals_one_run(tmp_path, algorithm, hypothesis):
    """A cron job that resumes the model saved with --save-resume on each day's file ends with the
    model of one run over all days, bit for bit: the file, and so its online learner and its running
    average (with a learner that evicts, the archive of evicted vectors its average keeps)."""
    full = tmp_path / "all.txt"
    write_stream(full, n=450, seed=3)
    lines = full.read_text().splitlines(keepends=True)
    days = []
    for i in range(3):
        day = tmp_path / f"day{i}.txt"
        day.write_text("".join(lines[150 * i : 150 * (i + 1)]))
        days.append(day)
    flags = ["--hypothesis", "last"] if hypothesis == "last" else []
    flags += ["--task", registry.get(algorithm).tasks[0]]  # ±1 targets to a regression learner, ignored by novelty
    one = tmp_path / "one.model"
    assert (
        run("train", "-a", algorithm, *flags, "--gamma", "0.5", "-q", "--save-resume", full, "-o", one).exit_code == 0
    )
    nightly = tmp_path / "nightly.model"
    first = run("train", "-a", algorithm, *flags, "--gamma", "0.5", "-q", "--save-resume", days[0], "-o", nightly)
    assert first.exit_code == 0
    for day in days[1:]:
        r = run("train", "--resume", nightly, "--save-resume", "--json", "-q", day, "-o", nightly)
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["notes"] == []  # nothing was rebuilt
    assert json.loads(r.stdout)["examples"] == 450
    cls = registry.get(algorithm)
    if cls.evicts and "classification" in cls.tasks:  # the default budget of 100 was exceeded: evictions resumed
        assert Model.load(one).learner.counter("mistakes") > 100
    m1, m2 = Model.load(one, resume=True), Model.load(nightly, resume=True)
    assert m1.hypothesis == m2.hypothesis
    h1, a1 = m1.learner.state()
    h2, a2 = m2.learner.state()
    assert h1 == h2
    assert_same_state(a1, a2)
    assert one.read_bytes() == nightly.read_bytes()


def test_resume_refuses_new_settings(data, tmp_path):
    out = tmp_path / "m.model"
    assert run("train", "-a", "projectron", "-q", data, "-o", out).exit_code == 0
    r = run("train", "--resume", out, "--eta", "0.5", data, "-o", out)
    assert r.exit_code == 2 and "--eta" in r.output


def test_online_to_batch_average_and_last(data, tmp_path):
    online, last, avg = tmp_path / "online.model", tmp_path / "last.model", tmp_path / "avg.model"
    common = ["-a", "projectron++", "--gamma", "0.5", "-q", data]
    assert run("train", "--hypothesis", "last", *common, "-o", online).exit_code == 0
    assert run("online-to-batch", "--method", "last", *common, "-o", last).exit_code == 0
    r = run("online-to-batch", *common, "--json", "-o", avg)
    assert r.exit_code == 0 and json.loads(r.stdout)["hypothesis"] == "average"
    s_online, s_last = Model.load(online).learner.state()[1], Model.load(last).learner.state()[1]
    np.testing.assert_array_equal(s_online["alpha"], s_last["alpha"])
    m_avg = Model.load(avg)
    assert m_avg.hypothesis == "average"
    np.testing.assert_allclose(m_avg.learner.state()[1]["alpha"], Model.load(online).learner.averaged_alpha())
    r = run("train", "--resume", avg, data, "-o", tmp_path / "x.model")
    assert r.exit_code == 1 and "cannot be resumed" in r.stderr


def arrays_of(path):
    return Model.load(path).learner.state()[1]


def test_epochs_stream_the_file_again(data, tmp_path):
    twice = tmp_path / "twice.txt"
    twice.write_text(data.read_text() * 2)
    a, b, c = tmp_path / "a.model", tmp_path / "b.model", tmp_path / "c.model"
    common = ["-a", "projectron++", "--gamma", "0.5", "-q"]
    assert run("train", *common, "--epochs", "2", data, "-o", a).exit_code == 0
    assert run("train", *common, twice, "-o", b).exit_code == 0
    assert run("train", *common, "--epochs", "2", "-", "-o", c, input=data.read_text()).exit_code == 0
    for other in (arrays_of(b), arrays_of(c)):
        for name, arr in arrays_of(a).items():
            np.testing.assert_array_equal(arr, other[name], err_msg=name)
    assert Model.load(a).learner.counter("examples") == 600


def test_shuffle_is_seeded(data, tmp_path):
    common = ["train", "-a", "perceptron", "--gamma", "0.5", "-q", "--shuffle", "--epochs", "2"]
    paths = {}
    for name, seed in (("s1", 1), ("s1again", 1), ("s2", 2)):
        paths[name] = tmp_path / f"{name}.model"
        assert run(*common, "--seed", seed, data, "-o", paths[name]).exit_code == 0
    plain = tmp_path / "plain.model"
    assert run("train", "-a", "perceptron", "--gamma", "0.5", "-q", "--epochs", "2", data, "-o", plain).exit_code == 0
    s1, s1again, s2, p = (arrays_of(paths["s1"]), arrays_of(paths["s1again"]), arrays_of(paths["s2"]), arrays_of(plain))
    np.testing.assert_array_equal(s1["sv_values"], s1again["sv_values"])
    assert not np.array_equal(s1["sv_values"][:20], s2["sv_values"][:20])
    assert not np.array_equal(s1["sv_values"][:20], p["sv_values"][:20])


def test_online_to_batch_with_evictions_exact_and_projected(data, tmp_path):
    exact, projected = tmp_path / "exact.model", tmp_path / "projected.model"
    r = run("online-to-batch", "-a", "rbp", "-B", "10", "--gamma", "0.5", "--json", data, "-o", exact)
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["online_support_size"] == 10 and s["support_size"] > 10  # evicted vectors are part of the average
    assert "evicted support vectors" in r.stderr and "projected-average" in r.stderr
    r = run(
        "online-to-batch",
        "--method",
        "projected-average",
        "-a",
        "rbp",
        "-B",
        "10",
        "--gamma",
        "0.5",
        "--json",
        data,
        "-o",
        projected,
    )
    assert r.exit_code == 0 and json.loads(r.stdout)["support_size"] == 10
    assert Model.load(projected).hypothesis == "projected-average"


def test_average_of_a_resumed_evicting_model_is_refused(data, tmp_path):
    m = tmp_path / "m.model"
    assert run("train", "-a", "lbp", "-B", "5", "--hypothesis", "last", "-q", data, "-o", m).exit_code == 0
    r = run("online-to-batch", "--resume", m, data, "-o", tmp_path / "avg.model")
    assert r.exit_code == 2 and "evicted" in r.output
    assert not (tmp_path / "avg.model").exists()


def test_same_seed_gives_a_byte_identical_model_file(data, tmp_path):
    paths = [tmp_path / f"{i}.model" for i in range(3)]
    for path, seed in zip(paths, (5, 5, 6)):
        assert run("train", "-a", "rbp", "-B", "8", "--seed", seed, "-q", data, "-o", path).exit_code == 0
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()
