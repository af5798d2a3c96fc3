"""The Gram-inverse maths the projecting and second-order learners share (Projectron paper §3–4).

For a support set with Gram matrix K and kept inverse K⁻¹ (or (aI + K)⁻¹ for SOP):
- `project`: d = K⁻¹k_t, the coefficients of the projection of k(x_t, ·) onto the span (eq. 7), and
  ‖δ_t‖² = k(x_t, x_t) − k_tᵀd (eq. 8);
- `grow_inverse`: the block-inverse update when x_t joins (Fig. 4), O(|S|²);
- `schur_downdate`: the inverse without one support vector (rank-one Schur complement), O(|S|²);
- `factor_project`, `factor_solve`, `factor_grow`: the same with the inverse Cholesky factor W = L⁻¹
  kept instead of K⁻¹ (the Projectron and Projectron++): ‖δ_t‖² needs only z = Wk_t (half of
  `project`'s product), d = Wᵀz only when α changes, and a joining vector adds one row, O(|S|);
  `factor_project_solve` makes z and d in one pass over W when d is needed whatever comes (a mistake).
Nothing is ever inverted afresh.

`project` is compiled with fastmath reassoc/contract only (no assumptions about NaN or inf), so the
O(|S|²) product and ‖Pk‖² are summed in SIMD order rather than left to right, several times faster
(bench/loops.py times the loops).  Sums differ from sequential ones by rounding only, the order is fixed for a given |S|
(so resume and chunking stay bit for bit), and the decisions still match the reference
implementations exactly (tests/test_algorithms.py, tests/test_alma.py).
"""

from __future__ import annotations

import math

import numpy as np

from . import sync
from ._jit import njit

# ‖δ_t‖² ≤ DEPENDENCE_TOL · k(x_t, x_t): x_t lies in the span numerically (‖δ_t‖ = 0), whatever η,
# because adding it would make K numerically singular and the 1/‖δ_t‖² of Fig. 4 would blow up.
DEPENDENCE_TOL = 1e-10


@njit(cache=True, fastmath={"reassoc", "contract"})
def project(kinv, krow, d, n, kxx):
    """d = K⁻¹ k_t (eq. 7); returns (‖δ_t‖², ‖P k‖²) with ‖δ_t‖² = k(x,x) − k_tᵀ d (eq. 8).  Compiled
    with fastmath: the sums may be reassociated (vectorised)."""
    return exact_project(kinv, krow, d, n, kxx)


@njit(cache=True, inline="always")
def exact_project(kinv, krow, d, n, kxx):
    """`project` summed in order (numba inlines it, so it takes the caller's flags: `project`'s fastmath,
    or none)."""
    pk2 = 0.0
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += kinv[i, j] * krow[j]
        d[i] = s
        pk2 += krow[i] * s
    return kxx - pk2, pk2


@njit(cache=True)
def factor_project(w, krow, z, n, kxx):
    """z = W k_t for the kept factor W = L⁻¹ of K = LLᵀ (lower triangular, so K⁻¹ = WᵀW); returns
    (‖δ_t‖², ‖P k‖²) with ‖P k‖² = k_tᵀK⁻¹k_t = ‖z‖² (eq. 8): half the product `project` does, and d
    only when an update needs it (`factor_solve`)."""
    for i in range(n):
        z[i] = factor_row(w, krow, i)
    pk2 = squares(z, n)
    return kxx - pk2, pk2


@njit(cache=True)
def factor_project_solve(w, krow, z, d, n, kxx):
    """`factor_project` and then `factor_solve` in one pass over W, for a round that needs d whatever
    ‖δ_t‖ is (a mistake): row i gives z_i and, while it is in cache, its terms W_ij z_i of every d_j.
    The same sums in the same order as the two apart, so the same bits; W (|S|²/2 numbers, beyond the
    caches from about a thousand vectors) is read once instead of twice."""
    for j in range(n):
        d[j] = 0.0
    body = n - n % ROWS
    for i in range(0, body, ROWS):
        for r in range(i, i + ROWS):
            z[r] = factor_row(w, krow, r)
        add_rows(w, z, d, i, 0, n)
    for i in range(body, n):
        z[i] = factor_row(w, krow, i)
        add_row(w, z, d, i, 0, n)
    pk2 = squares(z, n)
    return kxx - pk2, pk2


@njit(cache=True, fastmath={"reassoc", "contract"})
def factor_row(w, krow, i):
    """Σ_{j ≤ i} W[i, j] k_t[j], summed in SIMD order (fastmath: vectorised, faster; the order
    is fixed for a given i, so resume and chunking stay bit for bit)."""
    s = 0.0
    for j in range(i + 1):
        s += w[i, j] * krow[j]
    return s


@njit(cache=True, fastmath={"contract"})
def squares(z, n):
    """‖z‖² summed in order, with a fused multiply-add per term where the machine has one (what the
    factor's product did when it summed ‖z‖² row by row)."""
    pk2 = 0.0
    for i in range(n):
        pk2 += z[i] * z[i]
    return pk2


