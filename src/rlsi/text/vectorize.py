"""Documents -> tf-idf matrix, with the weighting of the TOIS RLSI paper (Sec. 8.1).

For a collection :math:`\\mathcal D` of :math:`N` documents, the weight of term :math:`t` in document
:math:`d` is

.. math::  \\text{tf-idf}(t, d) = \\frac{n(t, d)}{|d|} \\cdot \\log \\frac{N}{\\mathrm{df}(t)}

* :math:`n(t, d)`: number of occurrences of term ``t`` in ``d`` (after tokenization and stemming);
* :math:`|d|`: the **length of d = number of its tokens after stop-word removal** (and ``min_length``),
  counting every such token, *including tokens that are not columns of the matrix* (terms unseen at
  fit time, or pruned by ``min_df``/``max_df``/``max_features``). So for the query "foo bar" with
  ``foo`` unknown, ``bar`` gets tf 1/2. A document's tf values therefore do not change when the
  vocabulary is pruned, and ``fit_transform(docs)`` equals ``fit(docs).transform(docs)``;
* :math:`\\mathrm{df}(t)`: number of fitted documents containing ``t``; ``log`` is the natural log.
  A term present in every fitted document has idf ``log(1) = 0``: it keeps its column, but its
  entries are zero and are not stored.

The output is a ``scipy.sparse.csr_matrix`` of shape ``(n_documents, n_terms)`` (documents are rows,
as in scikit-learn; the paper's term-document matrix D is its transpose), dtype float64 or float32, with
sorted column indices and no stored zeros. A document without any token is a zero row. After ``fit``
the columns are sorted alphabetically by term.

Row normalization (``norm="l2"``, the default): each document vector is then divided by its ℓ2 norm.
The loss of RLSI is a sum of squared errors over documents, so without it long or repetitive documents
(binary dumps, lists of numbers) weigh more than short ones and attract topics of their own, and the
per-document scale of λ₁ (``BatchRLSI(lambda1_scale="per_doc")``) depends on document length. Measured
on 20 Newsgroups (K=20, ``lambda1=0.05``): 3 empty topics and junk topics without it, none with it.
``norm=None`` gives the paper's weights exactly. Cosine scores (VSM, topic matching) are unaffected.

Designed to grow: ``df_`` (integer document frequencies) and ``n_docs_`` are kept so that idf can be
recomputed when documents are added, and nothing assumes sorted columns (columns are looked up through
``vocabulary_``), so an online learner may append new terms as new last columns (see
:func:`_count_tokens` with ``grow=True``).
"""

from __future__ import annotations

import numbers
from array import array
from collections import defaultdict
from itertools import repeat

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from .._validation import FLOAT_DTYPES, check_choice, check_number
from ..io.store import register
from ..errors import CorpusError, ModelFormatError, NotFittedError, RLSIError
from .tokenize import DEFAULT_TOKEN_PATTERN, STEMMERS, Tokenizer, saved_token_pattern

__all__ = ["TfidfVectorizer", "idf_from_df", "VectorizerNotFittedError"]

_STATE_VERSION = 1


class VectorizerNotFittedError(NotFittedError):
    """A vectorizer used before ``fit``: the one :class:`rlsi.errors.NotFittedError` (an RLSIError and
    scikit-learn's NotFittedError), named for the vectorizers."""


def idf_from_df(df, n_docs) -> np.ndarray:
    """``log(n_docs / df)`` (float64, shape ``(n_terms,)``); ``df`` must be >= 1 everywhere."""
    df = np.asarray(df, dtype=np.float64)
    return np.log(float(n_docs) / df)


def _iter_docs(docs):
    """Yield ``(index, text)``, refusing a bare string and non-str documents."""
    if isinstance(docs, (str, bytes)):
        raise RLSIError("expected an iterable of documents (str), got a single string")
    try:
        iterator = iter(docs)
    except TypeError:
        raise RLSIError(f"expected an iterable of documents (str), got {type(docs).__name__}") from None
    for i, doc in enumerate(iterator):
        if not isinstance(doc, str):
            raise RLSIError(f"document {i} is a {type(doc).__name__}, expected str")
        yield i, doc


