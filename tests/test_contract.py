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
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from budgetcli.learning import algorithms
from budgetcli.run import pipeline
from budgetcli.base import registry
from budgetcli.base.core import KernelSpec
from budgetcli.io.libsvm import read_all
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.archive import KeepsEvicted
from budgetcli.learning.contract import Learner
from budgetcli.learning.featuremap import FeatureMapLearner
from budgetcli.learning.learner import KernelLearner
from budgetcli.model.model import Model
from budgetcli.learning.multiclass import MulticlassLearner
from budgetcli.model.spec import TrainSpec

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
    if "regression" in cls.tasks:  # real targets: a smooth function of x, and noise
        return X, np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * np.random.default_rng(seed).standard_normal(n)
    if not cls.multiclass:
        return X, y
    classes = np.argmax(X @ np.random.default_rng(seed).normal(size=(4, 3)), axis=1)
    classes[: n // 3][classes[: n // 3] == 2] = 1
    return X, classes.astype(np.int64)


def learner(name: str, params: dict):
    return registry.get(name)(KERNEL, seed=SEED, **params)


def learn(model, X, y, size: int, w=None):
    for a in range(0, len(y), size):
        weights = None if w is None else w[a : a + size]
        model.learn(chunk_from_dense(X[a : a + size], y[a : a + size]), y[a : a + size], weights)
    return model


# the algorithms that take example weights (contract.Learner.weighting), each of their reference cases
WEIGHTED = [case for case, i in zip(CASES, CASE_IDS) if registry.get(case[0]).weighting is not None]
WEIGHTED_IDS = [i for case, i in zip(CASES, CASE_IDS) if registry.get(case[0]).weighting is not None]


def weights(n: int, seed: int) -> np.ndarray:
    """Example weights of all sizes: below 1, 1, and above (a class weight's and a sample weight's)."""
    return np.random.default_rng(seed).choice([0.2, 0.5, 1.0, 2.0, 3.5], n)


def test_every_algorithm_has_a_reference():
    assert set(ALGORITHMS) <= set(REFERENCES), "add the missing ones to the REFERENCES of tests/reference*.py"


@pytest.mark.parametrize("name,params,run", CASES, ids=CASE_IDS)
def test_decisions_equal_the_reference_round_by_round(name, params, run):
    model = learner(name, params)
    X, y = stream(type(model), 200, seed=1)
    trace = run(X, y, reference.make_kernel("rbf", KERNEL.gamma), SEED)
    mistakes, margins, predictions = [], [], []
    for t in range(len(y)):
        before = model.counters.copy()
        predictions.append(model.decision_function(chunk_from_dense(X[t : t + 1], y[t : t + 1]))[0])
        learn(model, X[t : t + 1], y[t : t + 1], 1)
        mistakes.append(bool(model.counter("mistakes") - before[1]))
        margins.append(bool(model.counter("margin_updates") - before[2]))
    assert mistakes == [bool(m) for m in trace.mistakes]
    assert margins == [bool(m) for m in trace.margin_updates]
    if "classification" not in model.tasks:  # a regression's decisions are its predictions, a novelty's its scores
        np.testing.assert_allclose(predictions, trace.scores, rtol=1e-12, atol=1e-12)
        assert model.support_size() == len(trace.support) < len(y)  # the stream exercised the budget or the merge
        assert "novelty" not in model.tasks or 0 < sum(margins) < len(y)  # some rounds flagged, not all
        return
    assert 0 < sum(mistakes) < len(y)  # the stream exercised the rule


@pytest.mark.parametrize("name,params,run", WEIGHTED, ids=WEIGHTED_IDS)
def test_weighted_decisions_equal_the_reference_round_by_round(name, params, run):
    """An algorithm that takes weights (train -w, sample weights) makes its reference's weighted decisions
    (each module's docstring says how the weight enters), round by round and whatever the chunks, and
    the weights change its model; weights of 1 are the unweighted run, bit for bit."""
    cls = registry.get(name)
    X, y = stream(cls, 200, seed=1)
    w = weights(len(y), seed=5)
    trace = run(X, y, reference.make_kernel("rbf", KERNEL.gamma), SEED, w=w)
    model = learner(name, params)
    mistakes, margins, predictions = [], [], []
    for t in range(len(y)):
        before = model.counters.copy()
        predictions.append(model.decision_function(chunk_from_dense(X[t : t + 1], y[t : t + 1]))[0])
        learn(model, X[t : t + 1], y[t : t + 1], 1, w[t : t + 1])
        mistakes.append(bool(model.counter("mistakes") - before[1]))
        margins.append(bool(model.counter("margin_updates") - before[2]))
    if "classification" not in cls.tasks:
        np.testing.assert_allclose(predictions, trace.scores, rtol=1e-12, atol=1e-12)
    assert mistakes == [bool(m) for m in trace.mistakes]
    assert margins == [bool(m) for m in trace.margin_updates]
    whole = learn(learner(name, params), X, y, 200, w).state()
    assert_same_state(model.state()[1], whole[1])
    assert_same_state(learn(learner(name, params), X, y, 7, w).state()[1], whole[1])
    unweighted = learn(learner(name, params), X, y, 200).state()
    assert_same_state(learn(learner(name, params), X, y, 200, np.ones(len(y))).state()[1], unweighted[1])
    assert any(not np.array_equal(whole[1][k], unweighted[1][k]) for k in whole[1])  # the weights acted


def test_the_algorithms_without_weights_refuse_them_in_one_line():
    refusing = sorted(name for name in ALGORITHMS if registry.get(name).weighting is None)
    assert "pa" in refusing and "projectron++" not in refusing  # PA has no C to weigh
    X, y = stream(KernelLearner, 20, seed=1)
    for name in refusing:
        model = learner(name, {"budget": 8} if "budget" in {p.name for p in registry.get(name).params} else {})
        labels = y if not model.multiclass else (y > 0).astype(np.int64)
        with pytest.raises(ValueError, match=f"^{re.escape(name)} takes no example or class weights "):
            model.learn(chunk_from_dense(X, labels), labels, np.full(20, 2.0))
        assert model.counter("examples") == 0
        model.learn(chunk_from_dense(X, labels), labels, np.ones(20))  # weights of 1: the unweighted run
        if "classification" in model.tasks:  # a regression has no classes to weigh
            with pytest.raises(ValueError, match="takes no example or class weights"):
                TrainSpec(name, class_weight={1: 2.0})
    assert TrainSpec("pa", class_weight={1: 1.0}).class_weight == {}  # weight 1: none


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


# ---- resumed from model files: bit for bit the one run ----------------------------------------------

RESUME_N = 900  # examples: an evicting learner's running average compresses its archive (2·64) several times
# FB-KRLS mostly discards the newcomer on this smooth stream (203 of its 836 removals are of kept vectors)
# norma-epsilon's ν form adds a term on about a fraction ν (here 0.3) of the rounds
FEWER_COMPRESSIONS = {"fbkrls": 2, "norma-epsilon": 2}
PROBE = 60  # examples of another stream the models score


def libsvm_lines(cls, n: int, seed: int) -> list[str]:
    """A stream as a data file's lines, every value spelt to round-trip: binary, or 10 classes of which
    6 and up first come after a third of the stream (so that the class arrays grow past 8 mid-run, at
    other points in a resumed run than in one run)."""
    X, y = stream(cls, n, seed) if "regression" in cls.tasks else random_stream(n, 4, seed)
    if "regression" in cls.tasks:
        return [
            f"{float(y_)!r} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(x) if v) + "\n"
            for x, y_ in zip(X, y)
        ]
    if cls.multiclass:
        y = np.argmax(X @ np.random.default_rng(seed).normal(size=(4, 10)), axis=1)
        early = np.arange(n) < n // 3
        y[early & (y >= 6)] %= 6
    return [f"{y_:g} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(x) if v) + "\n" for x, y_ in zip(X, y)]


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines))
    return path


