"""Every model that `train` writes is one that every command loads and predicts with (issue:
reliability III).

Settings that cannot give a finite model are refused before any data is read (exit 2); a run whose
numbers stop being finite stops with one line naming the example (or the lines of the block) and the
settings, and writes nothing (exit 1).  CASES is the one source of the table "Settings that cannot
give a finite model" in docs/RELIABILITY.md; `test_extreme_settings_give_a_refusal_or_a_finite_model`
is the property behind it, over random extreme settings of every algorithm and kernel.  After
changing CASES, rewrite the table with

    python -m tests.test_finite_models
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from budgetcli.learning import algorithms
from budgetcli.entry import main
from budgetcli.model.model import Model

from . import doctables
from .helpers import SAMPLE_DATA

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DOC = PROJECT_ROOT / "docs" / "RELIABILITY.md"
BEGIN, END = (
    "<!-- table generated from tests/test_finite_models.py: begin -->",
    "<!-- end of the finite-model table -->",
)
ALGORITHMS = algorithms.load_all()


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="budgetlearn")


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple  # the command's options; DATA and -o m.model follow
    data: str  # "a9a" (the first 1,100 lines of sample_data/a9a) or "huge" (one value of 1e308)
    exit: int
    message: str  # stderr after "budgetlearn: error: "; DATA is the data file's path


FIRST = "DATA:{}: training stopped: {} ({}); nothing written"
BLOCK = (
    "DATA:{}: training stopped: the model's {} stopped being finite numbers while it learned {} ({}): "
    "these settings overflow; nothing written"
)
SCORE = "the model's score of this example is not a finite number: its numbers overflowed with these settings"
RBF = "kernel rbf (γ=0.0081, σ=7.85674)"
CASES = [
    Case(
        "poly degree above 64",
        ("-a", "perceptron", "--kernel", "poly", "--degree", "65"),
        "a9a",
        2,
        "degree must be an integer in 1..64, got 65 (see 'budgetlearn train --help')",
    ),
    Case(
        "a NaN coef0",
        ("-a", "perceptron", "--kernel", "poly", "--coef0", "nan"),
        "a9a",
        2,
        "coef0 must be a finite number, got nan (see 'budgetlearn train --help')",
    ),
    Case(
        "an infinite coef0",
        ("-a", "perceptron", "--coef0", "inf"),
        "a9a",
        2,
        "coef0 must be a finite number, got inf (see 'budgetlearn train --help')",
    ),
    Case(
        "coef0^degree overflows",
        ("-a", "perceptron", "--kernel", "poly", "--degree", "64", "--coef0", "1e10"),
        "a9a",
        2,
        "coef0^degree = 1e+10^64 overflows a double, so the poly kernel of two orthogonal vectors is "
        "infinite: lower --coef0 or --degree (see 'budgetlearn train --help')",
    ),
    Case(
        "σ so small that γ overflows",
        ("-a", "perceptron", "--sigma", "1e-200"),
        "a9a",
        2,
        "sigma = 1e-200 gives γ = 1/(2σ²) = inf, not a positive finite number (see 'budgetlearn train --help')",
    ),
    Case(
        "an infinite parameter",
        ("-a", "pa-ii", "--cost", "nan"),
        "a9a",
        2,
        "pa-ii: --cost must be a number > 0 (inf allowed), got nan (see 'budgetlearn train --help')",
    ),
    Case(
        "Pegasos' step 1/(λt) squared overflows",
        ("-a", "pegasos", "--lambda", "1e-300", "--gamma", "0.0081"),
        "a9a",
        1,
        BLOCK.format(5, "scalars", "lines 5–8", f"pegasos --lambda 1e-300, {RBF}"),
    ),
    Case(
        "budgeted Pegasos, λ = 1e-10",
        ("-a", "bpegasos", "--lambda", "1e-10", "--gamma", "0.0081"),
        "a9a",
        1,
        BLOCK.format(
            513, "scalars", "lines 513–1024", f"bpegasos --lambda 1e-10 --budget 100 --maintenance merge-lookup, {RBF}"
        ),
    ),
    Case(
        "ALMA's C overflows its step",
        ("-a", "alma2", "--alma-c", "1e300", "--gamma", "0.0081"),
        "a9a",
        1,
        BLOCK.format(1, "scalars", "line 1", f"alma2 --alma-alpha 0 --alma-b 1 --alma-c 1e+300, {RBF}"),
    ),
    Case(
        "AVP's step overflows",
        ("-a", "avp", "--step", "1e300", "--gamma", "0.0081"),
        "a9a",
        1,
        BLOCK.format(
            1, "scalars", "line 1", f"avp --radius inf --step 1e+300 --step-schedule constant --epsilon 0.6, {RBF}"
        ),
    ),
    Case(
        "a feature value whose square overflows",
        ("-a", "perceptron", "--gamma", "0.0081"),
        "huge",
        1,
        FIRST.format(
            3,
            "the example's squared norm ‖x‖² is not a finite number: a feature value is too large (scale the features)",
            f"perceptron, {RBF}",
        ),
    ),
]


def write_data(directory: Path, kind: str) -> Path:
    lines = (SAMPLE_DATA / "a9a").read_text().splitlines(keepends=True)[:1100]
    if kind == "huge":
        lines[2] = "+1 3:1e308 7:1\n"
    path = directory / f"{kind}.txt"
    path.write_text("".join(lines))
    return path


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_case_behaves_as_the_table_says(tmp_path, case):
    data = write_data(tmp_path, case.data)
    target = tmp_path / "m.model"
    target.write_bytes(b"an old model")
    r = run("train", *case.args, data, "-o", target)
    assert r.exit_code == case.exit, r.output
    assert r.stderr == "budgetlearn: error: " + case.message.replace("DATA", str(data)) + "\n"
    assert target.read_bytes() == b"an old model"


# ---- the property: a one-line refusal, or a model every command loads and scores finitely ---------


def _magnitude(positive: bool = False):
    """Floats log-uniform over the double range (and the special values), as a hostile user types them."""
    exponent = st.floats(-308, 308)
    value = exponent.map(lambda e: 10.0**e)
    if not positive:
        value = st.tuples(value, st.booleans()).map(lambda p: -p[0] if p[1] else p[0])
    return st.one_of(value, st.sampled_from([0.0, math.inf, -math.inf, math.nan, 1e-320]))


@st.composite
def settings_of(draw):
    name = draw(st.sampled_from(sorted(ALGORITHMS)))
    cls = ALGORITHMS[name]
    args = ["-a", name]
    for p in cls.params:
        if not draw(st.booleans()):
            continue
        if p.choices:
            value = draw(st.sampled_from(p.choices))
        elif p.type is int:
            value = draw(st.one_of(st.integers(-3, 2000), st.sampled_from([10**9, 2**62])))
        else:
            value = draw(_magnitude())
        args += [p.flag, repr(value) if isinstance(value, float) else str(value)]
    kernel = draw(st.sampled_from(["rbf", "poly", "linear"]))
    args += ["--kernel", kernel]
    if kernel != "linear" and draw(st.booleans()):
        args += ["--gamma", repr(draw(_magnitude(positive=True)))]
    if kernel == "poly":
        args += ["--degree", str(draw(st.integers(1, 70))), "--coef0", repr(draw(_magnitude()))]
    return args


@pytest.fixture(scope="module")
def streams(tmp_path_factory):
    d = tmp_path_factory.mktemp("streams")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4)) * np.array([1, 10, 100, 1e-3])
    y = np.where(X[:, 0] + X[:, 1] / 10 > 0, 1, -1) + np.where(rng.random(60) < 0.2, 1, 0) * (X[:, 2] > 0)
    (d / "train.txt").write_text(
        "".join(
            f"{lab:+d} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(row)) + "\n"
            for row, lab in zip(X.tolist(), y.tolist())
        )
    )
    return d


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], derandomize=True
)
@given(args=settings_of())
def test_extreme_settings_give_a_refusal_or_a_finite_model(streams, args):
    out = streams / "m.model"
    out.unlink(missing_ok=True)
    r = run("train", "-q", *args, streams / "train.txt", "-o", out)
    if r.exit_code:
        assert r.exit_code in (1, 2), r.output
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("budgetlearn: error: "), r.stderr
        assert not out.exists()
        return
    model = Model.load(out)  # what predict, eval, info and export load
    r = run("predict", "--scores", out, streams / "train.txt")
    assert r.exit_code == 0, (args, r.output)
    scores = np.array([line.split()[1:] for line in r.stdout.splitlines() if not line.startswith("labels")], float)
    assert np.isfinite(scores).all()
    assert run("info", out).exit_code == 0
    assert model.learner.nonfinite() is None


def render_table() -> str:
    rows = ["| # | case | command | exit | message |", "|---:|---|---|---:|---|"]
    for i, c in enumerate(CASES, 1):
        data = "DATA (a9a's first 1,100 lines)" if c.data == "a9a" else "DATA (line 3: `+1 3:1e308 7:1`)"
        command = " ".join(("budgetlearn train",) + c.args + (data, "-o m.model"))
        message = ("budgetlearn: error: " + c.message).replace("|", "\\|")
        rows.append(f"| {i} | {c.name} | `{command}` | {c.exit} | `{message}` |")
    return "\n".join(rows)


def test_the_doc_lists_exactly_these_cases():
    doctables.assert_fresh(DOC, BEGIN, END, render_table(), "tests.test_finite_models")


if __name__ == "__main__":
    doctables.rewrite(DOC, BEGIN, END, render_table())
