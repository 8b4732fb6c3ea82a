"""Batch RLSI on the Dask placement: one iteration of TOIS §4.4 over document partitions.

:class:`DistributedProblem` is a problem for :func:`rlsi.models.driver.alternate` (``u_step``,
``v_step``, ``objective``) with X and W on the workers (see :mod:`rlsi.distributed.learner` for the data
placement, the traffic and the equality with the local learner). Every decision — the topic
representation, the V-step's dense copy, the U-step's sweep and work caps, the screening bounds and Eq. (1)
— is batch RLSI's own (:mod:`rlsi.models.rlsi_policy`); this module only says where the blocks live and how
their results come back (tasks on the workers, tree reductions in partition order).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..models import steps
from ..models.local import topics_as_components
from ..models.rlsi_policy import TUNING, RLSIPolicy, ScreeningBounds
from . import _tasks

__all__ = ["DistributedProblem", "tree_reduce"]


def tree_reduce(submit, fn, futures):
    """Reduce futures pairwise (a binary tree: depth log₂ n), keeping their order."""
    futures = list(futures)
    while len(futures) > 1:
        nxt = [submit(fn, futures[i], futures[i + 1]) for i in range(0, len(futures) - 1, 2)]
        if len(futures) % 2:
            nxt.append(futures[-1])
        futures = nxt
    return futures[0] if futures else None


class DistributedProblem:
    """Batch RLSI with X and W on the workers, as a problem for :func:`rlsi.models.driver.alternate` (a
    :class:`rlsi.models.placement.PlacedProblem`).

    ``corpus``: the :class:`rlsi.distributed.placement.DaskCorpus` (the partitions, their workers, the term
    blocks, the corpus constants, the fit's record); ``W[p]``: futures of the partitions' document vectors
    (N_p x K); ``stats``: future of the reduced DocStats (S = WᵀW, cross); ``U``: topics on the client (M x K,
    CSR or ndarray); ``U_fut`` / ``U_blocks``: the same on the workers (whole, and per term block for the warm
    start). ``policy``: the representation and caps (:class:`rlsi.models.rlsi_policy.RLSIPolicy`);
    ``screen``: the screening bounds (:class:`rlsi.models.rlsi_policy.ScreeningBounds`, from the term norms and
    the document frequencies reduced from the partitions), None without screening.
    """

    def __init__(self, corpus, W, stats, *, x_sqnorm, K, dtype, topic_penalty, doc_penalty, lambda1, lambda2,
                 inner_max_iter, inner_tol, representation="sparse", topic_sweeps=None, tuning=TUNING):
        from ..models.penalties import penalty as get_penalty

        self.corpus = corpus
        self.ex = corpus.ex
        self.parts, self.part_workers = corpus.parts, corpus.part_workers
        self.term_blocks, self.active = corpus.term_blocks, corpus.active
        self.W, self.stats = W, stats
        self.x_sqnorm, self.K, self.dtype = x_sqnorm, K, np.dtype(dtype)
        self.topic_pen = get_penalty(topic_penalty, param="topic_penalty")
        self.doc_pen = get_penalty(doc_penalty, param="doc_penalty")
        self.threads = corpus.ex.task_threads
        self.U = self.U_fut = self.U_blocks = None
        self.cross = 0.0
        self.S = None
        self.q = 0.0
        self.n_terms = self.term_blocks[-1][1] if self.term_blocks else 0
        self.df = corpus.df  # document frequency of each term: the V-step's work model
        self.policy = RLSIPolicy(representation, self.n_terms, K, self.dtype.itemsize, self.topic_pen.norm,
                                 inner_max_iter=inner_max_iter, inner_tol=inner_tol, topic_sweeps=topic_sweeps,
                                 tuning=tuning)
        row_norms = corpus.row_norms
        self.screen = None if row_norms is None else ScreeningBounds(row_norms, self.df, self.dtype, 0.0)
        self.lambda1, self.lambda2 = lambda1, lambda2
        self.W_at_r = None
        self.rows_skipped = self.total_skipped = 0
        self.v_dense_copy = False

    @property
    def lambda1(self):
        return self._lambda1

    @lambda1.setter
    def lambda1(self, value):
        self._lambda1 = value
        if self.screen is not None and value is not None:
            self.screen.half_lam = value / 2.0

    @property
    def used(self):
        """The representation of each U-step."""
        return self.policy.used

    def set_lambda1(self, lam):
        """Continue with λ₁ = ``lam`` (the λ₁ search's last problem; the screening's bounds stay valid, as in
        :meth:`rlsi.models.local.RLSIProblem.set_lambda1`); the fit's diagnostics count from here."""
        self.lambda1 = lam
        self.rows_skipped = self.total_skipped = 0
        self.used.clear()

    def restore(self, U, representations):
        """The state after a checkpointed iteration: U (client and workers) and the representation the next
        U-step would use (W and S are the corpus's, read from the checkpoint)."""
        sub = self.submit
        self.U = U
        self.U_fut = sub(_tasks.identity, U)
        self.U_blocks = [sub(_tasks.rows, self.U_fut, a, b) for a, b in self.term_blocks]  # warm starts
        self.used[:] = representations
        self.policy.after_u_step(int(np.count_nonzero(U)) if isinstance(U, np.ndarray) else U.nnz)

    def doc_vectors(self):
        """W (n_samples x n_components), gathered from the workers."""
        return self.corpus.doc_vectors(self.W)

    def history(self):
        """The objectives of the iterations a resumed fit had done."""
        return list(self.corpus.record.history)

    def diagnostics(self):
        """The representation of each U-step, the rows screened, and the cluster's own attributes."""
        return {"used": list(self.used), "rows_screened": int(self.total_skipped),
                "attributes": self.corpus.attributes()}

    # ------------------------------------------------------------------ the placement
    def submit(self, fn, *args, part=None, **kwargs):
        """Submit a task; ``part`` pins it to the worker that holds partition ``part`` (another worker may
        take it when that one is gone)."""
        return self.corpus.submit(fn, *args, part=part, **kwargs)

    def gather(self, futures):
        return self.corpus.gather(futures)

    # ------------------------------------------------------------------ the two steps
    def _rows_needed(self):
        """Term rows whose lasso solution is not certified zero (None: all): the bounds moved by the drift of
        W since the rows were last computed (per-partition K-vectors, reduced in partition order)."""
        if self.screen is None:
            return None
        if self.W_at_r is not None:
            diffs = self.gather([self.submit(_tasks.col_sq_diff, w, w0, part=p)
                                 for p, (w, w0) in enumerate(zip(self.W, self.W_at_r))])
            self.screen.advance(float(np.sqrt(np.max(np.sum(diffs, axis=0)))) if diffs else 0.0)
        self.W_at_r = list(self.W)
        # max_k ‖W[:, k]‖ from the diagonal of S = WᵀW (inf before the first V-step: nothing certified then)
        self.screen.set_col_norm([np.inf] if self.S is None else np.diag(self.S))
        if isinstance(self.U, np.ndarray):
            nonzero = steps.nonzero_row_mask(self.U)
        else:
            nonzero = None if self.U is None else np.diff(self.U.indptr) > 0
        need = self.screen.need(0, self.n_terms, nonzero)
        self.rows_skipped = int(len(need) - np.count_nonzero(need))
        self.total_skipped += self.rows_skipped
        return need

    def u_step(self, executor=None):
        dense = self.policy.begin_u_step()
        prepared = self.submit(_tasks.prepare_topics, self.stats, self.topic_pen, self.lambda1, self.K)
        if dense or self.screen is None:  # dense topics compute every row: the bounds are rebuilt later
            need = None
            if self.screen is not None:
                self.screen.invalidate()
            self.W_at_r, self.rows_skipped = None, 0
        else:
            need = self._rows_needed()
        settings = self.policy.topic_settings(warm=self.U_blocks is not None)
        results = []
        for j, (a, b) in enumerate(self.term_blocks):
            need_b = None if need is None else need[a:b]
            parts = self.active[j] if need_b is None or need_b.any() else []
            shares = [self.submit(_tasks.r_partial, self.parts[p], self.W[p], a, b, self.dtype, need_b, part=p,
                                  threads=self.threads) for p in parts]
            Rb = tree_reduce(self.submit, _tasks.add, shares)
            U_prev = None if self.U_blocks is None else self.U_blocks[j]
            results.append(self.submit(_tasks.topic_step, Rb, prepared, U_prev, b - a, self.K, self.dtype, settings,
                                       threads=self.threads, dense=dense))
        self.U_fut = self.submit(_tasks.assemble, *results)  # (U, sweeps): the tasks take U from it
        self.U_blocks = results  # (U_b, ...) results: warm starts of the next U-step
        self.U, sweeps, peaks = self.gather(self.U_fut)
        if need is not None:  # the rows computed get their new bounds (a row no partition sent: r = 0)
            for (a, b), (rows, peak) in zip(self.term_blocks, peaks):
                rowmax = np.zeros(b - a)
                rowmax[rows] = peak
                self.screen.store(a + np.flatnonzero(need[a:b]), rowmax[need[a:b]])
        nnz = int(np.count_nonzero(self.U)) if dense else self.U.nnz
        diag = {"nnz": nnz, "sweeps": sweeps, "screened": self.rows_skipped, "dense": dense}
        if self.policy.after_u_step(nnz):  # converted at once: the V-step runs on the new representation
            self.U_fut = self.submit(_tasks.convert_topics, self.U_fut, self.policy.dense)
            self.U = _tasks.convert_topics(self.U, self.policy.dense)
        return diag

    def v_step(self, executor=None):
        self.v_dense_copy = sp.issparse(self.U) and self.policy.v_dense_copy(
            self.df, np.diff(self.U.indptr), 0.0 if self.df is None else self.df.sum())
        U_v = self.submit(_tasks.dense_copy, self.U_fut) if self.v_dense_copy else self.U_fut
        prepared = self.submit(_tasks.prepare_docs, U_v, self.doc_pen, self.lambda2)
        for p, part in enumerate(self.parts):  # W[p] holds (W_p, DocStats_p, Q(W_p)) on its worker
            self.W[p] = self.submit(_tasks.doc_step, part, U_v, prepared, self.W[p], self.policy.doc_settings(),
                                    dtype=self.dtype, part=p, threads=self.threads)
        self.stats = tree_reduce(self.submit, _tasks.merge_stats, self.W)
        if len(self.W) == 1:
            self.stats = self.submit(_tasks.second, self.W[0], part=0)
        values = [self.submit(_tasks.third, w, part=p) for p, w in enumerate(self.W)]
        reduced, values = self.gather([self.stats, values])
        self.cross, self.S, self.q = reduced.cross, reduced.S, sum(values)
        return {}

    def objective(self):
        """Eq. (1) from the reduced statistics, Q(W) summed over the partitions."""
        U = _tasks.dense_copy(self.U) if self.v_dense_copy else self.U  # the V-step's G
        return RLSIPolicy.objective(self.x_sqnorm, self.cross, steps.topic_gram(U), self.S, self.lambda1,
                                    self.topic_pen.value(self.U), self.lambda2, self.q)

    def components(self, dtype):
        """The topics as ``components_`` (K x M CSR of ``dtype``)."""
        return topics_as_components(self.U, dtype)
