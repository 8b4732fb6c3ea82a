"""Rows of ``R = D W`` for the batch U-step: plain (:class:`BatchR`) or with exact screening
(:class:`ScreenedBatchR`). Both are ``r_rows(a, b)`` providers for :func:`rlsi.models.steps.update_topics`
and may be called for different blocks concurrently (each call writes only its own rows of the state).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._rows import row_norms
from ..kernels.products import csr_dense_rows, csr_dense_rows_max, csr_dense_take
from .steps import nonzero_row_mask


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


#: Rows per chunk of :func:`_drift_and_store` (fixed, so the column sums do not depend on the threads).
DRIFT_CHUNK = 1024


@njit(cache=True, parallel=True)
def _drift_and_store(W, stored):
    """``Σ_n (W[n, k] − stored[n, k])²`` for each column k (float64), and ``stored[...] = W``, in one
    parallel pass. Partial sums over fixed row chunks, added in chunk order: the same numbers on any
    number of threads."""
    N, K = W.shape
    n_chunks = (N + DRIFT_CHUNK - 1) // DRIFT_CHUNK
    parts = np.zeros((n_chunks, K))
    for c in prange(n_chunks):
        part = parts[c]
        for n in range(c * DRIFT_CHUNK, min(N, (c + 1) * DRIFT_CHUNK)):
            for k in range(K):
                w = np.float64(W[n, k])
                d = w - stored[n, k]
                part[k] += d * d
                stored[n, k] = w
    out = np.zeros(K)
    for c in range(n_chunks):
        for k in range(K):
            out[k] += parts[c, k]
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
            # the drift of W since the last iteration, and the W at which this iteration's rows are computed
            sq = _drift_and_store(np.ascontiguousarray(W), self.W)
            self.bound += self.row_norms * float(np.sqrt(np.max(sq, initial=0.0)))
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

    def _need(self, a, b):
        """Rows of block a..b that must be computed (the others are certified zero)."""
        # a relative margin keeps the certificate valid under the rounding of the product itself
        need = self.bound[a:b] > self.half_lam * (1.0 - 1e-6)
        if isinstance(self.U_prev, np.ndarray):
            need |= nonzero_row_mask(self.U_prev[a:b])
        elif self.U_prev is not None:
            need |= np.diff(self.U_prev.indptr[a:b + 1]) > 0
        return need

    def __call__(self, a, b):
        need = self._need(a, b)
        Rb, rowmax = csr_dense_rows_max(self.D, a, b, self._Wc, need, dtype=self._Wc.dtype)
        bound = self.bound[a:b]
        bound[need] = rowmax[need]
        self._skipped[a] = int(len(need) - np.count_nonzero(need))
        return Rb

    def compact(self, a, b):
        """Only the rows of block a..b that are not certified zero: ``(rows, R_rows)`` with ``rows`` the
        int64 indices relative to a and R_rows (len(rows) x K) those rows of R, bit-identical to
        ``self(a, b)[rows]``; every other row of the block has a zero solution and zero previous topics.
        Late in a sparse fit most rows are skipped, and no block x K array of zeros is written, scanned
        by the lasso and converted for them."""
        rows = np.flatnonzero(self._need(a, b))
        Rc, rowmax = csr_dense_take(self.D, rows + a, self._Wc, dtype=self._Wc.dtype)
        self.bound[a + rows] = rowmax
        self._skipped[a] = int((b - a) - len(rows))
        return rows, Rc


def batch_r_rows(D, W):
    """An ``r_rows(a, b)`` provider of ``R = D W`` for fixed W (no screening): rows of ``D W``."""
    provider = BatchR(D)
    provider.set_state(W, None)
    return provider
