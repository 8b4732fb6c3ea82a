"""Online RLSI's stream in this process: the statistics and the topics on the host (a ``PlacedStream``).

:class:`HostStream` holds the stream's :class:`rlsi.models.stats.TopicStatistics` (S, R, the weight), the topics
U (a dense M x K array when it fits ``RLSITuning.dense_max_bytes``, else CSR) and what one mini-batch carries to
the next (the row maxima of R, the live rows, ``UᵀU``: :class:`rlsi.models.active_rows.RowCache`).
:meth:`HostStream.begin` opens a mini-batch (:class:`HostMiniBatch`) whose embedded iterations the learner runs
(:meth:`rlsi.models.online.OnlineRLSI._learn`): ``project`` (the V-step and the batch's statistics), ``solve``
(the U-step), ``close``.

Cost of an embedded iteration. The projection (``Φ = X_t U``: from the live rows of U as CSR when the batch is
large, :meth:`rlsi.models.active_rows.ActiveRows.projection_topics`), the batch's rows of R (one fused kernel per
block of terms, :meth:`rlsi.models.stats.PendingBatch.assign`) and the U-step on the rows that can be non-zero
(:class:`rlsi.models.active_rows.ActiveRows`: each row solved where it lies, ``UᵀU`` accumulated over the
non-zero weights) are the three kernels; their bookkeeping — which rows are live, each row's ``max_k |r_mk|``,
``UᵀU``, the topic change — is carried from one iteration and one mini-batch to the next instead of being
recomputed from the M x K arrays. With ξ > 1 and dense topics the ξ iterations run on a compact copy of the
rows they can touch (:class:`rlsi.models.active_rows.CompactBatch`), gathered once and scattered back once —
the same numbers as on the scattered rows. Nothing of a mini-batch costs M x K: the re-scaling is lazy (R is kept
as ``scale · R_stored`` and the U-step solved on the stored rows with ``(S/scale, λ₁/scale)``, the same
minimiser exactly; :mod:`rlsi.models.stats`), and with ξ = 1 the batch's rows of R are added to in place.

Where a mini-batch is projected is a projection object (``projection(stream, X)`` with ``__call__(U, rows, G,
W_prev, pending)`` and ``vectors(W)``): :class:`rlsi.models.minibatch.LocalProjection` here,
:class:`rlsi.distributed.online.DaskProjection` on a cluster's workers; the rest of the stream is this class.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..kernels.convert import csr_rows_to_dense, dense_to_csr
from . import steps
from .active_rows import ActiveRows, CompactBatch
from .minibatch import LocalProjection, batch_rows
from .penalties import SolverSettings
from .penalties import penalty as get_penalty

__all__ = ["HostMiniBatch", "HostStream"]


class HostStream:
    """The state of one online RLSI stream in this process (see the module docstring).

    spec : the fit's :class:`rlsi.models.spec.RLSISpec`; stats : the stream's TopicStatistics (empty for a new
    stream); topics : U (M x K, CSR or dense) or None before the first non-empty mini-batch; projection : where
    mini-batches are projected (a factory ``(stream, X) -> projection``; :class:`LocalProjection` by default) and
    ``projects_here``: whether that is this process (the compact block of ξ > 1 projects here too).
    """

    #: The placement this stream belongs to (a model re-opens its stream when its placement changes).
    key = "local"
    #: Whether ``fit`` releases the stream at its end (a stream holding a cluster started for the fit).
    release_after_fit = False
    #: Whether the stream solves seed words' rows with their weights (``spec.seeds``; rlsi.models.seeds).
    takes_seeds = True

    def __init__(self, spec, stats, topics=None, *, projection=LocalProjection, projects_here=True):
        self.spec = spec
        self.stats = stats
        self.U = topics
        self.row_cache = None  # the RowCache of the last mini-batch (row maxima of R, live rows, G)
        self.projection = projection
        self.projects_here = projects_here

    # ------------------------------------------------------------------ state
    @property
    def n_docs(self):
        return self.stats.n_docs

    @property
    def weight(self):
        return self.stats.weight

    @property
    def has_topics(self):
        return self.U is not None

    def statistics(self):
        """The stream's TopicStatistics (this object: updated in place by every mini-batch)."""
        return self.stats

    def topics(self):
        """The current topics U (M x K) as CSR, or None."""
        U = self.U
        if isinstance(U, np.ndarray):
            return dense_to_csr(U)
        return U

    def grow(self, M):
        """Make U and R span M terms (new terms get zero rows)."""
        old = self.stats.n_terms
        if M <= old:
            return
        self.stats.grow(M - old)
        self.row_cache = None
        if isinstance(self.U, np.ndarray):
            self.U = np.concatenate([self.U, np.zeros((M - old, self.spec.n_components))])
        elif self.U is not None:
            U = self.U
            indptr = np.concatenate([U.indptr, np.full(M - old, U.indptr[-1], dtype=U.indptr.dtype)])
            self.U = sp.csr_matrix((U.data, U.indices, indptr), shape=(M, self.spec.n_components))

    def set_topics(self, U0):
        """The first topics (M x K CSR)."""
        self.U = U0

    def reseed(self, U, topics):
        """Continue with the topics U (CSR), whose ``topics`` were re-seeded: their statistics are forgotten."""
        self.U = U
        if len(topics):
            self.stats.reset_topics(topics)
            self.row_cache = None

    def add_topics(self, U, stats):
        """Continue with more topics: U (M x K' CSR) and the statistics grown to match (a topic born in the
        stream, :mod:`rlsi.models.birth`)."""
        self.spec = self.spec.with_topics(U.shape[1])
        self.stats, self.U, self.row_cache = stats, U, None

    def attributes(self):
        """The placement's own fitted attributes (none here)."""
        return {}

    def release(self):
        """Nothing is held outside this process."""

    # ------------------------------------------------------------------ mini-batches
    def batches(self, X, spans):
        """The mini-batches of ``fit``: for each span a run ``(a, b)`` of X's rows or an ascending index array
        (:func:`rlsi.models.minibatch.batch_rows`: float64, X's indices shared)."""
        for s in spans:
            yield batch_rows(X, *s) if isinstance(s, tuple) else batch_rows(X, s)

    def batch(self, X):
        """The mini-batch of a ``partial_fit`` (float64 CSR)."""
        return X.astype(np.float64, copy=False)

    @staticmethod
    def host(batch):
        """A mini-batch as host CSR (float64)."""
        return batch

    def begin(self, X, decay, n_inner):
        """Open the mini-batch X (float64 CSR, as wide as the statistics): the old statistics re-scaled by
        ``decay`` (lazily: O(K²)), λ₁ for their weight with the batch's. Returns a :class:`HostMiniBatch`."""
        # with ξ = 1 the batch's rows of R are added to in place (no copy of them)
        pending = self.stats.begin_batch(X, decay, repeat=n_inner > 1 and self.U is not None,
                                         transpose_entries=self.spec.tuning.transpose_entries)
        lam1 = self.spec.effective_lambda1(self.stats.weight + X.shape[0])
        return HostMiniBatch(self, X, pending, lam1, n_inner)

    def working_topics(self):
        """U for the steps of a mini-batch: a dense M x K array when it fits (``tuning.dense_max_bytes``; the
        statistics R are M x K already), so that the ξ embedded U-steps solve rows in place instead of
        converting every block between CSR and dense; the same numbers either way."""
        U = self.U
        if sp.issparse(U) and U.shape[0] * U.shape[1] * 8 <= self.spec.tuning.dense_max_bytes:
            return csr_rows_to_dense(sp.csr_matrix(U), 0, U.shape[0], dtype=np.float64)
        return U


