"""Batch RLSI on the device: the RLSI problem's steps with its arrays on the card (a placement).

:class:`DeviceRLSIProblem` is the problem object of :func:`rlsi.models.driver.alternate` (``u_step``,
``v_step``, ``objective``, ``components``), like :class:`rlsi.models.batch.RLSIProblem` on the host: the
skeleton (validation, initialisation, the stop rule, the fitted attributes) is the estimator's, only the
steps run here. Per iteration:

* U-step, by term blocks of the memory plan (:mod:`rlsi.gpu.memory`): the rows of ``R = D W`` that can be
  non-zero (exact screening, :class:`rlsi.gpu.corpus.Screen`) by a sparse x dense product, their lasso by
  the blocked coordinate descent of :mod:`rlsi.gpu.cd` warm-started from the previous topics, written into
  sparse (CSR) or dense topics. R is never whole.
* V-step, by document blocks: ``Φ = X U`` (sparse x sparse with CSR topics, or sparse x dense), the ridge
  projection ``W = Φ (UᵀU + λ₂I)⁻¹`` with the K x K inverse by Cholesky in float64 on the host (the host
  path's :func:`rlsi.models.penalties.ridge_inverse`), and the statistics ``S = WᵀW`` (float64) and
  ``tr(Uᵀ D Vᵀ) = Σ Φ∘W`` of the objective.
* objective: Eq. (1) from the statistics (:meth:`rlsi.models.rlsi_policy.RLSIPolicy.objective`),
  ``‖D‖² − 2 tr(UᵀDVᵀ) + Σ (UᵀU)∘S + λ₁P(U) + λ₂Q(V)``.

Every decision of the problem — the topic representation and its switch, the V-step's dense copy, the U-step's
sweep and work caps, Eq. (1) from the statistics, which term rows the screening skips — is the host path's
:mod:`rlsi.models.rlsi_policy` (:class:`~rlsi.models.rlsi_policy.RLSIPolicy`,
:class:`~rlsi.models.rlsi_policy.ScreeningBounds`, the estimator's tuning); this module only places the
blocks on the card. So the device fit follows the host fit's iterates to rounding (up to the host kernel's
support solves in uncapped U-steps, see :mod:`rlsi.gpu.cd`).
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from ..errors import RLSIError
from ..kernels.convert import dense_to_csr
from ..models.rlsi_policy import TUNING, RLSIPolicy
from ..models.penalties import penalty as get_penalty
from .cd import BLOCK, solve_penalty
from .corpus import RowBlocks, Screen, on_card, spans, take_rows
from .memory import DOC_ROWS, TERM_ROWS, plan_for

log = logging.getLogger(__name__)

#: Topic representations (``topics=``: the policy's) and Φ products (``phi=``) of the device problem.
TOPICS = {"auto": "sparse, dense above the tuning's dense_above non-zero weights", "sparse": "CSR",
          "dense": "M x K"}
PHI = {"auto": "X U sparse x sparse, or with a dense copy of U when the policy asks for one (v_dense_copy)",
       "sparse": "X U as sparse x sparse (CSR topics)", "dense": "X times a dense copy of U"}


def gram_blocks(be, W, rows=DOC_ROWS):
    """``WᵀW`` (K x K, float64, host) of a device array, accumulated in float64 over row blocks."""
    xp = be.xp
    K = W.shape[1]
    out = xp.zeros((K, K), dtype=np.float64)
    for a, b in spans(W.shape[0], rows):
        Wb = W[a:b].astype(np.float64)
        out += Wb.T @ Wb
    return np.asarray(be.to_host(out))


def topic_gram(be, U):
    """``UᵀU`` (K x K, float64, host) of device topics, CSR or dense."""
    if be.sparse.issparse(U):
        G = (U.T @ U).toarray()
        return np.asarray(be.to_host(G), dtype=np.float64)
    return gram_blocks(be, U)


def penalty_value(be, pen, A):
    """P(A) in float64 for a device array or CSR matrix (``Penalty.value`` of the host path)."""
    xp = be.xp
    data = A.data if be.sparse.issparse(A) else A
    if pen.norm == "l1":
        return float(xp.abs(data).sum(dtype=np.float64))
    return float(xp.square(data.astype(np.float64)).sum())


def project(be, blocks, U, pen, lam, *, W_prev=None, max_iter=100, tol=1e-4, phi_dense=None, out=None,
            stats=False):
    """The V-step / folding-in over document blocks: ``W = argmin ‖x − U w‖² + λ Q(w)`` for every row.

    blocks : RowBlocks of X; U : device topics (CSR or dense); phi_dense : a dense copy of CSR topics to use
    for Φ (or None: U itself); out : device (N x K) array to write W into (may be ``W_prev``: each block's old
    rows are read before they are overwritten). With ``stats``: also returns (G, cross, S, max drift², max
    norm²) for the objective and the screening. Returns W (and the statistics).
    """
    xp = be.xp
    K = U.shape[1]
    G = topic_gram(be, U)
    prepared = pen.prepare(G, lam)
    Uv = U if phi_dense is None else phi_dense
    N = blocks.shape[0]
    W = xp.empty((N, K), dtype=be.dtype) if out is None else out
    cross = 0.0
    S = xp.zeros((K, K), dtype=np.float64) if stats else None
    drift = xp.zeros(K, dtype=np.float64) if stats else None
    norms = xp.zeros(K, dtype=np.float64) if stats else None
    for a, b, Xb in blocks:
        Phi = Xb @ Uv
        if be.sparse.issparse(Phi):
            Phi = Phi.toarray()
        Phi = xp.asarray(Phi, dtype=be.dtype)
        W0 = None if W_prev is None or not pen.warm_start else W_prev[a:b]
        Wb, _ = solve_penalty(be, pen, prepared, Phi, W0, lam, max_iter=max_iter, tol=tol)
        Wb = xp.asarray(Wb, dtype=be.dtype)
        if stats:
            cross += float(xp.sum(Phi.astype(np.float64) * Wb, dtype=np.float64))
            W64 = Wb.astype(np.float64)
            S += W64.T @ W64
            norms += xp.sum(W64 * W64, axis=0)
            if W_prev is not None:
                d = W64 - W_prev[a:b]
                drift += xp.sum(d * d, axis=0)
        W[a:b] = Wb
    if not stats:
        return W
    S = np.asarray(be.to_host(S))
    return W, G, cross, S, float(drift.max()) if K else 0.0, float(norms.max()) if K else 0.0


class _NoScreen:
    rows_skipped = 0
    total_skipped = 0

    def finish(self):
        pass


NO_SCREEN = _NoScreen()


class DeviceRLSIProblem:
    """Batch RLSI with its arrays on backend ``be`` (see the module docstring).

    X : CSR (N x M) on the host, or a CuPy CSR already on the card; W : (N x K) initial document vectors
    (BatchRLSI's initialisation; host or device).
    screen : exact zero-row screening of ℓ1 U-steps (None: the tuning's); topics, phi : see :data:`TOPICS`,
    :data:`PHI`; tuning : the estimator's :class:`rlsi.models.rlsi_policy.RLSITuning`;
    budget : device bytes the plan may use (None: 90 % of the free memory on a card, unlimited on numpy);
    stream : stream the corpus from host memory (None: when it does not fit); term_rows, doc_rows : blocks
    (``term_rows`` also bounds the rows of one coordinate-descent solve); block, kernel : of
    :func:`rlsi.gpu.cd.solve_rows`.
    """

    def __init__(self, be, X, W, *, topic_penalty="l1", doc_penalty="l2", lambda1, lambda2, inner_max_iter=100,
                 inner_tol=1e-4, topic_sweeps=None, screen=None, topics="auto", phi="auto", budget=None,
                 stream=None, term_rows=TERM_ROWS, doc_rows=DOC_ROWS, block=BLOCK, kernel=None, tuning=TUNING):
        if topics not in TOPICS or phi not in PHI:
            raise RLSIError(f"topics={topics!r} / phi={phi!r}: choose topics from {sorted(TOPICS)} and phi from "
                            f"{sorted(PHI)}")
        card = on_card(be, X)
        X = (X.tocsr() if X.dtype == be.dtype else X.tocsr().astype(be.dtype)) if card else sp.csr_matrix(X)
        N, M = X.shape
        K = W.shape[1]
        self.be = be
        self.topic_pen = get_penalty(topic_penalty, param="topic_penalty")
        self.doc_pen = get_penalty(doc_penalty, param="doc_penalty")
        self.topic_penalty, self.doc_penalty = topic_penalty, doc_penalty
        self.lambda1, self.lambda2 = float(lambda1), float(lambda2)
        self.inner_max_iter, self.inner_tol, self.topic_sweeps = inner_max_iter, inner_tol, topic_sweeps
        self.topics, self.phi, self.block, self.kernel = topics, phi, block, kernel
        self.plan = plan_for(be, N, M, X.nnz, K, budget=budget, stream=stream, term_rows=term_rows,
                             doc_rows=doc_rows, dense_topics=topics == "dense")
        if card and self.plan.streamed:
            raise RLSIError(f"the corpus is on the card and the fit needs about {self.plan.describe()} beside it: "
                            f"pass it as a host (scipy) matrix to stream it from host memory")
        D = X.T.tocsr()
        self.D = RowBlocks(be, D, self.plan.term_rows, streamed=self.plan.streamed)
        self.X = RowBlocks(be, X, self.plan.doc_rows, streamed=self.plan.streamed)
        self.n_terms, self.n_components = M, K
        xp = be.xp
        self.x_sqnorm = (float(xp.square(X.data.astype(np.float64)).sum()) if card
                         else float(np.square(X.data, dtype=np.float64).sum()))
        self.x_nnz = int(X.nnz)
        self.df = np.diff(np.asarray(be.to_host(D.indptr))).astype(np.float64)  # host: the policy's statistics
        self.Wd = be.xp.array(W, dtype=be.dtype)  # a copy: the V-step writes into it
        self.S = gram_blocks(be, self.Wd)
        self.card = card
        self.out_dtype = X.dtype
        self.G = None
        self.cross = 0.0
        self.U = None
        self.live = None
        self.policy = RLSIPolicy(topics, M, K, be.dtype.itemsize, self.topic_pen.norm, inner_max_iter=inner_max_iter,
                                 inner_tol=inner_tol, topic_sweeps=topic_sweeps, tuning=tuning)
        screen = tuning.screen if screen is None else screen
        self.screen = Screen(be, D, self.lambda1 / 2.0) if screen and self.topic_pen.norm == "l1" else None

    @property
    def used(self):
        """The representation of each U-step (the policy's record)."""
        return self.policy.used

    def set_lambda1(self, lam):
        """Go on with λ₁ = ``lam`` (the λ₁ search's last problem): the state stays valid (the screening bounds
        bound ``|r̂|``, which does not depend on λ₁); the fit's diagnostics count from here."""
        self.lambda1 = float(lam)
        if self.screen is not None:
            self.screen.half_lam = self.lambda1 / 2.0
            self.screen.finish()
            self.screen.total_skipped = 0
        self.policy.used.clear()

    # ------------------------------------------------------------------ U-step
    def _warm_rows(self, rows):
        """The previous topics' rows ``rows`` (device ints) as a dense (len x K) array, or None (cold)."""
        if self.U is None:
            return None
        if self.be.sparse.issparse(self.U):
            return self.U[rows].toarray() if int(rows.shape[0]) else self.be.xp.zeros((0, self.n_components),
                                                                                     dtype=self.be.dtype)
        return self.U[rows]

    def u_step(self, executor=None):
        """Solve the term rows block by block; returns diagnostics (nnz, sweeps, rows screened, dense)."""
        be, xp = self.be, self.be.xp
        M, K = self.n_terms, self.n_components
        dense = self.policy.begin_u_step()
        caps = self.policy.topic_settings(warm=self.U is not None)
        max_iter, max_work = caps.max_iter, caps.max_work
        prepared = self.topic_pen.prepare(self.S, self.lambda1)
        if self.screen is not None:
            self.screen.set_state(float(np.max(np.diag(self.S), initial=0.0)))
        U_new = None
        if dense:  # solved rows are written in place: every row not solved is zero before and after
            U_new = self.U if self.U is not None and not be.sparse.issparse(self.U) else xp.zeros((M, K), be.dtype)
        parts = []
        live_new = xp.zeros(M, dtype=bool)
        sweeps = 0
        pending, n_pending = [], 0  # rows of R gathered over term blocks: one solve per ``term_rows`` rows

        def solve(pending):
            nonlocal sweeps
            rows = pending[0][0] if len(pending) == 1 else xp.concatenate([p[0] for p in pending])
            Rb = pending[0][1] if len(pending) == 1 else xp.concatenate([p[1] for p in pending])
            Ub, sw = solve_penalty(be, self.topic_pen, prepared, Rb, self._warm_rows(rows), self.lambda1,
                                   max_iter=max_iter, tol=self.inner_tol, max_work=max_work, block=self.block,
                                   kernel=self.kernel)
            sweeps += 0 if sw is None else int(sw.sum())
            live_new[rows] = xp.any(Ub != 0, axis=1)
            if dense:
                U_new[rows] = Ub
            else:
                r, c = xp.nonzero(Ub)
                parts.append((rows[r], c, Ub[r, c]))

        for a, b, Db in self.D:
            live = self.live[a:b] if self.live is not None else xp.zeros(b - a, dtype=bool)
            if self.screen is not None:
                rows = xp.flatnonzero(self.screen.need(a, b, live))
            else:
                rows = xp.arange(b - a)
            if int(rows.shape[0]) == 0:  # every row of the block certified zero
                self.screen.rows_skipped += b - a
                continue
            Rb = xp.asarray(take_rows(be, Db, rows) @ self.Wd, dtype=be.dtype)
            if self.screen is not None:
                self.screen.store(a + rows, xp.abs(Rb).max(axis=1), b - a)
            if n_pending + int(rows.shape[0]) > self.plan.term_rows and pending:
                solve(pending)
                pending, n_pending = [], 0
            pending.append((a + rows, Rb))
            n_pending += int(rows.shape[0])
        if pending:
            solve(pending)
        if dense:
            self.U = U_new
            nnz = int(xp.count_nonzero(U_new))
        else:
            self.U = self._csr(parts)
            nnz = int(self.U.nnz)
        self.live = live_new
        diag = {"nnz": nnz, "sweeps": sweeps, "dense": dense,
                "screened": self.screen.rows_skipped if self.screen is not None else 0}
        if self.policy.after_u_step(nnz):  # converted at once: the V-step runs on the new representation
            if self.policy.dense:
                self.U = self.U.toarray()
            else:
                self.U = be.sparse.csr_matrix(self.U)
                self.U.eliminate_zeros()
        return diag

    def _csr(self, parts):
        be, xp = self.be, self.be.xp
        M, K = self.n_terms, self.n_components
        if not parts:
            return be.sparse.csr_matrix((M, K), dtype=be.dtype)
        rows = xp.concatenate([p[0] for p in parts])
        cols = xp.concatenate([p[1] for p in parts])
        vals = xp.concatenate([p[2] for p in parts]).astype(be.dtype)
        return be.sparse.coo_matrix((vals, (rows, cols)), shape=(M, K)).tocsr()

    # ------------------------------------------------------------------ V-step
    def v_step_topics(self):
        """A dense copy of CSR topics for Φ when ``phi`` or the policy asks for one, else None."""
        U = self.U
        if not self.be.sparse.issparse(U) or self.phi == "sparse":
            return None
        if self.phi == "dense":
            return U.toarray()
        row_nnz = np.diff(np.asarray(self.be.to_host(U.indptr)))
        return U.toarray() if self.policy.v_dense_copy(self.df, row_nnz, self.x_nnz) else None

    def v_step(self, executor=None):
        """Project the documents on the new topics; S = WᵀW and tr(Uᵀ D Vᵀ) for the objective."""
        W, self.G, self.cross, self.S, drift, norm = project(
            self.be, self.X, self.U, self.doc_pen, self.lambda2, W_prev=self.Wd, max_iter=self.inner_max_iter,
            tol=self.inner_tol, phi_dense=self.v_step_topics(), out=self.Wd, stats=True)
        self.Wd = W
        if self.screen is not None:
            self.screen.advance(drift, norm)
        return {}

    # ------------------------------------------------------------------ objective, results
    def objective(self):
        """Eq. (1) of the current U and W from the statistics (the policy's formula)."""
        return RLSIPolicy.objective(self.x_sqnorm, self.cross, self.G, self.S, self.lambda1,
                                    penalty_value(self.be, self.topic_pen, self.U), self.lambda2,
                                    penalty_value(self.be, self.doc_pen, self.Wd))

    def components(self, dtype):
        """The topics as ``components_``: host CSR (K x M) of ``dtype``."""
        U = self.be.to_host(self.U)
        if sp.issparse(U):
            C = sp.csr_matrix(U).T.tocsr().astype(dtype)
            C.eliminate_zeros()
            return C
        return dense_to_csr(np.ascontiguousarray(np.asarray(U).T, dtype=dtype))

    def doc_vectors(self, dtype):
        """W (N x K) on the host in ``dtype``."""
        return np.asarray(self.be.to_host(self.Wd)).astype(dtype, copy=False)

    @property
    def W(self):
        """The document vectors as the fit returns them: a CuPy array for a corpus on the card, else a host
        copy in X's dtype (the device array is ``Wd``)."""
        return self.Wd if self.card else self.doc_vectors(self.out_dtype)

    @property
    def r_rows(self):
        """The screening's counters as the skeleton reads them (``finish()``, ``total_skipped``)."""
        return self.screen if self.screen is not None else NO_SCREEN

    @property
    def total_skipped(self):
        self.r_rows.finish()
        return self.r_rows.total_skipped


def fold_in(be, X, components, *, penalty="l2", lam=1.0, max_iter=100, tol=1e-4, doc_rows=DOC_ROWS):
    """``transform`` on the device: topic vectors of the rows of host CSR X for host topics (K x M CSR);
    returns a host (n x K) array of X's dtype."""
    X = sp.csr_matrix(X)
    U = be.csr(sp.csr_matrix(components).T.tocsr())
    blocks = RowBlocks(be, X, doc_rows)
    W = project(be, blocks, U, get_penalty(penalty, param="doc_penalty"), lam, max_iter=max_iter, tol=tol)
    return np.asarray(be.to_host(W)).astype(X.dtype, copy=False)
