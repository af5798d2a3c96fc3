"""The support set's Gram matrix outside the compiled loops (numpy and scipy): the resume state a learner
rebuilds from its support vectors (learner.KernelLearner.rebuilt: K, K⁻¹, the inverse Cholesky factor,
(aI + K)⁻¹), and the projection of vectors onto the kept ones (`onto_kept`: averages, mixes).  The loops
keep these matrices up to date themselves (projection.py); nothing here runs in a loop."""

from __future__ import annotations

import numpy as np


def gram_of_support(learner, name: str) -> None:
    """slot[name] = K, the Gram matrix of the support set: the same kernel values, bit for bit, as
    the loops computed when each vector joined (support.kernel_row both ways)."""
    n = len(learner.support)
    learner.slot[name][:n, :n] = learner.gram()


def inverse_of_support(learner, name: str) -> None:
    """slot[name] = K⁻¹ (the Projectron family; bpegasos --maintenance project)."""
    n = len(learner.support)
    learner.slot[name][:n, :n] = spd_inverse(learner.gram())


def factor_of_support(learner, name: str) -> None:
    """slot[name] = W = L⁻¹, K = LLᵀ the Cholesky factorisation of the support set's Gram matrix
    (Projectron, Projectron++)."""
    n = len(learner.support)
    learner.slot[name][:n, :n] = inverse_cholesky(learner.gram())


def ridge_inverse_of_support(ridge_param: str):
    """rebuild(learner, name) setting slot[name] = (aI + K)⁻¹, a the parameter `ridge_param` (SOP)."""

    def rebuild(learner, name: str) -> None:
        n = len(learner.support)
        K = learner.gram()
        K[range(n), range(n)] += learner.hyper[ridge_param]
        learner.slot[name][:n, :n] = spd_inverse(K)

    return rebuild


def onto_kept(learner, removed, coef, ridge=1e-10):
    """β with Σ_i β_i k(sv_i, ·) the RKHS-closest combination of the learner's support vectors to
    Σ_r coef[..., r] k(x_r, ·), x_r the CSR rows `removed` (indptr, indices, values): the least-squares
    solve β = (K + ρI)⁻¹ K_{S,removed} coef (the Projectron's projection, eq. 7, for many vectors at
    once), ρ = `ridge` times the mean k(sv, sv); coef may be a matrix of such vectors (one per row)."""
    n = len(learner.support)
    gram = learner.gram()
    cross = learner.kernel_matrix(*removed)  # removed × kept
    # the default ridge, at round-off level, keeps the solve defined for near-dependent kept vectors
    ridge = ridge * max(float(np.trace(gram)) / max(n, 1), 1e-300)
    return np.linalg.solve(gram + ridge * np.eye(n), cross.T @ np.asarray(coef).T).T


def _linalg():
    """scipy.linalg, imported when first needed: most commands never rebuild, and it is slow to import."""
    import scipy.linalg

    return scipy.linalg


def cholesky(K):
    """L with K = LLᵀ (lower triangular), or None when rounding makes the factorisation fail."""
    try:
        return _linalg().cholesky(K, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None


def spd_inverse(K):
    """K⁻¹ of a symmetric positive definite K by one Cholesky factorisation.  The learners only ever
    add a vector whose projection error is above projection.DEPENDENCE_TOL · k(x, x) (or keep a ridge), so K is
    positive definite; if rounding makes the factorisation fail, the pseudo-inverse is used."""
    if K.shape[0] == 0:
        return K
    L = cholesky(K)
    if L is None:
        return np.linalg.pinv(K, hermitian=True)
    inv = _linalg().cho_solve((L, True), np.eye(K.shape[0]), check_finite=False)
    return (inv + inv.T) / 2.0  # exactly symmetric, as the kept inverse is


def inverse_cholesky(K):
    """W = L⁻¹ (lower triangular) for K = LLᵀ, so that K⁻¹ = WᵀW.  If rounding makes the
    factorisation fail (K numerically singular), the factor of K + ε·mean(diag K)·I, ε = 1e-12."""
    n = K.shape[0]
    if n == 0:
        return K
    L = cholesky(K)
    if L is None:
        L = _linalg().cholesky(
            K + 1e-12 * max(float(np.trace(K)) / n, 1e-300) * np.eye(n), lower=True, check_finite=False
        )
    return _linalg().solve_triangular(L, np.eye(n), lower=True, check_finite=False)
