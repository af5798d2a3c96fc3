"""What a new user meets first (issue: first contact): the averaged hypothesis by default, warnings when
a model is no better than a constant, in `train` and in `eval`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.run import pipeline
from budgetcli.entry import main
from budgetcli.model.model import Model
from budgetcli.model.spec import Sharding, TrainSpec

from .helpers import SAMPLE_DATA
from .test_cli import write_stream


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="budgetlearn")


@pytest.fixture(scope="module")
def a9a_head(tmp_path_factory):
    d = tmp_path_factory.mktemp("a9a")
    lines = (SAMPLE_DATA / "a9a").read_text().splitlines(keepends=True)
    (d / "train.txt").write_text("".join(lines[:3000]))
    (d / "test.txt").write_text("".join((SAMPLE_DATA / "a9a.t").read_text().splitlines(keepends=True)[:2000]))
    return d


def test_train_writes_the_averaged_hypothesis_unless_told_otherwise(a9a_head, tmp_path):
    data = a9a_head / "train.txt"
    for flags, hypothesis in (
        ([], "running-average"),
        (["--hypothesis", "average"], "running-average"),
        (["--average"], "running-average"),
        (["--hypothesis", "last"], "online"),
    ):
        r = run("train", "-a", "perceptron", "--json", "-q", *flags, data, "-o", tmp_path / "m.model")
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["hypothesis"] == hypothesis
        model = Model.load(tmp_path / "m.model")
        assert model.hypothesis == hypothesis and model.run["hypothesis"] == hypothesis
    r = run("train", "-a", "perceptron", "--average", "--hypothesis", "last", data, "-o", tmp_path / "m.model")
    assert r.exit_code == 2 and "contradict" in r.stderr


def test_the_averaged_model_predicts_what_the_average_of_its_hypotheses_predicts(a9a_head, tmp_path):
    """The default model's scores are those of (1/T) Σ f_t, not of f_T (which --hypothesis last writes)."""
    data = a9a_head / "train.txt"
    run("train", "-a", "perceptron", "-q", data, "-o", tmp_path / "avg.model")
    run("train", "-a", "perceptron", "-q", "--hypothesis", "last", data, "-o", tmp_path / "last.model")
    online = Model.load(tmp_path / "last.model").learner
    averaged = Model.load(tmp_path / "avg.model").learner  # loaded to predict: its averaged coefficients
    n = len(online.support)
    assert np.allclose(averaged.slot["alpha"][:n], online.averaged_alpha())
    assert not np.allclose(averaged.slot["alpha"][:n], online.slot["alpha"][:n])


def test_resuming_keeps_the_model_s_own_hypothesis(a9a_head, tmp_path):
    """An online model resumed without --hypothesis stays online (its file holds no running average to
    continue for an evicting learner); a running-average one stays one."""
    data = a9a_head / "train.txt"
    for flags, hypothesis in (([], "running-average"), (["--hypothesis", "last"], "online")):
        out = tmp_path / f"{hypothesis}.model"
        assert run("train", "-a", "lbp", "-q", *flags, data, "-o", out).exit_code == 0
        r = run("train", "--resume", out, "--json", "-q", data, "-o", out)
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["hypothesis"] == hypothesis


def test_a_sharded_run_of_an_evicting_learner_writes_the_last_hypothesis_by_default(a9a_head, tmp_path):
    spec = TrainSpec("rbp", sharding=Sharding((str(a9a_head / "train.txt"),)))
    assert spec.written == "online"
    with pytest.raises(ValueError, match="does not keep the vectors rbp evicts"):
        TrainSpec("rbp", hypothesis="running-average", sharding=Sharding((str(a9a_head / "train.txt"),)))
    assert TrainSpec("projectron", sharding=Sharding(("x",))).written == "running-average"


def test_an_evicting_learner_folds_as_it_goes(a9a_head):
    """The running average of a learner that evicts keeps at most 2·max(B, 64) evicted vectors (and a
    block's evictions) before it compresses them back to max(B, 64): constant memory, however long the
    stream."""
    kept = []
    watch = pipeline.Watch(on_chunk=lambda m: kept.append(len(m.learner.retired)))
    result = pipeline.train(
        TrainSpec("lbp", params={"budget": 20}, block_lines=100), str(a9a_head / "train.txt"), watch=watch
    )
    assert result.model.hypothesis == "running-average"
    assert result.online.learner.counter("mistakes") > 500  # hundreds of evictions
    assert max(kept) < 2 * 64 + 100 and max(kept) >= 64 and sum(kept) > 0


