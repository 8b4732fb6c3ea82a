"""Batch RLSI as printed in the TOIS paper (§4.3, Algorithms 1–3), in plain numpy, paper orientation.

``D`` is terms x documents (M x N, dense), ``U`` is M x K, ``V`` is K x N. The ℓ2 variants use the
closed forms the paper's framework implies (ridge on the rows of U, Algorithm 3 for V), the ℓ1 variants
the coordinate descent of Algorithm 2 with ``ū_m ← 0`` before each row, as printed (line 4), and
"until convergence" read as: until the largest coordinate change of a sweep is ``<= tol · max|u|``.
"""

from __future__ import annotations

import numpy as np


def _soft(w, half_lam):
    return np.sign(w) * max(abs(w) - half_lam, 0.0)


def _lasso_cd_paper(S, r, lam, max_iter, tol):
    """Algorithm 2 lines 4–10 for one row: w_k = r_k - Σ_{l≠k} s_kl u_l; u_k = soft(w_k, λ/2)/s_kk."""
    K = len(r)
    u = np.zeros(K)
    for _ in range(max_iter):
        max_delta = 0.0
        for k in range(K):
            w = r[k] - (S[k] @ u - S[k, k] * u[k])
            new = _soft(w, lam / 2.0) / S[k, k] if S[k, k] > 0 else 0.0
            max_delta = max(max_delta, abs(new - u[k]))
            u[k] = new
        if max_delta <= tol * np.max(np.abs(u)):
            break
    return u


def update_u(D, V, lam1, penalty="l1", max_iter=1000, tol=1e-12):
    """Algorithm 2 (UpdateU). Returns U (M x K)."""
    S = V @ V.T
    R = D @ V.T
    M, K = R.shape
    if penalty == "l2":
        return np.linalg.solve(S + lam1 * np.eye(K), R.T).T
    U = np.zeros((M, K))
    for m in range(M):
        U[m] = _lasso_cd_paper(S, R[m], lam1, max_iter, tol)
    return U


def update_v(D, U, lam2, penalty="l2", max_iter=1000, tol=1e-12):
    """Algorithm 3 (UpdateV). Returns V (K x N)."""
    K = U.shape[1]
    if penalty == "l2":
        Sigma = np.linalg.inv(U.T @ U + lam2 * np.eye(K))
        Phi = U.T @ D
        return np.column_stack([Sigma @ Phi[:, n] for n in range(D.shape[1])])
    G = U.T @ U
    Phi = U.T @ D
    return np.column_stack([_lasso_cd_paper(G, Phi[:, n], lam2, max_iter, tol) for n in range(D.shape[1])])


def rlsi_objective(D, U, V, lam1, lam2, topic_penalty="l1", doc_penalty="l2"):
    """Eq. (1) evaluated directly."""
    pu = np.abs(U).sum() if topic_penalty == "l1" else np.square(U).sum()
    pv = np.abs(V).sum() if doc_penalty == "l1" else np.square(V).sum()
    return float(np.square(D - U @ V).sum() + lam1 * pu + lam2 * pv)


def batch_rlsi(D, V0, lam1, lam2, n_iter, topic_penalty="l1", doc_penalty="l2", max_iter=1000, tol=1e-12):
    """Algorithm 1 from a given ``V0`` (K x N). Returns (U, V, objectives per iteration)."""
    V = np.asarray(V0, dtype=np.float64)
    D = np.asarray(D, dtype=np.float64)
    objectives = []
    U = None
    for _ in range(n_iter):
        U = update_u(D, V, lam1, topic_penalty, max_iter, tol)
        V = update_v(D, U, lam2, doc_penalty, max_iter, tol)
        objectives.append(rlsi_objective(D, U, V, lam1, lam2, topic_penalty, doc_penalty))
    return U, V, objectives
