"""sop, rbsop, lbsop, avp and ahpatron against tests/reference_second_order.py, and the identities
of their papers."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.base import registry
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.labels import BinaryLabels
from budgetcli.model.model import Model

from . import reference_second_order as ref
from .helpers import chunk_from_dense, random_stream
from .test_algorithms import KERNELS, assert_matches_reference, ref_kernel, run_stepwise

POLICY = {"rbsop": "random", "lbsop": "oldest"}


def gram_of(learner):
    """The Gram matrix of the learner's support set, evaluated afresh (not the learner's own copy)."""
    return learner.kernel_matrix(*learner.support.to_csr())


# ---- SOP family -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize("a", [1.0, 0.3])
def test_sop_matches_reference(kernel, a):
    X, y = random_stream(150, 4, seed=int(a * 10))
    learner = registry.get("sop")(kernel, sop_a=a)
    trace = ref.sop(X, y, ref_kernel(kernel), a)
    assert_matches_reference(learner, trace, X, y)


@pytest.mark.parametrize("algorithm", ["rbsop", "lbsop"])
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize("budget,seed", [(1, 0), (6, 1), (20, 2)])
def test_budget_sop_matches_reference(algorithm, kernel, budget, seed):
    X, y = random_stream(160, 4, seed)
    learner = registry.get(algorithm)(kernel, seed=seed, budget=budget, sop_a=0.7)
    trace = ref.sop(X, y, ref_kernel(kernel), 0.7, budget=budget, policy=POLICY[algorithm], seed=seed)
    assert sum(trace.mistakes) > budget + 10  # evictions happened
    assert_matches_reference(learner, trace, X, y)


def test_score_has_the_sign_of_the_papers_margin_and_equals_it_up_to_a_over_s():
    """The derivation of the module docstring: [y;0]ᵀ(aI + G_t)⁻¹k_t = (a/s) g with
    s = a + k(x,x) − kᵀ(aI + K)⁻¹k, both sides computed directly by the reference."""
    X, y = random_stream(120, 4, seed=5)
    k, a = ref_kernel(Kernel("rbf", 0.5)), 0.8
    trace = ref.sop(X, y, k, a)
    checked = 0
    for t in range(1, len(y)):
        slots = [s for s in trace_support_before(trace, t)]
        if not slots:
            continue
        K = ref.gram(X, k, slots, slots)
        kt = ref.gram(X, k, slots, [t])[:, 0]
        s = a + k(X[t], X[t]) - kt @ np.linalg.solve(a * np.eye(len(slots)) + K, kt)
        assert trace.paper_margins[t] == pytest.approx(a / s * trace.scores[t], rel=1e-9, abs=1e-12)
        checked += 1
    assert checked > 100


def trace_support_before(trace, t):
    """SOP's support set before round t: the mistakes of rounds < t."""
    return [s for s in range(t) if trace.mistakes[s]]


@pytest.mark.parametrize("a", [1.0, 0.1])
def test_linear_kernel_sop_makes_the_primal_algorithms_decisions(a):
    """The SIAM paper's linear algorithm (x_t x_tᵀ in the correlation matrix) and our kernel form
    with the linear kernel: same mistakes, scores of the same sign."""
    X, y = random_stream(300, 5, seed=3, sparsity=0.0)
    primal = np.array(ref.sop_primal(X, y, a))
    scores, mistakes, _ = run_stepwise(registry.get("sop")(Kernel("linear"), sop_a=a), X, y)
    assert mistakes == list(y * primal <= 0)
    assert np.all(np.sign(scores[1:]) == np.sign(primal[1:]))
    assert sum(mistakes) > 20


@pytest.mark.parametrize("algorithm", ["rbsop", "lbsop"])
def test_budget_sop_with_budget_above_mistakes_equals_sop(algorithm):
    X, y = random_stream(300, 4, 3)
    k = Kernel("rbf", 0.5)
    s_b, m_b, _ = run_stepwise(registry.get(algorithm)(k, budget=300), X, y)
    s_p, m_p, _ = run_stepwise(registry.get("sop")(k), X, y)
    assert m_b == m_p
    np.testing.assert_array_equal(s_b, s_p)


