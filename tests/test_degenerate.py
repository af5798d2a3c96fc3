"""Degenerate settings: refused when they provably learn nothing, warned about when the data decides.

CASES below is the one source of truth for the "Degenerate settings" table of docs/RELIABILITY.md:
each case is run as written (exit code, the exact message, nothing read or written when refused),
and `test_the_doc_lists_exactly_these_cases` checks that the page holds the table rendered from
CASES.  After changing CASES, rewrite the table with

    python -m tests.test_degenerate

The thresholds (1, √2, min(C, 1)) are derived by hand in the algorithms' module docstrings;
`test_the_refusal_threshold_is_exactly_where_learning_stops` runs the learners themselves on both
sides of each one.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from budgetcli.learning import algorithms
from budgetcli.run import pipeline
from budgetcli.base.core import KernelSpec
from budgetcli.model.spec import TrainSpec
from budgetcli.entry import main
from budgetcli.io.libsvm import LibsvmReader
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.labels import BinaryLabels, MulticlassLabels
from budgetcli.model.model import Model

from . import doctables
from .helpers import assert_same_state, chunk_from_dense, random_stream

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DOC = PROJECT_ROOT / "docs" / "RELIABILITY.md"
BEGIN, END = "<!-- table generated from tests/test_degenerate.py: begin -->", "<!-- end of degenerate table -->"
ALGORITHMS = algorithms.load_all()

# the data of the cases: 200 examples with 3 features drawn from [−0.5, 0.5], so every ‖x‖ < 1
DATA = {
    "small": "200 examples, 3 features in [−0.5, 0.5] (every ‖x‖ < 1)",
    "outlier": "the same, the first example also has feature 2147483647",
    "unscaled": "the same plus a feature 4 in the millions",
    "spread": "the same plus a feature 4 of 30 values 10 apart (0, 10, …, 290)",
    "missing": "a path that does not exist (nothing is read)",
}


def _examples(kind: str) -> list[str]:
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (200, 3))
    y = X[:, 0] + X[:, 1] > 0
    lines = []
    for i, (row, label) in enumerate(zip(X, y)):
        features = [f"{j + 1}:{float(v)!r}" for j, v in enumerate(row)]
        if kind == "unscaled":
            features.append(f"4:{float(rng.uniform(1e6, 3e6))!r}")
        if kind == "spread":
            features.append(f"4:{10 * int(rng.integers(30))}")
        if kind == "outlier" and i == 0:
            features.append("2147483647:1")
        lines.append(("+1 " if label else "-1 ") + " ".join(features))
    return lines


def write_data(directory: Path, kind: str) -> Path:
    path = directory / f"{kind}.txt"
    if kind != "missing":
        path.write_text("\n".join(_examples(kind)) + "\n")
    return path


ETA_RBF = "‖δ‖ = √k(x,x) = 1 ≤ η, so no support vector is ever added and the model learns nothing"
NOTHING_ADDED = "so no support vector is ever added and the model learns nothing"
NO_SV = "0 support vectors after 200 examples: the model learned nothing (it scores every example 0)"
ONE_SV = "1 support vector after 200 examples and M mistakes: the support set stopped growing at one"
CONSTANT = (
    "the kernel is numerically constant on 100 examples of the first block (max − min of k(x_i, x_j) ≤ "
    "1e-06 × max |k|): it cannot tell examples apart; check --gamma and the feature scaling"
)


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple  # the command line after `budgetlearn`, before DATA
    data: str  # a key of DATA
    exit: int
    messages: tuple  # exit 2: the usage error's message; exit 0: the warnings, in order (M: the run's mistakes)


SCALE_HINT = " (train --scale, or budgetlearn scale, scales them as svm-scale does)"


def majority(accuracy: str) -> str:
    """train's warning that the written model, on the 200 examples it kept, is no better than answering their
    majority (57% +1)."""
    return (
        f"the written model's accuracy on 200 examples kept from the training data, {accuracy}, is not above the "
        "57.00% of always answering their most frequent label +1: the model may be no better than a constant"
    )


def one_class(label: str) -> str:
    """train's warning that the written model predicts one label on the 200 examples it kept."""
    return (
        f"the model predicts {label} for all 200 examples it was checked on (kept from the training data), which "
        "hold several labels: it is no better than a constant there; try another --gamma, a larger budget, or "
        "another algorithm"
    )


