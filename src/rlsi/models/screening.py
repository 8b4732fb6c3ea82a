"""Rows of ``R = D W`` for the batch U-step: plain (:class:`BatchR`) or with exact screening
(:class:`ScreenedBatchR`). Both are ``r_rows(a, b)`` providers for :func:`rlsi.models.steps.update_topics`
and may be called for different blocks concurrently (each call writes only its own rows of the state).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..kernels.products import csr_dense_rows, csr_dense_rows_max, csr_dense_take
from .rlsi_policy import ScreeningBounds
from .tasks import BlockScratch
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


#: Rows per chunk of :func:`_column_drift` (fixed, so the column sums do not depend on the threads).
DRIFT_CHUNK = 1024


@njit(cache=True, parallel=True)
def _column_drift(W, W_old):
    """``(Σ_n (W[n, k] − W_old[n, k])², Σ_n W[n, k]²)`` for each column k (float64), in one parallel pass;
    ``W_old`` with no rows: the drift part is 0. Partial sums over fixed row chunks, added in chunk order:
    the same numbers on any number of threads."""
    N, K = W.shape
    with_old = W_old.shape[0] > 0
    n_chunks = (N + DRIFT_CHUNK - 1) // DRIFT_CHUNK
    parts = np.zeros((n_chunks, 2, K))
    for c in prange(n_chunks):
        drift = parts[c, 0]
        norm = parts[c, 1]
        for n in range(c * DRIFT_CHUNK, min(N, (c + 1) * DRIFT_CHUNK)):
            for k in range(K):
                w = np.float64(W[n, k])
                norm[k] += w * w
                if with_old:
                    d = w - np.float64(W_old[n, k])
                    drift[k] += d * d
    out = np.zeros((2, K))
    for c in range(n_chunks):
        for k in range(K):
            out[0, k] += parts[c, 0, k]
            out[1, k] += parts[c, 1, k]
    return out[0], out[1]


@njit(cache=True, parallel=True)
def _csr_row_norms(indptr, data):
    """ℓ2 norm of each row of a CSR matrix (float64), summing the squares of a row in storage order: the
    numbers of :func:`rlsi._rows.row_norms` (``bincount`` adds in the same order) without its int64 row
    ids and float64 squares (16 bytes per stored entry)."""
    n = indptr.shape[0] - 1
    out = np.empty(n)
    for i in prange(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[p])
            s += v * v
        out[i] = np.sqrt(s)
    return out


def csr_row_norms(A):
    """ℓ2 norm of each row (float64) of a scipy CSR matrix, without temporaries of its size."""
    return _csr_row_norms(A.indptr, A.data)


class ScreenedBatchR:
    """Rows of ``R = D W`` for the batch ℓ1 U-step on local blocks, skipping the rows whose lasso solution
    :class:`rlsi.models.rlsi_policy.ScreeningBounds` certifies zero (the bounds and their proof are there;
    this provider adds the local placement: D and W in this process, the drift of W from the V-step).

    Memory: the drift of W is reported by the problem's V-step, which holds the old and the new W side by
    side anyway (:meth:`advance`), so no copy of W is kept: only M floats of bounds and M row norms.
    An iteration whose W did not come through :meth:`advance` from the last state voids the bounds
    (every row is computed again, which makes them valid anew). Late in a fit this avoids about half of
    the ``nnz(D) · K`` work of ``R``.
    """

    @staticmethod
    def nbytes_for(n_terms):
        """Bytes this provider holds for ``n_terms`` term rows: the row norms ``‖d_m‖`` and the
        :class:`ScreeningBounds` (float64 each; its blocks of R are the scratch's)."""
        return 8 * int(n_terms) + ScreeningBounds.nbytes_for(n_terms)

    def __init__(self, D, half_lam, scratch=None):
        self.D = D
        self.row_norms = csr_row_norms(D)
        self.screen = None  # ScreeningBounds, made with the dtype of the first W
        self._half_lam = float(half_lam)
        self._W = None  # the W of the current state (the problem's own array: no copy)
        self._next = None  # (W, drift) reported by advance() for the next state
        self._skipped = {}  # block start -> rows skipped (dict stores are atomic: safe under threads)
        self.total_skipped = 0
        # the blocks of R handed out by compact() (and the U-step's warm starts) reuse these buffers: the
        # caller is done with a block before it asks for the next one (update_topics' compact_task)
        self.scratch = scratch if scratch is not None else BlockScratch()

    @property
    def half_lam(self):
        return self._half_lam

    @half_lam.setter
    def half_lam(self, value):
        self._half_lam = float(value)
        if self.screen is not None:
            self.screen.half_lam = self._half_lam

    @property
    def bound(self):
        return self.screen.bound

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
        W = np.ascontiguousarray(W)
        if self.screen is None:
            self.screen = ScreeningBounds(self.row_norms, np.diff(self.D.indptr), W.dtype, self._half_lam)
        nxt, self._next = self._next, None
        if nxt is not None and nxt[0] is W:
            drift, norms = nxt[1], nxt[2]
            self.screen.advance(np.sqrt(np.max(drift, initial=0.0)))
        else:
            # the first state, or a W that did not come through advance(): bounds void (recomputed)
            self.screen.invalidate()
            norms = _column_drift(W, W[:0])[1]
        self.screen.set_col_norm(norms)
        self._W = W
        self.U_prev = U_prev

    def advance(self, W_old, W_new):
        """The V-step replaced the current state's W (``W_old``, not modified) by ``W_new``: record the
        drift of W for the next :meth:`set_state` (one parallel pass over both; no copy)."""
        if self._W is None or W_old is not self._W or W_new is W_old or W_new.shape != W_old.shape:
            self._next = None  # not the state the bounds were built at: the next set_state voids them
            return
        W_new = np.ascontiguousarray(W_new)
        drift, norms = _column_drift(W_new, np.ascontiguousarray(W_old))
        self._next = (W_new, drift, norms)
        self._W = None  # the old W may be freed by the problem; nothing here holds it

    def invalidate(self):
        """Forget the bounds (an iteration computed R without this provider): the next iteration computes
        every row again, which makes the bounds valid anew."""
        self._close_count()
        if self.screen is not None:
            self.screen.invalidate()
        self._W = None
        self._next = None

    def finish(self):
        """Close the last iteration's count into ``total_skipped``."""
        self._close_count()

    def _need(self, a, b):
        """Rows of block a..b that must be computed (the others are certified zero)."""
        U = self.U_prev
        if isinstance(U, np.ndarray):
            nonzero = nonzero_row_mask(U[a:b])
        else:
            nonzero = None if U is None else np.diff(U.indptr[a:b + 1]) > 0
        return self.screen.need(a, b, nonzero)

    def __call__(self, a, b):
        need = self._need(a, b)
        Rb, rowmax = csr_dense_rows_max(self.D, a, b, self._W, need, dtype=self._W.dtype)
        rows = np.flatnonzero(need)
        self.screen.store(a + rows, rowmax[rows])
        self._skipped[a] = int(len(need) - len(rows))
        return Rb

    def compact(self, a, b):
        """Only the rows of block a..b that are not certified zero: ``(rows, R_rows)`` with ``rows`` the
        int64 indices relative to a and R_rows (len(rows) x K) those rows of R, bit-identical to
        ``self(a, b)[rows]``; every other row of the block has a zero solution and zero previous topics.
        R_rows lives in this thread's buffer of :attr:`scratch`: valid until this thread's next call.
        Late in a sparse fit most rows are skipped, and no block x K array of zeros is written, scanned
        by the lasso and converted for them."""
        rows = np.flatnonzero(self._need(a, b))
        out = self.scratch.get("R", (len(rows), self._W.shape[1]), self._W.dtype)
        Rc, rowmax = csr_dense_take(self.D, rows + a, self._W, dtype=self._W.dtype, out=out)
        self.screen.store(a + rows, rowmax)
        self._skipped[a] = int((b - a) - len(rows))
        return rows, Rc


def batch_r_rows(D, W):
    """An ``r_rows(a, b)`` provider of ``R = D W`` for fixed W (no screening): rows of ``D W``."""
    provider = BatchR(D)
    provider.set_state(W, None)
    return provider
