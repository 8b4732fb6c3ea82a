"""Numba kernels of the live index: BM25 of one segment with the statistics of the moment, and the
exact bookkeeping of deletes.

* :func:`bm25_postings` — a query's BM25 scores over one segment's posting lists, its weights computed
  at query time from the raw term frequencies and the index-wide N, document frequencies and mean
  length. The arithmetic is that of :meth:`rlsi.retrieval.term.BM25.fit` followed by
  :func:`rlsi.retrieval.postings.accumulate`, operation for operation — ``norm = k1 · (1 − b + b · |d| /
  avgdl)``, ``w = idf · tf / (tf + norm)``, ``score += qtf · w`` over the query terms in column order —
  so a score equals the one of an index built from scratch over the same documents to the last bit.
  It lists the documents it reaches, so that a candidate search ranks those only.
* :func:`drop_rows_df` — the document frequencies of a segment's columns after deleting rows, read from
  the rows' own terms (the segment's forward index): O(postings of the deleted rows).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["bm25_postings", "drop_rows_df"]


@njit(cache=True, nogil=True)
def bm25_postings(col_ptr, rows, tf, cols, qtf, idf, doc_len, k1, b, avgdl, out, seen, touched):
    """``out[d] += qtf[j] · idf[j] · tf / (tf + k1 · (1 − b + b · doc_len[d] / avgdl))`` over the postings
    of the local columns ``cols[j]`` (skipped when < 0); ``touched[:m]`` lists the rows reached, each once
    (``seen`` is a zeroed flag per row). Returns m."""
    m = 0
    for j in range(len(cols)):
        c = cols[j]
        if c < 0:
            continue
        w = qtf[j]
        term_idf = idf[j]
        for p in range(col_ptr[c], col_ptr[c + 1]):
            r = rows[p]
            if not seen[r]:
                seen[r] = True
                touched[m] = r
                m += 1
            f = np.float64(tf[p])
            norm = k1 * (1.0 - b + b * doc_len[r] / avgdl)
            out[r] += w * (term_idf * f / (f + norm))
    return m


@njit(cache=True, nogil=True)
def drop_rows_df(row_ptr, cols, deleted_rows, df):
    """``df[c] -= 1`` for every column ``c`` of every row of ``deleted_rows`` (each row once)."""
    for i in range(len(deleted_rows)):
        r = deleted_rows[i]
        for p in range(row_ptr[r], row_ptr[r + 1]):
            df[cols[p]] -= 1
