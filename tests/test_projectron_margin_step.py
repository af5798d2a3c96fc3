"""`projectron++ --margin-step projectron`: Projectron++ as the Ahpatron paper's code runs it (every
y f < 1 gets the Projectron's step), beside Fig. 5 (the default).  Its decisions against the reference
are in tests/test_contract.py and tests/test_algorithms.py; here, the rounds where the two rules part,
worked by hand, and the variant through model files and `--resume`."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.base import registry
from budgetcli.entry import main
from budgetcli.numerics.kernels import Kernel
from budgetcli.model.model import Model

from .helpers import assert_same_state, chunk_from_dense, random_stream
from .test_model_compat import GOLDEN

PP = registry.get("projectron++")
# x1 = (1, 0) then x2 = (1 + √ln 2, 0), both +1: with γ = 1, k(x1, x2) = exp(−ln 2) = 1/2, so round 2 is a
# margin error y f = 1/2 with the projection d* = 1/2 and ‖δ‖ = √(1 − 1/4) = √3/2 ≈ 0.866
TWO = np.array([[1.0, 0.0], [1.0 + math.sqrt(math.log(2.0)), 0.0]])
LABELS = np.array([1.0, 1.0])


def two_rounds(**params):
    learner = PP(Kernel("rbf", 1.0), **params)
    for t in range(2):
        learner.learn(chunk_from_dense(TWO[t : t + 1], LABELS[t : t + 1]), LABELS[t : t + 1])
    return learner


def test_a_margin_error_far_from_the_span_adds_under_the_variant_and_never_under_fig5():
    # ‖δ‖ = 0.866 > η = 0.5: the Projectron's step adds x2 with coefficient y = 1; Fig. 5 needs
    # ℓ = 1/2 ≥ ‖δ‖/η = 1.73 and does nothing
    variant = two_rounds(eta=0.5, margin_step="projectron")
    assert len(variant.support) == 2
    np.testing.assert_array_equal(variant.slot["alpha"][:2], [1.0, 1.0])
    assert (variant.counter("mistakes"), variant.counter("margin_updates"), variant.counter("projections")) == (1, 1, 0)
    fig5 = two_rounds(eta=0.5)
    assert len(fig5.support) == 1
    np.testing.assert_array_equal(fig5.slot["alpha"][:1], [1.0])
    assert (fig5.counter("mistakes"), fig5.counter("margin_updates")) == (1, 0)


def test_a_margin_error_near_the_span_takes_the_whole_projected_step():
    # ‖δ‖ = 0.866 ≤ η = 0.9: α1 += y d* = 1/2 (no τ); Fig. 5 needs ℓ = 1/2 ≥ 0.866/0.9 and does nothing
    variant = two_rounds(eta=0.9, margin_step="projectron")
    assert len(variant.support) == 1
    assert variant.slot["alpha"][0] == pytest.approx(1.5, abs=1e-15)
    assert (variant.counter("mistakes"), variant.counter("margin_updates"), variant.counter("projections")) == (1, 1, 0)
    fig5 = two_rounds(eta=0.9)
    np.testing.assert_array_equal(fig5.slot["alpha"][:1], [1.0])
    assert fig5.counter("margin_updates") == 0


def test_a_model_file_without_the_parameter_resumes_as_fig5():
    """The golden projectron++ model predates --margin-step: it loads as Fig. 5 and goes on learning
    exactly as Fig. 5, which on this stream differs from the variant."""
    model = Model.load(GOLDEN / "projectron++.model", resume=True)  # with the K⁻¹ it was saved with
    header, arrays = model.learner.state()
    assert model.learner.hyper["margin_step"] == "fig5"
    X, y = random_stream(200, 4, 21)
    more = chunk_from_dense(X, y)
    encoded = model.labels.encode(more, "more")
    states = {}
    for rule in ("fig5", "projectron"):
        learner = PP.from_state({**header, "params": {**header["params"], "margin_step": rule}}, arrays)
        learner.learn(more, encoded)
        states[rule] = learner.state()
    model.learner.learn(more, encoded)
    assert model.learner.state()[0] == states["fig5"][0]
    assert_same_state(model.learner.state()[1], states["fig5"][1])
    assert len(states["projectron"][1]["alpha"]) > len(states["fig5"][1]["alpha"])  # the stream tells them apart


def write(path, X, y):
    path.write_text(
        "".join(
            ("+1" if lab > 0 else "-1") + "".join(f" {j + 1}:{float(v)!r}" for j, v in enumerate(row)) + "\n"
            for row, lab in zip(X, y)
        )
    )


def test_the_variant_is_saved_and_resume_continues_it(tmp_path):
    X, y = random_stream(300, 4, 22, sparsity=0.0)
    write(tmp_path / "day1.txt", X[:150], y[:150])
    write(tmp_path / "day2.txt", X[150:], y[150:])
    write(tmp_path / "all.txt", X, y)
    common = ["-a", "projectron++", "--margin-step", "projectron", "--eta", "0.5", "--gamma", "0.5", "-q"]
    runner = CliRunner()
    days = ["-q", "--save-resume", "-o", tmp_path / "days.model"]  # bit for bit: the kept inverse, not a rebuilt one
    for args in (
        ["train", *common, tmp_path / "all.txt", "-o", tmp_path / "whole.model"],
        ["train", *common, tmp_path / "day1.txt", *days],
        ["train", "--resume", tmp_path / "days.model", tmp_path / "day2.txt", *days],
    ):
        r = runner.invoke(main, [str(a) for a in args])
        assert r.exit_code == 0, r.output
    whole, days = Model.load(tmp_path / "whole.model").learner, Model.load(tmp_path / "days.model").learner
    assert days.hyper == {"eta": 0.5, "margin_step": "projectron"}
    assert days.state()[0] == whole.state()[0]
    assert_same_state(days.state()[1], whole.state()[1])
    info = runner.invoke(main, ["info", "--json", str(tmp_path / "days.model")])
    assert json.loads(info.stdout)["params"]["margin_step"] == "projectron"
