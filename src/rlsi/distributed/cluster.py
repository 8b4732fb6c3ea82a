"""Where the distributed learners run: an existing Dask client, a scheduler address, or a LocalCluster.

:func:`open_cluster` resolves the three ways of naming a cluster into a :class:`ClusterHandle` (the
client plus what must be closed after the fit):

* ``client=`` — an existing :class:`distributed.Client`; used as is and never closed by rlsi;
* ``scheduler="tcp://HOST:PORT"`` — a running scheduler; a client is connected (and closed after the
  fit). An address that does not answer within ``timeout`` seconds ends in one :class:`RLSIError` line
  naming it;
* neither — a :class:`distributed.LocalCluster` on loopback with ``n_workers`` in-process workers
  (``processes=False``: no extra interpreters; the numba kernels release the GIL, so the workers'
  threads compute in parallel; the dashboard on a free port), started for the fit and closed after it.
  Its workers talk over Dask's in-process transport by default, or over TCP on 127.0.0.1 with
  ``protocol="tcp"`` (every transfer then serialized as on a real network: what the tests use to check
  that the tasks are self-contained).

Dask is an optional dependency (``pip install "rlsi[dask]"``); importing this module without it raises
an RLSIError that says so.

A worker lost during a fit is Dask's to handle: its tasks run again on the others (the tasks are pure:
:mod:`rlsi.distributed._tasks`). What Dask cannot recover — the scheduler gone, every worker gone, a task
that killed its workers, a worker lost between the client's listing and its call (a fit still starting) —
ends in one line under :func:`lost_cluster_errors`, which the command line wraps its fits in.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import errno
import logging
import os
from dataclasses import dataclass

from ..errors import RLSIError

log = logging.getLogger(__name__)


def import_distributed():
    """The ``distributed`` module, or a one-line RLSIError naming the extra to install."""
    try:
        import distributed
    except ImportError:
        raise RLSIError('the Dask backend needs dask.distributed; install it with pip install "rlsi[dask]"') \
            from None
    return distributed


@dataclass
class ClusterHandle:
    """A client and whatever this handle started (closed by :meth:`close`)."""

    client: object
    owned_client: bool = False
    cluster: object = None

    @property
    def dashboard_link(self):
        try:
            return self.client.dashboard_link
        except Exception:  # no dashboard (bokeh missing or disabled)
            return None

    def total_threads(self):
        return max(1, sum(self.client.nthreads().values()))

    def close(self):
        if self.owned_client and self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None
        self.owned_client = False


def open_cluster(client=None, scheduler=None, n_workers=2, threads_per_worker=1, timeout=10.0,
                 memory_limit="2GiB", protocol="inproc"):
    """A :class:`ClusterHandle` for ``client``, else ``scheduler``, else a new loopback LocalCluster."""
    distributed = import_distributed()
    if client is not None:
        if scheduler is not None:
            raise RLSIError("give either client= or scheduler=, not both")
        if not hasattr(client, "submit"):
            raise RLSIError(f"client={client!r} is not a dask.distributed Client")
        return ClusterHandle(client)
    if scheduler is not None:
        try:
            cl = distributed.Client(str(scheduler), timeout=float(timeout), set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise RLSIError(f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s "
                            f"({type(exc).__name__}); check the address and that `dask scheduler` runs "
                            f"there") from None
        return ClusterHandle(cl, owned_client=True)
    n_workers = int(n_workers or 1)
    cluster = distributed.LocalCluster(
        n_workers=n_workers, threads_per_worker=int(threads_per_worker), processes=False,
        **({"protocol": "tcp://", "host": "127.0.0.1"} if protocol == "tcp" else {}),
        dashboard_address=":0", memory_limit=memory_limit, silence_logs=logging.ERROR)
    try:
        cl = distributed.Client(cluster, set_as_default=False)
    except BaseException:
        cluster.close()
        raise
    log.info("started a LocalCluster with %d worker(s) x %d thread(s) (cores here: %s)", n_workers,
             threads_per_worker, os.cpu_count())
    return ClusterHandle(cl, owned_client=True, cluster=cluster)


#: errno values of a connection that went away.
_LOST_ERRNOS = {errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.EPIPE, errno.ENOTCONN,
                errno.EHOSTUNREACH, errno.ENETUNREACH}
_LOST_NAMES = {"CommClosedError", "KilledWorker", "FutureCancelledError", "FuturesCancelledError", "AllExit",
               "StreamClosedError"}


def is_lost_cluster(exc) -> bool:
    """Whether ``exc`` is Dask's way of saying that a worker or the scheduler went away."""
    if type(exc).__name__ in _LOST_NAMES or isinstance(exc, (concurrent.futures.CancelledError, TimeoutError)):
        return True
    return isinstance(exc, OSError) and exc.errno in _LOST_ERRNOS


@contextlib.contextmanager
def lost_cluster_errors(what="the fit"):
    """Inside the block, a cluster that went away (:func:`is_lost_cluster`) raises one RLSIError line saying
    so and what to do; any other exception passes unchanged."""
    try:
        yield
    except RLSIError:
        raise
    except Exception as exc:
        if not is_lost_cluster(exc):
            raise
        try:
            detail = " ".join(str(exc).split())[:160]
        except Exception:  # an exception whose message cannot be made
            detail = ""
        raise RLSIError(f"the Dask cluster lost a worker or its scheduler during {what} ({type(exc).__name__}"
                        f"{': ' + detail if detail else ''}); nothing is saved: check the cluster and run again "
                        f"(a batch fit with --checkpoint-dir DIR --resume-checkpoint goes on from its last "
                        f"complete iteration)") from None
