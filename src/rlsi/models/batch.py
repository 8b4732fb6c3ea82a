"""Batch RLSI (TOIS §4, Algorithm 1): alternate the U-step and the V-step of :mod:`rlsi.models._steps`.

Regularization scale. Eq. (1) sums the loss over N documents but not the ℓ1 penalty, so a λ₁ tuned on
one corpus is too strong on a smaller one (the paper's λ₁ = 0.5 suits 29,528 AP documents and empties
every topic of the 1,033 MED abstracts). ``lambda1_scale="per_doc"`` (the default) reads ``lambda1`` as
the per-document θ of Eq. (4): the solver uses ``λ₁ = lambda1 · N / 1000``, i.e. ``lambda1`` is the
penalty per thousand documents, so the same value gives comparable sparsity on corpora of any size and
``lambda1=0.5`` is the paper's setting at the paper's scale (×30 for AP). ``lambda1_scale="paper"``
uses ``lambda1`` as the λ₁ of Eq. (1), to reproduce the paper's tables.

Initialization. Algorithm 1 starts from a random V₀. A random V₀ carries no signal, so the first
lasso sees R = D V₀ᵀ of pure noise: with a large λ₁ every topic dies at once, with a small one the
first U is dense and costs more than the rest of the fit. ``init="docs"`` (default) instead takes K
distinct random documents, scaled to unit norm, as the initial topics U₀ and sets V₀ to their
ridge projection (the V-step from U₀), so the first U-step already sees topic structure and stays
sparse. ``init="random"`` is the paper's V₀ ~ N(0, σ²) with σ chosen so that ‖V₀‖ matches the scale of
the ridge projection (σ = ‖D‖_F / √(NK)); it is there for reproduction and comparison.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from .._validation import check_choice, check_number, check_random_state
from ..errors import RLSIError
from ..io import register
from ..kernels.lasso import set_threads
from . import _steps
from ._base import RLSIMixin

log = logging.getLogger(__name__)

INITS = {"docs": "K random documents as initial topics", "random": "Gaussian V0 (paper, Algorithm 1)"}
LAMBDA1_SCALES = {"per_doc": "lambda1 per 1000 documents (size-independent)",
                  "paper": "lambda1 as in Eq. (1) of the paper"}
DOCS_PER_UNIT = 1000.0


class DeadTopicsWarning(UserWarning):
    """Most topics ended all-zero: λ₁ is too large for this corpus."""


@register("BatchRLSI")
class BatchRLSI(RLSIMixin):
    # Safe screening of term rows in the U-step (see _steps.ScreenedBatchR); a switch for tests only.
    _screen = True

    """Batch Regularized Latent Semantic Indexing.

    Minimises ``‖D - U V‖²_F + λ₁ P(U) + λ₂ Q(V)`` over topics U (n_features x n_components, sparse)
    and document vectors V by alternating minimisation (TOIS Algorithm 1).

    Parameters
    ----------
    n_components : int, default 20 — number of topics K.
    lambda1 : float, default 0.05 — topic regularization (see ``lambda1_scale``).
    lambda2 : float, default 1.0 — document regularization λ₂.
    topic_penalty, doc_penalty : {"l1", "l2"}, default "l1", "l2" — P and Q (§8.2.1).
    lambda1_scale : {"per_doc", "paper"}, default "per_doc" — see the module docstring.
    init : {"docs", "random"}, default "docs" — see the module docstring.
    max_iter : int, default 100 — outer iterations (the paper runs 100).
    tol : float, default 1e-4 — stop when the objective decreases by less than ``tol`` (relative).
    inner_max_iter, inner_tol : coordinate-descent sweeps per row and its stopping rule.
    random_state : None, int or Generator — makes fits reproducible (also with several threads).
    n_jobs : None or int — numba threads (None: numba's default, all cores).
    verbose : int — 1 shows a progress bar with the objective.

    Attributes
    ----------
    components_ : scipy.sparse CSR (n_components, n_features) — topics, one per row (Uᵀ).
    objective_ : ndarray (n_iter_,) — Eq. (1) after each outer iteration.
    lambda1_effective_ : float — the λ₁ actually used in Eq. (1).
    n_rows_screened_ : int — term-row solves skipped by the exact screening of the U-step (diagnostic).
    n_iter_ : int; n_features_in_ : int.
    """

    def __init__(self, n_components=20, *, lambda1=0.05, lambda2=1.0, topic_penalty="l1",
                 doc_penalty="l2", lambda1_scale="per_doc", init="docs", max_iter=100, tol=1e-4,
                 inner_max_iter=100, inner_tol=1e-4, random_state=None, n_jobs=None, verbose=0):
        self.n_components = n_components
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.topic_penalty = topic_penalty
        self.doc_penalty = doc_penalty
        self.lambda1_scale = lambda1_scale
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.inner_max_iter = inner_max_iter
        self.inner_tol = inner_tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ fitting
    def _validate_params_all(self):
        self._validate_common()
        check_choice("lambda1_scale", self.lambda1_scale, LAMBDA1_SCALES)
        check_choice("init", self.init, INITS)
        check_number("max_iter", self.max_iter, low=1, integer=True)
        check_number("tol", self.tol, low=0.0)

    def effective_lambda1(self, n_docs):
        """The λ₁ of Eq. (1) used for a corpus of ``n_docs`` documents."""
        if self.lambda1_scale == "paper":
            return float(self.lambda1)
        return float(self.lambda1) * n_docs / DOCS_PER_UNIT

    def fit(self, X, y=None, V_init=None):
        """Fit on X (n_samples x n_features, tf-idf). ``V_init`` (n_samples x n_components) overrides
        ``init`` with a given V₀ᵀ. Returns self."""
        self.fit_transform(X, V_init=V_init)
        return self

    def fit_transform(self, X, y=None, V_init=None):
        """Fit and return the document vectors W = Vᵀ (n_samples x n_components) of the final model."""
        self._validate_params_all()
        X = self._check_X(X, reset=True)
        N, M = X.shape
        K = self.n_components
        if K > M:
            raise RLSIError(f"n_components={K} is larger than the vocabulary ({M} terms)")
        if V_init is None and self.init == "docs" and K > N:
            raise RLSIError(f"n_components={K} is larger than the number of documents ({N})")
        self.n_features_in_ = M
        lam1 = self.effective_lambda1(N)
        self.lambda1_effective_ = lam1
        previous = set_threads(self.n_jobs)
        try:
            W, U = self._initial_state(X, V_init)
            D = X.T.tocsr()  # terms x documents: rows of R = D W are independent lasso problems
            x_sqnorm = float(np.square(X.data, dtype=np.float64).sum())
            objectives, prev = [], np.inf
            bar = _progress(self.max_iter, self.verbose)
            S = _steps.gram(W)
            r_rows = (_steps.ScreenedBatchR(D, lam1 / 2.0) if self.topic_penalty == "l1" and self._screen
                      else None)
            for it in range(self.max_iter):
                if r_rows is not None:
                    r_rows.set_state(W, U)
                U, sweeps = _steps.update_topics(
                    r_rows or _steps.batch_r_rows(D, W), S, U, n_terms=M, penalty=self.topic_penalty, lam=lam1,
                    max_iter=self.inner_max_iter, tol=self.inner_tol)
                W, cross, S = _steps.update_doc_vectors(
                    X, U, penalty=self.doc_penalty, lam=self.lambda2, W_prev=W,
                    max_iter=self.inner_max_iter, tol=self.inner_tol, dtype=X.dtype, return_gram=True)
                obj = _steps.objective(x_sqnorm, cross, U, S, W,
                                       topic_penalty=self.topic_penalty, doc_penalty=self.doc_penalty,
                                       lambda1=lam1, lambda2=self.lambda2)
                objectives.append(obj)
                log.debug("iteration %d: objective %.6g, nnz(U) %d, sweeps %d, rows screened out %s", it + 1,
                          obj, U.nnz, sweeps, getattr(r_rows, "rows_skipped", "-"))
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(objective=f"{obj:.5g}", nnz=U.nnz)
                if np.isfinite(prev) and abs(prev - obj) <= self.tol * max(abs(prev), 1e-300):
                    break
                prev = obj
            else:
                if self.max_iter > 1 and self.tol > 0:
                    warnings.warn(
                        f"BatchRLSI stopped at max_iter={self.max_iter} before converging: the last relative "
                        f"objective change was {abs(objectives[-2] - objectives[-1]) / abs(objectives[-2]):.3g} "
                        f"> tol={self.tol}; raise max_iter or tol", ConvergenceWarning, stacklevel=2)
            if bar is not None:
                bar.close()
        finally:
            set_threads(previous)
        self.components_ = U.T.tocsr().astype(X.dtype)
        self.objective_ = np.asarray(objectives)
        self.n_rows_screened_ = int(getattr(r_rows, "total_skipped", 0))
        self.n_iter_ = len(objectives)
        self._warn_dead_topics(N)
        return W

    def _initial_state(self, X, V_init):
        """Return (W₀ = V₀ᵀ, U₀ or None) as described in the module docstring."""
        N, M = X.shape
        K = self.n_components
        if V_init is not None:
            V_init = np.asarray(V_init, dtype=X.dtype)
            if V_init.shape != (N, K):
                raise RLSIError(f"V_init has shape {V_init.shape}, expected (n_samples, n_components)="
                                f"{(N, K)}")
            return np.ascontiguousarray(V_init), None
        rng = check_random_state(self.random_state)
        if self.init == "random":
            sigma = np.sqrt(float(np.square(X.data, dtype=np.float64).sum()) / (N * K))
            return (rng.standard_normal((N, K)) * sigma).astype(X.dtype), None
        nonempty = np.flatnonzero(np.diff(X.indptr) > 0)
        if len(nonempty) < K:
            raise RLSIError(f"n_components={K} needs at least {K} non-empty documents; X has {len(nonempty)}")
        picks = np.sort(rng.choice(nonempty, size=K, replace=False))
        U0 = X[picks].T.tocsr()  # M x K
        norms = np.sqrt(np.asarray(U0.multiply(U0).sum(axis=0)).ravel())
        U0 = (U0 @ sp.diags(1.0 / norms)).tocsr().astype(X.dtype)
        W, _ = _steps.update_doc_vectors(X, U0, penalty=self.doc_penalty, lam=self.lambda2,
                                         max_iter=self.inner_max_iter, tol=self.inner_tol, dtype=X.dtype)
        # U₀ is not a warm start for the lasso (it solves a different problem); start it from zero.
        return W, None

    def _warn_dead_topics(self, n_docs):
        dead = len(self.dead_topics())
        K = self.n_components
        if self.topic_penalty == "l1" and dead > K // 2:
            scale = "lambda1" if self.lambda1_scale == "per_doc" else "lambda1 (paper scale)"
            warnings.warn(
                f"{dead} of {K} topics are empty: {scale}={self.lambda1:g} (λ₁={self.lambda1_effective_:g} "
                f"for {n_docs} documents) is too strong for this corpus; try a value 3-10x smaller",
                DeadTopicsWarning, stacklevel=3)
        elif dead:
            log.info("%d of %d topics are empty (all-zero weights)", dead, K)


def _progress(total, verbose):
    if not verbose:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="BatchRLSI", unit="iter", leave=False)