def _count_tokens(docs, tokenizer, vocabulary, grow):
    """Count the terms of ``docs`` against ``vocabulary`` (a dict term -> column).

    With ``grow=True`` unseen terms are added to ``vocabulary`` (in place) with the next free column
    number; otherwise they are skipped (but still counted in the lengths).

    Returns ``(counts, lengths)``: ``counts`` CSR ``(n_docs, len(vocabulary))`` of int64 counts, sorted
    indices, duplicates summed; ``lengths`` int64 ``(n_docs,)`` = |d| (tokens incl. unknown terms).
    """
    indices = array("q")  # column of every token, -1 for unknown terms
    lengths = array("q")
    if grow:
        lookup = defaultdict(None, vocabulary)
        lookup.default_factory = lookup.__len__
        get = lookup.__getitem__
    for _, doc in _iter_docs(docs):
        tokens = tokenizer(doc)
        lengths.append(len(tokens))
        if grow:
            indices.extend(map(get, tokens))
        else:
            indices.extend(map(vocabulary.get, tokens, repeat(-1)))
    if grow:
        vocabulary.update(lookup)
    n_docs, n_terms = len(lengths), len(vocabulary)
    lengths = np.frombuffer(lengths, dtype=np.int64).copy()
    idx = np.frombuffer(indices, dtype=np.int64)
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    if not grow:
        known = idx >= 0
        cum = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(known, out=cum[1:])
        idx, indptr = idx[known], cum[indptr]
    itype = np.int32 if max(len(idx), n_terms) < 2**31 else np.int64
    counts = sp.csr_matrix((np.ones(len(idx), dtype=np.int64), idx.astype(itype), indptr.astype(itype)),
                           shape=(n_docs, n_terms))
    counts.sum_duplicates()  # also sorts the indices of each row
    return counts, lengths


def _keep_columns(counts, keep_order, n_terms_before):
    """Restrict CSR ``counts`` to the columns ``keep_order`` (new column j = old column keep_order[j])."""
    remap = np.full(n_terms_before, -1, dtype=np.int64)
    remap[keep_order] = np.arange(len(keep_order))
    new = remap[counts.indices]
    keep = new >= 0
    cum = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(keep, out=cum[1:])
    out = sp.csr_matrix((counts.data[keep], new[keep].astype(counts.indices.dtype),
                         cum[counts.indptr].astype(counts.indptr.dtype)),
                        shape=(counts.shape[0], len(keep_order)))
    out.has_sorted_indices = False
    out.sort_indices()
    return out


