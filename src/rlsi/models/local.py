"""The local placement: batch and online RLSI in this process (numba threads; the executor's blocks).

:class:`RLSIProblem` is batch RLSI on local blocks; :class:`LocalCorpus` is the documents of one fit with the
primitives of the start (:mod:`rlsi.models.start`); :class:`LocalPlacement` (registered as ``"local"``) builds
them and the streams of online RLSI (:class:`rlsi.models.host_stream.HostStream` with the projection here).
The other placements (:mod:`rlsi.gpu`, :mod:`rlsi.distributed`) implement the same contract
(:mod:`rlsi.models.placement`) and reuse these where their data is on the host.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels.convert import csr_nbytes, csr_rows_to_dense, dense_to_csr
from . import steps
from .executor import get_executor
from .penalties import penalty as get_penalty
from .placement import Placement, register_placement
from .rlsi_policy import TUNING, RLSIPolicy
from .screening import BatchR, ScreenedBatchR
from .seeding import seed_topics
from .sparsity import rows_of_R
from .tasks import BlockScratch

__all__ = ["LocalCorpus", "LocalPlacement", "RLSIProblem", "topics_as_components"]


class RLSIProblem:
    """Batch RLSI on local blocks, as a problem for :func:`rlsi.models.driver.alternate`.

    State: X (N x M CSR), D = Xᵀ (M x N CSR), topics U (M x K, CSR or ndarray), document vectors W
    (N x K), S = WᵀW, G = UᵀU. ``u_step`` solves the term rows from ``R = D W`` block by block (skipping
    rows certified zero with ``tuning.screen``), ``v_step`` projects the documents and accumulates S and
    ``tr(Uᵀ D Vᵀ)``. Every decision (representation, dense copy, caps, objective, screening bounds) is the
    policy's (:mod:`rlsi.models.rlsi_policy`); this class places the blocks in this process.

    Representation. Sparse topics make ``Φ = X U`` a sparse × sparse product and keep memory at nnz(U);
    once most weights are non-zero the CSR bookkeeping costs more than it saves, and a dense U turns
    ``Φ`` and ``G`` into streaming/BLAS products. Both give the same solution: the solvers and the order of
    every sum are the same, except ``G = UᵀU`` (sparse product vs BLAS, equal to rounding).
    """

    def __init__(self, X, W, U, *, topic_penalty, doc_penalty, lambda1, lambda2, inner_max_iter, inner_tol,
                 representation="auto", topic_sweeps=None, D=None, tuning=TUNING, seeds=None):
        self.X = X
        # terms x documents: rows of R = D W are independent lasso problems. ``D``: Xᵀ as CSR when the caller
        # has it already (the λ₁ search's problems and the fit share one copy: GBs at web scale)
        self.D = X.T.tocsr() if D is None else D
        self._df = np.diff(self.D.indptr).astype(np.float64)  # document frequency of each term
        self.W, self.U = W, U
        self.S = steps.gram(W)
        self.G = None
        self.topic_penalty, self.doc_penalty = topic_penalty, doc_penalty
        self.lambda1, self.lambda2 = lambda1, lambda2
        self.inner_max_iter, self.inner_tol = inner_max_iter, inner_tol
        self.x_sqnorm = float(np.square(X.data, dtype=np.float64).sum())
        topic_norm = get_penalty(topic_penalty).norm
        self.policy = RLSIPolicy(representation, self.D.shape[0], W.shape[1], X.dtype.itemsize, topic_norm,
                                 inner_max_iter=inner_max_iter, inner_tol=inner_tol, topic_sweeps=topic_sweeps,
                                 tuning=tuning)
        self._plain_r_rows = BatchR(self.D)
        # reused dense row blocks (R, warm starts, Φ) for the whole fit: see tasks.BlockScratch
        self.scratch = BlockScratch()
        self.r_rows = (ScreenedBatchR(self.D, lambda1 / 2.0, scratch=self.scratch)
                       if self.screens(topic_norm, tuning) else self._plain_r_rows)
        self.block_entries, self.min_block_rows = tuning.block_entries, tuning.min_block_rows
        self.cross = 0.0
        self.seeds = seeds  # seed words (rlsi.models.seeds): their rows solved with their weights after each U-step

    # What the problem allocates, as functions of the sizes (the memory estimate sums these;
    # rlsi.models.memory): each sits next to the allocation it counts.

    @staticmethod
    def screens(topic_norm, tuning):
        """Whether the U-step's rows of R are screened (:class:`ScreenedBatchR`)."""
        return tuning.screen and topic_norm == "l1"

    @staticmethod
    def transposed_nbytes(n_terms, nnz, itemsize, index_bytes=None):
        """Bytes of ``D = Xᵀ`` as CSR (M x N; ``X.T.tocsr()`` keeps X's value and index types)."""
        return csr_nbytes(n_terms, nnz, itemsize, index_bytes)

    @staticmethod
    def setup_nbytes(nnz):
        """Bytes of the setup's temporary: the float64 squares of X's entries for ``‖X‖²``."""
        return 8 * int(nnz)

    @staticmethod
    def per_term_nbytes(n_terms, screened):
        """Bytes held per term row: the document frequencies (float64) and, screened, the provider's row
        norms and bounds (:meth:`ScreenedBatchR.nbytes_for`)."""
        return 8 * int(n_terms) + (ScreenedBatchR.nbytes_for(n_terms) if screened else 0)

    @staticmethod
    def statistics_nbytes(n_components):
        """Bytes of the K x K statistics: S and G and the prepared penalties of both steps (up to two
        float64 K x K arrays each)."""
        return 6 * 8 * int(n_components) ** 2

    @property
    def used(self):
        """The representation of each U-step."""
        return self.policy.used

    def u_step(self, executor):
        """U-step: solve the term rows of ``R = D W`` block by block; returns diagnostics (nnz, sweeps,
        rows screened, representation)."""
        dense = self.policy.begin_u_step()
        # with dense topics almost no row has a zero solution: screening would only cost its bookkeeping
        # (a copy of W, the drift of W); its bounds are voided and rebuilt if the topics get sparse again
        r_rows = self.r_rows
        if dense and isinstance(r_rows, ScreenedBatchR):
            r_rows.invalidate()
            r_rows = self._plain_r_rows
        r_rows.set_state(self.W, self.U)
        step = get_penalty(self.topic_penalty, param="topic_penalty").prepared(self.S, self.lambda1)
        U_prev, settings = self.U, self.policy.topic_settings(warm=self.U is not None)
        self.U, sweeps = steps.update_topics(r_rows, step, U_prev, settings, n_terms=self.D.shape[0],
                                             executor=executor, dense=dense, block_entries=self.block_entries,
                                             min_block_rows=self.min_block_rows)
        if self.seeds is not None:
            self.U = self.seeds.step(self.U, rows_of_R(self.D, self.seeds.rows, self.W), self.S, self.lambda1,
                                     settings, U_prev, positive=step.penalty.nonneg)
        nnz = int(np.count_nonzero(self.U)) if dense else self.U.nnz
        diag = {"nnz": nnz, "sweeps": sweeps, "screened": r_rows.rows_skipped, "dense": dense}
        if self.policy.after_u_step(nnz):  # converted at once: the V-step runs on the new representation
            self.U = csr_rows_to_dense(self.U, 0, self.U.shape[0]) if self.policy.dense else dense_to_csr(self.U)
        return diag

    def v_step_topics(self):
        """The topics the V-step projects on: U itself, or the dense copy the policy asks for."""
        U = self.U
        if not sp.issparse(U) or not self.policy.v_dense_copy(self._df, np.diff(U.indptr), self.X.nnz):
            return U
        return csr_rows_to_dense(U, 0, U.shape[0])

    def v_step(self, executor):
        """V-step: project the documents on the new topics, accumulating ``S = WᵀW`` and ``tr(Uᵀ D Vᵀ)``."""
        U = self.v_step_topics()
        self.G = steps.topic_gram(U)
        W_old = self.W
        self.W, self.cross, self.S = steps.update_doc_vectors(
            self.X, U, penalty=self.doc_penalty, lam=self.lambda2, settings=self.policy.doc_settings(), W_prev=W_old,
            dtype=self.X.dtype, return_gram=True, executor=executor, G=self.G, scratch=self.scratch,
            block_entries=self.block_entries, min_block_rows=self.min_block_rows)
        if isinstance(self.r_rows, ScreenedBatchR):  # the drift of W for its bounds, while both W exist
            self.r_rows.advance(W_old, self.W)
        return {}

    def objective(self):
        """Eq. (1) of the current U and W (from the statistics of the V-step)."""
        topic_value = get_penalty(self.topic_penalty).value(self.U)
        if self.seeds is not None:  # the weighted ℓ1 norm: lighter on the seeded pairs
            topic_value -= self.seeds.discount(self.seeds.rows_of(self.U))
        return RLSIPolicy.objective(self.x_sqnorm, self.cross, self.G, self.S, self.lambda1, topic_value,
                                    self.lambda2, get_penalty(self.doc_penalty).value(self.W))

    def components(self, dtype):
        """The topics as ``components_`` (K x M CSR of ``dtype``), whatever the representation."""
        return topics_as_components(self.U, dtype)

    # ------------------------------------------------------------------ the rest of the placed problem's contract
    @classmethod
    def of_spec(cls, X, W, lam, spec, D=None):
        """The problem of ``spec`` (:class:`rlsi.models.spec.RLSISpec`) started at W with λ₁ = ``lam``."""
        return cls(X, W, None, topic_penalty=spec.topic_penalty, doc_penalty=spec.doc_penalty, lambda1=lam,
                   lambda2=spec.lambda2, inner_max_iter=spec.inner_max_iter, inner_tol=spec.inner_tol,
                   representation=spec.topic_representation, topic_sweeps=spec.topic_sweeps, D=D,
                   tuning=spec.tuning, seeds=spec.seeds)

    def warm_topics(self, U):
        """Start the first U-step from the topics ``U`` (M x K CSR; ``topic_init``) instead of zero: it runs
        ``topic_sweeps`` sweeps from them, as every later U-step (:mod:`rlsi.models.start`). They are held in the
        representation the policy starts in, in the dtype of the documents."""
        U = sp.csr_matrix(U, dtype=self.X.dtype)
        self.U = csr_rows_to_dense(U, 0, U.shape[0]) if self.policy.dense else U

    def set_lambda1(self, lam1):
        """Continue with λ₁ = ``lam1`` (the λ₁ search's last problem). The state stays valid: U and W are any
        point of the alternation, and the screening's bounds bound ``|r̂_mk|``, which does not depend on λ₁ (only
        the threshold λ₁/2 they are compared with does). The fit's diagnostics count from here."""
        self.lambda1 = lam1
        for r_rows in {id(self.r_rows): self.r_rows, id(self._plain_r_rows): self._plain_r_rows}.values():
            if hasattr(r_rows, "half_lam"):
                r_rows.half_lam = lam1 / 2.0
            if hasattr(r_rows, "finish"):
                r_rows.finish()
            r_rows.total_skipped = 0
        self.used.clear()

    def doc_vectors(self):
        """W (N x K), the fit's document vectors (this process's array)."""
        return self.W

    def diagnostics(self):
        """The representation of each U-step and the rows the screening skipped (the placement adds nothing)."""
        if hasattr(self.r_rows, "finish"):
            self.r_rows.finish()
        return {"used": list(self.used), "rows_screened": int(self.r_rows.total_skipped), "attributes": {}}


