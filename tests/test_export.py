"""`budgetlearn export --format libsvm`, `import` and `info`.

The exported file is read by LIBSVM itself (libsvm-official's svm_load_model / svm_predict, the
same C code as svm-predict): its predictions must be ours line for line, and its decision values
our scores."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.learning.featuremap import FeatureMapLearner
from budgetcli.learning import algorithms
from budgetcli.entry import main
from budgetcli.model.export import ExportError, libsvm_text, read_libsvm_model
from budgetcli.model.model import Model

from .helpers import SAMPLE_DATA, random_stream

A9A, A9A_T = SAMPLE_DATA / "a9a", SAMPLE_DATA / "a9a.t"


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def write_data(path, n=200, seed=0, labels=("-1", "+1"), d=5):
    X, y = random_stream(n, d, seed)
    with open(path, "w") as f:
        for row, lab in zip(X, y):
            feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0)
            f.write(f"{labels[int(lab > 0)]} {feats}\n")
    return path


def our_predictions(model, data):
    r = run("predict", "--scores", model, data)
    assert r.exit_code == 0, r.output
    rows = [line.split() for line in r.stdout.splitlines()]
    return [float(a) for a, _ in rows], np.array([float(b) for _, b in rows])


def libsvm_predictions(libsvm_file, data):
    svmutil = pytest.importorskip("libsvm.svmutil")
    y, x = svmutil.svm_read_problem(str(data))
    m = svmutil.svm_load_model(str(libsvm_file))
    assert m is not None, "LIBSVM could not read the exported file"
    labels, _, dec = svmutil.svm_predict(y, x, m, "-q")
    return labels, np.array([d[0] for d in dec])


@pytest.mark.parametrize(
    "kernel",
    [
        ["--kernel", "linear"],
        ["--kernel", "poly", "--gamma", "0.3", "--coef0", "1", "--degree", "2"],
        ["--kernel", "rbf", "--gamma", "0.5"],
    ],
)
@pytest.mark.parametrize("labels", [("-1", "+1"), ("2", "4"), ("1", "0")])
def test_libsvm_predicts_what_we_predict(tmp_path, kernel, labels):
    pytest.importorskip("libsvm.svmutil")
    train = write_data(tmp_path / "train.txt", labels=labels)
    test = write_data(tmp_path / "test.txt", n=300, seed=1, labels=labels)
    model, exported = tmp_path / "m.model", tmp_path / "m.libsvm"
    # projectron++ leaves coefficients of both signs on either class's vectors
    assert run("train", "-a", "projectron++", "--eta", "0.3", *kernel, "-q", train, "-o", model).exit_code == 0
    r = run("export", model, "--format", "libsvm", "-o", exported)
    assert r.exit_code == 0, r.output
    ours, scores = our_predictions(model, test)
    theirs, dec = libsvm_predictions(exported, test)
    assert len(set(ours)) == 2  # both labels are predicted: the sign convention is exercised
    assert ours == theirs
    np.testing.assert_allclose(dec, scores, rtol=1e-9, atol=1e-9)


def test_averaged_models_with_evicted_vectors_export(tmp_path):
    pytest.importorskip("libsvm.svmutil")
    train = write_data(tmp_path / "train.txt", n=300)
    test = write_data(tmp_path / "test.txt", n=300, seed=2)
    model, exported = tmp_path / "avg.model", tmp_path / "avg.libsvm"
    r = run(
        "online-to-batch",
        "--method",
        "average",
        "-a",
        "rbp",
        "-B",
        "10",
        "--gamma",
        "0.5",
        "--json",
        "-q",
        train,
        "-o",
        model,
    )
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["support_size"] > 10  # the exact average kept evicted vectors beyond the budget
    assert run("export", model, "-o", exported).exit_code == 0
    assert f"total_sv {summary['support_size']}\n" in exported.read_text()
    ours, scores = our_predictions(model, test)
    theirs, dec = libsvm_predictions(exported, test)
    assert ours == theirs
    np.testing.assert_allclose(dec, scores, rtol=1e-9, atol=1e-9)


def test_file_layout_follows_libsvm(tmp_path):
    train = write_data(tmp_path / "train.txt", labels=("3", "7"))
    model = tmp_path / "m.model"
    assert run("train", "-a", "projectron++", "--eta", "0.3", "--gamma", "0.5", "-q", train, "-o", model).exit_code == 0
    text = run("export", model, "-o", "-").stdout
    head, body = text.split("SV\n")
    assert head.splitlines() == [
        "svm_type c_svc",
        "kernel_type rbf",
        "gamma 0.5",
        "nr_class 2",
        f"total_sv {len(body.splitlines())}",
        "rho 0",
        "label 7 3",
        head.splitlines()[-1],
    ]
    n_first, n_second = map(int, head.splitlines()[-1].split()[1:])
    coefs = [float(line.split()[0]) for line in body.splitlines()]
    # the first label's SVs (positive coefficients) first, as LIBSVM groups SVs by class
    assert all(c > 0 for c in coefs[:n_first]) and all(c <= 0 for c in coefs[n_first:])
    assert n_first > 0 and n_second > 0
    learner = Model.load(model).learner
    assert sorted(coefs) == sorted(learner.slot["alpha"][: len(learner.support)].tolist())  # exact: repr round-trips


def test_refuses_what_libsvm_cannot_express(tmp_path):
    model, out = tmp_path / "m.model", tmp_path / "m.libsvm"
    out.write_text("keep me\n")
    write_data(tmp_path / "half.txt", labels=("0.5", "1.5"))
    assert run("train", "-a", "perceptron", "-q", tmp_path / "half.txt", "-o", model).exit_code == 0
    r = run("export", model, "-o", out)
    assert r.exit_code == 1 and "integers" in r.stderr and "0.5" in r.stderr
    assert out.read_text() == "keep me\n"  # nothing written on failure

    (tmp_path / "one.txt").write_text("+1 1:1\n+1 2:1\n")
    assert run("train", "-a", "perceptron", "-q", tmp_path / "one.txt", "-o", model).exit_code == 0
    r = run("export", model, "-o", out)
    assert r.exit_code == 1 and "only one label" in r.stderr
    assert out.read_text() == "keep me\n"


def test_refuses_a_label_map_that_is_not_binary(tmp_path):
    write_data(tmp_path / "d.txt")
    model = tmp_path / "m.model"
    assert run("train", "-a", "perceptron", "-q", tmp_path / "d.txt", "-o", model).exit_code == 0
    m = Model.load(model)

    class MulticlassLabels:  # what issue 5's label map looks like from outside: another kind
        def to_dict(self):
            return {"kind": "multiclass", "classes": [1.0, 2.0, 3.0]}

    m.labels = MulticlassLabels()
    with pytest.raises(ExportError, match="binary models only.*multiclass"):
        libsvm_text(m, "m.model")


def test_a9a_svm_predict_agrees_line_by_line(tmp_path):
    pytest.importorskip("libsvm.svmutil")
    model, exported = tmp_path / "a9a.model", tmp_path / "a9a.libsvm"
    r = run("train", "-a", "rbp", "-B", "200", "--gamma", "0.04", "-q", A9A, "-o", model)
    assert r.exit_code == 0, r.output
    assert run("export", model, "--format", "libsvm", "-o", exported).exit_code == 0
    ours, scores = our_predictions(model, A9A_T)
    theirs, dec = libsvm_predictions(exported, A9A_T)
    assert len(ours) == len(theirs) == 16281
    mismatches = [i + 1 for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    assert mismatches == []
    np.testing.assert_allclose(dec, scores, rtol=1e-9, atol=1e-9)


@pytest.mark.skipif(shutil.which("svm-predict") is None, reason="LIBSVM's svm-predict not on PATH")
def test_svm_predict_binary_agrees(tmp_path):
    """LIBSVM's own command-line tool (Debian's libsvm-tools, LIBSVM 3.24) on the exported file."""
    train = write_data(tmp_path / "train.txt", labels=("2", "4"))
    test = write_data(tmp_path / "test.txt", n=300, seed=1, labels=("2", "4"))
    model, exported, out = tmp_path / "m.model", tmp_path / "m.libsvm", tmp_path / "pred.txt"
    assert run("train", "-a", "projectron++", "--eta", "0.3", "--gamma", "0.5", "-q", train, "-o", model).exit_code == 0
    assert run("export", model, "-o", exported).exit_code == 0
    r = subprocess.run(["svm-predict", str(test), str(exported), str(out)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    theirs = [float(v) for v in out.read_text().split()]
    ours, _ = our_predictions(model, test)
    assert len(theirs) == 300 and set(ours) == {2.0, 4.0}
    assert ours == theirs
    # and line by line on a9a.t
    a9a = tmp_path / "a9a.model"
    assert run("train", "-a", "rbp", "-B", "200", "--gamma", "0.04", "-q", A9A, "-o", a9a).exit_code == 0
    assert run("export", a9a, "-o", exported).exit_code == 0
    subprocess.run(["svm-predict", str(A9A_T), str(exported), str(out)], check=True, capture_output=True, timeout=300)
    assert [float(v) for v in out.read_text().split()] == our_predictions(a9a, A9A_T)[0]


# ---- import --------------------------------------------------------------------------------------


def test_import_round_trip_predicts_the_same_and_resumes(tmp_path):
    first = write_data(tmp_path / "first.txt", n=150, seed=4, labels=("0", "1"))
    more = write_data(tmp_path / "more.txt", n=150, seed=5, labels=("0", "1"))
    test = write_data(tmp_path / "test.txt", n=200, seed=6, labels=("0", "1"))
    model, exported, imported = tmp_path / "m.model", tmp_path / "m.libsvm", tmp_path / "imported.model"
    # the online learner, which an import (coefficients only) can continue exactly
    assert (
        run("train", "-a", "perceptron", "--hypothesis", "last", "--gamma", "0.5", "-q", first, "-o", model).exit_code
        == 0
    )
    assert run("export", model, "-o", exported).exit_code == 0
    r = run("import", exported, "-a", "perceptron", "-o", imported)
    assert r.exit_code == 0, r.output
    ours, scores = our_predictions(model, test)
    again, scores_again = our_predictions(imported, test)
    assert ours == again
    np.testing.assert_allclose(scores_again, scores, rtol=1e-12, atol=1e-12)
    # both go on learning from the same hypothesis: the same mistakes on the new data, the same f
    mistakes_before = Model.load(model).learner.counter("mistakes")
    for m in (model, imported):
        r = run("train", "--resume", m, "-q", more, "-o", m)
        assert r.exit_code == 0, r.output
    a, b = Model.load(model).learner, Model.load(imported).learner
    assert b.counter("examples") == 150 and a.counter("examples") == 300  # the import's counters start at 0
    assert b.counter("mistakes") == a.counter("mistakes") - mistakes_before > 0
    assert len(a.support) == len(b.support)
    np.testing.assert_allclose(
        our_predictions(imported, test)[1], our_predictions(model, test)[1], rtol=1e-10, atol=1e-10
    )


def test_import_refuses_what_it_cannot_continue(tmp_path):
    path = tmp_path / "m.libsvm"
    base = (
        "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 1\nrho {rho}\nlabel 1 -1\nnr_sv 1 0\n"
        "SV\n{sv}\n"
    )
    path.write_text(base.format(rho="0.25", sv="1 1:0.5"))
    r = run("import", path, "-o", tmp_path / "x.model")  # a bias is kept, not refused
    assert r.exit_code == 0 and Model.load(tmp_path / "x.model").learner.kernel.offset == -0.25
    (tmp_path / "x.model").unlink()
    path.write_text(base.format(rho="0", sv="1 1:0.5 oops"))
    r = run("import", path, "-o", tmp_path / "x.model")
    assert r.exit_code == 1 and f"{path}:10" in r.stderr and not (tmp_path / "x.model").exists()
    path.write_text(base.replace("nr_class 2", "nr_class 3").format(rho="0", sv="1 1:0.5"))
    r = run("import", path, "-o", tmp_path / "x.model")
    assert r.exit_code == 1 and "binary" in r.stderr
    assert run("import", path, "-a", "projectron", "-o", tmp_path / "x.model").exit_code == 2


def test_read_libsvm_model_reads_what_libsvm_writes(tmp_path):
    svmutil = pytest.importorskip("libsvm.svmutil")
    X, y = random_stream(80, 4, 9)
    x = [{j + 1: float(v) for j, v in enumerate(row) if v != 0} for row in X]
    m = svmutil.svm_train(list(y), x, "-t 2 -g 0.5 -c 1 -q")
    path = tmp_path / "libsvm.model"
    svmutil.svm_save_model(str(path), m)
    parsed = read_libsvm_model(path)
    assert parsed["labels"] == [float(v) for v in m.get_labels()]
    assert len(parsed["coef"]) == m.get_nr_sv()
    np.testing.assert_allclose(parsed["coef"], [c[0] for c in m.get_sv_coef()], rtol=1e-7)
    assert parsed["rho"] != 0  # LIBSVM trains a bias, which the import keeps (the kernel's offset −ρ)
    r = run("import", path, "-o", tmp_path / "x.model")
    assert r.exit_code == 0 and Model.load(tmp_path / "x.model").learner.kernel.offset == -parsed["rho"]


# ---- info ----------------------------------------------------------------------------------------


def test_info_reports_what_the_model_holds(tmp_path):
    train = write_data(tmp_path / "d.txt", labels=("2", "4"))
    model = tmp_path / "m.model"
    r = run(
        "train",
        "-a",
        "projectron++",
        "--eta",
        "0.3",
        "--kernel",
        "poly",
        "--gamma",
        "0.3",
        "--degree",
        "2",
        "--json",
        "-q",
        train,
        "-o",
        model,
    )
    summary = json.loads(r.stdout)
    r = run("info", "--json", model)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["algorithm"] == "projectron++" and d["params"] == {"eta": 0.3, "margin_step": "fig5"}
    assert d["kernel"]["kind"] == "poly" and d["kernel"]["degree"] == 2 and d["kernel"]["gamma"] == 0.3
    assert d["labels"] == {"kind": "binary", "positive": "4", "negative": "2"}
    assert d["support_size"] == summary["support_size"]
    assert d["bytes"] == model.stat().st_size
    assert d["counters"] == {
        "examples": 200,
        "mistakes": summary["mistakes"],
        "margin_updates": summary["margin_updates"],
        "projections": summary["projections"],
    }
    assert d["hypothesis"] == "running-average"  # train's default
    text = run("info", model).stdout
    assert "projectron++ (eta=0.3, margin_step=fig5)" in text and f"{summary['support_size']:,}" in text
    assert "4 (score > 0)" in text


def test_info_of_a_bad_file_is_a_one_line_error(tmp_path):
    bad = tmp_path / "bad.model"
    bad.write_text("not a model")
    r = run("info", bad)
    assert r.exit_code == 1 and str(bad) in r.stderr and len(r.stderr.strip().splitlines()) == 1


# ---- regression: ε-SVR ---------------------------------------------------------------------------


def write_regression(path, n=200, seed=0, d=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.standard_normal(n)
    with open(path, "w") as f:
        for row, v in zip(X.tolist(), y.tolist()):
            f.write(f"{v!r} " + " ".join(f"{j + 1}:{x!r}" for j, x in enumerate(row)) + "\n")
    return path


def predicted_values(model, data):
    r = run("predict", model, data)
    assert r.exit_code == 0, r.output
    return np.array([float(v) for v in r.stdout.split()])


@pytest.mark.parametrize(
    "options",
    [
        ["-a", name, "--gamma", "2"]
        for name, c in sorted(algorithms.load_all().items())
        if "regression" in c.tasks and not issubclass(c, FeatureMapLearner)  # a map has no support vectors
    ]
    + [
        ["-a", "qklms", "--kernel", "poly", "--gamma", "0.5", "--coef0", "1", "--degree", "2", "--step-size", "0.1"],
        ["-a", "norma", "--gamma", "2", "-B", "50"],
    ],
)
def test_a_regression_exports_as_epsilon_svr_and_libsvm_predicts_every_row(tmp_path, options):
    svmutil = pytest.importorskip("libsvm.svmutil")
    train, test = write_regression(tmp_path / "train.txt"), write_regression(tmp_path / "test.txt", 300, 1)
    model, exported = tmp_path / "r.model", tmp_path / "r.libsvm"
    assert run("train", "--task", "regression", *options, "-q", train, "-o", model).exit_code == 0
    r = run("export", model, "-o", exported)
    assert r.exit_code == 0, r.output
    text = exported.read_text()
    assert text.startswith("svm_type epsilon_svr\n") and "\nlabel " not in text and "\nnr_sv " not in text
    y, x = svmutil.svm_read_problem(str(test))
    theirs, _, _ = svmutil.svm_predict(y, x, svmutil.svm_load_model(str(exported)), "-q")
    ours = predicted_values(model, test)
    np.testing.assert_allclose(theirs, ours, rtol=1e-9, atol=1e-12)  # ours as written, %.10g


@pytest.mark.parametrize("svm_type", ["3", "4"])
def test_epsilon_and_nu_svr_import_as_regression_models(tmp_path, svm_type):
    """An ε-SVR (-s 3) and a ν-SVR (-s 4) that LIBSVM trains: imported (klms by default, qklms), each predicts
    what svm_predict does, says it is a regression, goes on learning with train --resume and exports back
    as the same ε-SVR; a classifier's algorithm is refused for it in one line, and the reverse."""
    svmutil = pytest.importorskip("libsvm.svmutil")
    train, test = write_regression(tmp_path / "train.txt"), write_regression(tmp_path / "test.txt", 300, 1)
    y, x = svmutil.svm_read_problem(str(train))
    libsvm_model = tmp_path / "svr.libsvm"
    svmutil.svm_save_model(str(libsvm_model), svmutil.svm_train(y, x, f"-s {svm_type} -t 2 -g 0.5 -c 10 -q"))
    yt, xt = svmutil.svm_read_problem(str(test))
    theirs, _, _ = svmutil.svm_predict(yt, xt, svmutil.svm_load_model(str(libsvm_model)), "-q")
    for algorithm in ([], ["-a", "qklms"]):
        imported = tmp_path / "imported.model"
        r = run("import", libsvm_model, *algorithm, "-o", imported)
        assert r.exit_code == 0, r.output
        np.testing.assert_allclose(predicted_values(imported, test), theirs, rtol=1e-9, atol=1e-12)
        loaded = Model.load(imported)
        assert loaded.task.name == "regression" and loaded.learner.name == ("qklms" if algorithm else "klms")
    assert run("train", "--resume", imported, "-q", train, "-o", tmp_path / "more.model").exit_code == 0
    assert run("export", imported, "-o", tmp_path / "back.libsvm").exit_code == 0
    back, _, _ = svmutil.svm_predict(yt, xt, svmutil.svm_load_model(str(tmp_path / "back.libsvm")), "-q")
    np.testing.assert_allclose(back, theirs, rtol=1e-12, atol=1e-12)
    r = run("import", libsvm_model, "-a", "perceptron", "-o", tmp_path / "x.model")
    assert r.exit_code == 1 and len(r.stderr.strip().splitlines()) == 1
    assert "the file is a regression (ε-SVR or ν-SVR): import it into one of: klms, qklms" in r.stderr
    assert not (tmp_path / "x.model").exists()
    classifier = write_data(tmp_path / "c.txt")
    yc, xc = svmutil.svm_read_problem(str(classifier))
    svmutil.svm_save_model(str(tmp_path / "c.libsvm"), svmutil.svm_train(yc, xc, "-s 0 -t 2 -g 0.5 -q"))
    r = run("import", tmp_path / "c.libsvm", "-a", "klms", "-o", tmp_path / "x.model")
    assert r.exit_code == 1 and "the file is a C-SVC classifier: import it into one of: perceptron" in r.stderr


