"""What Group RLSI and Group NMF share: classes, the topic layout, folding-in with and without a label.

Group matrix factorization (Wang, Cao, Xu & Li, SIGIR 2012) models a document of class p with the
``Ks`` shared topics ``U0`` and the ``Kc_p`` topics ``Up`` of its own class: ``d ≈ Ũp v`` with
``Ũp = [U0, Up]`` (Eq. 1). The fitted model stores all topics in one ``components_`` (K x M, one topic
per row, ``K = Ks + Σ Kc_p``) with the named groups ``"shared"`` → rows ``[0, Ks)`` and
``"class:<label>"`` → the class's rows (a class with ``Kc_p = 0`` has no group), so topic inspection,
persistence and retrieval treat it like any other :class:`rlsi.models.base.TopicModel`.

Document vectors live in the same K-dimensional layout: a document of class p has its shared weights in
columns ``[0, Ks)``, its class weights in the class's columns and zeros elsewhere (what ``transform``
and ``fit_transform`` return).

Folding-in (§4.3, §5.3): with labels, ``v = argmin ‖d − Ũ_y v‖² + λ₂Q(v)`` (Eq. 8; Eq. 10 for GNMF: no
penalty, ``v ≥ 0``); without, each class's error ``E(d; Ũp) = min_v ‖d − Ũp v‖² + λ₂Q(v)`` is computed
and the document takes the class of the smallest error (``predict``) and its vector.

Classes: ``fit(X, y)`` takes one label per document. For collections with no labels,
``classes="kmeans:P"`` derives P classes by k-means on the L2-normalised tf-idf rows (see
:func:`derive_classes`). For scikit-learn the models are supervised transformers (like ``SelectKBest``):
their tags say that ``fit`` needs y (unless ``classes`` derives it), so pipelines and the estimator checks
pass the labels.
"""

from __future__ import annotations

import logging
import numbers

import numpy as np
import scipy.sparse as sp

from .._rows import l2_normalize_rows
from .._validation import check_random_state
from ..errors import RLSIError
from ..kernels.products import csr_csr_dense, csr_dense_rows
from . import steps
from .base import TopicModel, check_fitted
from .skeleton import AlternatingFit
from .penalties import SolverSettings
from .penalties import penalty as get_penalty

log = logging.getLogger(__name__)

SHARED = "shared"


def class_group(label):
    """Name of the topic group of class ``label``."""
    return f"class:{label}"


# ---------------------------------------------------------------------------------------------- classes
def derive_classes(X, spec, random_state=None):
    """Class labels (ints 0..P-1) for the rows of X from ``spec = "kmeans:P"``.

    k-means (scikit-learn ``KMeans``, k-means++ seeding, 3 restarts) on the L2-normalised tf-idf rows.
    On unit vectors the squared Euclidean distance is ``2 − 2 cos``, so this groups documents by cosine
    similarity like spherical k-means; unlike spherical k-means its centroids are not re-normalised, which
    changes little for a partition and keeps to a tested, seeded implementation. The classes only have to
    be coherent enough for the class topics to specialise (the paper's Web-I classes came from a
    classifier), not optimal. The labels of the last few (matrix, P, seed) are cached, so a grid of fits on
    one collection clusters once. A derived cluster with fewer non-empty documents than ``n_class_topics``
    gets that many class topics (see ``GroupModel._prepare_classes``).
    """
    from sklearn.cluster import KMeans

    kind, _, count = str(spec).partition(":")
    if kind != "kmeans" or not count.isdigit() or int(count) < 1:
        raise RLSIError(f"classes={spec!r} is not understood; use None (labels from y) or 'kmeans:P' with P "
                        f"a positive number of classes, e.g. 'kmeans:8'")
    P = int(count)
    if P > X.shape[0]:
        raise RLSIError(f"classes={spec!r} asks for {P} classes but X has only {X.shape[0]} documents")
    seed = int(check_random_state(random_state).integers(2**31 - 1))
    # a grid of the ranking protocol fits many models on the same matrix with the same seed: cluster once
    key = (_matrix_digest(X), P, seed)
    cached = _DERIVED.get(key)
    if cached is not None:
        return cached.copy()
    km = KMeans(n_clusters=P, n_init=3, random_state=seed)
    labels = km.fit_predict(l2_normalize_rows(X, dtype=np.float64))
    if len(_DERIVED) >= _DERIVED_SIZE:
        _DERIVED.pop(next(iter(_DERIVED)))
    _DERIVED[key] = labels
    return labels.copy()