def _doc_count_threshold(name, value, n_docs):
    """An int count is used as it is; a float in [0, 1] is a share of ``n_docs``."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return check_number(name, int(value), low=0, integer=True)
    check_number(name, value, low=0.0, high=1.0)
    return float(value) * n_docs


NORMS = {"l2": "unit Euclidean length per document", None: "the paper's weights, unnormalized"}


@register("TfidfVectorizer")
class TfidfVectorizer(TransformerMixin, BaseEstimator):
    """Tokenize documents and weight terms by ``n(t,d)/|d| * log(N/df(t))`` (see module docstring).

    Parameters
    ----------
    lowercase, stop_words, stemmer, token_pattern, min_length
        Passed to :class:`rlsi.text.Tokenizer` (defaults: lower-case, English stop words, no stemming,
        runs of letters/digits, min length 1).
    min_df : int or float, default 1
        Drop terms found in fewer documents: an int is a document count, a float in [0, 1] a share
        of the fitted documents.
    max_df : int or float, default 1.0
        Drop terms found in more documents (int count or float share).
    max_features : int or None, default None
        Keep only the ``max_features`` terms with the highest total count in the fitted documents
        (ties: alphabetical), after ``min_df``/``max_df``.
    norm : "l2" or None, default "l2"
        Divide each document vector by its ℓ2 norm (see the module docstring); None = the paper's weights.
    dtype : numpy.float64 or numpy.float32, default numpy.float64
        dtype of the tf-idf and count matrices.

    Attributes (after fit)
    ----------------------
    vocabulary_ : dict[str, int]   term -> column.
    feature_names_ : list[str]     terms in column order (alphabetical after fit).
    df_ : ndarray int64 (n_terms,) document frequencies in the fitted documents.
    idf_ : ndarray float64 (n_terms,)  ``log(n_docs_ / df_)``.
    n_docs_ : int                  number of fitted documents N.
    """

    def __init__(self, lowercase=True, stop_words="english", stemmer=None,
                 token_pattern=DEFAULT_TOKEN_PATTERN, min_length=1, min_df=1, max_df=1.0,
                 max_features=None, norm="l2", dtype=np.float64):
        self.lowercase = lowercase
        self.stop_words = stop_words
        self.stemmer = stemmer
        self.token_pattern = token_pattern
        self.min_length = min_length
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.norm = norm
        self.dtype = dtype

    # ---------------------------------------------------------------- helpers
    def build_tokenizer(self) -> Tokenizer:
        """A :class:`Tokenizer` with this vectorizer's text parameters (validates them)."""
        return Tokenizer(lowercase=self.lowercase, stop_words=self.stop_words, stemmer=self.stemmer,
                         token_pattern=self.token_pattern, min_length=self.min_length)

    def _out_dtype(self):
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            dtype = None
        if dtype not in FLOAT_DTYPES:
            raise RLSIError(f"dtype={self.dtype!r} is not supported; use numpy.float64 or numpy.float32")
        return dtype

    def _check_fitted(self):
        if not hasattr(self, "vocabulary_"):
            raise VectorizerNotFittedError("this TfidfVectorizer is not fitted yet; call fit() first")

    def analyze(self, doc: str) -> list[str]:
        """The terms of one document, in order (stop words removed, stemmed; before vocabulary pruning)."""
        return self.build_tokenizer()(doc)

    def doc_lengths(self, docs) -> np.ndarray:
        """|d| for each document: int64 ``(n_docs,)``, the token count after stop-word removal."""
        tokenizer = self.build_tokenizer()
        return np.fromiter((len(tokenizer(d)) for _, d in _iter_docs(docs)), dtype=np.int64)

    # ---------------------------------------------------------------- fitting
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True  # documents are 1-D text, as for scikit-learn's CountVectorizer
        tags.input_tags.two_d_array = False
        return tags

    def fit(self, docs, y=None):
        """Learn the vocabulary, document frequencies and idf from ``docs`` (an iterable of str)."""
        self._fit(docs)
        return self

    def fit_transform(self, docs, y=None):
        """``fit(docs)`` then ``transform(docs)``, tokenizing the documents only once."""
        counts, lengths = self._fit(docs)
        return self._weight(counts, lengths)

    def fit_transform_counts(self, docs):
        """``fit(docs)`` then ``transform_counts(docs)``, tokenizing the documents only once."""
        counts, _ = self._fit(docs)
        return counts.astype(self._out_dtype())

    def _fit(self, docs):
        tokenizer = self.build_tokenizer()
        self._out_dtype()  # validate dtype before the (long) tokenization pass
        check_number("max_features", self.max_features, low=1, integer=True, allow_none=True)
        _doc_count_threshold("min_df", self.min_df, 1)
        _doc_count_threshold("max_df", self.max_df, 1)
        provisional: dict[str, int] = {}
        counts, lengths = _count_tokens(docs, tokenizer, provisional, grow=True)
        n_docs = counts.shape[0]
        if n_docs == 0:
            raise CorpusError("empty corpus: no documents to fit the vectorizer on")
        if not provisional:
            raise CorpusError(f"empty corpus: none of the {n_docs} documents has a token left after "
                              "tokenization and stop-word removal")
        df = np.bincount(counts.indices, minlength=len(provisional)).astype(np.int64)
        terms = list(provisional)  # provisional column j is terms[j] (dicts keep insertion order)
        order = kept_columns(self, terms, df, n_docs,
                             total=lambda: np.bincount(counts.indices, weights=counts.data, minlength=len(terms)))
        counts = _keep_columns(counts, order, len(terms))
        self._set_vocabulary(terms, df, order, n_docs)
        return counts, lengths

    def _set_vocabulary(self, terms, df, order, n_docs):
        """The fitted state from the kept provisional columns ``order`` (see :func:`kept_columns`)."""
        self.feature_names_ = [terms[j] for j in order]
        self.vocabulary_ = {t: j for j, t in enumerate(self.feature_names_)}
        self.df_ = df[order]
        self.n_docs_ = int(n_docs)
        self.idf_ = idf_from_df(self.df_, self.n_docs_)

    # ---------------------------------------------------------------- transforming
    def transform_counts(self, docs, return_lengths=False):
        """Raw counts n(t, d): CSR ``(n_docs, n_terms)`` of ``dtype``, same columns as ``transform``.

        With ``return_lengths=True`` returns ``(counts, lengths)``, lengths = |d| as int64 (BM25 needs
        both; unknown terms are not in ``counts`` but are in ``lengths``).
        """
        self._check_fitted()
        counts, lengths = _count_tokens(docs, self.build_tokenizer(), self.vocabulary_, grow=False)
        counts = counts.astype(self._out_dtype())
        return (counts, lengths) if return_lengths else counts

    def transform(self, docs):
        """tf-idf CSR ``(n_docs, n_terms)`` of ``dtype``; terms not in ``vocabulary_`` are ignored."""
        self._check_fitted()
        counts, lengths = _count_tokens(docs, self.build_tokenizer(), self.vocabulary_, grow=False)
        return self._weight(counts, lengths)

    def weight_counts(self, counts, lengths):
        """tf-idf of already counted documents: ``counts`` CSR in this vocabulary's columns (sorted indices) and
        ``lengths`` |d| (tokens, unknown terms included); equal to :meth:`transform` of their texts."""
        self._check_fitted()
        return self._weight(counts, np.asarray(lengths))

    def _weight(self, counts, lengths):
        """``counts[d, t] / lengths[d] * idf_[t]`` (computed in float64, then cast to ``dtype``)."""
        row_len = np.repeat(lengths.astype(np.float64), np.diff(counts.indptr))
        data = counts.data.astype(np.float64) / row_len * self.idf_[counts.indices]
        if check_choice("norm", self.norm, NORMS) == "l2":
            rows = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
            norms = np.sqrt(np.bincount(rows, weights=data * data, minlength=counts.shape[0]))[rows]
            data = np.divide(data, norms, out=np.zeros_like(data), where=norms > 0)
        X = sp.csr_matrix((data.astype(self._out_dtype()), counts.indices, counts.indptr),
                          shape=counts.shape)
        X.has_sorted_indices = True
        X.eliminate_zeros()
        return X

    def get_feature_names_out(self, input_features=None):
        """Terms in column order, as an object ndarray (scikit-learn convention)."""
        self._check_fitted()
        return np.asarray(self.feature_names_, dtype=object)

    # ---------------------------------------------------------------- persistence (used by rlsi.io)
    def _to_state(self):
        """``(meta, arrays)``: JSON-serialisable params and counts, and plain (non-object) arrays.

        arrays: ``vocabulary`` (unicode ``<U*``, terms in column order), ``df`` (int64), ``idf`` (float64).
        """
        self._check_fitted()
        params = self.get_params(deep=False)
        stop = params["stop_words"]
        if stop is not None and not isinstance(stop, str):
            stop = sorted(self.build_tokenizer().stop_word_set)
        for key in ("min_df", "max_df"):
            v = params[key]
            params[key] = int(v) if isinstance(v, numbers.Integral) else float(v)
        saved_token_pattern(params["token_pattern"], loading=False)
        params.update(stop_words=stop, lowercase=bool(params["lowercase"]),
                      min_length=int(params["min_length"]), dtype=self._out_dtype().name,
                      max_features=None if self.max_features is None else int(self.max_features))
        meta = {"class": type(self).__name__, "state_version": _STATE_VERSION, "params": params,
                "n_docs": self.n_docs_, "n_terms": len(self.feature_names_)}
        arrays = {"vocabulary": np.array(self.feature_names_, dtype=str),
                  "df": np.asarray(self.df_, dtype=np.int64),
                  "idf": np.asarray(self.idf_, dtype=np.float64)}
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        """Rebuild a fitted vectorizer from :meth:`_to_state` output; damage raises ModelFormatError.

        Everything is checked as untrusted input: parameter types and values (the token pattern must be
        a registered one, see :data:`rlsi.text.tokenize.TOKEN_PATTERNS`), array kinds and shapes, unique
        terms, ``1 <= df <= n_docs`` and ``0 <= idf <= log(n_docs)``.
        """
        if not isinstance(meta, dict) or meta.get("state_version") != _STATE_VERSION:
            version = meta.get("state_version") if isinstance(meta, dict) else None
            raise ModelFormatError(f"unsupported vectorizer state version {version!r} (expected {_STATE_VERSION})")
        try:
            params = _params_from_state(cls, meta.get("params"))
            vec = cls(**params)
            vec.build_tokenizer()
            vec._out_dtype()
            terms, df, idf = (arrays.get(k) for k in ("vocabulary", "df", "idf"))
            n_docs = meta.get("n_docs")
        except ModelFormatError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # RLSIError is a ValueError
            raise ModelFormatError(f"damaged vectorizer state: {' '.join(str(exc).split())}") from None
        kinds = {"vocabulary": (terms, "U"), "df": (df, "iu"), "idf": (idf, "f")}
        for key, (arr, kind) in kinds.items():
            if not isinstance(arr, np.ndarray) or arr.ndim != 1 or arr.dtype.kind not in kind:
                what = "missing" if arr is None else f"a {getattr(arr, 'dtype', type(arr).__name__)} " \
                                                      f"array of shape {getattr(arr, 'shape', '?')}"
                raise ModelFormatError(f"damaged vectorizer state: {key} is {what}")
        if isinstance(n_docs, bool) or not isinstance(n_docs, int) or not 1 <= n_docs < 2**53:
            raise ModelFormatError(f"damaged vectorizer state: n_docs={n_docs!r}")
        terms = terms.tolist()
        n = len(terms)
        if not (df.shape == idf.shape == (n,)) or n == 0 or len(set(terms)) != n \
                or meta.get("n_terms", n) != n:
            raise ModelFormatError(f"damaged vectorizer state: {n} terms (unique: {len(set(terms))}), "
                                   f"df shape {df.shape}, idf shape {idf.shape}")
        if df.min() < 1 or df.max() > n_docs:
            raise ModelFormatError(f"damaged vectorizer state: document frequencies outside "
                                   f"[1, n_docs={n_docs}]")
        idf = np.asarray(idf, dtype=np.float64)
        if not (np.all(idf >= 0) and np.all(idf <= np.log(n_docs) * (1 + 1e-12) + 1e-12)):
            raise ModelFormatError(f"damaged vectorizer state: idf outside [0, log(n_docs={n_docs})]")
        vec.feature_names_ = terms
        vec.vocabulary_ = {t: j for j, t in enumerate(terms)}
        vec.df_ = np.asarray(df, dtype=np.int64)
        vec.n_docs_ = n_docs
        vec.idf_ = idf
        return vec


