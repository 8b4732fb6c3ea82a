"""The ℓ1 U-step of online RLSI's embedded iterations on the term rows that can be non-zero only
(:class:`ActiveRows`), shared by :class:`rlsi.models.OnlineRLSI` and the Dask online learner.

Its own module because it is one concept with its own kernels (the parallel gather and scatter of the
solved rows) and its own invariant (row maxima of R and live rows carried across embedded iterations and
mini-batches), next to the estimator's bookkeeping in :mod:`rlsi.models.online`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..kernels.products import row_absmax
from . import steps
from .penalties import penalty as get_penalty

__all__ = ["ActiveRows"]


class ActiveRows:
    """The ℓ1 U-step of one mini-batch's embedded iterations on the rows that can be non-zero only.

    A term row whose topic weights are zero and whose ``max_k |r_mk| <= λ₁/2`` keeps the zero solution (the
    KKT conditions at 0): the lasso kernel skips it after reading it. Here such rows are not even read:
    ``max_k |r_mk|`` is computed once per mini-batch (the re-scaling multiplies a row's maximum exactly) and
    refreshed for the rows the batch touches after every ``assign``; rows with a non-zero weight are tracked
    from the solutions. The remaining rows are gathered, solved with the same kernel, and written back in
    place — the same numbers as solving every row, at a cost that follows the live rows instead of M x K.
    """

    def __init__(self, stats, U, lam, *, cache=None, decay=1.0, track_change=False):
        """``cache``: ``(rowmax, live)`` at the end of the previous mini-batch, when R and U have changed only
        by the re-scaling ``decay`` since (saves two passes over M x K per mini-batch); ``track_change``:
        keep the solved rows' values of before the batch for :meth:`change` (instead of a copy of U)."""
        self.stats, self.half_lam, self.lam = stats, 0.5 * lam, lam
        if cache is None:
            self.rowmax = row_absmax(stats.R)
            self.live = steps.nonzero_row_mask(U)
        else:
            rowmax, self.live = cache
            if decay != 1.0:
                # the re-scaling R *= decay in R's dtype rounds monotonically, so each row's maximum is the
                # rounded product of the old maximum: the same numbers as row_absmax of the re-scaled R
                dt = stats.dtype
                rowmax = (rowmax.astype(dt) * dt.type(decay)).astype(np.float64)
            self.rowmax = rowmax
        self.G = None
        self._saved = np.zeros(len(self.live), dtype=bool) if track_change else None
        self._before = []

    def gram(self, U):
        """``G = UᵀU`` (K x K): from the rows solved last (all non-zero rows are among them), else from the
        live rows — no scan of the whole M x K array either way."""
        if self.G is None:
            self.G = steps.gram(U[np.flatnonzero(self.live)])
        return self.G

    def change(self, U):
        """``‖U − U_before‖_F`` over the rows solved since construction (the others did not change)."""
        total = 0.0
        for idx, old in self._before:
            d = U[idx] - old
            total += float(np.einsum("ij,ij->", d, d))
        return float(np.sqrt(total))

    def solve(self, U, cols, penalty, *, max_iter, tol, stats=None, col_max=None):
        """One U-step in place on U; ``cols``: the terms whose rows of R changed since the last call;
        ``stats``: the statistics to solve with, when they are a new object (the distributed learner);
        ``col_max``: ``max_k |r_mk|`` of the rows ``cols`` when known (:meth:`PendingBatch.assign`)."""
        stats = self.stats if stats is None else stats
        R = stats.R
        if len(cols):
            self.rowmax[cols] = row_absmax(R[cols]) if col_max is None else col_max
        rows = np.flatnonzero(self.live | (self.rowmax > self.half_lam))
        pen = get_penalty(penalty, param="topic_penalty")
        # the rows' R and U gathered by one parallel kernel (numpy's fancy indexing costs ~100 ns a row)
        Rr = np.empty((len(rows), R.shape[1]), dtype=R.dtype)
        U0 = np.empty((len(rows), R.shape[1]), dtype=R.dtype)
        _gather_rows(R, U, rows, Rr, U0)
        if self._saved is not None:
            new = ~self._saved[rows]
            if new.any():  # from U itself: U0 is in R's dtype, and the solve below overwrites it
                self._before.append((rows[new], U[rows[new]]))
                self._saved[rows[new]] = True
        Ur, _ = pen.solve(Rr, pen.prepare(stats.S, self.lam), U0, self.lam, max_iter=max_iter, tol=tol,
                          overwrite_init=True)
        _scatter_rows(Ur, rows, U, self.live)
        self.G = steps.gram(Ur)


@njit(cache=True, parallel=True)
def _gather_rows(R, U, rows, Rr, Ur):
    """``Rr[i] = R[rows[i]]``, ``Ur[i] = U[rows[i]]`` (in Ur's dtype)."""
    for i in prange(rows.shape[0]):
        m = rows[i]
        for k in range(R.shape[1]):
            Rr[i, k] = R[m, k]
            Ur[i, k] = U[m, k]


@njit(cache=True, parallel=True)
def _scatter_rows(Ur, rows, U, live):
    """``U[rows[i]] = Ur[i]`` and ``live[rows[i]]``: whether that row has a non-zero weight."""
    for i in prange(rows.shape[0]):
        m = rows[i]
        hit = False
        for k in range(Ur.shape[1]):
            U[m, k] = Ur[i, k]
            hit |= Ur[i, k] != 0.0
        live[m] = hit
