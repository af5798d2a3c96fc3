"""Kernels, the pooled support set, and the binary label map."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli.learning import algorithms
from budgetcli.base import registry
from budgetcli.numerics import support
from budgetcli.base.core import DataError, gamma_from_sigma
from budgetcli.learning.featuremap import FeatureMapLearner
from budgetcli.numerics.kernels import Kernel, sparse_sqnorm
from budgetcli.learning.labels import BinaryLabels
from budgetcli.numerics.support import SupportSet, kernel_row, sv_put, sv_remove

from . import reference
from .helpers import chunk_from_dense, random_stream


def sparse(v):
    idx = np.flatnonzero(v).astype(np.int32)
    return idx, v[idx].astype(np.float64)


@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
@pytest.mark.parametrize(
    "kernel",
    [Kernel("rbf", 0.7), Kernel("rbf", 0.7, exp="vectorised"), Kernel("poly", 0.5, 1.5, 3), Kernel("linear")],
    ids=lambda k: k.kind + ("-" + k.exp if k.kind == "rbf" else ""),
)
def test_kernel_row_matches_definition(kernel, dense):
    rng = np.random.default_rng(0)
    V = rng.standard_normal((20, 9)) * (rng.random((20, 9)) < 0.5)
    s = SupportSet(capacity=4, pool_capacity=8, dense=dense)
    s.cover(9)
    s.reserve(20, int((V != 0).sum()))
    assert s.keeps_dense == dense
    for v in V:
        sv_put(s.arrays, len(s), *sparse(v), sparse_sqnorm(sparse(v)[1]))
    x = rng.standard_normal(11)
    x[9] = 0.0
    scratch = np.zeros(11)
    idx, val = sparse(x)  # feature 10 is in no support vector: it must add nothing
    out = np.zeros(20)
    kernel_row(s.arrays, kernel.args(), scratch, idx, val, sparse_sqnorm(val), out)
    assert not scratch.any()  # the scratch is left clean for the next example
    k = reference.make_kernel(kernel.kind, kernel.gamma, kernel.coef0, kernel.degree)
    np.testing.assert_allclose(out, [k(np.append(v, [0.0, 0.0]), x) for v in V], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "kernel",
    [Kernel("rbf", 0.04), Kernel("rbf", 0.04, exp="vectorised"), Kernel("poly", 0.5, 1.5, 3), Kernel("linear")],
    ids=lambda k: k.kind + ("-" + k.exp if k.kind == "rbf" else ""),
)
def test_dense_copy_gives_bit_identical_kernel_rows(kernel):
    """The dense copy adds the same products in the same order as the sparse gather: the kernel rows
    are equal to the last bit, so no decision can change with the storage (support.py).  The data mix
    a9a-like binary features with real values of both signs (products of ±0 included)."""
    X, y = random_stream(1000, 120, seed=5, sparsity=0.9)
    X[:, :60] = X[:, :60] != 0
    ch = chunk_from_dense(X, y)
    sets = [SupportSet(capacity=8, pool_capacity=8, dense=dense) for dense in (False, True)]
    for s in sets:
        s.cover(ch.n_features)
        s.reserve(300, int(ch.indptr[300]))
        for t in range(300):
            idx, val = ch.row(t)
            sv_put(s.arrays, t, idx, val, sparse_sqnorm(val))
    assert [s.keeps_dense for s in sets] == [False, True]
    scratch = np.zeros(ch.n_features)
    rows = [np.zeros(300), np.zeros(300)]
    for t in range(300, len(ch)):
        idx, val = ch.row(t)
        for s, out in zip(sets, rows):
            kernel_row(s.arrays, kernel.args(), scratch, idx, val, sparse_sqnorm(val), out)
        assert np.array_equal(rows[0], rows[1]), t


def test_dense_copy_is_given_up_past_its_limit(monkeypatch):
    monkeypatch.setattr(support, "DENSE_LIMIT", 100)
    s = SupportSet(capacity=4, pool_capacity=8, dense=True)
    s.cover(20)
    assert s.keeps_dense  # 20 × 4 entries
    s.reserve(8, 8)
    assert not s.keeps_dense  # 20 × 8 > 100: the set stays sparse, O(Σ nnz) memory


def test_sigma_and_gamma_conventions():
    assert gamma_from_sigma(2.0) == pytest.approx(0.125)
    assert Kernel("rbf", 0.125).sigma == pytest.approx(2.0)
    with pytest.raises(ValueError):
        gamma_from_sigma(0.0)
    with pytest.raises(ValueError):
        Kernel("rbf", -1.0)


@pytest.mark.parametrize("slack", [0, support.GARBAGE_SLACK])
@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
def test_support_set_replace_remove_compact_keep_contents(dense, slack, monkeypatch):
    monkeypatch.setattr(support, "GARBAGE_SLACK", slack)
    rng = np.random.default_rng(1)
    s = SupportSet(capacity=2, pool_capacity=4, dense=dense)
    s.cover(30)
    truth = []
    for step in range(400):
        v = rng.standard_normal(30) * (rng.random(30) < 0.2)
        idx, val = sparse(v)
        op = rng.integers(3) if truth else 0
        s.reserve(len(s) + 1, len(idx))  # as learners do between examples; compacts when garbage > live
        if op == 0:
            sv_put(s.arrays, len(s), idx, val, sparse_sqnorm(val))
            truth.append(v)
        elif op == 1:
            slot = int(rng.integers(len(truth)))
            sv_put(s.arrays, slot, idx, val, sparse_sqnorm(val))
            truth[slot] = v
        else:
            slot = int(rng.integers(len(truth)))
            moved = sv_remove(s.arrays, slot)
            truth[slot] = truth[moved]
            truth.pop()
        indptr, ii, vv = s.to_csr()
        dense = np.zeros((len(truth), 30))
        for r in range(len(truth)):
            dense[r, ii[indptr[r] : indptr[r + 1]]] = vv[indptr[r] : indptr[r + 1]]
        np.testing.assert_array_equal(dense, np.array(truth).reshape(-1, 30))
        np.testing.assert_allclose(s.arrays.sqnorm[: len(s)], (np.array(truth).reshape(-1, 30) ** 2).sum(1))
        if s.keeps_dense:  # the feature-major copy: live columns hold the vectors, the others are zero
            copy = s.arrays.dense
            np.testing.assert_array_equal(copy[:, : len(s)].T, dense)
            assert not copy[:, len(s) :].any()
    # garbage never grows without bound: compaction keeps the pool within the live part, plus as much
    # again or the slack, plus one vector
    assert s.arrays.meta[1] <= s.nnz + max(s.nnz, slack) + 30


def test_from_csr_round_trip_with_empty_rows():
    indptr = np.array([0, 2, 2, 3, 3])
    idx = np.array([0, 5, 2], np.int32)
    val = np.array([1.0, -2.0, 3.0])
    s = SupportSet.from_csr(indptr, idx, val)
    p2, i2, v2 = s.to_csr()
    np.testing.assert_array_equal(p2, indptr)
    np.testing.assert_array_equal(i2, idx)
    np.testing.assert_array_equal(v2, val)
    np.testing.assert_array_equal(s.arrays.sqnorm[:4], [5.0, 0.0, 9.0, 0.0])


def test_high_dimensional_sparse_data_costs_its_nonzeros():
    """1.35M features, 5 non-zeros per example: the support store grows with Σ nnz, not B·d."""
    d, n = 1_350_000, 400
    rng = np.random.default_rng(2)
    rows = [np.sort(rng.choice(d, 5, replace=False)) for _ in range(n)]
    indptr = np.arange(0, 5 * n + 1, 5, dtype=np.int64)
    from budgetcli.io.libsvm import Chunk

    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    ch = Chunk(
        indptr,
        np.concatenate(rows).astype(np.int32),
        rng.random(5 * n) + 0.1,
        y,
        np.arange(1, n + 1),
        {1.0: "+1", -1.0: "-1"},
    )
    learner = registry.get("perceptron")(Kernel("rbf", 0.5))
    learner.learn(ch, y)
    a = learner.support.arrays
    svs = len(learner.support)
    assert svs > 100
    store_bytes = sum(arr.nbytes for arr in a)
    assert store_bytes < 64 * (svs * 5 + svs) * 4  # a few words per non-zero and per slot
    assert store_bytes < svs * d * 8 / 1000  # far below a dense B×d matrix


def test_binary_labels_larger_is_positive_and_spelling_kept():
    lab = BinaryLabels()
    ch = chunk_from_dense(np.ones((4, 1)), np.array([2.0, 4.0, 4.0, 2.0]))
    ch.label_spellings = {2.0: "2", 4.0: "4.0"}
    np.testing.assert_array_equal(lab.encode(ch), [-1, 1, 1, -1])
    assert lab.decode(np.array([0.3, -0.1, 0.0])) == ["4.0", "2", "2"]


def test_binary_labels_single_first_label_by_sign_then_the_other():
    lab = BinaryLabels()
    np.testing.assert_array_equal(lab.encode(chunk_from_dense(np.ones((2, 1)), np.array([0.0, 0.0]))), [-1, -1])
    np.testing.assert_array_equal(lab.encode(chunk_from_dense(np.ones((1, 1)), np.array([1.0]))), [1])
    lab = BinaryLabels()
    np.testing.assert_array_equal(lab.encode(chunk_from_dense(np.ones((1, 1)), np.array([2.0]))), [1])
    np.testing.assert_array_equal(lab.encode(chunk_from_dense(np.ones((1, 1)), np.array([1.0]))), [-1])


def test_binary_labels_third_value_names_first_offending_line():
    lab = BinaryLabels()
    ch = chunk_from_dense(np.ones((5, 1)), np.array([1.0, 1.0, 2.0, 3.0, 4.0]))
    with pytest.raises(DataError) as e:
        lab.encode(ch, "f.txt")
    assert e.value.line == 4 and e.value.source == "f.txt" and e.value.token == "3"


def _storage_runs():
    runs = []
    for name, cls in sorted(algorithms.load_all().items()):
        if name == "bpegasos":
            runs += [(name, {"maintenance": m}) for m in ("random", "smallest", "project", "merge")]
        elif not issubclass(cls, FeatureMapLearner):  # a feature-map learner (fogd) keeps no support set
            runs.append((name, {}))
    return runs


@pytest.mark.parametrize("limit", [0, 6 * 64], ids=["sparse", "dense-then-sparse"])
@pytest.mark.parametrize(
    "algorithm,params", _storage_runs(), ids=lambda v: v if isinstance(v, str) else "-".join(map(str, v.values()))
)
def test_the_dense_copy_changes_no_run(algorithm, params, limit, monkeypatch):
    """Every learner, with the dense copy and without it (or giving it up when its capacity passes 64 slots
    mid-stream): the same saved state bit for bit.  Along the way the copy must hold exactly the live
    vectors (evictions, removals, Ahpatron's halving, Pegasos' merging all move slots)."""
    cls = registry.get(algorithm)
    kw = {"budget": 25} if any(p.name == "budget" for p in cls.params) else {}
    X, y = random_stream(300, 6, seed=9)
    if cls.multiclass:
        y = (np.digitize(X[:, 0] + X[:, 1], [-0.7, 0.0, 0.7])).astype(np.int64)

    def run(expect_dense):
        learner = cls(Kernel("rbf", 0.3), seed=1, **kw, **params)
        for a in range(0, 300, 50):
            learner.learn(chunk_from_dense(X[a : a + 50], y[a : a + 50]), y[a : a + 50])
            if expect_dense:
                assert learner.support.keeps_dense
                indptr, idx, val = learner.support.to_csr()
                copy = learner.support.arrays.dense
                live = np.zeros((len(learner.support), copy.shape[0]))
                live[np.repeat(np.arange(len(indptr) - 1), np.diff(indptr)), idx] = val
                np.testing.assert_array_equal(copy[:, : len(learner.support)].T, live)
                assert not copy[:, len(learner.support) :].any()
        return learner.state()

    h1, a1 = run(expect_dense=True)
    monkeypatch.setattr(support, "DENSE_LIMIT", limit)
    h2, a2 = run(expect_dense=False)
    assert h1 == h2
    assert a1.keys() == a2.keys()
    for name in a1:
        np.testing.assert_array_equal(a2[name], a1[name], err_msg=name)