@pytest.mark.parametrize("algorithm", ["rbsop", "lbsop"])
def test_inverse_after_many_evictions_matches_a_direct_inverse(algorithm):
    X, y = random_stream(3000, 6, seed=8, sparsity=0.0)
    a = 0.5
    learner = registry.get(algorithm)(Kernel("rbf", 0.3), seed=4, budget=40, sop_a=a)
    learner.learn(chunk_from_dense(X, y), y)
    assert learner.counter("mistakes") > 500  # hundreds of downdates and block updates
    n = len(learner.support)
    direct = np.linalg.inv(a * np.eye(n) + gram_of(learner))
    np.testing.assert_allclose(learner.slot["ainv"][:n, :n], direct, rtol=0, atol=1e-10 * np.abs(direct).max())


def test_bad_sop_a_is_refused():
    with pytest.raises(ValueError, match="sop-a"):
        registry.get("sop")(Kernel("rbf", 0.5), sop_a=0.0)


# ---- AVP and Ahpatron ------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize(
    "params",
    [
        {},  # Corollary 1: U = ∞, λ = 1
        {"radius": 2.0, "step": 0.7, "epsilon": 0.5},
        {"radius": 3.0, "step_schedule": "corollary2", "epsilon": 0.9},
    ],
    ids=["corollary1", "ball", "corollary2"],
)
def test_avp_matches_reference(kernel, params):
    X, y = random_stream(150, 4, seed=4)
    learner = registry.get("avp")(kernel, **params)
    trace = ref.aggressive(X, y, ref_kernel(kernel), **params)
    assert any(trace.margin_updates)  # the aggressive part was exercised
    assert_matches_reference(learner, trace, X, y)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize(
    "params",
    [
        {"budget": 10},  # the paper's defaults: U = √B/2, λ = U/√(4B), ε = 0.5, η = 5e-4, c_t = ‖f_t‖/U
        {"budget": 7, "epsilon": 0.8},  # odd B keeps ⌊B/2⌋
        {"budget": 16, "radius": 1.0, "step": 0.35, "ahpatron_c": 0.6, "ahpatron_eta": 0.01},  # Theorem 4's c
    ],
    ids=["defaults", "odd", "theorem4-c"],
)
def test_ahpatron_matches_reference(kernel, params):
    X, y = random_stream(200, 4, seed=6)
    learner = registry.get("ahpatron")(kernel, **params)
    h = learner.hyper
    trace = ref.aggressive(
        X,
        y,
        ref_kernel(kernel),
        h["radius"],
        h["step"],
        h["epsilon"],
        budget=h["budget"],
        eta=h["ahpatron_eta"],
        c=h["ahpatron_c"],
    )
    assert len(trace.halvings) >= 3
    assert_matches_reference(learner, trace, X, y)
    assert learner.counter("projections") == len(trace.halvings)


def test_ahpatron_defaults_are_the_papers_experiments():
    h = registry.get("ahpatron")(Kernel("rbf", 0.125), budget=150).hyper
    assert h["radius"] == pytest.approx(np.sqrt(150) / 2)
    assert h["step"] == pytest.approx(h["radius"] / np.sqrt(4 * 150))
    assert (h["epsilon"], h["ahpatron_eta"], h["ahpatron_c"]) == (0.5, 0.0005, None)