def test_train_warns_when_the_model_it_writes_is_no_better_than_a_constant(a9a_head, tmp_path):
    """The warning judges the model train writes, on examples it kept from the stream, not the online
    mistakes: rbp's last hypothesis (its default) answers −1 everywhere and is warned; forgetron's averaged
    model beats the constant on held-out data (its online mistake rate, 29%, does not: it was warned)."""
    r = run("train", "-a", "rbp", "--json", "-q", a9a_head / "train.txt", "-o", tmp_path / "m.model")
    assert r.exit_code == 0, r.output
    warnings = json.loads(r.stdout)["warnings"]
    assert warnings[0] == (
        "the written model's accuracy on 2,000 examples kept from the training data, 75.80%, is not above the "
        "75.80% of always answering their most frequent label -1: the model may be no better than a constant"
    )
    assert "the model predicts -1 for all 2,000 examples it was checked on (kept from the training data)" in warnings[1]
    r = run("train", "-a", "forgetron", "--json", "-q", a9a_head / "train.txt", "-o", tmp_path / "f.model")
    assert json.loads(r.stdout)["warnings"] == [] and json.loads(r.stdout)["mistakes"] > 0.29 * 3000
    report = json.loads(run("eval", "--json", tmp_path / "f.model", a9a_head / "test.txt").stdout)
    assert report["warnings"] == [] and report["accuracy"] > 0.78  # above the held-out majority's 76.6%
    r = run("train", "-a", "projectron++", "--json", "-q", a9a_head / "train.txt", "-o", tmp_path / "p.model")
    assert json.loads(r.stdout)["warnings"] == []  # a model that learned something: no warning


def test_eval_warns_about_unseen_labels_a_constant_and_the_majority(tmp_path):
    write_stream(tmp_path / "d.txt", n=200)
    assert run("train", "-a", "perceptron", "-q", tmp_path / "d.txt", "-o", tmp_path / "m.model").exit_code == 0
    text = (tmp_path / "d.txt").read_text()
    (tmp_path / "zo.txt").write_text(text.replace("-1 ", "0 ").replace("+1 ", "1 "))
    r = run("eval", "--json", tmp_path / "m.model", tmp_path / "zo.txt")
    warnings = json.loads(r.stdout)["warnings"]
    n_zero = text.count("\n-1 ") + text.startswith("-1 ")  # label 1 is the model's +1: only 0 is new
    assert warnings[0] == (
        f"the data holds labels the model never saw: 0 ({n_zero} examples); the model's labels are "
        "-1, +1, and every such example counts as wrong (a 0/1 file against a ±1 model?)"
    )
    r = run("eval", tmp_path / "m.model", tmp_path / "zo.txt")
    assert r.stderr.startswith("warning: the data holds labels the model never saw: 0 (")
    (tmp_path / "neg.txt").write_text("".join(line for line in text.splitlines(keepends=True) if line[0] == "-"))
    r = run("eval", "--json", tmp_path / "m.model", tmp_path / "neg.txt")
    report = json.loads(r.stdout)
    assert report["warnings"] == [
        f"accuracy {100 * report['accuracy']:.2f}% is not above the 100.00% of always "
        "answering the data's most frequent label -1"
    ]


def test_without_a_the_algorithm_comes_from_the_first_block_s_labels(a9a_head, tmp_path):
    """Two labels: projectron++; more: mc-projectron++ (registry.DEFAULT); the summary says which, and
    the model's header records the algorithm that ran."""
    binary = run("train", "--json", a9a_head / "train.txt", "-o", tmp_path / "b.model")
    assert binary.exit_code == 0, binary.output
    assert json.loads(binary.stdout)["algorithm"] == "projectron++"
    assert "projectron++: the default for two labels" in binary.stderr
    assert Model.load(tmp_path / "b.model").run["algorithm"] == "projectron++"
    three = tmp_path / "three.txt"
    three.write_text("".join(f"{1 + i % 3} 1:{i % 3}.5 2:{(i * 7) % 5}\n" for i in range(300)))
    multi = run("train", "--json", "-q", three, "-o", tmp_path / "m.model")
    assert multi.exit_code == 0, multi.output
    assert json.loads(multi.stdout)["algorithm"] == "mc-projectron++"
    r = run("train", "--budget", "50", three, "-o", tmp_path / "x.model")
    assert r.exit_code == 2 and r.stderr.startswith(
        "budgetlearn: error: --budget does not apply to the default algorithms, projectron++ (--eta, "
        "--margin-step), mc-projectron++ (--eta); give -a NAME"
    )


