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

import numpy as np

from ..._params import ITERATIONS, LDA_PASSES, Boolean, Choice, Real
from ...io import register
from ...kernels.threads import numba_threads
from ..skeleton import AlternatingFit
from .core import STCBase, check_training_counts
from . import dictionary, kernels


@register("SparseTopicalCoding")
class SparseTopicalCoding(AlternatingFit, STCBase):
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
        62.6 % instead of 46.4 % with a linear SVM on θ after 3 iterations at the printed settings, 70.7 %
        instead of 59.7 % after 4 projected iterations at the released ones, at the cost of the LDA fit).
    lda_passes : int, default 10 — batch passes of that LDA fit (``dictionary_init="lda"`` only; outside the
        paper). Its cost is linear in the passes (20 Newsgroups: about 8 s CPU a pass);
        docs/stc.md has accuracy against passes.

    Attributes: ``components_`` β (K, M); ``objective_`` list of Eq. (4) after each coding pass;
    ``word_code_sparsity_`` zero fraction of the last pass' word codes; ``n_iter_``; ``doc_codes_`` θ of
    the training documents.
    """

    _parameter_constraints = {"max_iter": ITERATIONS, "step_size": Real(low=0.0, low_open=True, none=True),
                              "keep_word_codes": Boolean(), "fit_tol": Real(low=0.0),
                              "dictionary_init": Choice(("documents", "lda", "uniform")),
                              "lda_passes": LDA_PASSES}

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

    # ------------------------------------------------------------------ the problem and its finish (AlternatingFit)
    _tol_param = "fit_tol"

    def _fit_threads(self):
        return numba_threads(self.n_jobs)  # BLAS untouched: the LDA start and MedSTC's SVMs are scikit-learn's

    def _check_fit_input(self, X, y):
        return check_training_counts(self._check_X(X, reset=True)), y

    def _start(self, X, y, executor):
        self.n_features_in_ = X.shape[1]
        return STCProblem(self, X, self._fit_extras(X, y))

    def _fit_extras(self, X, y):
        """What the coding passes need besides X (MedSTC: the label codes)."""
        return {}

    def _finish(self, problem, trace, X):
        self.objective_ = list(trace.objectives)
        self.word_code_sparsity_ = problem.word_code_sparsity
        self.n_iter_ = trace.n_iter
        self._set_components(problem.beta)
        self.doc_codes_ = problem.theta

    def _fit_output(self, problem, X):
        """The codes under the final dictionary (``doc_codes_`` are those of the last coding pass, made
        before the last dictionary step)."""
        return self.transform(X)

    # hooks for MedSTC
    def _init_labels(self, **extras):
        return None

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
        f0 = kernels.poisson_loss(args, np.ascontiguousarray(beta.T), S, float(self.eps))
        alpha = self._step_size()
        for _ in range(40):
            new = self._dictionary_step(beta, G, B, n, alpha, cols)
            diff = new - beta
            f1 = kernels.poisson_loss(args, np.ascontiguousarray(new.T), S, float(self.eps))
            # sufficient decrease: <G, β_new − β> ≤ −(n/α)‖β_new − β‖² ≤ 0 for a projected step
            if f1 <= f0 + 1e-4 * float((G * diff[:, cols]).sum()):
                return new
            alpha /= 2.0
        return beta


class STCProblem:
    """Batch STC as a problem of :func:`rlsi.models.driver.alternate`: the U-step codes every document with
    β fixed (and records Eq. (4)'s objective of that pass), the V-step takes one dictionary step from the
    pass' statistics (MedSTC then updates its classifier: the model's ``_after_step``)."""

    def __init__(self, model, X, extras):
        self.model, self.X, self.extras = model, X, extras
        n, M = X.shape
        K = model.n_components
        self.beta = model._init_beta(M, X, model._init_labels(**extras))
        self.theta = np.zeros((n, K))
        self.S = np.zeros((X.nnz, K)) if model.keep_word_codes else None
        self.iteration = 0
        self.word_code_sparsity = 0.0
        self._value = np.inf
        self._stats = None

    def u_step(self, executor):
        m, X = self.model, self.X
        G, B, f, sweeps, zeros, cols = m._code(X, self.beta, self.theta, S=self.S,
                                               warm=self.S is not None and self.iteration > 0, want_grad=True,
                                               **m._supervision(**self.extras))
        self._value = float(f.sum()) + m._extra_objective(X, self.theta, **self.extras)
        self._stats = G, B, cols
        self.word_code_sparsity = float(zeros.sum() / max(X.nnz * m.n_components, 1))
        return {"sweeps": round(float(sweeps.mean()), 2), "word_code_sparsity": round(self.word_code_sparsity, 4)}

    def v_step(self, executor):
        G, B, cols = self._stats
        self._stats = None
        self.beta = self.model._step(self.X, self.beta, G, B, self.S, cols)
        self.model._after_step(self.X, self.theta, self.iteration, **self.extras)
        self.iteration += 1
        return {}

    def objective(self):
        """Eq. (4) of the last coding pass (its codes under the β it was coded with)."""
        return self._value