def topics_as_components(U, dtype):
    """Topics U (M x K, CSR or ndarray) as ``components_`` (K x M CSR of ``dtype``)."""
    if isinstance(U, np.ndarray):
        return dense_to_csr(np.ascontiguousarray(U.T, dtype=dtype))
    return U.T.tocsr().astype(dtype)


class LocalCorpus:
    """The documents of one batch RLSI fit in this process (a :class:`rlsi.models.placement.PlacedCorpus`): X
    (N x M CSR) and, made once for the λ₁ search and the fit, D = Xᵀ (GBs at web scale: one copy)."""

    def __init__(self, X, executor=None):
        self.X = X
        self.shape = X.shape
        self.dtype = X.dtype
        self.executor = executor
        self._D = None

    @property
    def D(self):
        if self._D is None:
            self._D = self.X.T.tocsr()
        return self._D

    def x_sqnorm(self):
        return np.square(self.X.data, dtype=np.float64).sum()

    def seed_topics(self, k, rng):
        return seed_topics(self.X, k, rng)

    def project(self, U, spec):
        # U₀ only seeds V₀; it is not a warm start for the lasso (a different problem): that starts at zero
        W, _ = steps.update_doc_vectors(self.X, U, penalty=spec.doc_penalty, lam=spec.lambda2,
                                        settings=spec.inner_settings(), dtype=self.X.dtype,
                                        block_entries=spec.tuning.block_entries,
                                        min_block_rows=spec.tuning.min_block_rows)
        return W

    def place(self, W):
        return W

    def search_rows(self, W, rows):
        return rows_of_R(self.D, rows, W), steps.gram(W)

    def problem(self, W, lam, spec):
        return RLSIProblem.of_spec(self.X, W, lam, spec, D=self.D)

    def resume(self, spec):
        return None


class LocalPlacement(Placement):
    """Batch and online RLSI in this process; ``executor``: where the blocks of a batch fit run (None or
    ``"serial"``, ``"threads"``, an executor object: :mod:`rlsi.models.executor`; every one gives the same
    numbers). A given executor object is not closed after the fit."""

    name = "local"

    def __init__(self, executor=None):
        self.executor = executor

    def open(self, X=None):
        return get_executor(self.executor)

    def close(self, executor):
        if executor is not self.executor:
            executor.close()

    def corpus(self, X, spec, executor):
        return LocalCorpus(X, executor)

    stream_key = "local"

    def stream(self, spec, stats, topics=None, *, n_inner=1, first=None):
        from .host_stream import HostStream

        return HostStream(spec, stats, topics)

    def __repr__(self):
        return "LocalPlacement()" if self.executor is None else f"LocalPlacement(executor={self.executor!r})"


register_placement("local", lambda name, executor=None, **options: LocalPlacement(executor))
