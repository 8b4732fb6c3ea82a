"""Term-matching relevance models (BM25 and the vector space model) over sparse matrices.

Both models precompute a documents x terms weight matrix stored in CSC form, so that a query only reads
the columns (posting lists) of its own terms: ``scores = Q @ W.T`` costs O(sum of the query terms'
document frequencies) plus one dense row of ``n_docs`` floats per query.

**BM25** (``k1``, ``b``), Lucene >= 8 variant (the same as the ``bm25s`` library's ``method="lucene"``):

    score(q, d) = sum_t qtf(t, q) * idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = log(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

with ``tf`` the raw count, ``|d|`` the document length (sum of its counts), ``avgdl`` the mean length,
``N`` the number of documents, ``df`` the document frequency and ``qtf`` the query count of the term
(a repeated query term counts again). This Robertson-Sparck Jones idf with ``+1`` inside the log is never
negative, unlike the classic one, so very common terms cannot lower a score. The classic Robertson
formula has an extra constant factor ``(k1 + 1)`` in the numerator: it scales every score alike and does
not change any ranking (mind it only when mixing BM25 with other scores on a fixed scale).

**VSM**: cosine similarity between tf-idf vectors, ``cos(q, d) = q . d / (|q| |d|)``; the caller supplies
the tf-idf weighting (documents at :meth:`VSM.fit`, queries at :meth:`VSM.score`).

A query with no known term (an all-zero row) scores 0 for every document, as does an empty document.
Weights are float64 when fitted here; an index built by :meth:`rlsi.retrieval.Searcher.from_matrix` may hold
float32 weights (scores are still summed in float64), and a loaded index keeps the stored type.
``_to_state`` / ``_from_state`` give a pickle-free form: a JSON-able ``meta`` dict and a dict of numpy
arrays (the sparse matrix as ``*_data``, ``*_indices``, ``*_indptr``; its shape is in ``meta``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_matrix, check_number
from .postings import accumulate, accumulate_touched
from .._rows import l2_normalize_rows
from ..errors import ModelFormatError, NotFittedError, RLSIError
from ..io.safety import check_csr, check_float_values

__all__ = ["BM25", "VSM"]

_STATE_VERSION = 1


class _TermModel:
    """Shared scoring and persistence for models whose fitted state is a docs x terms matrix."""

    weights_: sp.csc_matrix

    def _check_fitted(self):
        if getattr(self, "weights_", None) is None:
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit(documents) first")

    def _queries(self, queries):
        self._check_fitted()
        if not sp.issparse(queries):
            queries = np.asarray(queries)
            if queries.ndim == 1:
                queries = queries.reshape(1, -1)
        Q = check_matrix(queries, name="queries", dtype=np.float64, allow_empty=True)
        if Q.shape[1] != self.weights_.shape[1]:
            raise RLSIError(f"queries have {Q.shape[1]} term columns but the model was fitted on "
                            f"{self.weights_.shape[1]} terms; use the same vocabulary")
        return Q

    def _product(self, Q):
        """Dense ``Q @ W.T`` (float64): reads only the posting lists of the terms present in ``Q``
        (:func:`rlsi.retrieval.postings.accumulate`; a float32 index is never copied or converted)."""
        out = np.zeros((Q.shape[0], self.weights_.shape[0]))
        if Q.shape[0] == 0 or Q.nnz == 0:
            return out
        Q = sp.csr_matrix(Q, dtype=np.float64)
        Q.sum_duplicates()
        W = self.weights_
        col_ptr, rows, data = (np.asarray(a) for a in (W.indptr, W.indices, W.data))
        for i in range(Q.shape[0]):
            a, b = Q.indptr[i], Q.indptr[i + 1]
            accumulate(col_ptr, rows, data, Q.indices[a:b], Q.data[a:b], out[i])
        return out

    def _prepared(self, queries):
        """The query weights applied to the posting lists (checked CSR float64)."""
        return self._queries(queries)

    def score_postings(self, query):
        """Scores of one query (1 x n_terms) against every document, dense float64 ``(n_docs,)``, and
        the documents its posting lists reach (int64, each once): the others score 0."""
        Q = sp.csr_matrix(self._prepared(query), dtype=np.float64)
        if Q.shape[0] != 1:
            raise RLSIError(f"score_postings takes one query, got {Q.shape[0]}")
        Q.sum_duplicates()
        W = self.weights_
        col_ptr, rows, data = (np.asarray(a) for a in (W.indptr, W.indices, W.data))
        n_docs = W.shape[0]
        out = np.zeros(n_docs)
        total = int(sum(col_ptr[t + 1] - col_ptr[t] for t in Q.indices))
        touched = np.empty(min(total, n_docs), dtype=np.int64)
        m = accumulate_touched(col_ptr, rows, data, Q.indices, Q.data, out, np.zeros(n_docs, dtype=np.bool_),
                               touched)
        return out, touched[:m]

    @property
    def n_docs_(self) -> int:
        self._check_fitted()
        return self.weights_.shape[0]

    @property
    def n_terms_(self) -> int:
        self._check_fitted()
        return self.weights_.shape[1]

    # --- persistence ---------------------------------------------------------------------------------
    def _params(self) -> dict:
        return {}

    def _to_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """``(meta, arrays)``: JSON-able parameters/shape and the numpy arrays of the fitted model."""
        self._check_fitted()
        W = self.weights_
        meta = {"class": type(self).__name__, "version": _STATE_VERSION, "params": self._params(),
                "weights_shape": [int(W.shape[0]), int(W.shape[1])]}
        arrays = {"weights_data": W.data, "weights_indices": W.indices, "weights_indptr": W.indptr}
        arrays.update(self._extra_arrays())
        return meta, arrays

    def _extra_arrays(self) -> dict:
        return {}

    @classmethod
    def _from_state(cls, meta: dict, arrays: dict):
        """Rebuild a fitted model from :meth:`_to_state` output; damaged input raises ModelFormatError.

        Untrusted input: parameters, the shape, the dtypes and the full CSC structure (every row index
        in range, pointers non-decreasing) are checked, and every weight must be finite.
        """
        if not isinstance(meta, dict) or meta.get("class") != cls.__name__:
            found = meta.get("class") if isinstance(meta, dict) else None
            raise ModelFormatError(f"saved state is a {found!r}, not a {cls.__name__}")
        if meta.get("version") != _STATE_VERSION:
            raise ModelFormatError(f"{cls.__name__} state version {meta.get('version')!r} is not supported "
                                   f"(expected {_STATE_VERSION})")
        try:
            params = meta["params"]
            if not isinstance(params, dict) or set(params) != set(cls()._params()):
                raise ValueError(f"parameters {sorted(params) if isinstance(params, dict) else params!r}")
            model = cls(**params)
            model._check_params()
            shape = meta["weights_shape"]
            if (not isinstance(shape, list) or len(shape) != 2
                    or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**62 for x in shape)):
                raise ValueError(f"weights_shape {shape!r}")
            n_docs, n_terms = shape
            data, indices, indptr = (arrays[k] for k in ("weights_data", "weights_indices", "weights_indptr"))
            for arr in (data, indices, indptr):
                if not isinstance(arr, np.ndarray):
                    raise TypeError(f"weights are a {type(arr).__name__}, not arrays")
            # CSC of (n_docs, n_terms) is the CSR structure of its (n_terms, n_docs) transpose
            check_csr(data, indices, indptr, (n_terms, n_docs), "weights")
            check_float_values(data, "weights")
            # the stored float type is kept (a float32 index built by Searcher.from_matrix stays float32,
            # and a memory-mapped one stays mapped instead of being copied into float64)
            W = sp.csc_matrix((data, indices, indptr), shape=(n_docs, n_terms), copy=False)
            model._set_extra(arrays, n_docs, n_terms)
        except ModelFormatError as exc:
            raise ModelFormatError(f"damaged {cls.__name__} state: {exc}") from None
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ModelFormatError(f"damaged {cls.__name__} state: {' '.join(str(exc).split())}") from None
        model.weights_ = W
        return model

    def _check_params(self):
        pass

    def _set_extra(self, arrays, n_docs, n_terms):
        pass


class BM25(_TermModel):
    """Okapi BM25 (Lucene variant, see module docstring) over a documents x terms count matrix."""

    def __init__(self, k1: float = 1.2, b: float = 0.75):
        self.k1 = k1
        self.b = b

    def _params(self):
        return {"k1": float(self.k1), "b": float(self.b)}

    def fit(self, counts, y=None):
        """Precompute the BM25 weights from raw term counts (CSR or dense, documents x terms)."""
        check_number("k1", self.k1, low=0)
        check_number("b", self.b, low=0, high=1)
        X = check_matrix(counts, name="counts", dtype=np.float64)
        if X.nnz and X.data.min() < 0:
            raise RLSIError("counts contain negative values; BM25 needs raw term counts")
        X.eliminate_zeros()
        n_docs, n_terms = X.shape
        df = np.bincount(X.indices, minlength=n_terms).astype(np.float64)
        self.idf_ = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        self.doc_len_ = np.asarray(X.sum(axis=1)).ravel()
        self.avgdl_ = float(self.doc_len_.mean())
        norm = self.k1 * (1.0 - self.b + self.b * self.doc_len_ / (self.avgdl_ or 1.0))  # per document
        tf = X.data
        rows = np.repeat(np.arange(n_docs), np.diff(X.indptr))
        data = self.idf_[X.indices] * tf / (tf + norm[rows])
        self.weights_ = sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape).tocsc()
        return self

    def score(self, query_counts) -> np.ndarray:
        """BM25 scores, dense ``(n_queries, n_docs)``, of query term counts (same vocabulary as fit)."""
        return self._product(self._queries(query_counts))

    def _extra_arrays(self):
        return {"idf": self.idf_, "doc_len": self.doc_len_}

    def _check_params(self):
        check_number("k1", self.k1, low=0)
        check_number("b", self.b, low=0, high=1)

    def _set_extra(self, arrays, n_docs, n_terms):
        idf, doc_len = arrays["idf"], arrays["doc_len"]
        for name, arr, n in (("idf", idf, n_terms), ("doc_len", doc_len, n_docs)):
            if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "fiu" or arr.shape != (n,):
                raise ValueError(f"{name} does not match the weight matrix shape ({n_docs} x {n_terms})")
        self.idf_ = np.asarray(idf, dtype=np.float64)
        self.doc_len_ = np.asarray(doc_len, dtype=np.float64)
        if not (np.all(np.isfinite(self.idf_)) and np.all(np.isfinite(self.doc_len_))
                and np.all(self.doc_len_ >= 0)):
            raise ValueError("idf/doc_len hold non-finite or negative values")
        self.avgdl_ = float(self.doc_len_.mean()) if n_docs else 0.0


class VSM(_TermModel):
    """Vector space model: cosine similarity between tf-idf vectors (weights supplied by the caller)."""

    def fit(self, tfidf, y=None):
        """Store the L2-normalised document vectors (tf-idf CSR or dense, documents x terms)."""
        X = check_matrix(tfidf, name="tfidf", dtype=np.float64)
        self.weights_ = _normalize_rows(X).tocsc()
        return self

    def score(self, query_tfidf) -> np.ndarray:
        """Cosine similarities, dense ``(n_queries, n_docs)``, of tf-idf query vectors."""
        return self._product(self._prepared(query_tfidf))

    def _prepared(self, queries):
        return _normalize_rows(self._queries(queries))


def _normalize_rows(X: sp.csr_matrix) -> sp.csr_matrix:
    """Rows divided by their L2 norm (all-zero rows stay zero): the one row normaliser of rlsi."""
    return l2_normalize_rows(X)