_DERIVED = {}      # (matrix digest, P, seed) -> labels; a few entries, oldest dropped first
_DERIVED_SIZE = 4


def _matrix_digest(X):
    """A digest of a CSR matrix's shape and contents (the key of the clustering cache)."""
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    h.update(repr((X.shape, X.nnz, X.dtype.str)).encode())
    for a in (X.indptr, X.indices, X.data):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _is_missing(v):
    return v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v.strip())


def check_labels(y, n_docs, name="y"):
    """y as a 1-d array of n_docs labels (no missing ones): ints stay ints, anything else becomes str."""
    if isinstance(y, np.ndarray) and y.dtype.kind in "iu" and y.size == n_docs:
        return y.ravel().astype(np.int64)  # fast path: an integer array has no missing label to look for
    values = list(np.asarray(y, dtype=object).ravel()) if not isinstance(y, list) else list(y)
    if len(values) != n_docs:
        raise RLSIError(f"{name} has {len(values)} labels for {n_docs} documents; give one class label per "
                        f"document")
    missing = [i for i, v in enumerate(values) if _is_missing(v)]
    if missing:
        raise RLSIError(f"{name} is missing the class label of {len(missing)} of {n_docs} documents (first: "
                        f"document {missing[0]}); give every document a class or drop those documents")
    if all(isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, bool) for v in values):
        return np.asarray(values, dtype=np.int64)
    return np.asarray([str(v) for v in values])


class ClassLayout:
    """Where each class's documents and topics are.

    classes : (P,) sorted labels; class_topics : (P,) Kc_p; n_shared : Ks.
    topic columns of class p: ``[0, Ks) ∪ [start_p, stop_p)`` of the K = Ks + Σ Kc_p topics.
    """

    def __init__(self, classes, class_topics, n_shared):
        self.classes = np.asarray(classes)
        self.class_topics = np.asarray(class_topics, dtype=np.int64)
        self.n_shared = int(n_shared)
        self.starts = self.n_shared + np.concatenate([[0], np.cumsum(self.class_topics)[:-1]]).astype(np.int64)
        self.n_topics = self.n_shared + int(self.class_topics.sum())

    @property
    def n_classes(self):
        return len(self.classes)

    def columns(self, p):
        """Topic indices (into the K topics) of class p's Ũp = [U0, Up]."""
        a = int(self.starts[p])
        return np.concatenate([np.arange(self.n_shared), np.arange(a, a + int(self.class_topics[p]))])

    def groups(self):
        out = {}
        if self.n_shared:
            out[SHARED] = (0, self.n_shared)
        for p, label in enumerate(self.classes):
            if self.class_topics[p]:
                a = int(self.starts[p])
                out[class_group(label)] = (a, a + int(self.class_topics[p]))
        return out

    def index_of(self, y, name="y"):
        """Class indices 0..P-1 of the labels y; unknown labels are an error."""
        y = np.asarray(y)
        if self.classes.dtype.kind in "iu" and y.dtype.kind not in "iu":
            y = np.asarray([str(v) for v in y])
            classes = np.asarray([str(c) for c in self.classes])
        elif self.classes.dtype.kind not in "iu":
            y, classes = np.asarray([str(v) for v in y]), self.classes
        else:
            classes = self.classes
        idx = np.searchsorted(classes, y)
        idx = np.minimum(idx, len(classes) - 1)
        bad = classes[idx] != y
        if np.any(bad):
            unknown = sorted({str(v) for v in y[bad]})
            raise RLSIError(f"{name} has labels not seen in fit ({', '.join(unknown[:5])}); the model knows the "
                            f"classes {', '.join(map(str, classes[:10]))}{' ...' if len(classes) > 10 else ''}")
        return idx


