"""The per-block tasks of the squared-loss learners: pure functions of their arguments.

Layout (scikit-learn orientation): ``X`` is documents x terms (N x M, CSR) — the paper's ``D`` is ``Xᵀ``;
topics ``U`` are terms x topics (M x K, CSR or dense); document vectors ``W = Vᵀ`` are N x K dense.

* :func:`topic_block` — the U-step for a block of term rows: given the rows ``R_b`` of ``R = D Vᵀ``
  (b x K) and the prepared penalty (Gram statistics and λ), solve ``min_u uᵀSu − 2rᵀu + λ₁P(u)`` for each row and return
  the rows as CSR (what a distributed learner sends back is sparse).
* :func:`doc_block` — the V-step (and folding-in) for a block of documents: ``Φ_b = X_b U``, the rows
  ``w = argmin ‖x − U w‖² + λ₂Q(w)``, and the block's statistics :class:`DocStats` (its share of
  ``tr(Uᵀ D Vᵀ)`` and of ``S = WᵀW``), which are reduced by :meth:`DocStats.merge` in block order.

Tasks never mutate their inputs (except the caller-owned output of ``R`` providers) and never depend on
which executor runs them, so serial, threaded and distributed runs give the same numbers.
"""

from __future__ import annotations

import threading

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..kernels.blas_rows import gram_rows
from ..kernels.convert import csr_rows_to_dense, csr_take_dense, dense_rows_to_csr, dense_to_csr
from ..kernels.products import BLOCKS, csr_csr_dense, csr_dense_rows
from ..kernels.rows import cast_into, dot_sum, store_rounded

# Aim for dense blocks of about this many entries (x 8 bytes): big enough to keep every thread busy,
# small enough that R and Φ never need M x K or N x K extra memory at once.
BLOCK_ENTRIES = 1 << 22
#: Fewest rows of a block (below this the per-block overhead dominates); a tuning lowers it to get many blocks.
MIN_BLOCK_ROWS = 256


