"""Shared input checks and persistence hooks of the baseline topic models (LSI, PLSI, LDA, NMF)."""

from __future__ import annotations

from .._params import COMPONENTS
from ..errors import RLSIError
from .base import TopicModel


class BaselineModel(TopicModel):
    """A baseline of the TOIS comparison: input kind checks, ``n_components <= min(X.shape)``, and a
    ``_rebuild`` hook that restores wrapped scikit-learn estimators after loading."""

    nonnegative = False  # the model needs a non-negative input matrix
    _parameter_constraints = {"n_components": COMPONENTS}
    _state_scalars = ("n_features_in_", "n_iter_")

    def _check_X(self, X, *, reset, dtype=None):
        X = super()._check_X(X, reset=reset, dtype=dtype)
        if self._positive_only and X.nnz and X.data.min() < 0:
            what = "term counts" if self.input_kind == "counts" else "a non-negative matrix"
            raise RLSIError(f"Negative values in data passed to {type(self).__name__}, which needs {what}")
        if reset:
            self._validate_params()
            if self.n_components > min(X.shape):
                raise RLSIError(f"n_components={self.n_components} is larger than min(n_samples, n_features)="
                                f"{min(X.shape)}")
        return X

    @property
    def _positive_only(self):
        return self.nonnegative or self.input_kind == "counts"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = self._positive_only
        return tags

    def _after_load(self):
        super()._after_load()
        self._rebuild()

    def _rebuild(self):
        """Restore derived state after loading (for wrapped scikit-learn estimators)."""
