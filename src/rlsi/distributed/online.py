"""Distributed online RLSI on Dask: each mini-batch's document vectors computed on the workers.

The algorithm is :class:`rlsi.models.OnlineRLSI`'s (TOIS Algorithm 4 with re-scaling, mini-batches and
embedded iterations; read its module docstring); only the projection of the mini-batch moves. A
mini-batch of η documents is cut into ``partitions`` contiguous parts (default: one per worker), each
sent once to a worker; for each of the ξ embedded iterations

* the client sends U (sparse) and ``prepare(UᵀU, λ₂)`` (K x K); every part computes its W_p with
  :func:`rlsi.models.tasks.doc_block` where its rows are and returns its contribution to the sufficient
  statistics: ``W_pᵀW_p`` (K x K) and the rows of ``X_pᵀW_p`` for the terms the part touches;
* the client merges the contributions, in part order, into a :class:`rlsi.models.stats.TopicStatistics`
  of the batch (:meth:`TopicStatistics.merge`, exact sums) and that into the re-scaled statistics of
  the stream, then updates the topics exactly as the local learner (:func:`rlsi.models.steps.update_topics`
  on S, R held by the client, warm-started from U).

So the statistics (M x K) and the topics live on the client as in the local learner, and the documents'
vectors never leave the workers (``partial_fit_transform`` gathers them because it returns them).
With one part the result is bit-identical to OnlineRLSI (same tasks, same sums); with several parts S
and R are sums in another order (relative rounding 1e-16; the tests check 1e-10).
``bytes_moved_`` is the bytes sent to and gathered from the workers per mini-batch (computed from what is
sent, :func:`dask.sizeof.sizeof`; the parts never talk to each other).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from dask.sizeof import sizeof

from .._params import Anything, Integer, Real
from ..io import register
from ..models import steps
from ..kernels.convert import dense_to_csr
from ..models.active_rows import ActiveRows
from ..models.online import OnlineRLSI
from ..models.penalties import penalty as get_penalty
from ..models.stats import TopicStatistics
from . import _tasks
from .executor import DaskExecutor

__all__ = ["DaskOnlineRLSI"]


@register("DaskOnlineRLSI")
class DaskOnlineRLSI(OnlineRLSI):
    """OnlineRLSI with the mini-batches' document vectors computed on a Dask cluster.

    Parameters: those of :class:`rlsi.models.OnlineRLSI`, plus ``client``, ``scheduler``, ``n_workers``,
    ``threads_per_worker``, ``timeout`` (as :class:`rlsi.distributed.DaskRLSI`) and ``partitions`` (None:
    one part of each mini-batch per worker; or a number of parts). A cluster started here lives until
    the end of ``fit`` or, with ``partial_fit``, until :meth:`close`.

    Attributes: those of OnlineRLSI, plus ``bytes_moved_`` (list: bytes sent and gathered per mini-batch).
    """

    _parameter_constraints = {
        "client": Anything(),
        "scheduler": Anything(),
        "n_workers": Integer(low=1),
        "threads_per_worker": Integer(low=1),
        "partitions": Integer(low=1, none=True),
        "timeout": Real(low=0.0),
    }

    def __init__(self, n_components=20, *, lambda1=0.05, lambda2=1.0, topic_penalty="l1", doc_penalty="l2",
                 lambda1_scale="per_doc", rho=0.0, batch_size=256, n_inner=1, n_passes=1, shuffle=False,
                 init="docs", topic_init=None, reseed_dead=False, inner_max_iter=100, inner_tol=1e-4,
                 topic_sweeps=None, stats_dtype=None, random_state=None, n_jobs=None, client=None, scheduler=None, n_workers=2,
                 threads_per_worker=1, partitions=None, timeout=10.0, verbose=0):
        super().__init__(n_components, lambda1=lambda1, lambda2=lambda2, topic_penalty=topic_penalty,
                         doc_penalty=doc_penalty, lambda1_scale=lambda1_scale, rho=rho, batch_size=batch_size,
                         n_inner=n_inner, n_passes=n_passes, shuffle=shuffle, init=init, topic_init=topic_init,
                         reseed_dead=reseed_dead, inner_max_iter=inner_max_iter, inner_tol=inner_tol,
                         topic_sweeps=topic_sweeps, stats_dtype=stats_dtype,
                         random_state=random_state, n_jobs=n_jobs, verbose=verbose)
        self.client = client
        self.scheduler = scheduler
        self.n_workers = n_workers
        self.threads_per_worker = threads_per_worker
        self.partitions = partitions
        self.timeout = timeout

    # ------------------------------------------------------------------ cluster
    def _executor(self):
        ex = getattr(self, "_ex", None)
        if ex is None:
            ex = self._ex = DaskExecutor(self.client, scheduler=self.scheduler, n_workers=self.n_workers,
                                         threads_per_worker=self.threads_per_worker, timeout=self.timeout,
                                         task_threads=self.n_jobs)
        return ex

    def close(self):
        """Release the cluster started for this model (an existing ``client`` is left open)."""
        ex = getattr(self, "_ex", None)
        if ex is not None:
            ex.close()
            self._ex = None

    def fit(self, X, y=None):
        """Reset and learn from X (n_samples x n_features) in mini-batches, the projections on the workers
        (the vectors stay there). Returns self."""
        self._gather_w = False  # fit does not return the vectors: they stay on the workers
        try:
            return super().fit(X)
        finally:
            self._gather_w = True
            self.close()

    def _reset(self, dtype=np.float64):
        super()._reset(dtype)
        self.bytes_moved_ = []

    # ------------------------------------------------------------------ one mini-batch
    def _step(self, X):
        """One mini-batch of Algorithm 4 (as OnlineRLSI._step) with the projections on the workers."""
        warm = self.topics_initialized_  # as OnlineRLSI._step: the U-steps' sweeps cap (topic_sweeps)
        X, n, M, t0 = self._open_batch(X)
        stats = self.stats_
        stats.rescale(self.decay_at(t0, n))
        lam1 = self.lambda1_at(stats.weight + n)
        W = np.zeros((n, self.n_components))
        if self._U is None:  # nothing to learn from yet: only count the documents
            stats.merge(self._empty_batch(M, n))
        else:
            # the topic update is the local learner's, on the client: dense working topics, live rows only
            U = self._working_topics()
            in_place = get_penalty(self.topic_penalty).norm == "l1"  # ActiveRows: dense or CSR topics
            U_before = U.copy() if in_place else U
            rows = ActiveRows(stats, U, lam1) if in_place else None
            touched = np.unique(X.indices)
            ex = self._executor()
            nparts = self.partitions or len(ex.workers())
            edges = np.linspace(0, n, nparts + 1).round().astype(int)
            spans = [(a, b) for a, b in zip(edges, edges[1:]) if b > a]
            workers = ex.workers()
            where = [dict(workers=[workers[i % len(workers)]], allow_other_workers=True) for i in range(len(spans))]
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*[Ll]arge.*graph.*")
                parts = [ex.client.submit(_tasks.identity, X[a:b], pure=False, **where[i])
                         for i, (a, b) in enumerate(spans)]
            moved = sizeof(X)
            pen = get_penalty(self.doc_penalty, param="doc_penalty")
            base = stats
            W_parts = [None] * len(spans)
            for it in range(self.n_inner):
                G = rows.gram(U) if in_place else steps.topic_gram(U)
                prepared = pen.prepare(G, self.lambda2)
                U_sent = dense_to_csr(U) if isinstance(U, np.ndarray) else U  # sparse over the network
                U_fut = ex.client.submit(_tasks.identity, U_sent, pure=False)
                res = [ex.client.submit(_tasks.batch_step, part, U_fut, prepared, W_parts[i], penalty=pen,
                                        lam=self.lambda2, max_iter=self.inner_max_iter, tol=self.inner_tol,
                                        threads=ex.task_threads, pure=False, **where[i])
                       for i, part in enumerate(parts)]
                W_parts = [ex.client.submit(_tasks.first, r, pure=False, **where[i]) for i, r in enumerate(res)]
                contribs = ex.client.gather([ex.client.submit(_tasks.second, r, pure=False, **where[i])
                                             for i, r in enumerate(res)])
                moved += sizeof(U_sent) + len(parts) * sizeof(prepared) + sizeof(contribs)
                stats = base.copy() if self.n_inner > 1 else base
                stats.merge(self._batch_stats(M, [(c, b - a) for c, (a, b) in zip(contribs, spans)]))
                sweeps_cap = self._topic_sweeps(warm or it > 0)
                if in_place:
                    U = rows.solve(U, touched, self.topic_penalty, max_iter=sweeps_cap, tol=self.inner_tol,
                                   stats=stats)
                else:
                    S, lam = stats.scaled_problem(lam1)  # stored rows of R (lazy re-scaling, models/stats.py)
                    U, sweeps = steps.update_topics(
                        stats.stored_rows, S, U, n_terms=M, penalty=self.topic_penalty, lam=lam,
                        max_iter=sweeps_cap, tol=self.inner_tol, dense=isinstance(U, np.ndarray))
            self.stats_ = stats
            self._U = U
            diff = U - U_before
            self.u_change_ = float(np.sqrt(np.square(diff.data if sp.issparse(diff) else diff).sum()))
            if getattr(self, "_gather_w", True):
                W = np.concatenate([ex.client.gather(w) for w in W_parts]) if W_parts else W
                moved += W.nbytes
            self.bytes_moved_.append(int(moved))
        self.lambda1_effective_ = lam1
        self.n_batches_ += 1
        self.n_docs_seen_ = self.stats_.n_docs
        return W

    def _batch_stats(self, M, contributions):
        """The mini-batch's statistics: the parts' contributions merged in order (TopicStatistics.merge)."""
        total = TopicStatistics(self.n_components, M)
        for (S_p, cols, R_p), n_p in contributions:
            part = TopicStatistics(self.n_components, M)
            part.S = S_p
            part.R[cols] = R_p
            part.n_docs, part.weight = n_p, float(n_p)
            total.merge(part)
        return total

    def _empty_batch(self, M, n):
        total = TopicStatistics(self.n_components, M)
        total.n_docs, total.weight = n, float(n)
        return total

    # ------------------------------------------------------------------ persistence
    def to_local(self):
        """The model as a :class:`rlsi.models.OnlineRLSI` (same parameters and state; continues the stream
        locally exactly as this one would)."""
        meta, arrays = self._to_state()
        names = OnlineRLSI().get_params(deep=False)
        meta = dict(meta, params={k: v for k, v in meta["params"].items() if k in names})
        meta["fitted"] = {k: v for k, v in meta["fitted"].items() if k in OnlineRLSI._state_scalars}
        return OnlineRLSI._from_state(meta, arrays)

    def _to_state(self):
        saved = self.client
        try:
            self.client = None
            return super()._to_state()
        finally:
            self.client = saved

    def __getstate__(self):  # the executor (a live cluster) is not part of the model
        state = self.__dict__.copy()
        state.pop("_ex", None)
        return state