CASES = [
    Case(
        "projectron, rbf, η ≥ 1",
        ("train", "-a", "projectron", "--eta", "1.5"),
        "missing",
        2,
        ("projectron: --eta must be < 1 with the rbf kernel, got 1.5: on an empty support set " + ETA_RBF,),
    ),
    Case(
        "projectron++, rbf, η = 1",
        ("train", "-a", "projectron++", "--eta", "1"),
        "missing",
        2,
        ("projectron++: --eta must be < 1 with the rbf kernel, got 1.0: on an empty support set " + ETA_RBF,),
    ),
    Case(
        "online-to-batch, the same",
        ("online-to-batch", "-a", "projectron", "--eta", "2"),
        "missing",
        2,
        ("projectron: --eta must be < 1 with the rbf kernel, got 2.0: on an empty support set " + ETA_RBF,),
    ),
    Case(
        "mc-projectron++, rbf, η ≥ √2",
        ("train", "-a", "mc-projectron++", "--eta", "1.5"),
        "missing",
        2,
        (
            "mc-projectron++: --eta must be < √2 = 1.4142135623730951 with the rbf kernel, got 1.5: on empty support "
            "sets ‖δ‖ = √(2k(x,x)) = √2 ≤ η, " + NOTHING_ADDED,
        ),
    ),
    Case(
        "projectron-alma2, η ≥ C (any kernel)",
        ("train", "-a", "projectron-alma2", "--eta", "0.5"),
        "missing",
        2,
        (
            "projectron-alma2: --eta must be < min(C, 1) = 0.41421356237309515 (C: --alma-c), got 0.5: on an empty "
            "support set the first update's ‖δ‖ = min(C, 1) ≤ η and later ones are smaller, " + NOTHING_ADDED,
        ),
    ),
    Case(
        "projectron-alma2, C > 1, η ≥ 1",
        ("train", "-a", "projectron-alma2", "--kernel", "linear", "--alma-c", "2", "--eta", "1"),
        "missing",
        2,
        (
            "projectron-alma2: --eta must be < min(C, 1) = 1.0 (C: --alma-c), got 1.0: on an empty support set the "
            "first update's ‖δ‖ = min(C, 1) ≤ η and later ones are smaller, " + NOTHING_ADDED,
        ),
    ),
    Case(
        "tune, a grid value",
        ("tune", "-a", "projectron", "--grid", "eta=0.5,1.5"),
        "missing",
        2,
        (
            "setting eta=1.5: projectron: --eta must be < 1 with the rbf kernel, got 1.5: on an empty support set "
            + ETA_RBF,
        ),
    ),
    Case(
        "projectron, linear kernel, η above every ‖x‖",
        ("train", "-a", "projectron", "--kernel", "linear", "--eta", "1"),
        "small",
        0,
        (NO_SV, majority("43.00%"), one_class("-1")),
    ),
    Case(
        "projectron-alma2, C/√2 < η < C",
        ("train", "-a", "projectron-alma2", "--eta", "0.4"),
        "small",
        0,
        (ONE_SV, majority("57.00%"), one_class("+1")),
    ),
    Case(
        "default γ from an outlying index",
        ("train", "-a", "perceptron"),
        "outlier",
        0,
        (
            "the default γ = 1/2147483647 = 4.66e-10 comes from feature index 2147483647, more than 10× the indices "
            "of 99% of the first block's values (≤ 3); give --gamma or --sigma",
            CONSTANT,
            majority("43.00%"),
            one_class("-1"),
        ),
    ),
    Case(
        "tiny --gamma",
        ("train", "-a", "perceptron", "--gamma", "1e-9"),
        "small",
        0,
        (CONSTANT, majority("57.00%"), one_class("+1")),
    ),
    Case(
        "unscaled feature, default γ",
        ("train", "-a", "perceptron"),
        "unscaled",
        0,
        (
            "the kernel is numerically diagonal on 100 examples of the first block (|k(x_i, x_j)| ≤ 1e-06 × "
            "√(k(x_i, x_i) k(x_j, x_j)) for all different x_i, x_j): each example looks unrelated to the others; "
            "check --gamma and the feature scaling" + SCALE_HINT,
        ),
    ),
    Case(
        "unscaled feature, most pairs unrelated",
        ("train", "-a", "perceptron"),
        "spread",
        0,
        (
            "the kernel is nearly diagonal on 100 examples of the first block: |k(x_i, x_j)| ≤ 1e-06 × "
            "√(k(x_i, x_i) k(x_j, x_j)) for 96.5% of the pairs of different x_i, x_j, so most examples look "
            "unrelated to the others; check --gamma and the feature scaling" + SCALE_HINT,
        ),
    ),
    Case("the same, scaled", ("train", "-a", "perceptron", "--scale"), "spread", 0, ()),
    Case(
        "the same, linear kernel",
        ("train", "-a", "perceptron", "--kernel", "linear"),
        "spread",
        0,
        (
            "the features are on different scales: on the first block feature 4 spans 290, 292× the median "
            "feature's 0.9932, so the kernel sees little but the widest features; scale them" + SCALE_HINT,
        ),
    ),
]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_case_behaves_as_the_table_says(tmp_path, case):
    data = write_data(tmp_path, case.data)
    target = tmp_path / "m.model"
    target.write_bytes(b"an old model")
    output = ("-o", target) if case.args[0] != "tune" else ()
    r = run(*case.args, "--json", data, *output)
    assert r.exit_code == case.exit, r.output
    if case.exit:  # a usage error in one line, before anything is read (DATA does not exist) or written
        (message,) = case.messages
        assert r.stderr == f"budgetlearn: error: {message} (see 'main {case.args[0]} --help')\n"
        assert r.stdout == ""
        assert target.read_bytes() == b"an old model"
        return
    summary = json.loads(r.stdout)
    expected = [m.replace(" M mistakes", f" {summary['mistakes']:,} mistakes") for m in case.messages]
    assert summary["warnings"] == expected
    # the summary on stderr says each warning once, on its own line
    assert [line for line in r.stderr.splitlines() if line.startswith("warning")] == [
        f"warning         {w}" for w in expected
    ]
    assert Model.load(target).learner.counter("examples") == 200  # a warning never stops the run


