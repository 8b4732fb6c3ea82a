"""Topics on the card as int32 CSR: built from the U-step's solved row blocks, read back in dense blocks.

cuSPARSE and ``cupyx.scipy.sparse`` index CSR matrices with int32 (CuPy 13 casts wider indices to int32
without a check, so a matrix of 2³¹ or more entries wraps silently: cupy#9490). The topics U (M x K) are
therefore built directly as int32 CSR by :class:`CSRBuilder`, with a budget of non-zero weights that refuses,
with one :class:`rlsi.errors.RLSIError` line, before 2³¹ − 1 (or before the memory plan's share for U).
Building costs the entries themselves (``nnz · (s + 4)`` bytes) and one bounded chunk of positions at a
time: no int64 COO copy of U and no sort.

The products that read U never go through cuSPARSE's SpGEMM (whose work buffers grow with the intermediate
products and are in no plan): :func:`dense_rows` writes rows of a CSR matrix into a dense block, so that

* ``UᵀU`` is a sum of GEMMs over dense row blocks of U (:func:`gram`), in float64;
* ``Φ = X U`` is a sum of SpMMs of X with dense column blocks of U (:class:`Columns`: rows of ``Uᵀ``, laid
  out as the backend's sparse x dense product reads them without a copy).

:func:`penalty_sum` is ``P(U)`` of CSR or dense topics without a float64 copy of the whole array.
"""

from __future__ import annotations

import numpy as np

from ..errors import RLSIError
from .corpus import spans
from .memory import CHUNK_ELEMENTS, INT32_MAX, size


