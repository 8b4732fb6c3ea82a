"""Building a search index from a matrix directory (``rlsi synth`` / ``rlsi ingest``), block by block.

:meth:`rlsi.retrieval.Searcher.from_matrix` calls :func:`index_matrix`, which gives the searcher the same
index as ``Searcher.index_matrices(tfidf=X, counts=C)`` (X the directory's tf-idf matrix, C its raw
counts, :meth:`rlsi.io.matrix.CorpusMatrix.count_matrix`) but never holds more than the index itself
plus one block of rows, so that 1.6M documents with a 7M-term vocabulary fit a 24 GB machine:

1. **statistics** — document frequencies (the column lengths) and document lengths (row sums of the
   counts, as :meth:`BM25.fit` computes them) in one pass over the memory-mapped matrix;
2. **term weights** — BM25 (or VSM) weights of each row block computed by the very expressions of
   :class:`~rlsi.retrieval.term.BM25` / :class:`~rlsi.retrieval.term.VSM` (float64), cast to the searcher's
   ``dtype`` and scattered straight into CSC arrays (:func:`rlsi.retrieval.postings.scatter_rows`):
   ``nnz`` values and ``nnz`` row indices (int32 when they fit), no transposed copy;
3. **topic vectors** — the rows folded in by the searcher's topic model (the model's own ``transform``, or
   the projection with ``fold_lambda2=inf``), block by block, L2-normalised into one ``(N, K)`` array of
   ``dtype``. Folding-in is row-wise, so the vectors equal those of :class:`TopicMatcher` on the whole matrix.
   A group model folds each document in on its class's topics (§7.3: the given ``labels``, else the class
   the model predicts for it), with the classes kept next to the vectors, as
   :class:`~rlsi.retrieval.group_topic.ClassTopicMatcher` does on the whole matrix.

Memory at the paper's web shape (N = 1.6M, nnz = 326M, K = 500, float32): term index 2.6 GB, topic vectors
3.2 GB, plus a block; the matrix itself is memory-mapped (page cache, not private memory).
"""

from __future__ import annotations

import logging
import time

import numpy as np
import scipy.sparse as sp

from .._progress import progress_bar
from ..errors import RLSIError
from ..text.ids import check_ids
from .postings import column_pointers, scatter_rows
from .term import BM25, VSM, _normalize_rows
from .group_topic import ClassTopicMatcher
from .topic import model_input, normalize_rows

__all__ = ["index_matrix", "DEFAULT_BLOCK_ROWS"]

log = logging.getLogger(__name__)

#: Rows per block: a block of the web corpus (~200 entries a row) and its float64 weights take ~40 MB.
DEFAULT_BLOCK_ROWS = 20_000


def _blocks(n, block_rows):
    return [(a, min(n, a + block_rows)) for a in range(0, n, block_rows)]


def _row_slice(A, a, b):
    """Rows a..b of a (memory-mapped) CSR as an in-memory CSR with local row pointers."""
    p0, p1 = int(A.indptr[a]), int(A.indptr[b])
    indptr = np.asarray(A.indptr[a:b + 1], dtype=np.int64) - p0
    B = sp.csr_matrix((np.array(A.data[p0:p1]), np.array(A.indices[p0:p1]), indptr), shape=(b - a, A.shape[1]))
    B.has_sorted_indices = A.has_sorted_indices
    return B


def _index_type(nnz, n_docs):
    return np.int32 if max(int(nnz), int(n_docs)) < 2**31 else np.int64


