"""The two alternating steps of the squared-loss learners, mapped over blocks by an executor.

U-step (TOIS Algorithm 2, and its ℓ2 / non-negative variants)::

    min_U ‖D − U V‖²_F + λ₁ P(U)

decomposes into one problem per term row m with the statistics ``S = V Vᵀ`` (K x K) and the row ``r_m``
of ``R = D Vᵀ`` (M x K). ``R`` is never formed whole: an ``r_rows(a, b)`` provider produces it block by
block (batch: :class:`rlsi.models.screening.BatchR`; online: ``TopicStatistics.r_rows``), so memory is
``block x K`` whatever M is. The block is the unit of work of every executor.

V-step (Algorithm 3, and its ℓ1 / non-negative variants)::

    min_V ‖D − U V‖²_F + λ₂ Q(V)

with ``Φᵀ = X U`` (N x K) computed from sparse X and sparse (or dense) U, by blocks of documents. The same
function is the folding-in of new documents and queries (§7), for every model of this family and for
:class:`rlsi.retrieval.topic.RidgeFolding` (:func:`fold_in`).
"""

from __future__ import annotations

from functools import reduce

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ..kernels.convert import csr_nbytes
from ..kernels.products import BLOCKS, csr_gram, sparse_plan
from ..kernels.threads import compute_threads
from . import tasks
from .executor import get_executor
from .penalties import SolverSettings
from .penalties import penalty as get_penalty
from .tasks import DocStats, block_rows, blocks, gram  # noqa: F401  (re-exported for learners)


def topic_gram(U):
    """``G = UᵀU`` (K x K, float64) for CSR or dense U (M x K).

    Dense U: a BLAS rank-k update over the rows that hold a non-zero weight only (with sparse topics
    held densely, as online RLSI does, most rows are zero). CSR U: :func:`rlsi.kernels.products.csr_gram`
    (parallel, float64 sums; scipy's ``U.T @ U`` was single-threaded: the serial share of the sweep's
    AvgComp 0.026 point)."""
    if sp.issparse(U):
        return csr_gram(U.tocsr())
    live = nonzero_rows(U)
    return gram(U if len(live) > 0.5 * U.shape[0] else U[live])


@njit(cache=True, parallel=True)
def _nonzero_row_mask(U):
    out = np.zeros(U.shape[0], dtype=np.bool_)
    for i in prange(U.shape[0]):
        hit = False
        for k in range(U.shape[1]):  # no early exit: the loop vectorises, and rows are short
            hit |= U[i, k] != 0.0
        out[i] = hit
    return out


def nonzero_row_mask(U):
    """Boolean (M,): which rows of a dense (M x K) array hold a non-zero entry."""
    return _nonzero_row_mask(np.ascontiguousarray(U))


def nonzero_rows(U):
    """Indices of the rows of a dense (M x K) array that hold a non-zero entry."""
    return np.flatnonzero(nonzero_row_mask(U))


def topics_nbytes(n_terms, n_components, itemsize, nnz=None):
    """Bytes of topics U (M x K of ``itemsize``): dense (``nnz`` None, what :func:`update_topics` with
    ``dense=True`` and :func:`rlsi.kernels.convert.csr_rows_to_dense` allocate) or CSR with ``nnz`` entries
    (:func:`rlsi.models.tasks.stack_csr_rows`)."""
    if nnz is None:
        return int(n_terms) * int(n_components) * int(itemsize)
    return csr_nbytes(n_terms, nnz, itemsize)


def update_topics_nbytes(n_terms, n_components, itemsize, nnz=None):
    """Bytes of the topics while :func:`update_topics` runs: the previous topics (the warm start) and the
    new ones — dense (``nnz`` None): U_prev and ``U_out``; CSR: U_prev, the blocks' CSR pieces and the
    stacked result, each about nnz(U) entries."""
    return (2 if nnz is None else 3) * topics_nbytes(n_terms, n_components, itemsize, nnz)


