"""Initial topics and document vectors of the squared-loss learners, written once.

``init="docs"`` takes K distinct random non-empty documents, scaled to unit norm, as the initial topics U₀
(:func:`pick_seed_documents` draws them, :func:`unit_topics` makes the topics of their rows, and
:func:`seed_topics` does both for a matrix at hand); the learners then project the documents on U₀ for V₀
(BatchRLSI, GroupRLSI, DaskRLSI on its partitions, the memory estimate) or start their topics from U₀
(OnlineRLSI; topics it is given are checked by :func:`given_topics`). ``init="random"`` draws V₀ ~ N(0, σ²) with ‖V₀‖ at the scale of the ridge projection
(:func:`random_doc_vectors`). A given V₀ is checked by :func:`check_doc_vectors`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_matrix
from ..errors import RLSIError

__all__ = ["check_doc_vectors", "given_topics", "pick_seed_documents", "random_doc_vectors", "seed_topics",
           "unit_topics"]


def pick_seed_documents(nonempty, k, n_docs, rng):
    """``k`` distinct indices of ``nonempty`` (the non-empty documents of a corpus of ``n_docs``), sorted."""
    nonempty = np.asarray(nonempty)
    if len(nonempty) < k:
        raise RLSIError(
            f"n_components={k} needs at least {k} documents with non-zero weights; X has {len(nonempty)} of "
            f"{n_docs} (with tf-idf weights a document is all zero when every one of its terms occurs in every "
            f"document, e.g. identical documents)")
    return np.sort(rng.choice(nonempty.astype(np.int64, copy=False), size=k, replace=False))


def unit_topics(rows, dtype=None, *, xp=np, sparse=sp):
    """Topics (M x k CSR of ``dtype``, default the rows') from the document rows ``rows`` (k x M CSR): each
    column scaled to unit ℓ2 norm (an all-zero one left as it is). ``xp``, ``sparse``: the array and sparse
    modules of ``rows`` (a device's for rows on the card)."""
    U = sparse.csr_matrix(rows).T.tocsr()
    norms = xp.sqrt(xp.asarray(U.multiply(U).sum(axis=0)).ravel())
    norms[norms == 0] = 1.0
    return (U @ sparse.diags(1.0 / norms)).tocsr().astype(dtype or rows.dtype)


def seed_topics(X, k, rng, dtype=None, *, xp=np, sparse=sp, indptr=None):
    """``k`` distinct random non-empty documents of X (CSR) as unit-norm topics (M x k CSR of ``dtype``,
    default X's). For X on a device: its ``xp`` and ``sparse`` modules and ``indptr``, X's row pointers on
    the host (the draw is made there, the same for either placement)."""
    indptr = X.indptr if indptr is None else indptr
    nonempty = np.flatnonzero(np.diff(indptr) > 0)
    picks = pick_seed_documents(nonempty, k, X.shape[0], rng)
    return unit_topics(X[xp.asarray(picks)], dtype or X.dtype, xp=xp, sparse=sparse)


def random_doc_vectors_nbytes(n_docs, k):
    """Temporary bytes of :func:`random_doc_vectors` besides its result: the float64 draws and their scaled
    copy."""
    return 2 * 8 * int(n_docs) * int(k)


def random_doc_vectors(rng, n_docs, k, x_sqnorm, dtype):
    """V₀ᵀ ~ N(0, σ²) (n_docs x k) with σ = ‖X‖_F / √(n_docs k): ‖V₀‖ at the scale of the ridge projection."""
    sigma = np.sqrt(float(x_sqnorm) / (n_docs * k))
    return (rng.standard_normal((n_docs, k)) * sigma).astype(dtype)


def given_topics(obj):
    """Initial topics given as a fitted model, a sparse matrix or an array: components (K x M, CSR float64)."""
    if hasattr(obj, "get_params") or hasattr(obj, "components_"):
        comp = getattr(obj, "components_", None)
        if comp is None:
            raise RLSIError(f"topic_init={type(obj).__name__} is not fitted (a clone loses its topics; "
                            f"pass model.components_ instead)")
        obj = comp
    return check_matrix(obj, name="topic_init", dtype=np.float64)


def check_doc_vectors(V_init, shape, dtype, *, columns="n_components"):
    """A given V₀ᵀ as a C-contiguous finite array of ``shape`` and ``dtype`` (RLSIError otherwise)."""
    V_init = np.asarray(V_init, dtype=dtype)
    if V_init.shape != tuple(shape):
        raise RLSIError(f"V_init has shape {V_init.shape}, expected (n_samples, {columns})={tuple(shape)}")
    if not np.all(np.isfinite(V_init)):
        raise RLSIError("V_init holds NaN or infinite values")
    return np.ascontiguousarray(V_init)