def resolve_class_topics(n_class_topics, classes):
    """(P,) Kc per class from an int or a mapping class → Kc (keys matched as given or as strings)."""
    if isinstance(n_class_topics, dict):
        by_str = {str(k): v for k, v in n_class_topics.items()}
        missing = [c for c in classes if c not in n_class_topics and str(c) not in by_str]
        if missing:
            raise RLSIError(f"n_class_topics has no entry for the classes {', '.join(map(str, missing[:5]))}; give "
                            f"a number of topics for every class (0 for none)")
        values = [n_class_topics.get(c, by_str.get(str(c))) for c in classes]
    else:
        values = [n_class_topics] * len(classes)
    for c, v in zip(np.asarray(classes).tolist(), values):
        if not isinstance(v, (numbers.Integral, np.integer)) or isinstance(v, bool) or v < 0:
            raise RLSIError(f"n_class_topics for class {c!r} is {v!r}; it must be an integer >= 0")
    return np.asarray(values, dtype=np.int64)


# ---------------------------------------------------------------------------------------------- R rows
class ResidualR:
    """Rows of ``R = D W − U_o C``: the statistics of the U0 step (Eq. 5, ``D Hᵀ − Σ Up Wp Hpᵀ``) and of
    the Up step (Eq. 7, ``Dp Wpᵀ − U0 Hp Wpᵀ``), as an ``r_rows(a, b)`` provider for
    :func:`rlsi.models.steps.update_topics`.

    D : CSR terms x documents (M x N'); W : (N' x k) document weights of the topics being solved;
    U_o : CSR (M x k') the other topics (or None: zero, as in Algorithm 1's first iteration);
    C : (k' x k) the cross Gram of their weights.
    """

    def __init__(self, D, W, U_other=None, C=None):
        self.D = D
        self.W = np.ascontiguousarray(W)
        self.U_other = U_other if (U_other is not None and U_other.nnz) else None
        self.C = None if self.U_other is None else np.ascontiguousarray(C, dtype=self.W.dtype)

    def __call__(self, a, b):
        R = csr_dense_rows(self.D, a, b, self.W, dtype=self.W.dtype)
        if self.U_other is not None:
            R -= csr_dense_rows(self.U_other, a, b, self.C, dtype=R.dtype)
        return R


# ---------------------------------------------------------------------------------------------- model
class ClassSplit:
    """The training documents by class: ``layout`` (:class:`ClassLayout`), ``idx`` (class index of each
    document), ``order``/``offsets`` (:func:`split_by_class`) and ``Xs`` (each class's rows of X, CSR)."""

    def __init__(self, X, layout, idx):
        self.layout, self.idx = layout, idx
        self.order, self.offsets = split_by_class(X, idx, layout.n_classes)
        self.Xs = [X[self.rows(p)] for p in range(layout.n_classes)]

    def rows(self, p):
        """Indices (into X) of the documents of class p, in order."""
        return self.order[self.offsets[p]:self.offsets[p + 1]]


