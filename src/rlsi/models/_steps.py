"""The two alternating steps of RLSI, shared by every learner (batch, online, distributed).

Layout (scikit-learn orientation): ``X`` is documents x terms (N x M, CSR) — the paper's ``D`` is ``Xᵀ``;
topics ``U`` are terms x topics (M x K), kept as CSR; document vectors ``W = Vᵀ`` are N x K dense.

U-step (TOIS Algorithm 2, and its ℓ2 variant)::

    min_U ‖D - U V‖²_F + λ₁ P(U),   P = Σ|u_mk| ("l1")  or  Σ u_mk² ("l2")

decomposes into one problem per term row m with the statistics ``S = V Vᵀ`` (K x K) and the row
``r_m`` of ``R = D Vᵀ`` (M x K). ``R`` is never formed whole: it is produced and consumed in blocks of
term rows (``r_rows(a, b)``), so memory is ``block x K`` whatever M is — the same block is the unit of
work of the distributed learner.

V-step (Algorithm 3, and its ℓ1 variant)::

    min_V ‖D - U V‖²_F + λ₂ Q(V),  Q = Σ v_kn² ("l2", closed-form ridge) or Σ|v_kn| ("l1", lasso CD)

with ``Φᵀ = X U`` (N x K) computed from sparse X and sparse U, by blocks of documents.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numba import njit
from scipy.linalg.blas import dsyrk

from ..kernels.lasso import lasso_rows
from ..kernels.products import csr_csr_dense, csr_dense_rows, csr_rows_to_dense, dense_to_csr

PENALTIES = ("l1", "l2")

# Aim for dense blocks of about this many entries (x 8 bytes): big enough to keep every thread busy,
# small enough that R and Φ never need M x K or N x K extra memory at once.
BLOCK_ENTRIES = 1 << 22


def block_rows(n_cols):
    """Rows per block for dense blocks of width ``n_cols``."""
    return max(256, BLOCK_ENTRIES // max(1, n_cols))


def penalty_value(A, kind):
    """Σ|a| for "l1", Σa² for "l2"; A dense or sparse."""
    data = A.data if sp.issparse(A) else A
    if kind == "l1":
        return float(np.abs(data).sum(dtype=np.float64))
    return float(np.square(data, dtype=np.float64).sum())


def ridge_inverse(G, lam):
    """``Σ = (G + lam I)⁻¹`` (K x K, float64), via Cholesky; pseudo-inverse if singular (lam = 0).

    The paper's Algorithm 3 forms Σ explicitly; applying it to a block of rows is then one GEMM, which
    on few cores is faster than triangular solves with many right-hand sides, and as accurate here
    (G + λI is well conditioned for λ > 0).
    """
    A = G + lam * np.eye(G.shape[0])
    try:
        factor = la.cho_factor(A, lower=False, check_finite=False)
        return la.cho_solve(factor, np.eye(G.shape[0]), check_finite=False)
    except la.LinAlgError:
        return la.pinvh(A)


def update_topics(r_rows, S, U_prev, *, n_terms, penalty, lam, max_iter=100, tol=1e-4):
    """U-step. Returns ``(U, sweeps)``: U as CSR (M x K) of the dtype of the R blocks.

    r_rows : callable ``(a, b) -> ndarray (b - a, K)``, rows a..b of ``R = D Vᵀ``.
    S : (K, K) float64, ``V Vᵀ``.
    U_prev : CSR (M x K) or None. Warm start for the ℓ1 coordinate descent; the minimiser is the same
        as from Algorithm 2's zero start (strictly convex problem), only reached in fewer sweeps.
    sweeps : total number of coordinate-descent sweeps (0 for the ℓ2 closed form), for diagnostics.
    """
    K = S.shape[0]
    step = block_rows(K)
    blocks, sweeps = [], 0
    sigma = ridge_inverse(S, lam) if penalty == "l2" else None
    for a in range(0, n_terms, step):
        b = min(n_terms, a + step)
        Rb = r_rows(a, b)
        if penalty == "l1":
            U0 = None if U_prev is None else csr_rows_to_dense(U_prev, a, b, dtype=Rb.dtype)
            Ub, sw = lasso_rows(Rb, S, U0, lam, max_iter=max_iter, tol=tol)
            sweeps += int(sw.sum())
        else:
            Ub = (Rb.astype(np.float64, copy=False) @ sigma).astype(Rb.dtype, copy=False)
        blocks.append(dense_to_csr(Ub))
    U = sp.vstack(blocks, format="csr") if len(blocks) > 1 else blocks[0]
    U.eliminate_zeros()
    return U, sweeps


def batch_r_rows(D, W):
    """``r_rows`` for batch learning: rows of ``R = D W`` with ``D = Xᵀ`` as CSR (M x N), W (N x K)."""
    W = np.ascontiguousarray(W)

    def r_rows(a, b):
        return csr_dense_rows(D, a, b, W, dtype=W.dtype)

    return r_rows


@njit(cache=True)
def _column_sq_diff(A, B):
    """``Σ_n (A[n, k] - B[n, k])²`` for each column k, in float64, without temporaries."""
    out = np.zeros(A.shape[1])
    for n in range(A.shape[0]):
        for k in range(A.shape[1]):
            d = float(A[n, k]) - B[n, k]
            out[k] += d * d
    return out


class ScreenedBatchR:
    """Rows of ``R = D W`` for the batch U-step, skipping rows whose lasso solution is provably zero.

    A term row m whose previous topic weights are all zero keeps the zero solution exactly when
    ``max_k |r_mk| <= λ/2`` (the KKT conditions at 0). Without computing r_m we know
    ``|r_mk(W_t)| <= |r_mk(W_s)| + ‖d_m‖₂ ‖W_t[:, k] - W_s[:, k]‖₂`` (Cauchy–Schwarz) for the W_s at which
    the row was last computed, so ``bound_m`` — the last computed ``max_k |r_mk|`` plus
    ``‖d_m‖₂ · max_k ‖ΔW_k‖₂`` accumulated over the iterations since — certifies a skip. Skipped rows are
    returned as zeros, which the lasso kernel then skips too: the U-step result is bit-identical to
    computing every row (tested), at the cost of one N x K copy of the previous W and M floats.
    Late in a fit this avoids about half of the ``nnz(D) · K`` work of ``R``.
    """

    def __init__(self, D, half_lam):
        self.D = D
        self.half_lam = float(half_lam)
        rows = np.repeat(np.arange(D.shape[0]), np.diff(D.indptr))
        self.row_norms = np.sqrt(np.bincount(rows, weights=np.square(D.data, dtype=np.float64),
                                             minlength=D.shape[0]))
        self.bound = np.full(D.shape[0], np.inf)
        self.W = None
        self.U_prev = None
        self.rows_skipped = 0
        self.total_skipped = 0

    def set_state(self, W, U_prev):
        """Start an iteration: the new document vectors W (N x K) and the previous topics (CSR or None)."""
        if self.W is not None:
            drift = float(np.sqrt(np.max(_column_sq_diff(np.ascontiguousarray(W), self.W))))
            self.bound += self.row_norms * drift
            self.W[...] = W  # the W at which this iteration's rows are computed
        else:
            self.W = np.array(W, dtype=np.float64)
        self._Wc = np.ascontiguousarray(W)
        self.U_prev = U_prev
        self.rows_skipped = 0

    def __call__(self, a, b):
        # a relative margin keeps the certificate valid under the rounding of the product itself
        need = self.bound[a:b] > self.half_lam * (1.0 - 1e-6)
        if self.U_prev is not None:
            need |= np.diff(self.U_prev.indptr[a:b + 1]) > 0
        Rb = csr_dense_rows(self.D, a, b, self._Wc, mask=need, dtype=self._Wc.dtype)
        computed = np.flatnonzero(need)
        self.bound[a + computed] = np.abs(Rb[computed]).max(axis=1) if Rb.shape[1] else 0.0
        self.rows_skipped += int(len(need) - len(computed))
        self.total_skipped += int(len(need) - len(computed))
        return Rb


def update_doc_vectors(X, U, *, penalty, lam, W_prev=None, max_iter=100, tol=1e-4, dtype=None,
                       return_gram=False):
    """V-step / folding-in. Returns ``(W, cross)`` with W (N x K) = Vᵀ and cross = Σ Φ∘V, and with
    ``return_gram=True`` also ``S = WᵀW`` (K x K, float64), accumulated block by block while each block
    is in cache (the next U-step and the objective both need it; a separate pass over W costs more).

    X : CSR (N x M); U : CSR (M x K). ``cross = tr(Uᵀ D Vᵀ)`` is what the objective needs
    (see :func:`objective`). With penalty "l2" every row is ``(UᵀU + λ₂I)⁻¹ Uᵀ d``; with "l1" it is the
    lasso of :mod:`rlsi.kernels.lasso` with ``S = UᵀU`` (warm-started from ``W_prev`` if given).
    """
    dtype = np.dtype(dtype or X.dtype)
    N, K = X.shape[0], U.shape[1]
    G = (U.T @ U).toarray().astype(np.float64)
    sigma = ridge_inverse(G, lam) if penalty == "l2" else None
    W = np.empty((N, K), dtype=dtype)
    cross = 0.0
    S = np.zeros((K, K)) if return_gram else None
    step = block_rows(K)
    for a in range(0, N, step):
        b = min(N, a + step)
        Phi = csr_csr_dense(X[a:b], U, dtype=dtype)
        if penalty == "l2":
            Wb = Phi.astype(np.float64, copy=False) @ sigma
        else:
            W0 = None if W_prev is None else W_prev[a:b]
            Wb, _ = lasso_rows(Phi, G, W0, lam, max_iter=max_iter, tol=tol)
        W[a:b] = Wb
        cross += float(np.einsum("ij,ij->", Phi, Wb, dtype=np.float64))
        if return_gram:
            S += gram(W[a:b])  # of the stored (possibly float32) rows, which the next R uses
    return (W, cross, S) if return_gram else (W, cross)


def gram(W):
    """``S = V Vᵀ = Wᵀ W`` in float64 (K x K), by a symmetric rank-k update (half a GEMM's work)."""
    W64 = np.ascontiguousarray(W, dtype=np.float64)
    upper = dsyrk(1.0, W64.T, trans=0, lower=0)  # W64.T is Fortran-ordered K x N: no copy
    return np.triu(upper) + np.triu(upper, 1).T


def objective(x_sqnorm, cross, U, S, W, *, topic_penalty, doc_penalty, lambda1, lambda2):
    """Eq. (1): ``‖D - UV‖²_F + λ₁P(U) + λ₂Q(V)`` without forming D - UV.

    ``‖D - UV‖² = ‖D‖² - 2 tr(Uᵀ D Vᵀ) + tr(UᵀU V Vᵀ)`` with ``cross = tr(Uᵀ D Vᵀ)`` from the V-step and
    ``S = V Vᵀ``.
    """
    G = (U.T @ U).toarray().astype(np.float64)
    loss = x_sqnorm - 2.0 * cross + float(np.sum(G * S))
    return (loss + lambda1 * penalty_value(U, topic_penalty)
            + lambda2 * penalty_value(W, doc_penalty))
