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
from .base import TopicModel, check_fitted
from .penalties import PENALTIES, SolverSettings
from .placement import DEVICES, PlacementValue, resolve_placement
from .rlsi_policy import TuningValue, resolve_tuning
from .seeds import check_saved as check_saved_seeds
from .steps import fold_in  # noqa: F401  (the one folding-in of the family; rlsi.retrieval imports it from here)


class SquaredLossModel(TopicModel):
    """Base of the RLSI/NMF family: topic and document penalties, coordinate-descent settings, threads, and where
    the work runs.

    Subclasses define the parameters ``n_components, lambda2, doc_penalty, inner_max_iter, inner_tol,
    n_jobs`` (checked here) and set ``components_`` (CSR, n_components x n_features). The RLSI learners also take
    ``placement`` and ``device`` (:meth:`_placement`; :mod:`rlsi.models.placement`) and ``tuning`` (the numbers
    behind their decisions, :class:`rlsi.models.rlsi_policy.RLSITuning`: None for the defaults).
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
        "placement": PlacementValue(),
        "device": Choice(DEVICES),
        "tuning": TuningValue(),
    }
    _state_scalars = ("n_iter_", "n_features_in_", "lambda1_effective_")
    _state_arrays = ("components_", "objective_")

    @property
    def _tuning(self):
        """The :class:`rlsi.models.rlsi_policy.RLSITuning` of the ``tuning`` parameter."""
        return resolve_tuning(getattr(self, "tuning", None))

    def _inner_settings(self):
        """The :class:`rlsi.models.penalties.SolverSettings` of ``inner_max_iter`` and ``inner_tol``."""
        return SolverSettings(self.inner_max_iter, self.inner_tol)

    def with_tuning(self, **changes):
        """Set ``tuning`` to the current one with ``changes`` (fields of
        :class:`rlsi.models.rlsi_policy.RLSITuning`, e.g. ``screen=False`` or ``dense_above=1.0``); returns self.
        The same as ``set_params(tuning=...)``: the value survives ``clone`` and a save and load."""
        return self.set_params(tuning=self._tuning.but(**changes))

    def _placement(self):
        """Where this model's work runs (:func:`rlsi.models.placement.resolve_placement` of its ``placement`` and
        ``device``; the local placement uses its ``executor``)."""
        return resolve_placement(getattr(self, "placement", None), getattr(self, "device", None),
                                 executor=getattr(self, "executor", None))

    def _after_load(self):
        super()._after_load()
        check_saved_seeds(self)

    def _fold_in(self, X):
        """``w = argmin ‖x − U w‖² + λ₂ Q(w)`` for each row of X (:func:`rlsi.models.steps.fold_in`, where the
        model's placement folds in): the ridge projection ``(UᵀU + λ₂I)⁻¹ Uᵀ x`` for ℓ2 documents, the lasso for
        ℓ1 (footnote 8)."""
        check_fitted(self)
        return self._placement().fold_in(X, self.topics_, penalty=self.doc_penalty, lam=self.lambda2,
                                         max_iter=self.inner_max_iter, tol=self.inner_tol, n_jobs=self.n_jobs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
