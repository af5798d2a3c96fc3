"""Kernels, the pooled support set, and the binary label map."""

from __future__ import annotations

import numpy as np
import pytest

from budgetcli import registry
from budgetcli.io.libsvm import DataError
from budgetcli.kernels import Kernel, gamma_from_sigma, scatter, sparse_sqnorm, unscatter
from budgetcli.labels import BinaryLabels
from budgetcli.support import SupportSet, kernel_row, sv_put, sv_remove

from . import reference
from .helpers import chunk_from_dense


def sparse(v):
    idx = np.flatnonzero(v).astype(np.int32)
    return idx, v[idx].astype(np.float64)


@pytest.mark.parametrize("kernel", [Kernel("rbf", 0.7), Kernel("poly", 0.5, 1.5, 3), Kernel("linear")],
                         ids=lambda k: k.kind)
def test_kernel_row_matches_definition(kernel):
    rng = np.random.default_rng(0)
    V = rng.standard_normal((20, 9)) * (rng.random((20, 9)) < 0.5)
    s = SupportSet(capacity=4, pool_capacity=8)
    s.reserve(20, int((V != 0).sum()))
    for v in V:
        sv_put(s.arrays, len(s), *sparse(v), sparse_sqnorm(sparse(v)[1]))
    x = rng.standard_normal(9)
    scratch = np.zeros(9)
    idx, val = sparse(x)
    scatter(scratch, idx, val)
    out = np.zeros(20)
    kernel_row(s.arrays, *kernel.args(), scratch, sparse_sqnorm(val), out)
    unscatter(scratch, idx)
    assert not scratch.any()  # the scratch is left clean for the next example
    k = reference.make_kernel(kernel.kind, kernel.gamma, kernel.coef0, kernel.degree)
    np.testing.assert_allclose(out, [k(v, x) for v in V], rtol=1e-12, atol=1e-12)


def test_sigma_and_gamma_conventions():
    assert gamma_from_sigma(2.0) == pytest.approx(0.125)
    assert Kernel("rbf", 0.125).sigma == pytest.approx(2.0)
    with pytest.raises(ValueError):
        gamma_from_sigma(0.0)
    with pytest.raises(ValueError):
        Kernel("rbf", -1.0)


def test_support_set_replace_remove_compact_keep_contents():
    rng = np.random.default_rng(1)
    s = SupportSet(capacity=2, pool_capacity=4)
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
            dense[r, ii[indptr[r]:indptr[r + 1]]] = vv[indptr[r]:indptr[r + 1]]
        np.testing.assert_array_equal(dense, np.array(truth).reshape(-1, 30))
        np.testing.assert_allclose(s.arrays.sqnorm[:len(s)], (np.array(truth).reshape(-1, 30) ** 2).sum(1))
    # garbage never grows without bound: compaction keeps the pool within twice the live part plus one vector
    assert s.arrays.meta[1] <= 2 * s.nnz + 30


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
    ch = Chunk(indptr, np.concatenate(rows).astype(np.int32), rng.random(5 * n) + 0.1, y,
               np.arange(1, n + 1), {1.0: "+1", -1.0: "-1"})
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
