"""Numerical robustness of every registered algorithm (algorithms added later are swept too).

Streams that break naive implementations — duplicates and near-duplicates (singular Gram matrices),
all-zero vectors, extreme kernel widths, η = 0, B = 1, a single class, 1e6-scale values — must never
put NaN or ±inf into a saved model (coefficients, K⁻¹, running sums, scalars) or into a score.
Where a learner keeps a Gram inverse, it must still be an inverse of its support set's Gram matrix.
"""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.learning import algorithms
from budgetcli.learning.featuremap import FeatureMapLearner
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.records import Overflow
from budgetcli.model.model import Model

from .helpers import chunk_from_dense, label_map, random_stream

ALGORITHMS = algorithms.load_all()


def _duplicates(rng):
    X, y = random_stream(20, 5, 1)
    X, y = np.repeat(X, 6, axis=0), np.repeat(y, 6)
    y[::7] *= -1  # the same point with both labels: a Perceptron keeps erring on it
    return X, y


def _near_duplicates(rng):
    X, y = _duplicates(rng)
    return X + 1e-9 * rng.standard_normal(X.shape) * (X != 0), y


def _all_zero_rows(rng):
    X, y = random_stream(120, 5, 2)
    X[::3] = 0.0
    return X, y


def _random(rng):
    return random_stream(120, 5, 3)


def _single_class(rng):
    X, _ = random_stream(120, 5, 4)
    return X, np.ones(len(X))


def _huge_values(rng):
    X, y = random_stream(120, 5, 5)
    return X * 1e6, y


# name -> (stream, kernels, parameter overrides, which algorithms take part)
CASES = {
    "duplicates": (_duplicates, ["rbf", "linear", "poly"], {}, None),
    "near-duplicates": (_near_duplicates, ["rbf", "linear", "poly"], {}, None),
    "all-zero vectors": (_all_zero_rows, ["rbf", "linear", "poly"], {}, None),
    "gamma 1e6": (_random, [("rbf", 1e6)], {}, None),
    "gamma 1e-9": (_random, [("rbf", 1e-9), ("poly", 1e-9)], {}, None),
    "eta 0": (_near_duplicates, ["rbf", "linear"], {"eta": 0.0}, "eta"),
    "B = 1": (_duplicates, ["rbf", "linear"], {"budget": 1}, "budget"),
    "single class": (_single_class, ["rbf", "linear"], {}, None),
    "1e6-scale values": (_huge_values, ["rbf", "linear", "poly"], {}, None),
}


def _kernel(spec) -> Kernel:
    kind, gamma = (spec, 0.2) if isinstance(spec, str) else spec
    return Kernel(kind, gamma, coef0=1.0 if kind == "poly" else 0.0, degree=3)


def _params():
    for case, (stream, kernels, overrides, needs) in CASES.items():
        for name, cls in sorted(ALGORITHMS.items()):
            if needs is not None and needs not in {p.name for p in cls.params}:
                continue
            for spec in kernels:
                if issubclass(cls, FeatureMapLearner) and _kernel(spec).kind != "rbf":
                    continue  # its map is the Gaussian kernel's; the others are refused (test_fourier.py)
                label = spec if isinstance(spec, str) else f"{spec[0]}-{spec[1]:g}"
                marks = ()
                if case == "1e6-scale values" and spec == "linear" and name in ("sop", "rbsop", "lbsop"):
                    # cond(aI + K) ~ 1e24: the incrementally kept (aI + K)⁻¹ stays finite but is a worse
                    # inverse than a direct one (errors ~50 vs ~0.3); known, not fixed (issue #9 note)
                    marks = pytest.mark.xfail(strict=True, reason="incremental (aI+K)⁻¹ at cond ~1e24")
                yield pytest.param(case, name, spec, id=f"{case}-{name}-{label}", marks=marks)


RIDGES = {"fbkrls": "fbkrls_lambda", "swkrls": "swkrls_c"}  # whose kept `kinv` is (K + ridge·I)⁻¹


