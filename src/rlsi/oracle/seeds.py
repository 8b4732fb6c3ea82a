"""Batch RLSI with a weighted ℓ1 topic penalty (seed words), in plain numpy, paper orientation.

The objective is Eq. (1) with ``P_w(U) = Σ_mk w_mk |u_mk|`` (``weights``: M x K, positive): the seed words'
pairs carry ``w = 1 − seed_strength`` (:mod:`rlsi.models.seeds`). The U-step is Algorithm 2 with coordinate k of
row m thresholded at ``λ₁ w_mk / 2`` instead of ``λ₁ / 2``, written from zero as printed; the V-step is the paper's
(:func:`rlsi.oracle.paper.update_v`).
"""

from __future__ import annotations

import numpy as np

from .paper import update_v


def weighted_lasso_row(S, r, lam, w, max_iter=1000, tol=1e-12, positive=False):
    """``argmin_u uᵀSu − 2rᵀu + λ Σ_k w_k |u_k|`` by cyclic coordinate descent from zero (Algorithm 2, line by
    line, with the threshold ``λ w_k / 2``)."""
    K = len(r)
    u = np.zeros(K)
    for _ in range(max_iter):
        max_delta = 0.0
        for k in range(K):
            z = r[k] - (S[k] @ u - S[k, k] * u[k])
            t = lam * w[k] / 2.0
            if S[k, k] <= 0:
                new = 0.0
            elif z > t:
                new = (z - t) / S[k, k]
            elif z < -t and not positive:
                new = (z + t) / S[k, k]
            else:
                new = 0.0
            max_delta = max(max_delta, abs(new - u[k]))
            u[k] = new
        if max_delta <= tol * np.max(np.abs(u)):
            break
    return u


def update_u_weighted(D, V, lam1, weights, *, positive=False, max_iter=1000, tol=1e-12):
    """The U-step with weights (M x K). Returns U (M x K)."""
    S = V @ V.T
    R = D @ V.T
    return np.vstack([weighted_lasso_row(S, R[m], lam1, weights[m], max_iter, tol, positive) for m in range(len(R))])


def weighted_objective(D, U, V, lam1, lam2, weights, doc_penalty="l2"):
    """Eq. (1) with the weighted ℓ1 topic penalty, evaluated directly."""
    pv = np.abs(V).sum() if doc_penalty == "l1" else np.square(V).sum()
    return float(np.square(D - U @ V).sum() + lam1 * np.sum(weights * np.abs(U)) + lam2 * pv)


def batch_rlsi_weighted(D, V0, lam1, lam2, weights, n_iter, doc_penalty="l2", *, positive=False, max_iter=1000,
                        tol=1e-12):
    """Algorithm 1 with the weighted U-step from a given ``V0`` (K x N). Returns (U, V, objectives)."""
    V = np.asarray(V0, dtype=np.float64)
    D = np.asarray(D, dtype=np.float64)
    objectives = []
    U = None
    for _ in range(n_iter):
        U = update_u_weighted(D, V, lam1, weights, positive=positive, max_iter=max_iter, tol=tol)
        V = update_v(D, U, lam2, doc_penalty, max_iter, tol)
        objectives.append(weighted_objective(D, U, V, lam1, lam2, weights, doc_penalty))
    return U, V, objectives
