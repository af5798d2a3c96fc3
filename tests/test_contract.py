"""The learner contract, checked the same way for every registered algorithm, binary and multiclass
(as scikit-learn's check_estimator checks every estimator): decisions equal to the algorithm's
reference implementation round by round, chunk boundaries change nothing, a saved state loads to the
same learner and resumes bit for bit, a golden model of an earlier build loads and scores the same,
and bad parameters are refused naming their flag.  An algorithm without a reference entry or a
golden file fails here."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from budgetcli import algorithms, registry
from budgetcli.kernels import Kernel
from budgetcli.learner import KernelLearner
from budgetcli.model import Model
from budgetcli.multiclass import MulticlassLearner

from . import reference, reference_multiclass, reference_second_order
from .helpers import assert_same_state, chunk_from_dense, random_stream
from .test_model_compat import GOLDEN, SCORES, probe

ALGORITHMS = sorted(algorithms.load_all())
REFERENCES = reference.REFERENCES | reference_second_order.REFERENCES | reference_multiclass.REFERENCES
# (name, parameters, reference run) for every algorithm and variant with a reference entry
CASES = [
    (name, *case)
    for name, entry in sorted(REFERENCES.items())
    for case in (entry if isinstance(entry, list) else [entry])
]
CASE_IDS = [
    f"{name}{'-' + '-'.join(str(v) for v in params.values() if isinstance(v, str))}" for name, params, _ in CASES
]
KERNEL = Kernel("rbf", 0.5)
SEED = 3


def stream(cls, n: int, seed: int):
    """X and labels as the learner takes them: ±1 for binary learners, class indices 0..2 for multiclass
    ones (class 2 first seen mid-stream)."""
    X, y = random_stream(n, 4, seed)
    if not cls.multiclass:
        return X, y
    classes = np.argmax(X @ np.random.default_rng(seed).normal(size=(4, 3)), axis=1)
    classes[: n // 3][classes[: n // 3] == 2] = 1
    return X, classes.astype(np.int64)


def learner(name: str, params: dict):
    return registry.get(name)(KERNEL, seed=SEED, **params)


def learn(model, X, y, size: int):
    for a in range(0, len(y), size):
        model.learn(chunk_from_dense(X[a : a + size], y[a : a + size]), y[a : a + size])
    return model


def test_every_algorithm_has_a_reference():
    assert set(ALGORITHMS) <= set(REFERENCES), "add the missing ones to the REFERENCES of tests/reference*.py"


@pytest.mark.parametrize("name,params,run", CASES, ids=CASE_IDS)
def test_decisions_equal_the_reference_round_by_round(name, params, run):
    model = learner(name, params)
    X, y = stream(type(model), 200, seed=1)
    trace = run(X, y, reference.make_kernel("rbf", KERNEL.gamma), SEED)
    mistakes, margins = [], []
    for t in range(len(y)):
        before = model.counters.copy()
        learn(model, X[t : t + 1], y[t : t + 1], 1)
        mistakes.append(bool(model.counter("mistakes") - before[1]))
        margins.append(bool(model.counter("margin_updates") - before[2]))
    assert mistakes == [bool(m) for m in trace.mistakes]
    assert margins == [bool(m) for m in trace.margin_updates]
    assert 0 < sum(mistakes) < len(y)  # the stream exercised the rule


@pytest.mark.parametrize("name,params,run", CASES, ids=CASE_IDS)
def test_chunk_boundaries_change_nothing(name, params, run):
    """One chunk, chunks of 7 and one example at a time: the same state (growth of the arrays happens
    at chunk starts and mid-chunk; neither may change a result)."""
    cls = registry.get(name)
    X, y = stream(cls, 300, seed=2)
    states = [learn(learner(name, params), X, y, size).state() for size in (300, 7, 1)]
    for header, arrays in states[1:]:
        assert header == states[0][0]
        assert_same_state(states[0][1], arrays)


@pytest.mark.parametrize("name,params,run", CASES, ids=CASE_IDS)
def test_saved_state_loads_and_resumes_bit_for_bit(name, params, run):
    cls = registry.get(name)
    X, y = stream(cls, 300, seed=4)
    whole = learn(learner(name, params), X, y, 300)
    half = learn(learner(name, params), X[:150], y[:150], 150)
    header, arrays = half.state()
    loaded = cls.from_state(json.loads(json.dumps(header)), arrays)  # the header goes through JSON in a file
    test = chunk_from_dense(X[150:], y[150:])
    np.testing.assert_array_equal(loaded.decision_function(test), half.decision_function(test))
    learn(loaded, X[150:], y[150:], 150)
    h1, a1 = whole.state()
    h2, a2 = loaded.state()
    assert h1 == h2
    assert_same_state(a1, a2)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_a_golden_model_of_an_earlier_build_loads_and_scores_the_same(name):
    path = GOLDEN / f"{name}.model"
    assert path.exists(), f"no golden model for {name}: python -m tests.test_model_compat {name}"
    model = Model.load(path)
    expected = json.loads(SCORES.read_text())[path.name]["scores"]
    np.testing.assert_array_equal(model.learner.decision_function(probe()), expected)


def bad_value(p):
    """A value the parameter's declaration must refuse."""
    if p.choices:
        return "no-such-choice"
    return -(2**63) if p.type is int else math.nan


