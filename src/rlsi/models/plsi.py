"""Probabilistic latent semantic indexing (Hofmann 1999), fitted by EM on term counts.

The model is ``P(w|d) = Σ_z P(z|d) P(w|z)``; folding-in (Hofmann's) runs the same EM on ``P(z|q)`` with
``P(w|z)`` frozen. Equivalence with NMF (Ding, Li and Peng 2008; Gaussier and Goutte 2005): maximising the
PLSI likelihood ``Σ n(d,w) log P(d,w)`` is minimising the KL divergence ``KL(F ‖ W H)`` between the count
matrix normalised to sum to one, ``F = n / Σn``, and a non-negative factorisation ``W H``; every fixed point
of one algorithm, after rescaling ``W`` and ``H`` to column/row-stochastic factors (``P(d|z) P(z)`` and
``P(w|z)``), is a fixed point of the other, and the EM updates written with ``C = n / (Θ Φ)`` —
``Φ ← Φ ∘ (Θᵀ C)``, ``Θ ← Θ ∘ (C Φᵀ)``, then normalise — are exactly the Lee–Seung multiplicative updates
of KL-NMF followed by that rescaling. We implement the EM form directly because it gives the folding-in
for free and never forms a dense document x term matrix. The one algorithm of the baselines written here
(LSI, LDA and NMF wrap scikit-learn: :mod:`rlsi.models.baselines`).
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from .._params import ITERATIONS, Integer, Real
from .._validation import check_random_state
from ..io import register
from ._baseline import BaselineModel

__all__ = ["PLSI"]

log = logging.getLogger(__name__)


@register("PLSI")
class PLSI(BaselineModel):
    """Probabilistic latent semantic indexing by EM on term counts (see the module docstring).

    Parameters
    ----------
    n_components : int, default 20.
    max_iter : int, default 100 — EM iterations of ``fit``.
    tol : float, default 1e-5 — stop when the log-likelihood improves by less than ``tol`` (relative).
    fold_max_iter : int, default 50 — EM iterations of the folding-in (``transform``).
    fold_tol : float, default 1e-6 — stop folding-in when no ``P(z|d)`` moves by more than this.
    random_state : None or int.

    Attributes
    ----------
    components_ : ndarray (K, M) — ``P(w|z)``, rows sum to one.
    doc_topic_ : ndarray (N, K) — ``P(z|d)`` of the fitted documents.
    loglik_ : ndarray — log-likelihood ``Σ n(d,w) log P(w|d)`` after each iteration.
    """

    input_kind = "counts"
    nonnegative = True
    _parameter_constraints = {"max_iter": ITERATIONS, "tol": Real(low=0.0), "fold_max_iter": Integer(low=1),
                              "fold_tol": Real(low=0.0)}

    def __init__(self, n_components=20, *, max_iter=100, tol=1e-5, fold_max_iter=50, fold_tol=1e-6,
                 random_state=0):
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.fold_max_iter = fold_max_iter
        self.fold_tol = fold_tol
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit on X (n_samples x n_features; see ``input_kind``). Returns self."""
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the document-topic matrix of X (n_samples x n_components)."""
        X = self._check_X(X, reset=True).astype(np.float64)
        X.eliminate_zeros()
        N, M = X.shape
        K = self.n_components
        rng = check_random_state(self.random_state)
        phi = rng.random((K, M)) + 0.1
        phi /= phi.sum(axis=1, keepdims=True)
        theta = rng.random((N, K)) + 0.1
        theta /= theta.sum(axis=1, keepdims=True)
        rows = np.repeat(np.arange(N), np.diff(X.indptr))
        cols = X.indices
        total = X.data.sum()
        history, prev = [], -np.inf
        for _ in range(self.max_iter):
            R = _pairwise_dot(theta, phi, rows, cols)
            C = sp.csr_matrix((X.data / R, X.indices, X.indptr), shape=X.shape)
            phi_new = phi * np.asarray((C.T @ theta).T)
            theta = theta * np.asarray(C @ phi.T)
            phi = phi_new
            _normalize_rows_to_sum_one(phi)
            _normalize_rows_to_sum_one(theta)
            ll = float(X.data @ np.log(R))
            history.append(ll)
            if np.isfinite(prev) and abs(ll - prev) <= self.tol * abs(prev):
                break
            prev = ll
        else:
            if self.max_iter > 1:
                log.info("PLSI stopped at max_iter=%d (relative change %.3g)", self.max_iter,
                         abs(history[-1] - history[-2]) / max(abs(history[-2]), 1e-300))
        empty = np.diff(X.indptr) == 0
        theta[empty] = 0.0
        self.components_ = phi
        self.doc_topic_ = theta
        self.loglik_ = np.asarray(history)
        self.n_iter_ = len(history)
        self.n_features_in_ = M
        self.perplexity_ = float(np.exp(-history[-1] / total)) if total > 0 else float("nan")
        return theta

    def _fold_in(self, X):
        """Folding-in: ``P(z|x)`` by EM with ``P(w|z)`` frozen (rows of zeros for empty inputs)."""
        X = X.astype(np.float64)
        X.eliminate_zeros()
        N = X.shape[0]
        K = self.n_components
        phi = np.asarray(self.components_, dtype=np.float64)
        theta = np.full((N, K), 1.0 / K)
        rows = np.repeat(np.arange(N), np.diff(X.indptr))
        for _ in range(self.fold_max_iter):
            R = _pairwise_dot(theta, phi, rows, X.indices)
            C = sp.csr_matrix((X.data / R, X.indices, X.indptr), shape=X.shape)
            new = theta * np.asarray(C @ phi.T)
            _normalize_rows_to_sum_one(new)
            delta = np.abs(new - theta).max() if N else 0.0
            theta = new
            if delta <= self.fold_tol:
                break
        theta[np.diff(X.indptr) == 0] = 0.0
        return theta


def _pairwise_dot(theta, phi, rows, cols, block=1 << 16):
    """``(theta @ phi)[rows, cols]`` for the stored entries only, in blocks (never N x M dense)."""
    out = np.empty(len(rows))
    for a in range(0, len(rows), block):
        b = min(len(rows), a + block)
        out[a:b] = np.einsum("ij,ji->i", theta[rows[a:b]], phi[:, cols[a:b]])
    np.maximum(out, 1e-300, out=out)
    return out


def _normalize_rows_to_sum_one(A):
    """Rows of A scaled to sum to one (probabilities), in place; all-zero rows stay zero."""
    s = A.sum(axis=1, keepdims=True)
    np.divide(A, s, out=A, where=s > 0)


