"""The warm-started path over K and λ₁: every fit of the grid starts from the topics and document vectors of
another.

Order. The number of topics K rises (the ``topics`` sorted) and, at each K, λ₁ falls (largest first): a
large λ₁ gives sparse topics quickly, and each smaller λ₁ goes on from the topics one step sparser. Each fit
starts (``BatchRLSI.fit(X, V_init=W, topic_init=U)``, the public warm start) from the document vectors W and
the topics U of its predecessor on the path: the fit before it at the same K, or — for the largest λ₁ of a K —
the fit at the largest λ₁ of the K before (its nearest neighbour on the grid; the smallest λ₁ of that K is
further away). So no fit after the first solves its first U-step from zero (the cold U-step costs several warm
ones: :func:`rlsi.models.rlsi_policy.cold_work`). :func:`path_order` gives the order and each point's
predecessor; only the first fit starts cold.

Growing K. A fit at K' > K starts from the K columns of its predecessor and K' − K new ones, each seeded
from one training document the predecessor explains badly: documents are drawn without replacement with
probability proportional to their squared residual ``‖x_d − w_d U‖²`` (the k-means++ draw, so the new
topics start where the old ones leave most unexplained, and two new topics rarely start on one theme), and
a new column holds each document's residual's projection on the drawn document's residual (unit length);
its topic starts at zero (:func:`grow_topics`), and the first U-step finds it from that column of W.
The columns of topics that ended empty are seeded the same way: an empty topic stays empty under a warm
start (its column of W is zero, so its lasso sees no signal), and a smaller λ₁ may have room for it.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._progress import progress_bar
from ..errors import RLSIError
from ..kernels.products import csr_csr_dense
from ..models.batch import BatchRLSI
from ..models.regularization import DeadTopicsWarning

__all__ = ["PathPoint", "path_order", "grow_doc_vectors", "grow_topics", "fit_path"]

log = logging.getLogger(__name__)


@dataclass
class PathPoint:
    """One fit of the path: its K and λ₁, the fitted model, the index of the point it started from (None:
    cold), its wall-clock seconds and its outer iterations."""

    n_components: int
    lambda1: float
    model: object
    started_from: int | None
    seconds: float
    n_iter: int


def path_order(topics, lambda1):
    """``[(K, λ₁, predecessor index or None), ...]``: the grid in the order of the path (module docstring)."""
    order = []
    for i, k in enumerate(topics):
        for j, lam in enumerate(lambda1):
            if j > 0:
                before = len(order) - 1
            elif i > 0:
                before = len(order) - len(lambda1)
            else:
                before = None
            order.append((int(k), float(lam), before))
    return order


def grow_doc_vectors(X, W, components, n_components, rng):
    """W (N x K) with the columns of empty topics re-seeded and ``n_components − K`` columns added, seeded
    from training documents drawn by their residual (module docstring): an (N x n_components) array."""
    X = sp.csr_matrix(X, dtype=np.float64)
    W = np.asarray(W, dtype=np.float64)
    C = sp.csr_matrix(components, dtype=np.float64)
    K = W.shape[1]
    if n_components < K:
        raise RLSIError(f"the path cannot shrink K from {K} to {n_components}")
    empty = np.flatnonzero(np.diff(C.indptr) == 0)
    seeded = np.concatenate([empty, np.arange(K, n_components)]).astype(np.intp)
    out = np.zeros((W.shape[0], n_components))
    out[:, :K] = W
    if seeded.size == 0:
        return out
    # ‖x_d − w_d U‖² = ‖x_d‖² − 2 (x_d Uᵀ)·w_d + w_d (U Uᵀ) w_dᵀ, with the products of the fits (CSR × CSR
    # topics into a dense N x K array; BLAS for the K x K form)
    x_sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    fitted = csr_csr_dense(X, C.T.tocsr())
    residual_sq = x_sq - 2.0 * np.einsum("dk,dk->d", fitted, W) + np.einsum("dk,dk->d", W @ (C @ C.T).toarray(), W)
    residual_sq = np.maximum(residual_sq, 0.0)
    candidates = np.flatnonzero(residual_sq > 0)
    if candidates.size < seeded.size:
        raise RLSIError(f"K={n_components} needs {seeded.size} training documents the smaller model leaves "
                        f"unexplained; {candidates.size} are (give fewer topics or more documents)")
    p = residual_sq[candidates] / residual_sq[candidates].sum()
    docs = np.sort(rng.choice(candidates, size=seeded.size, replace=False, p=p))
    # residuals of the drawn documents, as unit columns (M x n): x_j − w_j U, zero outside the terms of the drawn
    # documents and of the topics (a few % of the vocabulary): formed on those rows only
    drawn = X[docs]
    terms = np.union1d(drawn.indices, C.indices).astype(np.intp)
    R = drawn[:, terms].toarray().T - np.asarray(C[:, terms].T @ W[docs].T)
    R /= np.maximum(np.linalg.norm(R, axis=0), 1e-300)
    # every document's residual projected on them: X R − W (U R), X R with R as CSR over the vocabulary
    out[:, seeded] = csr_csr_dense(X, _rows_as_csr(R, terms, X.shape[1])) - W @ (C[:, terms] @ R)
    return out


def _rows_as_csr(R, rows, n_rows):
    """The (n_rows x n) CSR matrix whose rows ``rows`` (sorted) are those of the dense R and the others zero."""
    part = sp.csr_matrix(R)
    counts = np.zeros(n_rows + 1, dtype=np.int64)
    counts[rows + 1] = np.diff(part.indptr)
    return sp.csr_matrix((part.data, part.indices, np.cumsum(counts)), shape=(n_rows, R.shape[1]))


def grow_topics(components, n_components):
    """The topics (K x M) with ``n_components − K`` empty ones after them: the warm start of a fit at the
    larger K (CSR float64)."""
    C = sp.csr_matrix(components, dtype=np.float64)
    extra = n_components - C.shape[0]
    if extra < 0:
        raise RLSIError(f"the path cannot shrink K from {C.shape[0]} to {n_components}")
    return sp.vstack([C, sp.csr_matrix((extra, C.shape[1]))], format="csr") if extra else C


def fit_path(X, topics, lambda1, *, random_state, params=None, verbose=0, desc="path"):
    """Fit BatchRLSI at every point of :func:`path_order` on X, warm-started (topics and document vectors of the
    predecessor); returns a list of
    :class:`PathPoint`. ``random_state`` (an int) seeds the first fit and the draws of new topics; ``params``:
    other BatchRLSI parameters."""
    params = dict(params or {})
    rng = np.random.default_rng(random_state)
    order = path_order(topics, lambda1)
    points, vectors = [], []
    bar = progress_bar(len(order), desc, verbose=verbose, unit="fit")
    try:
        for k, lam, before in order:
            model = BatchRLSI(n_components=k, lambda1=lam, random_state=random_state, **params)
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeadTopicsWarning)  # reported as the table's empty topics
                if before is None:
                    W = model.fit_transform(X)
                else:
                    topics = points[before].model.components_
                    V_init = grow_doc_vectors(X, vectors[before], topics, k, rng)
                    W = model.fit_transform(X, V_init=V_init, topic_init=grow_topics(topics, k))
            seconds = time.perf_counter() - start
            log.info("path: K=%d, λ1=%g, %d iterations, %.1f s%s", k, lam, model.n_iter_, seconds,
                     "" if before is None else f" (from point {before})")
            points.append(PathPoint(k, lam, model, before, seconds, int(model.n_iter_)))
            vectors.append(W)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return points
