"""VW's progress table (`train --progress`): rows at 1, 2, 4, ... examples, checked against the
learning curve of the same run, and where it is shown by default."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetcli.entry import main

from .test_cli import write_stream

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def rows_of(stderr: str) -> list[list[str]]:
    """The table's rows (after its two header lines), split into cells."""
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("mistakes")) + 2
    rows = []
    for line in lines[start:]:
        cells = line.split()
        if not cells or not cells[0][0].isdigit():
            break
        rows.append(cells)
    return rows


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "train.txt"
    write_stream(path, n=300)
    return path


def test_rows_at_doubling_counts_agree_with_the_curve(tmp_path, data):
    curve = tmp_path / "c.csv"
    r = run(
        "train",
        "-a",
        "rbp",
        "-B",
        "20",
        "--gamma",
        "0.5",
        "--progress",
        "--curve",
        curve,
        "--curve-every",
        "1",
        data,
        "-o",
        tmp_path / "m.model",
    )
    assert r.exit_code == 0, r.output
    assert "\r" not in r.stderr
    by_t = {int(row["t"]): row for row in csv.DictReader(line for line in open(curve) if not line.startswith("#"))}
    rows = rows_of(r.stderr)
    assert [int(row[2].replace(",", "")) for row in rows] == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    last_t = last_m = 0
    for rate, since, t, support, done, *eta in rows:
        t = int(t.replace(",", ""))
        m = int(by_t[t]["mistakes"])
        assert rate == f"{m / t:.6f}"
        assert since == f"{(m - last_m) / (t - last_t):.6f}"
        assert int(support) == int(by_t[t]["support_size"])
        assert done.endswith("%") and len(eta) == 1
        last_t, last_m = t, m


def test_the_rows_change_nothing_in_the_model(tmp_path, data):
    assert run("train", "-a", "projectron++", "--progress", data, "-o", tmp_path / "a.model").exit_code == 0
    assert run("train", "-a", "projectron++", "-q", data, "-o", tmp_path / "b.model").exit_code == 0
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()


def test_share_done_of_a_file_grows_to_at_most_all_of_it(tmp_path, data):
    r = run("train", "-a", "perceptron", "--progress", "--epochs", "2", data, "-o", tmp_path / "m.model")
    shares = [float(row[4].rstrip("%")) for row in rows_of(r.stderr)]
    assert shares == sorted(shares) and 0 < shares[-1] <= 100
    # 512 of 600 examples (two passes of 300) are behind the last row
    assert abs(shares[-1] - 100 * 512 / 600) < 1.0


def test_no_share_or_eta_for_standard_input(tmp_path, data):
    r = run("train", "-a", "perceptron", "--progress", "-", "-o", tmp_path / "m.model", input=data.read_bytes())
    assert r.exit_code == 0, r.output
    assert all(len(row) == 4 for row in rows_of(r.stderr))  # no done, no ETA


def test_a_resumed_run_counts_its_own_examples(tmp_path, data):
    model = tmp_path / "m.model"
    assert run("train", "-a", "perceptron", "-q", data, "-o", model).exit_code == 0
    r = run("train", "--resume", model, "--progress", data, "-o", model)
    assert r.exit_code == 0, r.output
    assert rows_of(r.stderr)[0][2] == "1"


def test_off_by_default_when_stderr_is_not_a_terminal_and_off_with_quiet(tmp_path, data):
    assert "mistakes  since" not in run("train", "-a", "perceptron", data, "-o", tmp_path / "m.model").stderr
    assert run("train", "-a", "perceptron", "-q", "--progress", data, "-o", tmp_path / "m.model").stderr == ""


@pytest.mark.parametrize("flag, shown", [(None, True), ("--no-progress", False)])
def test_on_by_default_on_a_terminal(tmp_path, data, flag, shown):
    controller, terminal = os.openpty()
    args = [
        sys.executable,
        "-m",
        "budgetcli",
        "train",
        "-a",
        "perceptron",
        str(data),
        "-o",
        str(tmp_path / "m.model"),
    ] + ([flag] if flag else [])
    p = subprocess.Popen(
        args,
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=terminal,
        env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), COLUMNS="100"),
    )
    os.close(terminal)
    seen = b""
    while True:
        try:
            chunk = os.read(controller, 1 << 16)
        except OSError:  # EIO: the terminal's other side has closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(controller)
    assert p.wait(timeout=300) == 0
    text = seen.decode("utf-8", "replace")
    assert ("mistakes  since" in text) == shown
    assert ("        256" in text) == shown
    assert "examples        300" in text  # the summary either way


@pytest.mark.parametrize("lines", [300, 3000])  # under and over the size the compiled parser starts at
def test_share_read_is_the_bytes_behind_each_chunk(tmp_path, lines):
    from budgetcli.io.libsvm import LibsvmReader

    path = tmp_path / "d.txt"
    write_stream(path, n=lines)
    raw = path.read_bytes()
    ends = [i + 1 for i, b in enumerate(raw) if b == ord("\n")]
    with LibsvmReader(path, block_lines=128) as reader:
        for chunk in reader:
            assert reader.share_read() == ends[reader.n_examples - 1] / len(raw)
    assert reader.n_examples == lines


def test_time_left_follows_the_support_s_growth():
    """An example costs ~|S| kernel evaluations: at half the input a budgeted learner (|S| constant) has
    as long again to go, a learner whose |S| grows in proportion to t three times as long (the work is
    ∝ t²); growth rates outside [0, 1] are clipped."""
    from budgetcli.run.progress import time_left

    assert time_left(10.0, 0.5, 0.0) == pytest.approx(10.0)
    assert time_left(10.0, 0.5, 1.0) == pytest.approx(30.0)
    assert time_left(10.0, 0.25, 1.0) == pytest.approx(150.0)
    assert time_left(10.0, 0.5, 3.0) == time_left(10.0, 0.5, 1.0)
    assert time_left(10.0, 0.5, -1.0) == time_left(10.0, 0.5, 0.0)
    assert time_left(10.0, 1.0, 1.0) == 0.0
