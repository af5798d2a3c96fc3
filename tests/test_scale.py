"""`budgetlearn scale` as LIBSVM's svm-scale (svm-scale.c): its ranges (a missing feature counts as 0),
its map, its output format and its range files; and the scaling a model carries (`train --scale`)."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.base.core import DataError
from budgetcli.entry import main
from budgetcli.io.libsvm import LibsvmReader, read_all
from budgetcli.model.ranges import Ranges, RangeTally, read_ranges

# three examples, features 1..4: feature 2 is constant (dropped), feature 4 is absent from two rows (its
# range takes their 0), feature 3 is absent from one
SMALL = "+1 1:2 2:5 3:-1\n-1 1:4 2:5 4:8\n+1 1:6 2:5 3:3\n"
# svm-scale's ranges, worked out by hand: 1: [2, 6]; 3: [-1, 3] (row 2's 0 inside); 4: [0, 8]
SMALL_RANGES = "x\n-1 1\n1 2 6\n3 -1 3\n4 0 8\n"
# and its output: 1: 2 → -1, 4 → 0 (not written), 6 → 1; 3: -1 → -1, 0 → -1 + 2·1/4 = -0.5, 3 → 1;
# 4: 0 → -1, 8 → 1; every token followed by a space, labels as %.17g
SMALL_SCALED = "1 1:-1 3:-1 4:-1 \n-1 3:-0.5 4:1 \n1 1:1 3:1 4:-1 \n"


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_scale_writes_what_svm_scale_writes(tmp_path):
    data = write(tmp_path, "d.txt", SMALL)
    r = run("scale", "-s", tmp_path / "r.txt", data)
    assert r.exit_code == 0, r.output
    assert r.stdout == SMALL_SCALED
    assert (tmp_path / "r.txt").read_text() == SMALL_RANGES
    # from standard input (held in memory for the second pass): the same
    r = run("scale", "-", input=SMALL)
    assert r.exit_code == 0 and r.stdout == SMALL_SCALED
    # -o writes the same
    assert run("scale", "-o", tmp_path / "out.txt", data).exit_code == 0
    assert (tmp_path / "out.txt").read_text() == SMALL_SCALED


def test_lower_zero_keeps_zeros_sparse_and_y_scales_the_labels(tmp_path):
    data = write(tmp_path, "d.txt", SMALL)
    r = run("scale", "-l", "0", "-y", "0", "10", "-s", tmp_path / "r.txt", data)
    assert r.exit_code == 0, r.output
    # 1: 2 → 0, 4 → 0.5, 6 → 1; 3: -1 → 0, 0 → 0.25, 3 → 1; 4: 0 → 0 (absent stays absent), 8 → 1;
    # labels: -1 → 0, +1 → 10
    assert r.stdout == "10 \n0 1:0.5 3:0.25 4:1 \n10 1:1 3:1 \n"
    assert (tmp_path / "r.txt").read_text() == "y\n0 10\n-1 1\nx\n0 1\n1 2 6\n3 -1 3\n4 0 8\n"
    assert r.stderr == ""  # fewer non-zeros than before: no warning


def test_restore_scales_by_the_file_and_leaves_out_what_it_lacks(tmp_path):
    # the file (as svm-scale -s writes it) has no range for feature 2; feature 5 is beyond its ranges
    ranges = write(tmp_path, "r.txt", "x\n0 1\n1 0 10\n3 -2 2\n")
    data = write(tmp_path, "t.txt", "1 1:5 2:7 5:1\n-1 1:20 3:-4\n1 2:3\n")
    r = run("scale", "-r", ranges, data)
    assert r.exit_code == 0, r.output
    # 1: 5 → 0.5, 20 → 2 (outside the range: the same line, not clipped), 0 → 0; 3: 0 → 0.5, -4 → -0.5
    assert r.stdout == "1 1:0.5 3:0.5 \n-1 1:2 3:-0.5 \n1 3:0.5 \n"
    assert r.stderr == (
        f"budgetlearn: warning: 2 features of {data} have no range in {ranges} (2, 5): they are scaled to 0 "
        "(left out), as svm-scale -r does\n"
    )
    # read once, as a stream: standard input needs nothing held
    assert run("scale", "-r", ranges, "-", input=data.read_text()).stdout == r.stdout


def test_a_range_file_written_by_svm_scale_with_targets_is_read(tmp_path):
    text = "y\n-1 1\n5 50\nx\n-1 1\n1 0.10000000000000001 0.90000000000000002\n13 -3 7\n"
    ranges = read_ranges(write(tmp_path, "r", text))
    assert (ranges.lower, ranges.upper, ranges.y) == (-1, 1, (-1, 1, 5, 50))
    assert ranges.indices.tolist() == [1, 13] and ranges.mins.tolist() == [0.1, -3] and ranges.maxs.tolist() == [0.9, 7]
    out = tmp_path / "again"
    with open(out, "w") as f:
        from budgetcli.model.ranges import write_ranges

        write_ranges(f, ranges)
    assert out.read_text() == text  # %.17g, as svm-scale writes


@pytest.mark.parametrize(
    "text,line,reason",
    [
        ("", 1, "not a range file"),
        ("z\n-1 1\n", 1, "not a range file"),
        ("x\n-1\n", 2, "expected 2 numbers"),
        ("x\n1 -1\n", 0, "upper ≤ lower"),
        ("x\n-1 1\n3 0 1\n2 0 1\n", 4, "feature indices must increase (2 after 3)"),
        ("x\n-1 1\n3 0 nan\n", 3, "not a finite number"),
        ("x\n-1 1\n3 2 1\n", 3, "min 2 > max 1"),
        ("x\n-1 1\n-3 0 1\n", 3, "feature index is not a whole number"),
        ("x\n-1 1\n3 0\n", 3, "expected 'index min max'"),
        ("x\n-1 1\n3 0 1e400\n", 3, "not a finite number"),
        ("x\n-1 1\n" + "9" * 5000, 3, "longer than 1024 bytes"),
    ],
)
def test_a_bad_range_file_is_one_line_naming_its_line(tmp_path, text, line, reason):
    path = write(tmp_path, "r", text)
    with pytest.raises(DataError) as info:
        read_ranges(path)
    assert info.value.line == line and reason in str(info.value)
    r = run("scale", "-r", path, write(tmp_path, "d", SMALL))
    assert r.exit_code == 1 and r.stdout == "" and r.stderr.startswith(f"budgetlearn: error: {path}")
    assert len(r.stderr.splitlines()) == 1


def test_min_equal_max_lines_are_dropped_as_svm_scale_skips_them(tmp_path):
    ranges = read_ranges(write(tmp_path, "r", "x\n-1 1\n1 0 2\n2 3 3\n"))
    assert ranges.indices.tolist() == [1]


@pytest.mark.parametrize(
    "args,message",
    [
        (("-l", "1", "-u", "1"), "-u 1 must be greater than -l 1"),
        (("-y", "2", "1"), "-y 2 1: the upper end must be greater"),
        (("-r", "R", "-l", "0"), "-r takes the interval from its file; drop -l, -u and -y"),
    ],
)
def test_bad_settings_are_refused_before_anything_is_read(tmp_path, args, message):
    r = run("scale", *args, tmp_path / "missing")
    assert r.exit_code == 2 and message in r.stderr


def test_nothing_is_written_when_a_line_is_bad(tmp_path):
    data = write(tmp_path, "d.txt", SMALL + "+1 3:x\n")
    out, saved = write(tmp_path, "out", "old"), write(tmp_path, "saved", "old")
    r = run("scale", "-s", saved, "-o", out, data)
    assert (
        r.exit_code == 1 and r.stderr == f"budgetlearn: error: {data}:4: feature value is not a number (token '3:x')\n"
    )
    assert out.read_text() == "old" and saved.read_text() == "old"
    r = run("scale", "--skip-bad-lines", "-o", out, data)
    assert r.exit_code == 0 and out.read_text() == SMALL_SCALED and "skipped 1 malformed lines" in r.stderr


def test_the_output_may_not_be_the_input(tmp_path):
    data = write(tmp_path, "d.txt", SMALL)
    r = run("scale", "-o", data, data)
    assert r.exit_code == 2 and data.read_text() == SMALL


def test_unlabelled_lines_are_scaled_without_a_label(tmp_path):
    data = write(tmp_path, "d.txt", SMALL + "1:4 2:5 3:3\n")  # the same ranges
    assert run("scale", data).stdout == SMALL_SCALED + "3:1 4:-1 \n"


def reference_ranges(rows: list[dict]) -> dict:
    """svm-scale.c's pass 2 written out: over indices 1..max, a row without a feature counts 0."""
    top = max((max(r) for r in rows if r), default=0)
    out = {}
    for j in range(1, top + 1):
        values = [r.get(j, 0.0) for r in rows]
        out[j] = (min(values), max(values))
    return {j: v for j, v in out.items() if v[0] != v[1]}