@pytest.mark.parametrize("case, algorithm, kernel_spec", list(_params()))
def test_no_nan_or_inf_in_a_saved_model(tmp_path, case, algorithm, kernel_spec):
    stream, _, overrides, _ = CASES[case]
    X, y = stream(np.random.default_rng(0))
    chunk = chunk_from_dense(X, y)
    cls = ALGORITHMS[algorithm]
    params = dict(overrides)
    if "budget" in {p.name for p in cls.params}:
        params.setdefault("budget", 10)  # small enough that evictions happen
    if "maintenance" in {p.name for p in cls.params} and _kernel(kernel_spec).kind != "rbf":
        params.setdefault("maintenance", "project")  # merging is defined for the Gaussian kernel only
    try:
        cls.resolve_params(params)
    except ValueError as exc:
        # an algorithm may declare such a value out of range (Ahpatron keeps half of B, so B ≥ 2):
        # then it is refused before any data, naming the flag, never half-run
        assert "-B/--budget must be" in str(exc)
        return
    learner = cls(_kernel(kernel_spec), seed=3, **params)
    labels = label_map(cls)
    encoded = labels.encode(chunk, "test")  # ±1, or class indices for the multiclass learners
    for _ in range(2):  # a second pass exercises a full support set and evictions
        try:
            learner.learn(chunk, encoded)
        except Overflow:
            # an LMS filter diverges when η k(x, x) > 2 (1e6-scale values, a linear or poly kernel): it stops
            # with the documented error at the first score that is not finite, and nothing is saved
            assert "regression" in cls.tasks
            return
    path = tmp_path / "m.model"
    Model(learner, labels).save(path, resume=True)  # the kept inverse, checked below
    loaded = Model.load(path, resume=True).learner
    header, arrays = loaded.state()
    for name, array in arrays.items():
        assert np.isfinite(array).all(), f"{name} holds NaN or inf"
    assert np.isfinite(loaded.decision_function(chunk)).all()
    if not cls.multiclass:  # online-to-batch averaging is binary-only
        assert np.isfinite(learner.averaged_coefficients()).all()
    assert loaded.counter("examples") == 2 * len(y)
    n = loaded.support_size()
    kept_inverse = arrays.get("kinv")
    ridge = loaded.hyper[RIDGES[algorithm]] if algorithm in RIDGES else 0.0  # FB-KRLS, SW-KRLS: (K + λI)⁻¹
    if "kinv_factor" in arrays:  # the Projectron keeps W = L⁻¹ instead: K⁻¹ = WᵀW
        kept_inverse = arrays["kinv_factor"].T @ arrays["kinv_factor"]
    if kept_inverse is not None and n:
        # The kept inverse (grown by Fig. 4, never recomputed) must be as good an inverse as recomputing
        # it directly would give: then recomputation would not help.  On sane data both are ~1e-10;
        # a poly kernel on 1e6-scale values makes K singular in floating point (cond ~1e18, |S| above
        # the dimension of the cubic feature space), where no inverse is accurate but all stays finite.
        K = loaded.kernel_matrix(*loaded.support.to_csr()) + ridge * np.eye(n)
        kept = np.abs(kept_inverse @ K - np.eye(n)).max()
        try:
            direct = np.abs(np.linalg.inv(K) @ K - np.eye(n)).max()
        except np.linalg.LinAlgError:  # singular to working precision: no recomputed inverse exists
            direct = np.inf
        # Where the recomputed "inverse" is itself off by more than 0.1 in some entry of K⁻¹K − I, there
        # is no inverse to recompute, and which of two wrong matrices is less wrong is up to the BLAS's
        # rounding (562 vs 4e7 with one build, 1.8e4 vs 1.0 with OpenBLAS 0.3.31): then only finiteness,
        # checked above, is promised.
        assert kept <= max(1e-6, direct) or direct > 0.1, (
            f"K⁻¹K − I = {kept:.3g} kept, {direct:.3g} recomputed, |S| = {n}"
        )
    if "ainv" in arrays and n:
        # the second-order Perceptron keeps (aI + K)⁻¹ of its support set; a > 0 keeps it well conditioned
        A = loaded.kernel_matrix(*loaded.support.to_csr()) + loaded.hyper["sop_a"] * np.eye(n)
        kept = np.abs(arrays["ainv"] @ A - np.eye(n)).max()
        try:
            direct = np.abs(np.linalg.inv(A) @ A - np.eye(n)).max()
        except np.linalg.LinAlgError:  # singular to working precision (poly kernel on 1e6-scale values)
            direct = np.inf
        assert kept <= max(1e-6, direct), f"(aI+K)⁻¹(aI+K) − I = {kept:.3g} kept, {direct:.3g} recomputed"


def test_the_sweep_covers_every_registered_algorithm():
    swept = {p.values[1] for p in _params()}
    assert swept == set(ALGORITHMS)
    eta_algorithms = {n for n, c in ALGORITHMS.items() if "eta" in {p.name for p in c.params}}
    assert {p.values[1] for p in _params() if p.values[0] == "eta 0"} == eta_algorithms != set()


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 8, 37, 64])
def test_the_factor_s_products_are_the_plain_sums_bit_for_bit(n):
    """d = Wᵀz made four rows at a time (`projection.add_rows`), and z with d in one pass over W
    (`factor_project_solve`), give each d_j = Σ_{i ≥ j} W_ij z_i with the terms in the order of i and a
    multiply then an add each: the same bits as that sum written out in Python, and the same z and
    ‖δ‖² as `factor_project`."""
    from budgetcli.numerics import _jit

    _jit.compile_all()
    from budgetcli.numerics.projection import factor_project, factor_project_solve, factor_solve

    rng = np.random.default_rng(n)
    capacity = n + 3
    w = np.tril(rng.standard_normal((capacity, capacity)))
    krow = rng.standard_normal(capacity)
    z = np.zeros(capacity)
    delta = factor_project(w, krow, z, n, 1.0)
    plain = np.zeros(capacity)
    for i in range(n):
        for j in range(i + 1):
            plain[j] += float(w[i, j]) * float(z[i])
    d = np.full(capacity, np.nan)
    factor_solve(w, z, d, n)
    assert np.array_equal(d[:n], plain[:n])
    z2, d2 = np.zeros(capacity), np.full(capacity, np.nan)
    assert factor_project_solve(w, krow, z2, d2, n, 1.0) == delta
    assert np.array_equal(z2, z) and np.array_equal(d2[:n], plain[:n])
