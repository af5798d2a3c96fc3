"""FOGD (issue #33): the random Fourier feature learner against its reference written from the JMLR 2016
paper (tests/reference.py, with the map's draw transcribed independently), and the properties of a model
that is a weight vector over a map: the map regenerated from the seed, memory by the features seen."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from budgetcli.learning import algorithms  # noqa: F401  (algorithms registers them)
from budgetcli.base import registry
from budgetcli.learning.algorithms.fourier import DIRECT_INDICES, DIRECT_PER_FEATURE, FourierMap, omega_rows
from budgetcli.base.core import Chunk
from budgetcli.numerics.kernels import Kernel
from budgetcli.numerics.trig import TRIG_LIMIT, TRIG_LIMIT_SINGLE, cos_sin, single_cos_sin

from . import reference
from .helpers import chunk_from_dense, random_stream
from .test_algorithms import run_stepwise


def rows(m: FourierMap, features) -> np.ndarray:
    """Ω's rows for these feature indices (made first: making them may replace m.omega)."""
    where = m.rows_of(np.asarray(features, np.int64))
    return m.omega[where]


@pytest.mark.parametrize("arithmetic", ["vectorised", "scalar", "single"])
@pytest.mark.parametrize("schedule", ["constant", "inverse-sqrt"])
@pytest.mark.parametrize("D, eta, gamma, seed", [(8, 0.5, 0.5, 0), (64, 2.0, 0.1, 7), (200, 0.05, 2.0, 3)])
def test_fogd_matches_the_paper_s_update(schedule, D, eta, gamma, seed, arithmetic):
    """Against the paper's update with numpy's float64 map, and for the single arithmetic also against
    the update with the float32 map written out in numpy (tests/reference.py), which its scores match to
    the last bits of a float64 sum."""
    X, y = random_stream(200, 5, seed=31)
    learner = registry.get("fogd")(
        Kernel("rbf", gamma),
        seed=seed,
        components=D,
        learning_rate=eta,
        rate_schedule=schedule,
        map_arithmetic=arithmetic,
    )
    kernel = reference.make_kernel("rbf", gamma)
    trace = reference.fogd(X, y, kernel, D, eta, seed, schedule)
    scores, mistakes, margins = run_stepwise(learner, X, y)
    assert mistakes == trace.mistakes and margins == trace.margin_updates
    assert any(margins)
    # float32 features are within about 1e-7 of float64 ones: a score within ‖w‖₁ times that
    tol = 1e-9 if arithmetic != "single" else 1e-6
    np.testing.assert_allclose(scores, trace.scores, rtol=tol, atol=tol)
    np.testing.assert_allclose(learner.feature_map_weights(), trace.alpha, rtol=tol, atol=1e-12 if tol < 1e-6 else tol)
    if arithmetic == "single":
        single = reference.fogd(X, y, kernel, D, eta, seed, schedule, arithmetic="single")
        assert mistakes == single.mistakes and margins == single.margin_updates
        np.testing.assert_allclose(scores, single.scores, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(learner.feature_map_weights(), single.alpha, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["fogd", "mc-fogd"])
@pytest.mark.parametrize("arithmetic", ["vectorised", "single"])
def test_unscaled_features_are_libokl_s_and_its_eta_is_ours_times_d(name, arithmetic):
    """--map-scale unscaled leaves out the D^(−1/2) (LIBOKL's and the JMLR authors' map): the paper's update
    on those features, and the same decisions as normalised features at D times the step (w is then √D
    times smaller, the scores the same up to rounding)."""
    X, y = random_stream(200, 5, seed=38)
    D, eta, gamma = 32, 0.01, 0.5
    labels = y if name == "fogd" else (y > 0).astype(np.int64) + (X[:, 0] > 0.5)
    made = {
        scale: registry.get(name)(
            Kernel("rbf", gamma),
            seed=2,
            components=D,
            learning_rate=eta if scale == "unscaled" else eta * D,
            map_arithmetic=arithmetic,
            map_scale=scale,
        )
        for scale in ("unscaled", "normalised")
    }
    runs = {}
    for scale, learner in made.items():  # scores before each round, and the counters after it
        steps = []
        for t in range(len(y)):
            chunk = chunk_from_dense(X[t : t + 1], labels[t : t + 1].astype(np.float64))
            before = learner.decision_function(chunk)[0]
            learner.learn(chunk, labels[t : t + 1])
            steps.append((before, learner.counters[1:3].copy()))
        runs[scale] = steps
    # the single map rounds each normalised feature to float32 (about 1e-7 of it), the unscaled one not
    tol = 1e-9 if arithmetic != "single" else 1e-6
    for (f_unscaled, counted), (f_normalised, counted_too) in zip(runs["unscaled"], runs["normalised"]):
        assert np.array_equal(counted, counted_too)
        np.testing.assert_allclose(f_unscaled, f_normalised, rtol=tol, atol=tol)
    assert runs["unscaled"][-1][1].all()  # mistakes and margin updates both happened
    if name == "fogd":
        single = "single" if arithmetic == "single" else "float64"
        trace = reference.fogd(
            X, y, reference.make_kernel("rbf", gamma), D, eta, 2, scale="unscaled", arithmetic=single
        )
        assert runs["unscaled"][-1][1].tolist() == [sum(trace.mistakes), sum(trace.margin_updates)]
        np.testing.assert_allclose([f for f, _ in runs["unscaled"]], trace.scores, rtol=1e-9, atol=1e-9)


def test_the_single_map_is_its_float32_method_bit_for_bit():
    """`--map-arithmetic single`'s features, compiled, are the float32 steps trig.py documents, written
    out in numpy (tests/reference.py) bit for bit; where some |θ| passes TRIG_LIMIT_SINGLE, the float64
    cos and sin of the float32 θ rounded to float32 (within one float32 rounding of numpy's)."""
    from budgetcli.learning.algorithms.fourier import NORMALISED, SINGLE, features

    rng = np.random.default_rng(39)
    D = 64
    omega = omega_rows(4, np.arange(1, 9), D, 0.8).astype(np.float32)
    no_omega = np.zeros((0, 0))
    for spread in (0.3, 3.0, 100.0, 3000.0):
        x = np.where(rng.random(8) < 0.6, rng.normal(0, spread, 8), 0.0)
        nz = np.flatnonzero(x)
        z = np.zeros(2 * D)
        single = (omega, x[nz].astype(np.float32), np.zeros(D, np.float32))
        assert features(no_omega, single, nz.astype(np.int64), x[nz], 0, len(nz), z, SINGLE, NORMALISED)
        expected = reference.single_fourier_features(x, omega, 1 / np.sqrt(D))
        theta = single[2]
        inside = np.abs(theta) <= TRIG_LIMIT_SINGLE
        if inside.all():
            np.testing.assert_array_equal(z, expected)
        else:
            exact = np.concatenate([np.cos(theta.astype(np.float64)), np.sin(theta.astype(np.float64))])
            rounded = (np.float32(1 / np.sqrt(D)) * exact.astype(np.float32)).astype(np.float64)
            both = np.concatenate([~inside, ~inside])
            assert np.abs(z[both] - rounded[both]).max() <= 2.0**-24 / np.sqrt(D)
            np.testing.assert_array_equal(z[~both], expected[~both])
    assert (np.abs(theta) > TRIG_LIMIT_SINGLE).any()  # the last spread tried the path beyond the limit


def test_the_map_approximates_the_gaussian_kernel():
    """z(x)ᵀz(x') → k(x, x') as D grows (Rahimi & Recht): the draw is N(0, 2γ), the scaling D^(−1/2)."""
    X, _ = random_stream(40, 6, seed=32)
    gamma = 0.3
    K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    for D, tol in ((100, 0.4), (20_000, 0.04)):
        m = FourierMap(5, D, gamma)
        theta = X @ rows(m, np.arange(1, 7))
        Z = np.hstack([np.cos(theta), np.sin(theta)]) / np.sqrt(D)
        assert np.abs(Z @ Z.T - K).max() < tol
        np.testing.assert_allclose(np.diag(Z @ Z.T), 1.0)


def test_the_map_is_the_seed_whatever_order_features_come_in():
    a, b = FourierMap(9, 32, 0.5), FourierMap(9, 32, 0.5)
    a.rows_of(np.array([5, 2, 2**31 - 1, 7]))
    b.rows_of(np.array([7]))
    b.rows_of(np.array([2**31 - 1, 2, 5]))
    for j in (2, 5, 7, 2**31 - 1):
        np.testing.assert_array_equal(rows(a, [j]), rows(b, [j]))
    other = FourierMap(10, 32, 0.5)  # another seed, another map
    assert not np.array_equal(rows(a, [2]), rows(other, [2]))


def test_small_and_hashed_indices_mixed_get_the_rows_of_their_features():
    """Chunks of small indices (looked up in the direct table), of middling and of hashed ones (searched
    in the sorted keys), in turns: every row is the draw of its feature, and the direct table stays within
    its bound."""
    m = FourierMap(3, 16, 0.5)
    rng = np.random.default_rng(5)
    for step in range(120):
        high = (300, 200_000, 2**31 - 1)[step % 3]
        idx = rng.integers(0, high, 40).astype(np.int32)
        np.testing.assert_array_equal(rows(m, idx), omega_rows(3, idx, 16, 0.5))
        assert len(m.direct) <= max(DIRECT_INDICES, DIRECT_PER_FEATURE * len(m.keys))
    assert len(m.direct) > 0 and len(m.keys) > 300


def test_memory_follows_the_features_seen_not_the_largest_index():
    """Hashed indices up to 2³¹ − 1: Ω holds one row per feature seen."""
    learner = registry.get("fogd")(Kernel("rbf", 0.5), components=50)
    rng = np.random.default_rng(33)
    rows = []
    for _ in range(300):
        idx = np.sort(rng.choice(2**31 - 1, size=4, replace=False)).astype(np.int32)
        rows.append((idx, rng.standard_normal(4)))
    indptr = np.cumsum([0] + [len(i) for i, _ in rows])
    chunk = Chunk(
        indptr,
        np.concatenate([i for i, _ in rows]),
        np.concatenate([v for _, v in rows]),
        np.where(rng.random(300) < 0.5, 1.0, -1.0),
        np.arange(1, 301),
    )
    learner.learn(chunk, chunk.labels)
    assert learner.map.omega.nbytes <= 2 * 1200 * 50 * 8  # ≤ 1,200 features seen, at most doubled
    assert learner.counter("examples") == 300


@pytest.mark.parametrize("arithmetic", ["single", "vectorised"])
@pytest.mark.parametrize("name", ["fogd", "mc-fogd"])
def test_prediction_neither_grows_the_map_nor_scores_otherwise_than_learning_would(name, arithmetic):
    """Features first met in prediction (new small indices, hashed ones up to 2³¹ − 1) get their rows of
    Ω for that chunk alone: the map keeps what learning made (memory bounded by the features learned,
    however long a stream is scored), and the scores are those of the map grown by them, bit for bit,
    and w·z(x) with z made in numpy from the same draws."""
    X, y = random_stream(200, 6, seed=36)
    labels = y if name == "fogd" else (y > 0).astype(np.int64) + (X[:, 0] > 0.5)  # classes 0, 1, 2
    learner = registry.get(name)(Kernel("rbf", 0.5), seed=5, components=16, map_arithmetic=arithmetic)
    learner.learn(chunk_from_dense(X, labels.astype(np.float64)), labels)
    keys, omega = learner.map.keys.copy(), learner.map.omega.copy()
    rng = np.random.default_rng(37)
    idx = [np.array([2, 9, 40]), np.array([1, 2**31 - 1]), np.array([3, 5]), np.array([7, 1_000_000, 2**30])]
    vals = [rng.standard_normal(len(i)) for i in idx]
    test = Chunk(
        np.cumsum([0] + [len(i) for i in idx]).astype(np.int64),
        np.concatenate(idx).astype(np.int32),
        np.concatenate(vals),
        np.ones(len(idx)),
        np.arange(1, len(idx) + 1),
    )
    scores = learner.decision_function(test)
    assert np.array_equal(learner.map.keys, keys) and np.array_equal(learner.map.omega, omega)
    assert np.array_equal(learner.decision_function(test), scores)  # and again, the same
    grown = copy.deepcopy(learner)
    grown.map.rows_of(test.indices)  # what prediction did before: keep the new features' rows
    assert len(grown.map.keys) > len(keys)
    assert np.array_equal(grown.decision_function(test), scores)
    D = 16
    w = learner.feature_map_weights().reshape(-1, 2 * D)
    for t, (i, v) in enumerate(zip(idx, vals)):
        drawn = omega_rows(5, i.astype(np.int64), D, 0.5)
        if arithmetic == "single":  # the float32 map written out in numpy: the same bits
            z = reference.single_fourier_features(v, drawn.astype(np.float32), 1 / np.sqrt(D))
        else:
            z = np.concatenate([np.cos(v @ drawn), np.sin(v @ drawn)]) / np.sqrt(D)
        np.testing.assert_allclose(scores[t], w @ z if name == "mc-fogd" else (w @ z)[0], rtol=1e-9, atol=1e-12)


def test_a_model_file_holds_the_weights_not_the_map(tmp_path):
    from budgetcli.learning.labels import BinaryLabels
    from budgetcli.model.model import Model

    X, y = random_stream(300, 5, seed=34)
    learner = registry.get("fogd")(Kernel("rbf", 0.5), seed=4, components=300)
    learner.learn(chunk_from_dense(X, y), y)
    path = tmp_path / "f.model"
    Model(learner, BinaryLabels()).save(path)
    assert path.stat().st_size < 2 * 600 * 8 * 2 + 4096  # w and its sums, not Ω (5 × 300 more numbers)
    loaded = Model.load(path).learner
    test = chunk_from_dense(*random_stream(50, 5, seed=35))
    np.testing.assert_array_equal(loaded.decision_function(test), learner.decision_function(test))
    assert loaded.hyper["map_arithmetic"] == "single"


@pytest.mark.parametrize("name", ["fogd", "mc-fogd"])
def test_a_file_written_before_the_vectorised_map_keeps_its_scalar_arithmetic(name):
    """tests/data/models/ holds fogd and mc-fogd files written before --map-arithmetic: they load as
    scalar (test_contract checks their scores bit for bit), and a resumed run goes on so."""
    from budgetcli.model.model import Model

    from .test_model_compat import GOLDEN

    learner = Model.load(GOLDEN / f"{name}.model").learner
    assert learner.hyper["map_arithmetic"] == "scalar" and learner.hyper["map_scale"] == "normalised"
    assert registry.get(name)(Kernel("rbf", 0.5)).hyper["map_arithmetic"] == "single"


@pytest.mark.parametrize("arithmetic", ["vectorised", "scalar", "single"])
def test_a_file_keeps_the_arithmetic_and_scale_it_names(tmp_path, arithmetic):
    """A model written with the vectorised map (the default before the single one) or any other goes on
    loading, scoring and resuming with it, bit for bit."""
    from budgetcli.learning.labels import BinaryLabels
    from budgetcli.model.model import Model

    X, y = random_stream(300, 5, seed=41)
    learner = registry.get("fogd")(Kernel("rbf", 0.5), seed=3, components=40, map_arithmetic=arithmetic)
    learner.learn(chunk_from_dense(X[:200], y[:200]), y[:200])
    Model(learner, BinaryLabels()).save(tmp_path / "f.model")
    loaded = Model.load(tmp_path / "f.model").learner
    assert loaded.hyper["map_arithmetic"] == arithmetic and loaded.hyper["map_scale"] == "normalised"
    rest = chunk_from_dense(X[200:], y[200:])
    np.testing.assert_array_equal(loaded.decision_function(rest), learner.decision_function(rest))
    loaded.learn(rest, y[200:])
    learner.learn(rest, y[200:])
    np.testing.assert_array_equal(loaded.feature_map_weights(), learner.feature_map_weights())


def test_other_kernels_are_refused():
    with pytest.raises(ValueError, match="Gaussian kernel"):
        registry.get("fogd")(Kernel("poly", 0.5))


@pytest.mark.parametrize("start", ["projected", "zero"])
@pytest.mark.parametrize(
    "kernel",
    [Kernel("rbf", 0.5), Kernel("linear", 1.0), Kernel("poly", 0.5, coef0=1.0, degree=2)],
    ids=lambda k: k.kind,
)
@pytest.mark.parametrize("budget, rank, eta, eta1", [(10, 3, 0.5, 0.5), (30, 30, 0.2, 1.0), (5, 1, 1.0, 0.1)])
def test_nogd_matches_the_paper_s_two_phases(start, kernel, budget, rank, eta, eta1):
    """NOGD kept as a kernel expansion over its landmarks (α = Mᵀw) against the paper's w written out; the
    linear kernel in 5 dimensions has a rank-deficient K̂ (the map keeps fewer than k components)."""
    X, y = random_stream(300, 5, seed=36)
    learner = registry.get("nogd")(
        kernel, budget=budget, nystrom_rank=rank, learning_rate=eta, linear_rate=eta1, nystrom_start=start
    )
    trace = reference.nogd(
        X,
        y,
        reference.make_kernel(kernel.kind, kernel.gamma, kernel.coef0, kernel.degree),
        budget,
        eta,
        eta1,
        rank,
        start,
    )
    scores, mistakes, margins = run_stepwise(learner, X, y)
    assert len(trace.support) == budget and learner.scalars[0] == 2.0  # the switch happened
    assert mistakes == trace.mistakes and margins == trace.margin_updates
    np.testing.assert_allclose(scores, trace.scores, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(learner.slot["alpha"][:budget], trace.alpha, rtol=1e-8, atol=1e-8)


def test_nogd_refuses_a_rank_above_its_budget_and_a_hostile_rank():
    with pytest.raises(ValueError, match="--rank must be at most"):
        registry.get("nogd")(Kernel("rbf", 0.5), budget=5, nystrom_rank=6)
    learner = registry.get("nogd")(Kernel("rbf", 0.5), budget=5, nystrom_rank=2)
    X, y = random_stream(100, 4, seed=37)
    learner.learn(chunk_from_dense(X, y), y)
    header, arrays = learner.state()
    arrays["scalars"][2] = 1e9  # the loop indexes M by it
    with pytest.raises(ValueError, match="rank"):
        type(learner).check_saved(header, arrays)


def test_sharded_fogd_mixes_the_plain_average_of_the_weights(tmp_path):
    """Two shards and one mix at the end: the last hypothesis is the shards' w weighted by their examples,
    and the averaged one the average over every example of both, (Σ_w T_w avg_w)/T; each shard's the serial
    run's over its own file (the map is the run's seed's on both)."""
    from click.testing import CliRunner

    from budgetcli.entry import main
    from budgetcli.model.model import Model

    def run(*args):
        r = CliRunner().invoke(main, [str(a) for a in args])
        assert r.exit_code == 0, r.output

    parts = []
    for w, n in enumerate((200, 300)):
        X, y = random_stream(n, 5, seed=40 + w)
        path = tmp_path / f"part-{w}.svm"
        path.write_text(
            "".join(
                f"{int(label):+d} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(x) if v) + "\n"
                for x, label in zip(X, y)
            )
        )
        parts.append(path)
    common = ["-a", "fogd", "-D", 30, "--gamma", 0.5, "--seed", 5, "-q"]
    for hypothesis in ("average", "last"):  # the file's weights: the averaged hypothesis', or the last one's
        run(
            "train",
            *common,
            "--hypothesis",
            hypothesis,
            *parts,
            "--sync-every",
            100_000,
            "-o",
            tmp_path / "mixed.model",
        )
        serial = []
        for w, path in enumerate(parts):
            run("train", *common, "--hypothesis", hypothesis, path, "-o", tmp_path / f"s{w}.model")
            serial.append(Model.load(tmp_path / f"s{w}.model").learner)
        mixed = Model.load(tmp_path / "mixed.model").learner
        counts = np.array([s.counter("examples") for s in serial], float)
        assert mixed.counter("examples") == counts.sum() == 500
        np.testing.assert_allclose(
            mixed.feature_map_weights(),
            sum(c * s.feature_map_weights() for c, s in zip(counts, serial)) / counts.sum(),
            rtol=1e-12,
            atol=1e-15,
        )


def test_sharded_mc_fogd_mixes_each_class_s_row_over_the_shards_that_met_it(tmp_path):
    """Two shards with different classes, met in different orders, one mix at the end: the mixed model's
    classes are shard 0's in its order, then shard 1's new ones; each class's row is the shards' rows for
    it weighted by their examples, a shard that never met the class counting a zero row (the serial run
    over each shard's file gives its rows)."""
    from click.testing import CliRunner

    from budgetcli.entry import main
    from budgetcli.model.model import Model

    def run(*args):
        r = CliRunner().invoke(main, [str(a) for a in args])
        assert r.exit_code == 0, r.output

    rng = np.random.default_rng(41)
    parts, order = [], []  # order: the classes as the shards meet them, shard after shard
    for w, (n, classes) in enumerate(((240, (7, 2, 5)), (160, (5, 9)))):
        X = rng.normal(size=(n, 4))
        y = np.array(classes)[np.argmax(X[:, : len(classes)], axis=1)]
        order += [float(c) for c in dict.fromkeys(y) if float(c) not in order]
        path = tmp_path / f"part-{w}.svm"
        path.write_text(
            "".join(f"{c} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(x)) + "\n" for x, c in zip(X, y))
        )
        parts.append(path)
    common = ["-a", "mc-fogd", "-D", 20, "--gamma", 0.5, "--seed", 3, "-q", "--hypothesis", "last"]
    run("train", *common, *parts, "--sync-every", 100_000, "-o", tmp_path / "mixed.model")
    serial = []
    for w, path in enumerate(parts):
        run("train", *common, path, "-o", tmp_path / f"s{w}.model")
        serial.append(Model.load(tmp_path / f"s{w}.model"))
    mixed = Model.load(tmp_path / "mixed.model")
    assert mixed.labels.values == order and sorted(order) == [2.0, 5.0, 7.0, 9.0]
    counts = np.array([s.learner.counter("examples") for s in serial], float)
    assert mixed.learner.counter("examples") == counts.sum() == 400
    expected = np.zeros((4, 40))
    for c, s in zip(counts, serial):
        for row, value in zip(s.learner.feature_map_weights(), s.labels.values):
            expected[mixed.labels.values.index(value)] += c / counts.sum() * row
    np.testing.assert_allclose(mixed.learner.feature_map_weights(), expected, rtol=1e-12, atol=1e-15)


def test_export_refuses_a_feature_map_model_in_one_line_and_info_names_the_map(tmp_path):
    from click.testing import CliRunner

    from budgetcli.entry import main

    X, y = random_stream(100, 4, seed=41)
    data = tmp_path / "d.svm"
    data.write_text(
        "".join(
            f"{int(t):+d} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(x) if v) + "\n"
            for x, t in zip(X, y)
        )
    )
    r = CliRunner().invoke(main, ["train", "-a", "fogd", "-D", "20", "-q", str(data), "-o", str(tmp_path / "f.model")])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["export", str(tmp_path / "f.model"), "-o", str(tmp_path / "f.libsvm")])
    assert r.exit_code != 0 and len(r.output.strip().splitlines()) == 1
    assert "weight vector over random Fourier features" in r.output and not (tmp_path / "f.libsvm").exists()
    r = CliRunner().invoke(main, ["info", str(tmp_path / "f.model")])
    assert "feature map     random Fourier features: 40 weights" in r.output


def test_a_value_too_large_stops_training_on_its_line_and_scores_nan_when_predicting():
    """Every θ = ω_iᵀx is checked in training (the run stops naming the example); prediction gives NaN,
    which the commands turn into one line about the data, never a traceback."""
    from budgetcli.learning.learner import Overflow

    learner = registry.get("fogd")(Kernel("rbf", 0.5), seed=8, components=4)
    X, y = random_stream(20, 3, seed=42)
    learner.learn(chunk_from_dense(X, y), y)
    bad = chunk_from_dense(np.array([[1.7e308, 0.0, 0.0]]), np.array([1.0]))
    assert np.isnan(learner.decision_function(bad)).all()
    before = learner.state()
    with pytest.raises(Overflow):
        learner.learn(bad, np.array([1.0]))
    assert learner.counter("examples") == before[0]["counters"]["examples"]


def test_nogd_does_not_switch_on_an_example_it_refuses():
    """An example whose ‖x‖² overflows at the switch round stops the run before the map is made: the
    learner stays in its first phase, as it was after the rounds before it."""
    from budgetcli.learning.learner import Overflow

    learner = registry.get("nogd")(Kernel("rbf", 0.5), budget=3)
    X, y = random_stream(40, 3, seed=43)
    for t in range(len(y)):
        learner.learn(chunk_from_dense(X[t : t + 1], y[t : t + 1]), y[t : t + 1])
        if len(learner.support) == 3:
            break
    with pytest.raises(Overflow):
        learner.learn(chunk_from_dense(np.array([[1e200, 1e200, 0.0]]), np.array([-1.0])), np.array([-1.0]))
    assert learner.scalars[0] == 0.0 and learner.scalars[2] == 0.0


def test_a_nystrom_file_with_scalars_of_another_length_is_refused():
    learner = registry.get("nogd")(Kernel("rbf", 0.5), budget=3)
    header, arrays = learner.state()
    arrays["scalars"] = np.zeros(0)
    with pytest.raises(ValueError, match="scalars"):
        type(learner).check_saved(header, arrays)


def test_the_map_s_cos_and_sin_are_within_2_to_the_minus_53_of_numpy_s():
    """trig.py's vectorised cos θ and sin θ against numpy's, over the reduced range (an absolute error of
    at most 2⁻⁵³: one unit in the last place of a value in [½, 1)) and past it (libm's own), and NaN for a
    θ that is not finite."""
    rng = np.random.default_rng(8)
    theta = np.concatenate(
        [rng.normal(0, s, 20_000) for s in (1e-6, 0.5, 3.0, 100.0, 3e4)]
        + [np.array([0.0, -0.0, np.pi / 4, -np.pi / 2, np.pi, TRIG_LIMIT, -TRIG_LIMIT, 2e5, 1e12])]
    )
    got = np.array([cos_sin(t) for t in theta])
    for column, exact in ((0, np.cos(theta)), (1, np.sin(theta))):
        err = np.abs(got[:, column] - exact)
        assert err.max() <= 2.0**-53, theta[err > 2.0**-53][:5]
    past = np.abs(theta) > TRIG_LIMIT
    np.testing.assert_array_equal(got[past, 0], np.cos(theta[past]))
    for bad in (np.inf, -np.inf, np.nan):
        assert np.isnan(cos_sin(bad)).all()


def test_the_single_map_s_cos_and_sin_are_within_1e_7_of_numpy_s():
    """trig.single_cos_sin against numpy's float64 cos and sin of the same float32 θ, over its range
    (|θ| ≤ TRIG_LIMIT_SINGLE): an absolute error below 1e-7 (about 1.5 units in the last place of a
    float32 near 1)."""
    rng = np.random.default_rng(40)
    theta = np.concatenate(
        [rng.normal(0, s, 4_000) for s in (1e-6, 0.5, 3.0, 100.0)]
        + [rng.uniform(-TRIG_LIMIT_SINGLE, TRIG_LIMIT_SINGLE, 4_000)]
        + [np.array([0.0, -0.0, np.pi / 4, -np.pi / 2, np.pi, TRIG_LIMIT_SINGLE, -TRIG_LIMIT_SINGLE])]
    ).astype(np.float32)
    got = np.array([single_cos_sin(t) for t in theta], np.float64)
    wide = theta.astype(np.float64)
    for column, exact in ((0, np.cos(wide)), (1, np.sin(wide))):
        err = np.abs(got[:, column] - exact)
        assert err.max() < 1e-7, (theta[np.argmax(err)], err.max())