def run_in_days(spec, days: list, block_lines: list[int], model: Path, save_resume: bool):
    """A nightly job: day 0 trained, each later day resumed from the file the day before wrote (as
    `train --resume MODEL DAY -o MODEL`), each day cut in blocks of its own size.  Returns the last
    result and the models as each day's run loaded them."""
    resumed, loaded = None, []
    for day, block in zip(days, block_lines):
        result = pipeline.train(replace(spec, block_lines=block), day, resumed)
        result.model.save(model, resume=save_resume)
        resumed = Model.load(model, resume=True)
        loaded.append(resumed)
    return result, loaded


def cuts(n: int, parts: int) -> list[int]:
    """Where a stream of n examples is cut into `parts` days of unequal lengths."""
    return [0] + [round(n * k / parts) + 3 * k - parts for k in range(1, parts)] + [n]


@pytest.fixture
def no_fsync(monkeypatch):
    """Model files written without waiting for the disk (what they hold is the same; the test writes many)."""
    monkeypatch.setattr("budgetcli.base.atomic.os.fsync", lambda fd: None)


@pytest.fixture(scope="module")
def resume_streams(tmp_path_factory):
    d = tmp_path_factory.mktemp("resume")
    out = {}
    for kind, cls in (("binary", KernelLearner), ("multi", MulticlassLearner), ("regression", registry.get("klms"))):
        whole = write_lines(d / f"{kind}.txt", libsvm_lines(cls, RESUME_N, seed=8))
        out[kind] = (whole, read_all(whole), write_lines(d / f"{kind}-probe.txt", libsvm_lines(cls, PROBE, 9)))
    return out


