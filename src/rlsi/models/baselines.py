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
* :class:`~rlsi.models.plsi.PLSI` — probabilistic LSI fitted by EM on the counts, the one baseline
  algorithm written here (its own module, :mod:`rlsi.models.plsi`).
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

import warnings

import numpy as np
from sklearn.decomposition import NMF as _SkNMF
from sklearn.decomposition import LatentDirichletAllocation as _SkLDA
from sklearn.decomposition import TruncatedSVD
from sklearn.exceptions import ConvergenceWarning

from .._params import Anything, Choice, Integer, Real
from ..errors import RLSIError
from ..io import register
from ._baseline import BaselineModel
from .base import check_fitted
from .plsi import PLSI

__all__ = ["LSI", "PLSI", "LDA", "NMF", "BASELINES"]


# ---------------------------------------------------------------------------------------------- LSI
@register("LSI")
class LSI(BaselineModel):
    """Latent semantic indexing: truncated SVD of the tf-idf matrix (see the module docstring).

    Parameters
    ----------
    n_components : int, default 20.
    algorithm : {"arpack", "randomized"}, default "arpack".
    n_iter : int, default 7 — power iterations of the randomized solver.
    random_state : None, int — ARPACK's start vector / the randomized solver's seed.
    """

    input_kind = "tfidf"
    _parameter_constraints = {"algorithm": Choice(("arpack", "randomized")), "n_iter": Integer(low=0)}
    _state_arrays = ("components_", "singular_values_")

    def __init__(self, n_components=20, *, algorithm="arpack", n_iter=7, random_state=0):
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit on X (n_samples x n_features; see ``input_kind``). Returns self."""
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the document-topic matrix of X (n_samples x n_components)."""
        X = self._check_X(X, reset=True)
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

    def _fold_in(self, X):
        """Projection on the right singular vectors: ``X @ components_.T`` (n_samples x K)."""
        return np.asarray(X.astype(np.float64) @ self.components_.T)


# ---------------------------------------------------------------------------------------------- LDA
@register("LDA")
class LDA(BaselineModel):
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
    _parameter_constraints = {"doc_topic_prior": Real(low=0.0, low_open=True, none=True),
                              "topic_word_prior": Real(low=0.0, low_open=True, none=True),
                              "max_iter": Integer(low=1), "evaluate_every": Integer(),
                              "random_state": Anything(), "n_jobs": Integer(none=True, not_zero=True)}
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
        """Fit on X (n_samples x n_features; see ``input_kind``). Returns self."""
        X = self._check_X(X, reset=True)
        self.model_ = self._sk().fit(X)
        self.components_ = self.model_.components_
        self.n_features_in_ = X.shape[1]
        self.n_iter_ = int(self.model_.n_iter_)
        self.doc_topic_prior_ = float(self.model_.doc_topic_prior_)
        self.topic_word_prior_ = float(self.model_.topic_word_prior_)
        return self

    @property
    def topic_word_(self):
        check_fitted(self)
        return self.components_ / self.components_.sum(axis=1, keepdims=True)

    def _fold_in(self, X):
        """Variational E-step with the topics frozen: document-topic proportions (rows sum to one;
        an empty row gives the prior mean ``1/K``, which is constant and so cosine-neutral)."""
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
class NMF(BaselineModel):
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
    _parameter_constraints = {"init": Choice(("random", "nndsvd", "nndsvda", "nndsvdar")),
                              "max_iter": Integer(low=1), "tol": Real(low=0.0), "random_state": Anything()}

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
        """Fit on X (n_samples x n_features; see ``input_kind``). Returns self."""
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the document-topic matrix of X (n_samples x n_components)."""
        X = self._check_X(X, reset=True)
        m = self._sk()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            W = m.fit_transform(X)
        self.model_ = m
        self.components_ = m.components_
        self.n_features_in_ = X.shape[1]
        self.n_iter_ = int(m.n_iter_)
        return W

    def _fold_in(self, X):
        """Non-negative least squares for the document weights with the topics frozen."""
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
