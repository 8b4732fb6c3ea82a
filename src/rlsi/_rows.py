"""Row normalisation, one implementation for every module (documents, topic vectors, seeds)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def row_norms(A):
    """ℓ2 norm of each row (float64) of a dense or sparse 2-D array."""
    if sp.issparse(A):
        A = sp.csr_matrix(A)
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        return np.sqrt(np.bincount(rows, weights=np.square(A.data, dtype=np.float64), minlength=A.shape[0]))
    A = np.asarray(A)
    return np.sqrt(np.einsum("ij,ij->i", A, A, dtype=np.float64))


def l2_normalize_rows(A, dtype=None):
    """Rows of A divided by their ℓ2 norm; all-zero rows stay zero.

    Dense input (non-finite entries become 0 first) gives an ndarray of ``dtype`` (A's by default);
    sparse input gives a CSR matrix.
    """
    if sp.issparse(A):
        A = sp.csr_matrix(A, dtype=dtype or A.dtype, copy=True)
        norms = row_norms(A)
        scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        A.data *= np.repeat(scale, np.diff(A.indptr)).astype(A.dtype, copy=False)
        return A
    dtype = dtype or (A.dtype if np.issubdtype(np.asarray(A).dtype, np.floating) else np.float64)
    V = np.asarray(A, dtype=dtype)
    V = np.where(np.isfinite(V), V, 0.0).astype(dtype, copy=False)
    norms = row_norms(V)
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return V * scale[:, None].astype(dtype)