def index_matrix(searcher, matrix, *, labels=None, block_rows=DEFAULT_BLOCK_ROWS, show_progress=False):
    """Give ``searcher`` (a :class:`~rlsi.retrieval.Searcher`, parameters set) the index of the
    :class:`~rlsi.io.matrix.CorpusMatrix` ``matrix``; returns the searcher (see the module docstring).
    ``labels``: group models only, one class label per row (:meth:`~rlsi.retrieval.Searcher.index`)."""
    t0 = time.perf_counter()
    X = matrix.X
    n, m = X.shape
    if n == 0:
        raise RLSIError("nothing to index: the matrix has no document")
    topic = searcher._new_topic_index(labels)  # before any work: a wrong use of labels stops here
    if labels is not None and len(labels) != n:
        raise RLSIError(f"{len(labels)} document labels for the {n} documents of the matrix")
    bm25 = searcher.term_model == "bm25"
    C = matrix.count_matrix() if bm25 else None  # RLSIError naming the fix for a directory without counts
    dtype = np.dtype(searcher.dtype)
    blocks = _blocks(n, int(block_rows))

    # 1. statistics: column lengths (X's structure: the counts share it) and document lengths
    nnz = int(X.indptr[-1])
    df = np.zeros(m, dtype=np.int64)
    indices = X.indices
    for a in range(0, nnz, 1 << 24):
        df += np.bincount(np.asarray(indices[a: a + (1 << 24)]), minlength=m)
    itype = _index_type(nnz, n)
    col_ptr = column_pointers(df)
    if bm25:
        doc_len = np.empty(n, dtype=np.float64)
        for a, b in blocks:
            Cb = _row_slice(C, a, b)
            local = np.repeat(np.arange(b - a), np.diff(Cb.indptr))
            doc_len[a:b] = np.bincount(local, weights=Cb.data, minlength=b - a)  # whole numbers: exact
        term = BM25(searcher.k1, searcher.b)
        term._check_params()
        # the expressions of BM25.fit, on the same numbers
        term.idf_ = np.log1p((n - df.astype(np.float64) + 0.5) / (df.astype(np.float64) + 0.5))
        term.doc_len_ = doc_len
        term.avgdl_ = float(doc_len.mean())
        norm = term.k1 * (1.0 - term.b + term.b * doc_len / (term.avgdl_ or 1.0))
    else:
        term = VSM()

    # 2. term weights, scattered into CSC
    data = np.empty(nnz, dtype=dtype)
    rows = np.empty(nnz, dtype=itype)
    cursor = col_ptr[:-1].copy()
    bar = progress_bar(n, "term index", verbose=show_progress, unit="doc")
    for a, b in blocks:
        if bm25:
            Cb = _row_slice(C, a, b)
            tf = Cb.data.astype(np.float64)
            local = np.repeat(np.arange(b - a), np.diff(Cb.indptr))
            weights = term.idf_[Cb.indices] * tf / (tf + norm[a:b][local])
            ind, ptr = Cb.indices, Cb.indptr
        else:
            Wb = _normalize_rows(_row_slice(X, a, b).astype(np.float64))
            weights, ind, ptr = Wb.data, Wb.indices, Wb.indptr
        scatter_rows(ptr, ind, weights.astype(dtype, copy=False), a, cursor, data, rows)
        if bar is not None:
            bar.update(b - a)
    if bar is not None:
        bar.close()
    if not np.array_equal(cursor, col_ptr[1:]):  # pragma: no cover - the structure changed under us
        raise RLSIError("the matrix changed while it was indexed: index it again")
    term.weights_ = sp.csc_matrix((data, rows, col_ptr.astype(itype)), shape=(n, m), copy=False)
    del cursor
    t1 = time.perf_counter()
    log.info("term index (%s, %s): %d documents x %d terms, %d postings, %.1f s", searcher.term_model,
             dtype.name, n, m, nnz, t1 - t0)

    # 3. topic vectors of the documents, block by block
    if topic is not None:
        grouped = isinstance(topic, ClassTopicMatcher)
        counts_input = getattr(topic.model, "input_kind", "tfidf") == "counts"
        source = model_input(topic.model, tfidf=X, counts=matrix.count_matrix() if counts_input else None)
        V = None
        classes = np.empty(n, dtype=np.int64) if grouped else None
        bar = progress_bar(n, "topic vectors", verbose=show_progress, unit="doc")
        for a, b in blocks:
            Xb = _row_slice(source, a, b)
            if grouped:  # each document on its class's topics (normalised there)
                topic.fit(Xb, y=None if labels is None else labels[a:b])
                Vb = topic.doc_vectors_.astype(dtype, copy=False)
                classes[a:b] = topic.doc_classes_
            else:
                Vb = normalize_rows(topic.fold_in(Xb), dtype=dtype)
            if V is None:
                V = np.empty((n, Vb.shape[1]), dtype=dtype)
            V[a:b] = Vb
            if bar is not None:
                bar.update(b - a)
        if bar is not None:
            bar.close()
        topic.doc_vectors_ = V
        if grouped:
            topic.doc_classes_ = classes
        log.info("topic vectors: %d x %d (%s), %.1f s", n, V.shape[1], dtype.name, time.perf_counter() - t1)

    ids = None if matrix.doc_ids is None else check_ids(matrix.doc_ids, f"matrix directory {matrix.path}")
    searcher.term_index_ = term
    searcher.topic_index_ = topic
    # ids "0" ... "N-1" for a corpus without ids, as narrow strings (astype(str) would give <U21: 84 bytes each)
    searcher.doc_ids_ = (np.asarray(ids).astype(str) if ids is not None
                         else np.arange(n).astype(f"U{len(str(n - 1))}"))
    searcher._doc_order_ = None
    return searcher