@pytest.mark.parametrize(
    "algorithm,params",
    [("ahpatron", {"budget": 12}), ("ahpatron", {"budget": 9, "ahpatron_c": 1.0}), ("avp", {"radius": 1.5})],
)
def test_support_never_exceeds_budget_halves_exactly_when_full_and_norm_stays_in_the_ball(algorithm, params):
    d = 4
    X, y = random_stream(400, d, seed=9)
    learner = registry.get(algorithm)(Kernel("rbf", 0.5), **params)
    U = learner.hyper["radius"]
    B = learner.hyper.get("budget")
    halvings = 0
    for t in range(len(y)):
        before = len(learner.support)
        updates = learner.counter("mistakes") + learner.counter("margin_updates")
        learner.learn(chunk_from_dense(X[t : t + 1], y[t : t + 1]), y[t : t + 1])
        updated = learner.counter("mistakes") + learner.counter("margin_updates") > updates
        after = len(learner.support)
        if not updated:
            assert after == before
        elif B is not None and before == B:
            assert after == B // 2 + 1
            halvings += 1
        else:
            assert after == before + 1
        if B is not None:
            assert after <= B
        n = len(learner.support)
        alpha = learner.slot["alpha"][:n]
        norm = np.sqrt(alpha @ gram_of(learner) @ alpha)
        assert norm <= U * (1 + 1e-9)
    assert learner.counter("mistakes") > 20
    if B is not None:
        assert halvings >= 5 and learner.counter("projections") == halvings


def test_ahpatron_refuses_a_budget_below_two_and_avp_corollary2_needs_a_radius():
    with pytest.raises(ValueError, match="at least 2"):
        registry.get("ahpatron")(Kernel("rbf", 0.5), budget=1)
    with pytest.raises(ValueError, match="finite"):
        registry.get("avp")(Kernel("rbf", 0.5), step_schedule="corollary2")
    with pytest.raises(ValueError, match="ahpatron-c"):
        registry.get("ahpatron")(Kernel("rbf", 0.5), ahpatron_c=1.5)


# ---- the averaged hypothesis -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "algorithm,params",
    [
        ("sop", {}),
        ("avp", {"radius": 2.0}),
        ("rbsop", {"budget": 8}),
        ("lbsop", {"budget": 8}),
        ("ahpatron", {"budget": 8}),
    ],
)
def test_averaged_hypothesis_equals_brute_force_mean(algorithm, params):
    """(1/T) Σ_t f_t against the running sums (with the evicted vectors kept for the evicting ones);
    a save and reload half way must not disturb them."""
    X, y = random_stream(200, 4, seed=8)
    Xt, yt = random_stream(40, 4, seed=9)
    test = chunk_from_dense(Xt, yt)
    cls = registry.get(algorithm)
    learner = cls(Kernel("rbf", 0.5), seed=3, **params)
    learner.keep_retired = cls.evicts
    total = np.zeros(40)
    for t in range(200):
        if t == 100 and not cls.evicts:
            learner = cls.from_state(*learner.state())
        learner.learn(chunk_from_dense(X[t : t + 1], y[t : t + 1]), y[t : t + 1])
        total += learner.decision_function(test)
    if cls.evicts:
        assert len(learner.retired) > 0
    averaged = Model(learner, BinaryLabels()).averaged()
    np.testing.assert_allclose(averaged.learner.decision_function(test), total / 200, rtol=1e-9, atol=1e-9)
    assert not np.allclose(learner.decision_function(test), total / 200)


@pytest.mark.parametrize(
    "args,message",
    [
        (["-a", "ahpatron", "-B", "1"], "at least 2"),
        (["-a", "avp", "--step-schedule", "corollary2"], "finite -U"),
        (["-a", "ahpatron", "--ahpatron-c", "0"], "ahpatron-c"),
        (["-a", "sop", "--sop-a", "-1"], "sop-a"),
    ],
)
def test_cli_refuses_bad_parameters_with_exit_2_and_writes_nothing(tmp_path, args, message):
    from .test_cli import run, write_stream

    data = tmp_path / "d.txt"
    write_stream(data, n=50)
    r = run("train", *args, data, "-o", tmp_path / "m.model")
    assert r.exit_code == 2 and message in r.output
    assert not (tmp_path / "m.model").exists()


def test_cli_ahpatron_model_records_the_derived_defaults(tmp_path):
    from .test_cli import run, write_stream

    data = tmp_path / "d.txt"
    write_stream(data, n=200)
    out = tmp_path / "m.model"
    assert run("train", "-a", "ahpatron", "-B", "16", "--sigma", "2", "-q", data, "-o", out).exit_code == 0
    h = Model.load(out).learner.hyper
    assert h["radius"] == 2.0 and h["step"] == pytest.approx(2.0 / 8.0)