def update_topics(r_rows, step, U_prev, settings=SolverSettings(), *, n_terms, executor=None, block_entries=None,
                  dense=False, min_block_rows=None):
    """U-step. Returns ``(U, sweeps)``: U (M x K) of the dtype of the R blocks, as CSR, or as a C-ordered
    ndarray with ``dense=True`` (cheaper when most weights are non-zero; same numbers either way).

    r_rows : callable ``(a, b) -> ndarray (b − a, K)``, rows a..b of ``R = D Vᵀ``; it must be safe to
        call for different blocks concurrently (every provider here writes only its own rows). A provider
        with a ``compact(a, b) -> (rows, R_rows)`` method (screening) gives only the rows that can be
        non-zero; for CSR topics only those are solved and converted.
    step : the :class:`rlsi.models.penalties.PreparedPenalty` of ``(S, λ₁)`` (``penalty.prepared(S, lam)``,
        S = V Vᵀ, K x K float64).
    U_prev : CSR or ndarray (M x K), or None. Warm start of the iterative solvers; the minimiser is the
        same as from Algorithm 2's zero start (strictly convex problem), only reached in fewer sweeps.
    settings : :class:`rlsi.models.penalties.SolverSettings` (sweeps, tolerance, each row's work budget).
    sweeps : total number of coordinate-descent sweeps (0 for the ℓ2 closed form), for diagnostics.
    block_entries, min_block_rows : the blocks (:func:`rlsi.models.tasks.block_rows`; the tuning's).
    """
    K = step.n_components
    U_out = None

    def task(ab):
        Rb = r_rows(*ab)
        if dense:
            nonlocal U_out
            if U_out is None:  # dtype known from the first block (the R provider's)
                U_out = np.empty((n_terms, K), dtype=Rb.dtype)
            # solved straight into its rows of U_out (disjoint rows: no second M x K copy)
            _, sweeps = tasks.topic_block(Rb, step, U_prev, ab, settings, dense=True, out=U_out[ab[0]:ab[1]])
            return None, sweeps
        return tasks.topic_block(Rb, step, U_prev, ab, settings)

    def compact_task(ab):  # a screening provider and CSR topics: only the rows not certified zero
        rows, Rc = r_rows.compact(*ab)
        return tasks.topic_block_rows(Rc, rows, step, U_prev, ab, settings, scratch=getattr(r_rows, "scratch", None))

    spans = blocks(n_terms, block_rows(K, block_entries, min_block_rows))
    executor = get_executor(executor)
    if dense and spans:  # the first block allocates U_out before the others run concurrently
        results = [task(spans[0])] + executor.map(task, spans[1:])
    else:
        results = executor.map(compact_task if hasattr(r_rows, "compact") else task, spans)
    sweeps = sum(r[1] for r in results)
    if dense:
        return (U_out if U_out is not None else np.zeros((n_terms, K))), sweeps
    return tasks.stack_csr_rows([r[0] for r in results], K) if results else sp.csr_matrix((n_terms, K)), sweeps


def doc_vectors_nbytes(n_docs, n_components, itemsize):
    """Bytes of the W (N x K of ``itemsize``) that :func:`update_doc_vectors` allocates."""
    return int(n_docs) * int(n_components) * int(itemsize)


