"""The reproduction protocol (repro/common.py) and the synthetic generators it uses."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from budgetcli.numerics.kernels import Kernel
from budgetcli.run.synthetic import (
    GENERATORS,
    NOISY_TOY_MARGIN,
    noisy_toy,
    noisy_toy_bayes_error,
    shifting_stream,
    shifting_targets,
)
from repro import common
from tests.helpers import SAMPLE_DATA, chunk_from_dense, random_stream


# ---- generators ------------------------------------------------------------------------------
def test_noisy_toy_without_noise_is_separated_by_the_margin_around_x1_zero():
    X, y = noisy_toy(5000, seed=3, noise=0.0)
    assert np.all(y * X[:, 0] >= NOISY_TOY_MARGIN)
    assert np.all(np.abs(X[:, 1]) <= 1)


def test_noisy_toy_errs_at_the_bayes_rate_and_noise_touches_only_x1():
    n = 200_000
    X, y = noisy_toy(n, seed=5, noise=0.3)
    bayes = noisy_toy_bayes_error(0.3)
    rate = float(np.mean(np.where(X[:, 0] > 0, 1.0, -1.0) != y))
    assert abs(rate - bayes) < 4 * math.sqrt(bayes * (1 - bayes) / n)
    assert 0.05 < bayes < 0.15  # overlapping classes, as in the paper's Fig. 7
    # x2 carries no information about the label
    assert abs(X[y > 0, 1].mean() - X[y < 0, 1].mean()) < 0.02


@pytest.mark.parametrize("shifts", [0, 1, 3, 7])
def test_shifting_stream_has_exactly_k_shifts_in_equal_chunks(shifts):
    n = 20_000
    concept, normals = shifting_targets(n, shifts, seed=2)
    changes = np.flatnonzero(np.diff(concept)) + 1
    assert len(changes) == shifts
    np.testing.assert_array_equal(changes, np.arange(1, shifts + 1) * n // (shifts + 1))
    # the concepts come from the pool of four; 3 shifts use all four, 7 shifts repeat the same order twice
    assert set(concept.tolist()) <= set(range(4))
    if shifts == 3:
        assert sorted(set(concept.tolist())) == [0, 1, 2, 3]
    if shifts == 7:
        np.testing.assert_array_equal(concept[: n // 2], concept[n // 2 :])


def test_shifting_stream_labels_follow_the_chunk_concept_up_to_the_flip_rate():
    n = 40_000
    X, y = shifting_stream(n, 3, seed=4, flip=0.05)
    concept, normals = shifting_targets(n, 3, seed=4, flip=0.05)
    clean = np.where(np.einsum("ij,ij->i", X, normals[concept]) > 0, 1.0, -1.0)
    disagree = float(np.mean(clean != y))
    assert abs(disagree - 0.05) < 4 * math.sqrt(0.05 * 0.95 / n)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)


def test_generators_are_offered_to_budgetlearn_generate():
    for name in ("noisy-toy", "shifting-0", "shifting-1", "shifting-3", "shifting-7"):
        X, y = GENERATORS[name](200, seed=1)
        assert X.shape[0] == 200 and set(np.unique(y)) <= {-1.0, 1.0}
    X, y = GENERATORS["shifting-7"](400, seed=1)
    X2, y2 = shifting_stream(400, 7, seed=1)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)


# ---- protocol --------------------------------------------------------------------------------
def test_online_run_curves_end_at_the_counters_and_match_one_unchunked_pass():
    X, y = random_stream(530, 4, seed=7)
    data = chunk_from_dense(X, y)
    run = common.online_run(common.make_learner("projectron++", Kernel("rbf", 0.5), eta=0.3), data, step=100)
    np.testing.assert_array_equal(run.examples, [100, 200, 300, 400, 500, 530])
    assert len(run.online_error) == len(run.support) == 6
    assert run.online_error[-1] == run.learner.counter("mistakes") / 530 == run.mistakes / 530
    assert run.support[-1] == len(run.learner.support)
    assert np.all(np.diff(run.support) >= 0)  # the Projectron never removes a support vector
    # chunking is invisible to the learner: one pass over the whole stream ends the same
    whole = common.make_learner("projectron++", Kernel("rbf", 0.5), eta=0.3)
    whole.learn(data, data.labels)
    assert whole.counter("mistakes") == run.mistakes
    np.testing.assert_allclose(
        whole.slot["alpha"][: len(whole.support)],
        run.learner.slot["alpha"][: len(run.learner.support)],
        rtol=0,
        atol=1e-12,
    )
    # a curve point is the error rate of the first `examples` rounds
    first = common.make_learner("projectron++", Kernel("rbf", 0.5), eta=0.3)
    first.learn(data.take(np.arange(300)), data.labels[:300])
    assert run.online_error[2] == first.counter("mistakes") / 300


def test_permutation_is_fixed_by_its_number_and_shared_by_all_algorithms():
    p = common.permutation(50, 3)
    np.testing.assert_array_equal(p, common.permutation(50, 3))
    assert sorted(p.tolist()) == list(range(50))
    assert not np.array_equal(p, common.permutation(50, 4))


def test_curve_rows_average_over_runs():
    X, y = random_stream(300, 3, seed=1)
    data = chunk_from_dense(X, y)
    runs = [
        common.online_run(
            common.make_learner("rbp", Kernel("rbf", 1.0), seed=s, budget=20),
            data.take(common.permutation(300, s)),
            step=150,
        )
        for s in range(3)
    ]
    rows = common.curve_rows("rbp", runs)
    assert [r["examples"] for r in rows] == [150, 300]
    assert rows[-1]["online_error_mean"] == pytest.approx(np.mean([r.mistakes / 300 for r in runs]))
    assert rows[-1]["support_mean"] == 20 and rows[-1]["support_std"] == 0


def test_verdict_uses_the_spread_or_the_tolerance():
    assert common.verdict(0.21, 0.001, 0.2138, tolerance=0.01) == "within"
    assert common.verdict(0.25, 0.001, 0.2138, tolerance=0.01) == "MISS"
    assert common.verdict(0.25, 0.03, 0.2138, tolerance=0.01) == "within"  # our spread reaches it
    assert common.verdict(800, 10, 793, low=790, high=796) == "within"
    assert common.verdict(700, 10, 793, low=790, high=796) == "MISS"
    assert common.verdict(1.0, 0.0, None) == "n/a"


def test_csv_round_trip(tmp_path):
    path = common.write_csv(tmp_path / "t.csv", [{"a": "x", "b": 0.5}, {"a": "y", "b": 1 / 3}])
    assert path.read_text().splitlines() == ["a,b", "x,0.5", "y,0.333333"]


def test_a9a_comes_from_sample_data_whatever_the_setting(tmp_path, monkeypatch):
    monkeypatch.delenv("BUDGETLEARN_DATASETS", raising=False)
    assert common.dataset("a9a/a9a") == SAMPLE_DATA / "a9a"
    monkeypatch.setenv("BUDGETLEARN_DATASETS", str(tmp_path))
    assert common.dataset("a9a/a9a.t") == SAMPLE_DATA / "a9a.t"
    assert (SAMPLE_DATA / "a9a").stat().st_size > 2_000_000 and (SAMPLE_DATA / "a9a.t").stat().st_size > 1_000_000


def test_other_data_sets_are_found_under_the_setting_or_refused_naming_it(tmp_path, monkeypatch):
    monkeypatch.delenv("BUDGETLEARN_DATASETS", raising=False)
    with pytest.raises(SystemExit, match="^banana/banana is not in sample_data/: set BUDGETLEARN_DATASETS to"):
        common.dataset("banana/banana")
    monkeypatch.setenv("BUDGETLEARN_DATASETS", str(tmp_path))
    with pytest.raises(SystemExit, match=f"^{tmp_path}/banana/banana: no such file \\(BUDGETLEARN_DATASETS is"):
        common.dataset("banana/banana")
    (tmp_path / "banana").mkdir()
    (tmp_path / "banana" / "banana").write_text("1 1:0.5 2:0.5\n")
    assert common.dataset("banana/banana") == tmp_path / "banana" / "banana"


def test_tighter_script_without_banana_stops_before_any_run(monkeypatch, capsys):
    from repro import tighter_fig7_12

    monkeypatch.delenv("BUDGETLEARN_DATASETS", raising=False)
    monkeypatch.setattr("sys.argv", ["tighter", "--no-plot"])
    with pytest.raises(SystemExit, match="BUDGETLEARN_DATASETS"):
        tighter_fig7_12.main()
    assert capsys.readouterr().out == ""  # the toy runs of Fig. 7 did not start


def test_dogma_demo_flips_exactly_one_tenth_of_the_hyperplane_labels():
    from budgetcli.run.synthetic import dogma_demo, dogma_demo_hyperplane

    X, y = dogma_demo(20_000, seed=6)
    w = dogma_demo_hyperplane(20_000, seed=6)
    assert X.shape == (20_000, 2)
    assert int(np.sum(np.where(X @ w > 0, 1.0, -1.0) != y)) == 2_000
    np.testing.assert_array_equal(GENERATORS["dogma-demo"](20_000, seed=6)[1], y)


def test_generate_command_writes_a_shifting_stream_and_refuses_too_few_examples(tmp_path):
    from tests.test_cli import run

    out = tmp_path / "s.txt"
    assert run("generate", "shifting-7", "-n", "80", "--seed", "2", "-o", out).exit_code == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 80
    X, y = shifting_stream(80, 7, seed=2)
    assert [1.0 if line.split()[0] == "+1" else -1.0 for line in lines] == y.tolist()
    bad = run("generate", "shifting-7", "-n", "5", "-o", tmp_path / "t.txt")
    assert bad.exit_code == 2 and "at least 8 examples" in bad.output
    assert run("generate", "noisy-toy", "-n", "0").exit_code == 2


def test_fig7_script_at_smoke_size_writes_consistent_curves_and_summary(tmp_path, monkeypatch, capsys):
    import csv

    from repro import projectron_fig7

    monkeypatch.setattr(
        "sys.argv",
        ["fig7", "--examples", "600", "--permutations", "2", "--step", "200", "--no-plot", "--out", str(tmp_path)],
    )
    projectron_fig7.main()
    curves = list(csv.DictReader(open(tmp_path / "fig7_curves.csv")))
    summary = {r["algorithm"]: r for r in csv.DictReader(open(tmp_path / "fig7_summary.csv"))}
    assert len(summary) == 6 and len(curves) == 6 * 3
    for name, row in summary.items():
        last = [c for c in curves if c["algorithm"] == name][-1]
        assert int(last["examples"]) == 600
        assert float(last["online_error_mean"]) == pytest.approx(float(row["online_error_mean"]), rel=1e-5)
    # RBP and the Forgetron run at B = Projectron's mean final size, and fill it
    b = round(float(summary["projectron (η=0.2, DOGMA 0.04)"]["support_mean"]))
    assert float(summary["rbp (B=|S| projectron)"]["support_mean"]) == b
    out = capsys.readouterr().out
    assert "paper 103 ->" in out and "claim: Projectron++ errs less than the Perceptron online" in out


def _write_libsvm(path, X, y):
    with open(path, "w") as f:
        for xi, yi in zip(X, y):
            feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(xi) if v != 0)
            f.write(f"{int(yi):+d} {feats}\n")


def test_ahpatron_script_at_smoke_size_reports_the_mean_of_its_permutations(tmp_path, monkeypatch, capsys):
    import csv

    from budgetcli.io.libsvm import concatenate, read_all
    from repro import ahpatron_a9a

    X, y = random_stream(300, 5, seed=11)
    X = np.round(X, 6)
    _write_libsvm(tmp_path / "a", X[:200], y[:200])
    _write_libsvm(tmp_path / "b", X[200:], y[200:])
    monkeypatch.setattr(
        "sys.argv",
        [
            "ahp",
            str(tmp_path / "a"),
            str(tmp_path / "b"),
            "--permutations",
            "3",
            "--budget",
            "12",
            "--runs",
            "ahpatron:0.5",
            "projectron:0.6",
            "projectron++:0.6:margin_step=projectron",
            "--out",
            str(tmp_path),
        ],
    )
    ahpatron_a9a.main()
    rows = {r["algorithm"]: r for r in csv.DictReader(open(tmp_path / "ahpatron_a9a.csv"))}
    assert set(rows) == {"ahpatron", "projectron", "projectron++"}
    for col in ("amr_mean", "amr_std", "support_mean", "paper_amr", "amr_verdict", "support_verdict"):
        assert col in rows["projectron"]
    # recomputed here without the script: the concatenation in file order, permutations 0-2
    data = concatenate([read_all(tmp_path / "a"), read_all(tmp_path / "b")])
    for algo, params in (
        ("projectron", {"eta": 0.6}),
        ("projectron++", {"eta": 0.6, "margin_step": "projectron"}),
        ("ahpatron", {"budget": 12, "epsilon": 0.5}),
    ):
        assert json.loads(rows[algo]["params"]) == params
        amr, size = [], []
        for p in range(3):
            learner = common.make_learner(algo, Kernel("rbf", 0.125), **params)
            stream = data.take(np.random.default_rng(p).permutation(300))
            learner.learn(stream, stream.labels)
            amr.append(learner.counter("mistakes") / 300)
            size.append(len(learner.support))
        assert float(rows[algo]["amr_mean"]) == pytest.approx(np.mean(amr), rel=1e-5)
        assert float(rows[algo]["amr_std"]) == pytest.approx(np.std(amr), rel=1e-5, abs=1e-9)
        assert float(rows[algo]["support_mean"]) == pytest.approx(np.mean(size), rel=1e-5)
    assert max(size) <= 12  # Ahpatron never holds more than B
    assert float(rows["projectron"]["paper_amr"]) == 0.2113 and rows["projectron"]["paper_support"] == "135"
    out = capsys.readouterr().out
    assert "paper 21.13% ± 0.17 ->" in out


def test_pegasos_script_at_smoke_size_reports_the_mean_of_its_permutations(tmp_path, monkeypatch):
    import csv
    import json

    from budgetcli.learning.labels import MulticlassLabels
    from repro import pegasos_letter

    monkeypatch.setattr(
        "sys.argv",
        [
            "peg",
            "--generate",
            "checkerboard",
            "400",
            "200",
            "--permutations",
            "2",
            "--budgets",
            "15",
            "--maintenance",
            "merge",
            "random",
            "--grid",
            "1",
            "4",
            "--eta-steps",
            "3",
            "--no-plot",
            "--out",
            str(tmp_path),
        ],
    )
    pegasos_letter.main()
    rows = list(csv.DictReader(open(tmp_path / "pegasos_checkerboard.csv")))
    assert [r["algorithm"] for r in rows] == ["merge", "random", "projectron++"]
    from budgetcli.run.synthetic import checkerboard

    train = common.chunk_from_dense(*checkerboard(400, seed=0))
    test = common.chunk_from_dense(*checkerboard(200, seed=1))
    for r in rows:
        per = json.loads(r["accuracy_per_permutation"])
        assert len(per) == 2 and float(r["accuracy_mean"]) == pytest.approx(np.mean(per), rel=1e-5)
        assert r["paper_accuracy"] == "" and r["verdict"] == "n/a"  # Table 1 has B = 100 and 500 only
        assert per[0] == max(json.loads(r["grid_accuracy_first_permutation"]))  # the γ of the best first pass
        if r["algorithm"] == "random":
            # the first permutation's accuracy is the best of its γ grid, and the other one reruns at that γ
            grid = json.loads(r["grid_accuracy_first_permutation"])
            assert per[0] == max(grid)
            labels = MulticlassLabels()
            s = train.take(common.permutation(400, 1))
            learner = common.make_learner(
                "bpegasos", Kernel("rbf", float(r["gamma"])), seed=1, lambda_=1e-4, budget=15, maintenance="random"
            )
            learner.learn(s, labels.encode(s))
            assert per[1] == pytest.approx(pegasos_letter.accuracy(learner, labels, test), abs=1e-12)
            assert float(r["support_mean"]) == 15
    assert float(rows[-1]["eta"]) > 0
    assert pegasos_letter.paper_value("letter", "projectron++", 500) == (76.6, 1.1)