def scores(path: Path, probe: Path) -> np.ndarray:
    """The scores a model file's reader (predict, eval) gives."""
    model = Model.load(path)
    return np.concatenate([f for _, f in pipeline.scores(model, probe)])


@pytest.mark.parametrize("hypothesis", ["online", "running-average"])
@pytest.mark.parametrize("name,params,run", CASES, ids=CASE_IDS)
def test_a_run_resumed_from_its_files_is_one_run_bit_for_bit(
    tmp_path, no_fsync, resume_streams, name, params, run, hypothesis
):
    """For every algorithm and each hypothesis a resumable file holds: the stream cut into 2, 3 and 7
    days, each day resumed from the --save-resume file the day before wrote and read in other block
    sizes, ends with the file of one run, byte for byte (and so its scores); a run's checkpoints change
    nothing in it, and a run resumed from a checkpoint with the rest of the stream ends with it too.  A
    compact file (no --save-resume) says whether a resume from it is exact; where it says so, the days
    from compact files end with one run's compact file byte for byte."""
    cls = registry.get(name)
    kind = "regression" if "regression" in cls.tasks else "multi" if cls.multiclass else "binary"
    whole, examples, probe = resume_streams[kind]  # the stream's file, and its examples read
    spec = TrainSpec(name, KernelSpec("rbf", 0.5), params, seed=SEED, hypothesis=hypothesis, task=cls.tasks[0])
    one, one_compact = tmp_path / "one.model", tmp_path / "one-compact.model"
    checkpoints = []

    def checkpoint(model):
        path = tmp_path / f"checkpoint{len(checkpoints)}.model"
        model.save(path, resume=True)
        checkpoints.append((model.learner.counter("examples"), path))

    result = pipeline.train(
        replace(spec, checkpoint_every=97, block_lines=64), whole, None, pipeline.Watch(on_checkpoint=checkpoint)
    )
    result.model.save(one, resume=True)
    result.model.save(one_compact)
    plain = pipeline.train(spec, examples).model
    plain.save(tmp_path / "plain.model", resume=True)
    assert (tmp_path / "plain.model").read_bytes() == one.read_bytes(), "the checkpoints changed the run"
    learner = result.model.learner
    if cls.evicts and hypothesis == "running-average":  # the archive was compressed, and is resume state
        assert learner.retired.compressions >= FEWER_COMPRESSIONS.get(name, 3) and len(learner.retired) >= 64
    for parts, blocks in ((2, [4096, 7]), (3, [13, 4096, 64]), (7, [5, 64, 4096, 1, 97, 13, 4096])):
        at = cuts(RESUME_N, parts)
        days = [examples.take(np.arange(at[k], at[k + 1])) for k in range(parts)]
        model = tmp_path / f"days{parts}.model"
        last, loaded = run_in_days(spec, days, blocks, model, save_resume=True)
        assert model.read_bytes() == one.read_bytes(), f"{parts} days"
        if cls.evicts and hypothesis == "running-average" and parts == 2:
            assert loaded[0].learner.retired.compressions >= 1  # the compressed archive went through a file
        last.model.save(tmp_path / "days-compact.model")
        assert (tmp_path / "days-compact.model").read_bytes() == one_compact.read_bytes(), f"{parts} days, compact"
        np.testing.assert_array_equal(scores(model, probe), scores(one, probe))
    # a run killed after a checkpoint, resumed from it with the rest of the stream
    done, checkpoint = checkpoints[len(checkpoints) // 2]
    rest = examples.take(np.arange(done, RESUME_N))
    pipeline.train(spec, rest, Model.load(checkpoint, resume=True)).model.save(checkpoint, resume=True)
    assert checkpoint.read_bytes() == one.read_bytes()
    # compact days: exact where the file says so
    at = cuts(RESUME_N, 3)
    days = [examples.take(np.arange(at[k], at[k + 1])) for k in range(3)]
    _, loaded = run_in_days(spec, days, [64] * 3, tmp_path / "compact.model", save_resume=False)
    said = [m.inexact_resume() for m in loaded[:-1]]
    if cls.evicts and hypothesis == "running-average":
        assert all("evicted vectors folded" in why for why in said)
    if all(why is None for why in said):
        assert (tmp_path / "compact.model").read_bytes() == one_compact.read_bytes()


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
    from budgetcli.learning.learner import KernelLearner
    from budgetcli.base.params import BUDGET

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

    from budgetcli.numerics import _jit

    _jit.compile_all()  # registers the records, as the JIT path's first compiled call does

    S, K, book, st, h = learner(name, {}).loop_args()
    for record in (S, K, book, book.log, st, h):
        assert type(record) in typeof_impl.registry, type(record).__name__


# ---- docs/CONTRACT.md keeps in step with the code ----------------------------------------------------

CONTRACT = Path(__file__).resolve().parents[1] / "docs" / "CONTRACT.md"


def _documented_hooks() -> set[str]:
    text = CONTRACT.read_text(encoding="utf-8")
    tables = text[text.index("| attribute | meaning |") : text.index("Multiclass support-set learners derive from")]
    return {name for row in tables.splitlines() for name in re.findall(r"`(\w+)`", row.split(" | ")[0])}


KINDS = (KernelLearner, MulticlassLearner, FeatureMapLearner)


def test_the_contract_lists_every_hook_an_algorithm_defines():
    """Every attribute of the contract and its kinds that an algorithm sets or overrides is in the tables,
    and the tables name nothing the contract and its kinds do not have."""
    bases = (Learner, KeepsEvicted, *KINDS)
    used = {
        name
        for cls in algorithms.load_all().values()
        for k in cls.__mro__[: min(cls.__mro__.index(kind) for kind in KINDS if kind in cls.__mro__)]
        for name in vars(k)
        if not name.startswith("__") and any(hasattr(b, name) for b in bases)
    }
    documented = _documented_hooks()
    assert used <= documented, f"not in docs/CONTRACT.md: {sorted(used - documented)}"
    assert all(any(hasattr(b, name) for b in bases) for name in documented), sorted(
        n for n in documented if not any(hasattr(b, n) for b in bases)
    )


def test_no_caller_asks_which_kind_of_learner_it_holds():
    """Outside the learners' own modules, nothing in the package branches on a learner's kind: a feature
    map's name, its weights, or the class of a learner (the kinds answer the questions: contract.py)."""
    own = {"contract.py", "featuremap.py", "learner.py", "multiclass.py", "archive.py", "mixing.py", "records.py"}
    package = Path(__file__).resolve().parents[1] / "budgetcli"
    asked = [
        f"{path.relative_to(package)}:{n}"
        for path in sorted(package.rglob("*.py"))
        if path.name not in own and path.parent.name != "algorithms"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\.feature_map\b|feature_map_weights|isinstance\([^)]*(KernelLearner|FeatureMapLearner)", line)
    ]
    assert not asked, asked


def test_the_contract_shows_the_perceptron_family_as_it_is():
    text = CONTRACT.read_text(encoding="utf-8")
    listing = text[text.index("```python\n") + len("```python\n") : text.index("```\n", text.index("```python\n"))]
    algorithms = Path(__file__).resolve().parents[1] / "budgetcli" / "learning" / "algorithms"
    source = (algorithms / "perceptron.py").read_text()
    assert listing == source[source.index("STOP = 3") :]