class HostMiniBatch:
    """One mini-batch of a :class:`HostStream`: ``project(W_prev)`` (the V-step; the batch's contribution to
    S and R set from its vectors), ``solve(max_iter)`` (the U-step), ``close(W, want_w)`` →
    ``(W, ‖U_t − U_{t−1}‖_F)``. ``lam1``: λ₁ of its U-steps."""

    def __init__(self, stream, X, pending, lam1, n_inner):
        self.stream, self.X, self.pending, self.lam1 = stream, X, pending, lam1
        spec = stream.spec
        self.topic_penalty = spec.topic_penalty
        self.tol = spec.inner_tol
        self.rows = self.blk = self.project_here = None
        if stream.U is None:  # nothing to learn from yet: only count the documents
            pending.assign(np.zeros((X.shape[0], spec.n_components)))
            return
        U = stream.working_topics()
        dense = isinstance(U, np.ndarray)
        # ℓ1 topics (dense or CSR): only the rows that can be non-zero are solved (ActiveRows)
        # (with seed words the seeded rows are solved after the others, on the stored rows of R: not with them)
        self.active = get_penalty(spec.topic_penalty).norm == "l1" and spec.seeds is None
        if self.active:  # the row maxima and live rows of the previous mini-batch, when U is the same
            cache = stream.row_cache if stream.row_cache is not None and stream.row_cache.U is U else None
            # ξ > 1 on dense topics: the iterations run on a contiguous copy of the rows they touch (which
            # projects the batch here: only for a projection in this process)
            tuning = spec.tuning
            compact = tuning.online_compact and dense and n_inner > 1 and stream.projects_here
            self.rows = ActiveRows(stream.stats, U, lam1, cache=cache, track_change=dense and not compact,
                                   single_solve=n_inner == 1, solve_entries=tuning.online_solve_entries,
                                   csr_projection_factor=tuning.online_csr_projection)
            if compact:
                self.blk = CompactBatch.open(self.rows, U, X, pending, max_entries=tuning.online_compact_entries)
                if self.blk is None:  # too large a block: the scattered rows, whose change is tracked by rows
                    self.rows.track_change(U)
        stream.row_cache = None
        self.U, self.dense = U, dense
        if self.blk is None:
            # dense: the solved rows' old values are kept by rows
            self.U_before = None if self.rows is not None and dense else U
            self.project_here = stream.projection(stream, X)

    @property
    def has_topics(self):
        return self.stream.U is not None

    def project(self, W_prev):
        """The V-step with the current topics, warm-started from ``W_prev``; sets the batch's statistics."""
        spec = self.stream.spec
        if self.blk is not None:
            W = self.blk.doc_vectors(spec.doc_penalty, spec.lambda2, W_prev, max_iter=spec.inner_max_iter,
                                     tol=spec.inner_tol)
            self.blk.assign(W)
            return W
        # with tracked live rows, G = UᵀU needs no scan of the whole M x K array
        G = self.rows.gram(self.U) if self.rows is not None else steps.topic_gram(self.U)
        return self.project_here(self.U, self.rows, G, W_prev, self.pending)

    def solve(self, max_iter):
        """The U-step (at most ``max_iter`` sweeps per row) on the statistics with this batch's contribution."""
        if self.blk is not None:
            self.blk.solve(self.topic_penalty, max_iter=max_iter, tol=self.tol)
        elif self.rows is not None:
            self.U = self.rows.solve(self.U, self.pending.cols, self.topic_penalty, max_iter=max_iter, tol=self.tol,
                                     col_max=self.pending.rowmax)
        else:  # the stored rows of R with (S/scale, λ/scale): the same minimiser (stats.py)
            stats, seeds = self.stream.stats, self.stream.spec.seeds
            S, lam = stats.scaled_problem(self.lam1)
            U_prev, settings, pen = self.U, SolverSettings(max_iter, self.tol), get_penalty(self.topic_penalty)
            self.U, _ = steps.update_topics(stats.stored_rows, pen.prepared(S, lam), U_prev, settings,
                                            n_terms=self.X.shape[1], dense=self.dense)
            if seeds is not None:  # the seeded rows with their weights, on the same (S/scale, λ/scale)
                R = np.vstack([stats.stored_rows(m, m + 1) for m in seeds.rows])
                self.U = seeds.step(self.U, R, S, lam, settings, U_prev, positive=pen.nonneg)

    def close(self, W, want_w=True):
        """End the mini-batch: the stream takes the new topics (and the row state for the next batch). Returns
        ``(W, change)``: the batch's vectors (None without ``want_w`` where they are not here) and
        ``‖U_t − U_{t−1}‖_F``."""
        stream = self.stream
        if stream.U is None:
            return np.zeros((self.X.shape[0], stream.spec.n_components)), 0.0
        if self.blk is not None:  # U is updated in place
            change = self.blk.close()
        elif self.rows is not None and self.dense:
            change = self.rows.change(self.U)
        else:
            change = steps.topic_change(self.U, self.U_before)
        if self.blk is None:
            W = self.project_here.vectors(W) if want_w else None
        stream.U = self.U
        if self.active:
            stream.row_cache = self.rows.cache_for(self.U)
        return W, change