def _params_from_state(cls, params):
    """The constructor parameters of a saved vectorizer, each checked (raises RLSIError/ModelFormatError)."""
    if not isinstance(params, dict):
        raise ModelFormatError("damaged vectorizer state: params is not an object")
    names = set(cls._get_param_names())
    if set(params) != names:
        odd = sorted(set(params) ^ names)
        raise ModelFormatError(f"damaged vectorizer state: unexpected or missing parameters {odd}")
    params = dict(params)
    if not isinstance(params["lowercase"], bool):
        raise RLSIError(f"lowercase={params['lowercase']!r} must be true or false")
    stop = params["stop_words"]
    if not (stop is None or stop == "english" or (isinstance(stop, list) and all(isinstance(w, str) for w in stop))):
        raise RLSIError(f"stop_words={str(stop)[:60]!r} must be 'english', null or a list of words")
    check_choice("stemmer", params["stemmer"], STEMMERS)
    saved_token_pattern(params["token_pattern"], loading=True)
    check_number("min_length", params["min_length"], low=1, integer=True)
    for key in ("min_df", "max_df"):
        _doc_count_threshold(key, params[key], 1)
    check_number("max_features", params["max_features"], low=1, integer=True, allow_none=True)
    check_choice("norm", params["norm"], NORMS)
    if params["dtype"] not in ("float64", "float32"):
        raise RLSIError(f"dtype={str(params['dtype'])[:20]!r} must be 'float64' or 'float32'")
    params["dtype"] = np.dtype(params["dtype"]).type
    return params