def test_a_clean_run_has_an_empty_warnings_list(tmp_path):
    r = run("train", "-a", "projectron", "--json", write_data(tmp_path, "small"), "-o", tmp_path / "m.model")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["warnings"] == []
    assert "warning" not in r.stderr
    # a budget of one is the user's choice, not a support set that stopped growing
    r = run("train", "-a", "rbp", "-B", "1", "--json", write_data(tmp_path, "small"), "-o", tmp_path / "m.model")
    summary = json.loads(r.stdout)
    assert summary["support_size"] == 1 and summary["mistakes"] > 1
    assert not any("support set stopped growing" in w for w in summary["warnings"])


def test_quiet_keeps_the_warnings_in_json_only(tmp_path):
    r = run("train", "-a", "perceptron", "-q", "--json", write_data(tmp_path, "unscaled"), "-o", tmp_path / "m.model")
    assert r.exit_code == 0 and r.stderr == ""
    warnings = json.loads(r.stdout)["warnings"]
    assert [w.split(" ")[:4] for w in warnings] == [["the", "kernel", "is", "numerically"]]


def _learn(name, kernel, params, X, y):
    """The learner itself (no refusal in its constructor), one pass over (X, y)."""
    cls = ALGORITHMS[name]
    learner = cls(kernel, **params)
    chunk = chunk_from_dense(X, y)
    learner.learn(chunk, (MulticlassLabels() if cls.multiclass else BinaryLabels()).encode(chunk, "test"))
    return learner


# algorithm, kernel, parameters besides η, the η from which on nothing is ever added (hand-derived)
THRESHOLDS = [
    ("projectron", Kernel("rbf", 0.5), {}, 1.0),
    ("projectron++", Kernel("rbf", 0.5), {}, 1.0),
    ("mc-projectron++", Kernel("rbf", 0.5), {}, math.sqrt(2)),
    ("projectron-alma2", Kernel("rbf", 0.5), {}, math.sqrt(2) - 1),
    ("projectron-alma2", Kernel("linear"), {"alma_c": 2.0}, 1.0),
    ("projectron-alma2", Kernel("poly", 0.5, 1.0, 3), {"alma_c": 0.3}, 0.3),
]


@pytest.mark.parametrize(
    "name, kernel, params, threshold", THRESHOLDS, ids=[f"{t[0]}-{t[1].kind}-{t[3]:.4g}" for t in THRESHOLDS]
)
def test_the_refusal_threshold_is_exactly_where_learning_stops(name, kernel, params, threshold):
    X, y = random_stream(150, 3, 7, sparsity=0.0)
    if ALGORITHMS[name].multiclass:
        y = np.where(X[:, 0] > 0.5, 3.0, y)  # three classes
    spec = KernelSpec(kernel.kind, kernel.gamma, None, kernel.degree, kernel.coef0)
    below = float(np.nextafter(threshold, 0.0))
    # at the threshold: refused, and indeed nothing is ever added, every round is a mistake
    with pytest.raises(ValueError, match="learns nothing"):
        TrainSpec(name, spec, params | {"eta": threshold})
    # a multiclass round is a mistake once a second class is known (before, it has no rival)
    one_class = int(np.argmax(y != y[0])) if ALGORITHMS[name].multiclass else 0
    stuck = _learn(name, kernel, params | {"eta": threshold}, X, y)
    assert len(stuck.support) == 0
    assert stuck.counter("mistakes") == stuck.counter("examples") - one_class
    # one ulp below: accepted, and the first mistake adds a support vector
    TrainSpec(name, spec, params | {"eta": below})
    learner = _learn(name, kernel, params | {"eta": below}, X[: one_class + 1], y[: one_class + 1])
    assert len(learner.support) >= 1


