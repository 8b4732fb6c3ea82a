"""Distributed RLSI on Dask (``pip install "rlsi[dask]"``): the learners of :mod:`rlsi.models` with the
documents partitioned over the workers of a Dask cluster.

* :class:`DaskRLSI` — batch RLSI (TOIS §4.4), same parameters, attributes and result as BatchRLSI;
* :class:`DaskOnlineRLSI` — online RLSI with each mini-batch's document vectors computed on the workers;
* :class:`DaskExecutor` — the executor (:mod:`rlsi.models.executor`) that maps tasks over the cluster.
"""

from .cluster import open_cluster
from .executor import DaskExecutor
from .learner import DaskRLSI
from .online import DaskOnlineRLSI

__all__ = ["DaskExecutor", "DaskOnlineRLSI", "DaskRLSI", "open_cluster"]