class GroupModel(AlternatingFit, TopicModel):
    """Base of :class:`~rlsi.models.group.GroupRLSI` and :class:`~rlsi.models.group_nmf.GroupNMF`.

    Subclasses define ``_fold_penalty`` / ``_fold_lambda`` (Q and λ₂ of the folding-in) and the skeleton's
    ``_start`` (:class:`rlsi.models.skeleton.AlternatingFit`): it calls :meth:`_split` and returns a problem
    with ``split`` (the :class:`ClassSplit`), ``components()`` (K x M) and ``doc_vectors`` (per class, Np x
    (Ks + Kc_p)); the finish and the training document vectors are written here.
    """

    _state_scalars = ("n_iter_", "n_features_in_", "n_shared_topics_")
    _state_arrays = ("components_", "objective_", "classes_", "class_topics_")
    _fold_penalty = "l2"
    #: ``fit_transform``'s vectors: False, the fit's last V-step (GRLSI's is already the exact ridge solution
    #: on the final topics); True, each training document folded in again on its class's final topics, so
    #: that ``fit_transform(X, y)`` equals ``transform(X, y)`` where the V-step is not exact (GNMF's
    #: multiplicative update)
    _refold_training = False

    def _fold_lambda(self):
        return 0.0

    # ------------------------------------------------------------------ classes at fit time
    def _prepare_classes(self, X, y):
        """Labels → (layout, class index per document). Checks the issue's bad inputs in one line each."""
        name = type(self).__name__
        if self.classes is not None:
            if y is not None:
                raise RLSIError(f"{name} got both y and classes={self.classes!r}; pass labels in y or derive "
                                f"classes by clustering, not both")
            y = derive_classes(X, self.classes, self.random_state)
        elif y is None:
            # the wording scikit-learn's check_requires_y_none accepts for an estimator that needs y
            raise RLSIError(f"{name} requires y to be passed, but the target y is None; pass one class label "
                            f"per document, or classes='kmeans:P' to derive P classes by clustering")
        y = check_labels(y, X.shape[0])
        classes, idx, counts = np.unique(y, return_inverse=True, return_counts=True)
        Kc = resolve_class_topics(self.n_class_topics, classes)
        Ks = int(self.n_shared_topics)
        if Ks == 0 and not Kc.any():
            raise RLSIError(f"n_shared_topics=0 and n_class_topics=0 leave {name} without topics; set at least "
                            f"one of them above 0")
        nonempty = np.diff(X.indptr) > 0
        n_nonempty = np.bincount(idx, weights=nonempty, minlength=len(classes)).astype(np.int64)
        if self.classes is not None:
            # derived clusters are not the user's classes: one smaller than Kc gets as many class topics as
            # it has documents instead of failing the fit (k-means on a small collection makes such clusters)
            small = Kc > n_nonempty
            if small.any():
                log.info("%d derived class(es) have fewer documents than n_class_topics; their Kc is "
                         "lowered to their document count", int(small.sum()))
                Kc = np.minimum(Kc, n_nonempty)
        for p, c in enumerate(classes.tolist()):  # Python values: messages say 'c1', not np.str_('c1')
            if n_nonempty[p] < Kc[p]:
                raise RLSIError(f"class {c!r} has {n_nonempty[p]} non-empty documents, fewer than its "
                                f"{Kc[p]} class topics; lower n_class_topics for it or merge/drop the class")
        if Ks > int(nonempty.sum()):
            raise RLSIError(f"n_shared_topics={Ks} is larger than the number of non-empty documents "
                            f"({int(nonempty.sum())})")
        # each class factorises its documents with its own Ks + Kc_p topics (Ũp), so that is what the
        # vocabulary bounds, as n_components for BatchRLSI; the total over all classes may exceed it
        widest = int(np.argmax(Kc))
        if Ks + int(Kc[widest]) > X.shape[1]:
            raise RLSIError(f"X has {X.shape[1]} feature(s) (terms), fewer than the {Ks + int(Kc[widest])} topics "
                            f"of class {classes.tolist()[widest]!r} (n_shared_topics + n_class_topics); lower them")
        return ClassLayout(classes, Kc, Ks), idx

    def _split(self, X, y):
        """The training documents by class (:class:`ClassSplit`); sets ``n_features_in_``."""
        layout, idx = self._prepare_classes(X, y)
        self.n_features_in_ = X.shape[1]
        return ClassSplit(X, layout, idx)

    def _finish(self, problem, trace, X):
        layout = problem.split.layout
        self.classes_ = layout.classes
        self.class_topics_ = layout.class_topics
        self.n_shared_topics_ = layout.n_shared
        self.topic_groups_ = layout.groups()
        self.objective_ = np.asarray(trace.objectives, dtype=np.float64)
        self.n_iter_ = int(trace.n_iter)
        self._set_components(problem.components().astype(X.dtype, copy=False))
        self._prepare_class_topics()
        self.labels_ = problem.split.idx

    def _fit_output(self, problem, X):
        """The training document vectors (n_samples x K, the layout of :meth:`transform`)."""
        split = problem.split
        out = np.zeros((X.shape[0], split.layout.n_topics), dtype=X.dtype)
        for p, V in enumerate(problem.doc_vectors):
            if self._refold_training:
                V = self._fold_class(split.Xs[p], p)[0]
            self._scatter(out, split.rows(p), p, V)
        return out

    def _after_load(self):
        super()._after_load()
        self.classes_ = np.asarray(self.classes_)
        self.class_topics_ = np.asarray(self.class_topics_, dtype=np.int64)
        layout = self._layout()
        if len(self.class_topics_) != len(self.classes_):
            raise RLSIError(f"{type(self).__name__} state has {len(self.classes_)} classes but "
                            f"{len(self.class_topics_)} class topic counts: the model is damaged")
        if layout.n_topics != self.components_.shape[0]:
            raise RLSIError(f"{type(self).__name__} state has {self.components_.shape[0]} topics but its classes "
                            f"own {layout.n_topics} (with the shared ones): the model is damaged")
        self._prepare_class_topics()

    def _to_state(self):
        # a mapping class → Kc is saved as a JSON object (keys as strings, matched as strings on fit)
        mapping = self.n_class_topics if isinstance(self.n_class_topics, dict) else None
        if mapping is None:
            return super()._to_state()
        self.n_class_topics = 0
        try:
            meta, arrays = super()._to_state()
        finally:
            self.n_class_topics = mapping
        meta["params"]["n_class_topics"] = {str(k): int(v) for k, v in mapping.items()}
        return meta, arrays

    def _layout(self):
        check_fitted(self)
        return ClassLayout(self.classes_, self.class_topics_, self.n_shared_topics_)

    def _set_components(self, components):
        super()._set_components(components)
        self._class_topic_cache = None  # filled by _prepare_class_topics once the classes are known

    def _prepare_class_topics(self):
        """Compute every Ũp once when the topics are set (fit, load), so transform and predict only read
        the model (scikit-learn: they must not change the estimator)."""
        comp = self.components_
        self._class_topic_cache = (comp, [self._class_topics(comp, p) for p in range(len(self.classes_))])

    def _class_topics(self, comp, p):
        sub = comp[self._layout().columns(p)]
        return sub.T.tocsr() if sp.issparse(sub) else np.ascontiguousarray(np.asarray(sub).T)

    def class_topics_matrix(self, p):
        """Ũp = [U0, Up] as terms x (Ks + Kc_p) (CSR or dense like ``components_``).

        Prepared at fit/load; computed on the fly if ``components_`` was replaced by hand since."""
        check_fitted(self)
        comp = self.components_
        cached = self.__dict__.get("_class_topic_cache")
        if cached is not None and cached[0] is comp:
            return cached[1][p]
        return self._class_topics(comp, p)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a supervised transformer (like scikit-learn's SelectKBest): fit needs the class labels y,
        # unless the classes are derived by clustering
        tags.target_tags.required = self.classes is None
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = bool(getattr(self, "nonnegative", False))
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # ------------------------------------------------------------------ folding-in
    def _fold_class(self, X, p, want_error=False):
        """Vectors (n x (Ks+Kc_p)) of the rows of X on Ũp, and with ``want_error`` the errors E(d; Ũp)."""
        U = self.class_topics_matrix(p)
        pen = get_penalty(self._fold_penalty)
        lam = self._fold_lambda()
        step = pen.prepared(steps.topic_gram(U), lam)
        dtype = X.dtype
        Phi = csr_csr_dense(X, U, dtype=dtype) if sp.issparse(U) else np.asarray(X @ U, dtype=dtype)
        V, _ = step.solve(Phi, None, SolverSettings(self.inner_max_iter, self.inner_tol))
        V = np.asarray(V, dtype=np.float64)
        if not want_error:
            return V.astype(dtype, copy=False), None
        G = steps.topic_gram(U)
        xsq = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
        # E = ‖x‖² − 2 φ·v + vᵀGv + λ₂Q(v), without forming x − Ũv
        err = xsq - 2.0 * np.einsum("ij,ij->i", Phi, V) + np.einsum("ij,ij->i", V @ G, V)
        if lam:
            err += lam * (np.abs(V).sum(axis=1) if pen.norm == "l1" else np.square(V).sum(axis=1))
        return V.astype(dtype, copy=False), err

    def _scatter(self, out, rows, p, V):
        layout = self._layout()
        out[np.ix_(rows, layout.columns(p))] = V

    def transform(self, X, y=None):
        """Topic vectors (n_samples x n_components) of X with the topics frozen.

        With labels ``y`` each document is folded in on its class's topics (Eq. 8 / 10); without, it takes
        the class with the smallest reconstruction error (:meth:`predict`) and that class's vector.
        """
        X = self._check_X(X, reset=False)
        return self._fold(X, y)[0]

    def predict(self, X):
        """Class of each row of X: ``argmin_p E(d; Ũp)`` (§4.3). Returns labels from ``classes_``."""
        X = self._check_X(X, reset=False)
        return self.classes_[self._fold(X, None)[1]]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of :meth:`predict` on ``X`` against the labels ``y`` (as a scikit-learn classifier)."""
        from sklearn.metrics import accuracy_score

        return float(accuracy_score(np.asarray(y), self.predict(X), sample_weight=sample_weight))

    def _fold_in(self, X):
        return self._fold(X, None)[0]

    def _fold(self, X, y):
        layout = self._layout()
        out = np.zeros((X.shape[0], layout.n_topics), dtype=X.dtype)
        if y is not None:
            idx = layout.index_of(check_labels(y, X.shape[0]))
            for p in np.unique(idx):
                rows = np.flatnonzero(idx == p)
                self._scatter(out, rows, p, self._fold_class(X[rows], p)[0])
            return out, idx
        best = np.full(X.shape[0], np.inf)
        idx = np.zeros(X.shape[0], dtype=np.int64)
        vectors = []
        for p in range(layout.n_classes):
            V, err = self._fold_class(X, p, want_error=True)
            better = err < best
            best[better], idx[better] = err[better], p
            vectors.append(V)
        for p in range(layout.n_classes):
            rows = np.flatnonzero(idx == p)
            if len(rows):
                self._scatter(out, rows, p, vectors[p][rows])
        return out, idx

    # ------------------------------------------------------------------ topic inspection
    def group_summary(self, feature_names=None, n_terms=10):
        """Per topic group: ``{"topics": n, "avg_compactness": AvgComp, "top_terms": [[...], ...]}``.

        AvgComp (TOIS §8.2.1) is the mean share of non-zero term weights of the group's topics; top terms
        are given when ``feature_names`` (the vectorizer's vocabulary) is.
        """
        from ..quality.topics import avg_compactness, top_terms

        out = {}
        for name, (a, b) in self.topic_groups.items():
            comp = self.get_topics(name)
            entry = {"topics": b - a, "avg_compactness": avg_compactness(comp)}
            if feature_names is not None:
                entry["top_terms"] = top_terms(comp, feature_names, n=n_terms)
            out[name] = entry
        return out


def split_by_class(X, idx, n_classes):
    """Rows of each class: ``(order, offsets)`` with X[order] grouping the classes in order 0..P-1."""
    order = np.argsort(idx, kind="stable")
    offsets = np.concatenate([[0], np.cumsum(np.bincount(idx, minlength=n_classes))]).astype(np.int64)
    return order, offsets