def test_mc_projectron_learns_with_eta_between_1_and_sqrt2():
    """Unlike the binary Projectron, η ≥ 1 is not degenerate here: the first update has two parts."""
    X, y = random_stream(150, 3, 7, sparsity=0.0)
    y = np.where(X[:, 0] > 0.5, 3.0, y)
    TrainSpec("mc-projectron++", KernelSpec(), {"eta": 1.2})
    assert len(_learn("mc-projectron++", Kernel("rbf", 0.5), {"eta": 1.2}, X, y).support) > 2


@pytest.mark.parametrize("name", ["projectron", "projectron++"])
def test_the_first_vector_follows_the_papers_rule_with_a_linear_kernel(name):
    """Fig. 2 with S empty: ‖δ‖ = ‖x‖; x is added only when ‖x‖ > η, whatever came before."""
    X = np.array([[0.5, 0.0], [0.0, 2.0], [0.3, 0.3]])
    y = np.array([1.0, -1.0, 1.0])
    learner = _learn(name, Kernel("linear"), {"eta": 1.0}, X[:1], y[:1])
    assert (len(learner.support), learner.counter("mistakes"), learner.counter("projections")) == (0, 1, 1)
    learner = _learn(name, Kernel("linear"), {"eta": 1.0}, X[:2], y[:2])  # ‖x₂‖ = 2 > η: added
    indptr, indices, values = learner.support.to_csr()
    assert (indices.tolist(), values.tolist(), learner.slot["alpha"][:1].tolist()) == ([2], [2.0], [-1.0])
    assert learner.counter("mistakes") == 2


def test_every_learner_with_an_eta_threshold_refuses_a_degenerate_one():
    """Algorithms added later with an η projection rule must declare their refusal too."""
    with_eta = {n for n, c in ALGORITHMS.items() if "eta" in {p.name for p in c.params}}
    assert with_eta == {"projectron", "projectron++", "mc-projectron++", "projectron-alma2"}
    for name in ALGORITHMS:
        TrainSpec(name, task=ALGORITHMS[name].tasks[0])  # the defaults are never refused
        if name in with_eta:
            with pytest.raises(ValueError, match="learns nothing"):
                TrainSpec(name, params={"eta": 1e6})


def test_a_saved_degenerate_model_still_loads_and_resumes_with_a_warning(tmp_path):
    """The refusal is for new models: a model made with such settings (by an older build) is resumed."""
    data = write_data(tmp_path, "small")
    with LibsvmReader(str(data)) as reader:
        chunk = next(iter(reader))
    labels = BinaryLabels()
    learner = ALGORITHMS["projectron"](Kernel("rbf", 0.5), eta=1.5)
    learner.learn(chunk, labels.encode(chunk, str(data)))
    Model(learner, labels).save(tmp_path / "old.model")
    r = run("train", "--resume", tmp_path / "old.model", "--json", data, "-o", tmp_path / "old.model")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["warnings"][0] == NO_SV.replace("200", "400")


@pytest.mark.parametrize("kind", ["outlier", "unscaled"])
def test_the_checks_change_no_learning_decision(tmp_path, kind):
    """A run that raises warnings learns exactly what the learner learns on the same data without them."""
    data = write_data(tmp_path, kind)
    result = pipeline.train(TrainSpec("projectron++", params={"eta": 0.3}), str(data))
    assert result.warnings
    with LibsvmReader(str(data)) as reader:
        chunk = next(iter(reader))
    learner = ALGORITHMS["projectron++"](Kernel("rbf", 1.0 / chunk.n_features), eta=0.3)
    learner.learn(chunk, BinaryLabels().encode(chunk, str(data)))
    assert_same_state(result.model.learner.state()[1], learner.state()[1])


