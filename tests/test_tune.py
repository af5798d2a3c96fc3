"""`budgetlearn tune`: the grid, the runs' seeds, the same table whatever --jobs or --backend, and the
runs checked against the `train` and `eval` commands they claim to be."""

from __future__ import annotations

import copy
import csv
import json
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.run import grid
from budgetcli.entry import main
from budgetcli.model.model import Model

from .helpers import assert_same_state, random_stream


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def write_data(path, n, seed):
    X, y = random_stream(n, 4, seed)
    with open(path, "w") as f:
        for row, lab in zip(X, y):
            f.write(
                ("+1" if lab > 0 else "-1") + "".join(f" {j + 1}:{float(v)!r}" for j, v in enumerate(row) if v) + "\n"
            )


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("tune")
    write_data(d / "train.txt", 200, 0)
    write_data(d / "test.txt", 100, 1)
    return d


GRID = ["--grid", "eta=0.1,0.5", "--grid", "gamma=0.3,1"]


def tune_json(files, *extra):
    r = run(
        "tune",
        "-a",
        "projectron++",
        *GRID,
        "--permutations",
        3,
        "--test",
        files / "test.txt",
        "--json",
        *extra,
        files / "train.txt",
    )
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def without_seconds(table: dict) -> dict:
    table = copy.deepcopy(table)
    for row in table["rows"]:
        del row["seconds_mean"], row["seconds_std"]
        for r in row["per_run"]:
            del r["seconds"]
    return table


@pytest.fixture(scope="module")
def serial_table(files):
    return tune_json(files, "--jobs", 1)


def test_table_holds_every_setting_and_run_sorted_best_first(serial_table):
    rows = serial_table["rows"]
    assert sorted(tuple(r["setting"].items()) for r in rows) == sorted(
        (("eta", e), ("gamma", g)) for e in (0.1, 0.5) for g in (0.3, 1.0)
    )
    for row in rows:
        assert [r["permutation"] for r in row["per_run"]] == [0, 1, 2]
        assert [r["seed"] for r in row["per_run"]] == [0, 1, 2]
        assert row["online_mistake_rate_mean"] == pytest.approx(
            np.mean([r["online_mistake_rate"] for r in row["per_run"]])
        )
    acc = [r["test_accuracy_mean"] for r in rows]
    assert acc == sorted(acc, reverse=True)
    # the permutations are really different orders: the runs of a setting do not all agree
    assert any(len({r["mistakes"] for r in row["per_run"]}) > 1 for row in rows)


def test_same_table_with_two_jobs_and_with_threads(files, serial_table):
    expected = without_seconds(serial_table)
    assert without_seconds(tune_json(files, "--jobs", 2)) == expected
    assert without_seconds(tune_json(files, "--jobs", 2, "--backend", "threading")) == expected


def test_same_table_on_a_dask_cluster(files, serial_table):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        table = tune_json(files, "--backend", "dask", "--scheduler", cluster.scheduler_address)
    assert without_seconds(table) == without_seconds(serial_table)


def test_each_run_is_the_train_command_with_shuffle_and_its_seed(files, serial_table, tmp_path):
    """Run p of a setting is `train --shuffle --seed p`: its counters, and the saved best model bit for bit."""
    row = serial_table["rows"][1]
    eta, gamma = row["setting"]["eta"], row["setting"]["gamma"]
    for r in row["per_run"]:
        out = tmp_path / f"p{r['permutation']}.model"
        t = run(
            "train",
            "-a",
            "projectron++",
            "--eta",
            eta,
            "--gamma",
            gamma,
            "--shuffle",
            "--seed",
            r["seed"],
            "--json",
            "-q",
            files / "train.txt",
            "-o",
            out,
        )
        summary = json.loads(t.stdout)
        assert (summary["mistakes"], summary["support_size"]) == (r["mistakes"], r["support_size"])
        e = run("eval", "--json", out, files / "test.txt")
        assert json.loads(e.stdout)["accuracy"] == pytest.approx(r["test_accuracy"], abs=1e-15)


