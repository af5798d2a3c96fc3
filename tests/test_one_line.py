"""One line, never a traceback or a hang (issue: reliability III): hostile model fields, LIBSVM files
that are not quite models, plot options, a FIFO where a model is expected, seeds numpy refuses.

CASES is the one source of the table "One line, never a traceback or a hang" in docs/RELIABILITY.md;
each case runs in a temporary directory and must print exactly its line on stderr, exit as the table
says, and leave every file as it was.  After changing CASES, rewrite the table with

    python -m tests.test_one_line
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.base import modelfile
from budgetcli.entry import main
from budgetcli.model.model import Model

from . import doctables
from .test_cli import write_stream

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DOC = PROJECT_ROOT / "docs" / "RELIABILITY.md"
BEGIN, END = "<!-- table generated from tests/test_one_line.py: begin -->", "<!-- end of the one-line table -->"


@dataclass(frozen=True)
class Case:
    name: str
    command: str  # run in a directory holding d.txt, m.model, c.csv and the case's own files
    exit: int
    message: str  # after "budgetlearn: error: "
    makes: str = ""  # what the case's own file is: a key of MAKERS


def _edited_model(directory: Path, edit) -> None:
    """m.model with its header edited and the checksums made anew: what anybody can write."""
    header, arrays = modelfile.load(directory / "m.model")
    edit(header)
    modelfile.save(directory / "h.model", header, arrays)


LIBSVM = """svm_type c_svc
kernel_type rbf
gamma 0.5
nr_class 2
total_sv 1
rho 0
label {label}
nr_sv 1 0
SV
0.5 {sv}
"""

MAKERS = {
    "null labels": lambda d: _edited_model(
        d, lambda h: h.update(labels={"kind": "binary", "negative": None, "positive": None, "spellings": [[1, None]]})
    ),
    "newline spelling": lambda d: _edited_model(
        d,
        lambda h: h["labels"].update(
            spellings=[[h["labels"]["negative"], "-1\nforged"], [h["labels"]["positive"], "+1"]]
        ),
    ),
    "escape spelling": lambda d: _edited_model(
        d,
        lambda h: h["labels"].update(
            spellings=[[h["labels"]["negative"], "\x1b[31m-1"], [h["labels"]["positive"], "+1"]]
        ),
    ),
    "huge index": lambda d: (d / "h.libsvm").write_text(LIBSVM.format(label="1 -1", sv="99999999999:1")),
    "one label": lambda d: (d / "h.libsvm").write_text(LIBSVM.format(label="1", sv="1:1")),
    "nan label": lambda d: (d / "h.libsvm").write_text(LIBSVM.format(label="1 nan", sv="1:1")),
    "huge degree": lambda d: (d / "h.libsvm").write_text(
        LIBSVM.format(label="1 -1", sv="1:1").replace("kernel_type rbf", "kernel_type polynomial\ndegree 100000")
    ),
    "fifo": lambda d: os.mkfifo(d / "fifo"),
    "huge sv line": lambda d: (d / "h.libsvm").write_text(LIBSVM.format(label="1 -1", sv="1:1" + " " * (17 << 20))),
    "huge curve line": lambda d: (d / "h.csv").write_text(
        "t,mistakes,online_rate,support_size,seconds\n10,2,0.2,2,0.1\n" + "1," * (2 << 20) + "\n"
    ),
}

CASES = [
    Case(
        "a label map of nulls",
        "predict h.model d.txt",
        1,
        "h.model: invalid model: labels: the spelling of label 1: None is not a string",
        "null labels",
    ),
    Case(
        "a label spelling holding a newline",
        "predict h.model d.txt",
        1,
        "h.model: invalid model: labels: the spelling of label -1: '-1\\nforged' holds whitespace, a control or "
        "a non-ASCII character",
        "newline spelling",
    ),
    Case(
        "a label spelling holding an escape sequence",
        "info h.model",
        1,
        "h.model: invalid model: labels: the spelling of label -1: '\\x1b[31m-1' holds whitespace, a control or "
        "a non-ASCII character",
        "escape spelling",
    ),
    Case(
        "a LIBSVM model with index 99999999999",
        "import h.libsvm -o n.model",
        1,
        "h.libsvm:10: feature indices must be 0 to 2,147,483,647 and increasing",
        "huge index",
    ),
    Case(
        "a LIBSVM model with one label",
        "import h.libsvm -o n.model",
        1,
        "h.libsvm:9: 'label' must give two finite numbers (token '1')",
        "one label",
    ),
    Case(
        "a LIBSVM model with a NaN label",
        "import h.libsvm -o n.model",
        1,
        "h.libsvm:9: 'label' must give two finite numbers (token '1 nan')",
        "nan label",
    ),
    Case(
        "a LIBSVM model of degree 100000",
        "import h.libsvm -o n.model",
        1,
        "h.libsvm:10: bad header value (degree must be an integer in 1..64, got 100000)",
        "huge degree",
    ),
    Case("info on a FIFO", "info fifo", 1, "fifo: cannot open: a FIFO, not a regular file", "fifo"),
    Case(
        "predict with a FIFO as the model",
        "predict fifo d.txt",
        1,
        "fifo: cannot open: a FIFO, not a regular file",
        "fifo",
    ),
    Case(
        "train --resume from a FIFO",
        "train --resume fifo d.txt -o n.model",
        1,
        "fifo: cannot open: a FIFO, not a regular file",
        "fifo",
    ),
    Case("import from a FIFO", "import fifo -o n.model", 1, "fifo: cannot open: a FIFO, not a regular file", "fifo"),
    Case(
        "a LIBSVM model with a line of 17 MiB",
        "import h.libsvm -o n.model",
        1,
        "h.libsvm:10: the line is longer than 16,777,216 bytes, the most a line may hold",
        "huge sv line",
    ),
    Case(
        "plot of a curve with a line of 4 MiB (read up to 4,096 characters)",
        "plot h.csv -o p.png",
        1,
        "h.csv:3: expected 5 numbers, got '" + "1," * 40 + "' …",
        "huge curve line",
    ),
    Case(
        "plot of a 100,000-inch figure",
        "plot c.csv -o p.png --size 100000 100000",
        2,
        "Invalid value for '--size': 100000.0 is not in the range 1<=x<=50. (see 'budgetlearn plot --help')",
    ),
    Case(
        "plot of a title matplotlib cannot typeset",
        "plot c.csv -o p.png --title $\\frac{$",
        1,
        "matplotlib cannot typeset a --title or --label (…); $ starts its math mode: write \\$ for a dollar sign",
    ),
    Case(
        "plot of a model file",
        "plot m.model -o p.png",
        1,
        "m.model:1: not a budgetlearn curve (not text: a model file?)",
    ),
    Case(
        "a negative seed with --shuffle",
        "train -a perceptron --shuffle --seed -1 d.txt -o n.model",
        2,
        "Invalid value for '--seed': -1 is not in the range x>=0. (see 'budgetlearn train --help')",
    ),
    Case(
        "a run that overflows prints no numpy warning",
        "train -a perceptron --kernel poly --degree 40 --gamma 1e10 d.txt -o n.model",
        1,
        "d.txt:2: training stopped: the model's score of this example is not a finite number: its numbers "
        "overflowed with these settings (perceptron, kernel poly (γ=1e+10, coef0=0, degree=40)); nothing written",
    ),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("files")
    write_stream(d / "d.txt", n=60)
    r = CliRunner().invoke(
        main,
        [
            "train",
            "-a",
            "perceptron",
            "-q",
            "--curve",
            str(d / "c.csv"),
            "--curve-every",
            "20",
            str(d / "d.txt"),
            "-o",
            str(d / "m.model"),
        ],
    )
    assert r.exit_code == 0, r.output
    return d


def _snapshot(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_case_is_one_line(tmp_path, files, case):
    for name in ("d.txt", "m.model", "c.csv"):
        (tmp_path / name).write_bytes((files / name).read_bytes())
    if case.makes:
        MAKERS[case.makes](tmp_path)
    before = _snapshot(tmp_path)
    opened = []
    if case.makes == "fifo":  # a writer that comes late: the command must not wait for it
        timer = threading.Timer(20, lambda: opened.append(os.open(tmp_path / "fifo", os.O_WRONLY | os.O_NONBLOCK)))
        timer.start()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        args = case.command.split()
        if "--title" in args:  # the one argument with a space-free but shell-special value
            args[args.index("--title") + 1] = "$\\frac{$"
        r = CliRunner().invoke(main, args, prog_name="budgetlearn")
    finally:
        os.chdir(cwd)
        if case.makes == "fifo":
            timer.cancel()
    assert not opened, "the command waited on the FIFO"
    assert r.exit_code == case.exit, r.output
    expected = "budgetlearn: error: " + case.message
    if "(…)" in expected:  # matplotlib's own words are its own
        head, tail = expected.split("(…)")
        assert r.stderr.startswith(head) and r.stderr.endswith(tail + "\n") and r.stderr.count("\n") == 1
    else:
        assert r.stderr == expected + "\n"
    assert _snapshot(tmp_path) == before


def test_the_scikit_learn_wrapper_refuses_columns_past_the_index_range():
    """Column 2^31 made fit segfault; column 2^32 + 5 was read as column 5."""
    sklearn = pytest.importorskip("sklearn")  # noqa: F841
    import scipy.sparse as sp

    from budgetcli.sklearn import BudgetClassifier

    for column in (2**31, 2**32 + 5):
        X = sp.csr_matrix((np.ones(3), (np.arange(3), np.array([0, 1, column]))), shape=(3, column + 1))
        with pytest.raises(
            ValueError, match=f"^X has {column + 1:,} columns; budgetlearn takes at most 2,147,483,647 features"
        ):
            BudgetClassifier("rbp", budget=10).fit(X, [0, 1, 0])


def test_the_wrappers_name_the_row_whose_numbers_overflow():
    pytest.importorskip("sklearn")
    from budgetcli.sklearn import BudgetClassifier

    X = np.array([[1.0, 0.0], [0.0, 1.0], [1e308, 1.0], [0.5, 0.5]])
    # fit is train on the rows (the same pipeline): the row is named as the Python API names it, X:ROW (1-based)
    with pytest.raises(ValueError, match=r"^X:3: training stopped: the example's squared norm ‖x‖² is not a finite"):
        BudgetClassifier("perceptron").fit(X, [0, 1, 0, 1])


def test_a_model_saved_by_anybody_with_bad_spellings_never_prints_them(files, tmp_path):
    """Model.save refuses what the loader refuses: a spelling with a newline cannot be written either."""
    model = Model.load(files / "m.model")
    model.labels.spellings[model.labels.negative] = "-1\nforged"
    with pytest.raises(ValueError, match="would not load"):
        model.save(tmp_path / "x.model")
    assert not (tmp_path / "x.model").exists()


def render_table() -> str:
    rows = ["| # | case | command | exit | stderr |", "|---:|---|---|---:|---|"]
    for i, c in enumerate(CASES, 1):
        command = c.command.replace("$\\frac{$", "'$\\frac{$'")
        message = ("budgetlearn: error: " + c.message).replace("|", "\\|")
        rows.append(f"| {i} | {c.name} | `budgetlearn {command}` | {c.exit} | `{message}` |")
    return "\n".join(rows)


def test_the_doc_lists_exactly_these_cases():
    doctables.assert_fresh(DOC, BEGIN, END, render_table(), "tests.test_one_line")


if __name__ == "__main__":
    doctables.rewrite(DOC, BEGIN, END, render_table())