@pytest.mark.parametrize("name", ALGORITHMS)
def test_bad_parameters_are_refused_naming_their_flag(name):
    cls = registry.get(name)
    for p in cls.params:
        with pytest.raises(ValueError, match=p.flag):
            cls(KERNEL, **{p.name: bad_value(p)})
    with pytest.raises(ValueError, match=f"does not apply to {name}"):
        cls(KERNEL, no_such_parameter=1)


def test_one_declaration_per_parameter_name():
    """Two algorithms taking a parameter of one name take the same parameter (flag, type, check, help);
    only the default may differ."""
    for name, cls in registry.ALGORITHMS.items():
        for p in cls.params:
            assert registry.PARAMS[p.name].same_as(p), (name, p.name)
    flags = [f for p in registry.PARAMS.values() for f in p.flags]
    assert len(flags) == len(set(flags))


def test_the_registry_refuses_a_second_declaration_of_a_name_that_differs(monkeypatch):
    from budgetcli.learner import KernelLearner
    from budgetcli.params import BUDGET

    monkeypatch.setattr(registry, "ALGORITHMS", dict(registry.ALGORITHMS))  # registered only for this test
    other_help = type("OtherHelp", (KernelLearner,), {"name": "other-help", "params": (BUDGET.but(help="B"),)})
    with pytest.raises(RuntimeError, match="'budget' is declared differently"):
        registry.register(other_help)
    own_default = type("OwnDefault", (KernelLearner,), {"name": "own-default", "params": (BUDGET.but(default=5),)})
    registry.register(own_default)  # another default is the algorithm's own: allowed
    assert own_default(KERNEL).hyper == {"budget": 5}


@pytest.mark.parametrize("name", ALGORITHMS)
def test_every_loop_record_is_typed_by_numba_without_a_search(name):
    """The records a loop takes are registered with numba's typeof (`_jit.record`): an unregistered
    named tuple class is typed by walking every registered type with issubclass on its first call,
    2 to 50 ms per class and process (the JIT path: on the compiled-at-install path numba is not loaded)."""
    from numba.core.typing.typeof import typeof_impl

    from budgetcli import _jit

    _jit.compile_all()  # registers the records, as the JIT path's first compiled call does

    S, K, book, st, h = learner(name, {}).loop_args()
    for record in (S, K, book, book.log, st, h):
        assert type(record) in typeof_impl.registry, type(record).__name__


# ---- docs/CONTRACT.md keeps in step with the code ----------------------------------------------------

CONTRACT = Path(__file__).resolve().parents[1] / "docs" / "CONTRACT.md"


def _documented_hooks() -> set[str]:
    text = CONTRACT.read_text(encoding="utf-8")
    table = text[text.index("| attribute | meaning |") : text.index("Multiclass learners derive from")]
    return {name for row in table.splitlines()[2:] for name in re.findall(r"`(\w+)`", row.split(" | ")[0])}


def test_the_contract_lists_every_hook_an_algorithm_defines():
    """Every attribute of the base classes that an algorithm sets or overrides is in the table, and the
    table names nothing the base classes do not have."""
    bases = (KernelLearner, MulticlassLearner)
    used = {
        name
        for cls in algorithms.load_all().values()
        for k in cls.__mro__[: cls.__mro__.index(KernelLearner)]
        if k is not MulticlassLearner
        for name in vars(k)
        if not name.startswith("__") and any(hasattr(b, name) for b in bases)
    }
    documented = _documented_hooks()
    assert used <= documented, f"not in docs/CONTRACT.md: {sorted(used - documented)}"
    assert all(any(hasattr(b, name) for b in bases) for name in documented), sorted(
        n for n in documented if not any(hasattr(b, n) for b in bases)
    )


def test_the_contract_shows_the_perceptron_family_as_it_is():
    text = CONTRACT.read_text(encoding="utf-8")
    listing = text[text.index("```python\n") + len("```python\n") : text.index("```\n", text.index("```python\n"))]
    source = (Path(__file__).resolve().parents[1] / "budgetcli" / "algorithms" / "perceptron.py").read_text()
    assert listing == source[source.index("STOP = 3") :]