def update_doc_vectors(X, U, *, penalty, lam, settings=SolverSettings(), W_prev=None, dtype=None,
                       return_gram=False, executor=None, block_entries=None, G=None, scratch=None, plan=None,
                       min_block_rows=None, product_blocks=BLOCKS):
    """V-step / folding-in. Returns ``(W, cross)`` with W (N x K) = Vᵀ and cross = Σ Φ∘V, and with
    ``return_gram=True`` also ``S = WᵀW`` (K x K, float64), accumulated block by block while each block
    is in cache (the next U-step and the objective both need it; a separate pass over W costs more).

    X : CSR (N x M); U : CSR or dense (M x K); G : ``UᵀU`` if the caller has it (else computed here).
    settings : :class:`rlsi.models.penalties.SolverSettings` of the iterative solvers.
    scratch : optional :class:`rlsi.models.tasks.BlockScratch` for the blocks' Φ (reused across calls).
    plan : the :func:`rlsi.kernels.products.sparse_plan` of a CSR U for X's dtype and index order, if the caller
    keeps one (it costs O(rows of U): a search folding one query at a time into a 7M-term model keeps it).
    product_blocks : the :class:`rlsi.kernels.products.ProductBlocks` of Φ = X U (the numbers do not depend on it).
    ``cross = tr(Uᵀ D Vᵀ)`` is what the objective needs. With penalty "l2" every row is ``(UᵀU + λ₂I)⁻¹ Uᵀ d``;
    with "l1" it is the lasso of :mod:`rlsi.kernels.lasso` with ``S = UᵀU`` (warm-started from ``W_prev`` if
    given).
    """
    pen = get_penalty(penalty, param="doc_penalty")
    dtype = np.dtype(dtype or X.dtype)
    N, K = X.shape[0], U.shape[1]
    if not sp.issparse(U):
        U = np.ascontiguousarray(U, dtype=dtype)  # once, not per block
    step = pen.prepared(topic_gram(U) if G is None else G, lam)
    # how Φ = X U runs for sparse U (its dense rows, its chunks), once for all blocks
    if plan is None and sp.issparse(U):
        plan = sparse_plan(U, dtype, X.has_sorted_indices, blocks=product_blocks)
    W = np.empty((N, K), dtype=dtype)

    def task(ab):
        _, stats = tasks.doc_block(X, ab, U, step, W_prev, settings, dtype=dtype, want_gram=return_gram,
                                   out=W[ab[0]:ab[1]], plan=plan, scratch=scratch, product_blocks=product_blocks)
        return stats  # the rows go straight into W (disjoint slices): no second N x K copy

    results = get_executor(executor).map(task, blocks(N, block_rows(K, block_entries, min_block_rows)))
    stats = reduce(DocStats.merge, results, DocStats())
    if return_gram:
        S = stats.S if stats.S is not None else np.zeros((K, K))
        return W, stats.cross, S
    return W, stats.cross


def fold_in(X, topics, *, penalty="l2", lam=1.0, max_iter=100, tol=1e-4, dtype=None, n_jobs=None,
            executor=None):
    """Topic vectors of the rows of X with the topics frozen: ``w = argmin ‖x − U w‖² + λ Q(w)``.

    X : CSR (n_samples x n_features); topics : U (n_features x n_components), CSR or dense;
    penalty : Q, a name of :data:`rlsi.models.penalties.PENALTIES` ("l2": the ridge projection
    ``(UᵀU + λI)⁻¹ Uᵀ x``; "l1": the lasso of footnote 8). Returns W (n_samples x n_components) of
    ``dtype`` (X's by default). A row without any known term gives a zero vector.
    """
    with compute_threads(n_jobs):  # BLAS on one thread: see kernels.blas_rows
        W, _ = update_doc_vectors(X, topics, penalty=penalty, lam=lam, settings=SolverSettings(max_iter, tol),
                                  dtype=dtype or X.dtype, executor=executor)
    return W


#: Rows per chunk of :func:`topic_change` (a few MB at K = 500).
CHANGE_ROWS = 4096


def topic_change(U, U_before):
    """``‖U − U_before‖_F`` (float) of two topic matrices (M x K, dense or CSR). Dense topics are compared
    in row chunks: a whole ``U − U_before`` and its square would be two more M x K float64 arrays next to U,
    its copy and R (the peak of an online fit with a large vocabulary)."""
    if sp.issparse(U) or sp.issparse(U_before):
        diff = U - U_before
        return float(np.sqrt(np.square(diff.data if sp.issparse(diff) else diff).sum()))
    total = 0.0
    for a in range(0, U.shape[0], CHANGE_ROWS):
        d = U[a:a + CHANGE_ROWS] - U_before[a:a + CHANGE_ROWS]
        total += float(np.einsum("ij,ij->", d, d))
    return float(np.sqrt(total))