class CSRBuilder:
    """An int32 CSR matrix (``shape``) from dense row blocks given in increasing row order.

    ``add(rows, block)``: ``rows`` the blocks' absolute row numbers (device ints, increasing, after every row
    added before), ``block`` their dense values (len(rows) x n). ``finish()`` returns the CSR matrix.
    max_nnz : the most entries (at most 2³¹ − 1, the int32 limit); one more raises RLSIError ``what`` names.
    """

    def __init__(self, be, shape, *, max_nnz=None, what="the topics"):
        self.be = be
        self.shape = (int(shape[0]), int(shape[1]))
        self.max_nnz = INT32_MAX if max_nnz is None else min(int(max_nnz), INT32_MAX)
        self.what = what
        self.counts = be.xp.zeros(self.shape[0], dtype=np.int32)
        self.data, self.indices = [], []
        self.nnz = 0

    def add(self, rows, block):
        xp = self.be.xp
        n, K = block.shape
        step = max(1, CHUNK_ELEMENTS // max(K, 1))
        for a in range(0, n, step):
            B = block[a:a + step]
            mask = B != 0
            r, c = xp.nonzero(mask)  # row-major order: each row's columns ascending (canonical CSR)
            k = int(r.shape[0])
            if self.nnz + k > self.max_nnz:
                self.refuse(self.nnz + k)
            self.counts[rows[a:a + step]] = mask.sum(axis=1).astype(np.int32)
            self.indices.append(c.astype(np.int32))
            self.data.append(B[r, c])
            self.nnz += k

    def refuse(self, nnz):
        limit = "2³¹ − 1, the int32 indices of CSR matrices on the card" if self.max_nnz == INT32_MAX else (
            f"the memory plan's budget for them ({size(self.max_nnz)} entries' worth)")
        raise RLSIError(f"{self.what} reach more than {self.max_nnz} non-zero weights ({nnz} so far) on the card: "
                        f"above {limit}; use a larger lambda1 (sparser topics), a smaller n_components, or "
                        f"device='cpu'")

    def finish(self):
        """The CSR matrix (int32 indices and row pointers); the parts are released as it is made."""
        be, xp = self.be, self.be.xp
        indptr = xp.zeros(self.shape[0] + 1, dtype=np.int32)
        xp.cumsum(self.counts, out=indptr[1:])
        self.counts = None
        if not self.data:
            data, indices = xp.zeros(0, dtype=be.dtype), xp.zeros(0, dtype=np.int32)
        else:
            data = xp.concatenate(self.data).astype(be.dtype, copy=False)
            self.data = []
            indices = xp.concatenate(self.indices)
            self.indices = []
        return be.sparse.csr_matrix((data, indices, indptr), shape=self.shape)


def dense_rows(be, A, a, b, *, order="C", dtype=None):
    """Rows a..b of a device CSR matrix A as a dense (b − a) x n array of ``dtype`` (A's by default) in
    ``order``: zeros, then the rows' entries scattered in (temporaries: :data:`rlsi.gpu.memory.SCATTER` bytes per
    entry)."""
    xp = be.xp
    out = xp.zeros((b - a, A.shape[1]), dtype=dtype or A.dtype, order=order)
    p0, p1 = int(A.indptr[a]), int(A.indptr[b])
    if p1 > p0:
        row = xp.searchsorted(A.indptr[a + 1:b + 1], xp.arange(p0, p1), side="right")
        out[row, A.indices[p0:p1]] = A.data[p0:p1]
    return out


def gram(be, U, rows):
    """``UᵀU`` (K x K, float64, host) of device topics, CSR or dense, accumulated in float64 over blocks of
    ``rows`` rows (a dense float64 block at a time)."""
    xp = be.xp
    K = U.shape[1]
    G = xp.zeros((K, K), dtype=np.float64)
    csr = be.sparse.issparse(U)
    for a, b in spans(U.shape[0], rows):
        Ub = dense_rows(be, U, a, b, dtype=np.float64) if csr else U[a:b].astype(np.float64)
        G += Ub.T @ Ub
    return np.asarray(be.to_host(G), dtype=np.float64)


def penalty_sum(be, norm, U, rows):
    """``Σ|u|`` (``norm`` "l1") or ``Σu²`` ("l2") of device topics in float64: over the entries of CSR topics,
    over blocks of ``rows`` rows of dense ones."""
    xp = be.xp
    if be.sparse.issparse(U):
        parts = [U.data]
    else:
        parts = (U[a:b] for a, b in spans(U.shape[0], rows))
    total = 0.0
    for P in parts:
        if norm == "l1":
            total += float(xp.abs(P).sum(dtype=np.float64))
        else:
            P64 = P.astype(np.float64)
            total += float(xp.sum(P64 * P64))
    return total


def column_width(n_terms, n_components, itemsize, budget):
    """Columns of U per dense column block: as many as ``budget`` bytes hold (at least 1, at most K)."""
    return int(max(1, min(n_components, budget // max(1, n_terms * itemsize))))


class Columns:
    """Dense column blocks of CSR topics U (M x K) for ``Φ = X U`` by SpMM.

    ``Uᵀ`` is made once (K x M CSR); the block of columns c0..c1 of U is the transpose of rows c0..c1 of
    ``Uᵀ`` made dense, in the layout the backend's sparse x dense product reads without a copy (column-major
    for cuSPARSE). With a single block (``width >= K``) it is made once and kept.
    """

    def __init__(self, be, U, width):
        self.be = be
        self.K = U.shape[1]
        self.width = max(1, int(width))
        self.UT = U.T.tocsr()
        self._only = self.block(0, self.K) if self.width >= self.K else None

    def block(self, c0, c1):
        order = "C" if self.be.layout == "F" else "F"  # the transpose of a C block is column-major
        return dense_rows(self.be, self.UT, c0, c1, order=order).T

    def product(self, Xb):
        """``Φ = Xb U`` (rows of Xb x K) in the backend's dtype and layout."""
        be, xp = self.be, self.be.xp
        if self._only is not None:
            return xp.asarray(Xb @ self._only, dtype=be.dtype)
        Phi = xp.empty((Xb.shape[0], self.K), dtype=be.dtype, order=be.layout)
        for c0, c1 in spans(self.K, self.width):
            Phi[:, c0:c1] = Xb @ self.block(c0, c1)
        return Phi
