"""One sweep of sparse topical coding exactly as printed (Zhang, Zhu & Zhang 2013, §3.3, §4), plain numpy.

* :func:`coding_sweep`: for every document, every word n ∈ I_d and every topic k, the word code is
  ``max(0, ν)`` with ν the larger root of the printed quadratic
  ``γβ_kn ν² + (γμ + β_kn η)ν + μη − w_dn β_kn = 0``, ``μ = Σ_{j≠k} s^j β_jn + ε``,
  ``η = β_kn + ρ − γθ^k`` (μ recomputed from scratch for every coordinate); then θ by Eq. (8)
  ``θ^k = γ/(λ/|I_d| + γ) s̄^k`` (or Eq. (9) for the Laplace prior).
* :func:`dictionary_step`: the gradient of Lemma 1, ``∇_{β_n} = Σ_d 1(n ∈ I_d)(1 − w_dn/(s_dnᵀβ_n + ε)) s_dn``,
  and Eq. (12) ``β ← Π_P(β − α ∇/D)`` with Π_P the sort-based simplex projection of Duchi et al. [11].

Dense, slow, for tests only. Word codes are a list (one (|I_d|, K) array per document).
"""

from __future__ import annotations

import numpy as np


def _larger_root(a, b, c):
    """The larger root of ``a x² + b x + c`` (a ≥ 0). For b > 0 it is written ``2c / (−b − √disc)``: the
    textbook ``(−b + √disc) / 2a`` cancels when 4ac ≪ b² (a term with a tiny β_kn) and gives 0 or noise."""
    if a == 0.0:
        return -c / b
    sq = np.sqrt(max(b * b - 4.0 * a * c, 0.0))
    if b > 0.0:
        return -2.0 * c / (b + sq)
    return (-b + sq) / (2.0 * a)


def coding_sweep(X, beta, theta, S, *, eps, lam, gamma, rho, prior="normal"):
    """One coordinate sweep over the word codes of every document, then θ. Returns (θ, S) (copies).

    X: CSR counts (D x M); beta (K x M); theta (D x K); S: list of (|I_d| x K) arrays.
    """
    theta = np.array(theta, dtype=np.float64)
    S = [np.array(s, dtype=np.float64) for s in S]
    K = beta.shape[0]
    for d in range(X.shape[0]):
        idx = X.indices[X.indptr[d]:X.indptr[d + 1]]
        w = X.data[X.indptr[d]:X.indptr[d + 1]]
        s = S[d]
        for i, n in enumerate(idx):
            for k in range(K):
                mu = sum(s[i, j] * beta[j, n] for j in range(K) if j != k) + eps
                eta = beta[k, n] + rho - gamma * theta[d, k]
                nu = _larger_root(gamma * beta[k, n], gamma * mu + beta[k, n] * eta, mu * eta - w[i] * beta[k, n])
                s[i, k] = max(0.0, nu)
        n_d = len(idx)
        if n_d:
            sbar = s.mean(axis=0)
            if prior == "normal":
                theta[d] = gamma / (lam / n_d + gamma) * sbar
            else:
                theta[d] = np.maximum(0.0, sbar - lam / (gamma * n_d))
        else:
            theta[d] = 0.0
    return theta, S


def project_simplex(v):
    """Euclidean projection of v on the probability simplex (Duchi et al. 2008, Fig. 1)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u)
    j = np.arange(1, len(v) + 1)
    r = np.nonzero(u - (css - 1.0) / j > 0)[0][-1]
    tau = (css[r] - 1.0) / (r + 1)
    return np.maximum(v - tau, 0.0)


def gradient(X, beta, S, *, eps):
    """Lemma 1's gradient of ℓ(S, β), summed over documents (K x M)."""
    G = np.zeros_like(beta, dtype=np.float64)
    for d in range(X.shape[0]):
        idx = X.indices[X.indptr[d]:X.indptr[d + 1]]
        w = X.data[X.indptr[d]:X.indptr[d + 1]]
        for i, n in enumerate(idx):
            r = S[d][i] @ beta[:, n] + eps
            G[:, n] += (1.0 - w[i] / r) * S[d][i]
    return G


def dictionary_step(X, beta, S, alpha, *, eps):
    """Eq. (12) with the whole corpus as the mini-batch: ``Π_P(β − α ∇/D)`` row by row."""
    G = gradient(X, beta, S, eps=eps) / X.shape[0]
    return np.vstack([project_simplex(row) for row in beta - alpha * G])


def mm_dictionary_step(X, beta, S, *, eps):
    """The majorise–minimise dictionary step for fixed word codes, row by row, in plain numpy.

    ``A = Σ_d s_dn`` (code mass), ``T = β ⊙ Σ_d s_dn w_dn/(s_dnᵀβ_n + ε)``; each row becomes
    ``T/(A + ν)`` with ν the root of ``Σ T/(A + ν) = 1`` right of the pole ``−min_{T>0} A`` (bisection);
    a row with T = 0 is copied."""
    K, M = beta.shape
    A = np.zeros((K, M))
    B = np.zeros((K, M))
    for d in range(X.shape[0]):
        idx = X.indices[X.indptr[d]:X.indptr[d + 1]]
        w = X.data[X.indptr[d]:X.indptr[d + 1]]
        for i, n in enumerate(idx):
            r = S[d][i] @ beta[:, n] + eps
            A[:, n] += S[d][i]
            B[:, n] += S[d][i] * w[i] / r
    T = beta * B
    out = np.array(beta, dtype=np.float64)
    for k in range(K):
        on = T[k] > 0
        if not on.any():
            continue
        t, a = T[k, on], A[k, on] - A[k, on].min()  # in u = ν + min A: no cancellation near the pole
        lo, hi = 0.0, t.sum()
        for _ in range(2000):
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            lo, hi = (mid, hi) if np.sum(t / (a + mid)) > 1.0 else (lo, mid)
        out[k] = 0.0
        out[k, on] = t / (a + hi)
        out[k] /= out[k].sum()
    return out
