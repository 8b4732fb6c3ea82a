"""The Dask executor: one more implementation of :class:`rlsi.models.executor.Executor`.

``DaskExecutor.map(fn, items)`` runs ``fn`` on the cluster's workers, one task per item, and returns the
results in the order of ``items`` — the contract of every executor, so a learner that reduces them in
that order gets the numbers of the serial executor. Data that lives on the workers is said with
``submit(fn, *args, where=worker)`` (a future, the task pinned to the worker that holds its inputs) and
``gather(futures)``: the distributed learners place their partitions and tasks through these and never
call the Dask client themselves. It is what :class:`rlsi.distributed.DaskRLSI` and
:class:`rlsi.distributed.DaskOnlineRLSI` are built on (their tasks take futures of data that stays on the
workers); it can also be handed to a local learner, ``BatchRLSI(executor=DaskExecutor())``, which then
runs its per-block tasks on the workers of an in-process LocalCluster (the local learners' tasks read
and write the client's arrays, so that use needs workers in the client's process; on a remote cluster
use the distributed learners, whose data lives on the workers).

Traffic accounting: :meth:`DaskExecutor.transfer_bytes` sums Dask's own per-worker counter of bytes
sent to other workers (``Worker.transfer_outgoing_bytes_total``); the learners add what the client sends
(task arguments) and receives (gathered results), computed with :func:`dask.sizeof.sizeof`.
"""

from __future__ import annotations

import logging

import numba

from ..models.executor import Executor
from .cluster import open_cluster


def _worker_sent(dask_worker):
    return int(getattr(dask_worker, "transfer_outgoing_bytes_total", 0))


class _QuietCounterReads(logging.Filter):
    """Drop the worker's INFO line for every read of the traffic counter (once per iteration)."""

    def filter(self, record):
        return "_worker_sent" not in record.getMessage()


_QUIET = _QuietCounterReads()


def quiet_counter_reads():
    """Install the filter on the ``distributed.worker`` logger (once; called when an executor opens)."""
    logger = logging.getLogger("distributed.worker")
    if _QUIET not in logger.filters:
        logger.addFilter(_QUIET)


class DaskExecutor(Executor):
    """Map per-block tasks over a Dask cluster.

    Parameters
    ----------
    client : None or distributed.Client — an existing cluster (never closed here).
    scheduler : None or str — ``tcp://HOST:PORT`` of a running scheduler (used when no client).
    n_workers, threads_per_worker : the LocalCluster started when neither is given (closed by ``close``).
    timeout : float — seconds to wait for ``scheduler`` before an RLSIError naming it.
    task_threads : None or int — numba threads inside each task (None: the machine's cores divided by the
        cluster's worker threads when the cluster is local, else numba's default).
    """

    name = "dask"

    def __init__(self, client=None, *, scheduler=None, n_workers=2, threads_per_worker=1, timeout=10.0,
                 task_threads=None):
        quiet_counter_reads()
        self._handle = open_cluster(client, scheduler, n_workers=n_workers,
                                    threads_per_worker=threads_per_worker, timeout=timeout)
        self.task_threads = task_threads
        if task_threads is None and self._handle.cluster is not None:
            self.task_threads = max(1, numba.config.NUMBA_NUM_THREADS // self._handle.total_threads())

    @property
    def client(self):
        return self._handle.client

    @property
    def dashboard_link(self):
        return self._handle.dashboard_link

    @property
    def in_process(self):
        """True when the workers share the client's memory (an in-process LocalCluster)."""
        return str(self.client.scheduler.address).startswith("inproc://")

    def workers(self):
        """Worker addresses, sorted (partitions are placed round-robin over them), asked of the scheduler.

        Not from ``client.scheduler_info()``: that returns the client's cached identity, which the client's
        periodic refresh (every 2 s) replaces with one that lists no worker, so a call that lands between the
        refresh and its own read saw an empty cluster ("partitions=None must be at least 1")."""
        return sorted(self.client.nthreads())

    def map(self, fn, items):
        """``fn`` over ``items`` on the cluster; the results, gathered, in the order of ``items``."""
        items = list(items)
        if not items:
            return []
        threads = self.task_threads

        def run(item):
            if threads is not None:
                numba.set_num_threads(threads)  # per thread: the tasks of other workers keep theirs
            return fn(item)

        futures = self.client.map(run, items, pure=False)
        try:
            return self.client.gather(futures)
        finally:
            for f in futures:
                f.release()

    def submit(self, fn, *args, where=None, **kwargs):
        """``fn(*args, **kwargs)`` as one task on the cluster; returns its future. ``where``: the address of
        the worker that holds the task's data (another worker may take it when that one is gone)."""
        extra = {} if where is None else {"workers": [where], "allow_other_workers": True}
        return self.client.submit(fn, *args, pure=False, **extra, **kwargs)

    def gather(self, futures):
        """The results of ``futures`` (any nesting of lists), on the client."""
        return self.client.gather(futures)

    def transfer_bytes(self):
        """Bytes the workers have sent to each other so far (Dask's counters, summed over live workers: a
        worker lost since the scheduler last listed it is left out, its tasks run again elsewhere)."""
        sent = self.client.run(_worker_sent, on_error="return")
        return sum(v for v in sent.values() if isinstance(v, int))

    def close(self):
        """Close the cluster started for this executor (an existing client is left open)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __repr__(self):
        return f"DaskExecutor(client={self.client!r})"
