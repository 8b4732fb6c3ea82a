"""Worker-side tasks of the distributed learners: pure functions of their arguments.

Each task wraps a per-block task of :mod:`rlsi.models.tasks` (the math is not repeated here) with what a
document partition adds: the partition's own rows of X and D = Xᵀ, the offsets of its document blocks,
and the reduction of its per-block results. Nothing here mutates an argument, so Dask may run a task
twice (a lost worker, a stolen task) and get the same bytes: a recomputed block equals the lost one.

Numba threads: every task takes ``threads`` (numba threads for its kernels; ``None`` leaves numba's
setting) because ``numba.set_num_threads`` is per thread and the worker threads are shared.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import reduce
from pathlib import Path

import numba
import numpy as np
import scipy.sparse as sp
from dask.sizeof import sizeof

from ..kernels.convert import csr_rows_to_dense, dense_to_csr
from ..kernels.products import csr_dense, csr_dense_rows
from ..kernels.rows import row_absmax
from ..models import steps, tasks
from ..models.sparsity import rows_of_R
from ..models.penalties import PreparedPenalty
from ..models.tasks import DocStats


def _threads(fn):
    @functools.wraps(fn)
    def run(*args, threads=None, **kwargs):
        if threads is not None:
            numba.set_num_threads(int(threads))
        return fn(*args, **kwargs)

    return run


@dataclass
class Part:
    """A document partition as it lives on a worker.

    X : CSR (n_p x M), documents ``start .. start + n_p`` of the corpus; D : CSR (M x n_p) = Xᵀ (term
    rows, for the partition's share of R = D W); blocks : [(a, b), ...] local row ranges — the corpus's
    document blocks (:func:`rlsi.models.tasks.blocks`) cut at the partition's edges, so that a partition
    made of whole blocks reduces its statistics exactly as the local learner does.
    """

    X: sp.csr_matrix
    D: sp.csr_matrix
    start: int
    blocks: list

    @property
    def n_docs(self):
        return self.X.shape[0]


@sizeof.register(Part)
def _sizeof_part(part):
    return int(sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in (part.X, part.D)))


@sizeof.register(DocStats)
def _sizeof_stats(stats):
    return 8 + (0 if stats.S is None else stats.S.nbytes)


@sizeof.register(PreparedPenalty)
def _sizeof_prepared(step):
    return step.matrix.nbytes  # the K x K statistics (the penalty and λ are a few bytes)


def make_part(X_p, start, doc_step):
    """A :class:`Part` from its rows of X (CSR) starting at corpus row ``start``."""
    X_p = sp.csr_matrix(X_p)
    n = X_p.shape[0]
    edges = sorted({0, n} | {g - start for g in range((start // doc_step + 1) * doc_step, start + n, doc_step)})
    blocks = [(a, b) for a, b in zip(edges, edges[1:])]
    return Part(X_p, X_p.T.tocsr(), int(start), blocks)


def term_block_nnz(part, term_blocks):
    """Non-zeros of the partition in each term block (a partition without any adds nothing to R_b)."""
    return [int(part.D.indptr[b] - part.D.indptr[a]) for a, b in term_blocks]


def sq_norm(part):
    """``‖X_p‖²_F`` in float64 (the constant of the objective)."""
    return float(np.square(part.X.data, dtype=np.float64).sum())


def col_counts(part, n_terms):
    """Stored entries of each term column of X_p (summed over the partitions: the document frequencies
    that rlsi.models.batch.RLSIProblem's V-step work model reads)."""
    return np.bincount(part.X.indices, minlength=n_terms).astype(np.float64)


def convert_topics(result, dense):
    """An :func:`assemble` result with U converted to the other representation (as RLSIProblem.u_step
    does under ``"auto"`` right after the U-step that crosses the threshold)."""
    U = _u(result)
    U = csr_rows_to_dense(U, 0, U.shape[0]) if dense else dense_to_csr(U)
    return (U,) + tuple(result[1:]) if isinstance(result, tuple) else U


def dense_copy(result):
    """A dense copy of sparse topics for the V-step (RLSIProblem.v_step_topics)."""
    U = _u(result)
    return csr_rows_to_dense(U, 0, U.shape[0])


def _w(x):
    """W_p from a :func:`doc_step` result (or W_p itself)."""
    return x[0] if isinstance(x, tuple) else x


def _u(x):
    """U from an :func:`assemble` result (or U itself)."""
    return x[0] if isinstance(x, tuple) else x


@_threads
def doc_step(part, U, step, W_prev, settings, *, dtype, whole_gram=False):
    """V-step of the partition: ``(W_p (n_p x K), DocStats, Q(W_p))`` with the block statistics folded in
    block order (``whole_gram``: S = gram of the whole W_p instead, as the local learner's initial S).
    One result object, so that the next tasks need no extra hop to pick its pieces."""
    U, W_prev = _u(U), (None if W_prev is None else _w(W_prev))
    if not sp.issparse(U):
        U = np.ascontiguousarray(U, dtype=dtype)  # as rlsi.models.steps.update_doc_vectors (no copy here)
    K = U.shape[1]
    W = np.empty((part.n_docs, K), dtype=dtype)
    results = []
    for a, b in part.blocks:
        W[a:b], st = tasks.doc_block(part.X, (a, b), U, step, W_prev, settings, dtype=dtype,
                                     want_gram=not whole_gram)
        results.append(st)
    stats = reduce(DocStats.merge, results, DocStats())
    if whole_gram:
        stats.S = steps.gram(W)
    return W, stats, step.penalty.value(W)


def block_gram(part, W):
    """The statistics ``S`` of W_p folded over the partition's blocks (what :func:`doc_step` returned for
    these W; used to rebuild S on resume)."""
    W = _w(W)
    stats = reduce(DocStats.merge, [DocStats(0.0, steps.gram(W[a:b])) for a, b in part.blocks], DocStats())
    return stats


def merge_stats(a, b):
    """``a + b`` as a new DocStats (the inputs — DocStats or doc_step results — are left as they are)."""
    a, b = (x[1] if isinstance(x, tuple) else x for x in (a, b))
    return DocStats(a.cross, None if a.S is None else a.S.copy()).merge(b)


@_threads
def r_partial(part, W, a, b, dtype, need=None):
    """The partition's share of rows a..b of ``R = D W``, compact: ``(rows, values)`` with the block rows
    (0-based in the block) where the partition has non-zeros and their values (len(rows) x K) — rows of
    terms the partition does not hold are zero and are not sent. ``need`` (b − a bools, or None for all):
    the rows the U-step needs (the others are certified zero by the screening, see learner)."""
    has = np.diff(part.D.indptr[a:b + 1]) > 0
    if need is not None:
        has &= need
    rows = np.flatnonzero(has)
    if len(rows) == b - a:
        return rows, csr_dense_rows(part.D, a, b, _w(W), dtype=dtype)
    # only the rows sent are computed, straight into a compact array (same kernel, same per-row sums)
    return rows, csr_dense_rows(part.D[rows + a], 0, len(rows), _w(W), dtype=dtype)


def nonempty_rows(part):
    """Which documents of the partition have a non-zero weight (bool, n_p)."""
    return np.diff(part.X.indptr) > 0


def take_rows(part, local):
    """Rows ``local`` (partition-local indices) of the partition's X (CSR)."""
    return part.X[local]


def sampled_r_rows(part, W, rows):
    """The partition's share of the rows ``rows`` of ``R = D W`` (len(rows) x K, float64), as the λ₁ search
    of :mod:`rlsi.models.sparsity` forms them on the whole D."""
    return rows_of_R(part.D, rows, _w(W))


def add_arrays(x, y):
    return x + y


def row_sq_norms(part):
    """``‖d_m‖²`` over the partition's documents, per term (M,), float64."""
    return np.diff(np.concatenate([[0.0], np.cumsum(np.square(part.D.data, dtype=np.float64))])[part.D.indptr])


def col_sq_diff(new, old):
    """``Σ_n (W_new[n, k] − W_old[n, k])²`` per topic k over the partition (K,), float64."""
    diff = np.asarray(_w(new), dtype=np.float64) - _w(old)  # one temporary, squared in place
    return np.square(diff, out=diff).sum(axis=0)


@sizeof.register(tuple)
def _sizeof_tuple(t):  # dask's own rule samples long tuples; ours are short and hold arrays
    return sum(sizeof(x) for x in t)


def add(x, y):
    """Sum of two compact shares of R rows (see :func:`r_partial`); rows present in one are copied."""
    (ix, vx), (iy, vy) = x, y
    if len(ix) == len(iy) and np.array_equal(ix, iy):  # the same rows (common): a plain sum
        return ix, vx + vy
    rows = np.union1d(ix, iy)
    out = np.zeros((len(rows), vx.shape[1]), dtype=np.result_type(vx, vy))
    out[np.searchsorted(rows, ix)] += vx
    out[np.searchsorted(rows, iy)] += vy
    return rows, out


def prepare_topics(stats, penalty, lam, K):
    """``penalty.prepared(S, λ₁)`` for the U-step from the reduced DocStats."""
    stats = stats[1] if isinstance(stats, tuple) else stats
    S = stats.S if stats.S is not None else np.zeros((K, K))
    return penalty.prepared(S, lam)


def prepare_docs(U, penalty, lam):
    """``penalty.prepared(UᵀU, λ₂)`` for the V-step."""
    return penalty.prepared(steps.topic_gram(_u(U)), lam)


@_threads
def topic_step(Rb, step, U_prev_b, n_rows, K, dtype, settings, *, dense=False):
    """U-step of one term block: ``(U_b (n_rows x K), sweeps, rows, max_k |r_mk| of those rows)`` from
    the compact rows ``Rb`` of R (:func:`r_partial`); None means no partition sent rows (R_b = 0).
    U_b is CSR, or an ndarray with ``dense`` (the dense topic representation). ``step``: the prepared penalty
    (``prepare_topics``); ``settings``: the U-step's SolverSettings (:meth:`RLSIPolicy.topic_settings`).

    Sparse ℓ1 topics: only the rows sent are solved. A row that no partition sent has r = 0 and a zero
    warm start (no document holds the term, or the screening certified it, which it does only for rows
    whose previous weights are all zero), so its solution is zero without a solve; the rows solved are
    independent coordinate-descent problems, the same arithmetic as in the whole block."""
    rows, R = (np.zeros(0, dtype=np.int64), np.zeros((0, K), dtype=dtype)) if Rb is None else Rb
    R = np.ascontiguousarray(R, dtype=dtype)
    peak = row_absmax(R) if K else np.zeros(len(rows))
    U_prev_b = None if U_prev_b is None else _u(U_prev_b)
    if not dense and step.penalty.norm == "l1" and len(rows) < n_rows:
        U0 = None if U_prev_b is None else U_prev_b[rows]
        Uc, sweeps = tasks.topic_block(R, step, U0, (0, len(rows)), settings)
        counts = np.zeros(n_rows + 1, dtype=np.int64)
        counts[rows + 1] = np.diff(Uc.indptr)
        Ub = sp.csr_matrix((Uc.data, Uc.indices, np.cumsum(counts)), shape=(n_rows, K))
        return Ub, sweeps, rows, peak
    if len(rows) < n_rows:
        full = np.zeros((n_rows, K), dtype=dtype)
        full[rows] = R
        R = full
    Ub, sweeps = tasks.topic_block(R, step, U_prev_b, (0, n_rows), settings, dense=dense)
    return Ub, sweeps, rows, peak


def assemble(*results):
    """``(U (M x K), sweeps, [(rows, peaks) per block])`` from the term blocks' results, in term order; U is
    CSR, or a C-ordered ndarray when the blocks are dense."""
    if isinstance(results[0][0], np.ndarray):
        U = np.concatenate([r[0] for r in results]) if len(results) > 1 else results[0][0].copy()
    else:
        U = sp.vstack([r[0] for r in results], format="csr") if len(results) > 1 else results[0][0].copy()
        U.eliminate_zeros()
    return U, sum(r[1] for r in results), [(r[2], r[3]) for r in results]


def rows(U, a, b):
    """Rows a..b of a CSR (a term block of U)."""
    return _u(U)[a:b]


def first(pair):
    return pair[0]


def second(pair):
    return pair[1]


def third(triple):
    return triple[2]


def identity(x):
    return x


def save_part_w(W, path):
    """Write W_p with :mod:`rlsi.io` (atomic) to ``path``; returns the path."""
    from .. import io

    W = _w(W)
    from .checkpoint import Arrays

    io.save(path, doc_vectors=Arrays({"partition": str(Path(path).name)}, {"W": W}))
    return str(path)


def load_part_w(path, dtype):
    """W_p written by :func:`save_part_w`."""
    from .. import io

    W = io.load(path)["doc_vectors"].arrays["W"]
    return np.ascontiguousarray(W, dtype=dtype)


# ------------------------------------------------------------------ online
@_threads
def batch_step(X_p, U, step, W_prev, settings):
    """Online V-step of a mini-batch part: ``(W_p, (S_p, cols_p, R_p))`` with the part's contribution to
    the statistics as in :meth:`rlsi.models.stats.PendingBatch.assign` (S_p = W_pᵀW_p; the rows ``cols_p``
    of X_pᵀ W_p — only the terms the part touches cross the network)."""
    n, M = X_p.shape
    K = U.shape[1]
    W, _ = tasks.doc_block(X_p, (0, n), U, step, W_prev, settings, dtype=np.float64, want_gram=False)
    W = np.ascontiguousarray(W, dtype=np.float64)
    mask = np.zeros(M, dtype=bool)
    mask[X_p.indices] = True
    cols = np.flatnonzero(mask)
    if len(cols):
        remap = np.zeros(M, dtype=X_p.indices.dtype)
        remap[cols] = np.arange(len(cols), dtype=X_p.indices.dtype)
        XcT = sp.csr_matrix((X_p.data, remap[X_p.indices], X_p.indptr), shape=(n, len(cols))).T.tocsr()
        R_p = csr_dense(XcT, W, dtype=np.float64)
    else:
        R_p = np.zeros((0, K))
    return W, (W.T @ W, cols, R_p)


def gram_stats(W):
    """DocStats with ``S = WᵀW`` of the whole W_p (the local learner's initial S)."""
    return DocStats(0.0, steps.gram(_w(W)))
