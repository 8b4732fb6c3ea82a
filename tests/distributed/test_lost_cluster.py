"""A Dask worker lost at any moment: a retry where Dask can (a worker gone while the fit starts), else one
line naming what went away (the scheduler, every worker) — never Dask's traceback."""

import errno
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import planted_corpus
from dask_helpers import killing_its_worker_once
from rlsi.distributed import DaskRLSI, _tasks, open_cluster
from rlsi.distributed.cluster import is_lost_cluster, lost_cluster_errors
from rlsi.distributed.executor import DaskExecutor
from rlsi.errors import RLSIError
from rlsi.models import BatchRLSI

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

PARAMS = dict(n_components=4, lambda1=0.5, max_iter=3, tol=1e-12, random_state=3)


def _lost_errors():
    from distributed import KilledWorker
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    return [CommClosedError("in <TCP (closed) ConnectionPool.gather local=tcp://127.0.0.1:1>: Stream is closed"),
            KilledWorker("make_part-1", SimpleNamespace(address="tcp://127.0.0.1:2"), 3), FutureCancelledError("x", "lost dependencies"),
            OSError(errno.ECONNRESET, "Connection reset by peer"), TimeoutError("no reply")]


@pytest.mark.parametrize("exc", _lost_errors(), ids=lambda e: type(e).__name__)
def test_a_lost_cluster_is_one_line(exc):
    assert is_lost_cluster(exc)
    with pytest.raises(RLSIError) as info:
        with lost_cluster_errors():
            raise exc
    msg = str(info.value)
    assert "\n" not in msg and "lost a worker or its scheduler" in msg and type(exc).__name__ in msg
    assert "--resume-checkpoint" in msg


@pytest.mark.parametrize("exc", [ValueError("a bug"), OSError(errno.ENOSPC, "No space left on device"),
                                 RLSIError("bad option")], ids=["ValueError", "ENOSPC", "RLSIError"])
def test_other_errors_pass_unchanged(exc):
    with pytest.raises(type(exc)) as info:
        with lost_cluster_errors():
            raise exc
    assert info.value is exc


def test_a_worker_lost_while_the_fit_starts_is_a_retry(tmp_path, monkeypatch):
    """The first task of a fit (building a partition) closes its worker: Dask runs it again on another one,
    the traffic counter reads the workers that remain, and the fit equals the local one."""
    X = planted_corpus(n_docs=90, n_terms=60, n_topics=4, seed=5)
    local = BatchRLSI(**PARAMS).fit(X)
    handle = open_cluster(n_workers=3)
    flag = tmp_path / "killed"
    monkeypatch.setattr(_tasks, "make_part", killing_its_worker_once(_tasks.make_part, flag))
    try:
        model = DaskRLSI(**PARAMS, client=handle.client, partitions=3).fit(X)
        ex = DaskExecutor(handle.client)
        assert ex.transfer_bytes() >= 0  # the lost worker is not asked
        workers_left = len(handle.client.nthreads())
    finally:
        handle.close()
    assert flag.exists() and workers_left == 2
    np.testing.assert_allclose(model.components_.toarray(), local.components_.toarray(), rtol=1e-10, atol=1e-12)
