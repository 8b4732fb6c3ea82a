"""tf-idf of a document stream: a vocabulary that grows, and an idf that works online.

:class:`StreamingTfidf` uses the tokenizer and the weighting of :class:`rlsi.text.TfidfVectorizer`
(TOIS §8.1: ``n(t,d)/|d| · log(N/df(t))``) on a stream of mini-batches:

* **Growing vocabulary.** Each batch's unseen terms are appended as new last columns, in order of first
  occurrence; existing columns never move, so a matrix produced earlier stays valid as a prefix of the
  later ones and an online learner only has to append zero rows (:class:`rlsi.models.OnlineRLSI`).
  ``partial_fit_transform`` therefore returns matrices whose width grows with the stream. ``transform``
  (queries, held-out documents) never grows the vocabulary: unknown terms are ignored, but still count in
  ``|d|``, exactly as in ``TfidfVectorizer.transform``.

* **idf** — two choices, ``idf="running"`` (default) or ``idf="fixed"``:

  - ``"running"``: ``df_`` and ``n_docs_`` count every document seen so far, and each batch is weighted
    with the idf *after* adding the batch itself (so a term new in this batch has df >= 1 and a finite
    idf, ``log(N/df)``). The weighting follows the stream: a term that becomes frequent gets a lower idf.
    Consequence: the tf-idf of a document depends on when it arrived, and the statistics of an online
    learner mix weightings — the rows of ``R = Σ d vᵀ`` accumulated earlier were built with the idf of
    their time and are not re-weighted (that would need the stream back). The drift is largest for terms
    whose document frequency changes a lot (new events, new terms: their early weights are high) and is
    small for established terms (idf moves like ``log(N)`` − ``log(df)``, both growing together). With
    re-scaling (ρ > 0) old contributions fade, so R converges to the current weighting.
  - ``"fixed"``: idf is computed once from a warm-up sample — the documents given to :meth:`fit`, or the
    first batch if the stream starts without ``fit`` — and frozen. A term first seen after the warm-up gets
    the idf of a term seen in a single warm-up document, ``log(N_warmup)`` (it was rarer than that, so
    it is at least as specific as the rarest known term). Every document is then weighted the same way
    whenever it arrives, and R holds a consistent weighting; the price is that idf does not adapt to a
    vocabulary that drifts, and depends on how representative the warm-up sample is.

  ``df_`` and ``n_docs_`` count the whole stream in both modes; ``idf_`` is the weighting in use.

* **Memory**: the vocabulary (a dict term -> column) and ``df_`` grow with the number of distinct terms,
  never with the number of documents.

``to_vectorizer()`` gives a plain :class:`rlsi.text.TfidfVectorizer` with the current vocabulary (same
columns), df and idf — for saving alongside the model and serving queries. ``StreamingTfidf.from_vectorizer``
starts a stream from a fitted vectorizer (for instance the one of a batch model used as ``topic_init``).
Persistable pickle-free with :mod:`rlsi.io` (registered as ``"StreamingTfidf"``); a saved stream resumes
identically.
"""

from __future__ import annotations

import copy
import itertools

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from .._validation import check_choice
from ..errors import CorpusError, ModelFormatError, RLSIError
from ..io import register
from .tokenize import DEFAULT_TOKEN_PATTERN
from .vectorize import TfidfVectorizer, VectorizerNotFittedError, _count_tokens, idf_from_df

__all__ = ["StreamingTfidf", "IDF_MODES"]

IDF_MODES = {"running": "idf from all documents seen so far (updated every batch)",
             "fixed": "idf frozen after a warm-up sample (fit, or the first batch)"}
_STATE_VERSION = 1


