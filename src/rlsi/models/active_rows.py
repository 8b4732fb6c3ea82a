"""The ℓ1 U-step of online RLSI's embedded iterations on the term rows that can be non-zero only
(:class:`ActiveRows`), shared by :class:`rlsi.models.OnlineRLSI` and the Dask online learner.

Its own module because it is one concept with its own kernels (the parallel gather and scatter of the
solved rows) and its own invariant (row maxima of R and live rows carried across embedded iterations and
mini-batches), next to the estimator's bookkeeping in :mod:`rlsi.models.online`.

Both topic representations of the online learner go through it: dense working topics (M x K ndarray,
solved in place) and CSR topics (a vocabulary too large for a dense M x K: 7M terms x K = 500 would be
28 GB), for which the solved rows *are* the new topics — every row outside them is a zero row that stays
zero — so the new CSR is assembled from the solved blocks alone, with no pass over the M rows of R.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ..kernels.lasso import _cd_row, start_row
from ..kernels.convert import csr_nbytes, csr_of_dense_rows, dense_to_csr
from ..kernels.products import csr_row_into
from ..kernels.rows import row_absmax
from . import steps
from .penalties import SolverSettings
from .penalties import penalty as get_penalty

__all__ = ["ActiveRows", "CompactBatch"]

#: Entries (rows x K) of one block of rows solved for CSR topics (the block's solutions before they become
#: CSR: 64 MB in float32 at 16M entries), and of the blocks in which live rows are copied.
SOLVE_ENTRIES = 1 << 24
#: The V-step's projection reads the live rows as CSR (:meth:`ActiveRows.projection_topics`) when the dense
#: product's entries (nnz(X) x K) exceed this many times the cost of building the CSR (0: always CSR).
CSR_PROJECTION_FACTOR = 2
#: Rows per task of the row kernels (tasks are dealt round-robin to the parts: term rows differ in cost).
_CHUNK = 64
#: Partial sums of G = UᵀU a solve accumulates (the parts are the unit of parallel work: 32 keeps 16 threads
#: at two parts each); fewer when they would take more than :data:`GRAM_PARTS_BYTES` (K = 500: 32 x 2 MB).
GRAM_PARTS = 32
GRAM_PARTS_BYTES = 64 << 20


@dataclass
class RowCache:
    """What one mini-batch's :class:`ActiveRows` leaves to the next: valid while the learner's topics are the
    object ``U`` (its live rows and ``G`` are those of U) and R's stored rows were not rescaled into
    (``n_folds``, :attr:`rlsi.models.stats.TopicStatistics.n_folds`).

    rowmax : ``max_k |r_mk|`` of the stored rows (M,); live : rows of U with a non-zero weight (M, bool);
    G : ``UᵀU`` of the last solve, or None (it depends on U only, so it stays valid across folds).
    """

    U: object
    rowmax: np.ndarray
    live: np.ndarray
    n_folds: int
    G: np.ndarray | None = None


class ActiveRows:
    """The ℓ1 U-step of one mini-batch's embedded iterations on the rows that can be non-zero only.

    A term row whose topic weights are zero and whose ``max_k |r_mk| <= λ₁/2`` keeps the zero solution (the
    KKT conditions at 0): the lasso kernel skips it after reading it. Here such rows are not even read:
    ``max_k |r_mk|`` is kept per row and refreshed for the rows the batch touches after every ``assign``;
    rows with a non-zero weight are tracked from the solutions. The remaining rows are solved by one fused
    kernel — each row read from R and U where it lies, solved by the lasso kernel's row solver
    (:func:`rlsi.kernels.lasso.lasso_cd_row`), written back, and its outer product added to ``G = UᵀU`` over
    its non-zero weights only (a dense rank-k update of the solved rows would cost rows x K² — with sparse
    topics most of an online U-step). The same minimiser as solving every row, at a cost that follows the
    live rows instead of M x K, and no copy of the rows.

    Units. The row maxima are those of the *stored* rows (``stats.stored_R``) and the problem solved is
    :meth:`rlsi.models.stats.TopicStatistics.scaled_problem`'s ``(S/scale, λ/scale)`` on them — the same
    minimiser as on the re-scaled statistics, exactly. The lazy re-scaling of a new mini-batch changes
    ``scale`` only, not the stored rows, so the maxima carry over from one mini-batch to the next as they
    are (they are stale only when the scale was folded into R: ``stats.n_folds`` is part of the cache).
    """

    @staticmethod
    def nbytes_for(n_terms, n_components, nnz, r_itemsize, dense):
        """Bytes of the topics (``nnz`` non-zero weights) and of this object for M terms: dense U (float64,
        solved in place) and its live rows of before the mini-batch as CSR (:meth:`track_change`), or CSR
        topics: the old ones, the solved pieces and the assembled new ones in R's ``r_itemsize``
        (:func:`_assemble`) and one block of solutions (:data:`SOLVE_ENTRIES`); plus the row maxima and live
        rows carried between mini-batches (:class:`RowCache`: 9 bytes a term)."""
        M, K, nnz, s = int(n_terms), int(n_components), int(nnz), int(r_itemsize)
        if dense:
            return M * K * 8 + nnz * (8 + 4) + 8 * M + 9 * M
        return 3 * csr_nbytes(M, nnz, s) + min(M * K, SOLVE_ENTRIES) * s + 9 * M

    def __init__(self, stats, U, lam, *, cache=None, track_change=False, single_solve=False,
                 solve_entries=None, csr_projection_factor=None):
        """``U``: dense (M x K, solved in place) or CSR (each :meth:`solve` returns a new CSR); ``cache``: the
        :class:`RowCache` of the previous mini-batch when U has not changed since (saves two passes over M x K
        per mini-batch, and G a pass over the live rows);
        ``track_change``: keep the live rows' values of before the batch, as CSR, for :meth:`change` (dense U; instead of a copy of U), or, with
        ``single_solve`` (one :meth:`solve` only: ξ = 1), sum the rows' squared changes as they are solved;
        ``solve_entries``, ``csr_projection_factor``: :data:`SOLVE_ENTRIES` and :data:`CSR_PROJECTION_FACTOR` when
        None (``RLSITuning.online_solve_entries`` and ``online_csr_projection``)."""
        self.stats, self.lam = stats, lam
        self.solve_entries = SOLVE_ENTRIES if solve_entries is None else int(solve_entries)
        self.csr_projection_factor = CSR_PROJECTION_FACTOR if csr_projection_factor is None else csr_projection_factor
        self.sparse = sp.issparse(U)
        if cache is None or cache.n_folds != stats.n_folds:
            self.rowmax = row_absmax(stats.stored_R)
            self.live = (np.diff(U.indptr) > 0) if self.sparse else steps.nonzero_row_mask(U)
        else:
            self.rowmax, self.live = cache.rowmax, cache.live
        # G = UᵀU of the last solve depends on U only (not on R's scale): it is valid as long as U is the same
        self.G = cache.G if cache is not None else None
        self.rows_solved = self.sweeps = 0  # over the solves of this object (diagnostics)
        self._before = self._touched = None
        self._single = bool(track_change and single_solve and not self.sparse)
        self._change_sq = 0.0
        self._solved = False
        if track_change and not self.sparse and not self._single:
            self.track_change(U)

    def track_change(self, U):
        """Keep the live rows of the dense U as they are now, for :meth:`change` (``track_change=True`` of the
        constructor, decided later: when a :class:`CompactBatch` did not fit)."""
        self._before = csr_of_dense_rows(U, np.flatnonzero(self.live))
        self._touched = np.zeros(len(self.live), dtype=bool)

    def cache_for(self, U):
        """The :class:`RowCache` the next mini-batch's :class:`ActiveRows` can start from while the topics are
        ``U``: the row maxima, the live rows, ``stats.n_folds`` and ``G = UᵀU`` (None before a solve or
        :meth:`gram`)."""
        return RowCache(U, self.rowmax, self.live, self.stats.n_folds, self.G)

    def gram(self, U):
        """``G = UᵀU`` (K x K): from the rows solved last (all non-zero rows are among them), else from the
        live rows — no scan of the whole M x K array either way."""
        if self.G is None:
            live = np.flatnonzero(self.live)
            if self.sparse:
                self.G = steps.topic_gram(U[live])
            else:
                parts = _gram_parts(len(live), U.shape[1])
                _gram_rows(U, live, parts)
                self.G = parts.sum(axis=0)
        return self.G

    def projection_topics(self, U, nnz_X):
        """The topics for the V-step's projection ``Φ = X U`` of a batch with ``nnz_X`` entries: U itself when
        CSR or when the dense product is cheap, else the live rows of the dense U as CSR (every other row is
        zero). The dense product reads a K-wide row of the M x K array, at a random place, for every entry of
        X (25,000 documents x K = 500: 5M rows of 4 KB); the CSR one a term's few non-zero weights, after two
        passes over the live rows to build it and O(M) for its plan. The same sums either way (the zeros are
        not added: :func:`steps.update_doc_vectors` with a CSR U)."""
        if self.sparse:
            return U
        n_live = int(np.count_nonzero(self.live))
        K = U.shape[1]
        if nnz_X * K <= self.csr_projection_factor * (2 * n_live * K + 8 * U.shape[0]):  # K = 20, 256 docs: dense
            return U
        return csr_of_dense_rows(U, np.flatnonzero(self.live))

    def change(self, U):
        """``‖U − U_before‖_F`` over the rows solved since construction (the others did not change); dense U
        with ``track_change`` only."""
        if self._single:
            return float(np.sqrt(self._change_sq))
        b = self._before
        return float(np.sqrt(_change_sq(U, np.flatnonzero(self._touched), b.indptr, b.indices, b.data)))

    def solve(self, U, cols, penalty, *, max_iter, tol, col_max=None):
        """One U-step; returns the topics: U itself (dense, solved in place) or a new CSR. ``cols``: the terms
        whose rows of R changed since the last call; ``col_max``: ``max_k |r_mk|`` of the stored rows ``cols``
        when known (:meth:`PendingBatch.assign`)."""
        if self._single and self._solved:
            raise RuntimeError("ActiveRows(single_solve=True) solves once")
        self._solved = True
        stats = self.stats
        R = stats.stored_R
        if len(cols):
            self.rowmax[cols] = row_absmax(R[cols]) if col_max is None else col_max
        S, lam = stats.scaled_problem(self.lam)
        S = np.ascontiguousarray(S, dtype=np.float64)
        rows = np.flatnonzero(self.live | (self.rowmax > 0.5 * lam))
        positive = get_penalty(penalty, param="topic_penalty").nonneg
        M, K = R.shape
        if not self.sparse:
            parts = _gram_parts(len(rows), K)
            sweeps = np.zeros(len(parts), dtype=np.int64)
            dsq = np.zeros(len(parts))
            _solve_dense_rows(R, S, U, rows, 0.5 * lam, int(max_iter), float(tol), positive, self.live, parts,
                              sweeps, self._single, dsq)
            self._change_sq += float(dsq.sum())
            self.G = parts.sum(axis=0)
            self.rows_solved += len(rows)
            self.sweeps += int(sweeps.sum())
            if self._touched is not None:
                self._touched[rows] = True
            return U
        # CSR topics: the solved rows, block by block, are the new topics (the other rows are zero)
        step = max(1, self.solve_entries // K)
        G = np.zeros((K, K))
        pieces = []
        for a in range(0, len(rows), step):
            blk = rows[a:a + step]
            out = np.empty((len(blk), K), dtype=R.dtype)
            parts = _gram_parts(len(blk), K)
            sweeps = np.zeros(len(parts), dtype=np.int64)
            _solve_csr_rows(R, S, U.indptr, U.indices, U.data, blk, 0.5 * lam, int(max_iter), float(tol), positive,
                            out, parts, sweeps)
            G += parts.sum(axis=0)
            self.sweeps += int(sweeps.sum())
            piece = dense_to_csr(out)
            self.live[blk] = np.diff(piece.indptr) > 0
            pieces.append(piece)
        self.G = G
        self.rows_solved += len(rows)
        return _assemble(pieces, rows, M, K, R.dtype)


def _gram_parts(n_rows, K):
    """Zeroed per-part G accumulators (parts, K, K): :data:`GRAM_PARTS`, no more than rows/64 nor about
    :data:`GRAM_PARTS_BYTES`. The count depends on the rows and K only, never on the thread count: G is the
    sum of the parts, and a split that followed the threads would give other last digits on another machine
    (the online topics then drift apart from mini-batch to mini-batch)."""
    parts = min(GRAM_PARTS, max(1, (n_rows + _CHUNK - 1) // _CHUNK), max(1, GRAM_PARTS_BYTES // (8 * K * K)))
    return np.zeros((parts, K, K))


@njit(cache=True, nogil=True)
def _part_chunk(n, P):
    """Rows per chunk when n rows are dealt round-robin in chunks to P parts: at most :data:`_CHUNK`, and
    as many chunks as make every part's count equal (±1). With 64-row chunks, 2,700 rows in 32 parts gave
    parts 0-10 two chunks and the rest one, and the threads, which take contiguous runs of parts, 27 against
    16 chunks (a solve 20 % slower at 2 threads)."""
    per_part = max(1, -(-n // (P * _CHUNK)))
    return max(1, -(-n // (P * per_part)))


def _assemble(pieces, rows, M, K, dtype):
    """The M x K CSR whose rows ``rows`` (ascending) are the rows of the CSR ``pieces`` (stacked), the others
    empty."""
    counts = np.zeros(M, dtype=np.int64)
    if pieces:
        counts[rows] = np.concatenate([np.diff(p.indptr) for p in pieces])
    nnz = int(counts.sum())
    idx = np.int32 if max(nnz, K) < 2**31 else np.int64
    indptr = np.zeros(M + 1, dtype=idx)
    np.cumsum(counts, out=indptr[1:])
    indices = np.concatenate([p.indices for p in pieces]).astype(idx, copy=False) if pieces else np.zeros(0, idx)
    data = np.concatenate([p.data for p in pieces]) if pieces else np.zeros(0, dtype)
    return sp.csr_matrix((data, indices, indptr), shape=(M, K))


# inline="always" (here and on _add_outer): once per row in _solve_dense_rows, as in rlsi.kernels.lasso
@njit(cache=True, nogil=True, inline="always")
def _solve_row(r, u, g, S, half_lam, max_iter, tol, positive, ws_idx, ws_M, ws_work):
    """:func:`rlsi.kernels.lasso.lasso_cd_rows`'s treatment of one row (u: warm start, solved in place): a
    zero row with ``max|r| <= λ/2`` (one-sided when ``positive``) is optimal as it is; else ``g = S u`` over
    the non-zero weights and the coordinate descent of the shared row solver. Returns the sweeps done.

    ``ws_*``: the row solver's support-solve workspaces (K int64, K x K, 3 x K), allocated once per part by
    the caller, as :func:`rlsi.kernels.lasso.lasso_cd_rows` does per chunk: the public
    :func:`rlsi.kernels.lasso.lasso_cd_row` allocates them for every row (a K x K array, 2 MB at K = 500,
    for each of the ~400k rows of an online U-step)."""
    if not start_row(r, S, u, g, half_lam, positive):
        return 0
    # max_work passed (not omitted) so numba reuses lasso_cd_rows' compiled signature of _cd_row
    return _cd_row(r, S, u, g, half_lam, max_iter, tol, positive, ws_idx, ws_M, ws_work, np.inf)


@njit(cache=True, nogil=True, inline="always")
def _add_outer(u, idx, Gp):
    """``Gp += u uᵀ`` over the non-zero entries of u (idx: scratch); returns how many there are."""
    K = u.shape[0]
    c = 0
    for k in range(K):
        if u[k] != 0.0:
            idx[c] = k
            c += 1
    if 2 * c > K:  # a dense row: contiguous inner loop
        for a in range(c):
            ka = idx[a]
            ua = u[ka]
            for l in range(K):
                Gp[ka, l] += ua * u[l]
    else:
        for a in range(c):
            ka = idx[a]
            ua = u[ka]
            for b in range(c):
                kb = idx[b]
                Gp[ka, kb] += ua * u[kb]
    return c


@njit(cache=True, parallel=True)
def _solve_dense_rows(R, S, U, rows, half_lam, max_iter, tol, positive, live, parts, sweeps, measure, dsq):
    """Solve the rows ``rows`` of the dense U in place from R's rows; ``live[m]``: row m non-zero after;
    ``parts[p]`` accumulates the outer products of the stored rows (G = Σ parts), ``sweeps[p]`` the sweeps,
    and with ``measure`` ``dsq[p]`` the squared changes of the rows (stored value minus warm start)."""
    n = rows.shape[0]
    K = S.shape[0]
    P = parts.shape[0]
    chunk = _part_chunk(n, P)
    n_chunks = (n + chunk - 1) // chunk
    for p in prange(P):
        u = np.empty(K)
        r = np.empty(K)
        g = np.empty(K)
        u0 = np.empty(K)
        idx = np.empty(K, dtype=np.int64)
        ws_idx = np.empty(K, dtype=np.int64)
        ws_M = np.empty((K, K))
        ws_work = np.empty((3, K))
        for c in range(p, n_chunks, P):
            for i in range(c * chunk, min(n, (c + 1) * chunk)):
                m = rows[i]
                for k in range(K):
                    u[k] = U[m, k]
                    u0[k] = u[k]
                    r[k] = R[m, k]
                sweeps[p] += _solve_row(r, u, g, S, half_lam, max_iter, tol, positive, ws_idx, ws_M, ws_work)
                for k in range(K):
                    U[m, k] = u[k]
                    u[k] = U[m, k]  # as stored
                if measure:
                    for k in range(K):
                        d = u[k] - u0[k]
                        dsq[p] += d * d
                live[m] = _add_outer(u, idx, parts[p]) > 0


@njit(cache=True, parallel=True)
def _solve_csr_rows(R, S, indptr, indices, data, rows, half_lam, max_iter, tol, positive, out, parts, sweeps):
    """Solve the rows ``rows`` of the CSR topics (warm start) from R's rows into ``out`` (len(rows) x K);
    ``parts[p]`` accumulates the outer products of the stored rows."""
    n = rows.shape[0]
    K = S.shape[0]
    P = parts.shape[0]
    chunk = _part_chunk(n, P)
    n_chunks = (n + chunk - 1) // chunk
    for p in prange(P):
        u = np.empty(K)
        r = np.empty(K)
        g = np.empty(K)
        idx = np.empty(K, dtype=np.int64)
        ws_idx = np.empty(K, dtype=np.int64)
        ws_M = np.empty((K, K))
        ws_work = np.empty((3, K))
        for c in range(p, n_chunks, P):
            for i in range(c * chunk, min(n, (c + 1) * chunk)):
                m = rows[i]
                for k in range(K):
                    u[k] = 0.0
                    r[k] = R[m, k]
                for q in range(indptr[m], indptr[m + 1]):
                    u[indices[q]] += data[q]  # adds duplicates of a non-canonical CSR, as scipy does
                sweeps[p] += _solve_row(r, u, g, S, half_lam, max_iter, tol, positive, ws_idx, ws_M, ws_work)
                for k in range(K):
                    out[i, k] = u[k]
                    u[k] = out[i, k]  # as stored (R's dtype)
                _add_outer(u, idx, parts[p])


@njit(cache=True, parallel=True)
def _gram_rows(U, rows, parts):
    """``Σ_m U[m] U[m]ᵀ`` over ``rows`` of the dense U into the per-part accumulators."""
    n = rows.shape[0]
    K = U.shape[1]
    P = parts.shape[0]
    chunk = _part_chunk(n, P)
    n_chunks = (n + chunk - 1) // chunk
    for p in prange(P):
        u = np.empty(K)
        idx = np.empty(K, dtype=np.int64)
        for c in range(p, n_chunks, P):
            for i in range(c * chunk, min(n, (c + 1) * chunk)):
                m = rows[i]
                for k in range(K):
                    u[k] = U[m, k]
                _add_outer(u, idx, parts[p])


@njit(cache=True, parallel=True)
def _change_sq(U, rows, indptr, indices, data):
    """``Σ_{m in rows} ‖U[m] − B[m]‖²`` with B the CSR (indptr, indices, data)."""
    n = rows.shape[0]
    K = U.shape[1]
    n_chunks = (n + _CHUNK - 1) // _CHUNK
    sums = np.zeros(n_chunks)
    for c in prange(n_chunks):
        d = np.empty(K)
        total = 0.0
        for i in range(c * _CHUNK, min(n, (c + 1) * _CHUNK)):
            m = rows[i]
            for k in range(K):
                d[k] = U[m, k]
            for q in range(indptr[m], indptr[m + 1]):
                d[indices[q]] -= data[q]
            for k in range(K):
                total += d[k] * d[k]
        sums[c] = total
    return sums.sum()


#: Largest compact block (rows x K entries) that :class:`CompactBatch` gathers: 2M entries, at most 48 MB for its
#: three arrays (U's rows, their values before the batch, R's rows; float64); a larger block takes the scattered
#: path of :class:`ActiveRows` (at K = 20 and 256 documents of 20 Newsgroups a block is about 7k x 20).
COMPACT_MAX_ENTRIES = 1 << 21


class CompactBatch:
    """The ξ embedded iterations of one mini-batch on a contiguous copy of the rows they can touch.

    The rows an embedded iteration reads — the batch's terms (projection and R's update), the live rows and
    the rows with ``max|r| > λ/2`` (the U-step) — are scattered 160-byte rows (K = 20) of the M x K arrays U
    and R, fetched again by every iteration. They are known when the batch opens: a row outside the batch's
    terms keeps its stored R row and its row maximum for the whole batch, so if it is zero and screened out
    at the start it stays so (it is never solved, the only way a row becomes non-zero). This object gathers
    those rows ``C`` (ascending term order) once into ``Uc`` and ``Rc`` (R's rows of the batch's terms are
    not read: every :meth:`assign` writes them from the batch's base rows), runs the iterations on them — the
    kernels of :class:`ActiveRows` and :meth:`rlsi.models.stats.PendingBatch.write_rows` on the compact arrays, with the
    batch's X re-indexed to ``C`` — and scatters the rows back once in :meth:`close`. ξ > 1 only (a mini-batch
    opened with ``begin_batch(repeat=True)``): with ξ = 1 each row is used once and a copy saves nothing.

    The same numbers as the scattered path: the rows solved are the same rows in the same order (C is
    ascending), every row and product adds its terms in the same order (re-indexing keeps X's column order),
    and R's rows are computed from the same base by the same kernel; only ``change()`` sums in another
    order. Dense topics only (``rows.sparse`` False), ``rows`` built without ``track_change``.
    """

    @classmethod
    def open(cls, rows, U, X, pending, max_entries=None):
        """The block of this mini-batch, or None when it has more than ``max_entries`` entries (None:
        :data:`COMPACT_MAX_ENTRIES`, ``RLSITuning.online_compact_entries``; the scattered path of :class:`ActiveRows`
        then). ``rows``: the :class:`ActiveRows` of this mini-batch (its
        row maxima, live rows, G and λ are read here and brought up to date by :meth:`close`); ``U``: the dense
        topics (M x K); ``X``: the batch (CSR n x M); ``pending``: its :class:`rlsi.models.stats.PendingBatch`."""
        _, lam = rows.stats.scaled_problem(rows.lam)  # λ and the scale are fixed for the batch
        keep = rows.live | (rows.rowmax > 0.5 * lam)
        keep[pending.cols] = True
        C = np.flatnonzero(keep)
        if len(C) * U.shape[1] > (COMPACT_MAX_ENTRIES if max_entries is None else max_entries):
            return None
        return cls(rows, U, X, pending, C)

    def __init__(self, rows, U, X, pending, C):
        """See :meth:`open` (``C``: the block's rows, ascending)."""
        self.rows, self.U, self.pending, self.C = rows, U, pending, C
        remap = np.zeros(U.shape[0], dtype=np.int64)
        remap[C] = np.arange(len(C))
        self.pos_cols = remap[pending.cols]
        idx = remap[X.indices].astype(X.indices.dtype, copy=False)
        self.X = sp.csr_matrix((X.data, idx, X.indptr), shape=(X.shape[0], len(C)))
        self.X.has_sorted_indices = X.has_sorted_indices  # re-indexing is monotone: the order is kept
        self.Uc = _take_rows(U, C)
        self.U0 = self.Uc.copy()
        # R's rows outside the batch's terms; those of its terms are written by every assign from the batch's
        # base rows (PendingBatch.R_base: repeat=True, which ξ > 1 opens with), so they are not read here
        if pending.R_base is None:
            raise RuntimeError("CompactBatch needs a mini-batch opened with begin_batch(repeat=True)")
        self.Rc = np.empty((len(C), U.shape[1]), dtype=rows.stats.dtype)
        other = np.ones(len(C), dtype=bool)
        other[self.pos_cols] = False
        other = np.flatnonzero(other)
        _put_rows(self.Rc, other, rows.stats.stored_R, C[other])
        self.rowmax = rows.rowmax[C]
        self.live = rows.live[C]
        self.cols_max = np.zeros(len(self.pos_cols))

    def gram(self):
        """``G = UᵀU`` (K x K): carried from the last solve, else summed over the live rows of the block."""
        rows = self.rows
        if rows.G is None:
            live = np.flatnonzero(self.live)
            parts = _gram_parts(len(live), self.Uc.shape[1])
            _gram_rows(self.Uc, live, parts)
            rows.G = parts.sum(axis=0)
        return rows.G

    def doc_vectors(self, penalty, lam, W_prev, *, max_iter, tol):
        """The V-step of the batch (n x K float64): :func:`rlsi.models.steps.update_doc_vectors` on the block's
        rows — dense, contiguous and few (the CSR of the live rows that large batches project with would cost
        more to build than it saves here). For the ridge ("l2", the default) the same numbers by a shorter
        path: ``Φ = X U`` by one kernel (each row's terms added in storage order, as the blocked product does),
        then ``Φ (G + λ₂I)⁻¹`` with the same inverse and product — not the per-block set-up of the general
        V-step, which at 256 documents and K = 20 cost as much as its arithmetic."""
        pen = get_penalty(penalty, param="doc_penalty")
        if pen.norm != "l2" or pen.nonneg:
            W, _ = steps.update_doc_vectors(self.X, self.Uc, penalty=pen, lam=lam, W_prev=W_prev, dtype=np.float64,
                                            settings=SolverSettings(max_iter, tol), G=self.gram())
            return W
        X = self.X
        Phi = np.empty((X.shape[0], self.Uc.shape[1]))
        _csr_dense(X.indptr, X.indices, X.data, self.Uc, Phi)
        return Phi @ pen.prepare(self.gram(), lam)

    def assign(self, W):
        """:meth:`rlsi.models.stats.PendingBatch.assign` of the document vectors ``W`` (n x K) with the batch's
        rows of R written to the block (``Rc``) and their maxima to the block's row maxima."""
        self.pending.assign(W, into=(self.Rc, self.pos_cols, self.cols_max))
        self.rowmax[self.pos_cols] = self.cols_max

    def solve(self, penalty, *, max_iter, tol):
        """One U-step on the block (the rows of :meth:`ActiveRows.solve`, in the same order)."""
        rows = self.rows
        S, lam = rows.stats.scaled_problem(rows.lam)
        S = np.ascontiguousarray(S, dtype=np.float64)
        todo = np.flatnonzero(self.live | (self.rowmax > 0.5 * lam))
        positive = get_penalty(penalty, param="topic_penalty").nonneg
        K = S.shape[0]
        parts = _gram_parts(len(todo), K)
        sweeps = np.zeros(len(parts), dtype=np.int64)
        _solve_dense_rows(self.Rc, S, self.Uc, todo, 0.5 * lam, int(max_iter), float(tol), positive, self.live,
                          parts, sweeps, False, _NO_DSQ)
        rows.G = parts.sum(axis=0)
        rows.rows_solved += len(todo)
        rows.sweeps += int(sweeps.sum())

    def close(self):
        """Scatter the block back: U's rows, the batch's rows of R, the row maxima and live rows of ``rows``.
        Returns ``‖U − U_before‖_F`` over the batch (every other row is unchanged)."""
        C, rows = self.C, self.rows
        _put_rows(self.U, C, self.Uc, np.arange(len(C)))
        _put_rows(self.rows.stats._R, self.pending.cols, self.Rc, self.pos_cols)
        rows.rowmax[C] = self.rowmax
        rows.live[C] = self.live
        d = self.Uc - self.U0
        return float(np.sqrt(np.einsum("ij,ij->", d, d)))


_NO_DSQ = np.zeros(1)


#: Rows per task of the block's parallel row kernels (:func:`_csr_dense`: one K-vector of scratch per task).
_ROWS_PER_TASK = 64


@njit(cache=True, parallel=True)
def _take_rows(A, rows):
    """``A[rows]`` (rows: int64) as a new C-ordered array: a row copy per row, not numpy's element-wise
    fancy indexing; rows in parallel."""
    K = A.shape[1]
    out = np.empty((rows.shape[0], K), dtype=A.dtype)
    for i in prange(rows.shape[0]):
        out[i, :] = A[rows[i], :]
    return out


@njit(cache=True, parallel=True)
def _put_rows(A, rows, B, src):
    """``A[rows] = B[src]`` (rows, src: int64; ``rows`` without repeats), a row copy per row, in parallel."""
    for i in prange(rows.shape[0]):
        A[rows[i], :] = B[src[i], :]


@njit(cache=True, parallel=True)
def _csr_dense(indptr, indices, data, B, out):
    """``out = A @ B`` (CSR A float64, dense B), each row's terms added in storage order from zero, rows in
    parallel. (The sums in a local K-vector, stored once per row: a third faster at K = 20 than adding into
    ``out`` itself.)"""
    K = B.shape[1]
    n = out.shape[0]
    for c in prange((n + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK):
        acc = np.empty(K)
        for i in range(c * _ROWS_PER_TASK, min(n, (c + 1) * _ROWS_PER_TASK)):
            csr_row_into(acc, indptr, indices, data, B, i)
            for k in range(K):
                out[i, k] = acc[k]
