"""Online RLSI's stream on the Dask placement: the statistics and topics on the client (the local stream,
:class:`rlsi.models.host_stream.HostStream`), each mini-batch projected on the workers (:class:`DaskProjection`).

A mini-batch of η documents is cut into ``partitions`` contiguous parts (default: one per worker), each sent once
to a worker; for each of the ξ embedded iterations the client sends U (sparse) and the prepared ``(UᵀU, λ₂)``
(K x K); every part computes its W_p where its rows are and returns its contribution to the sufficient
statistics (``W_pᵀW_p`` and the rows of ``X_pᵀW_p`` for the terms the part touches), which the client adds in
part order (:meth:`rlsi.models.stats.PendingBatch.assign_parts`).
"""

from __future__ import annotations

import warnings

import numpy as np
from dask.sizeof import sizeof

from ..kernels.convert import dense_to_csr
from ..models.host_stream import HostStream
from ..models.penalties import penalty as get_penalty
from . import _tasks

__all__ = ["DaskProjection", "DaskStream"]


class DaskStream(HostStream):
    """Online RLSI's stream with each mini-batch projected on the workers (:class:`DaskProjection`); the statistics
    and topics stay on the client, as in the local stream. ``bytes_moved_``: the bytes sent and gathered per
    mini-batch; ``owned``: the executor was opened for this stream (:meth:`release` closes it)."""

    key = "dask"

    def __init__(self, spec, stats, topics, executor, *, partitions=None, owned=True):
        self.ex, self.owned = executor, owned
        self.moved = []
        self._last = None

        def projection(stream, X):
            self._last = DaskProjection(stream.spec, X, executor, partitions)
            return self._last

        super().__init__(spec, stats, topics, projection=projection, projects_here=False)

    def begin(self, X, decay, n_inner):
        if self._last is not None:
            self.moved.append(int(self._last.moved))
        self._last = None
        return super().begin(X, decay, n_inner)

    def attributes(self):
        moved = list(self.moved) + ([int(self._last.moved)] if self._last is not None else [])
        return {"bytes_moved_": moved}

    @property
    def release_after_fit(self):
        return self.owned

    def release(self):
        """Close the cluster started for this stream (an existing client is left open)."""
        if self.ex is not None and self.owned:
            self.ex.close()
        self.ex = None


class DaskProjection:
    """Where the Dask placement's stream projects a mini-batch: on the workers. The batch is cut into the learner's
    ``partitions`` contiguous parts (default: one per worker), each sent once; each embedded iteration sends
    U (CSR) and the prepared penalty, every part computes its W_p where it is (``_tasks.batch_step``) and
    returns ``(W_pᵀW_p, its terms, their rows of X_pᵀW_p)``, which the statistics take in part order
    (:meth:`rlsi.models.stats.PendingBatch.assign_parts`). W_p stay on the workers (gathered only when the
    vectors are returned). ``moved``: the bytes sent and gathered (:func:`dask.sizeof.sizeof`)."""

    def __init__(self, spec, X, ex, partitions=None):
        self.spec, self.ex, self.n = spec, ex, X.shape[0]
        workers = ex.workers()
        nparts = partitions or len(workers)
        edges = np.linspace(0, self.n, nparts + 1).round().astype(int)
        spans = [(a, b) for a, b in zip(edges, edges[1:]) if b > a]
        self.where = [workers[i % len(workers)] for i in range(len(spans))]
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ll]arge.*graph.*")
            self.parts = [ex.submit(_tasks.identity, X[a:b], where=self.where[i]) for i, (a, b) in enumerate(spans)]
        self.W_parts = [None] * len(spans)
        self.moved = sizeof(X)

    def __call__(self, U, rows, G, W_prev, pending):
        spec, ex, where = self.spec, self.ex, self.where
        step = get_penalty(spec.doc_penalty, param="doc_penalty").prepared(G, spec.lambda2)
        U_sent = dense_to_csr(U) if isinstance(U, np.ndarray) else U  # sparse over the network
        U_fut = ex.submit(_tasks.identity, U_sent)
        res = [ex.submit(_tasks.batch_step, part, U_fut, step, self.W_parts[i], spec.inner_settings(),
                         threads=ex.task_threads, where=where[i]) for i, part in enumerate(self.parts)]
        self.W_parts = [ex.submit(_tasks.first, r, where=where[i]) for i, r in enumerate(res)]
        contribs = ex.gather([ex.submit(_tasks.second, r, where=where[i]) for i, r in enumerate(res)])
        self.moved += sizeof(U_sent) + len(self.parts) * sizeof(step) + sizeof(contribs)
        pending.assign_parts(contribs)
        return None

    def vectors(self, W):
        """The batch's vectors, gathered from the workers (``fit`` does not ask for them: they stay there)."""
        if not self.W_parts:
            return np.zeros((self.n, self.spec.n_components))
        W = np.concatenate([self.ex.gather(w) for w in self.W_parts])
        self.moved += W.nbytes
        return W
