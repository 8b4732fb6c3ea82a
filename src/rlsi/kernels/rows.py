"""Reductions and dtype conversions of dense row blocks (n x K), in numba, parallel over rows
(deterministic: per-row results are combined in row order, whatever the threads).

* ``dot_sum(A, B)``, ``abs_sum(A)``, ``sq_sum(A)``: ``Σ A∘B``, ``Σ|a|``, ``Σa²`` in float64 without a
  temporary of A's size (the cross term of the objective, the ℓ1 and ℓ2 penalties).
* ``row_absmax(A)``: ``max_k |A[i, k]|`` per row (the screening bounds of the U-steps).
* ``cast_into(src, dst)`` / ``store_rounded(src, dst)``: parallel dtype conversions of dense row blocks
  (numpy's ``astype`` and slice assignment are single-threaded: with float32 fits they were 4-6 % of an
  iteration at 1 thread).

The products of sparse and dense matrices are in :mod:`rlsi.kernels.products`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["dot_sum", "abs_sum", "sq_sum", "row_absmax", "cast_into", "store_rounded"]


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


@njit(cache=True, parallel=True)
def _cast_into(src, dst):
    for i in prange(src.shape[0]):
        for k in range(src.shape[1]):
            dst[i, k] = src[i, k]


def cast_into(src, dst):
    """``dst[...] = src`` for 2-D arrays of one shape (``dst`` C-contiguous, any dtypes), in parallel over
    rows: the block conversions of the float32 paths (float32 -> float64 for BLAS and the closed-form ridge)."""
    if src.shape != dst.shape or not dst.flags.c_contiguous:
        raise ValueError("cast_into needs arrays of one shape and a C-contiguous destination")
    _cast_into(np.ascontiguousarray(src), dst)
    return dst


@njit(cache=True, parallel=True)
def _store_rounded(src, dst):
    for i in prange(src.shape[0]):
        for k in range(src.shape[1]):
            dst[i, k] = src[i, k]  # rounded to dst's dtype (as astype: to nearest)
            src[i, k] = dst[i, k]


def store_rounded(src, dst):
    """``dst[...] = src`` (float64 -> float32 rows, C-contiguous, one shape) and then ``src[...] = dst``, in one
    parallel pass: the stored (rounded) rows go to ``dst`` and ``src`` keeps them in float64 — what the gram
    ``S = WᵀW`` of the stored W is taken from by BLAS without another conversion (:func:`rlsi.models.tasks.doc_block`)."""
    if src.shape != dst.shape or not (src.flags.c_contiguous and dst.flags.c_contiguous):
        raise ValueError("store_rounded needs C-contiguous arrays of one shape")
    _store_rounded(src, dst)
    return dst
