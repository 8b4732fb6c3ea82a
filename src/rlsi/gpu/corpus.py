"""The corpus on the card, in row blocks: resident, or streamed from host memory block by block.

:class:`RowBlocks` cuts a host CSR matrix into blocks of rows (D = Xᵀ by terms for the U-step, X by documents
for the V-step). Resident blocks are moved once; streamed blocks stay in host memory and each is moved when
the step reaches it, the next one moved by a background thread on its own CUDA stream while the current one
is used (on numpy the same code runs without the thread). Products with a block are cuSPARSE calls on CuPy
and scipy's on numpy.

:class:`Screen` is the exact zero-row screening of the batch U-step on the card: the bound of
:class:`rlsi.models.screening.ScreenedBatchR` (the last computed ``max_k |r̂_mk|``, plus ``‖d_m‖ · max_k
‖ΔW_k‖`` accumulated since, plus the rounding term ``γ_m ‖d_m‖ max_k ‖W_k‖``), so that ``R`` is formed only
for the term rows that can be non-zero. The result is the one without screening (the skipped rows have a zero
solution and a zero warm start).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from ..models.rlsi_policy import rounding_factor
from ..models.screening import csr_row_norms


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


def row_norms(be, A):
    """ℓ2 norm of each row (float64, device) of a CSR matrix on the host (the host path's numbers) or the card."""
    if not on_card(be, A):
        return be.xp.asarray(csr_row_norms(sp.csr_matrix(A)), dtype=np.float64)
    xp = be.xp
    sq = be.sparse.csr_matrix((xp.square(A.data.astype(np.float64)), A.indices, A.indptr), shape=A.shape)
    return xp.sqrt(sq @ xp.ones(A.shape[1], dtype=np.float64))


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
        else:
            self._host = None
            self._blocks = [be.csr(A[a:b]) for a, b in self.spans]

    def _move(self, i):
        be = self.be
        if not be.is_cuda:
            return be.csr(self._host[i])
        with be.stream() as stream:
            block = be.csr(self._host[i])
            stream.synchronize()
        return block

    def __len__(self):
        return len(self.spans)

    def __iter__(self):
        if not self.streamed:
            for (a, b), block in zip(self.spans, self._blocks):
                yield a, b, block
            return
        if not self.be.is_cuda:
            for i, (a, b) in enumerate(self.spans):
                yield a, b, self._move(i)
            return
        with ThreadPoolExecutor(max_workers=1) as pool:
            nxt = pool.submit(self._move, 0) if self.spans else None
            for i, (a, b) in enumerate(self.spans):
                block = nxt.result()
                nxt = pool.submit(self._move, i + 1) if i + 1 < len(self.spans) else None
                yield a, b, block


def take_rows(be, block, rows):
    """Rows ``rows`` (device int array) of a device CSR block, as CSR."""
    if int(rows.shape[0]) == block.shape[0]:
        return block
    return block[rows]


class Screen:
    """Exact zero-row screening of the batch ℓ1 U-step (see the module docstring), on the card.

    D : CSR (terms x docs, host or card); half_lam : λ₁/2. Per iteration: :meth:`set_state` with the new W (and the
    drift of W reported by the V-step), then :meth:`need` per term block, :meth:`store` for the rows formed.
    """

    def __init__(self, be, D, half_lam):
        self.be = be
        xp = be.xp
        self.half_lam = float(half_lam)
        self.row_norms = row_norms(be, D)
        df = np.diff(np.asarray(be.to_host(D.indptr)))
        self.slack = xp.asarray(rounding_factor(df, be.dtype), dtype=np.float64) * self.row_norms
        self.bound = xp.full(D.shape[0], np.inf)
        self._col_norm = 0.0
        self._drift = None  # max_k ‖W_new[:, k] − W_old[:, k]‖² from the V-step, for the next state
        self.rows_skipped = 0
        self.total_skipped = 0

    def advance(self, max_drift_sq, max_norm_sq):
        """The V-step replaced W: its largest column drift² and column norm² (floats)."""
        self._drift = (float(max_drift_sq), float(max_norm_sq))

    def set_state(self, col_norm_sq):
        """Start a U-step at the current W, whose largest column norm² is ``col_norm_sq`` (``max diag(WᵀW)``)."""
        self.total_skipped += self.rows_skipped
        self.rows_skipped = 0
        if self._drift is None:  # first state (or W from elsewhere): bounds void, every row formed
            self.bound[:] = np.inf
        else:
            drift_sq, _ = self._drift
            self.bound += self.row_norms * np.sqrt(drift_sq)
        self._drift = None
        self._col_norm = float(np.sqrt(col_norm_sq))

    def need(self, a, b, live):
        """Bool (b − a,) device: rows of the block that must be formed (``live``: their warm start is non-zero)."""
        test = self.bound[a:b] + self.slack[a:b] * self._col_norm
        xp = self.be.xp
        test = xp.where(xp.isnan(test), np.inf, test)
        return ~(test <= self.half_lam * (1.0 - 1e-6)) | live

    def store(self, rows, rowmax, n_block):
        """Bounds of the rows formed (absolute indices ``rows``) from their ``max_k |r̂_mk|``."""
        extra = self.slack[rows] * self._col_norm
        xp = self.be.xp
        self.bound[rows] = rowmax.astype(np.float64) + xp.where(xp.isnan(extra), np.inf, extra)
        self.rows_skipped += int(n_block - rows.shape[0])

    def finish(self):
        self.total_skipped += self.rows_skipped
        self.rows_skipped = 0
