"""No command writes over one of its own inputs, however the output names it (issue: reliability III).

CASES is the one source of the "Inputs and outputs" table of docs/RELIABILITY.md: each case runs in a
temporary directory, must end with the one line and the exit code the table gives, and must leave
every file of the directory byte for byte as it was (the inputs, and an output that is refused).
After changing CASES, rewrite the table with

    python -m tests.test_same_file
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetcli.entry import main

from . import doctables
from .test_cli import write_stream

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DOC = PROJECT_ROOT / "docs" / "RELIABILITY.md"
BEGIN, END = "<!-- table generated from tests/test_same_file.py: begin -->", "<!-- end of the same-file table -->"


@dataclass(frozen=True)
class Case:
    name: str
    command: str  # run in the case's directory; d.txt (data), t.txt (test data), m.model, m.libsvm, c.csv exist
    setup: str = ""  # a shell step before it (links)
    exit: int = 2
    message: str = ""  # the one line on stderr; "" when the command succeeds


SAME = "budgetlearn: error: {} are the same file: {}; nothing written"
CASES = [
    Case(
        "the output is the data",
        "train -a perceptron d.txt -o d.txt",
        message=SAME.format("d.txt and d.txt", "-o would write over DATA"),
    ),
    Case(
        "another spelling of the same path",
        "train -a perceptron d.txt -o ./sub/../d.txt",
        "mkdir sub",
        message=SAME.format("./sub/../d.txt and d.txt", "-o would write over DATA"),
    ),
    Case(
        "a hard link to the data",
        "train -a perceptron d.txt -o h.txt",
        "ln d.txt h.txt",
        message=SAME.format("h.txt and d.txt", "-o would write over DATA"),
    ),
    Case(
        "a symbolic link to the data",
        "train -a perceptron d.txt -o s.txt",
        "ln -s d.txt s.txt",
        message=SAME.format("s.txt and d.txt", "-o would write over DATA"),
    ),
    Case(
        "a checkpoint over the data",
        "train -a perceptron --checkpoint-every 10 d.txt -o d.txt",
        message=SAME.format("d.txt and d.txt", "-o would write over DATA"),
    ),
    Case(
        "the curve over the data",
        "train -a perceptron d.txt -o n.model --curve d.txt",
        message=SAME.format("d.txt and d.txt", "--curve would write over DATA"),
    ),
    Case(
        "the curve over the resumed model",
        "train --resume m.model d.txt -o n.model --curve m.model",
        message=SAME.format("m.model and m.model", "--curve would write over --resume"),
    ),
    Case(
        "the curve and the model are one file",
        "train -a perceptron d.txt -o new.model --curve new.model",
        message=SAME.format("new.model and new.model", "--curve would write over -o"),
    ),
    Case(
        "a shard as the output",
        "train -a rbp d.txt t.txt --backend serial -o t.txt",
        message=SAME.format("t.txt and t.txt", "-o would write over DATA"),
    ),
    Case(
        "online-to-batch over the resumed model",
        "online-to-batch --resume m.model d.txt -o m.model",
        message=SAME.format("m.model and m.model", "-o would write over --resume"),
    ),
    Case(
        "predictions over the data",
        "predict m.model d.txt -o d.txt",
        message=SAME.format("d.txt and d.txt", "-o would write over DATA"),
    ),
    Case(
        "predictions over the model",
        "predict m.model d.txt -o m.model",
        message=SAME.format("m.model and m.model", "-o would write over MODEL"),
    ),
    Case(
        "an export over its model",
        "export m.model -o m.model",
        message=SAME.format("m.model and m.model", "-o would write over MODEL"),
    ),
    Case(
        "an import over its LIBSVM model",
        "import m.libsvm -o m.libsvm",
        message=SAME.format("m.libsvm and m.libsvm", "-o would write over LIBSVM_MODEL"),
    ),
    Case(
        "tune's table over the data",
        "tune -a perceptron --permutations 0 d.txt --csv d.txt",
        message=SAME.format("d.txt and d.txt", "--csv would write over DATA"),
    ),
    Case(
        "tune's best model over the test file",
        "tune -a perceptron --permutations 0 d.txt --test t.txt --save-best t.txt",
        message=SAME.format("t.txt and t.txt", "--save-best would write over --test"),
    ),
    Case(
        "a plot over its curve",
        "plot c.csv -o c.csv",
        message=SAME.format("c.csv and c.csv", "-o would write over FILE.csv"),
    ),
    Case("train goes on from a model and writes it back (allowed)", "train --resume m.model d.txt -o m.model", exit=0),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("files")
    write_stream(d / "d.txt", n=120)
    write_stream(d / "t.txt", n=60, seed=1)
    for args in (
        [
            "train",
            "-a",
            "perceptron",
            "-q",
            "--curve",
            d / "c.csv",
            "--curve-every",
            30,
            d / "d.txt",
            "-o",
            d / "m.model",
        ],
        ["export", d / "m.model", "-o", d / "m.libsvm"],
    ):
        r = CliRunner().invoke(main, [str(a) for a in args])
        assert r.exit_code == 0, r.output
    return d


def _snapshot(directory: Path) -> dict:
    return {p.relative_to(directory): p.read_bytes() for p in directory.rglob("*") if p.is_file()}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_no_command_writes_over_its_input(tmp_path, files, case):
    for name in ("d.txt", "t.txt", "m.model", "m.libsvm", "c.csv"):
        (tmp_path / name).write_bytes((files / name).read_bytes())
    if case.setup:
        subprocess.run(case.setup, shell=True, cwd=tmp_path, check=True)
    before = _snapshot(tmp_path)
    cwd = os.getcwd()
    os.chdir(tmp_path)  # the cases name files as a user in that directory would
    try:
        r = CliRunner().invoke(main, case.command.split())
    finally:
        os.chdir(cwd)
    assert r.exit_code == case.exit, r.output
    if case.exit:
        assert r.stderr == case.message + "\n"
        assert _snapshot(tmp_path) == before  # nothing truncated, replaced or left beside
    else:
        assert "error" not in r.stderr


def test_standard_input_that_is_the_output_file(tmp_path, files):
    """`budgetlearn train - -o d.txt < d.txt`: the shell opened d.txt as standard input; it is refused."""
    data = tmp_path / "d.txt"
    data.write_bytes((files / "d.txt").read_bytes())
    with open(data, "rb") as stdin:
        p = subprocess.run(
            [sys.executable, "-m", "budgetcli", "train", "-a", "perceptron", "-", "-o", "d.txt"],
            stdin=stdin,
            capture_output=True,
            cwd=tmp_path,
            timeout=300,
            env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)),
        )
    assert p.returncode == 2
    assert p.stderr.decode() == SAME.format("d.txt and standard input", "-o would write over DATA") + "\n"
    assert data.read_bytes() == (files / "d.txt").read_bytes()


def test_a_failed_run_leaves_an_existing_curve_as_it_was(tmp_path, files):
    """The curve is written through a temporary file like every output: bad data on line 100 does not
    truncate last week's curve."""
    lines = (files / "d.txt").read_text().splitlines(keepends=True)
    lines[99] = "+1 1:x\n"
    (tmp_path / "bad.txt").write_text("".join(lines))
    curve = tmp_path / "c.csv"
    curve.write_bytes(b"last week's curve\n")
    r = CliRunner().invoke(
        main,
        [
            "train",
            "-a",
            "perceptron",
            "--curve",
            str(curve),
            "--curve-every",
            "10",
            str(tmp_path / "bad.txt"),
            "-o",
            str(tmp_path / "m.model"),
        ],
    )
    assert r.exit_code == 1
    assert r.stderr.startswith(f"budgetlearn: error: {tmp_path / 'bad.txt'}:100:")
    assert curve.read_bytes() == b"last week's curve\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "c.csv"]


def render_table() -> str:
    rows = ["| # | case | command | exit | stderr |", "|---:|---|---|---:|---|"]
    for i, c in enumerate(CASES, 1):
        command = (f"{c.setup}; " if c.setup else "") + f"budgetlearn {c.command}"
        message = f"`{c.message}`" if c.message else "(the model is continued and written back)"
        rows.append(f"| {i} | {c.name} | `{command}` | {c.exit} | {message} |")
    return "\n".join(rows)


def test_the_doc_lists_exactly_these_cases():
    doctables.assert_fresh(DOC, BEGIN, END, render_table(), "tests.test_same_file")


if __name__ == "__main__":
    doctables.rewrite(DOC, BEGIN, END, render_table())
