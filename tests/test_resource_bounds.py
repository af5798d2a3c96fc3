"""Every resource is bounded by the work, not by a flag or a model file's header (issue: reliability III).

Workers: min(requested, pieces of work, cores), said when lowered.  Memory: a multiclass score block
holds at most bounds.SCORE_BLOCK_BYTES whatever class count a model declares; an eval report lists at
most metrics.REPORT_CLASSES classes that never occur; training stops when a multiclass model would
pass bounds.MAX_COEFFICIENTS coefficients or a label would pass the classes a model file may hold; the
Tighter Budget Perceptron's evaluation set grows with the stream, not with --eval-size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from budgetcli.base import bounds, modelfile, registry
from budgetcli.learning import labels, metrics
from budgetcli.run import pipeline, predictions
from budgetcli.entry import main
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.labels import MulticlassLabels
from budgetcli.model.model import Model

from . import doctables
from .test_cli import write_stream

DOC = Path(__file__).resolve().parents[1] / "docs" / "RELIABILITY.md"
BEGIN, END = "<!-- table generated from tests/test_resource_bounds.py: begin -->", "<!-- end of the bounds table -->"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_workers_are_the_least_of_request_pieces_and_cores(monkeypatch):
    monkeypatch.setattr(bounds, "cores", lambda: 2)
    assert bounds.workers(1, 10) == (1, None)
    assert bounds.workers(2, 10) == (2, None)
    assert bounds.workers(-1, 10) == (2, None)
    assert bounds.workers(1000, 10, "run") == (2, "--jobs 1000 lowered to 2 (2 cores)")
    assert bounds.workers(1000, 1, "run") == (1, "--jobs 1000 lowered to 1 (1 run)")
    assert bounds.workers(-1, 1, "shard") == (1, "--jobs -1 lowered to 1 (1 shard)")


def test_predict_with_a_billion_jobs_on_twenty_lines_is_serial_and_quick(tmp_path):
    write_stream(tmp_path / "d.txt", n=20)
    assert run("train", "-a", "perceptron", "-q", tmp_path / "d.txt", "-o", tmp_path / "m.model").exit_code == 0
    serial = run("predict", tmp_path / "m.model", tmp_path / "d.txt")
    started = time.perf_counter()
    r = run("predict", "--jobs", 10**9, tmp_path / "m.model", tmp_path / "d.txt")
    assert time.perf_counter() - started < 60  # it spun in line_ranges, then started ~1e9 workers
    assert r.exit_code == 0
    assert r.stdout == serial.stdout
    assert r.stderr == "budgetlearn: note: --jobs 1000000000 lowered to 1 (1 range of at least 1 MiB)\n"


def test_line_ranges_of_a_huge_part_count_are_at_most_one_per_byte(tmp_path):
    (tmp_path / "f.txt").write_text("+1 1:1\n" * 20)
    ranges = predictions.line_ranges(tmp_path / "f.txt", 10**9)
    assert len(ranges) == 20 and ranges[0] == (0, 7) and ranges[-1] == (133, 140)


def test_tune_starts_no_more_workers_than_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(bounds, "cores", lambda: 64)
    write_stream(tmp_path / "d.txt", n=50)
    r = run("tune", "-a", "perceptron", "--permutations", 2, "--jobs", 20, "--json", tmp_path / "d.txt")
    assert r.exit_code == 0, r.output
    assert r.stderr == "budgetlearn: note: --jobs 20 lowered to 2 (2 runs)\n"


def _many_classes_model(path, classes: int) -> Model:
    """A hostile mc-perceptron model: one support vector, `classes` classes."""
    learner = registry.get("mc-perceptron")(Kernel("rbf", 0.5))
    header, arrays = learner.state()
    header.update(n_classes=classes, n_features=2)
    arrays.update(
        sv_indptr=np.array([0, 1]),
        sv_indices=np.array([0], np.int32),
        sv_values=np.array([1.0]),
        coef=np.linspace(-1, 1, classes)[None, :],
        avg_base=np.zeros((1, classes)),
        avg_offset=np.zeros((1, classes)),
    )
    model = Model(
        type(learner).from_state(header, arrays),
        MulticlassLabels([float(v) for v in range(classes)], {float(v): str(v) for v in range(classes)}),
    )
    model.save(path)
    return model


def test_scores_of_a_model_with_every_class_allowed_come_in_small_blocks(tmp_path, monkeypatch):
    """A 65,536-class model: `predict` of 5,000 lines took 2.85 GB (one 4,096 × 65,536 score block)."""
    path = tmp_path / "m.model"
    _many_classes_model(path, statecheck_max := 1 << 16)
    model = Model.load(path)
    assert len(model.labels.classes) == statecheck_max
    assert pipeline.score_lines(model) == bounds.SCORE_BLOCK_BYTES // (8 * statecheck_max) == 64
    with open(tmp_path / "d.txt", "w") as f:
        f.writelines(f"{i % 7} 1:{i / 500:.3f} 2:1\n" for i in range(300))
    largest = []
    scores_of = type(model.learner).decision_function

    def spy(self, chunk):
        largest.append(len(chunk))
        return scores_of(self, chunk)

    monkeypatch.setattr(type(model.learner), "decision_function", spy)
    r = run("predict", path, tmp_path / "d.txt")
    assert r.exit_code == 0, r.output
    assert len(r.stdout.splitlines()) == 300
    assert max(largest) == 64  # 64 × 65,536 doubles: 32 MiB
    r = run("eval", "--json", path, tmp_path / "d.txt")
    assert r.exit_code == 0, r.output
    assert max(largest) == 64


def test_an_eval_report_lists_only_occurring_classes_past_report_classes():
    classes = [float(v) for v in range(metrics.REPORT_CLASSES + 5)]
    true = np.array([3.0, 3.0, 7.0, 2000.5])  # 2000.5: a label the model never saw
    pred = np.array([3, 9, 7, 3])
    report = metrics.multiclass_report(classes, lambda v: f"{v:g}", true, pred)
    assert report["confusion_matrix"]["labels"] == ["3", "7", "9", "2000.5"]
    assert report["confusion_matrix"]["rows_true_columns_predicted"] == [
        [1, 0, 1, 0],
        [0, 1, 0, 0],
        [0, 0, 0, 0],
        [1, 0, 0, 0],
    ]
    assert report["accuracy"] == 0.5
    small = metrics.multiclass_report(classes[:10], lambda v: f"{v:g}", true[:3], pred[:3])
    assert len(small["confusion_matrix"]["labels"]) == 10  # under the bound every model class is listed


def _distinct_labels(path, n: int) -> None:
    rng = np.random.default_rng(0)
    with open(path, "w") as f:
        f.writelines(f"{i} 1:{rng.normal():.4f} 2:{rng.normal():.4f}\n" for i in range(n))


def test_training_stops_when_a_multiclass_model_would_pass_its_coefficient_bound(tmp_path, monkeypatch):
    """mc-perceptron on 10,000 lines with 10,000 labels took 6.45 GB: the model grows as classes × vectors."""
    monkeypatch.setattr(bounds, "MAX_COEFFICIENTS", 2000)
    _distinct_labels(tmp_path / "d.txt", 200)
    (tmp_path / "m.model").write_bytes(b"old")
    r = run("train", "-a", "mc-perceptron", "--gamma", 1, tmp_path / "d.txt", "-o", tmp_path / "m.model")
    assert r.exit_code == 1
    (line,) = r.stderr.splitlines()
    # the arrays start with 64 slots and 4 classes, and double: line 17 brings the 17th class, 64 × 32 > 2,000
    assert line == (
        f"budgetlearn: error: {tmp_path / 'd.txt'}:17: training stopped: the model's coefficients would "
        "take 64 slots × 32 classes = 2,048 numbers, more than the 2,000 a multiclass model may hold (it "
        "grows as classes × support vectors) (mc-perceptron, kernel rbf (γ=1, σ=0.707107)); nothing "
        "written"
    )
    assert (tmp_path / "m.model").read_bytes() == b"old"


def test_training_warns_about_many_classes(tmp_path, monkeypatch):
    monkeypatch.setattr(bounds, "WARN_CLASSES", 20)
    _distinct_labels(tmp_path / "d.txt", 30)
    r = run("train", "-a", "mc-perceptron", "--gamma", 1, "--json", tmp_path / "d.txt", "-o", tmp_path / "m.model")
    assert r.exit_code == 0, r.output
    # first, before the warnings that 30 examples of 30 classes make a model no better than a constant
    warning = json.loads(r.stdout)["warnings"][0]
    # the first example's class is the only one known: no update, 29 support vectors
    assert warning == (
        "30 classes: a multiclass model grows as classes × support vectors (29 × 30 coefficients "
        f"here; its arrays may hold {bounds.MAX_COEFFICIENTS:,})"
    )


def test_a_label_past_the_classes_a_model_may_hold_is_refused_at_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(labels, "MAX_CLASSES", 10)
    _distinct_labels(tmp_path / "d.txt", 30)
    r = run("train", "-a", "mc-perceptron", "--gamma", 1, tmp_path / "d.txt", "-o", tmp_path / "m.model")
    assert r.exit_code == 1
    assert r.stderr == (
        f"budgetlearn: error: {tmp_path / 'd.txt'}:11: a label value beyond the 10 classes a model "
        "may hold (token '10')\n"
    )


def test_the_evaluation_set_grows_with_the_stream_not_with_eval_size(tmp_path):
    """--eval-size 100000000 allocated 23.8 GiB at once; a model header saying so did too."""
    write_stream(tmp_path / "d.txt", n=100)
    r = run(
        "train",
        "-a",
        "tighter-perceptron",
        "--eval-set",
        "random",
        "--eval-size",
        10**8,
        "-B",
        10,
        tmp_path / "d.txt",
        "-o",
        tmp_path / "m.model",
    )
    assert r.exit_code == 0, r.output
    learner = Model.load(tmp_path / "m.model", resume=True).learner
    assert len(learner.evalset) == 100  # every example so far (fewer than q)
    assert learner.eval_block.shape[0] < 1000 and learner.eval["e_f"].shape[0] < 1000


# a producer that sends two good lines, then MiB of a line that never ends
ENDLESS = """
import sys
out = sys.stdout.buffer if sys.argv[1] == "-" else open(sys.argv[1], "wb")
out.write(b"+1 1:1\\n-1 2:1\\n")
piece = b" 1:1" * (1 << 16)
try:
    for _ in range(int(sys.argv[2]) * 4):
        out.write(piece)
    out.close()
