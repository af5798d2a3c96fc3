"""How far the Projectron's incrementally grown Gram inverse K⁻¹ drifts from a direct inverse.

The Projectron family never inverts K afresh: it keeps the inverse Cholesky factor W = L⁻¹ of K
(K⁻¹ = WᵀW; before, K⁻¹ itself), grown by one row per added support vector (the paper's Fig. 4 for
the factor), so round-off accumulates over a pass.  This script trains on DATA (one pass, file
order), then compares the kept WᵀW with the inverse computed directly from the final support set:

    residual  max |K⁻¹_kept K − I|                  (how far from being an inverse at all)
    relative  ‖K⁻¹_kept − K⁻¹_direct‖_F / ‖K⁻¹_direct‖_F
    δ² error  max over test points of |‖δ‖²_kept − ‖δ‖²_direct| / k(x,x)   (what the η test sees)

    python bench/kinv_drift.py sample_data/a9a --eta 0.1 --gamma 0.04
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from budgetcli.run import pipeline  # noqa: E402
from budgetcli.base.core import KernelSpec  # noqa: E402
from budgetcli.model.spec import TrainSpec  # noqa: E402
from budgetcli.io.libsvm import LibsvmReader  # noqa: E402
from repro.common import dataset  # noqa: E402


def drift(learner, probe) -> dict:
    n = len(learner.support)
    K = learner.kernel_matrix(*learner.support.to_csr())
    W = learner.slot["kinv_factor"][:n, :n]  # the kept inverse Cholesky factor W = L⁻¹
    kept = W.T @ W
    direct = np.linalg.inv(K)
    krows = learner.kernel_matrix(probe.indptr, probe.indices, probe.values)  # probes × SVs
    d_kept = np.einsum("ij,jk,ik->i", krows, kept, krows)
    d_direct = np.einsum("ij,jk,ik->i", krows, direct, krows)
    return {
        "support_size": n,
        "cond_K": float(np.linalg.cond(K)),
        "residual_max_abs_KinvK_minus_I": float(np.abs(kept @ K - np.eye(n)).max()),
        "residual_direct_inverse": float(np.abs(direct @ K - np.eye(n)).max()),
        "relative_frobenius_difference": float(np.linalg.norm(kept - direct) / np.linalg.norm(direct)),
        # rbf: k(x, x) = 1, so this is also the error relative to k(x, x)
        "max_delta2_error": float(np.abs(d_kept - d_direct).max()),
        "kinv_finite": bool(np.isfinite(kept).all()),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default=str(dataset("a9a/a9a")))
    ap.add_argument("--algorithm", default="projectron", choices=["projectron", "projectron++"])
    ap.add_argument("--eta", type=float, default=0.1)
    ap.add_argument("--gamma", type=float, default=0.04)
    ap.add_argument("--probes", type=int, default=500, help="test points for the δ² error (the file's first)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    result = pipeline.train(TrainSpec(args.algorithm, KernelSpec("rbf", args.gamma), {"eta": args.eta}), args.data)
    seconds = time.perf_counter() - t0
    with LibsvmReader(args.data, block_lines=args.probes) as reader:
        probe = next(iter(reader))
    out = {
        "algorithm": args.algorithm,
        "eta": args.eta,
        "gamma": args.gamma,
        "data": args.data,
        "train_seconds": round(seconds, 1),
    } | drift(result.model.learner, probe)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
