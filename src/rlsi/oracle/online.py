"""Online RLSI (TOIS §5, Algorithm 4 with §5.4's re-scaling, mini-batches and embedded iterations) in plain
numpy, *eager*: every mini-batch multiplies all of S and R by the re-scaling factor and every U-step solves
every term row from zero with the paper's coordinate descent (:func:`rlsi.oracle.paper.update_u`'s rows).

It is the reference of :class:`rlsi.models.OnlineRLSI`, which re-scales R lazily (a stored scale) and
solves only the rows that can be non-zero: the two must give the same topics and statistics to rounding
and solver tolerance. Documents are rows here (X is N x M, as the estimators take it); ℓ1 topics, ℓ2
document vectors, ``lambda1_scale="per_doc"``; U₀ given (``topic_init``).
"""

from __future__ import annotations

import numpy as np

from .paper import _lasso_cd_paper


def online_rlsi(X, U0, *, lambda1, lambda2, rho, batch_size, n_inner, n_passes=1, max_iter=2000, tol=1e-12):
    """Returns ``(U, S, R, weight)`` after ``n_passes`` passes over X (dense or sparse, N x M, in its order)
    from U₀ (M x K); a later pass continues the stream (t counts the documents of every pass).

    For each mini-batch of n documents with t₀ documents before it: ``c = (t₀/(t₀+n))^ρ``; ``S, R, weight
    *= c``; then ξ times: ``W = X_b U (UᵀU + λ₂I)⁻¹``, ``S = S₀ + WᵀW``, ``R = R₀ + X_bᵀW``,
    ``U = argmin tr(UᵀUS) − 2tr(UᵀR) + λ₁‖U‖₁`` with ``λ₁ = lambda1 · (weight₀ + n) / 1000``."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    N, M = X.shape
    U = np.array(U0, dtype=np.float64)
    K = U.shape[1]
    S, R, weight, t = np.zeros((K, K)), np.zeros((M, K)), 0.0, 0
    for a in [a for _ in range(n_passes) for a in range(0, N, batch_size)]:
        Xb = X[a:a + batch_size]
        n = Xb.shape[0]
        c = (t / (t + n)) ** rho if (rho and t) else 1.0
        S0, R0, w0 = c * S, c * R, c * weight
        lam = lambda1 * (w0 + n) / 1000.0
        for _ in range(n_inner):
            W = Xb @ U @ np.linalg.inv(U.T @ U + lambda2 * np.eye(K))
            S, R = S0 + W.T @ W, R0 + Xb.T @ W
            U = np.array([_lasso_cd_paper(S, R[m], lam, max_iter, tol) for m in range(M)])
        weight, t = w0 + n, t + n
    return U, S, R, weight
