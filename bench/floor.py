"""The compute floor of a run (issue #7) and the machine's scalar throughput that prices it.

Floor work of a run, counted by replaying it one example at a time (`replay`):

    Σ_t |S_t|·nnz(x_t) multiply-adds      the kernel row's dot products
  + Σ_t |S_t| exps                        (rbf; none for linear)
  + the algorithm's own update work, from its code, with n = |S_t|:
      projectron, projectron++            n²/2 for z = Wk (W the inverse Cholesky factor they keep)
                                          on every round that needs ‖δ‖ (a mistake, and for ++ a
                                          margin 0 < y f < 1), n²/2 more for d = Wᵀz when α changes
                                          (an update, projected or added), n for W's new row
      projectron-alma2                    the same on every ALMA update
      forgetron                           on a mistake at the budget: the oldest vector's kernel row,
                                          n·nnz(sv) multiply-adds and n exps, plus n to shrink f
      budget-perceptron                   2n per update at the budget (the removal scan and the
                                          cached margins / Gram row), n below it
      tighter-perceptron                  per update at the budget n·m for the error counts on the
                                          evaluation set of m entries, and m·nnz(x_t) + m exps for
                                          its kernel column; n per update for the cached margins
      others (O(1) or O(n) per update)    n per update (alma2 renormalises f: n)

The end-to-end floor adds reading the bytes (`read_floor`): reading the file into memory and
looking at each byte once in compiled code (counting its newlines), the least any parser does.

Floor time = multiply-adds / (rate of a tight compiled multiply-add loop) + exps / (rate of a
tight compiled exp loop), both measured in CPU time in the same process, just before the run they
price (`throughput`; best of five, so the floor errs low and the ratio high).  The
multiply-add loop is a sequential sum over an in-cache array, the way the learners must add to be
bit-reproducible (no reassociation); `throughput` also reports the rate with four independent
accumulators, the machine's scalar peak, for comparison.
"""

from __future__ import annotations

import os
import time

import numpy as np
from numba import njit

from budgetcli.base import registry
from budgetcli.io.libsvm import Chunk
from budgetcli.numerics.kernels import Kernel
from budgetcli.learning.learner import COUNTER_NAMES, binary_scores

MISTAKES, MARGIN_UPDATES, PROJECTIONS = (COUNTER_NAMES.index(c) for c in ("mistakes", "margin_updates", "projections"))


@njit(cache=True)
def _madd_sequential(a, b, reps):
    s = 0.0
    for _ in range(reps):
        for j in range(a.shape[0]):
            s += a[j] * b[j]
    return s


@njit(cache=True)
def _madd_four_accumulators(a, b, reps):
    s0 = s1 = s2 = s3 = 0.0
    for _ in range(reps):
        for j in range(0, a.shape[0], 4):
            s0 += a[j] * b[j]
            s1 += a[j + 1] * b[j + 1]
            s2 += a[j + 2] * b[j + 2]
            s3 += a[j + 3] * b[j + 3]
    return s0 + s1 + s2 + s3


@njit(cache=True)
def _exps(x, reps):
    s = 0.0
    for _ in range(reps):
        for j in range(x.shape[0]):
            s += np.exp(x[j])
    return s


def _rate(fn, args, ops, repeats=5) -> float:
    fn(*args[:-1], 1)  # compile / load
    best = np.inf
    for _ in range(repeats):  # best of a few CPU times: the machine is shared, as for the runs it prices
        t0 = time.process_time()
        fn(*args)
        best = min(best, time.process_time() - t0)
    return ops / best


def throughput(reps: int = 2000) -> dict:
    """Operations per second of tight compiled loops on in-cache data (4,096 doubles)."""
    rng = np.random.default_rng(0)
    a, b = rng.random(4096), rng.random(4096)
    x = -rng.random(4096) * 10
    n = a.shape[0] * reps
    return {
        "madd_per_s": _rate(_madd_sequential, (a, b, reps), n),
        "madd_per_s_4_accumulators": _rate(_madd_four_accumulators, (a, b, reps), n),
        "exp_per_s": _rate(_exps, (x, reps), n),
    }


def _one(data: Chunk, t: int) -> Chunk:
    lo, hi = int(data.indptr[t]), int(data.indptr[t + 1])
    return Chunk(
        np.array([0, hi - lo], np.int64),
        data.indices[lo:hi],
        data.values[lo:hi],
        data.labels[t : t + 1],
        data.line_numbers[t : t + 1],
    )


