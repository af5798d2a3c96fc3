"""The multiclass learners against tests/reference_multiclass.py, and the claims of the multiclass
Pegasos paper (§4.1 optimal removal, B ≥ stream is PegasosM, merging degrades less than removal)."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.learning import algorithms  # noqa: F401  (algorithms registers them)
from budgetcli.base import registry
from budgetcli.io.libsvm import DataError
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.labels import BinaryLabels, MulticlassLabels, labels_from_dict

from . import reference_multiclass as ref
from .helpers import chunk_from_dense, random_stream
from .reference import make_kernel

KERNELS = [Kernel("rbf", 0.5), Kernel("poly", 0.3, 1.0, 2), Kernel("linear")]


def mc_stream(n, d, classes, seed, late=True):
    """Random points labelled by the nearest of `classes` random centres (plus noise); with `late`,
    the last class first appears in the second half of the stream."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((classes, d)) * 1.5
    X = rng.standard_normal((n, d))
    X[rng.random((n, d)) < 0.2] = 0.0
    X[~X.any(axis=1), 0] = 1.0
    y = np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(-1) + 0.5 * rng.standard_normal((n, classes)), axis=1)
    if late:
        first_half = y[: n // 2] == classes - 1
        y[: n // 2][first_half] = 0
    return X, y.astype(np.int64)


def dense_support(learner, d):
    indptr, idx, val = learner.support.to_csr()
    out = np.zeros((len(indptr) - 1, d))
    for i in range(len(indptr) - 1):
        out[i, idx[indptr[i] : indptr[i + 1]] - 1] = val[indptr[i] : indptr[i + 1]]  # index j: column j − 1
    return out


def run_stepwise(learner, X, y):
    """One example at a time: f over the classes known before it, mistake and margin update per round."""
    out_scores, mistakes, margins = [], [], []
    for t in range(len(y)):
        ch = chunk_from_dense(X[t : t + 1], y[t : t + 1].astype(float))
        out_scores.append(learner.decision_function(ch)[0])
        before = learner.counters.copy()
        learner.learn(ch, y[t : t + 1])
        mistakes.append(bool(learner.counter("mistakes") - before[1]))
        margins.append(bool(learner.counter("margin_updates") - before[2]))
    return out_scores, mistakes, margins


def assert_matches(learner, trace, X, y, atol=1e-8):
    got_scores, mistakes, margins = run_stepwise(learner, X, y)
    assert mistakes == trace.mistakes
    assert margins == trace.margin_updates
    for t, (got, want) in enumerate(zip(got_scores, trace.scores)):
        m = len(got)  # a class first seen at t is not yet known to the learner's scores
        np.testing.assert_allclose(got, want[:m], rtol=1e-8, atol=atol, err_msg=f"round {t}")
    assert int(learner.n_classes[0]) == trace.n_classes
    np.testing.assert_allclose(
        dense_support(learner, X.shape[1]),
        np.array(trace.support).reshape(-1, X.shape[1]),
        rtol=1e-8,
        atol=min(atol, 1e-10) if atol <= 1e-8 else atol,
    )
    np.testing.assert_allclose(learner.coefficients(), trace.coef, rtol=1e-8, atol=atol)


def rk(k: Kernel):
    return make_kernel(k.kind, k.gamma, k.coef0, k.degree)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize(
    "algorithm,variant,params",
    [("mc-perceptron", "perceptron", {}), ("mc-pa", "pa", {}), ("mrbp", "rbp", {"budget": 7})],
)
def test_max_score_learners_match_reference(kernel, algorithm, variant, params):
    X, y = mc_stream(120, 4, 4, seed=1)
    assert np.bincount(y).min() > 15 and y[:60].max() == 2  # class 3 first appears mid-stream
    learner = registry.get(algorithm)(kernel, seed=3, **params)
    trace = ref.max_score(X, y, rk(kernel), variant, params.get("budget", 0), seed=3)
    assert any(trace.mistakes[60:]) and sum(trace.mistakes) > 10
    assert_matches(learner, trace, X, y)
    if algorithm == "mrbp":
        assert len(learner.support) == 7


@pytest.mark.parametrize("kernel", KERNELS[:2], ids=lambda k: k.kind)
@pytest.mark.parametrize("maintenance", ["random", "smallest", "project", "merge", "merge-lookup"])
@pytest.mark.parametrize("classes", [3, 2])
def test_bpegasos_matches_reference(kernel, maintenance, classes):
    if maintenance.startswith("merge") and kernel.kind != "rbf":
        pytest.skip("merging is defined for the Gaussian kernel only")
    X, y = mc_stream(90 if classes == 3 else 150, 3, classes, seed=6)
    assert np.bincount(y).min() > 15
    lam = 0.01
    learner = registry.get("bpegasos")(kernel, seed=5, lambda_=lam, budget=6, maintenance=maintenance)
    trace = ref.pegasos(X, y, rk(kernel), lam, budget=6, maintenance=maintenance, seed=5)
    assert len(trace.support) == 6
    # Merged points are new vectors z = h x_m + (1 − h) x_n with h the argmax of eq. 21, which is flat
    # at its maximum: a rounding difference ε in the objective moves the argmax by ~√ε ≈ 1.5e−8, so
    # two correct implementations (lazy-scaled vs true coefficients) agree on h, z and α_z only to
    # that order.  Every decision (mistakes, margin errors, partner, support size) must still agree.
    assert_matches(learner, trace, X, y, atol=1e-7 if maintenance.startswith("merge") else 1e-8)
    if maintenance == "merge-lookup":  # two classes' rows are always collinear: h came from the table
        assert np.isfinite(learner._merge_table()).any() or classes == 3


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
def test_pegasos_matches_reference(kernel):
    X, y = mc_stream(80, 3, 3, seed=4)
    learner = registry.get("pegasos")(kernel, lambda_=0.05)
    assert_matches(learner, ref.pegasos(X, y, rk(kernel), 0.05), X, y)


def train_in_chunks(learner, X, y, size):
    for a in range(0, len(y), size):
        learner.learn(chunk_from_dense(X[a : a + size], y[a : a + size].astype(float)), y[a : a + size])
    return learner


@pytest.mark.parametrize("maintenance", ["random", "smallest", "project", "merge", "merge-lookup"])
def test_bpegasos_with_budget_beyond_the_stream_is_pegasos(maintenance):
    X, y = mc_stream(150, 4, 5, seed=6)
    k = Kernel("rbf", 0.3)
    big = train_in_chunks(registry.get("bpegasos")(k, lambda_=1e-3, budget=1000, maintenance=maintenance), X, y, 40)
    plain = train_in_chunks(registry.get("pegasos")(k, lambda_=1e-3), X, y, 40)
    assert len(plain.support) > 50
    np.testing.assert_array_equal(dense_support(big, 4), dense_support(plain, 4))
    np.testing.assert_allclose(big.coefficients(), plain.coefficients(), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(big.counters, plain.counters)


def rkhs_distance2(V1, A1, V2, A2, k):
    """‖Σ_j A1_j φ(V1_j) − Σ_j A2_j φ(V2_j)‖² summed over classes, from kernel evaluations."""
    V = list(V1) + list(V2)
    A = np.vstack([A1, -A2])
    K = np.array([[k(a, b) for b in V] for a in V])
    return float(np.sum(A * (K @ A)))


def state_over_budget(kernel, seed=8):
    """13 support vectors with unequal coefficients: bpegasos with projection (which spreads the
    removed SVs' weight over the others) at B = 13 after 150 examples."""
    X, y = mc_stream(150, 3, 4, seed=seed)
    learner = train_in_chunks(
        registry.get("bpegasos")(kernel, lambda_=1e-3, budget=13, maintenance="project"), X, y, 100
    )
    assert len(learner.support) == 13
    return learner


def one_maintenance(kernel, maintenance, learner):
    """(SVs, coefficients) before and after one step of the compiled maintenance, applied to the
    learner's 13 SVs as to a budget of 12."""
    from budgetcli.learning.algorithms import pegasos as P

    header, arrays = learner.state()
    header = dict(header, params=dict(learner.hyper, budget=12, maintenance=maintenance))
    b = registry.get("bpegasos").from_state(header, arrays)
    n, m = len(b.support), int(b.n_classes[0])
    before_V, before_A = dense_support(b, 3), b.coefficients().copy()
    S, K, book, st, h = b.loop_args()
    P.maintain(S, K, book, st, b.scale[0], n, m, h.maintenance, 0.0)
    return before_V, before_A, dense_support(b, 3), b.coefficients().copy()


@pytest.mark.parametrize("kernel", [Kernel("rbf", 0.5), Kernel("poly", 0.3, 1.0, 3)], ids=lambda k: k.kind)
def test_removing_the_smallest_degrades_w_least(kernel):
    """§4.1: removing p = argmin ‖α_p‖² k(x_p, x_p) degrades w no more than removing any other SV
    (the state comes from projections, so the coefficients differ; with poly k(x, x) differs too)."""
    learner = state_over_budget(kernel)
    k = rk(kernel)
    V0, A0, V1, A1 = one_maintenance(kernel, "smallest", learner)
    chosen = rkhs_distance2(V0, A0, V1, A1, k)
    others = []
    for j in range(len(V0)):
        keep = [i for i in range(len(V0)) if i != j]
        others.append(rkhs_distance2(V0, A0, V0[keep], A0[keep], k))
    assert chosen <= min(others) * (1 + 1e-9)
    assert max(others) > 2 * chosen  # the choice matters on this state


@pytest.mark.parametrize("seed", [8, 9, 10])
def test_merging_degrades_w_no_more_than_removal_and_projection_no_more_than_removal(seed):
    kernel = Kernel("rbf", 0.5)
    learner = state_over_budget(kernel, seed)
    k = rk(kernel)
    deg = {}
    for mode in ("smallest", "merge", "project"):
        V0, A0, V1, A1 = one_maintenance(kernel, mode, learner)
        assert len(V1) == 12
        deg[mode] = rkhs_distance2(V0, A0, V1, A1, k)
    assert deg["merge"] <= deg["smallest"] * (1 + 1e-9)
    assert deg["project"] <= deg["smallest"] * (1 + 1e-9)
    assert deg["merge"] < deg["smallest"]  # strictly: the partner carries part of the removed weight


def test_incremental_weight_norm_tracks_the_gram_matrix():
    """‖w‖², kept incrementally for line 8, equals Σ_i α^(i)ᵀ K α^(i) after many rounds of each mode."""
    X, y = mc_stream(300, 3, 4, seed=11)
    for mode in ("random", "smallest", "project", "merge", "merge-lookup"):
        learner = train_in_chunks(
            registry.get("bpegasos")(Kernel("rbf", 0.5), lambda_=1e-3, budget=15, maintenance=mode), X, y, 64
        )
        A = learner.coefficients()
        K = learner.kernel_matrix(*learner.support.to_csr())
        np.testing.assert_allclose(learner.scalars[0], np.sum(A * (K @ A)), rtol=1e-8, err_msg=mode)


@pytest.mark.parametrize("maintenance", ["merge", "merge-lookup"])
def test_merge_with_a_non_gaussian_kernel_is_refused(maintenance):
    with pytest.raises(ValueError, match=f"--maintenance {maintenance} needs the Gaussian"):
        registry.get("bpegasos")(Kernel("poly", 1.0, 1.0, 2), maintenance=maintenance)


def test_the_lookup_table_gives_the_exact_search_s_h_on_its_grid_and_nearly_its_maximum_between():
    """merge-lookup's h: on a grid point the exact search's own (the interpolation weights vanish), for
    either row the larger; between grid points, κ = 0 and 1 included (where the table holds eq. 21's
    limits), the objective within a relative 1e-4 of the exact search's maximum (2.3e-5 the worst of a
    million random points when this was written, at r ≈ 1 where the two maxima of eq. 21 meet; without
    the limits at κ = 0 and 1 the worst was 0.998)."""
    from budgetcli.learning.algorithms.pegasos import TABLE_STEPS, golden_h, lookup_h, merge_objective

    table = np.full((TABLE_STEPS + 1, TABLE_STEPS + 1), np.nan)
    for i, j in ((0, 25), (150, 300), (275, 375), (375, 50), (200, 200)):  # r and κ exact in binary
        r, k = -1.0 + 2.0 * i / TABLE_STEPS, j / TABLE_STEPS
        assert lookup_h(table, k, 1.0, r, r * r) == golden_h(k, 1.0, r, r * r)
        if abs(r) < 1.0:  # the partner's row the larger (b = 2, a = 2r): the other half of the segment
            assert lookup_h(table, k, 4.0 * r * r, 4.0 * r, 4.0) == 1.0 - golden_h(k, 1.0, r, r * r)
    rng = np.random.default_rng(3)
    worst = 0.0
    for r, k, a in zip(rng.uniform(-1, 1, 4000), rng.uniform(0, 1, 4000), rng.uniform(0.1, 3, 4000)):
        saa, sab, sbb = a * a, a * a * r, a * a * r * r
        best = merge_objective(k, saa, sab, sbb, golden_h(k, saa, sab, sbb))
        got = merge_objective(k, saa, sab, sbb, lookup_h(table, k, saa, sab, sbb))
        worst = max(worst, (best - got) / best)
    assert worst < 1e-4, worst


def test_unknown_maintenance_is_refused():
    with pytest.raises(ValueError, match="maintenance must be one of random, smallest, project, merge"):
        registry.get("bpegasos")(Kernel("rbf", 1.0), maintenance="oldest")


def test_multiclass_labels_grow_mid_stream_and_keep_spellings():
    labels = MulticlassLabels()
    X = np.ones((3, 1))
    first = chunk_from_dense(X, np.array([5.0, 2.0, 5.0]))
    first.label_spellings = {5.0: "05", 2.0: "2"}
    np.testing.assert_array_equal(labels.encode(first), [0, 1, 0])
    later = chunk_from_dense(X, np.array([26.0, 2.0, 5.0]))
    later.label_spellings = {26.0: "26", 2.0: "2.0", 5.0: "5"}
    np.testing.assert_array_equal(labels.encode(later), [2, 1, 0])
    known = chunk_from_dense(np.ones((5, 1)), np.array([26.0, 5.0, 5.0, 2.0, 26.0]))  # no new label
    known.label_spellings = {26.0: "26.00", 5.0: "5", 2.0: "2"}
    np.testing.assert_array_equal(labels.encode(known), [2, 0, 0, 1, 2])
    assert labels.names == ["05", "2", "26"]  # the first spelling wins
    again = labels_from_dict(labels.to_dict())
    assert again.decode(np.array([[0.0, 1.0, -1.0], [3.0, 3.0, 0.0], [0.0, 0.0, 0.1]])) == ["2", "05", "26"]


def test_binary_labels_name_the_multiclass_algorithms_on_a_third_label():
    ch = chunk_from_dense(np.ones((3, 1)), np.array([1.0, -1.0, 3.0]))
    with pytest.raises(DataError) as e:
        BinaryLabels().encode(ch, "f.txt")
    message = str(e.value)
    assert message.startswith("f.txt:3:")
    for name in ("bpegasos", "mc-pa", "mc-perceptron", "mc-projectron++", "mrbp", "pegasos"):
        assert name in message
    assert "projectron," not in message


def test_two_class_data_through_a_multiclass_learner_learns():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(np.int64)
    learner = train_in_chunks(
        registry.get("bpegasos")(Kernel("rbf", 1.0), lambda_=1e-3, budget=40, maintenance="merge"),
        X[:300],
        y[:300],
        100,
    )
    f = learner.decision_function(chunk_from_dense(X[300:], y[300:].astype(float)))
    assert f.shape == (100, 2)
    assert np.mean(np.argmax(f, axis=1) == y[300:]) > 0.85


def test_golden_section_finds_the_global_maximum_of_eq_21_on_the_segment():
    from budgetcli.learning.algorithms.pegasos import golden_h, merge_objective

    rng = np.random.default_rng(12)
    grid = np.linspace(0.0, 1.0, 20001)
    for _ in range(200):
        a, b = rng.standard_normal(4), rng.standard_normal(4) * rng.uniform(0.2, 3)
        kmn = rng.uniform(0.01, 0.99)
        saa, sab, sbb = a @ a, a @ b, b @ b
        h = golden_h(kmn, saa, sab, sbb)
        best = max(merge_objective(kmn, saa, sab, sbb, g) for g in grid)
        # h is the middle of a bracket of width 1e-8 around the argmax; at an end point maximum g has
        # a slope of order g, so g(h) may fall short by ~1e-8·g, never by the 1e-4 a wrong hump costs
        assert merge_objective(kmn, saa, sab, sbb, h) >= best - 1e-7 * max(best, 1.0)
        assert (h >= 0.5) == (saa >= sbb * (1 - 1e-9))


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize("eta", [0.0, 0.3, 1.0])
def test_multiclass_projectron_plus_plus_matches_reference(kernel, eta):
    X, y = mc_stream(120, 4, 4, seed=1)
    learner = registry.get("mc-projectron++")(kernel, eta=eta)
    trace = ref.mc_projectron_pp(X, y, rk(kernel), eta)
    assert_matches(learner, trace, X, y)
    if eta == 1.0 and kernel.kind == "rbf":  # projections and margin updates both happened
        assert learner.counter("projections") > 0 and learner.counter("margin_updates") > 0


def test_multiclass_projectron_keeps_one_gram_inverse_per_class():
    X, y = mc_stream(300, 4, 4, seed=1)
    learner = train_in_chunks(registry.get("mc-projectron++")(Kernel("rbf", 0.5), eta=0.3), X, y, 64)
    n, m = len(learner.support), int(learner.n_classes[0])
    owner = np.argmax(np.abs(learner.coefficients()), axis=1)
    assert np.count_nonzero(learner.coefficients()) == n  # every pair belongs to one class
    V = dense_support(learner, 4)
    for c in range(m):
        slots = learner.members[c, : learner.counts[c]]
        assert set(slots.tolist()) == set(np.flatnonzero(owner == c).tolist())
        K = np.array([[rk(Kernel("rbf", 0.5))(V[a], V[b]) for b in slots] for a in slots])
        np.testing.assert_allclose(learner.kinv[c, : len(slots), : len(slots)] @ K, np.eye(len(slots)), atol=1e-6)
    # per-class inverses hold Σ n_c² entries, a shared one would hold (Σ n_c)²
    assert sum(int(c) ** 2 for c in learner.counts[:m]) < n**2 / 2


@pytest.mark.parametrize("chunk", [7, 1000])
def test_multiclass_projectron_resume_and_chunks(chunk):
    X, y = mc_stream(200, 3, 4, seed=7)
    k = Kernel("rbf", 0.7)
    cls = registry.get("mc-projectron++")
    whole = train_in_chunks(cls(k, eta=0.4), X, y, 1000)
    half = train_in_chunks(cls(k, eta=0.4), X[:90], y[:90], chunk)
    resumed = train_in_chunks(cls.from_state(*half.state()), X[90:], y[90:], chunk)
    np.testing.assert_array_equal(dense_support(resumed, 3), dense_support(whole, 3))
    assert resumed.coefficients().tobytes() == whole.coefficients().tobytes()  # bit for bit, whatever the chunks
    np.testing.assert_array_equal(resumed.counters, whole.counters)


@pytest.mark.parametrize("generator,gamma_d,margin", [("checkerboard", 16.0, 0.05), ("waveform", 16.0, 0.0)])
def test_maintenance_ordering_on_the_synthetic_streams(generator, gamma_d, margin):
    """The paper's Table 1 ordering, merge and project above smallest and random, on small seeded
    versions of its synthetic sets (B = 40, 4,000 training examples, γ = 16/d from its grid)."""
    from budgetcli.run.synthetic import GENERATORS

    X, y = GENERATORS[generator](4000, seed=0)
    Xt, yt = GENERATORS[generator](2000, seed=1)
    labels = MulticlassLabels()
    train = chunk_from_dense(X, y)
    codes = labels.encode(train)
    acc = {}
    for mode in ("merge", "project", "smallest", "random"):
        learner = registry.get("bpegasos")(
            Kernel("rbf", gamma_d / X.shape[1]), lambda_=1e-4, budget=40, maintenance=mode
        )
        learner.learn(train, codes)
        pred = np.array(labels.classes)[np.argmax(learner.decision_function(chunk_from_dense(Xt, yt)), axis=1)]
        acc[mode] = np.mean(pred == yt)
    assert min(acc["merge"], acc["project"]) > max(acc["smallest"], acc["random"]) + margin, acc


def test_multiclass_learner_refuses_binary_sign_labels():
    ch = chunk_from_dense(np.ones((2, 1)), np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="class indices"):
        registry.get("mc-pa")(Kernel("rbf", 1.0)).learn(ch, np.array([1.0, -1.0]))


def test_mc_projectron_grows_its_pool_for_two_copies_of_an_example():
    """A mistake can store x_t for two classes: when the pool had room for one copy but not two, the
    loop used to return for more room and `learn` found nothing to grow, forever."""
    X, _ = random_stream(300, 6, seed=9)
    y = np.digitize(X[:, 0] + X[:, 1], [-0.7, 0.0, 0.7]).astype(np.int64)
    learner = train_in_chunks(registry.get("mc-projectron++")(Kernel("rbf", 0.3), seed=1), X, y, 50)
    assert learner.counter("examples") == 300
    assert len(learner.support) > 200  # the pool grew several times on the way


@pytest.mark.parametrize("start", ["projected", "zero"])
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.kind)
@pytest.mark.parametrize("budget, rank, eta, eta1", [(10, 3, 0.5, 0.5), (20, 20, 0.2, 1.0)])
def test_multiclass_nogd_matches_the_paper_s_two_phases(start, kernel, budget, rank, eta, eta1):
    """mc-nogd kept as an expansion over its landmarks against NyGD.m's W written out (classes joining
    mid-stream, the switch round predicted by the expansion)."""
    X, y = mc_stream(300, 4, 4, seed=2)
    learner = registry.get("mc-nogd")(
        kernel, budget=budget, nystrom_rank=rank, learning_rate=eta, linear_rate=eta1, nystrom_start=start
    )
    trace = ref.mc_nogd(X, y, rk(kernel), budget, eta, eta1, rank, start)
    assert len(trace.support) == budget
    assert_matches(learner, trace, X, y)
    assert learner.scalars[0] == 2.0  # the switch happened


@pytest.mark.parametrize("arithmetic", ["single", "vectorised"])
@pytest.mark.parametrize("D, eta, seed", [(8, 0.5, 0), (64, 2.0, 7)])
def test_multiclass_fogd_matches_the_paper_s_update(D, eta, seed, arithmetic):
    """mc-fogd's weight rows against FouGD.m's update written out, over the same map (classes joining
    mid-stream; the single arithmetic against the float32 map written out in numpy)."""
    X, y = mc_stream(300, 4, 4, seed=3)
    kernel = Kernel("rbf", 0.5)
    learner = registry.get("mc-fogd")(kernel, seed=seed, components=D, learning_rate=eta, map_arithmetic=arithmetic)
    trace = ref.mc_fogd(X, y, rk(kernel), D, eta, seed, "single" if arithmetic == "single" else "float64")
    scores, mistakes, margins = [], [], []
    for t in range(len(y)):
        ch = chunk_from_dense(X[t : t + 1], y[t : t + 1])
        before = learner.counters.copy()
        f = learner.decision_function(ch)[0]
        learner.learn(ch, y[t : t + 1])
        m = int(learner.n_classes[0])
        scores.append(np.pad(f, (0, m - len(f))))  # a class first seen here scores 0
        mistakes.append(bool(learner.counter("mistakes") - before[1]))
        margins.append(bool(learner.counter("margin_updates") - before[2]))
    assert mistakes == [bool(v) for v in trace.mistakes] and margins == [bool(v) for v in trace.margin_updates]
    for a, b in zip(scores, trace.scores):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(learner.feature_map_weights(), trace.coef, rtol=1e-9, atol=1e-12)