def block_rows(n_cols, block_entries=None, min_rows=None):
    """Rows per block for dense blocks of width ``n_cols``: ``block_entries`` (None: :data:`BLOCK_ENTRIES`) worth,
    at least ``min_rows`` (None: :data:`MIN_BLOCK_ROWS`; ``RLSITuning.min_block_rows``)."""
    low = MIN_BLOCK_ROWS if min_rows is None else max(1, int(min_rows))
    return max(low, (block_entries or BLOCK_ENTRIES) // max(1, n_cols))


def blocks_in_flight(n_rows, rows, workers=1):
    """Blocks of ``rows`` rows (of ``n_rows``) that ``workers`` solve at once: each holds its own scratch."""
    return max(1, min(max(1, int(workers)), -(-int(n_rows) // max(1, int(rows)))))


def topic_blocks_nbytes(n_terms, n_cols, itemsize, *, workers=1, block_entries=None):
    """Bytes of the U-step's dense row blocks in flight (:func:`topic_block`, :func:`topic_block_rows`): per
    block being solved, its rows of R and of the warm start (:class:`BlockScratch` buffers "R" and "warm
    start") and the solver's solution, three ``rows x n_cols`` arrays of ``itemsize`` (the fit's dtype)."""
    rows = block_rows(n_cols, block_entries)
    return 3 * min(rows, int(n_terms)) * int(n_cols) * int(itemsize) * blocks_in_flight(n_terms, rows, workers)


def doc_blocks_nbytes(n_docs, n_cols, *, workers=1, block_entries=None):
    """Bytes of the V-step's dense row blocks in flight (:func:`doc_block`): per block being projected, Φ
    (the :class:`BlockScratch` buffer "Phi", and "Phi float64" for the closed form of a float32 fit) and the
    solver's temporary, counted as two ``rows x n_cols`` float64 arrays (the solution goes straight into
    W's rows: ``out=``)."""
    rows = block_rows(n_cols, block_entries)
    return 2 * min(rows, int(n_docs)) * int(n_cols) * 8 * blocks_in_flight(n_docs, rows, workers)


def blocks(n_rows, step):
    """``[(a, b), ...]`` covering ``range(n_rows)`` in blocks of ``step`` rows."""
    return [(a, min(n_rows, a + step)) for a in range(0, n_rows, step)]


def gram(W):
    """``S = V Vᵀ = Wᵀ W`` in float64 (K x K, exactly symmetric) of W (N x K, any float dtype or strides):
    :func:`rlsi.kernels.blas_rows.gram_rows` — symmetric rank-k updates (half a GEMM's work) on row chunks,
    in parallel on single-threaded BLAS, float32 rows converted to float64 a sub-block at a time (never a
    float64 copy of the whole W, which was 6.4 GB of the 14.2 GB peak of the paper's web fit: 1.6M documents,
    K = 500, float32). Equal to ``W.astype(float64).T @ W`` up to the order of the sums, and the same
    numbers on any number of threads."""
    return gram_rows(W)


def topic_block(Rb, step, U_prev, span, settings, *, dense=False, out=None):
    """U-step on the term rows ``span = (a, b)``. Returns ``(U_b, sweeps)``: U_b (b − a) x K in Rb's dtype,
    as CSR (what a distributed learner sends back is sparse) or, with ``dense=True``, as an ndarray (written
    into ``out``, rows a..b of the caller's dense U, when given).

    Rb : (b − a, K) rows of R. step : the :class:`rlsi.models.penalties.PreparedPenalty` of ``(S, λ₁)``.
    U_prev : the previous topics (M x K, CSR or ndarray) or None: the warm start of iterative solvers (rows
    a..b are read). settings : :class:`rlsi.models.penalties.SolverSettings`.
    """
    a, b = span
    U0, fresh = None, False
    if U_prev is not None and step.penalty.warm_start:
        if isinstance(U_prev, np.ndarray):
            U0 = U_prev[a:b]  # read only: the previous topics stay intact
        else:
            U0, fresh = csr_rows_to_dense(U_prev, a, b, dtype=Rb.dtype), True
    if out is not None and (out.dtype != Rb.dtype or not out.flags.c_contiguous):
        out = None
    Ub, sweeps = step.solve(Rb, U0, settings, out=out if dense else None, overwrite_init=fresh)
    Ub = Ub.astype(Rb.dtype, copy=False)
    if dense:
        if out is not None and Ub is not out:
            out[...] = Ub
        return (out if out is not None else Ub), sweeps
    return dense_to_csr(Ub), sweeps


def topic_block_rows(Rc, rows, step, U_prev, span, settings, *, scratch=None):
    """:func:`topic_block` (CSR result) when only the rows ``rows`` (int64, relative to a) of ``span = (a, b)``
    need solving and the others are known to be zero (screened): ``Rc`` (len(rows) x K) holds those rows
    of R. Returns ``(U_b (b − a) x K CSR, sweeps)``, the same as :func:`topic_block` on the full block
    with zero rows of R where not computed (the solver skips those: zero warm start, zero r).
    ``scratch``: a :class:`BlockScratch` whose buffer takes the dense warm start (solved in place; the
    result is copied out to CSR before the next block reuses it)."""
    a, b = span
    U0, fresh = None, False
    if U_prev is not None and step.penalty.warm_start and len(rows):
        if isinstance(U_prev, np.ndarray):
            U0, fresh = np.ascontiguousarray(U_prev[a + rows], dtype=Rc.dtype), True
        else:
            out = scratch.get("warm start", Rc.shape, Rc.dtype) if scratch is not None else None
            U0, fresh = csr_take_dense(U_prev, rows + a, dtype=Rc.dtype, out=out), True
    Uc, sweeps = step.solve(Rc, U0, settings, overwrite_init=fresh)
    return dense_rows_to_csr(Uc.astype(Rc.dtype, copy=False), rows, b - a), sweeps


class BlockScratch:
    """Reusable dense row blocks of one fit, per thread and name: the U-step's blocks of R and of the warm
    start (up to ``BLOCK_ENTRIES`` entries each) and the V-step's blocks of Φ are the same sizes at every
    iteration, and a fresh block is zeroed by the OS on first write (3.3 ms per 32 MB block). Measured on a
    10-iteration fit at 50k x 200k, K = 200: page faults ÷ 3.5-4.3, system time -0.4 to -0.6 s, wall -1 to
    -6 %. A block handed out is valid until the same thread asks for the
    same name again. Threads get their own buffers (the "threads" executor solves blocks concurrently)."""

    def __init__(self):
        self._buffers = {}  # (thread id, name, dtype) -> 1-D buffer; dict updates are atomic

    def get(self, name, shape, dtype):
        """A C-contiguous ``shape`` array of ``dtype`` (uninitialised) backed by this thread's buffer."""
        dtype = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64))
        key = (threading.get_ident(), name, dtype.str)
        buf = self._buffers.get(key)
        if buf is None or buf.size < n:
            buf = self._buffers[key] = np.empty(max(n, 1), dtype=dtype)
        return buf[:n].reshape(shape)


def stack_csr_rows(parts, n_cols):
    """Row blocks (CSR, in order) as one CSR matrix: concatenated arrays, offset indptr (scipy's vstack
    takes a general, slower path). Blocks made by ``dense_to_csr`` hold no explicit zeros."""
    if not parts:
        return sp.csr_matrix((0, n_cols))
    if len(parts) == 1:
        return parts[0]
    nnz = np.cumsum([0] + [p.nnz for p in parts])
    idx = np.int64 if nnz[-1] >= 2**31 else np.int32
    indptr = np.concatenate([np.asarray(parts[0].indptr[:1], dtype=idx)]
                            + [p.indptr[1:].astype(idx) + idx(off) for p, off in zip(parts, nnz[:-1])])
    indices = np.concatenate([p.indices.astype(idx, copy=False) for p in parts])
    data = np.concatenate([p.data for p in parts])
    return sp.csr_matrix((data, indices, indptr), shape=(int(indptr.shape[0] - 1), n_cols))


@dataclass
class DocStats:
    """What the V-step of a block contributes to the objective and the next U-step.

    cross : float — ``Σ_n φ_n · w_n`` = the block's share of ``tr(Uᵀ D Vᵀ)``.
    S : (K, K) float64 or None — the block's ``WᵀW`` (of the stored rows).
    """

    cross: float = 0.0
    S: np.ndarray | None = None

    def merge(self, other):
        """Add ``other`` into self (exact up to rounding; reduced in block order by every executor)."""
        self.cross += other.cross
        if other.S is not None:
            self.S = other.S.copy() if self.S is None else self.S + other.S
        return self


def doc_block(X, span, U, step, W_prev, settings, *, dtype, want_gram, out=None, plan=None, scratch=None,
              product_blocks=BLOCKS):
    """V-step / folding-in of the documents ``span = (a, b)`` of X. Returns ``(W_b (b − a) x K of ``dtype``,
    DocStats)``.

    X : CSR (N x M); U : CSR or dense (M x K); step : the :class:`rlsi.models.penalties.PreparedPenalty` of
    ``(UᵀU, λ₂)``; W_prev : (N x K) warm start for iterative solvers, or None (not the memory of ``out``);
    settings : :class:`rlsi.models.penalties.SolverSettings`.
    out : optional (b − a) x K array of ``dtype`` (rows of the caller's W) that receives W_b, which is then
        returned: solved straight into it where the solver can, copied otherwise.
    plan : optional :func:`rlsi.kernels.products.sparse_plan` of a CSR U (made once for all the blocks of a
        step; made here otherwise).
    scratch : optional :class:`BlockScratch` whose buffers hold Φ (and its float64 copy): Φ is used only
        inside this call.
    product_blocks : the :class:`rlsi.kernels.products.ProductBlocks` of Φ = X U (a plan's own for a CSR U).
    """
    a, b = span
    penalty = step.penalty

    def buffer(name, dt):
        return scratch.get(name, (b - a, U.shape[1]), dt) if scratch is not None else None

    if sp.issparse(U):
        Phi = csr_csr_dense(X, U, dtype=dtype, a=a, b=b, plan=plan, out=buffer("Phi", dtype), blocks=product_blocks)
    else:
        Phi = csr_dense_rows(X, a, b, U, dtype=dtype, out=buffer("Phi", dtype), blocks=product_blocks)
    if penalty.norm == "l2" and not penalty.nonneg and Phi.dtype != np.float64:
        # the closed-form ridge computes in float64: cast Φ here in parallel (its own astype is serial)
        f64 = buffer("Phi float64", np.float64)
        Phi = cast_into(Phi, np.empty(Phi.shape) if f64 is None else f64)
    W0 = None if (W_prev is None or not penalty.warm_start) else W_prev[a:b]
    direct = out is not None and out.dtype == Phi.dtype and out.flags.c_contiguous
    Wb, _ = step.solve(Phi, W0, settings, out=out if direct else None)
    cross = dot_sum(Phi, Wb)
    del Phi
    dtype = np.dtype(dtype)
    if Wb.dtype == np.float64 and dtype != np.float64 and Wb.flags.c_contiguous:
        # float64 solution rows of a float32 fit (the closed form): stored rounded, in parallel, and the gram
        # taken from Wb, which now holds the stored values in float64 (no conversion back for BLAS)
        if out is None or not out.flags.c_contiguous or out.dtype != dtype:
            dest = np.empty(Wb.shape, dtype=dtype)
        else:
            dest = out
        store_rounded(Wb, dest)
        S = gram(Wb) if want_gram else None
        if out is not None and dest is not out:
            out[...] = dest
            dest = out
        return dest, DocStats(cross, S)
    Wb = Wb.astype(dtype, copy=False)
    if out is not None and Wb is not out:
        out[...] = Wb
        Wb = out
    return Wb, DocStats(cross, gram(Wb) if want_gram else None)