def replay(algo: str, params: dict, data: Chunk, gamma: float, seed: int = 0) -> dict:
    """Floor work of the run of `algo` on `data`: {"madds", "exps", "kernel_madds", ...}.

    The learner is driven one example at a time; before each example its score comes from the same
    compiled scorer the loop uses, so the round's kind (mistake, margin error) is known exactly."""
    kernel = Kernel("rbf", gamma)
    learner = registry.get(algo)(kernel, seed=seed, **params)
    hyper = learner.hyper
    budget = hyper.get("budget")
    sv_nnz = np.diff(data.indptr)
    kmadds = exps = umadds = 0.0
    f = np.empty(1)
    for t in range(len(data)):
        x = _one(data, t)
        learner._ensure_scratch(x.n_features)
        n = len(learner.support)
        nnz = int(sv_nnz[t])
        margin = 0.0
        if algo in ("projectron", "projectron++"):  # which rounds project depends on the margin
            binary_scores(
                learner.support.arrays,
                kernel.args(),
                learner.slot["alpha"],
                learner.slot["krow"],
                x.indptr,
                x.indices,
                x.values,
                learner.scratch,
                f,
            )
            margin = x.labels[0] * f[0]
        before = learner.counters.copy()
        m = len(learner.evalset) if hasattr(learner, "evalset") else 0
        learner.learn(x, x.labels)
        updated = int(
            learner.counters[MISTAKES] - before[MISTAKES] + learner.counters[MARGIN_UPDATES] - before[MARGIN_UPDATES]
        )
        added = len(learner.support) > n
        kmadds += n * nnz
        exps += n
        if algo in ("projectron", "projectron++"):
            if margin <= 0.0 or (algo == "projectron++" and margin < 1.0):
                umadds += n * n / 2 + (n * n / 2 if updated else 0)
            if added:
                umadds += n
        elif algo == "projectron-alma2":
            if updated:
                umadds += n * n * (2 if added else 1)
        elif algo == "forgetron":
            if updated and n >= budget:
                umadds += n * float(np.mean(sv_nnz)) + n
                exps += n
        elif algo == "budget-perceptron":
            umadds += updated * (2 * n if n >= budget else n)
        elif algo == "tighter-perceptron":
            if updated:
                umadds += n
                if n >= budget:
                    umadds += n * m
                kmadds += m * nnz
                exps += m
        elif algo in ("rbsop", "lbsop"):
            if updated:  # d = A⁻¹k and the rank-one growth of A⁻¹; a downdate first when full
                umadds += 2 * n * n + (n * n if n >= budget else 0)
        elif algo == "ahpatron":
            if learner.counters[PROJECTIONS] > before[PROJECTIONS]:
                # a halving, from the cached Gram matrix: Cholesky of K₂ + ηI, K₂₁α, two triangular
                # solves and the new ‖f‖²
                h = n // 2
                umadds += h**3 / 3 + h * (n - h) + 3 * h * h
            elif updated:
                umadds += n
        elif updated:
            umadds += n
    return {
        "kernel_madds": kmadds,
        "update_madds": umadds,
        "madds": kmadds + umadds,
        "exps": exps,
        "support_size": len(learner.support),
        "mistakes": learner.counter("mistakes"),
    }


@njit(cache=True)
def _newlines(buf):
    count = 0
    for j in range(buf.shape[0]):
        count += buf[j] == 10
    return count


def read_floor(path: str, repeats: int = 3) -> float:
    """CPU seconds (best of `repeats`) to read the file at `path` into memory and look at every byte
    once in compiled code: the floor of parsing it, at the machine's memory bandwidth."""
    size = os.path.getsize(path)
    buf = np.empty(size, np.uint8)
    _newlines(buf[:1])  # compile / load
    best = np.inf
    for _ in range(repeats):
        t0 = time.process_time()
        with open(path, "rb", buffering=0) as f:
            f.readinto(memoryview(buf))
        _newlines(buf)
        best = min(best, time.process_time() - t0)
    return best


def floor_seconds(work: dict, rates: dict) -> float:
    return work["madds"] / rates["madd_per_s"] + work["exps"] / rates["exp_per_s"]
