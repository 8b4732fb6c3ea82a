"""Mini-batches of a CSR corpus for :meth:`rlsi.models.OnlineRLSI.fit`: :func:`batch_rows`, and where a
mini-batch of a stream in this process is projected on the topics: :class:`LocalProjection`.

A mini-batch is a CSR matrix (n x M, the documents as rows, all M terms of the corpus as columns) of some
of the corpus's rows — a run of consecutive rows ``a..b`` or an ascending set of them — with float64 data
(what a mini-batch step computes in), an ``indptr`` starting at 0, and for a run the very ``indices`` of the
corpus (a view, no copy, of a memory map too), with the corpus's sorted and canonical flags.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import steps

__all__ = ["LocalProjection", "batch_rows"]


class _Run(np.ndarray):
    """The type of the intermediate view of :func:`_shared_run` (nothing else)."""


def _shared_run(a, p0, p1):
    """``a[p0:p1]`` (a 1-D array) as a view whose ``base`` is an array of its own size. scipy's sparse constructors
    copy an index array that is a view of one more than twice its size (``_prune_array``: a mini-batch's run of
    X's indices always is). numpy sets a view's base to the first array up the chain of another type, so the
    run is cut from a view of ``a`` as :class:`_Run` and viewed back as an ndarray: its base is the cut run."""
    return a.view(_Run)[p0:p1].view(np.ndarray)


def batch_rows(X, a, b=None):
    """Rows ``a..b`` (or the rows ``a``, an ascending index array, when b is None) of the CSR X as a CSR with
    float64 data (what a mini-batch step works on) and no other copy: a run of rows shares X's ``indices``
    (a view, of the memory map too), whose float32 copy ``X[a:b]`` and its float64 conversion would otherwise
    sit next to each other (20 bytes per entry instead of 8: 1.5 GB for 400,000 documents of the web corpus)."""
    if b is None:
        Xb = X[a]
        data, indices, indptr = Xb.data, Xb.indices, Xb.indptr
    else:
        p0, p1 = int(X.indptr[a]), int(X.indptr[b])
        data, indices = X.data[p0:p1], _shared_run(X.indices, p0, p1)
        indptr = (np.asarray(X.indptr[a:b + 1]) - X.indptr[a]).astype(indices.dtype, copy=False)
    out = sp.csr_matrix((np.asarray(data, dtype=np.float64), indices, indptr), shape=(len(indptr) - 1, X.shape[1]),
                        copy=False)
    # the rows of a canonical X are canonical (fit's X went through check_matrix): no scan, no sort
    out.has_sorted_indices = X.has_sorted_indices
    out.has_canonical_format = X.has_canonical_format
    return out


class LocalProjection:
    """Where a :class:`rlsi.models.host_stream.HostStream` projects a mini-batch: here. Each embedded iteration's
    V-step is :func:`rlsi.models.steps.update_doc_vectors` on the batch (Φ = X U from the live rows as CSR where a
    dense U would be read K-wide for every entry of X), its statistics
    :meth:`rlsi.models.stats.PendingBatch.assign`. The Dask placement's projection
    (:class:`rlsi.distributed.online.DaskProjection`) is the other one; the rest of the stream is the same code."""

    def __init__(self, stream, X):
        self.spec, self.X = stream.spec, X

    def __call__(self, U, rows, G, W_prev, pending):
        """W (n x K float64) of the batch on the topics U (``rows``: the ActiveRows of ℓ1 topics, or None;
        ``G = UᵀU``), warm-started from ``W_prev``; the batch's statistics are set from it."""
        spec = self.spec
        U_proj = rows.projection_topics(U, self.X.nnz) if rows is not None else U
        W, _ = steps.update_doc_vectors(self.X, U_proj, penalty=spec.doc_penalty, lam=spec.lambda2,
                                        settings=spec.inner_settings(), W_prev=W_prev, dtype=np.float64, G=G)
        pending.assign(W)
        return W

    def vectors(self, W):
        """The batch's vectors after the last iteration (here: ``W`` itself)."""
        return W