def test_save_best_writes_the_best_run_of_the_best_setting(files, serial_table, tmp_path):
    best_path = tmp_path / "best.model"
    csv_path = tmp_path / "table.csv"
    r = run(
        "tune",
        "-a",
        "projectron++",
        *GRID,
        "--permutations",
        3,
        "--test",
        files / "test.txt",
        "--save-best",
        best_path,
        "--csv",
        csv_path,
        files / "train.txt",
    )
    assert r.exit_code == 0, r.output
    top = serial_table["rows"][0]
    best = max(top["per_run"], key=lambda x: (x["test_accuracy"], -x["permutation"]))
    ref = tmp_path / "ref.model"
    run(
        "train",
        "-a",
        "projectron++",
        "--eta",
        top["setting"]["eta"],
        "--gamma",
        top["setting"]["gamma"],
        "--shuffle",
        "--seed",
        best["seed"],
        "-q",
        files / "train.txt",
        "-o",
        ref,
    )
    got, want = Model.load(best_path).learner.state(), Model.load(ref).learner.state()
    assert got[0] == want[0]
    assert_same_state(got[1], want[1])
    with open(csv_path) as f:
        lines = list(csv.DictReader(f))
    assert [(float(x["eta"]), float(x["gamma"])) for x in lines] == [
        (row["setting"]["eta"], row["setting"]["gamma"]) for row in serial_table["rows"]
    ]
    assert [float(x["test_accuracy_mean"]) for x in lines] == [
        row["test_accuracy_mean"] for row in serial_table["rows"]
    ]
    # the printed table lists the settings in the same order
    printed = [line for line in r.stdout.splitlines() if "eta=" in line]
    assert [p.split("│")[2].strip() for p in printed] == [x["setting"] for x in lines]


def test_sort_by_support_size_and_file_order_runs(files, tmp_path):
    # (η = 1 with rbf is refused since it adds nothing at all: tests/test_degenerate.py)
    r = run(
        "tune",
        "-a",
        "projectron",
        "--grid",
        "eta=0,0.3,0.9",
        "--gamma",
        0.5,
        "--permutations",
        0,
        "--sort",
        "support",
        "--json",
        files / "train.txt",
    )
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["rows"]
    assert [row["setting"]["eta"] for row in rows] == [0.9, 0.3, 0.0]  # larger η projects more, keeps fewer
    assert rows[0]["test_accuracy_mean"] is None
    for row in rows:  # permutation -1: one run over the file in its own order, as plain `train` does
        (only,) = row["per_run"]
        t = run(
            "train",
            "-a",
            "projectron",
            "--eta",
            row["setting"]["eta"],
            "--gamma",
            0.5,
            "--json",
            "-q",
            files / "train.txt",
            "-o",
            tmp_path / "m.model",
        )
        assert (only["permutation"], only["support_size"]) == (-1, json.loads(t.stdout)["support_size"])


def test_grid_names_follow_the_flags():
    assert grid.parse_grid(["B=10,20", "gamma=0.5"], "rbp") == [("budget", [10, 20]), ("gamma", [0.5])]
    assert grid.parse_grid(["budget=5"], "forgetron") == [("budget", [5])]
    assert grid.parse_grid(["lambda=0.1,1"], "pegasos") == [("lambda_", [0.1, 1.0])]
    assert grid.parse_grid(["spa-lambda=0.1,1"], "spa") == [("spa_lambda", [0.1, 1.0])]
    assert grid.parse_grid(["C=0.5", "update=mira,svm"], "budget-perceptron")[1] == ("update", ["mira", "svm"])
    for name in ("margin-step", "margin_step"):
        assert grid.parse_grid([f"{name}=fig5,projectron"], "projectron++") == [("margin_step", ["fig5", "projectron"])]
    assert grid.settings_of([("eta", [1, 2]), ("gamma", [3, 4])]) == [
        {"eta": 1, "gamma": 3},
        {"eta": 1, "gamma": 4},
        {"eta": 2, "gamma": 3},
        {"eta": 2, "gamma": 4},
    ]
    for bad, why in (
        (["B=10"], "no parameter 'B'"),
        (["eta"], "NAME=V1"),
        (["eta=0.1,x"], "not a valid float"),
        (["eta=0.1,0.1"], "given twice"),
        (["eta=1", "eta=2"], "given twice"),
    ):
        with pytest.raises(ValueError, match=why):
            grid.parse_grid(bad, "projectron")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--grid", "B=10"], "no parameter 'B'"),
        (["--grid", "margin-step=fig5"], "no parameter 'margin-step'"),  # projectron++'s, not projectron's
        (["--grid", "eta=-1"], "--eta must be"),
        (["--grid", "eta=0.1", "--eta", "0.2"], "contradict"),
        (["--grid", "sigma=1", "--gamma", "0.2"], "contradict"),
        (["--sort", "test-accuracy"], "needs --test"),
        (["-B", "10"], "does not apply"),
    ],
)
def test_bad_usage_exits_2_before_any_run(files, args, message, tmp_path):
    r = run("tune", "-a", "projectron", *args, "--csv", tmp_path / "t.csv", files / "train.txt")
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert not (tmp_path / "t.csv").exists()


def test_a_bad_choice_in_the_grid_is_refused_naming_its_flag(files):
    r = run("tune", "-a", "projectron++", "--grid", "margin-step=fig5,fig6", files / "train.txt")
    assert r.exit_code == 2
    assert "setting margin_step=fig6: projectron++: --margin-step must be fig5 or projectron, got fig6" in r.output


