"""Distributed online RLSI on Dask: each mini-batch's document vectors computed on the workers.

The algorithm is :class:`rlsi.models.OnlineRLSI`'s (TOIS Algorithm 4 with re-scaling, mini-batches and
embedded iterations; read its module docstring), and so is the code of the mini-batch step: only the
projection of the mini-batch moves (:class:`DaskProjection` in place of
:class:`rlsi.models.minibatch.LocalProjection`). A mini-batch of η documents is cut into ``partitions``
contiguous parts (default: one per worker), each sent once to a worker; for each of the ξ embedded
iterations

* the client sends U (sparse) and the prepared ``(UᵀU, λ₂)`` (K x K); every part computes its W_p with
  :func:`rlsi.models.tasks.doc_block` where its rows are and returns its contribution to the sufficient
  statistics: ``W_pᵀW_p`` (K x K) and the rows of ``X_pᵀW_p`` for the terms the part touches;
* the client adds the contributions, in part order, to the re-scaled statistics of the stream
  (:meth:`rlsi.models.stats.PendingBatch.assign_parts`), then updates the topics as the local learner does.

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
from dask.sizeof import sizeof

from .._params import Anything, Integer, Real
from ..io import register
from ..kernels.convert import dense_to_csr
from ..models.online import OnlineRLSI
from ..models.regularization import DEFAULT_LAMBDA1, DEFAULT_LAMBDA2
from ..models.rlsi_policy import TOPIC_SWEEPS
from ..models.penalties import penalty as get_penalty
from . import _tasks
from .executor import DaskExecutor

__all__ = ["DaskOnlineRLSI", "DaskProjection"]


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

    def __init__(self, n_components=20, *, lambda1=DEFAULT_LAMBDA1, lambda2=DEFAULT_LAMBDA2, topic_penalty="l1", doc_penalty="l2",
                 lambda1_scale="per_doc", rho=0.0, batch_size=256, n_inner=5, n_passes=1, shuffle=False,
                 init="docs", topic_init=None, reseed_dead=False, inner_max_iter=100, inner_tol=1e-4,
                 topic_sweeps=TOPIC_SWEEPS, stats_dtype=None, random_state=None, n_jobs=None, client=None, scheduler=None, n_workers=2,
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
    _projects_here = False

    def _projection(self, X):
        """The batch's projection on the workers (the rest of the step is OnlineRLSI's)."""
        self._last_projection = DaskProjection(self, X, self._executor())
        return self._last_projection

    def _step(self, X):
        """One mini-batch of Algorithm 4 (OnlineRLSI's step) with the projections on the workers; records the
        bytes the batch moved."""
        self._last_projection = None
        W = super()._step(X)
        if self._last_projection is not None:
            self.bytes_moved_.append(int(self._last_projection.moved))
        return W

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


class DaskProjection:
    """Where DaskOnlineRLSI projects a mini-batch: on the workers. The batch is cut into the learner's
    ``partitions`` contiguous parts (default: one per worker), each sent once; each embedded iteration sends
    U (CSR) and the prepared penalty, every part computes its W_p where it is (``_tasks.batch_step``) and
    returns ``(W_pᵀW_p, its terms, their rows of X_pᵀW_p)``, which the statistics take in part order
    (:meth:`rlsi.models.stats.PendingBatch.assign_parts`). W_p stay on the workers (gathered only when the
    vectors are returned). ``moved``: the bytes sent and gathered (:func:`dask.sizeof.sizeof`)."""

    def __init__(self, model, X, ex):
        self.model, self.ex, self.n = model, ex, X.shape[0]
        workers = ex.workers()
        nparts = model.partitions or len(workers)
        edges = np.linspace(0, self.n, nparts + 1).round().astype(int)
        spans = [(a, b) for a, b in zip(edges, edges[1:]) if b > a]
        self.where = [workers[i % len(workers)] for i in range(len(spans))]
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ll]arge.*graph.*")
            self.parts = [ex.submit(_tasks.identity, X[a:b], where=self.where[i]) for i, (a, b) in enumerate(spans)]
        self.W_parts = [None] * len(spans)
        self.moved = sizeof(X)

    def __call__(self, U, rows, G, W_prev, pending):
        m, ex, where = self.model, self.ex, self.where
        step = get_penalty(m.doc_penalty, param="doc_penalty").prepared(G, m.lambda2)
        U_sent = dense_to_csr(U) if isinstance(U, np.ndarray) else U  # sparse over the network
        U_fut = ex.submit(_tasks.identity, U_sent)
        res = [ex.submit(_tasks.batch_step, part, U_fut, step, self.W_parts[i], m._inner_settings(),
                         threads=ex.task_threads, where=where[i]) for i, part in enumerate(self.parts)]
        self.W_parts = [ex.submit(_tasks.first, r, where=where[i]) for i, r in enumerate(res)]
        contribs = ex.gather([ex.submit(_tasks.second, r, where=where[i]) for i, r in enumerate(res)])
        self.moved += sizeof(U_sent) + len(self.parts) * sizeof(step) + sizeof(contribs)
        pending.assign_parts(contribs)
        return None

    def vectors(self, W):
        """The batch's vectors, gathered from the workers (zeros when the learner keeps them there)."""
        if not getattr(self.model, "_gather_w", True) or not self.W_parts:
            return np.zeros((self.n, self.model.n_components))
        W = np.concatenate([self.ex.gather(w) for w in self.W_parts])
        self.moved += W.nbytes
        return W
