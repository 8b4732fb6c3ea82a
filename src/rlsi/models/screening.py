"""Rows of ``R = D W`` for the batch U-step: plain (:class:`BatchR`) or with exact screening
(:class:`ScreenedBatchR`). Both are ``r_rows(a, b)`` providers for :func:`rlsi.models.steps.update_topics`
and may be called for different blocks concurrently (each call writes only its own rows of the state).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._rows import row_norms
from ..kernels.products import csr_dense_rows, csr_dense_rows_max


class BatchR:
    """Rows of ``R = D W`` with ``D = Xᵀ`` as CSR (M x N) and W (N x K); ``set_state`` per iteration."""

    def __init__(self, D):
        self.D = D
        self._W = None

    def set_state(self, W, U_prev):
        """Start an iteration with the document vectors W (N x K); ``U_prev`` is unused here."""
        self._W = np.ascontiguousarray(W)

    def __call__(self, a, b):
        return csr_dense_rows(self.D, a, b, self._W, dtype=self._W.dtype)

    rows_skipped = 0
    total_skipped = 0


@njit(cache=True)
def _column_sq_diff(A, B):
    """``Σ_n (A[n, k] − B[n, k])²`` for each column k, in float64, without temporaries."""
    out = np.zeros(A.shape[1])
    for n in range(A.shape[0]):
        for k in range(A.shape[1]):
            d = float(A[n, k]) - B[n, k]
            out[k] += d * d
    return out


class ScreenedBatchR:
    """Rows of ``R = D W`` for the batch ℓ1 U-step, skipping rows whose lasso solution is provably zero.

    A term row m whose previous topic weights are all zero keeps the zero solution exactly when
    ``max_k |r_mk| <= λ/2`` (the KKT conditions at 0). Without computing r_m we know
    ``|r_mk(W_t)| <= |r_mk(W_s)| + ‖d_m‖₂ ‖W_t[:, k] − W_s[:, k]‖₂`` (Cauchy–Schwarz) for the W_s at which
    the row was last computed, so ``bound_m`` — the last computed ``max_k |r_mk|`` plus
    ``‖d_m‖₂ · max_k ‖ΔW_k‖₂`` accumulated over the iterations since — certifies a skip. Skipped rows are
    returned as zeros, which the lasso kernel then skips too: the U-step result is bit-identical to
    computing every row (tested), at the cost of one N x K copy of the previous W and M floats.
    Late in a fit this avoids about half of the ``nnz(D) · K`` work of ``R``.
    """

    def __init__(self, D, half_lam):
        self.D = D
        self.half_lam = float(half_lam)
        self.row_norms = row_norms(D)
        self.bound = np.full(D.shape[0], np.inf)
        self.W = None
        self.U_prev = None
        self._skipped = {}  # block start -> rows skipped (dict stores are atomic: safe under threads)
        self.total_skipped = 0

    @property
    def rows_skipped(self):
        """Rows skipped in the current iteration."""
        return sum(self._skipped.values())

    def _close_count(self):
        self.total_skipped += self.rows_skipped
        self._skipped = {}

    def set_state(self, W, U_prev):
        """Start an iteration: the new document vectors W (N x K) and the previous topics (M x K CSR or
        ndarray, or None)."""
        self._close_count()
        if self.W is not None:
            drift = float(np.sqrt(np.max(_column_sq_diff(np.ascontiguousarray(W), self.W))))
            self.bound += self.row_norms * drift
            self.W[...] = W  # the W at which this iteration's rows are computed
        else:
            self.W = np.array(W, dtype=np.float64)
        self._Wc = np.ascontiguousarray(W)
        self.U_prev = U_prev

    def invalidate(self):
        """Forget the bounds and the stored W (an iteration computed R without this provider): the next
        iteration computes every row again, which makes the bounds valid anew."""
        self._close_count()
        self.bound[:] = np.inf
        self.W = None

    def finish(self):
        """Close the last iteration's count into ``total_skipped``."""
        self._close_count()

    def __call__(self, a, b):
        # a relative margin keeps the certificate valid under the rounding of the product itself
        need = self.bound[a:b] > self.half_lam * (1.0 - 1e-6)
        if isinstance(self.U_prev, np.ndarray):
            need |= np.any(self.U_prev[a:b] != 0, axis=1)
        elif self.U_prev is not None:
            need |= np.diff(self.U_prev.indptr[a:b + 1]) > 0
        Rb, rowmax = csr_dense_rows_max(self.D, a, b, self._Wc, need, dtype=self._Wc.dtype)
        bound = self.bound[a:b]
        bound[need] = rowmax[need]
        self._skipped[a] = int(len(need) - np.count_nonzero(need))
        return Rb


def batch_r_rows(D, W):
    """An ``r_rows(a, b)`` provider of ``R = D W`` for fixed W (no screening): rows of ``D W``."""
    provider = BatchR(D)
    provider.set_state(W, None)
    return provider
