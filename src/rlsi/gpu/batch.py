"""Batch RLSI on the device: the RLSI problem's steps with its arrays on the card (a placement).

:class:`DeviceRLSIProblem` is the problem object of :func:`rlsi.models.driver.alternate` (``u_step``,
``v_step``, ``objective``, ``components``), like :class:`rlsi.models.batch.RLSIProblem` on the host: the
skeleton (validation, initialisation, the stop rule, the fitted attributes) is the estimator's, only the
steps run here. Per iteration:

* U-step, by term blocks of the memory plan (:mod:`rlsi.gpu.memory`): the rows of ``R = D W`` that can be
  non-zero (exact screening, :class:`rlsi.gpu.corpus.Screen`) by a sparse x dense product (W column-major on
  a card: cuSPARSE's SpMM reads it without a copy), their lasso by the blocked coordinate descent of
  :mod:`rlsi.gpu.cd` warm-started from the previous topics, written into int32 CSR topics
  (:class:`rlsi.gpu.topics.CSRBuilder`, with its non-zero budget) or dense ones. R is never whole.
* V-step, by document blocks: ``Φ = X U`` by SpMM with dense column blocks of U (:class:`rlsi.gpu.topics.Columns`;
  no SpGEMM), the ridge projection ``W = Φ (UᵀU + λ₂I)⁻¹`` with ``UᵀU`` from dense row blocks of U and the
  K x K inverse by Cholesky in float64 on the host (the host path's :func:`rlsi.models.penalties.ridge_inverse`),
  and the statistics of the objective in float64: ``S = WᵀW`` (whose trace is ``Q(W)`` of ℓ2 documents),
  ``tr(Uᵀ D Vᵀ) = Σ Φ∘W``, the column drift for the screening (and ``Σ|W|`` for ℓ1 documents).
* objective: Eq. (1) from the statistics (:meth:`rlsi.models.rlsi_policy.RLSIPolicy.objective`),
  ``‖D‖² − 2 tr(UᵀDVᵀ) + Σ (UᵀU)∘S + λ₁P(U) + λ₂Q(V)``: no pass over W, no float64 copy of it.

Every decision of the problem — the topic representation and its switch, the U-step's sweep and work caps,
Eq. (1) from the statistics, which term rows the screening skips — is the host path's
:mod:`rlsi.models.rlsi_policy` (:class:`~rlsi.models.rlsi_policy.RLSIPolicy`,
:class:`~rlsi.models.rlsi_policy.ScreeningBounds`, the estimator's tuning); this module only places the
blocks on the card and chooses the products (``phi``), whose memory the plan counts. So the device fit
follows the host fit's iterates to rounding (up to the host kernel's support solves in uncapped U-steps, see
:mod:`rlsi.gpu.cd`).
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from ..errors import RLSIError
from ..kernels.convert import dense_to_csr
from ..models.rlsi_policy import TUNING, RLSIPolicy
from ..models.penalties import penalty as get_penalty
from .cd import BLOCK, rows_f, solve_penalty
from .corpus import RowBlocks, Screen, on_card, sq_norm, take_rows
from .memory import DOC_ROWS, PHI_BYTES, TERM_ROWS, plan, plan_for, topic_nnz_budget
from .topics import Columns, CSRBuilder, column_width, dense_rows, gram, penalty_sum

log = logging.getLogger(__name__)

#: Topic representations (``topics=``: the policy's) and Φ products (``phi=``) of the device problem.
TOPICS = {"auto": "sparse, dense above the tuning's dense_above non-zero weights", "sparse": "CSR",
          "dense": "M x K"}
PHI = {"auto": "SpMM of X with dense column blocks of CSR topics (``phi_cols`` columns at a time)",
       "sparse": "X U as sparse x sparse (cuSPARSE SpGEMM: its work buffers are in no plan; for measurement)",
       "dense": "SpMM of X with a dense copy of CSR topics (M x K, in the plan)"}


def gram_blocks(be, W, rows=DOC_ROWS):
    """``WᵀW`` (K x K, float64, host) of a device array, accumulated in float64 over row blocks."""
    return gram(be, W, rows)


class PhiProduct:
    """``Φ = X_b U`` for the document blocks of a V-step (``phi``: a name of :data:`PHI`; dense topics are
    read as they are). ``width``: columns per dense block of CSR topics (None: :data:`rlsi.gpu.memory.PHI_BYTES`
    worth)."""

    def __init__(self, be, U, phi="auto", width=None):
        self.be = be
        self.U = U
        self.columns = self.dense = None
        if not be.sparse.issparse(U):
            self.dense = U
        elif phi == "dense":
            self.dense = dense_rows(be, U, 0, U.shape[0], order=be.layout)
        elif phi != "sparse":
            M, K = U.shape
            self.columns = Columns(be, U, width or column_width(M, K, be.dtype.itemsize, PHI_BYTES))

    def __call__(self, Xb):
        be, xp = self.be, self.be.xp
        if self.columns is not None:
            return self.columns.product(Xb)
        if self.dense is not None:
            return xp.asarray(Xb @ self.dense, dtype=be.dtype)
        return xp.asarray((Xb @ self.U).toarray(), dtype=be.dtype)


def project(be, blocks, U, pen, lam, *, W_prev=None, max_iter=100, tol=1e-4, phi="auto", phi_cols=None, out=None,
            stats=False, rows=TERM_ROWS):
    """The V-step / folding-in over document blocks: ``W = argmin ‖x − U w‖² + λ Q(w)`` for every row.

    blocks : RowBlocks of X; U : device topics (CSR or dense); phi, phi_cols : the product :class:`PhiProduct`;
    out : device (N x K) array to write W into (may be ``W_prev``: each block's old rows are read before they
    are overwritten); rows : rows per dense block of U for ``UᵀU``. With ``stats``: also returns a dict of
    float64 statistics: G = UᵀU, cross = Σ Φ∘W, S = WᵀW (host), drift (max column drift², with ``W_prev``),
    abs_sum = Σ|W| (ℓ1 documents). Returns W (and the statistics).
    """
    xp = be.xp
    K = U.shape[1]
    G = gram(be, U, rows)
    prepared = pen.prepare(G, lam)
    product = PhiProduct(be, U, phi, phi_cols)
    N = blocks.shape[0]
    W = xp.empty((N, K), dtype=be.dtype, order=be.layout) if out is None else out
    cross = abs_sum = 0.0
    S = xp.zeros((K, K), dtype=np.float64) if stats else None
    drift = xp.zeros(K, dtype=np.float64) if stats else None
    for a, b, Xb in blocks:
        Phi = product(Xb)
        W0 = None if W_prev is None or not pen.warm_start else W_prev[a:b]
        Wb, _ = solve_penalty(be, pen, prepared, Phi, W0, lam, max_iter=max_iter, tol=tol)
        Wb = xp.asarray(Wb, dtype=be.dtype)
        if stats:  # one float64 copy of the block, its product with Φ, then the drift in place
            W64 = Wb.astype(np.float64)
            cross += float(xp.sum(W64 * Phi))
            S += W64.T @ W64
            if pen.norm == "l1":
                abs_sum += float(xp.abs(Wb).sum(dtype=np.float64))
            if W_prev is not None:
                W64 -= W_prev[a:b]
                xp.square(W64, out=W64)
                drift += W64.sum(axis=0)
            W64 = None
        Phi = None
        W[a:b] = Wb
    if not stats:
        return W
    S = np.asarray(be.to_host(S))
    return W, {"G": G, "cross": cross, "S": S, "abs_sum": abs_sum,
               "drift": float(drift.max()) if K else 0.0, "norm": float(np.max(np.diag(S), initial=0.0))}


def doc_penalty_value(pen, S, abs_sum):
    """``Q(W)`` from the V-step's statistics: ``tr(WᵀW)`` (ℓ2) or ``Σ|W|`` (ℓ1)."""
    return float(np.trace(S)) if pen.norm == "l2" else float(abs_sum)


