"""Sparse x dense products of RLSI, in numba, parallel over output rows (deterministic).

* ``csr_dense(A, B)``: ``A @ B`` for CSR ``A`` (n x m) and dense ``B`` (m x K). Used for
  ``R = D Vᵀ`` by blocks of terms (A = rows of D, i.e. columns of X) and for folding in.
* ``dense_to_csr`` / ``csr_rows_to_dense``: parallel conversions between the dense blocks the lasso
  works on and the CSR topics that are kept (``csr_take_dense`` / ``dense_rows_to_csr`` and
  ``csr_dense_take`` for the rows of a block that screening leaves to compute) (scipy's conversions are single-threaded and were a tenth
  of an iteration at 200k terms x K=200).
* ``csr_csr_dense(A, B, a=, b=)``: ``A[a:b] @ B`` for CSR ``A`` (n x m) and CSR ``B`` (m x K) into a
  dense result. Used for ``Φᵀ = X U`` with sparse topics: cost ``Σ_nnz(A) nnz(B row)``, no densified U.

scipy's CSR x dense product is single-threaded and, for float32, upcasts; these kernels keep the dtype of
the output chosen by the caller and run on every numba thread.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange


@njit(cache=True, parallel=True)
def _csr_csr_dense(a_indptr, a_indices, a_data, b_indptr, b_indices, b_data, out, row0=0):
    n = out.shape[0]
    K = out.shape[1]
    for i in prange(n):
        for k in range(K):
            out[i, k] = 0.0
        for p in range(a_indptr[row0 + i], a_indptr[row0 + i + 1]):
            j = a_indices[p]
            a = a_data[p]
            for q in range(b_indptr[j], b_indptr[j + 1]):
                out[i, b_indices[q]] += a * b_data[q]


def csr_dense(A, B, dtype=None):
    """Dense ``A @ B`` for scipy CSR ``A`` (n x m) and ndarray ``B`` (m x K)."""
    return csr_dense_rows(A, 0, A.shape[0], B, dtype=dtype)


def csr_csr_dense(A, B, dtype=None, a=0, b=None):
    """Dense ``A[a:b] @ B`` for scipy CSR ``A`` (n x m) and CSR ``B`` (m x K), without slicing A (scipy's
    row slice copies the rows, single-threaded)."""
    dtype = np.dtype(dtype or np.result_type(A.dtype, B.dtype))
    b = A.shape[0] if b is None else b
    out = np.empty((b - a, B.shape[1]), dtype=dtype)
    _csr_csr_dense(A.indptr, A.indices, A.data.astype(dtype, copy=False),
                   B.indptr, B.indices, B.data.astype(dtype, copy=False), out, a)
    return out


@njit(cache=True, parallel=True)
def _count_row_nonzeros(A):
    n, K = A.shape
    counts = np.zeros(n + 1, dtype=np.int64)
    for i in prange(n):
        c = 0
        for k in range(K):
            if A[i, k] != 0.0:
                c += 1
        counts[i + 1] = c
    return counts


@njit(cache=True, parallel=True)
def _fill_csr(A, indptr, indices, data):
    n, K = A.shape
    for i in prange(n):
        p = indptr[i]
        for k in range(K):
            if A[i, k] != 0.0:
                indices[p] = k
                data[p] = A[i, k]
                p += 1


def dense_to_csr(A):
    """CSR copy of a dense (n x K) block, in parallel (scipy's conversion is single-threaded)."""
    A = np.ascontiguousarray(A)
    indptr = np.cumsum(_count_row_nonzeros(A))
    idx_dtype = np.int32 if A.shape[1] < 2**31 and indptr[-1] < 2**31 else np.int64
    indices = np.empty(indptr[-1], dtype=idx_dtype)
    data = np.empty(indptr[-1], dtype=A.dtype)
    _fill_csr(A, indptr, indices, data)
    return sp.csr_matrix((data, indices, indptr.astype(idx_dtype)), shape=A.shape)


@njit(cache=True, parallel=True)
def _scatter_rows(indptr, indices, data, row0, out):
    for i in prange(out.shape[0]):
        for p in range(indptr[row0 + i], indptr[row0 + i + 1]):
            out[i, indices[p]] += data[p]  # adds duplicates of a non-canonical CSR, as scipy does


def csr_rows_to_dense(A, a, b, dtype=None):
    """Dense copy of rows a..b of CSR ``A`` without slicing it first."""
    out = np.zeros((b - a, A.shape[1]), dtype=dtype or A.dtype)
    _scatter_rows(A.indptr, A.indices, A.data, a, out)
    return out


@njit(cache=True, parallel=True)
def _csr_dense_rows(indptr, indices, data, row0, mask, B, out, rowmax):
    n = out.shape[0]
    K = out.shape[1]
    want_max = rowmax.shape[0] > 0
    for i in prange(n):
        for k in range(K):
            out[i, k] = 0.0
        if not mask[i]:
            continue
        for p in range(indptr[row0 + i], indptr[row0 + i + 1]):
            j = indices[p]
            a = data[p]
            for k in range(K):
                out[i, k] += a * B[j, k]
        if want_max:  # the row's max |entry| from the same pass (the batch U-step's screening needs it)
            m = 0.0
            for k in range(K):
                v = abs(out[i, k])
                if v > m:
                    m = v
            rowmax[i] = m


def csr_dense_rows(A, a, b, B, mask=None, dtype=None):
    """Rows a..b of ``A @ B`` (CSR ``A``, dense ``B``) without slicing A; rows where ``mask`` is False
    are left zero (not computed)."""
    dtype = np.dtype(dtype or np.result_type(A.dtype, B.dtype))
    B = np.ascontiguousarray(B, dtype=dtype)
    mask = np.ones(b - a, dtype=np.bool_) if mask is None else np.ascontiguousarray(mask, dtype=np.bool_)
    out = np.empty((b - a, B.shape[1]), dtype=dtype)
    _csr_dense_rows(A.indptr, A.indices, A.data.astype(dtype, copy=False), a, mask, B, out, _NO_ROWMAX)
    return out


_NO_ROWMAX = np.zeros(0)


@njit(cache=True, parallel=True)
def _csr_dense_take(indptr, indices, data, rows, B, out, rowmax):
    K = out.shape[1]
    for i in prange(rows.shape[0]):
        row = rows[i]
        for k in range(K):
            out[i, k] = 0.0
        for p in range(indptr[row], indptr[row + 1]):  # the sums of _csr_dense_rows, in the same order
            j = indices[p]
            a = data[p]
            for k in range(K):
                out[i, k] += a * B[j, k]
        m = 0.0
        for k in range(K):
            v = abs(out[i, k])
            if v > m:
                m = v
        rowmax[i] = m


def csr_dense_take(A, rows, B, dtype=None):
    """Rows ``rows`` (int64 indices) of ``A @ B`` (CSR ``A``, dense ``B``), only those: returns
    ``(out (len(rows) x K), rowmax)`` with ``rowmax[i] = max_k |out[i, k]|`` (float64). Each row equals
    the row of :func:`csr_dense_rows` bit for bit."""
    dtype = np.dtype(dtype or np.result_type(A.dtype, B.dtype))
    B = np.ascontiguousarray(B, dtype=dtype)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    out = np.empty((len(rows), B.shape[1]), dtype=dtype)
    rowmax = np.empty(len(rows))
    _csr_dense_take(A.indptr, A.indices, A.data.astype(dtype, copy=False), rows, B, out, rowmax)
    return out, rowmax


@njit(cache=True, parallel=True)
def _take_rows(indptr, indices, data, rows, out):
    for i in prange(rows.shape[0]):
        row = rows[i]
        for p in range(indptr[row], indptr[row + 1]):
            out[i, indices[p]] += data[p]  # adds duplicates of a non-canonical CSR, as scipy does


def csr_take_dense(A, rows, dtype=None):
    """Dense copy of rows ``rows`` (int64 indices) of CSR ``A`` (len(rows) x n_cols), in parallel."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    out = np.zeros((len(rows), A.shape[1]), dtype=dtype or A.dtype)
    _take_rows(A.indptr, A.indices, A.data, rows, out)
    return out


def dense_rows_to_csr(A, rows, n_rows):
    """CSR (n_rows x K) whose rows ``rows`` (increasing int64 indices) are the rows of the dense ``A``
    (len(rows) x K) without their zeros, all other rows empty: the inverse of :func:`csr_take_dense` for a
    block of which only some rows were computed (no n_rows x K array is formed)."""
    A = np.ascontiguousarray(A)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    counts = np.zeros(n_rows + 1, dtype=np.int64)
    counts[rows + 1] = _count_row_nonzeros(A)[1:]
    indptr = np.cumsum(counts)
    idx_dtype = np.int32 if A.shape[1] < 2**31 and indptr[-1] < 2**31 else np.int64
    indices = np.empty(indptr[-1], dtype=idx_dtype)
    data = np.empty(indptr[-1], dtype=A.dtype)
    _fill_csr(A, indptr[rows], indices, data)  # row i of A starts at indptr[rows[i]]
    return sp.csr_matrix((data, indices, indptr.astype(idx_dtype)), shape=(n_rows, A.shape[1]))


@njit(cache=True, parallel=True)
def _row_sums(A, squared):
    n = A.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        s = 0.0
        for v in A[i]:
            x = np.float64(v)  # square float32 entries in float64, as np.square(dtype=float64) does
            s += x * x if squared else abs(x)
        out[i] = s
    return out


@njit(cache=True, parallel=True)
def _row_dots(A, B):
    out = np.zeros(A.shape[0])
    for i in prange(A.shape[0]):
        s = 0.0
        for k in range(A.shape[1]):
            s += np.float64(A[i, k]) * np.float64(B[i, k])
        out[i] = s
    return out


def dot_sum(A, B):
    """``Σ_ij A_ij B_ij`` of two 2-D arrays of one shape, in float64 and in parallel (rows; the row sums are
    added in row order, so the result does not depend on the threads)."""
    return float(_row_dots(np.ascontiguousarray(A), np.ascontiguousarray(B)).sum())


def abs_sum(A):
    """``Σ|a|`` of a 2-D array in float64, in parallel and without a temporary of A's size."""
    A = np.asarray(A)
    if A.ndim != 2:
        A = A.reshape(1, -1)
    return float(_row_sums(np.ascontiguousarray(A), False).sum())


def sq_sum(A):
    """``Σa²`` of a 2-D array in float64, in parallel and without a temporary of A's size."""
    A = np.asarray(A)
    if A.ndim != 2:
        A = A.reshape(1, -1)
    return float(_row_sums(np.ascontiguousarray(A), True).sum())


def csr_dense_rows_max(A, a, b, B, mask, dtype=None):
    """:func:`csr_dense_rows` with a mask, also returning ``max_k |out[i, k]|`` of every computed row
    (float64; 0 for rows not computed) from the same pass (the screening of the batch U-step needs it)."""
    dtype = np.dtype(dtype or np.result_type(A.dtype, B.dtype))
    B = np.ascontiguousarray(B, dtype=dtype)
    mask = np.ascontiguousarray(mask, dtype=np.bool_)
    out = np.empty((b - a, B.shape[1]), dtype=dtype)
    rowmax = np.zeros(b - a)
    _csr_dense_rows(A.indptr, A.indices, A.data.astype(dtype, copy=False), a, mask, B, out, rowmax)
    return out, rowmax


@njit(cache=True, parallel=True)
def _row_absmax(A):
    out = np.zeros(A.shape[0])
    for i in prange(A.shape[0]):
        m = 0.0
        for k in range(A.shape[1]):
            v = abs(np.float64(A[i, k]))
            if v > m:
                m = v
        out[i] = m
    return out


def row_absmax(A):
    """``max_k |A[i, k]|`` of every row of a dense 2-D array (float64; 0 for an empty row)."""
    return _row_absmax(np.ascontiguousarray(A))
