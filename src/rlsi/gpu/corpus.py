"""The corpus on the card, in row blocks: resident, or streamed from host memory block by block.

:class:`RowBlocks` cuts a host CSR matrix into blocks of rows (D = Xᵀ by terms for the U-step, X by documents
for the V-step). Resident blocks are moved once; streamed blocks stay in host memory and each is moved when
the step reaches it, the next one moved by a background thread while the current one is used, on the blocks'
one long-lived copy stream (:class:`rlsi.gpu.prefetch.Prefetcher`; on numpy the same code runs without the
thread). Products with a block are cuSPARSE calls on CuPy
and scipy's on numpy.

:class:`Screen` is the exact zero-row screening of the batch U-step for blocks on the card: the host path's
:class:`rlsi.models.rlsi_policy.ScreeningBounds` (the last computed ``max_k |r̂_mk|``, plus ``‖d_m‖ · max_k
‖ΔW_k‖`` accumulated since, plus the rounding term ``γ_m ‖d_m‖ max_k ‖W_k‖``), so that ``R`` is formed only
for the term rows that can be non-zero. The result is the one without screening (the skipped rows have a zero
solution and a zero warm start).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..models.rlsi_policy import ScreeningBounds
from ..models.screening import csr_row_norms
from .prefetch import Prefetcher


def spans(n, rows):
    """``[(a, b), ...]`` covering 0..n in blocks of at most ``rows``."""
    rows = max(1, int(rows))
    return [(a, min(n, a + rows)) for a in range(0, n, rows)]


def on_card(be, A):
    """Whether ``A`` is a CuPy sparse matrix (a corpus already on the card)."""
    return be.holds(A)


def row_view(be, A, a, b):
    """Rows a..b of a device CSR as a CSR sharing A's data and indices (no copy of the entries)."""
    p0, p1 = int(A.indptr[a]), int(A.indptr[b])
    return be.sparse.csr_matrix((A.data[p0:p1], A.indices[p0:p1], A.indptr[a:b + 1] - p0), shape=(b - a, A.shape[1]))


def row_norms(be, A, rows=1 << 17):
    """ℓ2 norm of each row (float64, device) of a CSR matrix on the host (the host path's numbers) or the card
    (``rows`` rows at a time: the float64 squares of one block's entries, never of the whole matrix)."""
    if not on_card(be, A):
        return be.xp.asarray(csr_row_norms(sp.csr_matrix(A)), dtype=np.float64)
    xp = be.xp
    out = xp.empty(A.shape[0], dtype=np.float64)
    for a, b in spans(A.shape[0], rows):
        V = row_view(be, A, a, b)
        sq = be.sparse.csr_matrix((xp.square(V.data.astype(np.float64)), V.indices, V.indptr), shape=V.shape)
        out[a:b] = xp.sqrt(sq @ xp.ones(A.shape[1], dtype=np.float64))
    return out


def sq_norm(be, A, chunk=1 << 24):
    """``‖A‖²_F`` (float64) of a CSR matrix on the host or the card (``chunk`` entries at a time on the card)."""
    if not on_card(be, A):
        return float(np.square(A.data, dtype=np.float64).sum())
    xp = be.xp
    total = 0.0
    for a, b in spans(int(A.data.shape[0]), chunk):
        total += float(xp.square(A.data[a:b].astype(np.float64)).sum())
    return total


class RowBlocks:
    """Blocks of rows of a CSR matrix ``A`` (host scipy, or already on the card) on backend ``be``; iterate
    ``for a, b, block in blocks``. A matrix on the card is cut into views (no copy) and never streamed."""

    def __init__(self, be, A, rows, *, streamed=False):
        self.be = be
        self.shape = A.shape
        self.spans = spans(A.shape[0], rows)
        self.streamed = bool(streamed)
        if on_card(be, A):
            if self.streamed:
                raise ValueError("a matrix on the card is not streamed")
            self._host = None
            self._blocks = [row_view(be, A, a, b) for a, b in self.spans]
            return
        A = sp.csr_matrix(A)
        if self.streamed:
            self._host = [A[a:b] for a, b in self.spans]
            self._blocks = None
            self.prefetch = Prefetcher(be)
        else:
            self._host = None
            self._blocks = [be.csr(A[a:b]) for a, b in self.spans]

    def _move(self, i):
        return self.be.csr(self._host[i])

    def __len__(self):
        return len(self.spans)

    def __iter__(self):
        if not self.streamed:
            for (a, b), block in zip(self.spans, self._blocks):
                yield a, b, block
            return
        for (a, b), block in zip(self.spans, self.prefetch.items(self._move, len(self.spans))):
            yield a, b, block


def take_rows(be, block, rows):
    """Rows ``rows`` (device int array) of a device CSR block, as CSR."""
    if int(rows.shape[0]) == block.shape[0]:
        return block
    return block[rows]


class Screen:
    """Exact zero-row screening of the batch ℓ1 U-step for term blocks on the card: the host path's
    :class:`rlsi.models.rlsi_policy.ScreeningBounds` (M floats of bounds, on the host), with each block's rows
    to form moved to the card and the formed rows' peaks ``max_k |r̂_mk|`` moved back.

    D : CSR (terms x docs, host or card); half_lam : λ₁/2. Per iteration: :meth:`set_state` (the largest column
    norm² of W, after :meth:`advance` reported the V-step's drift), then :meth:`need` per term block and
    :meth:`store` for the rows formed.
    """

    def __init__(self, be, D, half_lam):
        self.be = be
        norms = np.asarray(be.to_host(row_norms(be, D)), dtype=np.float64)
        df = np.diff(np.asarray(be.to_host(D.indptr)))
        self.bounds = ScreeningBounds(norms, df, be.dtype, half_lam)
        self._drift = None  # max_k ‖W_new[:, k] − W_old[:, k]‖² from the V-step, for the next state
        self.rows_skipped = 0
        self.total_skipped = 0

    @property
    def half_lam(self):
        return self.bounds.half_lam

    @half_lam.setter
    def half_lam(self, value):
        self.bounds.half_lam = float(value)

    def advance(self, max_drift_sq, max_norm_sq):
        """The V-step replaced W: its largest column drift² and column norm² (floats)."""
        self._drift = float(max_drift_sq)

    def set_state(self, col_norm_sq):
        """Start a U-step at the current W, whose largest column norm² is ``col_norm_sq`` (``max diag(WᵀW)``)."""
        self.finish()
        if self._drift is None:  # first state (or W from elsewhere): bounds void, every row formed
            self.bounds.invalidate()
        else:
            self.bounds.advance(np.sqrt(self._drift))
        self._drift = None
        self.bounds.set_col_norm(np.array([col_norm_sq]))

    def need(self, a, b, live):
        """Bool (b − a,) device: rows of the block that must be formed (``live``: their warm start is non-zero)."""
        need = self.bounds.need(a, b, np.asarray(self.be.to_host(live), dtype=bool))
        return self.be.xp.asarray(need)

    def store(self, rows, rowmax, n_block):
        """Bounds of the rows formed (absolute indices ``rows``, device) from their ``max_k |r̂_mk|`` (device)."""
        self.bounds.store(np.asarray(self.be.to_host(rows)), np.asarray(self.be.to_host(rowmax), dtype=np.float64))
        self.rows_skipped += int(n_block - rows.shape[0])

    def finish(self):
        self.total_skipped += self.rows_skipped
        self.rows_skipped = 0
