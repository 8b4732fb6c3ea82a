"""Distributed online RLSI on Dask: each mini-batch's document vectors computed on the workers.

The algorithm is :class:`rlsi.models.OnlineRLSI`'s (TOIS Algorithm 4 with re-scaling, mini-batches and
embedded iterations; read its module docstring), and so is the code of the mini-batch step and of the stream:
only the projection of the mini-batch moves (:class:`DaskProjection` in place of
:class:`rlsi.models.minibatch.LocalProjection`, in the Dask placement's stream,
:class:`rlsi.distributed.stream.DaskStream`). :class:`DaskOnlineRLSI` is OnlineRLSI on that placement with its
settings as parameters. A mini-batch of η documents is cut into ``partitions``
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

import numpy as np

from .._params import Anything, Integer, Real
from ..io import register
from ..models.online import OnlineRLSI
from ..models.regularization import DEFAULT_LAMBDA1, DEFAULT_LAMBDA2
from ..models.rlsi_policy import TOPIC_SWEEPS
from .placement import DaskPlacement

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

    def __init__(self, n_components=20, *, lambda1=DEFAULT_LAMBDA1, lambda2=DEFAULT_LAMBDA2, topic_penalty="l1",
                 doc_penalty="l2", lambda1_scale="per_doc", rho=0.0, batch_size=256, n_inner=5, n_passes=1,
                 shuffle=False, init="docs", topic_init=None, reseed_dead=False, inner_max_iter=100, inner_tol=1e-4,
                 topic_sweeps=TOPIC_SWEEPS, stats_dtype=None, random_state=None, n_jobs=None, client=None,
                 scheduler=None, n_workers=2, threads_per_worker=1, partitions=None, timeout=10.0, verbose=0,
                 tuning=None):
        super().__init__(n_components, lambda1=lambda1, lambda2=lambda2, topic_penalty=topic_penalty,
                         doc_penalty=doc_penalty, lambda1_scale=lambda1_scale, rho=rho, batch_size=batch_size,
                         n_inner=n_inner, n_passes=n_passes, shuffle=shuffle, init=init, topic_init=topic_init,
                         reseed_dead=reseed_dead, inner_max_iter=inner_max_iter, inner_tol=inner_tol,
                         topic_sweeps=topic_sweeps, stats_dtype=stats_dtype,
                         random_state=random_state, n_jobs=n_jobs, verbose=verbose, tuning=tuning)
        self.client = client
        self.scheduler = scheduler
        self.n_workers = n_workers
        self.threads_per_worker = threads_per_worker
        self.partitions = partitions
        self.timeout = timeout

    def _placement(self):
        """The Dask placement of this model's parameters (:class:`rlsi.distributed.placement.DaskPlacement`)."""
        return DaskPlacement(self.client, scheduler=self.scheduler, n_workers=self.n_workers,
                             threads_per_worker=self.threads_per_worker, timeout=self.timeout,
                             partitions=self.partitions, task_threads=self.n_jobs)

    def _reset(self, dtype=np.float64):
        super()._reset(dtype)
        self.bytes_moved_ = []

    def close(self):
        """Release the cluster started for this model (an existing ``client`` is left open); the stream goes on
        from its state on the client (a later ``partial_fit`` starts another cluster)."""
        stream = self.__dict__.get("_stream")
        if stream is not None:
            self._stats_host, self._topics_host = stream.statistics(), stream.topics()
            stream.release()
            del self._stream

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