class DeviceRLSIProblem:
    """Batch RLSI with its arrays on backend ``be`` (see the module docstring).

    X : CSR (N x M) on the host, or a CuPy CSR already on the card; W : (N x K) initial document vectors
    (BatchRLSI's initialisation; host or device).
    screen : exact zero-row screening of ℓ1 U-steps (None: the tuning's); topics, phi : see :data:`TOPICS`,
    :data:`PHI`; phi_cols : columns of U per dense block of Φ (None: :data:`rlsi.gpu.memory.PHI_BYTES` worth);
    tuning : the estimator's :class:`rlsi.models.rlsi_policy.RLSITuning`;
    budget : device bytes the plan may use (None: 90 % of the free memory on a card, unlimited on numpy);
    max_topic_nnz : the most non-zero topic weights (None: what the budget leaves for U, at most 2³¹ − 1);
    stream : stream the corpus from host memory (None: when it does not fit); term_rows, doc_rows : blocks
    (``term_rows`` also bounds the rows of one coordinate-descent solve); block, kernel : of
    :func:`rlsi.gpu.cd.solve_rows`.
    """

    def __init__(self, be, X, W, *, topic_penalty="l1", doc_penalty="l2", lambda1, lambda2, inner_max_iter=100,
                 inner_tol=1e-4, topic_sweeps=None, screen=None, topics="auto", phi="auto", phi_cols=None,
                 budget=None, max_topic_nnz=None, stream=None, term_rows=TERM_ROWS, doc_rows=DOC_ROWS, block=BLOCK,
                 kernel=None, tuning=TUNING, seeds=None):
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
        self.topics, self.phi, self.phi_cols, self.block, self.kernel = topics, phi, phi_cols, block, kernel
        self.policy = RLSIPolicy(topics, M, K, be.dtype.itemsize, self.topic_pen.norm, inner_max_iter=inner_max_iter,
                                 inner_tol=inner_tol, topic_sweeps=topic_sweeps, tuning=tuning)
        D = X.T.tocsr()
        df = np.diff(np.asarray(be.to_host(D.indptr))).astype(np.int64)  # host: the policy's statistics
        switch = topics == "auto" and self.policy.dense_fits  # "auto" may turn to dense topics, and back
        self._plan_kw = dict(term_rows=term_rows, doc_rows=doc_rows, dense_topics=topics == "dense" or switch,
                             switch_density=tuning.dense_above if switch else None, card=card, phi=phi,
                             phi_cols=phi_cols, block=block, doc_l1=self.doc_pen.norm == "l1", term_nnz=df,
                             doc_nnz=np.diff(np.asarray(be.to_host(X.indptr))))
        self.plan = plan_for(be, N, M, X.nnz, K, budget=budget, stream=stream, **self._plan_kw)
        if card and self.plan.streamed:
            raise RLSIError(f"the corpus is on the card and the fit needs about {self.plan.describe()} beside it: "
                            f"pass it as a host (scipy) matrix to stream it from host memory")
        self.max_topic_nnz = topic_nnz_budget(self.plan, self.plan.budget, max_topic_nnz)
        self.D = RowBlocks(be, D, self.plan.term_rows, streamed=self.plan.streamed)
        self.X = RowBlocks(be, X, self.plan.doc_rows, streamed=self.plan.streamed)
        self.n_terms, self.n_components = M, K
        self.x_sqnorm = sq_norm(be, X)
        self.x_nnz = int(X.nnz)
        self.df = df.astype(np.float64)
        self.Wd = be.xp.array(W, dtype=be.dtype, order=be.layout)  # a copy: the V-step writes into it
        self.S = gram_blocks(be, self.Wd, self.plan.doc_rows)
        self.q_w = penalty_sum(be, self.doc_pen.norm, self.Wd, self.plan.doc_rows)
        self.card = card
        self.out_dtype = X.dtype
        self.G = None
        self.cross = 0.0
        self.U = None
        self.live = None
        screen = tuning.screen if screen is None else screen
        self.screen = Screen(be, D, self.lambda1 / 2.0) if screen and self.topic_pen.norm == "l1" else None
        # seed words (rlsi.models.seeds): their rows of D, whose rows of R are solved on the host after each U-step
        self.seeds = seeds
        self._seed_D = None if seeds is None else D[be.xp.asarray(seeds.rows)]

    def plan_at(self, topic_density):
        """This fit's memory plan (placement and blocks as chosen) for topics of ``topic_density``: what the
        arrays take once the topics have that share of non-zero weights (the device script compares it with
        the memory measured)."""
        p = self.plan
        return plan(p.n_docs, p.n_terms, p.nnz, p.n_components, dtype=self.be.dtype, topic_density=topic_density,
                    stream=p.streamed, **self._plan_kw)

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
        """The previous topics' rows ``rows`` (device ints, increasing) as a column-major (len x K) array the
        solve may write into, or None (cold)."""
        be, U = self.be, self.U
        if U is None:
            return None
        if be.sparse.issparse(U):
            n = int(rows.shape[0])
            return dense_rows(be, U[rows], 0, n, order="F") if n else be.xp.zeros((0, self.n_components),
                                                                                  dtype=be.dtype, order="F")
        return rows_f(be.xp, U, rows)

    def u_step(self, executor=None):
        """Solve the term rows block by block; returns diagnostics (nnz, sweeps, rows screened, dense)."""
        be, xp = self.be, self.be.xp
        M, K = self.n_terms, self.n_components
        dense = self.policy.begin_u_step()
        caps = self.policy.topic_settings(warm=self.U is not None)
        prepared = self.topic_pen.prepare(self.S, self.lambda1)
        if self.screen is not None:
            self.screen.set_state(float(np.max(np.diag(self.S), initial=0.0)))
        if dense:  # solved rows are written in place: every row not solved is zero before and after
            out = (self.U if self.U is not None and not be.sparse.issparse(self.U)
                   else xp.zeros((M, K), dtype=be.dtype, order=be.layout))
        else:
            out = CSRBuilder(be, (M, K), max_nnz=self.max_topic_nnz)
        live_new = xp.zeros(M, dtype=bool)
        sweeps = 0
        seeds_prev = None if self.seeds is None or self.U is None else self._seed_rows()
        pending, n_pending = [], 0  # rows of R formed over term blocks: one solve per ``term_rows`` rows

        def solve():
            nonlocal sweeps, n_pending
            rows = pending[0][0] if len(pending) == 1 else xp.concatenate([p[0] for p in pending])
            R = pending[0][1] if len(pending) == 1 else xp.concatenate([p[1] for p in pending])
            pending.clear()
            n_pending = 0
            Ub, sw = solve_penalty(be, self.topic_pen, prepared, R, self._warm_rows(rows), self.lambda1,
                                   max_iter=caps.max_iter, tol=self.inner_tol, max_work=caps.max_work,
                                   block=self.block, kernel=self.kernel, own_u0=True)
            R = None
            sweeps += 0 if sw is None else int(sw.sum())
            live_new[rows] = xp.any(Ub != 0, axis=1)
            if dense:
                out[rows] = Ub
            else:
                out.add(rows, Ub)

        for a, b, Db in self.D:
            live = self.live[a:b] if self.live is not None else xp.zeros(b - a, dtype=bool)
            rows = xp.flatnonzero(self.screen.need(a, b, live)) if self.screen is not None else xp.arange(b - a)
            r = int(rows.shape[0])
            if r == 0:  # every row of the block certified zero
                self.screen.rows_skipped += b - a
                continue
            if pending and n_pending + r > self.plan.term_rows:
                solve()  # before this block's rows are formed: one solve's rows of R at a time
            pending.append((a + rows, xp.asarray(take_rows(be, Db, rows) @ self.Wd, dtype=be.dtype)))
            n_pending += r
            if self.screen is not None:
                self.screen.store(a + rows, xp.abs(pending[-1][1]).max(axis=1), b - a)
        if pending:
            solve()
        if dense:
            self.U = out
        else:
            self.U = None  # the old topics' memory first: the new ones are assembled from their parts
            self.U = out.finish()
        if self.seeds is not None:
            self._solve_seeds(seeds_prev, caps, live_new)
        nnz = int(xp.count_nonzero(self.U)) if dense else int(self.U.nnz)
        self.live = live_new
        diag = {"nnz": nnz, "sweeps": sweeps, "dense": dense,
                "screened": self.screen.rows_skipped if self.screen is not None else 0}
        if self.policy.after_u_step(nnz):  # converted at once: the V-step runs on the new representation
            if self.policy.dense:
                self.U = dense_rows(be, self.U, 0, M, order=be.layout)
            else:
                builder = CSRBuilder(be, (M, K), max_nnz=self.max_topic_nnz)
                builder.add(xp.arange(M), self.U)
                self.U = builder.finish()
        return diag

    def _seed_rows(self):
        """The seeded rows of U (host, float64)."""
        rows = self.be.xp.asarray(self.seeds.rows)
        part = self.U[rows]
        part = part.toarray() if self.be.sparse.issparse(part) else part
        return np.asarray(self.be.to_host(part), dtype=np.float64)

    def _solve_seeds(self, prev, caps, live):
        """The seeded rows solved with their weights on the host (:meth:`rlsi.models.seeds.SeedTerms.solve`) and
        put back into U."""
        be = self.be
        R = np.asarray(be.to_host(self._seed_D @ self.Wd), dtype=np.float64)
        S = np.asarray(be.to_host(self.S), dtype=np.float64)
        values = self.seeds.solve(R, S, self.lambda1, prev, caps, positive=self.topic_pen.nonneg)
        rows = be.xp.asarray(self.seeds.rows)
        live[rows] = be.xp.asarray(np.any(values != 0, axis=1))
        if not be.sparse.issparse(self.U):
            self.U[rows] = be.xp.asarray(values, dtype=be.dtype)
            return
        self.U = be.csr(self.seeds.put_rows(sp.csr_matrix(be.to_host(self.U)), values))

    # ------------------------------------------------------------------ V-step
    def v_step(self, executor=None):
        """Project the documents on the new topics; S = WᵀW and tr(Uᵀ D Vᵀ) for the objective."""
        W, st = project(self.be, self.X, self.U, self.doc_pen, self.lambda2, W_prev=self.Wd,
                        max_iter=self.inner_max_iter, tol=self.inner_tol, phi=self.phi, phi_cols=self.phi_cols,
                        out=self.Wd, stats=True, rows=self.plan.term_rows)
        self.Wd, self.G, self.cross, self.S = W, st["G"], st["cross"], st["S"]
        self.q_w = doc_penalty_value(self.doc_pen, st["S"], st["abs_sum"])
        if self.screen is not None:
            self.screen.advance(st["drift"], st["norm"])
        return {}

    # ------------------------------------------------------------------ objective, results
    def objective(self):
        """Eq. (1) of the current U and W from the statistics (the policy's formula)."""
        topic_value = penalty_sum(self.be, self.topic_pen.norm, self.U, self.plan.term_rows)
        if self.seeds is not None:  # the weighted ℓ1 norm: lighter on the seeded pairs
            topic_value -= self.seeds.discount(self._seed_rows())
        return RLSIPolicy.objective(self.x_sqnorm, self.cross, self.G, self.S, self.lambda1, topic_value,
                                    self.lambda2, self.q_w)

    def components(self, dtype):
        """The topics as ``components_``: host CSR (K x M) of ``dtype``."""
        U = self.be.to_host(self.U)
        if sp.issparse(U):
            C = sp.csr_matrix(U).T.tocsr().astype(dtype)
            C.eliminate_zeros()
            return C
        return dense_to_csr(np.ascontiguousarray(np.asarray(U).T, dtype=dtype))

    def host_vectors(self, dtype):
        """W (N x K) on the host in ``dtype``."""
        return np.ascontiguousarray(np.asarray(self.be.to_host(self.Wd)), dtype=dtype)

    @property
    def W(self):
        """The document vectors as the fit returns them: a CuPy array for a corpus on the card, else a host
        copy in X's dtype (the device array is ``Wd``)."""
        return self.Wd if self.card else self.host_vectors(self.out_dtype)

    def doc_vectors(self):
        """The fit's document vectors (:attr:`W`)."""
        return self.W

    @property
    def total_skipped(self):
        """Term rows the screening skipped since the start (or since :meth:`set_lambda1`)."""
        if self.screen is None:
            return 0
        self.screen.finish()
        return self.screen.total_skipped

    def diagnostics(self):
        """What the fit reports (:class:`rlsi.models.placement.PlacedProblem`): the representation of each U-step,
        the rows screened and the memory plan (``device_plan_``)."""
        return {"used": list(self.used), "rows_screened": int(self.total_skipped),
                "attributes": {"device_plan_": self.plan}}

    @classmethod
    def of_spec(cls, be, X, W, lam, spec):
        """The problem of ``spec`` (:class:`rlsi.models.spec.RLSISpec`) at W with λ₁ = ``lam``, its ways of doing
        the work at their defaults."""
        return cls(be, X, W, topic_penalty=spec.topic_penalty, doc_penalty=spec.doc_penalty, lambda1=lam,
                   lambda2=spec.lambda2, inner_max_iter=spec.inner_max_iter, inner_tol=spec.inner_tol,
                   topic_sweeps=spec.topic_sweeps, topics=spec.topic_representation, tuning=spec.tuning,
                   seeds=spec.seeds)


def fold_in(be, X, components=None, *, topics=None, penalty="l2", lam=1.0, max_iter=100, tol=1e-4, doc_rows=DOC_ROWS):
    """``transform`` on the device: topic vectors of the rows of host CSR X for host topics (``components``, K x
    M CSR, or ``topics``, the same as M x K CSR); returns a host (n x K) array of X's dtype."""
    X = sp.csr_matrix(X)
    U = be.csr(sp.csr_matrix(components).T.tocsr() if topics is None else sp.csr_matrix(topics))
    blocks = RowBlocks(be, X, doc_rows)
    W = project(be, blocks, U, get_penalty(penalty, param="doc_penalty"), lam, max_iter=max_iter, tol=tol)
    return np.ascontiguousarray(np.asarray(be.to_host(W)), dtype=X.dtype)