def kept_columns(vectorizer, terms, df, n_docs, total):
    """The provisional columns that ``vectorizer``'s ``min_df`` / ``max_df`` / ``max_features`` keep, in the
    fitted column order (alphabetical by term): the one pruning rule of the in-memory fit, the streaming
    ingestion (:mod:`rlsi.text.ingest`) and the workers' vectorization (:mod:`rlsi.distributed.files`).

    terms : provisional column j is ``terms[j]``; df : document frequency of each column (int64);
    total : zero-argument callable giving each column's total count, called only when ``max_features``
    prunes (ties broken by the term).
    """
    low = _doc_count_threshold("min_df", vectorizer.min_df, n_docs)
    high = _doc_count_threshold("max_df", vectorizer.max_df, n_docs)
    kept = np.flatnonzero((df >= low) & (df <= high))
    if vectorizer.max_features is not None and len(kept) > vectorizer.max_features:
        counts = total()
        by_count = sorted(kept.tolist(), key=lambda j: (-counts[j], terms[j]))
        kept = np.asarray(by_count[: vectorizer.max_features], dtype=np.int64)
    if len(kept) == 0:
        raise CorpusError(f"no term left after pruning: min_df={vectorizer.min_df!r} and "
                          f"max_df={vectorizer.max_df!r} keep none of the {len(terms)} terms of "
                          f"{n_docs} documents")
    return np.asarray(sorted(kept.tolist(), key=terms.__getitem__), dtype=np.int64)