@njit(cache=True)
def factor_solve(w, z, d, n):
    """d = Wᵀz = K⁻¹k_t (eq. 7) from `factor_project`'s z: the other half of the product."""
    solve_columns(w, z, d, n, 0, n)


@njit(cache=True)
def solve_columns(w, z, d, n, lo, hi):
    """d[j] = Σ_{r ≥ j} W[r, j] z[r] for the columns lo ≤ j < hi (all of them: `factor_solve`), each
    summed from +0.0 over r ascending, a multiply then an add each, whatever lo and hi: the same bits."""
    for j in range(lo, hi):
        d[j] = 0.0
    body = n - n % ROWS
    for i in range(lo - lo % ROWS, body, ROWS):  # rows before lo hold no column ≥ lo
        add_rows(w, z, d, i, lo, hi)
    for i in range(body, n):
        add_row(w, z, d, i, lo, hi)


ROWS = 4  # rows of W that `add_rows` adds to d at once


@njit(cache=True)
def add_rows(w, z, d, i, lo, hi):
    """d[j] += W[r, j] z[r] for the rows r = i … i+3 and the columns lo ≤ j < hi with j ≤ r, as `add_row`
    four times: each d[j] gets the same terms in the same order (r ascending, a multiply then an add
    each), so the same bits; but d[j] is read and written once for the four rows instead of four times."""
    z0, z1, z2, z3 = z[i], z[i + 1], z[i + 2], z[i + 3]
    for j in range(lo, min(hi, i + 1)):  # the columns all four rows have
        s = d[j]
        s += w[i, j] * z0
        s += w[i + 1, j] * z1
        s += w[i + 2, j] * z2
        s += w[i + 3, j] * z3
        d[j] = s
    for j in range(max(lo, i + 1), min(hi, i + ROWS)):  # the triangle's corner: column j gets the rows r ≥ j
        s = d[j]
        for r in range(j, i + ROWS):
            s += w[r, j] * z[r]
        d[j] = s


@njit(cache=True)
def add_row(w, z, d, i, lo, hi):
    """d[j] += W[i, j] z[i] for the columns lo ≤ j < hi with j ≤ i."""
    zi = z[i]
    for j in range(lo, min(hi, i + 1)):
        d[j] += w[i, j] * zi


# ---- the factor's products on several threads (--threads N; sync.py) ---------------------------------
# Each z_i (a row's dot product) and each d_j (a column's sum over the rows, in order) is computed whole
# by one thread, as one thread computes it: the threads share rows and columns, never a sum, so the bits
# are the one-thread ones whatever the number of threads.  The rows (for z) and the columns (for d) are
# cut into BLOCKS blocks of equal area of the triangle, which the threads claim one at a time.  A worker
# writes its blocks into an array of its own, which the main thread copies from once the block is done;
# a block whose worker is not running (a busy machine) the main thread does again itself rather than
# wait for it: the same values, and a late worker's writes land in its own array, never in z or d.

THREADED_FROM = 256  # |S| from which the products use the threads (below, a job's hand-over costs more)
BLOCKS = 16
Z_JOB, D_JOB = 0, 1  # a job's kind: z = Wk_t by rows, or d = Wᵀz by columns


@njit(cache=True)
def row_block(n, b):
    """The first row of block b: rows [row_block(b), row_block(b + 1)) hold 1/BLOCKS of the triangle."""
    return int(n * math.sqrt(b / BLOCKS))


@njit(cache=True)
def column_block(n, b):
    """The first column of block b: columns [column_block(b), column_block(b + 1)) hold 1/BLOCKS of it."""
    return n - int(n * math.sqrt(1.0 - b / BLOCKS))


@njit(cache=True)
def do_block(w, krow, z, out, kind, n, b):
    """Block b of a job: rows of z = Wk_t into out, or columns of d = Wᵀz into out."""
    if kind == Z_JOB:
        for i in range(row_block(n, b), row_block(n, b + 1)):
            out[i] = factor_row(w, krow, i)
    else:
        solve_columns(w, z, out, n, column_block(n, b), column_block(n, b + 1))


@njit(cache=True)
def do_blocks(w, krow, z, out, control, generation, me):
    """Claim and do the blocks of job `generation` into `out` until none is left, each marked done by
    thread `me` (0: the main thread, whose `out` is z or d itself)."""
    kind, n = control[sync.KIND], control[sync.SIZE]
    while True:
        b = sync.claim(control, generation, BLOCKS)
        if b < 0:
            return
        do_block(w, krow, z, out, kind, n, b)
        sync.store(control, sync.DONE + b, generation << sync.THREAD_BITS | me)


