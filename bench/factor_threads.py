"""Two threads for the Projectron's factor product z = W k_t (issue #19, "the Projectron++ product"):
a prototype measured beside the shipped one-thread `projection.factor_project`, not a product path.

    python bench/factor_threads.py [--sizes 300,780,1500] [--reps 5000]

W is a random lower-triangular n × n matrix (the kept inverse Cholesky factor), k_t a random vector.
The two-thread version splits the rows at n/√2 (equal halves of the triangle) in a numba `prange`
over two parts, each row's dot product the same loop as the shipped one, then sums ‖z‖² as the shipped
one does; both are compiled with the shipped fastmath flags (reassoc, contract).  Printed per n: wall
and CPU time per product (means over --reps calls), and whether z and ‖z‖² are bit-identical to the
shipped function's.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from budgetcli import _jit  # noqa: E402
from budgetcli.projection import factor_project  # noqa: E402


def two_threads():
    import numba

    @numba.njit(parallel=True, fastmath={"reassoc", "contract"})
    def factor_project_2(w, krow, z, n, kxx):
        cut = int(n / np.sqrt(2.0))
        for part in numba.prange(2):
            lo = 0 if part == 0 else cut
            hi = cut if part == 0 else n
            for i in range(lo, hi):
                s = 0.0
                for j in range(i + 1):
                    s += w[i, j] * krow[j]
                z[i] = s
        pk2 = 0.0
        for i in range(n):
            pk2 += z[i] * z[i]
        return kxx - pk2, pk2

    return factor_project_2


def timed(f, args, reps):
    f(*args)
    t, c = time.perf_counter(), time.process_time()
    for _ in range(reps):
        f(*args)
    return (time.perf_counter() - t) / reps, (time.process_time() - c) / reps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="300,780,1500")
    ap.add_argument("--reps", type=int, default=5000)
    args = ap.parse_args()
    _jit.compile_all()
    parallel = two_threads()
    print("load average before: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for n in map(int, args.sizes.split(",")):
        rng = np.random.default_rng(n)
        w, k = np.tril(rng.normal(size=(n, n))), rng.normal(size=n)
        z1, z2 = np.zeros(n), np.zeros(n)
        one, two = factor_project(w, k, z1, n, 1.0), parallel(w, k, z2, n, 1.0)
        same = one == two and bool((z1 == z2).all())
        (w1, c1), (w2, c2) = (
            timed(factor_project, (w, k, z1, n, 1.0), args.reps),
            timed(parallel, (w, k, z2, n, 1.0), args.reps),
        )
        print(
            f"n = {n:5d}: one thread {w1 * 1e6:7.1f} µs wall {c1 * 1e6:7.1f} µs CPU; two threads "
            f"{w2 * 1e6:7.1f} µs wall {c2 * 1e6:7.1f} µs CPU; z identical {bool((z1 == z2).all())}, "
            f"‖z‖² identical {same}"
        )
    print("load average after:  " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
