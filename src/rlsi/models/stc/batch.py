"""Batch sparse topical coding (§3.3): alternate hierarchical sparse coding of every document and one
projected-gradient step of the dictionary.

Each iteration codes all documents with β fixed (numba, documents in parallel, see
:mod:`rlsi.models.stc.kernels`), then takes one dictionary step (:mod:`rlsi.models.stc.core`: the
multiplicative majorise–minimise step by default, or Eq. (12)'s projected gradient with n = D). Two
memory modes:

* ``keep_word_codes=False`` (default): word codes are never stored for the corpus; each document starts
  from its last θ. Memory O(D K + K M).
* ``keep_word_codes=True``: the word codes (nnz x K floats) are kept as warm starts. With the default
  step every iteration decreases the objective of Eq. (4) (coordinate descent from a warm start cannot
  increase it, the majorise–minimise step cannot either); with ``dictionary_step="projected"`` the step is
  chosen by an Armijo backtracking search on ℓ(S, β) from ``step_size`` for the same guarantee. The
  objective is non-increasing, as tested.
"""

from __future__ import annotations

import time

import numpy as np

from ..._params import Boolean, Choice, Integer, Real
from ...io import register
from .core import STCBase, check_training_counts, log, with_threads
from . import dictionary, kernels


@register("SparseTopicalCoding")
class SparseTopicalCoding(STCBase):
    """Batch STC (and collapsed STC with ``collapsed=True``). Parameters of :class:`STCBase` plus

    max_iter : int, default 20 — coding passes / dictionary steps.
    step_size : float or None, default None — α of the dictionary step: ``"projected"``: 0.3 when None
        (the start of the line search with ``keep_word_codes``); ``"mm"``: 1 when None (the full
        majorise–minimise step; α < 1 blends it with the old β).
    keep_word_codes : bool, default False — keep nnz x K word codes (warm starts, monotone objective).
    fit_tol : float, default 1e-4 — stop when the objective's relative decrease is below it.
    dictionary_init : "documents" (default), "lda" or "uniform" — β⁰: random training documents per topic,
        1/M everywhere ("uniform": the released code's start), or (outside
        the paper) the topics of scikit-learn's batch LDA on X (:func:`core.lda_dictionary`; on 20 Newsgroups
        62.6 % instead of 46.4 % with a linear SVM on θ after 3 iterations, at the cost of the LDA fit).
    lda_passes : int, default 10 — batch passes of that LDA fit (``dictionary_init="lda"`` only; outside the
        paper). Its cost is linear in the passes (20 Newsgroups: about 8 s CPU a pass);
        docs/stc.md has accuracy against passes.

    Attributes: ``components_`` β (K, M); ``objective_`` list of Eq. (4) after each coding pass;
    ``word_code_sparsity_`` zero fraction of the last pass' word codes; ``n_iter_``; ``doc_codes_`` θ of
    the training documents.
    """

    _parameter_constraints = {"max_iter": Integer(low=1), "step_size": Real(low=0.0, low_open=True, none=True),
                              "keep_word_codes": Boolean(), "fit_tol": Real(low=0.0),
                              "dictionary_init": Choice(("documents", "lda", "uniform")),
                              "lda_passes": Integer(low=1)}

    def __init__(self, n_components=60, *, lam=0.01, gamma=0.01, rho=0.1, eps=1e-3, prior="normal",
                 collapsed=False, max_sweeps=30, tol=1e-3, dictionary_step="mm", normalize_gradient=True,
                 max_iter=20, step_size=None, keep_word_codes=False, fit_tol=1e-4, dictionary_init="documents",
                 lda_passes=10, random_state=0, n_jobs=None, verbose=0):
        self.n_components = n_components
        self.lam = lam
        self.gamma = gamma
        self.rho = rho
        self.eps = eps
        self.prior = prior
        self.collapsed = collapsed
        self.max_sweeps = max_sweeps
        self.tol = tol
        self.dictionary_step = dictionary_step
        self.normalize_gradient = normalize_gradient
        self.max_iter = max_iter
        self.step_size = step_size
        self.keep_word_codes = keep_word_codes
        self.fit_tol = fit_tol
        self.dictionary_init = dictionary_init
        self.lda_passes = lda_passes
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @with_threads
    def fit(self, X, y=None):
        self._validate_params()
        X = check_training_counts(self._check_X(X, reset=True))
        return self._fit(X)

    def fit_transform(self, X, y=None):
        """``fit(X).transform(X)``: the codes under the final dictionary (``doc_codes_`` are those of the
        last coding pass, made before the last dictionary step)."""
        return self.fit(X, y).transform(X)

    def _fit(self, X, **extras):
        n, M = X.shape
        K = self.n_components
        beta = self._init_beta(M, X, self._init_labels(**extras))
        theta = np.zeros((n, K))
        S = np.zeros((X.nnz, K)) if self.keep_word_codes else None
        self.objective_ = []
        self.n_features_in_ = M
        prev = np.inf
        t0 = time.perf_counter()
        for it in range(self.max_iter):
            self._before_coding(X, theta, it, **extras)
            G, B, f, sweeps, zeros, cols = self._code(X, beta, theta, S=S, warm=S is not None and it > 0,
                                             want_grad=True, **self._supervision(**extras))
            obj = float(f.sum()) + self._extra_objective(X, theta, **extras)
            self.objective_.append(obj)
            self.word_code_sparsity_ = float(zeros.sum() / max(X.nnz * K, 1))
            if self.verbose:
                log.info("%s iteration %d: objective %.6g, sweeps %.1f, word-code sparsity %.3f, %.1fs",
                         type(self).__name__, it + 1, obj, sweeps.mean(), self.word_code_sparsity_,
                         time.perf_counter() - t0)
            beta = self._step(X, beta, G, B, S, cols)
            self._after_step(X, theta, it, **extras)
            if abs(prev - obj) <= self.fit_tol * abs(obj):
                break
            prev = obj
        self.n_iter_ = it + 1
        self._set_components(beta)
        self.doc_codes_ = theta
        return self

    # hooks for MedSTC
    def _init_labels(self, **extras):
        return None

    def _before_coding(self, X, theta, it, **extras):
        pass

    def _after_step(self, X, theta, it, **extras):
        pass

    def _supervision(self, **extras):
        return {}

    def _extra_objective(self, X, theta, **extras):
        return 0.0

    def _step_size(self):
        if self.step_size is not None:
            return min(float(self.step_size), 1.0) if self.dictionary_step == "mm" else float(self.step_size)
        return 1.0 if self.dictionary_step == "mm" else 0.3

    def _step(self, X, beta, G, B, S, cols):
        n = X.shape[0]
        if self.dictionary_step == "lbfgs":  # the released solver (dictionary.py); S is kept (validated)
            beta, _ = dictionary.lbfgs_dictionary(X, beta, S, float(self.eps))  # X's term order: ~0.1 s
            return beta
        if S is None or self.dictionary_step == "mm":
            # the majorise–minimise step decreases ℓ(S, ·) by construction: no line search
            return self._dictionary_step(beta, G, B, n, self._step_size(), cols)
        # Armijo backtracking on ℓ(S, β) (projected-gradient sufficient decrease) — needs the word codes
        args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data)
        f0 = kernels.poisson_loss(*args, np.ascontiguousarray(beta.T), S, float(self.eps))
        alpha = self._step_size()
        for _ in range(40):
            new = self._dictionary_step(beta, G, B, n, alpha, cols)
            diff = new - beta
            f1 = kernels.poisson_loss(*args, np.ascontiguousarray(new.T), S, float(self.eps))
            # sufficient decrease: <G, β_new − β> ≤ −(n/α)‖β_new − β‖² ≤ 0 for a projected step
            if f1 <= f0 + 1e-4 * float((G * diff[:, cols]).sum()):
                return new
            alpha /= 2.0
        return beta