@njit(cache=True)
def run_job(w, krow, z, d, own, control, kind, n):
    """Post a job and see it done (`finish_job`)."""
    finish_job(w, krow, z, z if kind == Z_JOB else d, own, control, kind, n, sync.post(control, kind, n))


@njit(cache=True)
def finish_job(w, krow, z, out, own, control, kind, n, generation):
    """The main thread's part of a posted job: do blocks of it, then gather the workers' blocks from their
    arrays (`own`, a row per worker), doing here any that is not done after about the time a block takes
    (`patience` looks: a look costs tens of nanoseconds, a block's element under one)."""
    do_blocks(w, krow, z, out, control, generation, 0)
    patience = max(sync.SPINS, n * n // (BLOCKS * 64))
    for b in range(BLOCKS):
        lo, hi = (
            (row_block(n, b), row_block(n, b + 1)) if kind == Z_JOB else (column_block(n, b), column_block(n, b + 1))
        )
        looks = 0
        while True:
            word = sync.load(control, sync.DONE + b)
            if word >> sync.THREAD_BITS == generation:
                me = word & ((1 << sync.THREAD_BITS) - 1)
                if me:
                    out[lo:hi] = own[me - 1, lo:hi]
                break
            looks += 1
            if looks > patience:  # its worker is not running: the same values, made here
                do_block(w, krow, z, out, kind, n, b)
                sync.store(control, sync.DONE + b, generation << sync.THREAD_BITS)
                break


@njit(cache=True, nogil=True)
def factor_worker(w, krow, z, own, me, control):
    """A worker thread's life (sync.Workers): do the blocks of each job posted into its own row of `own`
    until told to stop."""
    sync.fetch_add(control, sync.READY, 1)
    seen = 0
    while True:
        generation = sync.next_generation(control, seen)
        if generation == sync.STOP:
            return
        seen = generation
        do_blocks(w, krow, z, own[me - 1], control, generation, me)


@njit(cache=True)
def threaded_project(w, krow, z, n, kxx, own, control):
    """`factor_project` on the threads of `control` (none: its length is 0), the same bits."""
    if control.shape[0] == 0 or n < THREADED_FROM:
        return factor_project(w, krow, z, n, kxx)
    run_job(w, krow, z, z, own, control, Z_JOB, n)
    pk2 = squares(z, n)
    return kxx - pk2, pk2


@njit(cache=True)
def threaded_project_solve(w, krow, z, d, n, kxx, own, control):
    """`factor_project_solve` on the threads of `control`: z by rows, then d by columns; the same bits."""
    if control.shape[0] == 0 or n < THREADED_FROM:
        return factor_project_solve(w, krow, z, d, n, kxx)
    run_job(w, krow, z, d, own, control, Z_JOB, n)
    run_job(w, krow, z, d, own, control, D_JOB, n)
    pk2 = squares(z, n)
    return kxx - pk2, pk2


@njit(cache=True)
def threaded_solve(w, z, d, n, own, control):
    """`factor_solve` on the threads of `control`, the same bits."""
    if control.shape[0] == 0 or n < THREADED_FROM:
        factor_solve(w, z, d, n)
    else:
        run_job(w, z, z, d, own, control, D_JOB, n)


@njit(cache=True)
def factor_grow(w, d, n, delta2):
    """x_t joins (Fig. 4 for the factor): K's Cholesky factor gains the row [zᵀ λ], λ = ‖δ_t‖, so
    W = L⁻¹ gains the row [−dᵀ/λ 1/λ] (d = Wᵀz = K⁻¹k_t): O(|S|), where growing K⁻¹ is O(|S|²)."""
    inv = 1.0 / np.sqrt(delta2)
    for j in range(n):
        w[n, j] = -d[j] * inv
        w[j, n] = 0.0
    w[n, n] = inv


@njit(cache=True)
def grow_inverse(kinv, d, n, delta2):
    """Fig. 4: K_t⁻¹ = [K_{t−1}⁻¹ 0; 0 0] + (1/‖δ‖²) [d; −1][dᵀ −1]."""
    inv = 1.0 / delta2
    for i in range(n):
        di = d[i] * inv
        for j in range(n):
            kinv[i, j] += di * d[j]
        kinv[i, n] = -di
        kinv[n, i] = -di
    kinv[n, n] = inv


@njit(cache=True)
def schur_downdate(kinv, n, r):
    """The inverse of the Gram matrix without slot r, in place on rows and columns ≠ r of the first n:
    P − p pᵀ/π with P = K⁻¹ without row and column r, p = its column r, π = K⁻¹[r, r].  Row and
    column r are left as they were (the caller drops or overwrites them)."""
    pi = kinv[r, r]
    pivot = kinv[r]
    for i in range(n):
        if i == r:
            continue
        row = kinv[i]
        pir = row[r] / pi
        for j in range(r):  # the columns before and after r in two loops: no test inside (vectorised)
            row[j] -= pir * pivot[j]
        for j in range(r + 1, n):
            row[j] -= pir * pivot[j]