def test_sklearn_refuses_the_same_settings():
    from budgetcli.sklearn import BudgetClassifier

    X, y = random_stream(40, 3, 1)
    for algorithm, params in (("projectron", {"eta": 1.5}), ("projectron-alma2", {"eta": 0.5})):
        for fit in (lambda c: c.fit(X, y), lambda c: c.partial_fit(X, y)):
            with pytest.raises(ValueError, match=f"^{algorithm}: --eta must be < .* learns nothing$"):
                fit(BudgetClassifier(algorithm, **params))
    # data-dependent with a linear kernel: accepted
    assert BudgetClassifier("projectron", eta=1.5, kernel="linear").fit(X, y).learner_.hyper["eta"] == 1.5


def _tune(tmp_path, *args):
    """(printed table, --json rows, --csv lines) of a tune run over the small data, tested on itself."""
    data = write_data(tmp_path, "small")
    r = run("tune", *args, "--permutations", 2, "--test", data, "--csv", tmp_path / "t.csv", data)
    assert r.exit_code == 0, r.output
    rj = run("tune", *args, "--permutations", 2, "--test", data, "--json", data)
    with open(tmp_path / "t.csv") as f:
        return r.stdout, json.loads(rj.stdout)["rows"], list(csv.DictReader(f))


@pytest.mark.parametrize("sort", ["support", "test-accuracy", "error"])
def test_tune_marks_a_setting_that_learned_nothing_and_ranks_it_last(tmp_path, sort):
    # η = 1 with the linear kernel adds nothing on this data (every ‖x‖ < 1); its 0 support vectors
    # would win --sort support, and predicting one class everywhere scores some test accuracy
    printed, rows, lines = _tune(
        tmp_path, "-a", "projectron", "--kernel", "linear", "--grid", "eta=1,0.3", "--sort", sort
    )
    assert [row["setting"]["eta"] for row in rows] == [0.3, 1.0]
    nothing = [NO_SV, majority("43.00%"), one_class("-1")]  # f = 0: −1 everywhere
    assert [(row["learned_nothing"], row["warnings"]) for row in rows] == [(False, []), (True, nothing)]
    assert [r["warnings"] for r in rows[1]["per_run"]] == [nothing, nothing]
    assert rows[0]["support_size_mean"] > 0 == rows[1]["support_size_mean"]
    assert [(x["setting"], x["learned_nothing"], json.loads(x["warnings"])) for x in lines] == [
        ("eta=0.3", "False", []),
        ("eta=1", "True", nothing),
    ]
    (marked,) = [line for line in printed.splitlines() if "eta=1 " in line]
    assert "nothing learned [1]" in marked
    assert printed.splitlines()[-4:] == [
        "nothing learned: a run ended with f = 0 (0 support vectors); such settings rank last",
        *(f"[{k}] {w}" for k, w in enumerate(nothing, 1)),
    ]


def test_tune_marks_warnings_without_reordering(tmp_path):
    printed, rows, _ = _tune(tmp_path, "-a", "perceptron", "--grid", "gamma=1e-9,1", "--sort", "error")
    (flagged,) = [row for row in rows if row["setting"]["gamma"] == 1e-9]
    flagged_warnings = [CONSTANT, majority("57.00%"), one_class("+1")]
    assert (flagged["learned_nothing"], flagged["warnings"]) == (False, flagged_warnings)
    errors = [row["online_mistake_rate_mean"] for row in rows]
    assert errors == sorted(errors)  # sorted by the metric alone: both settings learned something
    assert printed.splitlines()[-3:] == [f"[{k}] {w}" for k, w in enumerate(flagged_warnings, 1)]
    assert "nothing learned" not in printed


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_table() -> str:
    rows = ["| # | case | command | data | exit | message |", "|---:|---|---|---|---:|---|"]
    for i, c in enumerate(CASES, 1):
        command = " ".join(("budgetlearn",) + c.args + ("DATA",) + (("-o m.model",) if c.args[0] != "tune" else ()))
        if c.exit:
            message = f"`budgetlearn: error: {c.messages[0]} (see 'budgetlearn {c.args[0]} --help')`"
        else:
            message = "<br>".join(f"`{m}`" for m in c.messages)
        rows.append(f"| {i} | {_cell(c.name)} | `{_cell(command)}` | {DATA[c.data]} | {c.exit} | {_cell(message)} |")
    return "\n".join(rows)


def test_the_doc_lists_exactly_these_cases():
    doctables.assert_fresh(DOC, BEGIN, END, render_table(), "tests.test_degenerate")


if __name__ == "__main__":
    doctables.rewrite(DOC, BEGIN, END, render_table())