def test_epochs_make_each_run_train_epochs(files, tmp_path):
    """`tune --epochs 2`: run p is `train --epochs 2 --shuffle --seed p` (each pass its own permutation),
    a file-order run is `train --epochs 2`; the JSON, the CSV and the title say 2 passes; the best model
    is train's bit for bit."""
    fixed = ["--eta", 0.5, "--gamma", 0.5]
    grid = ["--grid", "margin-step=fig5,projectron", *fixed]

    def train(rule, *extra, out=tmp_path / "m.model"):
        t = run(
            "train",
            "-a",
            "projectron++",
            "--margin-step",
            rule,
            *fixed,
            *extra,
            "--json",
            "-q",
            files / "train.txt",
            "-o",
            out,
        )
        assert t.exit_code == 0, t.output
        return json.loads(t.stdout)

    r = run(
        "tune",
        "-a",
        "projectron++",
        *grid,
        "--permutations",
        2,
        "--epochs",
        2,
        "--json",
        "--csv",
        tmp_path / "t.csv",
        "--save-best",
        tmp_path / "best.model",
        files / "train.txt",
    )
    assert r.exit_code == 0, r.output
    table = json.loads(r.stdout)
    assert table["epochs"] == 2
    with open(tmp_path / "t.csv") as f:
        assert {line["epochs"] for line in csv.DictReader(f)} == {"2"}
    for row in table["rows"]:
        rule = row["setting"]["margin_step"]
        for p in row["per_run"]:
            two = train(rule, "--shuffle", "--seed", p["seed"], "--epochs", 2)
            assert (p["examples"], p["mistakes"], p["support_size"]) == (400, two["mistakes"], two["support_size"])
            assert p["mistakes"] > train(rule, "--shuffle", "--seed", p["seed"])["mistakes"]  # the second pass counted
    top = table["rows"][0]
    best = min(top["per_run"], key=lambda x: (x["online_mistake_rate"], x["permutation"]))
    train(top["setting"]["margin_step"], "--shuffle", "--seed", best["seed"], "--epochs", 2, out=tmp_path / "ref.model")
    got, want = Model.load(tmp_path / "best.model").learner.state(), Model.load(tmp_path / "ref.model").learner.state()
    assert got[0] == want[0]
    assert_same_state(got[1], want[1])
    # file order
    r = run("tune", "-a", "projectron++", *grid, "--permutations", 0, "--epochs", 2, files / "train.txt")
    assert r.exit_code == 0 and "1 run(s) per setting of 2 pass(es)" in r.stdout
    r = run("tune", "-a", "projectron++", *grid, "--permutations", 0, "--epochs", 2, "--json", files / "train.txt")
    for row in json.loads(r.stdout)["rows"]:
        (only,) = row["per_run"]
        two = train(row["setting"]["margin_step"], "--epochs", 2)
        assert (only["examples"], only["mistakes"], only["support_size"]) == (400, two["mistakes"], two["support_size"])


