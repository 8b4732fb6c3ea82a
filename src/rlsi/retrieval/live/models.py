"""Model versions of a live index: each topic model the index served or will serve, with its vectorizer,
kept in the index folder, and the folding-in of documents and queries with one of them.

A version is an integer the index gives each model it is handed (1, 2, ...: ``LiveIndex.update_model``).
Its files are ``model-vN.model.*`` and ``model-vN.vectorizer.*`` in the layout of :mod:`rlsi.io.store`
(each with its CRC-32 in the manifest); the version that serves queries is also the folder's ``model`` and
``vectorizer`` components, so ``rlsi topics`` and ``rlsi transform`` read a live index as a model folder.

Folding-in reads a document's raw counts over the index vocabulary (which holds every token ever added,
:mod:`rlsi.retrieval.live.vocabulary`) and its length, maps them onto the vectorizer's columns and weighs
them with the vectorizer's own tf-idf (:meth:`rlsi.text.TfidfVectorizer.weight_counts`): the same matrix as
``vectorizer.transform(text)``, so a document added as text, a merged one and a re-folded one all get the
vector the static :class:`~rlsi.retrieval.topic.TopicMatcher` gives it. The vectors are L2-normalised, as
there. An index of vectorised documents (no vectorizer) folds the tf-idf its caller gives, or, to re-fold,
what its ``weigh(counts, lengths)`` function makes of the stored counts.
"""

from __future__ import annotations

import threading

import numpy as np
import scipy.sparse as sp

from ...errors import ModelFormatError, RLSIError
from ...io.integrity import file_entries, record_digests
from ...io.store import read_component, write_component
from ..topic import RidgeFolding, TopicMatcher, normalize_rows

__all__ = ["ModelVersion", "write_version", "read_version", "version_files", "check_model"]

_TOKENIZER_PARAMS = ("lowercase", "stop_words", "stemmer", "token_pattern", "min_length")


def check_model(model, vectorizer):
    """RLSIError unless ``model`` (or None) and ``vectorizer`` (or None) can serve a live index; returns
    the vectorizer to keep (a stream's plain :class:`~rlsi.text.TfidfVectorizer`)."""
    from ...models.group_base import GroupModel

    if model is not None:
        if not hasattr(model, "transform"):
            raise RLSIError(f"the model ({type(model).__name__}) has no transform method")
        if isinstance(model, GroupModel):
            raise RLSIError(f"a live index folds every document on one set of topics; {type(model).__name__} is a "
                            f"group model (use a static index: rlsi index MODEL --corpus FILE)")
    if vectorizer is not None:
        if hasattr(vectorizer, "to_vectorizer"):  # a StreamingTfidf: its current plain vectorizer
            vectorizer = vectorizer.to_vectorizer()
        for attr in ("build_tokenizer", "weight_counts", "vocabulary_"):
            if not hasattr(vectorizer, attr):
                raise RLSIError(f"the vectorizer ({type(vectorizer).__name__}) cannot serve a live index: it has "
                                f"no {attr} (use rlsi.text.TfidfVectorizer)")
        comps = getattr(model, "components_", None)
        if comps is not None and comps.shape[1] != len(vectorizer.vocabulary_):
            raise RLSIError(f"the model has {comps.shape[1]} terms but the vectorizer {len(vectorizer.vocabulary_)}: "
                            f"give the vectorizer the model was fitted with")
    return vectorizer


def tokenizer_params(vectorizer):
    """The settings that decide a vectorizer's tokens (equal for every version of one index)."""
    params = vectorizer.get_params()
    return {k: params.get(k) for k in _TOKENIZER_PARAMS}


