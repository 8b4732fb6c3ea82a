"""What every RLSI estimator shares: parameters of the regularized objective, validation, folding-in.

Objective (TOIS Eq. 1), with ``X`` = documents x terms (``D = Xᵀ``), topics ``U`` (M x K, sparse) and
document vectors ``W = Vᵀ`` (N x K)::

    ‖D - U V‖²_F + λ₁ P(U) + λ₂ Q(V)

``topic_penalty``/``doc_penalty`` choose P and Q among "l1" (Σ|·|) and "l2" (Σ·²): ("l1", "l2") is RLSI,
("l2", "l1") sparse coding, ("l1", "l1") double sparsity, ("l2", "l2") a ridge-regularised LSI (§8.2.1).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import check_choice, check_matrix, check_number
from ..errors import RLSIError
from ..kernels.lasso import set_threads
from . import _steps

PENALTIES = {"l1": "sum of absolute values (sparse)", "l2": "sum of squares (smooth)"}


class PersistentEstimatorMixin:
    """``_to_state``/``_from_state`` for :mod:`rlsi.io` from three class attributes.

    ``_state_scalars`` (fitted JSON values) and ``_state_arrays`` (fitted arrays, dense or sparse) name
    what is saved besides the parameters; ``_after_load`` checks (and may rebuild) the loaded state.
    """

    _state_scalars = ()
    _state_arrays = ()

    def _to_state(self):
        """(meta, arrays) for :func:`rlsi.io.save`: parameters, fitted scalars and fitted arrays."""
        check_is_fitted(self, "components_")
        params = {k: _json_value(k, v) for k, v in self.get_params(deep=False).items()}
        fitted = {k: _json_value(k, getattr(self, k)) for k in self._state_scalars if hasattr(self, k)}
        arrays = {k: getattr(self, k) for k in self._state_arrays if getattr(self, k, None) is not None}
        return {"params": params, "fitted": fitted}, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = cls(**meta["params"])
        for key, value in meta["fitted"].items():
            setattr(est, key, value)
        for key in cls._state_arrays:
            if key in arrays:
                setattr(est, key, arrays[key])
        est._after_load()
        return est

    def _after_load(self):
        comp = self.components_
        if comp.ndim != 2 or comp.shape != (self.n_components, self.n_features_in_):
            raise ValueError(f"components has shape {comp.shape}, expected "
                             f"{(self.n_components, self.n_features_in_)}")


class RLSIMixin(PersistentEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared fitted-model behaviour: ``transform`` (folding-in), ``inverse_transform``, topics access.

    Subclasses set ``components_`` (CSR, n_components x n_features) and define the parameters
    ``n_components, lambda1, lambda2, topic_penalty, doc_penalty, inner_max_iter, inner_tol, n_jobs``.
    """

    def _validate_common(self):
        check_number("n_components", self.n_components, low=1, integer=True)
        check_number("lambda1", self.lambda1, low=0.0)
        check_number("lambda2", self.lambda2, low=0.0)
        check_choice("topic_penalty", self.topic_penalty, PENALTIES)
        check_choice("doc_penalty", self.doc_penalty, PENALTIES)
        check_number("inner_max_iter", self.inner_max_iter, low=1, integer=True)
        check_number("inner_tol", self.inner_tol, low=0.0)
        if self.n_jobs is not None:
            check_number("n_jobs", self.n_jobs, integer=True)
            if self.n_jobs == 0:
                raise RLSIError("n_jobs=0 is not allowed; use None, -1 (all cores) or a positive count")

    def _check_X(self, X, *, reset):
        X = check_matrix(X)
        if not reset:
            check_is_fitted(self, "components_")
            if X.shape[1] != self.n_features_in_:
                raise RLSIError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input (terms of the fitted vocabulary; use the "
                    f"same vectorizer for fitting and transforming)")
        return X

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    @property
    def topics_(self):
        """Topics as terms x topics CSR (the paper's U)."""
        check_is_fitted(self, "components_")
        return self.components_.T.tocsr()

    def transform(self, X):
        """Fold documents (or queries) into the topic space with the topics frozen (§7).

        X : (n_samples, n_features) tf-idf, CSR or dense. Returns W (n_samples, n_components):
        ``w = argmin ‖x - U w‖² + λ₂ Q(w)`` — the ridge projection ``(UᵀU + λ₂I)⁻¹ Uᵀ x`` for ℓ2
        documents, the lasso for ℓ1 (footnote 8). A row without any known term gives a zero vector.
        """
        X = self._check_X(X, reset=False)
        previous = set_threads(self.n_jobs)
        try:
            W, _ = _steps.update_doc_vectors(
                X, self.topics_, penalty=self.doc_penalty, lam=self.lambda2,
                max_iter=self.inner_max_iter, tol=self.inner_tol, dtype=X.dtype)
        finally:
            set_threads(previous)
        return W

    def inverse_transform(self, W):
        """Dense reconstruction ``W @ components_`` (n_samples x n_features); for small inputs only."""
        check_is_fitted(self, "components_")
        W = np.asarray(W)
        return np.asarray(self.components_.T @ W.T).T

    def get_topics(self, dense=False):
        """``components_`` (n_components x n_features), as CSR or (``dense=True``) as an ndarray."""
        check_is_fitted(self, "components_")
        return self.components_.toarray() if dense else self.components_

    def dead_topics(self):
        """Indices of topics whose weights are all zero."""
        check_is_fitted(self, "components_")
        return np.flatnonzero(np.diff(self.components_.indptr) == 0)

    # ------------------------------------------------------------------ persistence (rlsi.io)
    _state_scalars = ("n_iter_", "n_features_in_", "lambda1_effective_")
    _state_arrays = ("components_", "objective_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def _json_value(name, value):
    """A parameter or fitted scalar as a JSON value (numpy scalars unwrapped; a Generator seed dropped)."""
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.random.Generator, np.random.RandomState)):
        return None  # the state of a generator object is not reproducible from a file; documented
    raise RLSIError(f"parameter {name}={value!r} cannot be saved (not a JSON value)")