def test_the_default_algorithm_takes_its_own_options(a9a_head, tmp_path):
    """`train --eta 0.5 DATA` is projectron++ with η = 0.5 (the default for two labels), byte for byte `-a
    projectron++ --eta 0.5`; mc-projectron++ takes --eta too; a parameter the chosen default does not take
    is one line, exit 2, nothing written."""
    data = a9a_head / "train.txt"
    assert run("train", "-q", "--eta", "0.5", data, "-o", tmp_path / "d.model").exit_code == 0
    assert run("train", "-q", "-a", "projectron++", "--eta", "0.5", data, "-o", tmp_path / "a.model").exit_code == 0
    assert (tmp_path / "d.model").read_bytes() == (tmp_path / "a.model").read_bytes()
    assert Model.load(tmp_path / "d.model").learner.hyper["eta"] == 0.5
    three = tmp_path / "three.txt"
    three.write_text("".join(f"{1 + i % 3} 1:{i % 3}.5 2:{(i * 7) % 5}\n" for i in range(300)))
    r = run("train", "--json", "-q", "--eta", "0.3", three, "-o", tmp_path / "m.model")
    assert r.exit_code == 0 and json.loads(r.stdout)["algorithm"] == "mc-projectron++"
    assert Model.load(tmp_path / "m.model").learner.hyper["eta"] == 0.3
    r = run("train", "--margin-step", "projectron", three, "-o", tmp_path / "n.model")
    assert r.exit_code == 2 and not (tmp_path / "n.model").exists()
    assert r.stderr.splitlines() == [
        "budgetlearn: error: --margin-step does not apply to mc-projectron++ (it takes: --eta): the default for "
        "three or more labels, by the first block (see 'budgetlearn train --help')"
    ]
    r = run("train", "--eta", "-1", data, "-o", tmp_path / "x.model")
    assert r.exit_code == 2 and "--eta must be a finite number ≥ 0, got -1.0" in r.stderr


def test_algorithm_names_ignore_case_and_a_typo_gets_the_closest_names(a9a_head, tmp_path):
    r = run("train", "-a", "RBP", "--json", "-q", a9a_head / "train.txt", "-o", tmp_path / "m.model")
    assert r.exit_code == 0 and json.loads(r.stdout)["algorithm"] == "rbp"
    r = run("train", "-a", "projectorn", a9a_head / "train.txt", "-o", tmp_path / "m.model")
    assert r.exit_code == 2
    assert "did you mean projectron" in r.stderr and "forgetron" not in r.stderr  # not the whole list
    assert len(r.stderr.strip().splitlines()) == 1


def test_the_anchors_argument_orders_get_a_hint(a9a_head, tmp_path):
    data = a9a_head / "train.txt"
    r = run("train", data, tmp_path / "my.model")  # svm-train's order
    assert r.exit_code == 2 and f"budgetlearn train {data} -o {tmp_path / 'my.model'}" in r.stderr
    assert not (tmp_path / "my.model").exists()
    model = tmp_path / "m.model"
    assert run("train", "-q", data, "-o", model).exit_code == 0
    for command in ("predict", "eval"):
        r = run(command, data, model)  # DATA MODEL
        assert r.exit_code == 2 and f"`budgetlearn {command} {model} {data}`" in r.stderr
    odd = tmp_path / "day[1].model"  # an existing model whose name holds glob characters is that model
    odd.write_bytes(model.read_bytes())
    r = run("train", data, odd)
    assert r.exit_code == 2 and f"budgetlearn train {data} -o {odd}" in r.stderr


def test_train_help_lists_the_general_options_and_an_algorithm_s_own_on_request():
    general = run("train", "--help").output.split("\nOptions:")[1]
    assert "--budget" not in general and "--eta" not in general and "train -a NAME --help" in general
    rbp = run("train", "-a", "rbp", "--help").output.split("\nOptions:")[1]
    assert "Options of rbp:" in rbp and "--budget" in rbp and "--eta" not in rbp
    assert "Default: 100." in rbp  # its own default, not every algorithm's


def test_calibrated_probabilities_in_libsvm_s_format_and_in_eval(a9a_head, tmp_path):
    data, test = a9a_head / "train.txt", a9a_head / "test.txt"
    model = tmp_path / "m.model"
    assert run("train", "-q", data, "-o", model).exit_code == 0
    r = run("predict", "--proba", model, test)
    assert r.exit_code == 1 and "not calibrated" in r.stderr
    assert run("calibrate", model, data, "-o", model).exit_code == 0  # -o may name MODEL
    calibrated = Model.load(model)
    assert calibrated.calibration["method"] == "platt" and calibrated.calibration["examples"] == 3000
    lines = run("predict", "--proba", model, test).stdout.splitlines()
    labels = run("predict", model, test).stdout.splitlines()
    assert lines[0] == "labels +1 -1"  # as LIBSVM orders a binary model's labels
    rows = [line.split() for line in lines[1:]]
    assert len(rows) == 2000 and all(abs(float(p) + float(q) - 1) < 1e-5 for _, p, q in rows)
    # the label is the most probable one, as with svm-predict -b 1: where the sigmoid's B moves the threshold
    # off f = 0 it can differ from predict's sign of f
    assert all(label == ("+1" if float(p) >= float(q) else "-1") for label, p, q in rows)
    assert np.mean([r[0] == label for r, label in zip(rows, labels)]) > 0.95
    report = json.loads(run("eval", "--json", model, test).stdout)
    p_true = np.array(
        [
            float(p) if y.split()[0] == "+1" else float(q)
            for (_, p, q), y in zip(rows, (a9a_head / "test.txt").read_text().splitlines())
        ]
    )
    assert report["log_loss"] == pytest.approx(-np.mean(np.log(p_true)), abs=1e-4)  # the file's %g precision
    assert 0 <= report["ece"] < 0.1
    # training further drops the calibration, which fitted the former scores
    r = run("train", "--resume", model, "--json", "-q", data, "-o", model)
    assert r.exit_code == 0 and any("calibrate it again" in w for w in json.loads(r.stdout)["warnings"])
    assert Model.load(model).calibration is None


