"""Topic matching (TOIS §7): cosine between folded-in query and document vectors.

For any fitted topic model with a ``transform`` method (every RLSI variant, and the baselines of
:mod:`rlsi.models.baselines`) the topic matching score of query ``q`` and document ``d`` is::

    s_topic(q, d) = <v_q, v_d> / (‖v_q‖ ‖v_d‖),      v_x = model.transform(x)

where ``transform`` is the model's own folding-in (ridge projection for RLSI with ℓ2 document vectors,
lasso for ℓ1, projection on the singular vectors for LSI, EM with frozen topics for PLSI, variational
inference for LDA, non-negative least squares for NMF). A zero vector (a query without any known term,
an empty document) has cosine 0 with everything.

Input kind. RLSI, LSI and NMF are fitted on tf-idf; PLSI and LDA are models of counts. A model says what
it wants through the attribute ``input_kind`` (``"tfidf"`` or ``"counts"``; absent means ``"tfidf"``) and
:func:`model_input` picks the matching matrix, so that the searcher and the evaluation protocol treat
every model alike.

:class:`TopicMatcher` folds the documents in once and keeps their L2-normalised vectors, so scoring a
batch of queries is one dense ``(n_queries x K) @ (K x n_docs)`` product.

:class:`RidgeFolding` replaces a model's folding-in by the ridge projection with another λ, or by the
plain projection ``v = Uᵀx`` (λ = inf), which the benchmark found best for RLSI (see its docstring).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .._validation import check_number
from .._rows import l2_normalize_rows
from ..errors import ModelFormatError, NotFittedError, RLSIError
from ..io import register
from ..io.safety import check_float_values
from ..models.squared import fold_in

__all__ = ["TopicMatcher", "RidgeFolding", "cosine_scores", "normalize_rows", "model_input", "INPUT_KINDS"]

_STATE_VERSION = 1

INPUT_KINDS = {"tfidf": "tf-idf weights (RLSI, LSI, NMF)", "counts": "raw term counts (PLSI, LDA)"}


def model_input(model, *, tfidf=None, counts=None):
    """The matrix ``model`` folds in: ``counts`` if ``model.input_kind == "counts"``, else ``tfidf``."""
    kind = getattr(model, "input_kind", "tfidf")
    if kind not in INPUT_KINDS:
        raise RLSIError(f"{type(model).__name__}.input_kind={kind!r} is not supported; use 'tfidf' or 'counts'")
    X = counts if kind == "counts" else tfidf
    if X is None:
        raise RLSIError(f"{type(model).__name__} folds in {kind} but no {kind} matrix was given")
    return X


def normalize_rows(V, dtype=np.float64):
    """Dense rows divided by their L2 norm; all-zero (or non-finite) rows become zero."""
    V = np.asarray(V.toarray() if sp.issparse(V) else V)
    if V.ndim != 2:
        raise RLSIError(f"topic vectors must be 2-D (n x K), got {V.ndim}-D")
    return l2_normalize_rows(V, dtype=dtype)


def cosine_scores(query_vectors, doc_vectors):
    """Cosine similarities ``(n_queries, n_docs)`` between rows of two dense (or sparse) matrices."""
    Q = normalize_rows(query_vectors)
    D = normalize_rows(doc_vectors)
    if Q.shape[1] != D.shape[1]:
        raise RLSIError(f"query vectors have {Q.shape[1]} topics but document vectors have {D.shape[1]}")
    return Q @ D.T


class TopicMatcher:
    """Topic matching scores of queries against an indexed set of documents.

    Parameters
    ----------
    model : a fitted topic model with ``transform`` (and optionally ``input_kind``).
    dtype : numpy float type of the cached document vectors (float64 default; float32 halves memory).

    Attributes (after :meth:`fit`)
    ------------------------------
    doc_vectors_ : ndarray (n_docs, K) — L2-normalised folded-in document vectors (zero rows for
        documents without any known term).
    """

    def __init__(self, model=None, *, dtype=np.float64):
        self.model = model
        self.dtype = dtype

    def _check_model(self):
        if self.model is None or not hasattr(self.model, "transform"):
            raise RLSIError("TopicMatcher needs a fitted topic model with a transform method")

    def fold_in(self, X):
        """Raw (unnormalised) topic vectors of the rows of X (the model's own input kind)."""
        self._check_model()
        V = self.model.transform(X)
        return np.asarray(V.toarray() if sp.issparse(V) else V)

    def fit(self, X=None, *, tfidf=None, counts=None):
        """Fold in the documents once and cache their normalised vectors.

        Give the documents either as ``X`` (already the model's input kind) or as ``tfidf=``/``counts=``
        (the one the model needs is chosen by :func:`model_input`).
        """
        if X is None:
            X = model_input(self.model, tfidf=tfidf, counts=counts)
        self.doc_vectors_ = normalize_rows(self.fold_in(X), dtype=self.dtype)
        return self

    def _check_fitted(self):
        if getattr(self, "doc_vectors_", None) is None:
            raise NotFittedError("TopicMatcher is not fitted: call fit(documents) first")

    @property
    def n_docs_(self):
        self._check_fitted()
        return self.doc_vectors_.shape[0]

    def query_vectors(self, X=None, *, tfidf=None, counts=None):
        """Normalised folded-in query vectors (n_queries, K)."""
        if X is None:
            X = model_input(self.model, tfidf=tfidf, counts=counts)
        return normalize_rows(self.fold_in(X), dtype=self.dtype)

    def attach(self, model):
        """Use ``model`` for the queries (after loading an index, whose model is saved apart); checks that the
        index holds vectors of the model's number of topics (when it has ``components_``); returns self."""
        self.model = model
        comps = getattr(model, "components_", None)
        V = getattr(self, "doc_vectors_", None)
        if comps is not None and V is not None and comps.shape[0] != V.shape[1]:
            raise ModelFormatError(f"the index holds {V.shape[1]}-topic vectors but the model has {comps.shape[0]} "
                                   f"topics (the model directory is damaged, or rebuild the index with --corpus)")
        return self

    def score(self, X=None, *, tfidf=None, counts=None, docs=None):
        """Topic matching scores, dense ``(n_queries, n_docs)`` float64, in [-1, 1]; ``docs``: the indices of
        the documents to score (sorted, for a memory-mapped index read in file order), default all."""
        self._check_fitted()
        Q = self.query_vectors(X, tfidf=tfidf, counts=counts)
        if Q.shape[1] != self.doc_vectors_.shape[1]:
            raise RLSIError(f"the model gives {Q.shape[1]} topics but the index holds vectors of "
                            f"{self.doc_vectors_.shape[1]}: the index was built with another model")
        V = self.doc_vectors_ if docs is None else np.asarray(self.doc_vectors_[docs])
        return np.asarray(Q @ V.T, dtype=np.float64)

    # ------------------------------------------------------------------ persistence (arrays only)
    def _to_state(self):
        """(meta, arrays) of the cached document vectors (the model is saved separately)."""
        self._check_fitted()
        return ({"class": "TopicMatcher", "version": _STATE_VERSION,
                 "dtype": np.dtype(self.dtype).name},
                {"doc_vectors": np.ascontiguousarray(self.doc_vectors_)})

    @classmethod
    def _from_state(cls, meta, arrays, model=None):
        if meta.get("version") != _STATE_VERSION:
            raise ModelFormatError(f"TopicMatcher state version {meta.get('version')!r} is not supported")
        try:
            V = np.asarray(arrays["doc_vectors"])
            dtype = np.dtype(meta.get("dtype", "float64")).type
        except (KeyError, TypeError) as exc:
            raise ModelFormatError(f"damaged TopicMatcher state: {exc}") from None
        if V.ndim != 2 or V.dtype.kind != "f":
            raise ModelFormatError("damaged TopicMatcher state: document vectors are not a finite 2-D array")
        # in chunks: a memory-mapped index (millions of vectors) is neither copied nor given a mask as big
        check_float_values(V, "damaged TopicMatcher state: the document vectors")
        m = cls(model, dtype=dtype)
        m.doc_vectors_ = V
        return m


@register("RidgeFolding")
class RidgeFolding:
    """A topic model whose folding-in is the ridge projection with a chosen ``lambda2``.

    ``transform(x) = argmin_v ‖x − U v‖² + λ v·v = (UᵀU + λI)⁻¹ Uᵀ x`` with the topics ``U`` of the wrapped
    model (``components_`` = Uᵀ). ``lambda2=None`` keeps the wrapped model's own ``transform``;
    ``lambda2=inf`` is the limit λ → ∞ up to a scale, the plain projection ``v = Uᵀ x`` — the cosine is
    scale-free, so only the direction matters. For RLSI, a folding ``lambda2`` larger than the training λ₂
    gives each query term the weight of its topics without the least-squares "explaining away" between
    overlapping topics (cross-validated MAP with the projection: +0.011 on MED, +0.007 on CISI, equal on
    Cranfield, ``benchmarks/bench_ranking.py``); for LSI (orthonormal topics) every λ gives the same cosines.

    ``fit`` fits the wrapped model; attributes not defined here (``components_``, ``input_kind``...) are
    the wrapped model's. Persistable with :mod:`rlsi.io` when the wrapped model is.
    """

    def __init__(self, model, lambda2=float("inf")):
        self.model = model
        self.lambda2 = lambda2

    def __getattr__(self, name):
        if name in ("model", "lambda2") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.model, name)

    @property
    def input_kind(self):
        return getattr(self.model, "input_kind", "tfidf")

    def fit(self, X, y=None):
        """Fit the wrapped model on X (n_samples x n_features). Returns self."""
        self.model.fit(X)
        return self

    def transform(self, X):
        """Topic vectors (n_samples x n_components) of X by the ridge projection with ``lambda2`` (see
        the class docstring)."""
        if self.lambda2 is None:
            return self.model.transform(X)
        if not (isinstance(self.lambda2, (int, float, np.floating)) and math.isinf(self.lambda2)):
            check_number("lambda2", self.lambda2, low=0.0)
        C = self.model.components_  # K x M
        if X.shape[1] != C.shape[1]:
            raise RLSIError(f"X has {X.shape[1]} features but the topics have {C.shape[1]}")
        if math.isinf(self.lambda2):
            # the wrapped model's term-major topics U, prepared once (transposing C for every query would
            # cost O(nnz(U) + n_terms): tens of milliseconds with a web-scale vocabulary)
            U = getattr(self.model, "topics_", None)
            XU = X @ (U if U is not None and U.shape == C.T.shape else C.T)
            return np.asarray(XU.toarray() if sp.issparse(XU) else XU, dtype=np.float64)
        # the one folding-in of the squared-loss models (rlsi.models.squared.fold_in), with this λ
        U = C.T.tocsr() if sp.issparse(C) else np.asarray(C).T
        return fold_in(sp.csr_matrix(X), U, penalty="l2", lam=float(self.lambda2), dtype=np.float64)

    def _to_state(self):
        inner = getattr(type(self.model), "_persist_name", None)
        if inner is None or not hasattr(self.model, "_to_state"):
            raise RLSIError(f"{type(self.model).__name__} cannot be saved (not registered with rlsi.io)")
        meta, arrays = self.model._to_state()
        lam = self.lambda2
        return ({"inner_class": inner, "inner_meta": meta,
                 "lambda2": None if lam is None else ("inf" if math.isinf(lam) else float(lam))},
                {f"inner_{k}": v for k, v in arrays.items()})

    @classmethod
    def _from_state(cls, meta, arrays):
        from ..io.store import _registered

        inner_cls = _registered(meta["inner_class"])  # its module imported on first use (rlsi.registry)
        if inner_cls is None:
            raise ModelFormatError(f"unknown wrapped model class {meta['inner_class']!r}")
        inner = inner_cls._from_state(meta["inner_meta"],
                                      {k[len("inner_"):]: v for k, v in arrays.items() if k.startswith("inner_")})
        lam = meta["lambda2"]
        return cls(inner, float("inf") if lam == "inf" else lam)

    def __repr__(self):
        return f"RidgeFolding({self.model!r}, lambda2={self.lambda2!r})"