except BrokenPipeError:  # the reader stopped reading
    pass
"""


def _peak_mib(args, stdin=None) -> tuple[int, str, float]:
    """(exit code, stderr, peak resident MiB) of `python -m budgetcli ARGS`."""
    env = dict(os.environ, PYTHONPATH=str(DOC.parents[1]))
    p = subprocess.Popen(
        [sys.executable, "-m", "budgetcli", *map(str, args)], stdin=stdin, stderr=subprocess.PIPE, env=env
    )
    err = p.stderr.read().decode()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, err, usage.ru_maxrss / 1024


def test_a_line_without_end_is_refused_in_bounded_memory(tmp_path):
    """A source that never sends a newline (a device, a stuck producer) grew the reader's memory
    until the machine ran out: past MAX_LINE_BYTES (16 MiB) the line is refused in one line naming
    it, the memory that of a small run plus about the bound.  Through a pipe (train) and a FIFO
    (predict), 64 MiB sent."""
    from budgetcli.io.inputs import MAX_LINE_BYTES

    small = tmp_path / "d.txt"
    write_stream(small, n=50)
    code, err, baseline = _peak_mib(["train", "-a", "perceptron", "-q", small, "-o", tmp_path / "m.model"])
    assert code == 0, err
    producer = subprocess.Popen([sys.executable, "-c", ENDLESS, "-", "64"], stdout=subprocess.PIPE)
    code, err, peak = _peak_mib(["train", "-a", "perceptron", "-", "-o", tmp_path / "n.model"], stdin=producer.stdout)
    producer.stdout.close()
    producer.wait(timeout=60)
    assert (code, err) == (
        1,
        f"budgetlearn: error: <stdin>:3: the line is longer than {MAX_LINE_BYTES:,} bytes, the most a line may hold\n",
    )
    assert peak < baseline + 2 * (MAX_LINE_BYTES >> 20) + 16, (peak, baseline)
    assert not (tmp_path / "n.model").exists()

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    producer = subprocess.Popen([sys.executable, "-c", ENDLESS, str(fifo), "64"])
    code, err, peak = _peak_mib(["predict", tmp_path / "m.model", fifo])
    producer.wait(timeout=60)
    assert (code, err) == (
        1,
        f"budgetlearn: error: {fifo}:3: the line is longer than {MAX_LINE_BYTES:,} bytes, the most a line may hold\n",
    )
    assert peak < baseline + 2 * (MAX_LINE_BYTES >> 20) + 16, (peak, baseline)


# the "Resource bounds" table of docs/RELIABILITY.md: (resource, bound, the tests that check it)
BOUNDS = [
    (
        "worker processes: `predict --jobs`, `tune --jobs`, `train --backend dask --jobs`",
        "min(requested, pieces of work, cores): predict's pieces are ranges of at least 1 MiB, tune's its runs, a "
        "sharded run's its shards (a cluster's own workers, with `--scheduler`, are the cluster's); a lowered request "
        "is noted on stderr",
        (
            "test_workers_are_the_least_of_request_pieces_and_cores",
            "test_predict_with_a_billion_jobs_on_twenty_lines_is_serial_and_quick",
            "test_tune_starts_no_more_workers_than_runs",
        ),
    ),
    (
        "`predict --jobs`'s byte ranges",
        "at most one per byte of the file",
        ("test_line_ranges_of_a_huge_part_count_are_at_most_one_per_byte",),
    ),
    (
        "loading a model file",
        f"its arrays at most {modelfile.MAX_INFLATION} × the file's size + "
        f"{modelfile.INFLATION_SLACK >> 20} MiB (checked from the members' headers before any is read), its header at "
        f"most {modelfile.MAX_HEADER_BYTES >> 20} MiB",
        ("test_model_untrusted.py::test_the_zip_bomb_costs_no_memory",),
    ),
    (
        "a block of multiclass scores (`predict`, `eval`, `tune --test`)",
        f"{bounds.SCORE_BLOCK_BYTES >> 20} MiB: max(1, {bounds.SCORE_BLOCK_BYTES >> 20} MiB / (8 bytes × classes)) "
        "lines at a time, whatever class count a model declares",
        ("test_scores_of_a_model_with_every_class_allowed_come_in_small_blocks",),
    ),
    (
        "`eval`'s report",
        f"one number per example; a confusion matrix of classes²: past {metrics.REPORT_CLASSES:,} "
        "classes, only those that occur in the data or the predictions",
        ("test_an_eval_report_lists_only_occurring_classes_past_report_classes",),
    ),
    (
        "a multiclass model's coefficient arrays (slots × classes, each doubling as it grows)",
        f"{bounds.MAX_COEFFICIENTS:,} numbers ({bounds.MAX_COEFFICIENTS * 8 >> 20} MiB an array): training stops at "
        f"the line that would pass it; its summary warns past {bounds.WARN_CLASSES:,} classes",
        (
            "test_training_stops_when_a_multiclass_model_would_pass_its_coefficient_bound",
            "test_training_warns_about_many_classes",
        ),
    ),
    (
        "classes",
        "65,536, what a model file may declare: a label past it is refused at its line",
        ("test_a_label_past_the_classes_a_model_may_hold_is_refused_at_its_line",),
    ),
    (
        "a line of input (`train`, `online-to-batch`, `predict`, `eval`, `calibrate`, `tune`, the Python API; "
        "files, pipes, FIFOs, devices)",
        "16 MiB (16,777,216 bytes, its newline not counted): past it the line is refused in one line naming it, "
        "after the lines before it, the rest of it never held (skipped to its newline with `--skip-bad-lines`)",
        (
            "test_a_line_without_end_is_refused_in_bounded_memory",
            "test_reader.py::test_a_line_past_the_bound_is_an_error_naming_it_read_in_bounded_memory",
            "test_reader.py::test_the_views_of_a_file_bound_their_lines_too",
        ),
    ),
    (
        "the Tighter Budget Perceptron's evaluation set",
        "grows with the examples seen (at most `--eval-size`), never "
        "allocated for `--eval-size` at once, in training or when a model file says so",
        ("test_the_evaluation_set_grows_with_the_stream_not_with_eval_size",),
    ),
]


def test_every_bound_names_tests_that_exist():
    here = globals()
    for _, _, tests in BOUNDS:
        for name in tests:
            if "::" in name:
                module, function = name.split("::")
                assert f"def {function}(" in (Path(__file__).parent / module).read_text()
            else:
                assert callable(here.get(name)), name


def render_table() -> str:
    rows = ["| resource | bound | tested by |", "|---|---|---|"]
    for resource, bound, tests in BOUNDS:
        rows.append(f"| {resource} | {bound} | {', '.join(f'`{t}`' for t in tests)} |")
    return "\n".join(rows)


def test_the_doc_lists_exactly_these_bounds():
    doctables.assert_fresh(DOC, BEGIN, END, render_table(), "tests.test_resource_bounds")


if __name__ == "__main__":
    doctables.rewrite(DOC, BEGIN, END, render_table())
