"""Conversions between the dense row blocks the solvers work on and the CSR topics that are kept, in numba,
parallel over rows (scipy's conversions are single-threaded and were a tenth of an iteration at 200k terms x
K = 200).

* ``dense_to_csr`` / ``csr_rows_to_dense``: a whole dense block to CSR, a range of CSR rows to dense.
* ``csr_take_dense`` / ``dense_rows_to_csr``: only the rows of a block that screening leaves to compute
  (``rlsi.kernels.products.csr_dense_take`` computes their rows of R).
* ``csr_of_dense_rows``: some rows of a dense M x K array as an M x K CSR, read where they lie.
* ``out_block``: the check of a caller's output block (the reused buffers of
  :class:`rlsi.models.tasks.BlockScratch`).

Duplicate entries of a non-canonical CSR are added, as scipy does.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange


@njit(cache=True, parallel=True)
def _count_row_nonzeros(A, rows):
    """``counts[i + 1]`` = non-zero entries of row ``rows[i]`` of the dense A (counts[0] = 0)."""
    K = A.shape[1]
    counts = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    for i in prange(rows.shape[0]):
        m = rows[i]
        c = 0
        for k in range(K):
            if A[m, k] != 0.0:
                c += 1
        counts[i + 1] = c
    return counts


@njit(cache=True, parallel=True)
def _fill_csr(A, rows, starts, indices, data):
    """Write the non-zero entries of row ``rows[i]`` of the dense A from position ``starts[i]`` on."""
    K = A.shape[1]
    for i in prange(rows.shape[0]):
        m = rows[i]
        p = starts[i]
        for k in range(K):
            if A[m, k] != 0.0:
                indices[p] = k
                data[p] = A[m, k]
                p += 1


def index_itemsize(nnz, n_cols=0):
    """Bytes of a CSR index with ``nnz`` entries and ``n_cols`` columns: int32 below 2³¹ (scipy's and
    :func:`_csr_parts`' choice), int64 beyond."""
    return 4 if max(int(nnz), int(n_cols)) < 2**31 else 8


def csr_nbytes(n_rows, nnz, itemsize, index_bytes=None, n_cols=0):
    """Bytes of a CSR matrix (data, indices, indptr) of ``n_rows`` rows and ``nnz`` entries of ``itemsize``;
    ``index_bytes`` None: :func:`index_itemsize`."""
    i = index_itemsize(nnz, n_cols) if index_bytes is None else int(index_bytes)
    return int(nnz) * (int(itemsize) + i) + (int(n_rows) + 1) * i


def _csr_parts(counts_of_rows, K, dtype):
    """indptr (from per-row counts, int64 (n + 1,)), and empty indices/data arrays of the right types."""
    indptr = np.cumsum(counts_of_rows)
    idx_dtype = np.int32 if K < 2**31 and indptr[-1] < 2**31 else np.int64
    return indptr, np.empty(indptr[-1], dtype=idx_dtype), np.empty(indptr[-1], dtype=dtype), idx_dtype


def dense_to_csr(A):
    """CSR copy of a dense (n x K) block, in parallel (scipy's conversion is single-threaded)."""
    A = np.ascontiguousarray(A)
    every = np.arange(A.shape[0], dtype=np.int64)
    indptr, indices, data, idx_dtype = _csr_parts(_count_row_nonzeros(A, every), A.shape[1], A.dtype)
    _fill_csr(A, every, indptr, indices, data)
    return sp.csr_matrix((data, indices, indptr.astype(idx_dtype)), shape=A.shape)


def csr_of_dense_rows(U, rows):
    """The M x K CSR holding the rows ``rows`` (ascending int64) of the dense U (M x K) without their zeros,
    the other rows empty, read where they lie: two passes over those rows only, no copy of them, no pass
    over M x K."""
    M, K = U.shape
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    counts = np.zeros(M + 1, dtype=np.int64)
    counts[rows + 1] = _count_row_nonzeros(U, rows)[1:]
    indptr, indices, data, idx_dtype = _csr_parts(counts, K, U.dtype)
    _fill_csr(U, rows, indptr[rows], indices, data)
    return sp.csr_matrix((data, indices, indptr.astype(idx_dtype)), shape=(M, K))


def csr_rows_to_dense(A, a, b, dtype=None):
    """Dense copy of rows a..b of CSR ``A`` without slicing it first (:func:`csr_take_dense` of that range)."""
    return csr_take_dense(A, np.arange(a, b, dtype=np.int64), dtype=dtype)


@njit(cache=True, parallel=True)
def _take_rows(indptr, indices, data, rows, out, zero=False):
    for i in prange(rows.shape[0]):
        if zero:  # a reused buffer: each row cleared by its own thread, just before it is filled
            for k in range(out.shape[1]):
                out[i, k] = 0.0
        row = rows[i]
        for p in range(indptr[row], indptr[row + 1]):
            out[i, indices[p]] += data[p]  # adds duplicates of a non-canonical CSR, as scipy does


def csr_take_dense(A, rows, dtype=None, out=None):
    """Dense copy of rows ``rows`` (int64 indices) of CSR ``A`` (len(rows) x n_cols), in parallel; ``out``:
    optional C-contiguous array of that shape and dtype to write into (a reused buffer, as
    :func:`rlsi.kernels.products.csr_dense_take`)."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    zero = out is not None
    if out is None:
        out = np.zeros((len(rows), A.shape[1]), dtype=dtype or A.dtype)
    else:
        out = out_block(out, (len(rows), A.shape[1]), np.dtype(dtype or A.dtype))
    _take_rows(A.indptr, A.indices, A.data, rows, out, zero)
    return out


def out_block(out, shape, dtype):
    """``out`` checked as a C-contiguous writeable array of ``shape`` and ``dtype``, or a new empty one."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if out.shape != tuple(shape) or out.dtype != dtype or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"out must be a writeable C-contiguous {dtype} array of shape {tuple(shape)}, got "
                         f"{out.dtype} {out.shape}")
    return out


def dense_rows_to_csr(A, rows, n_rows):
    """CSR (n_rows x K) whose rows ``rows`` (increasing int64 indices) are the rows of the dense ``A``
    (len(rows) x K) without their zeros, all other rows empty: the inverse of :func:`csr_take_dense` for a
    block of which only some rows were computed (no n_rows x K array is formed)."""
    A = np.ascontiguousarray(A)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    every = np.arange(A.shape[0], dtype=np.int64)
    counts = np.zeros(n_rows + 1, dtype=np.int64)
    counts[rows + 1] = _count_row_nonzeros(A, every)[1:]
    indptr, indices, data, idx_dtype = _csr_parts(counts, A.shape[1], A.dtype)
    _fill_csr(A, every, indptr[rows], indices, data)  # row i of A starts at indptr[rows[i]]
    return sp.csr_matrix((data, indices, indptr.astype(idx_dtype)), shape=(n_rows, A.shape[1]))