def test_scikit_learn_s_zero_based_dump_predicts_as_its_one_based_copy(tmp_path):
    """dump_svmlight_file writes index 0 by default; budgetlearn reads it as a feature (svm-train does), and
    the default γ counts it, so a 0-based file and its 1-based copy give the same model and predictions."""
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_svmlight_file(str(SAMPLE_DATA / "a9a"), n_features=123)
    Xt, yt = datasets.load_svmlight_file(str(SAMPLE_DATA / "a9a.t"), n_features=123)
    X, y = X[:2000], y[:2000]
    predictions = {}
    for zero_based in (True, False):
        train, test = tmp_path / f"train{zero_based}", tmp_path / f"test{zero_based}"
        datasets.dump_svmlight_file(X, y, str(train), zero_based=zero_based)
        datasets.dump_svmlight_file(Xt, yt, str(test), zero_based=zero_based)
        model = tmp_path / f"{zero_based}.model"
        assert run("train", "-q", train, "-o", model).exit_code == 0
        predictions[zero_based] = run("predict", "--scores", model, test).stdout
    assert " 0:" in (tmp_path / "trainTrue").read_text()  # the 0-based file does use index 0
    assert predictions[True] == predictions[False]
    assert len(predictions[True].splitlines()) == 16281


def test_an_svm_train_model_keeps_its_rho_in_every_command(tmp_path):
    """import keeps ρ as a bias: predict agrees with svm-predict on every row of a9a.t, the scores are its
    decision values, export writes ρ back, and a resumed run keeps it."""
    svmutil = pytest.importorskip("libsvm.svmutil")
    y, x = svmutil.svm_read_problem(str(SAMPLE_DATA / "a9a"))
    svm = svmutil.svm_train(y[:1500], x[:1500], "-t 2 -g 0.05 -c 1 -q")
    path = tmp_path / "svm.model"
    svmutil.svm_save_model(str(path), svm)
    rho = float(next(line for line in path.read_text().splitlines() if line.startswith("rho")).split()[1])
    assert abs(rho) > 0.1  # a model with a real bias
    yt, xt = svmutil.svm_read_problem(str(SAMPLE_DATA / "a9a.t"))
    labels, _, values = svmutil.svm_predict(yt, xt, svm, "-q")
    model = tmp_path / "m.model"
    assert run("import", path, "-o", model).exit_code == 0
    ours = run("predict", "--scores", model, SAMPLE_DATA / "a9a.t").stdout.split()
    assert ours[0::2] == [format(v, "g") for v in labels]  # every row
    np.testing.assert_allclose(np.array(ours[1::2], float), np.array(values)[:, 0], rtol=1e-9, atol=1e-9)
    back = tmp_path / "back.libsvm"
    assert run("export", model, "-o", back).exit_code == 0
    assert f"rho {rho!r}" in back.read_text()
    assert run("train", "--resume", model, "-q", SAMPLE_DATA / "a9a.t", "-o", tmp_path / "r.model").exit_code == 0
    assert Model.load(tmp_path / "r.model").learner.kernel.offset == -rho


def test_a_curve_does_not_change_a_folding_average(a9a_head, tmp_path):
    """The archive of evicted vectors is compressed at fixed eviction counts, not where a chunk is cut (a
    curve's rows cut chunks): the model is byte for byte the one of a run without --curve."""
    data = a9a_head / "train.txt"
    plain, curved = tmp_path / "plain.model", tmp_path / "curved.model"
    assert run("train", "-a", "lbp", "-B", "20", "-q", data, "-o", plain).exit_code == 0
    args = ["train", "-a", "lbp", "-B", "20", "-q", "--curve", tmp_path / "c.csv", "--curve-every", "37"]
    assert run(*args, data, "-o", curved).exit_code == 0
    assert Model.load(plain).learner.counter("mistakes") > 20 + 2 * 64  # the archive was compressed
    assert plain.read_bytes() == curved.read_bytes()