@pytest.mark.parametrize("block", [1, 3, 4096])
@pytest.mark.parametrize("seed", range(4))
def test_the_ranges_of_a_stream_are_svm_scales_whatever_the_blocks(tmp_path, block, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(int(rng.integers(1, 40))):
        features = sorted(rng.choice(np.arange(1, 12), size=int(rng.integers(0, 6)), replace=False).tolist())
        rows.append({j: float(rng.choice([-3.5, -1, 0.25, 2, 7])) for j in features})
    text = "".join("1 " + " ".join(f"{j}:{v!r}" for j, v in r.items()) + "\n" for r in rows)
    path = write(tmp_path, "d.txt", text)
    tally = RangeTally()
    with LibsvmReader(path, block_lines=block) as reader:
        for chunk in reader:
            tally.add(chunk)
    ranges = tally.ranges()
    expected = reference_ranges([{j: v for j, v in r.items() if v != 0} for r in rows])
    assert dict(zip(ranges.indices.tolist(), zip(ranges.mins.tolist(), ranges.maxs.tolist()))) == expected


def test_the_slopes_alone_give_the_kernel_distances_of_the_whole_map(tmp_path):
    """rbf sees x − y only: the map without its shift keeps every distance, and keeps zeros sparse."""
    chunk = read_all(write(tmp_path, "d.txt", SMALL + "-1 1:3 4:2\n"))
    ranges = Ranges(-1.0, 1.0, [1, 3, 4], [2.0, -1.0, 0.0], [6.0, 3.0, 8.0])
    whole, slopes = ranges.apply(chunk, shift=True), ranges.apply(chunk, shift=False)
    a, b = whole.to_dense(4), slopes.to_dense(4)
    for i in range(len(chunk)):
        for j in range(len(chunk)):
            assert math.isclose(np.sum((a[i] - a[j]) ** 2), np.sum((b[i] - b[j]) ** 2), rel_tol=1e-12, abs_tol=1e-12)
    held = np.isin(chunk.indices, [1, 3, 4]).sum()  # feature 2 has no range: left out
    assert len(slopes.indices) == held < len(whole.indices)


# ---- the scaling a model carries ------------------------------------------------------------------


def integer_data(path, n: int = 300, seed: int = 0, high: int = 5) -> list[str]:
    """Integer features 0..4 (feature 3 up to 8): svm-scale's images of them onto [-1, 1] (steps of 0.5,
    0.25) are exact in %g, so a model of svm-scale'd text and a model that scales alike see the same numbers."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        x = [int(rng.integers(0, high)), int(rng.integers(0, 5)), int(rng.integers(0, 9))]
        label = "+1" if x[0] + x[1] - 0.5 * x[2] > 1.0 else "-1"
        lines.append(label + "".join(f" {j + 1}:{v}" for j, v in enumerate(x) if v))
    path.write_text("\n".join(lines) + "\n")
    return lines


def scores(model, data) -> list[float]:
    r = run("predict", "--scores", model, data)
    assert r.exit_code == 0, r.output
    return [float(line.split()[1]) for line in r.stdout.splitlines()]


@pytest.mark.parametrize("kernel", [("--gamma", "0.5"), ("--kernel", "linear"), ("--kernel", "poly", "--coef0", "1")])
def test_a_model_that_scales_is_the_model_of_scaled_data(tmp_path, kernel):
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    integer_data(train)
    integer_data(test, 100, seed=1)
    ranges = tmp_path / "r.txt"
    assert run("scale", "-s", ranges, "-o", tmp_path / "train.scaled", train).exit_code == 0
    assert run("scale", "-r", ranges, "-o", tmp_path / "test.scaled", test).exit_code == 0
    common = ("train", "-q", "-a", "perceptron", *kernel)
    assert run(*common, "--scale", train, "-o", tmp_path / "own.model").exit_code == 0
    assert run(*common, "--scale-ranges", ranges, train, "-o", tmp_path / "file.model").exit_code == 0
    assert run(*common, tmp_path / "train.scaled", "-o", tmp_path / "scaled.model").exit_code == 0
    expected = scores(tmp_path / "scaled.model", tmp_path / "test.scaled")
    for model in ("own.model", "file.model"):
        got = scores(tmp_path / model, test)  # the raw test file: the model scales it
        assert np.allclose(got, expected, rtol=1e-9, atol=1e-12)
    # and without the scaling the model is another one
    assert run(*common, train, "-o", tmp_path / "raw.model").exit_code == 0
    assert not np.allclose(scores(tmp_path / "raw.model", test), expected)
    own = json.loads(run("eval", "--json", tmp_path / "own.model", test).stdout)
    scaled = json.loads(run("eval", "--json", tmp_path / "scaled.model", tmp_path / "test.scaled").stdout)
    assert own["accuracy"] == scaled["accuracy"]  # (svm-scale spells +1 as 1)


def test_a_stream_is_scaled_by_its_first_block(tmp_path):
    train = tmp_path / "train.txt"
    lines = integer_data(train, 5000)
    lines[4500] = "+1 1:40 2:1"  # beyond the first block (4,096 examples): outside its range of feature 1
    train.write_text("\n".join(lines) + "\n")
    r = run("train", "-a", "perceptron", "--scale", "-", "-o", tmp_path / "m", input=train.read_text())
    assert r.exit_code == 0 and "from the data's first block" in r.stderr
    from budgetcli.model.model import Model

    streamed = Model.load(tmp_path / "m").scaling.ranges
    first = RangeTally()
    first.add(read_all(train).take(np.arange(4096)))
    assert streamed.maxs.tolist() == first.ranges().maxs.tolist() == [4.0, 4.0, 8.0]
    # a file is read twice: its ranges are the whole file's
    assert run("train", "-q", "-a", "perceptron", "--scale", train, "-o", tmp_path / "f").exit_code == 0
    assert Model.load(tmp_path / "f").scaling.ranges.maxs.tolist() == [40.0, 4.0, 8.0]
    assert "scaling         [-1, 1] on 3 features, ranges from a first pass" in run("info", tmp_path / "f").stdout


def test_a_resumed_run_keeps_the_models_scaling(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    integer_data(first, 200)
    integer_data(second, 200, seed=3, high=40)  # feature 1 far beyond the first part's range
    both = tmp_path / "ab.txt"
    both.write_text(first.read_text() + second.read_text())
    m = tmp_path / "m"
    assert run("train", "-q", "-a", "perceptron", "--scale", "--save-resume", first, "-o", m).exit_code == 0
    r = run("train", "--resume", m, "--scale", second, "-o", m)
    assert r.exit_code == 2 and "--resume continues the model's own settings; drop --scale" in r.stderr
    assert run("train", "-q", "--resume", m, second, "-o", tmp_path / "m2").exit_code == 0
    from budgetcli.model.model import Model

    kept = Model.load(tmp_path / "m2").scaling.ranges
    assert kept.maxs.tolist() == Model.load(m).scaling.ranges.maxs.tolist() == [4.0, 4.0, 8.0]
    # the one run over both parts, scaled by the first part's ranges, is the resumed run
    assert run("scale", "-s", tmp_path / "r", "-o", os.devnull, first).exit_code == 0
    one = ("train", "-q", "-a", "perceptron", "--scale-ranges", tmp_path / "r", both, "-o", tmp_path / "one")
    assert run(*one).exit_code == 0
    assert scores(tmp_path / "m2", both) == scores(tmp_path / "one", both)


def test_every_interface_applies_the_models_scaling(tmp_path):
    import budgetcli
    from budgetcli.sklearn import BudgetClassifier
    from budgetcli.model.spec import TrainSpec

    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    integer_data(train)
    integer_data(test, 100, seed=1)
    m = tmp_path / "m"
    assert run("train", "-q", "-a", "perceptron", "--scale", train, "-o", m).exit_code == 0
    cli = scores(m, test)
    chunk = read_all(test)
    X = chunk.to_dense(3)
    model = budgetcli.load(m)
    assert np.allclose(model.decision_function(X), cli, rtol=0, atol=1e-9)
    assert budgetcli.predictions(model, test).tolist() == model.predict(X).tolist()
    clf = BudgetClassifier.from_model(m)
    assert np.allclose(clf.decision_function(X) * (1 if clf.classes_[1] == 1 else -1), cli, rtol=0, atol=1e-9)
    # trained from arrays: the same ranges, the same model
    y = read_all(train).labels
    Xtrain = read_all(train).to_dense(3)
    api = budgetcli.train(TrainSpec("perceptron", scale=True), Xtrain, y)
    assert np.allclose(api.decision_function(X), cli, rtol=0, atol=1e-9)
    fitted = BudgetClassifier("perceptron", scale=True).fit(Xtrain, y)
    assert np.allclose(fitted.decision_function(X), cli, rtol=0, atol=1e-9)
    fitted.to_model().save(tmp_path / "sk")
    assert scores(tmp_path / "sk", test) == cli
    # calibrate fits on the model's scaled scores; online-to-batch's average keeps the scaling
    assert run("calibrate", m, test, "-o", tmp_path / "cal").exit_code == 0
    assert run("predict", "--proba", tmp_path / "cal", test).exit_code == 0
    avg = ("online-to-batch", "-a", "perceptron", "--scale", train, "-o", tmp_path / "avg")
    assert run(*avg).exit_code == 0 and budgetcli.load(tmp_path / "avg").scaling is not None


def test_what_cannot_carry_a_scaling_says_so(tmp_path):
    train = tmp_path / "train.txt"
    integer_data(train)
    m = tmp_path / "m"
    assert run("train", "-q", "-a", "perceptron", "--scale", train, "-o", m).exit_code == 0
    r = run("export", m, "-o", tmp_path / "out")
    assert r.exit_code == 1 and "LIBSVM's model format cannot hold" in r.stderr and not (tmp_path / "out").exists()
    r = run("train", "-a", "perceptron", "--scale", train, train, "-o", tmp_path / "s")
    assert r.exit_code == 2 and "--scale is not available for a sharded run" in r.stderr
    r = run("train", "--scale", "--scale-ranges", train, train, "-o", tmp_path / "s")
    assert r.exit_code == 2 and "choose one" in r.stderr
    r = run("train", "--scale-ranges", train, train, "-o", tmp_path / "s")  # not a range file
    assert r.exit_code == 1 and r.stderr.startswith(f"budgetlearn: error: {train}:1: not a range file")
    r = run("train", "--resume", m, train, train, "-o", tmp_path / "s")  # shards of a scaled model
    assert (
        r.exit_code == 2
        and r.stderr == f"budgetlearn: error: {m}: a scaled model (train --scale) cannot go on in a sharded run\n"
    )
    assert not (tmp_path / "s").exists()


def test_tune_scales_its_runs_as_train_does(tmp_path):
    train = tmp_path / "train.txt"
    integer_data(train, 200)
    r = run("tune", "-a", "perceptron", "--grid", "gamma=0.5,1", "--scale", "--folds", 3, "--json", train)
    assert r.exit_code == 0, r.output
    for row in json.loads(r.stdout)["rows"]:
        cv = run("train", "-a", "perceptron", "--gamma", row["setting"]["gamma"], "--scale", "-v", 3, "--json", train)
        assert row["cv_accuracy_mean"] == json.loads(cv.stdout)["cross_validation_accuracy"]
    # permuted runs: the ranges of the whole file (train --scale's), whatever order a run reads it in
    r = run(
        "tune", "-a", "perceptron", "--gamma", 0.5, "--scale", "--permutations", 2, "--test", train, "--json", train
    )
    best = json.loads(r.stdout)["best"]
    assert best.startswith("budgetlearn train -a perceptron --gamma 0.5 --scale --shuffle --seed ")
    model = tmp_path / "best.model"
    assert run(*best.split()[1:-1], train, "-o", model).exit_code == 0
    accuracy = json.loads(run("eval", "--json", model, train).stdout)["accuracy"]
    assert accuracy in [r["test_accuracy"] for r in json.loads(r.stdout)["rows"][0]["per_run"]]


def test_a_river_classifier_applies_a_files_scaling(tmp_path):
    pytest.importorskip("river")
    from budgetcli.river import BudgetClassifier
    from budgetcli.model.scaling import Scaling

    train = tmp_path / "train.txt"
    integer_data(train, 150)
    chunk = read_all(train)
    X = chunk.to_dense(3)
    clf = BudgetClassifier("perceptron", gamma=0.5, average=False)  # the last hypothesis, as --hypothesis last below
    tally = RangeTally()  # the ranges of the file, as train --scale takes them (River has no way to make them:
    tally.add(chunk)  # a file's scaling comes from a CLI model, or a file edited; set here before learning)
    clf.scaling = Scaling.for_kernel(tally.ranges(), "rbf", "data")
    for row, label in zip(X, chunk.labels):
        clf.learn_one({j + 1: v for j, v in enumerate(row)}, label)  # zeros too: columns 1, 2, 3 as in the file
    clf.save(tmp_path / "river.model")
    loaded = BudgetClassifier.load(tmp_path / "river.model")
    assert loaded.scaling is not None
    expected = scores(tmp_path / "river.model", train)  # the CLI scales as the file says
    river = [loaded._scores(read_all(train).take([i]))[0] for i in range(len(chunk))]
    assert np.allclose(river, expected, rtol=0, atol=1e-9)
    cli = tmp_path / "cli.model"
    assert (
        run(
            "train", "-q", "-a", "perceptron", "--gamma", 0.5, "--hypothesis", "last", "--scale", train, "-o", cli
        ).exit_code
        == 0
    )
    assert np.allclose(scores(cli, train), expected, rtol=0, atol=1e-9)  # the same model as train --scale
