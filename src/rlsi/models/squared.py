"""The squared-loss layer: models of the form ``X ≈ W · components_`` with a penalty on each factor.

Objective (TOIS Eq. 1), with ``X`` = documents x terms (``D = Xᵀ``), topics ``U = components_ᵀ``
(M x K) and document vectors ``W = Vᵀ`` (N x K)::

    ‖D − U V‖²_F + λ₁ P(U) + λ₂ Q(V)

P and Q come from the registry :data:`rlsi.models.penalties.PENALTIES`. Every model of this family folds
documents and queries in the same way — :func:`fold_in`, ``w = argmin ‖x − U w‖² + λ₂ Q(w)`` with the
topics frozen (§7) — and so does :class:`rlsi.retrieval.topic.RidgeFolding` for any other model.
"""

from __future__ import annotations

from .._params import COMPONENTS, Choice, Integer, Real
from ..gpu.backend import is_device
from ..kernels.threads import compute_threads
from . import steps
from .base import TopicModel, check_fitted
from .penalties import PENALTIES, SolverSettings
from .rlsi_policy import TUNING


def fold_in(X, topics, *, penalty="l2", lam=1.0, max_iter=100, tol=1e-4, dtype=None, n_jobs=None,
            executor=None):
    """Topic vectors of the rows of X with the topics frozen: ``w = argmin ‖x − U w‖² + λ Q(w)``.

    X : CSR (n_samples x n_features); topics : U (n_features x n_components), CSR or dense;
    penalty : Q, a name of :data:`rlsi.models.penalties.PENALTIES` ("l2": the ridge projection
    ``(UᵀU + λI)⁻¹ Uᵀ x``; "l1": the lasso of footnote 8). Returns W (n_samples x n_components) of
    ``dtype`` (X's by default). A row without any known term gives a zero vector.
    """
    with compute_threads(n_jobs):  # BLAS on one thread: see kernels.blas_rows
        W, _ = steps.update_doc_vectors(X, topics, penalty=penalty, lam=lam, settings=SolverSettings(max_iter, tol),
                                        dtype=dtype or X.dtype, executor=executor)
    return W


class SquaredLossModel(TopicModel):
    """Base of the RLSI/NMF family: topic and document penalties, coordinate-descent settings, threads.

    Subclasses define the parameters ``n_components, lambda2, doc_penalty, inner_max_iter, inner_tol,
    n_jobs`` (checked here) and set ``components_`` (CSR, n_components x n_features).
    """

    _parameter_constraints = {
        "n_components": COMPONENTS,
        "lambda1": Real(low=0.0),
        "lambda2": Real(low=0.0),
        "topic_penalty": Choice(PENALTIES),
        "doc_penalty": Choice(PENALTIES),
        "inner_max_iter": Integer(low=1),
        "inner_tol": Real(low=0.0),
        "n_jobs": Integer(none=True, not_zero=True),
    }
    _state_scalars = ("n_iter_", "n_features_in_", "lambda1_effective_")
    _state_arrays = ("components_", "objective_")
    #: The numbers behind the RLSI learners' decisions (:class:`rlsi.models.rlsi_policy.RLSITuning`); a model
    #: gets another with :meth:`with_tuning` (tests and studies), not as a parameter.
    _tuning = TUNING

    def _inner_settings(self):
        """The :class:`rlsi.models.penalties.SolverSettings` of ``inner_max_iter`` and ``inner_tol``."""
        return SolverSettings(self.inner_max_iter, self.inner_tol)

    def with_tuning(self, **changes):
        """Use the tuning with ``changes`` (fields of :class:`rlsi.models.rlsi_policy.RLSITuning`, e.g.
        ``screen=False`` or ``dense_above=1.0``) in later fits of this model; returns self."""
        self._tuning = self._tuning.but(**changes)
        return self

    def _fold_in(self, X):
        """``w = argmin ‖x − U w‖² + λ₂ Q(w)`` for each row of X (see :func:`fold_in`): the ridge
        projection ``(UᵀU + λ₂I)⁻¹ Uᵀ x`` for ℓ2 documents, the lasso for ℓ1 (footnote 8)."""
        check_fitted(self)
        if is_device(getattr(self, "device", "cpu")):  # folding-in on the device (rlsi.gpu.fit)
            from ..gpu.fit import transform
            return transform(self, X)
        return fold_in(X, self.topics_, penalty=self.doc_penalty, lam=self.lambda2,
                       max_iter=self.inner_max_iter, tol=self.inner_tol, dtype=X.dtype, n_jobs=self.n_jobs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
