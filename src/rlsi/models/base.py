"""What every topic model of rlsi shares: parameters, topics in named groups, folding-in, persistence.

A topic model has topics ``components_`` (n_components x n_features: one topic per row, a distribution
or weighting over terms; CSR for sparse models, ndarray for dense ones) and a folding-in ``transform``
that maps documents (n_samples x n_features) to topic vectors (n_samples x n_components) with the topics
frozen. :class:`TopicModel` provides, once for all models:

* parameter checking from the declarative ``_parameter_constraints`` table (:mod:`rlsi._params`);
* ``transform`` → the model's own ``_fold_in`` after the input checks; one not-fitted error
  (:class:`rlsi.errors.NotFittedError`);
* topics in **named groups** (``topic_groups_``: name → [start, stop) of the rows of ``components_``), so a
  model with shared and per-class topics is not a special case: a plain model has the single group
  ``"topics"``. :meth:`get_topics` returns all topics or one group, sparse or dense as asked;
* dead topics (all-zero rows), ``topics_`` (terms x topics, the paper's U, cached);
* pickle-free persistence for :mod:`rlsi.io`: parameters, the fitted scalars ``_state_scalars`` and the
  fitted arrays ``_state_arrays``, under one ``state_version`` per class checked on load.

A new learner subclasses this (or :class:`rlsi.models.squared.SquaredLossModel` for the RLSI/NMF family),
declares its constraints and state, writes ``fit`` (usually with :mod:`rlsi.models.driver` over the per-
block tasks of :mod:`rlsi.models.tasks`) and ``_fold_in``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin

from .._params import parameter_constraints, validate_parameters
from .._validation import check_matrix
from ..errors import NotFittedError, RLSIError

#: The group name of a model whose topics are all of one kind.
DEFAULT_GROUP = "topics"


def check_fitted(estimator, attribute="components_"):
    """Raise :class:`rlsi.errors.NotFittedError` unless ``estimator`` has ``attribute``."""
    if getattr(estimator, attribute, None) is None:
        raise NotFittedError(f"this {type(estimator).__name__} is not fitted yet; call fit() first (or load "
                             f"a saved model with rlsi.load)")


class TopicModel(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base of every topic model: see the module docstring.

    Subclasses set ``components_`` (n_components x n_features), ``n_features_in_`` and, for several
    groups of topics, ``topic_groups_``; they implement ``_fold_in(X) -> (n_samples, n_components)``.
    """

    _parameter_constraints: dict = {}
    #: Version of the saved state of this class; bump it when the state changes meaning.
    _state_version = 1
    _state_scalars: tuple = ("n_features_in_",)
    _state_arrays: tuple = ("components_",)
    #: Input the folding-in expects: "tfidf" or "counts" (see rlsi.retrieval.topic.model_input).
    input_kind = "tfidf"

    # ------------------------------------------------------------------ parameters and input
    def _validate_params(self):
        validate_parameters(self)

    def _check_X(self, X, *, reset, dtype=None):
        """X as finite CSR; with ``reset=False`` the model must be fitted and X as wide as its vocabulary."""
        X = check_matrix(X, dtype=dtype)
        if not reset:
            check_fitted(self)
            if X.shape[1] != self.n_features_in_:
                raise RLSIError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input (terms of the fitted vocabulary; use the "
                    f"same vectorizer for fitting and transforming)")
        return X

    # ------------------------------------------------------------------ folding-in
    def transform(self, X):
        """Fold documents (or queries) X (n_samples x n_features) into the topic space with the topics
        frozen; returns (n_samples x n_components)."""
        X = self._check_X(X, reset=False)
        return self._fold_in(X)

    def _fold_in(self, X):
        raise NotImplementedError

    # ------------------------------------------------------------------ topics
    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    @property
    def topic_groups(self):
        """``{name: (start, stop)}``: the named groups of rows of ``components_``, in the order of their rows
        (a group model's shared topics first)."""
        check_fitted(self)
        groups = getattr(self, "topic_groups_", None)
        if not groups:
            return {DEFAULT_GROUP: (0, self.components_.shape[0])}
        return {name: (int(a), int(b)) for name, (a, b) in sorted(groups.items(), key=lambda kv: int(kv[1][0]))}

    def get_topics(self, group=None, *, dense=False):
        """Topics (rows = topics, columns = terms) of one group (all when ``group`` is None).

        Returns a CSR matrix, or an ndarray with ``dense=True`` — for every model, sparse or dense.
        """
        check_fitted(self)
        comp = self.components_
        if group is not None:
            groups = self.topic_groups
            if group not in groups:
                raise RLSIError(f"group={group!r} is not a topic group of this model; it has "
                                f"{', '.join(map(repr, groups))}")
            a, b = groups[group]
            comp = comp[a:b]
        if dense:
            return comp.toarray() if sp.issparse(comp) else np.array(comp)
        return sp.csr_matrix(comp)

    @property
    def topics_(self):
        """Topics as terms x topics (the paper's U): CSR for sparse models, a view for dense ones.

        Prepared once when the topics are set (fit, load); computed on the fly if ``components_`` was
        replaced by hand since.
        """
        check_fitted(self)
        comp = self.components_
        cached = self.__dict__.get("_topics_cache")
        if cached is not None and cached[0] is comp:
            return cached[1]
        return _transpose(comp)

    def _set_components(self, components):
        """Set ``components_`` and prepare ``topics_`` (so transform does not transpose every call)."""
        self.components_ = components
        self._topics_cache = (components, _transpose(components))

    def dead_topics(self):
        """Indices of topics whose weights are all zero."""
        check_fitted(self)
        comp = self.components_
        if sp.issparse(comp):
            comp = sp.csr_matrix(comp)
            comp.eliminate_zeros()
            return np.flatnonzero(np.diff(comp.indptr) == 0)
        return np.flatnonzero(~np.any(np.asarray(comp) != 0, axis=1))

    def inverse_transform(self, W):
        """Dense reconstruction ``W @ components_`` (n_samples x n_features); for small inputs only."""
        check_fitted(self)
        W = np.asarray(W)
        return np.asarray(self.components_.T @ W.T).T

    # ------------------------------------------------------------------ persistence (rlsi.io)
    def _to_state(self):
        """(meta, arrays) for :func:`rlsi.io.save`: parameters, fitted scalars and fitted arrays."""
        check_fitted(self)
        params = {k: json_value(k, v) for k, v in self.get_params(deep=False).items()}
        fitted = {k: json_value(k, getattr(self, k)) for k in self._state_scalars if hasattr(self, k)}
        groups = getattr(self, "topic_groups_", None)
        if groups:
            fitted["topic_groups_"] = {name: [int(a), int(b)] for name, (a, b) in groups.items()}
        arrays = {k: getattr(self, k) for k in self._state_arrays if getattr(self, k, None) is not None}
        return {"state_version": self._state_version, "params": params, "fitted": fitted}, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        # models saved before state versions were recorded are version 1
        version = meta.get("state_version", 1)
        if version != cls._state_version:
            raise RLSIError(f"{cls.__name__} state version {version!r} is not supported (this rlsi reads "
                            f"version {cls._state_version})")
        if not isinstance(meta.get("params"), dict) or not isinstance(meta.get("fitted"), dict):
            raise RLSIError(f"{cls.__name__} state has no parameter or fitted-value table")
        est = cls(**cls._params_from_state(meta["params"]))
        est._validate_params()
        for key, value in meta["fitted"].items():
            if key not in cls._state_scalars and key != "topic_groups_":
                raise RLSIError(f"{cls.__name__} state has an unknown fitted value {key!r}")
            setattr(est, key, value)
        for key in cls._state_arrays:
            if key in arrays:
                setattr(est, key, arrays[key])
        est._after_load()
        return est

    @classmethod
    def _params_from_state(cls, params):
        """The constructor's keywords from a saved model's JSON parameters: a parameter whose constraint has a
        ``from_json`` (a value saved as JSON, such as a tuning) is made again by it."""
        params = dict(params)
        for name, constraint in parameter_constraints(cls).items():
            if name in params and callable(getattr(constraint, "from_json", None)):
                params[name] = constraint.from_json(params[name])
        return params

    def _after_load(self):
        """Check the loaded state (shapes, dtypes, groups); subclasses extend it and rebuild caches."""
        check_fitted(self)
        comp = self.components_
        K = getattr(self, "n_components_", getattr(self, "n_components", comp.shape[0]))  # topics now (grown)
        if comp.ndim != 2 or comp.shape != (K, self.n_features_in_):
            raise RLSIError(f"components has shape {comp.shape}, expected {(K, self.n_features_in_)}")
        if comp.dtype not in (np.float32, np.float64):
            raise RLSIError(f"components has dtype {comp.dtype}; expected float32 or float64")
        data = comp.data if sp.issparse(comp) else comp
        if not np.all(np.isfinite(data)):
            raise RLSIError("components holds NaN or infinite values")
        groups = getattr(self, "topic_groups_", None)
        if groups is not None:
            spans = sorted(tuple(v) for v in groups.values())
            if (not all(len(s) == 2 and all(isinstance(i, int) for i in s) for s in spans)
                    or spans[0][0] != 0 or spans[-1][1] != K
                    or any(s[1] != t[0] for s, t in zip(spans, spans[1:])) or any(a >= b for a, b in spans)):
                raise RLSIError(f"topic groups {groups!r} do not partition the {K} topics")
        self._set_components(comp)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _transpose(comp):
    return comp.T.tocsr() if sp.issparse(comp) else np.asarray(comp).T


def json_value(name, value):
    """A parameter or fitted scalar as a JSON value (numpy scalars unwrapped; a Generator seed dropped)."""
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.random.Generator, np.random.RandomState)):
        return None  # the state of a generator object is not reproducible from a file; documented
    if callable(getattr(value, "__rlsi_json__", None)):  # a value that says how it is saved (a tuning, a placement)
        return value.__rlsi_json__()
    if isinstance(value, (list, tuple)):  # seed words, topic labels
        return [json_value(name, v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):  # e.g. tuning={"screen": False}
        return {k: json_value(f"{name}[{k!r}]", v) for k, v in value.items()}
    raise RLSIError(f"parameter {name}={value!r} cannot be saved (not a JSON value)")
