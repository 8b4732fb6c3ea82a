"""Clusters for the distributed tests: in-process LocalClusters on loopback, shared per module."""

import pytest

pytest.importorskip("distributed", reason='the Dask backend needs dask.distributed (pip install "rlsi[dask]")')

from rlsi.distributed import open_cluster  # noqa: E402


@pytest.fixture(scope="module")
def cluster_of():
    """``cluster_of(n, protocol="inproc")`` -> a Client of an n-worker LocalCluster (closed at module end)."""
    handles = {}

    def get(n, protocol="inproc"):
        if (n, protocol) not in handles:
            handles[n, protocol] = open_cluster(n_workers=n, protocol=protocol)
        return handles[n, protocol].client

    yield get
    for handle in handles.values():
        handle.close()

