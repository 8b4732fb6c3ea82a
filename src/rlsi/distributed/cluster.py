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
"""

from __future__ import annotations

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