@register("StreamingTfidf")
class StreamingTfidf(TransformerMixin, BaseEstimator):
    """tf-idf over a stream with a growing vocabulary (see the module docstring for the idf choice).

    Parameters
    ----------
    lowercase, stop_words, stemmer, token_pattern, min_length
        As in :class:`rlsi.text.TfidfVectorizer` (the same tokenizer).
    norm : "l2" or None, default "l2" — per-document normalization, as in :class:`TfidfVectorizer`.
    idf : {"running", "fixed"}, default "running".
    dtype : numpy.float64 or numpy.float32, default numpy.float64.

    Attributes
    ----------
    vocabulary_ : dict[str, int]; feature_names_ : list[str] — columns, in order of first occurrence
        (after the warm-up/initial vectorizer's own columns).
    df_ : int64 (n_terms,); n_docs_ : int — counts over the whole stream.
    idf_ : float64 (n_terms,) — the weighting in use.
    n_warmup_docs_ : int — size of the sample that fixed idf ("fixed" mode; 0 in "running" mode).
    """

    def __init__(self, lowercase=True, stop_words="english", stemmer=None,
                 token_pattern=DEFAULT_TOKEN_PATTERN, min_length=1, idf="running", norm="l2",
                 dtype=np.float64):
        self.lowercase = lowercase
        self.stop_words = stop_words
        self.stemmer = stemmer
        self.token_pattern = token_pattern
        self.min_length = min_length
        self.idf = idf
        self.norm = norm
        self.dtype = dtype

    # ------------------------------------------------------------------ construction
    def _new_vectorizer(self):
        check_choice("idf", self.idf, IDF_MODES)
        vec = TfidfVectorizer(lowercase=self.lowercase, stop_words=self.stop_words, stemmer=self.stemmer,
                              token_pattern=self.token_pattern, min_length=self.min_length, norm=self.norm,
                              dtype=self.dtype)
        vec._out_dtype()  # validates dtype
        return vec

    @classmethod
    def from_vectorizer(cls, vectorizer, idf="running"):
        """A stream that starts with the vocabulary (same columns), df and N of a fitted TfidfVectorizer.

        With ``idf="fixed"`` the vectorizer's idf is kept as the frozen weighting (its documents are the
        warm-up sample)."""
        if not hasattr(vectorizer, "vocabulary_"):
            raise VectorizerNotFittedError("from_vectorizer needs a fitted TfidfVectorizer")
        params = vectorizer.get_params()
        stream = cls(lowercase=params["lowercase"], stop_words=params["stop_words"],
                     stemmer=params["stemmer"], token_pattern=params["token_pattern"],
                     min_length=params["min_length"], idf=idf, norm=params["norm"],
                     dtype=params["dtype"])
        vec = stream._new_vectorizer()
        vec.feature_names_ = list(vectorizer.feature_names_)
        vec.vocabulary_ = dict(vectorizer.vocabulary_)
        vec.df_ = np.array(vectorizer.df_, dtype=np.int64)
        vec.n_docs_ = int(vectorizer.n_docs_)
        vec.idf_ = np.array(vectorizer.idf_, dtype=np.float64)
        stream._install(vec, warmup=vec.n_docs_ if idf == "fixed" else 0)
        return stream

    def _install(self, vec, warmup):
        self._vec = vec
        self._tokenizer = vec.build_tokenizer()
        self.n_warmup_docs_ = int(warmup)
        self._sync()

    def _sync(self):
        vec = self._vec
        self.vocabulary_ = vec.vocabulary_
        self.feature_names_ = vec.feature_names_
        self.df_ = vec.df_
        self.n_docs_ = vec.n_docs_
        self.idf_ = vec.idf_

    def _check_started(self):
        if not hasattr(self, "_vec"):
            raise VectorizerNotFittedError("this StreamingTfidf has seen no document yet; call fit() or "
                                           "partial_fit_transform() first")

    @property
    def n_terms_(self):
        self._check_started()
        return len(self._vec.feature_names_)

    # ------------------------------------------------------------------ fitting
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True  # documents are 1-D text, as for scikit-learn's CountVectorizer
        tags.input_tags.two_d_array = False
        return tags

    def fit(self, docs, y=None):
        """Start the stream (forgetting any previous state) with ``docs`` as the first documents; in
        ``"fixed"`` mode they are the warm-up sample whose idf is frozen. Returns self."""
        self._reset()
        self.partial_fit_transform(docs)
        return self

    def fit_transform(self, docs, y=None):
        """Reset, learn from ``docs`` and return their tf-idf rows (CSR, n_docs x n_terms)."""
        self._reset()
        return self.partial_fit_transform(docs)

    def partial_fit(self, docs, y=None):
        """Update the vocabulary and document frequencies with ``docs`` (new terms become new columns).
        Returns self."""
        self.partial_fit_transform(docs)
        return self

    def _reset(self):
        for key in ("_vec", "_tokenizer", "vocabulary_", "feature_names_", "df_", "n_docs_", "idf_",
                    "n_warmup_docs_"):
            if hasattr(self, key):
                delattr(self, key)

    def partial_fit_transform(self, docs):
        """Add a batch of documents (iterable of str) to the stream and return its tf-idf, CSR
        ``(n_docs, n_terms)`` with ``n_terms`` the vocabulary size *after* this batch."""
        first = not hasattr(self, "_vec")
        if first:
            vec = self._new_vectorizer()
            vec.feature_names_, vec.vocabulary_ = [], {}
            vec.df_ = np.zeros(0, dtype=np.int64)
            vec.n_docs_ = 0
            vec.idf_ = np.zeros(0, dtype=np.float64)
            self._install(vec, warmup=0)
        vec = self._vec
        vocab = vec.vocabulary_
        old_n = len(vocab)
        counts, lengths = _count_tokens(docs, self._tokenizer, vocab, grow=True)
        n_docs, n_terms = counts.shape
        if first and n_docs == 0:
            self._reset()
            raise CorpusError("the first batch of the stream has no document")
        if n_terms > old_n:  # new terms, appended in order of first occurrence
            new_terms = list(itertools.islice(vocab, old_n, None))
            if vocab[new_terms[0]] != old_n or vocab[new_terms[-1]] != n_terms - 1:
                raise RuntimeError("vocabulary columns out of order")  # pragma: no cover - invariant
            vec.feature_names_.extend(new_terms)
        df_batch = np.bincount(counts.indices, minlength=n_terms).astype(np.int64)
        df = np.zeros(n_terms, dtype=np.int64)
        df[:old_n] = vec.df_
        vec.df_ = df + df_batch
        vec.n_docs_ = int(vec.n_docs_) + n_docs
        if self.idf == "running":
            vec.idf_ = idf_from_df(np.maximum(vec.df_, 1), max(vec.n_docs_, 1))
        elif first and self.n_warmup_docs_ == 0:  # "fixed": this first batch is the warm-up sample
            self.n_warmup_docs_ = n_docs
            vec.idf_ = idf_from_df(np.maximum(vec.df_, 1), max(vec.n_docs_, 1))
        elif n_terms > old_n:
            new_idf = np.full(n_terms - old_n, np.log(max(self.n_warmup_docs_, 1)), dtype=np.float64)
            vec.idf_ = np.concatenate([vec.idf_, new_idf])
        self._sync()
        return vec._weight(counts, lengths)

    def transform(self, docs):
        """tf-idf with the current vocabulary and idf; unknown terms are ignored (no growth, no counting)."""
        self._check_started()
        return self._vec.transform(docs)

    def transform_counts(self, docs, return_lengths=False):
        """Raw counts with the current vocabulary (see :meth:`TfidfVectorizer.transform_counts`)."""
        self._check_started()
        return self._vec.transform_counts(docs, return_lengths=return_lengths)

    def get_feature_names_out(self, input_features=None):
        """The vocabulary seen so far, in column order (ndarray of str)."""
        self._check_started()
        return self._vec.get_feature_names_out()

    def to_vectorizer(self):
        """A :class:`TfidfVectorizer` snapshot: same columns, df, N and the idf in use."""
        self._check_started()
        if not self._vec.feature_names_:
            raise RLSIError("the stream has no term yet: nothing to snapshot")
        vec = copy.copy(self._vec)
        vec.feature_names_ = list(self._vec.feature_names_)
        vec.vocabulary_ = dict(self._vec.vocabulary_)
        vec.df_ = self._vec.df_.copy()
        vec.idf_ = self._vec.idf_.copy()
        return vec

    # ------------------------------------------------------------------ persistence (rlsi.io)
    def _to_state(self):
        self._check_started()
        if not self._vec.feature_names_:
            raise RLSIError("the stream has no term yet: nothing to save")
        meta, arrays = self._vec._to_state()
        meta = {"state_version": _STATE_VERSION, "idf_mode": self.idf,
                "n_warmup_docs": int(self.n_warmup_docs_), "vectorizer": meta}
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        if not isinstance(meta, dict) or meta.get("state_version") != _STATE_VERSION:
            version = meta.get("state_version") if isinstance(meta, dict) else None
            raise ModelFormatError(f"unsupported StreamingTfidf state version {version!r}")
        vec = TfidfVectorizer._from_state(meta.get("vectorizer"), arrays)
        warmup = meta.get("n_warmup_docs")
        try:
            params = vec.get_params()
            stream = cls(lowercase=params["lowercase"], stop_words=params["stop_words"],
                         stemmer=params["stemmer"], token_pattern=params["token_pattern"],
                         min_length=params["min_length"], idf=meta.get("idf_mode"), norm=params["norm"],
                         dtype=params["dtype"])
            check_choice("idf", stream.idf, IDF_MODES)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"damaged StreamingTfidf state: {' '.join(str(exc).split())}") from None
        if isinstance(warmup, bool) or not isinstance(warmup, int) or not 0 <= warmup <= vec.n_docs_:
            raise ModelFormatError(f"damaged StreamingTfidf state: n_warmup_docs={str(warmup)[:30]!r} "
                                   f"(the stream has {vec.n_docs_} documents)")
        stream._install(vec, warmup=warmup)
        return stream