def test_bad_data_in_a_worker_names_the_line_and_writes_nothing(files, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text((files / "train.txt").read_text() + "+1 1:0.5 1:0.7\n")
    for jobs in (1, 2):
        r = run(
            "tune",
            "-a",
            "projectron",
            "--grid",
            "eta=0.1,0.2",
            "--permutations",
            2,
            "--jobs",
            jobs,
            "--csv",
            tmp_path / "t.csv",
            "--save-best",
            tmp_path / "b.model",
            bad,
        )
        assert r.exit_code == 1
        assert f"{bad}:201: duplicate feature index 1" in r.stderr
        assert not (tmp_path / "t.csv").exists() and not (tmp_path / "b.model").exists()


def test_ray_without_ray_is_a_clear_error(files):
    try:
        import ray  # noqa: F401

        pytest.skip("ray is installed")
    except ImportError:
        pass
    r = run("tune", "-a", "perceptron", "--permutations", 1, "--jobs", 2, "--backend", "ray", files / "train.txt")
    assert r.exit_code == 1
    assert "the ray backend needs ray" in r.stderr


def awkward_file(path, n=150, seed=7):
    """BOM, CRLF, comments, blank lines, '+1' and '1' for the same label, no final newline."""
    X, y = random_stream(n, 4, seed)
    lines = []
    for i, (row, lab) in enumerate(zip(X, y)):
        label = ("1" if i % 3 else "+1") if lab > 0 else "-1"
        lines.append(
            label + "".join(f" {j + 1}:{float(v)!r}" for j, v in enumerate(row) if v) + ("\r\n" if i % 5 == 0 else "\n")
        )
        if i % 17 == 0:
            lines.append("# comment\n\n   \t\n")
    path.write_bytes(b"\xef\xbb\xbf" + "".join(lines).rstrip("\n").encode())


@pytest.mark.parametrize("block_lines", [7, 4096])
def test_seeking_permuted_reader_gives_the_in_memory_shuffle_model(tmp_path, block_lines, monkeypatch):
    """tune's permuted run (seek by offsets) against pipeline.train(shuffle=True) (data in memory)."""
    from budgetcli.run import pipeline
    from budgetcli.base.core import KernelSpec
    from budgetcli.io.permuted import PermutedExamples
    from budgetcli.model.spec import TrainSpec

    path = tmp_path / "awkward.txt"
    awkward_file(path)
    spec = TrainSpec("rbp", KernelSpec("rbf", 0.5), {"budget": 20})
    for seed in (0, 3):
        want = pipeline.train(replace(spec, seed=seed, shuffle=True, block_lines=block_lines), str(path))
        ex = PermutedExamples(str(path), seed, block_lines=block_lines)
        assert ex.label_problem() is None
        got = pipeline.train(replace(spec, seed=seed, block_lines=block_lines), ex.lines())
        got.model.labels.spellings = ex.model_spellings()
        assert got.model.learner.state()[0] == want.model.learner.state()[0]
        assert_same_state(got.model.learner.state()[1], want.model.learner.state()[1])
        assert got.model.labels.to_dict() == want.model.labels.to_dict()
        assert want.model.labels.spelling(1.0) == "+1"  # the file's first spelling, which the fix-up restores
    # and through the command: tune's best model is train --shuffle's, labels included
    r = run(
        "tune",
        "-a",
        "rbp",
        "-B",
        20,
        "--gamma",
        0.5,
        "--permutations",
        2,
        "--sort",
        "support",
        "--save-best",
        tmp_path / "best.model",
        path,
    )
    assert r.exit_code == 0, r.output
    run(
        "train", "-a", "rbp", "-B", 20, "--gamma", 0.5, "--shuffle", "--seed", 0, "-q", path, "-o", tmp_path / "t.model"
    )
    best, ref = Model.load(tmp_path / "best.model"), Model.load(tmp_path / "t.model")
    assert best.labels.to_dict() == ref.labels.to_dict()
    assert_same_state(best.learner.state()[1], ref.learner.state()[1])


def test_permuted_runs_name_bad_lines_and_third_labels_in_file_order(tmp_path):
    path = tmp_path / "awkward.txt"
    awkward_file(path)
    text = path.read_bytes().split(b"\n")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\n".join(text[:40] + [b"+1 2:0.5 1:0.25"] + text[40:]))
    r = run("tune", "-a", "perceptron", "--permutations", 2, "--jobs", 2, bad)
    assert r.exit_code == 1 and f"{bad}:41: feature indices must be strictly increasing" in r.stderr
    bad.write_bytes(b"\n".join(text[:60] + [b"2 1:0.5", b"3 1:0.5"] + text[60:]))
    r = run("tune", "-a", "perceptron", "--permutations", 2, bad)
    assert r.exit_code == 1
    assert (
        f"{bad}:61: a third label value in binary training (labels so far: -1, +1); this algorithm is binary-only"
        in r.stderr
    )
    # the message of a plain `train` (file order), whose label map sees the first block first
    t = run("train", "-a", "perceptron", bad, "-o", tmp_path / "m.model")
    assert t.exit_code == 1 and t.stderr == r.stderr


def test_a_multiclass_learner_tunes_like_train_and_eval(tmp_path):
    """Three classes through the seeking permuted reader: each run is `train --shuffle --seed p` and its
    test accuracy is `eval`'s (the top-scoring class)."""
    rng = np.random.default_rng(5)
    for name, n in (("train.txt", 150), ("test.txt", 60)):
        X = rng.standard_normal((n, 3))
        y = np.argmax(X + 0.3 * rng.standard_normal((n, 3)), axis=1) + 1
        (tmp_path / name).write_text(
            "".join(
                f"{c} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(row)) + "\n" for row, c in zip(X.tolist(), y)
            )
        )
    r = run(
        "tune",
        "-a",
        "mc-perceptron",
        "--grid",
        "gamma=0.5,2",
        "--permutations",
        2,
        "--test",
        tmp_path / "test.txt",
        "--json",
        tmp_path / "train.txt",
    )
    assert r.exit_code == 0, r.output
    for row in json.loads(r.stdout)["rows"]:
        for p in row["per_run"]:
            out = tmp_path / "m.model"
            t = run(
                "train",
                "-a",
                "mc-perceptron",
                "--gamma",
                row["setting"]["gamma"],
                "--shuffle",
                "--seed",
                p["seed"],
                "--json",
                "-q",
                tmp_path / "train.txt",
                "-o",
                out,
            )
            assert json.loads(t.stdout)["mistakes"] == p["mistakes"]
            e = run("eval", "--json", out, tmp_path / "test.txt")
            assert json.loads(e.stdout)["accuracy"] == pytest.approx(p["test_accuracy"], abs=1e-15)
