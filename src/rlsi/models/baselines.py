"""Baseline topic models of the TOIS comparison (§8.2.2): LSI, PLSI, LDA and NMF.

All four follow the estimator contract of :class:`rlsi.models.BatchRLSI`: ``fit(X)`` returns self,
``transform(X)`` folds new documents or queries into the topic space with the topics frozen, and
``components_`` holds the topics (``n_components x n_features``). The attribute ``input_kind`` says which
document representation a model expects (:func:`rlsi.retrieval.topic.model_input`): tf-idf for LSI and
NMF (as RLSI), raw term counts for the two probabilistic models, PLSI and LDA.

* :class:`LSI` — truncated SVD of the tf-idf matrix ``X ≈ U Σ Vᵀ`` (scikit-learn's ``TruncatedSVD``,
  ARPACK by default so results do not depend on a random seed). Folding-in is the projection on the
  right singular vectors, ``x ↦ x V`` (so training documents get ``U Σ``); cosines are taken in this
  Σ-weighted space.
* :class:`PLSI` — probabilistic LSI (Hofmann 1999) fitted by EM on the counts, ``P(w|d) = Σ_z P(z|d)
  P(w|z)``. Folding-in (Hofmann's) runs the same EM on ``P(z|q)`` with ``P(w|z)`` frozen.
  Equivalence with NMF (Ding, Li and Peng 2008; Gaussier and Goutte 2005): maximising the PLSI
  likelihood ``Σ n(d,w) log P(d,w)`` is minimising the KL divergence ``KL(F ‖ W H)`` between the
  count matrix normalised to sum to one, ``F = n / Σn``, and a non-negative factorisation ``W H``;
  every fixed point of one algorithm, after rescaling ``W`` and ``H`` to column/row-stochastic factors
  (``P(d|z) P(z)`` and ``P(w|z)``), is a fixed point of the other, and the EM updates written with
  ``C = n / (Θ Φ)`` — ``Φ ← Φ ∘ (Θᵀ C)``, ``Θ ← Θ ∘ (C Φᵀ)``, then normalise — are exactly the
  Lee–Seung multiplicative updates of KL-NMF followed by that rescaling. We implement the EM form
  directly because it gives the folding-in for free and never forms a dense document x term matrix.
* :class:`LDA` — latent Dirichlet allocation with scikit-learn's batch variational Bayes
  (``LatentDirichletAllocation``); folding-in is its variational E-step (``transform``: normalised
  document-topic proportions).
* :class:`NMF` — non-negative matrix factorisation of the tf-idf matrix (scikit-learn ``NMF``, squared
  Frobenius loss, NNDSVDa initialisation); folding-in solves the non-negative least squares problem for
  ``w`` with ``H`` frozen (``NMF.transform``).

Persistence: all four are registered with :mod:`rlsi.io` (``"LSI"``, ``"PLSI"``, ``"LDA"``, ``"NMF"``);
their state is the parameters plus ``components_`` (and a few scalars), so saving is cheap. LDA and NMF
are rebuilt as fitted scikit-learn estimators from that state.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.decomposition import NMF as _SkNMF
from sklearn.decomposition import LatentDirichletAllocation as _SkLDA
from sklearn.decomposition import TruncatedSVD
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from .._validation import check_choice, check_matrix, check_number, check_random_state
from ..errors import RLSIError
from ..io import register
from ._base import PersistentEstimatorMixin

__all__ = ["LSI", "PLSI", "LDA", "NMF", "BASELINES"]

log = logging.getLogger(__name__)


class _TopicBaseline(PersistentEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                     BaseEstimator):
    """Shared validation and persistence of the baselines."""

    input_kind = "tfidf"
    nonnegative = False  # the model needs a non-negative input matrix
    _state_arrays = ("components_",)
    _state_scalars = ("n_features_in_", "n_iter_")

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def _check_input(self, X, *, reset):
        X = check_matrix(X)
        if (self.nonnegative or self.input_kind == "counts") and X.nnz and X.data.min() < 0:
            what = "term counts" if self.input_kind == "counts" else "a non-negative matrix"
            raise RLSIError(f"{type(self).__name__} needs {what}; X has negative entries")
        if reset:
            check_number("n_components", self.n_components, low=1, integer=True)
            if self.n_components > min(X.shape):
                raise RLSIError(f"n_components={self.n_components} is larger than min(n_samples, n_features)="
                                f"{min(X.shape)}")
        else:
            check_is_fitted(self, "components_")
            if X.shape[1] != self.n_features_in_:
                raise RLSIError(f"X has {X.shape[1]} features (terms) but this model was fitted with "
                                f"{self.n_features_in_}; use the same vectorizer for fitting and transforming")
        return X

    def get_topics(self, dense=True):
        """``components_`` (n_components x n_features) as an ndarray (or CSR with ``dense=False``)."""
        check_is_fitted(self, "components_")
        return self.components_ if dense else sp.csr_matrix(self.components_)

    # ------------------------------------------------------------------ persistence (rlsi.io)
    def _after_load(self):
        super()._after_load()
        self._rebuild()

    def _rebuild(self):
        """Restore derived state after loading (for wrapped scikit-learn estimators)."""


# ---------------------------------------------------------------------------------------------- LSI
@register("LSI")
class LSI(_TopicBaseline):
    """Latent semantic indexing: truncated SVD of the tf-idf matrix (see the module docstring).

    Parameters
    ----------
    n_components : int, default 20.
    algorithm : {"arpack", "randomized"}, default "arpack".
    n_iter : int, default 7 — power iterations of the randomized solver.
    random_state : None, int — ARPACK's start vector / the randomized solver's seed.
    """

    input_kind = "tfidf"
    _state_arrays = ("components_", "singular_values_")

    def __init__(self, n_components=20, *, algorithm="arpack", n_iter=7, random_state=0):
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.random_state = random_state

    def fit(self, X, y=None):
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        check_choice("algorithm", self.algorithm, ("arpack", "randomized"))
        X = self._check_input(X, reset=True)
        if self.algorithm == "arpack" and self.n_components >= min(X.shape):
            raise RLSIError(f"LSI with ARPACK needs n_components < min(n_samples, n_features)={min(X.shape)}")
        svd = TruncatedSVD(self.n_components, algorithm=self.algorithm, n_iter=self.n_iter,
                           random_state=self.random_state)
        W = svd.fit_transform(X.astype(np.float64))
        self.components_ = svd.components_
        self.singular_values_ = svd.singular_values_
        self.n_features_in_ = X.shape[1]
        self.n_iter_ = 1
        return W

    def transform(self, X):
        """Projection on the right singular vectors: ``X @ components_.T`` (n_samples x K)."""
        X = self._check_input(X, reset=False)
        return np.asarray(X.astype(np.float64) @ self.components_.T)


# --------------------------------------------------------------------------------------------- PLSI
@register("PLSI")
class PLSI(_TopicBaseline):
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
    _state_arrays = ("components_",)

    def __init__(self, n_components=20, *, max_iter=100, tol=1e-5, fold_max_iter=50, fold_tol=1e-6,
                 random_state=0):
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.fold_max_iter = fold_max_iter
        self.fold_tol = fold_tol
        self.random_state = random_state

    def fit(self, X, y=None):
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        check_number("max_iter", self.max_iter, low=1, integer=True)
        check_number("tol", self.tol, low=0.0)
        X = self._check_input(X, reset=True).astype(np.float64)
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
            _normalize_rows_inplace(phi)
            _normalize_rows_inplace(theta)
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

    def transform(self, X):
        """Folding-in: ``P(z|x)`` by EM with ``P(w|z)`` frozen (rows of zeros for empty inputs)."""
        X = self._check_input(X, reset=False).astype(np.float64)
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
            _normalize_rows_inplace(new)
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


def _normalize_rows_inplace(A):
    s = A.sum(axis=1, keepdims=True)
    np.divide(A, s, out=A, where=s > 0)


# ---------------------------------------------------------------------------------------------- LDA
@register("LDA")
class LDA(_TopicBaseline):
    """Latent Dirichlet allocation (scikit-learn batch variational Bayes) on term counts.

    Parameters
    ----------
    n_components : int, default 20.
    doc_topic_prior, topic_word_prior : float or None (scikit-learn's default 1/K).
    max_iter : int, default 50 — passes over the corpus.
    random_state : None or int.
    n_jobs : None or int — scikit-learn's parallel E-step.

    Attributes: ``components_`` (K, M) variational topic-word parameters (pseudo-counts);
    ``topic_word_`` rows normalised to ``P(w|z)``.
    """

    input_kind = "counts"
    nonnegative = True
    _state_scalars = ("n_features_in_", "n_iter_", "doc_topic_prior_", "topic_word_prior_")

    def __init__(self, n_components=20, *, doc_topic_prior=None, topic_word_prior=None, max_iter=50,
                 evaluate_every=-1, random_state=0, n_jobs=None):
        self.n_components = n_components
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.max_iter = max_iter
        self.evaluate_every = evaluate_every
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _sk(self):
        return _SkLDA(n_components=self.n_components, doc_topic_prior=self.doc_topic_prior,
                      topic_word_prior=self.topic_word_prior, learning_method="batch",
                      max_iter=self.max_iter, evaluate_every=self.evaluate_every,
                      random_state=self.random_state, n_jobs=self.n_jobs)

    def fit(self, X, y=None):
        X = self._check_input(X, reset=True)
        self.model_ = self._sk().fit(X)
        self.components_ = self.model_.components_
        self.n_features_in_ = X.shape[1]
        self.n_iter_ = int(self.model_.n_iter_)
        self.doc_topic_prior_ = float(self.model_.doc_topic_prior_)
        self.topic_word_prior_ = float(self.model_.topic_word_prior_)
        return self

    @property
    def topic_word_(self):
        check_is_fitted(self, "components_")
        return self.components_ / self.components_.sum(axis=1, keepdims=True)

    def transform(self, X):
        """Variational E-step with the topics frozen: document-topic proportions (rows sum to one;
        an empty row gives the prior mean ``1/K``, which is constant and so cosine-neutral)."""
        X = self._check_input(X, reset=False)
        W = self.model_.transform(X)
        W[np.diff(X.indptr) == 0] = 0.0  # no evidence: no topic vector (cosine 0), as for the others
        return W

    def _rebuild(self):
        from scipy.special import psi

        m = self._sk()
        m.components_ = np.asarray(self.components_, dtype=np.float64)
        m.exp_dirichlet_component_ = np.exp(psi(m.components_) - psi(m.components_.sum(axis=1))[:, None])
        m.doc_topic_prior_ = self.doc_topic_prior_
        m.topic_word_prior_ = self.topic_word_prior_
        m.n_features_in_ = self.n_features_in_
        m.n_iter_ = self.n_iter_
        m.n_batch_iter_ = self.n_iter_
        m.bound_ = float("nan")
        m.random_state_ = _sklearn_random_state(self.random_state)
        self.model_ = m


def _sklearn_random_state(seed):
    """scikit-learn's RandomState convention (for rebuilt estimators)."""
    from sklearn.utils import check_random_state as _sk_check

    return _sk_check(seed)


# ---------------------------------------------------------------------------------------------- NMF
@register("NMF")
class NMF(_TopicBaseline):
    """Non-negative matrix factorisation of the tf-idf matrix (scikit-learn, Frobenius loss).

    Parameters
    ----------
    n_components : int, default 20.
    init : str, default "nndsvda".
    max_iter : int, default 400.
    tol : float, default 1e-4.
    random_state : None or int.
    """

    input_kind = "tfidf"
    nonnegative = True

    def __init__(self, n_components=20, *, init="nndsvda", max_iter=400, tol=1e-4, random_state=0):
        self.n_components = n_components
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _sk(self):
        return _SkNMF(n_components=self.n_components, init=self.init, max_iter=self.max_iter, tol=self.tol,
                      random_state=self.random_state)

    def fit(self, X, y=None):
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        X = self._check_input(X, reset=True)
        m = self._sk()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            W = m.fit_transform(X)
        self.model_ = m
        self.components_ = m.components_
        self.n_features_in_ = X.shape[1]
        self.n_iter_ = int(m.n_iter_)
        return W

    def transform(self, X):
        """Non-negative least squares for the document weights with the topics frozen."""
        X = self._check_input(X, reset=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return self.model_.transform(X)

    def _rebuild(self):
        m = self._sk()
        m.components_ = np.asarray(self.components_, dtype=np.float64)
        m.n_components_ = self.components_.shape[0]
        m.n_features_in_ = self.n_features_in_
        m.n_iter_ = self.n_iter_
        m.reconstruction_err_ = float("nan")
        self.model_ = m


#: Baseline classes by the method names used in the evaluation protocol and the CLI.
BASELINES = {"lsi": LSI, "plsi": PLSI, "lda": LDA, "nmf": NMF}
