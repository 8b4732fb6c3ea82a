"""Topic matching for group models (Wang et al., SIGIR 2012, §7.3): the query takes the document's class.

A group model (:class:`~rlsi.models.group.GroupRLSI`, :class:`~rlsi.models.group_nmf.GroupNMF` and the
class-only CRLSI / CNMF) represents a document of class p on its class's topics ``Ũp = [U0, Up]``. A query
has no class. The paper's heuristic scores a query ``q`` against a document ``d`` of class ``y_d`` in the
topic space of that class::

    s_topic(q, d) = cos(v_q^(y_d), v_d^(y_d)),      v_x^(p) = fold(x, Ũp)

so a query is folded in once per class (``P`` folds, not one per document) and every document is compared
with the query's vector in its own class. This is what :class:`ClassTopicMatcher` computes, behind the
interface of :class:`~rlsi.retrieval.topic.TopicMatcher` (``fit`` on the documents, ``score`` the
queries), and :func:`topic_matcher` picks it for group models, so the evaluation protocol
(:mod:`rlsi.experiments`) and any other caller score every model alike.

Folding-in ``fold(x, Ũp)``: ``fold_lambda2=None`` is the model's own (GRLSI: its ridge with λ₂ and
document penalty; GNMF: non-negative least squares, Eq. 10); ``inf`` the projection ``Ũpᵀx``; a finite
value the ridge ``(ŨpᵀŨp + λI)⁻¹ Ũpᵀx`` — the same family as :class:`~rlsi.retrieval.topic.RidgeFolding`,
which is unwrapped by :func:`topic_matcher` so a grid over the folding λ works for group models too.

Document classes: ``doc_labels="fit"`` when the indexed documents are the model's training documents, in
order (their classes are the model's ``labels_``: the given or derived training labels); an array of
labels; or ``None``, each document taking the class of smallest reconstruction error
(:meth:`~rlsi.models.group_base.GroupModel.predict`, §4.3).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .._validation import check_number
from ..errors import ModelFormatError, NotFittedError, RLSIError
from ..io.safety import check_float_values
from ..models.group_base import GroupModel, check_labels
from ..models.squared import fold_in
from .topic import RidgeFolding, TopicMatcher, model_input, normalize_rows

__all__ = ["ClassTopicMatcher", "topic_matcher"]

_STATE_VERSION = 1


def topic_matcher(model, *, doc_labels=None, dtype=np.float64):
    """The topic matcher of ``model``: :class:`ClassTopicMatcher` for a group model (also when wrapped in
    :class:`~rlsi.retrieval.topic.RidgeFolding`, whose λ becomes the folding λ), else
    :class:`~rlsi.retrieval.topic.TopicMatcher`. ``doc_labels`` is used by group models only."""
    if isinstance(model, RidgeFolding) and isinstance(model.model, GroupModel):
        return ClassTopicMatcher(model.model, fold_lambda2=model.lambda2, doc_labels=doc_labels, dtype=dtype)
    if isinstance(model, GroupModel):
        return ClassTopicMatcher(model, doc_labels=doc_labels, dtype=dtype)
    return TopicMatcher(model, dtype=dtype)


class ClassTopicMatcher:
    """Topic matching scores of queries against documents of a group model, by the §7.3 heuristic.

    Parameters
    ----------
    model : a fitted :class:`~rlsi.models.group_base.GroupModel`.
    fold_lambda2 : None (the model's own folding-in), ``inf`` (projection) or a ridge λ ≥ 0.
    doc_labels : "fit", None or labels — the class of each indexed document (see the module docstring);
        ``fit(..., y=labels)`` overrides it.
    dtype : float type of the cached document vectors.

    Attributes (after :meth:`fit`)
    ------------------------------
    doc_classes_ : (n_docs,) int — class index (into ``model.classes_``) of each document.
    doc_vectors_ : (n_docs, K) — L2-normalised document vectors in the model's K-topic layout (non-zero
        only in the columns of the document's class, ``[0, Ks) ∪ class p's``).
    """

    def __init__(self, model=None, *, fold_lambda2=None, doc_labels=None, dtype=np.float64):
        self.model = model
        self.fold_lambda2 = fold_lambda2
        self.doc_labels = doc_labels
        self.dtype = dtype

    # ------------------------------------------------------------------ folding-in on one class
    def _check_model(self):
        if not isinstance(self.model, GroupModel):
            raise RLSIError(f"ClassTopicMatcher needs a fitted group model (GroupRLSI, GroupNMF, CRLSI, CNMF), "
                            f"got {type(self.model).__name__}; use TopicMatcher for other models")
        lam = self.fold_lambda2
        if lam is not None and not (isinstance(lam, (int, float, np.floating)) and math.isinf(lam)):
            check_number("fold_lambda2", lam, low=0.0)
        return self.model._layout()

    def fold_class(self, X, p):
        """Raw vectors (n_samples, Ks + Kc_p) of the rows of X on class p's topics Ũp (index p of
        ``model.classes_``), by the matcher's folding-in."""
        layout = self._check_model()
        X = self.model._check_X(X, reset=False)
        if not 0 <= p < layout.n_classes:
            raise RLSIError(f"class index {p} is out of range; the model has {layout.n_classes} classes")
        lam = self.fold_lambda2
        if lam is None:
            return np.asarray(self.model._fold_class(X, p)[0], dtype=np.float64)
        U = self.model.class_topics_matrix(p)  # terms x (Ks + Kc_p)
        if math.isinf(lam):
            V = X @ U
            return np.asarray(V.toarray() if sp.issparse(V) else V, dtype=np.float64)
        return fold_in(X, U, penalty="l2", lam=float(lam), dtype=np.float64)

    # ------------------------------------------------------------------ index
    def _doc_classes(self, X, y):
        layout = self.model._layout()
        labels = self.doc_labels if y is None else y
        if isinstance(labels, str) and labels == "fit":
            idx = getattr(self.model, "labels_", None)
            if idx is None:
                raise RLSIError("doc_labels='fit' needs the model's training labels (labels_), which a loaded model "
                                "does not keep; pass the documents' class labels instead")
            if len(idx) != X.shape[0]:
                raise RLSIError(f"doc_labels='fit' but the model was fitted on {len(idx)} documents and {X.shape[0]} "
                                f"are indexed; index the training documents or pass their class labels")
            return np.asarray(idx, dtype=np.int64)
        if labels is None:
            return np.asarray(self.model._fold(X, None)[1], dtype=np.int64)
        return layout.index_of(check_labels(labels, X.shape[0]), name="document labels")

    def fit(self, X=None, *, tfidf=None, counts=None, y=None):
        """Fold in the documents, each on its class's topics, and cache their normalised vectors.

        Documents as ``X`` or ``tfidf=``/``counts=`` (as :meth:`TopicMatcher.fit`); ``y``: their class
        labels (default: ``doc_labels``).
        """
        layout = self._check_model()
        if X is None:
            X = model_input(self.model, tfidf=tfidf, counts=counts)
        X = self.model._check_X(X, reset=False)
        classes = self._doc_classes(X, y)
        V = np.zeros((X.shape[0], layout.n_topics), dtype=self.dtype)
        for p in np.unique(classes):
            rows = np.flatnonzero(classes == p)
            V[np.ix_(rows, layout.columns(p))] = normalize_rows(self.fold_class(X[rows], int(p)), dtype=self.dtype)
        self.doc_classes_ = classes
        self.doc_vectors_ = V
        self._checked_for = self.model  # the classes are this model's
        return self

    def _check_fitted(self):
        if getattr(self, "doc_vectors_", None) is None:
            raise NotFittedError("ClassTopicMatcher is not fitted: call fit(documents) first")

    @property
    def n_docs_(self):
        self._check_fitted()
        return self.doc_vectors_.shape[0]

    def attach(self, model):
        """Use ``model`` for the queries (after loading an index, whose model is saved apart): a group model,
        or one wrapped in :class:`~rlsi.retrieval.topic.RidgeFolding`, whose λ becomes the folding λ. Checks
        that the index fits it (its topics, its classes), once per model (the searcher attaches its model
        for every query; the classes of a memory-mapped index are read once); returns self."""
        if isinstance(model, RidgeFolding):
            self.model, self.fold_lambda2 = model.model, model.lambda2
        else:
            self.model, self.fold_lambda2 = model, None
        if not isinstance(self.model, GroupModel):
            raise ModelFormatError(f"the index was built for a group model (its documents have classes, §7.3) "
                                   f"but the model is a {type(self.model).__name__}: rebuild the index")
        layout = self.model._layout()
        fitted = getattr(self, "doc_vectors_", None) is not None
        if fitted and getattr(self, "_checked_for", None) is not self.model:
            if self.doc_vectors_.shape[1] != layout.n_topics:
                raise ModelFormatError(f"the index holds {self.doc_vectors_.shape[1]}-topic vectors but the model "
                                       f"has {layout.n_topics} topics: rebuild the index")
            if len(self.doc_classes_) and int(self.doc_classes_.max()) >= layout.n_classes:
                raise ModelFormatError(f"the index names class {int(self.doc_classes_.max())} but the model has "
                                       f"{layout.n_classes} classes: rebuild the index")
            self._checked_for = self.model
        return self

    # ------------------------------------------------------------------ scoring
    def score(self, X=None, *, tfidf=None, counts=None, docs=None):
        """Topic matching scores, dense ``(n_queries, n_docs)`` float64 in [-1, 1]: each query folded in
        on the class of each document it is scored against (once per class). ``docs``: the indices of the
        documents to score (sorted, for a memory-mapped index read in file order), default all."""
        self._check_fitted()
        layout = self._check_model()
        if X is None:
            X = model_input(self.model, tfidf=tfidf, counts=counts)
        X = self.model._check_X(X, reset=False)
        if self.doc_vectors_.shape[1] != layout.n_topics:
            raise RLSIError(f"the model has {layout.n_topics} topics but the index holds vectors of "
                            f"{self.doc_vectors_.shape[1]}: the index was built with another model")
        docs = np.arange(self.doc_vectors_.shape[0]) if docs is None else np.asarray(docs, dtype=np.int64)
        classes = np.asarray(self.doc_classes_[docs])
        S = np.zeros((X.shape[0], len(docs)), dtype=np.float64)
        for p in np.unique(classes):
            sel = np.flatnonzero(classes == p)
            cols = layout.columns(int(p))
            Q = normalize_rows(self.fold_class(X, int(p)), dtype=self.dtype)
            S[:, sel] = Q @ np.asarray(self.doc_vectors_[np.ix_(docs[sel], cols)]).T
        return S

    # ------------------------------------------------------------------ persistence (arrays only)
    def _to_state(self):
        """(meta, arrays) of the cached document vectors and classes (the model is saved separately; the
        folding λ is the searcher's parameter)."""
        self._check_fitted()
        return ({"class": "ClassTopicMatcher", "version": _STATE_VERSION, "dtype": np.dtype(self.dtype).name},
                {"doc_vectors": np.ascontiguousarray(self.doc_vectors_),
                 "doc_classes": np.ascontiguousarray(self.doc_classes_, dtype=np.int64)})

    @classmethod
    def _from_state(cls, meta, arrays, model=None):
        """Rebuild from :meth:`_to_state`, checking it as untrusted input (the classes against the model in
        :meth:`attach`)."""
        if not isinstance(meta, dict) or meta.get("version") != _STATE_VERSION:
            version = meta.get("version") if isinstance(meta, dict) else None
            raise ModelFormatError(f"ClassTopicMatcher state version {str(version)[:20]!r} is not supported")
        V, classes = arrays.get("doc_vectors"), arrays.get("doc_classes")
        if (not isinstance(V, np.ndarray) or V.ndim != 2 or V.dtype.kind != "f" or meta.get("dtype")
                not in ("float64", "float32")):
            raise ModelFormatError("damaged ClassTopicMatcher state: the document vectors are not a 2-D float array")
        if (not isinstance(classes, np.ndarray) or classes.ndim != 1 or classes.dtype.kind not in "iu"
                or len(classes) != V.shape[0] or (len(classes) and int(classes.min()) < 0)):
            raise ModelFormatError(f"damaged ClassTopicMatcher state: the document classes are not {V.shape[0]} "
                                   "class indices")
        check_float_values(V, "damaged ClassTopicMatcher state: the document vectors")
        m = cls(None, dtype=np.dtype(meta["dtype"]).type)
        m.doc_vectors_ = V
        m.doc_classes_ = np.asarray(classes, dtype=np.int64)
        if model is not None:
            m.attach(model)
        return m

    def __repr__(self):
        return (f"ClassTopicMatcher({self.model!r}, fold_lambda2={self.fold_lambda2!r}, "
                f"doc_labels={self.doc_labels!r})")