def write_normal(path, n=400, seed=0, novel=0.0):
    """Points of a 3-d Gaussian (label 1), a fraction `novel` of them moved far off (label -1)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    far = rng.random(n) < novel
    X[far] += 4.0
    with open(path, "w") as f:
        for row, off in zip(X, far):
            f.write(("-1 " if off else "1 ") + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row)) + "\n")
    return path


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--hypothesis", "last"],
        ["-B", "30", "--nu", "0.3"],
        ["--rho-fit", "learnt", "--kernel", "poly", "--coef0", "1"],
        ["-a", "nogd-novelty", "-B", "30"],  # an expansion over its landmarks, after the switch
    ],
)
def test_a_novelty_model_exports_as_one_class_and_libsvm_predicts_every_row(tmp_path, options):
    """svm_type one_class, no label and no nr_sv lines; LIBSVM's svm_predict gives every row our +1 / -1 and
    our score f(x) - rho as its decision value: the averaged hypothesis (with the evicted vectors its
    average keeps, -B 30), the last one, and the threshold refitted or learnt (a poly kernel)."""
    svmutil = pytest.importorskip("libsvm.svmutil")
    train, test = write_normal(tmp_path / "train.txt"), write_normal(tmp_path / "test.txt", 300, 1, novel=0.2)
    model, exported = tmp_path / "n.model", tmp_path / "n.libsvm"
    assert run("train", "--task", "novelty", "--gamma", "0.5", *options, "-q", train, "-o", model).exit_code == 0
    r = run("export", model, "-o", exported)
    assert r.exit_code == 0, r.output
    text = exported.read_text()
    assert text.startswith("svm_type one_class\n") and "\nlabel " not in text and "\nnr_sv " not in text
    labels, scores = our_predictions(model, test)
    assert set(labels) == {-1.0, 1.0}
    y, x = svmutil.svm_read_problem(str(test))
    theirs, _, dec = svmutil.svm_predict(y, x, svmutil.svm_load_model(str(exported)), "-q")
    assert theirs == labels
    np.testing.assert_allclose([d[0] for d in dec], scores, rtol=1e-9, atol=1e-9)  # ours as written, %.10g


def test_a_feature_map_novelty_model_is_not_exported(tmp_path):
    """fogd-novelty's model is a weight vector over random Fourier features, which a LIBSVM file cannot hold:
    refused in one line, nothing written."""
    train, model = write_normal(tmp_path / "train.txt"), tmp_path / "f.model"
    assert run("train", "--task", "novelty", "-a", "fogd-novelty", "-q", train, "-o", model).exit_code == 0
    r = run("export", model, "-o", tmp_path / "f.libsvm")
    assert r.exit_code == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "a fogd-novelty model is a weight vector over random Fourier features, not a support set" in r.stderr
    assert not (tmp_path / "f.libsvm").exists()


def test_a_one_class_model_of_libsvm_imports_as_a_novelty_model(tmp_path):
    """svm-train -s 2 (LIBSVM's own, through its Python binding): imported (norma-novelty by default), it
    predicts svm_predict's +1 / -1 on every row and its decision values as scores, says it is a novelty
    model, goes on learning with train --resume and exports back as the same one-class SVM; more support
    vectors than the default window of 500 widen it; a classifier's algorithm is refused in one line."""
    svmutil = pytest.importorskip("libsvm.svmutil")
    train, test = write_normal(tmp_path / "train.txt", 1200), write_normal(tmp_path / "test.txt", 300, 1, novel=0.2)
    y, x = svmutil.svm_read_problem(str(train))
    yt, xt = svmutil.svm_read_problem(str(test))
    for nu, more in ((0.1, False), (0.6, True)):
        libsvm_model = tmp_path / "oc.libsvm"
        svmutil.svm_save_model(str(libsvm_model), svmutil.svm_train(y, x, f"-s 2 -t 2 -g 0.5 -n {nu} -q"))
        theirs, _, dec = svmutil.svm_predict(yt, xt, svmutil.svm_load_model(str(libsvm_model)), "-q")
        imported = tmp_path / "imported.model"
        r = run("import", libsvm_model, "-o", imported)
        assert r.exit_code == 0, r.output
        labels, scores = our_predictions(imported, test)
        assert labels == theirs and set(labels) == {-1.0, 1.0}
        np.testing.assert_allclose(scores, [d[0] for d in dec], rtol=1e-9, atol=1e-9)
        loaded = Model.load(imported)
        assert loaded.task.name == "novelty" and loaded.learner.name == "norma-novelty"
        assert (loaded.learner.hyper["budget"] > 500) == more and loaded.learner.support_size() > (500 if more else 0)
    assert run("export", imported, "-o", tmp_path / "back.libsvm").exit_code == 0
    back, _, _ = svmutil.svm_predict(yt, xt, svmutil.svm_load_model(str(tmp_path / "back.libsvm")), "-q")
    assert back == theirs
    assert run("train", "--resume", imported, "-q", train, "-o", tmp_path / "more.model").exit_code == 0
    r = run("import", libsvm_model, "-a", "perceptron", "-o", tmp_path / "x.model")
    assert r.exit_code == 1 and len(r.stderr.strip().splitlines()) == 1
    assert "the file is a one-class SVM: import it into one of: norma-novelty" in r.stderr
    assert not (tmp_path / "x.model").exists()
