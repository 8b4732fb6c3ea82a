"""Distributed RLSI on Dask (``pip install "rlsi[dask]"``): the learners of :mod:`rlsi.models` with the
documents partitioned over the workers of a Dask cluster.

* :class:`DaskPlacement` — the placement (:mod:`rlsi.models.placement`; registered as ``"dask"``):
  ``BatchRLSI(placement=DaskPlacement(client=c))`` fits on a given cluster;
* :class:`DaskRLSI` — batch RLSI (TOIS §4.4) on that placement, its settings as parameters: same parameters,
  attributes and result as BatchRLSI;
* :class:`DaskOnlineRLSI` — online RLSI with each mini-batch's document vectors computed on the workers;
* :class:`DaskExecutor` — the executor (:mod:`rlsi.models.executor`) that maps tasks over the cluster;
* :func:`vectorize_files` — corpus files read and vectorized on the workers into a :class:`WorkerMatrix`
  (``DaskRLSI.fit(matrix)``, or ``DaskRLSI.fit_files(paths)`` in one call).
"""

from .cluster import open_cluster
from .executor import DaskExecutor
from .files import WorkerMatrix, vectorize_files
from .learner import DaskRLSI
from .online import DaskOnlineRLSI
from .placement import DaskPlacement

__all__ = ["DaskExecutor", "DaskOnlineRLSI", "DaskPlacement", "DaskRLSI", "WorkerMatrix", "open_cluster",
           "vectorize_files"]