class ModelVersion:
    """One model version: the model, its vectorizer (or None) and the folding-in the index uses.

    fold_lambda2 : the index's folding (None: the model's own transform; a number or inf: ridge or
    projection, :class:`~rlsi.retrieval.topic.RidgeFolding`). dtype : the stored topic vectors' type.
    weigh : for an index without a vectorizer, ``weigh(counts, lengths)`` -> the model's tf-idf input.
    """

    def __init__(self, version, model, vectorizer, *, fold_lambda2=None, dtype=np.float64, weigh=None, info=None):
        self.version = int(version)
        self.model = model
        self.vectorizer = vectorizer
        self.dtype = np.dtype(dtype).type
        self.weigh = weigh
        self.info = dict(info or {})
        folded = model if model is None or fold_lambda2 is None else RidgeFolding(model, fold_lambda2)
        self.matcher = TopicMatcher(folded, dtype=self.dtype) if model is not None else None
        self._gram = _own_fold_gram(model) if fold_lambda2 is None else None
        self._plans = {}
        self._colmap = np.zeros(0, dtype=np.int64)
        self._lock = threading.Lock()

    @property
    def n_topics(self):
        comps = getattr(self.model, "components_", None)
        if comps is not None:
            return int(comps.shape[0])
        return int(getattr(self.model, "n_components", 0) or 0)

    @property
    def input_kind(self):
        return getattr(self.model, "input_kind", "tfidf")

    def _columns(self, vocabulary, n_terms):
        """Vectorizer column of each index term id below ``n_terms`` (-1: a term the vectorizer lacks)."""
        with self._lock:
            done = len(self._colmap)
            if done < n_terms:
                get = self.vectorizer.vocabulary_.get
                more = np.fromiter((get(vocabulary.term(i), -1) for i in range(done, n_terms)), dtype=np.int64,
                                   count=n_terms - done)
                self._colmap = np.concatenate([self._colmap, more])
            return self._colmap[:n_terms]

    def model_input(self, counts, lengths, vocabulary, *, tfidf=None):
        """The model's input for documents given as raw counts over the index vocabulary (CSR, global
        term ids) and their lengths |d|; ``tfidf``: the caller's own (vectorised documents)."""
        if tfidf is not None and self.input_kind != "counts":
            return tfidf
        if self.vectorizer is None:
            if self.input_kind == "counts":
                return counts
            if self.weigh is None:
                raise RLSIError("this index holds vectorised documents and has no vectorizer: give their tf-idf "
                                "(add_vectors(..., tfidf=...)) or a weigh(counts, lengths) function to re-fold them")
            return self.weigh(counts, np.asarray(lengths))
        colmap = self._columns(vocabulary, counts.shape[1])
        C = sp.csr_matrix(counts)
        cols = colmap[C.indices]
        keep = cols >= 0
        row_of = np.repeat(np.arange(C.shape[0]), np.diff(C.indptr))[keep]
        mapped = sp.csr_matrix((C.data[keep], (row_of, cols[keep])),
                               shape=(C.shape[0], len(self.vectorizer.vocabulary_)))
        mapped.sum_duplicates()  # sorted indices, as a vectorizer makes them
        if self.input_kind == "counts":
            return mapped.astype(np.dtype(self.vectorizer.dtype))
        return self.vectorizer.weight_counts(mapped, np.asarray(lengths, dtype=np.int64))

    def fold(self, counts, lengths, vocabulary, *, tfidf=None):
        """L2-normalised topic vectors (n x K, the index's dtype) of documents (see :meth:`model_input`)."""
        if counts.shape[0] == 0:
            return np.zeros((0, self.n_topics), dtype=self.dtype)
        X = self.model_input(counts, lengths, vocabulary, tfidf=tfidf)
        if self._gram is None:
            return normalize_rows(self.matcher.fold_in(X), dtype=self.dtype)
        return normalize_rows(_fold_with_gram(self.model, X, self._gram, self._plan(X)), dtype=self.dtype)

    def _plan(self, X):
        """The sparse product plan of the topics for X's dtype and index order, made once (O(terms))."""
        import scipy.sparse as sparse

        from ...kernels.products import sparse_plan

        U = self.model.topics_
        if not sparse.issparse(U):
            return None
        key = (np.dtype(X.dtype).str, bool(X.has_sorted_indices))
        with self._lock:
            if key not in self._plans:
                self._plans[key] = sparse_plan(U, X.dtype, X.has_sorted_indices)
            return self._plans[key]


def _own_fold_gram(model):
    """``UᵀU`` of a squared-loss model folding in by its own transform on the CPU (computed once per model
    version instead of once per query), else None."""
    from ...models.squared import SquaredLossModel
    from ...models.steps import topic_gram

    if (not isinstance(model, SquaredLossModel) or type(model)._fold_in is not SquaredLossModel._fold_in
            or getattr(model, "device", "cpu") not in (None, "cpu")):
        return None
    return topic_gram(model.topics_)


def _fold_with_gram(model, X, G, plan=None):
    """``model.transform(X)`` (:meth:`rlsi.models.squared.SquaredLossModel._fold_in`) with its Gram (and
    the topics' product plan) given: the same arithmetic, the same floats."""
    from ...kernels.threads import compute_threads
    from ...models.penalties import SolverSettings
    from ...models.steps import update_doc_vectors

    X = model._check_X(X, reset=False)
    with compute_threads(model.n_jobs):
        W, _ = update_doc_vectors(X, model.topics_, penalty=model.doc_penalty, lam=model.lambda2,
                                  settings=SolverSettings(model.inner_max_iter, model.inner_tol), dtype=X.dtype,
                                  G=G, plan=plan)
    return np.asarray(W)


def add_digests(folder, components):
    """Record the CRC-32 of every array file of ``components`` (store entries) in place; returns them."""
    record_digests(folder, {"components": components})
    return components


def write_version(folder, version, model, vectorizer, info=None):
    """Write a model version's files (fsynced by the caller's commit); returns its manifest entry."""
    components = {}
    if model is not None:
        components["model"] = write_component(folder, f"model-v{version}.model", model)
    if vectorizer is not None:
        components["vectorizer"] = write_component(folder, f"model-v{version}.vectorizer", vectorizer)
    return {"components": add_digests(folder, components), "info": dict(info or {})}


def version_files(entry):
    """File names a version's manifest entry references."""
    return [e["file"] for _, _, e in file_entries(entry)]


def read_version(folder, version, entry, *, fold_lambda2, dtype, weigh=None, mmap=True):
    """The :class:`ModelVersion` of a checked manifest entry: digests verified, components loaded as
    untrusted input (:func:`rlsi.io.store.read_component`)."""
    comps = entry.get("components")
    if not isinstance(comps, dict) or not set(comps) <= {"model", "vectorizer"}:
        raise ModelFormatError(f"{folder}: model version {version} lists components {str(comps)[:60]}")
    objs = {name: read_component(folder, name, comp, mmap=mmap, verify=True)  # every file against its digest
            for name, comp in comps.items()}
    try:
        vectorizer = check_model(objs.get("model"), objs.get("vectorizer"))
    except RLSIError as exc:
        raise ModelFormatError(f"{folder}: model version {version}: {exc}") from None
    return ModelVersion(version, objs.get("model"), vectorizer, fold_lambda2=fold_lambda2, dtype=dtype,
                        weigh=weigh, info=entry.get("info"))
