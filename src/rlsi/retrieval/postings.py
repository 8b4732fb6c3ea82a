"""Posting-list kernels of the search index (numba): column-major weights built block by block, a
query scored by reading only its terms' posting lists, and top-n selection without sorting all scores.

* :func:`scatter_rows` — append a block of rows (CSR: ``indptr``, ``indices``, per-entry ``weights``)
  into preallocated CSC arrays (``data``, ``rows``), one cursor per column: the documents x terms weight
  matrix is built in CSC form directly, so neither a whole CSR copy nor a ``tocsc`` transpose (which
  doubles the memory) is ever needed. Rows come in order, so the row indices of each column stay sorted.
* :func:`accumulate` — ``out[d] += w_t * W[d, t]`` over the posting lists of the query terms ``t``:
  the dense score row of one query in O(sum of the query terms' document frequencies) (plus the zeroing
  of ``out``). The order of the additions is the order of ``scipy``'s CSR product (query terms in
  column order, then the documents of each list), so the scores are the same floats.
  :func:`accumulate_touched` also lists the documents reached, so that candidate selection ranks only
  those instead of scanning all N scores.
* :func:`top_n` — indices of the ``n`` best scores, best first, ties broken by a key (smaller first), in
  one pass with a heap of ``n`` entries: O(len + n log n), no full sort of millions of scores.

Arithmetic is float64 whatever the storage type (float32 weights are promoted when read).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["scatter_rows", "accumulate", "accumulate_touched", "top_n", "column_pointers"]


def column_pointers(df):
    """CSC column pointers (int64, ``len(df) + 1``) of a matrix with ``df[t]`` entries in column ``t``."""
    ptr = np.zeros(len(df) + 1, dtype=np.int64)
    np.cumsum(df, out=ptr[1:])
    return ptr


@njit(cache=True, nogil=True)
def scatter_rows(indptr, indices, weights, row_offset, cursor, data, rows):
    """Write rows ``row_offset + i`` (CSR block ``indptr, indices, weights``) into the CSC arrays
    ``data``/``rows``; ``cursor[t]`` is the next free slot of column ``t`` (advanced in place)."""
    n = len(indptr) - 1
    for i in range(n):
        r = row_offset + i
        for p in range(indptr[i], indptr[i + 1]):
            t = indices[p]
            q = cursor[t]
            data[q] = weights[p]
            rows[q] = r
            cursor[t] = q + 1


@njit(cache=True, nogil=True)
def accumulate(col_ptr, rows, data, terms, weights, out):
    """``out[rows[p]] += weights[j] * data[p]`` for every entry ``p`` of column ``terms[j]`` (a query's
    posting lists; ``out`` is float64, one slot per document)."""
    for j in range(len(terms)):
        t = terms[j]
        w = weights[j]
        for p in range(col_ptr[t], col_ptr[t + 1]):
            out[rows[p]] += w * np.float64(data[p])


@njit(cache=True, nogil=True)
def accumulate_touched(col_ptr, rows, data, terms, weights, out, seen, touched):
    """:func:`accumulate`, also listing the documents the posting lists reach: ``touched[:m]`` (each
    once, in order of first reach; ``seen`` is a zeroed bool array of one flag per document). Returns m."""
    m = 0
    for j in range(len(terms)):
        t = terms[j]
        w = weights[j]
        for p in range(col_ptr[t], col_ptr[t + 1]):
            r = rows[p]
            if not seen[r]:
                seen[r] = True
                touched[m] = r
                m += 1
            out[r] += w * np.float64(data[p])
    return m


@njit(cache=True, inline="always")
def _worse(s1, k1, s2, k2):
    """Entry 1 ranks below entry 2: a lower score, or the same score and a larger tie key."""
    return s1 < s2 or (s1 == s2 and k1 > k2)


@njit(cache=True, nogil=True)
def _sift_down(hs, hk, hi, size, pos):
    while True:
        child = 2 * pos + 1
        if child >= size:
            return
        if child + 1 < size and _worse(hs[child + 1], hk[child + 1], hs[child], hk[child]):
            child += 1
        if _worse(hs[child], hk[child], hs[pos], hk[pos]):
            hs[pos], hs[child] = hs[child], hs[pos]
            hk[pos], hk[child] = hk[child], hk[pos]
            hi[pos], hi[child] = hi[child], hi[pos]
            pos = child
        else:
            return


@njit(cache=True, nogil=True)
def top_n(scores, keys, n):
    """Indices (int64) of the ``min(n, len(scores))`` best entries, best first: higher score first, then
    smaller ``keys`` (a total order when the keys are distinct). A min-heap holds the n best so far, its
    worst at the root, so most entries cost one comparison."""
    m = len(scores)
    n = min(n, m)
    hs = np.empty(n, dtype=np.float64)
    hk = np.empty(n, dtype=np.int64)
    hi = np.empty(n, dtype=np.int64)
    size = 0
    for i in range(m):
        s = np.float64(scores[i])
        k = np.int64(keys[i])
        if size < n:  # push, then sift up
            pos = size
            hs[pos], hk[pos], hi[pos] = s, k, i
            size += 1
            while pos > 0:
                parent = (pos - 1) // 2
                if _worse(hs[pos], hk[pos], hs[parent], hk[parent]):
                    hs[pos], hs[parent] = hs[parent], hs[pos]
                    hk[pos], hk[parent] = hk[parent], hk[pos]
                    hi[pos], hi[parent] = hi[parent], hi[pos]
                    pos = parent
                else:
                    break
        elif n > 0 and _worse(hs[0], hk[0], s, k):  # better than the worst kept: replace the root
            hs[0], hk[0], hi[0] = s, k, i
            _sift_down(hs, hk, hi, size, 0)
    out = np.empty(n, dtype=np.int64)
    for j in range(n - 1, -1, -1):  # pop the worst each time: fills the result from the back
        out[j] = hi[0]
        size -= 1
        hs[0], hk[0], hi[0] = hs[size], hk[size], hi[size]
        _sift_down(hs, hk, hi, size, 0)
    return out
