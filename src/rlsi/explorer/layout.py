"""The topic map: distances between signed topics and their 2-D embedding by classical MDS.

A topic of a signed model means the same with its signs flipped (``(-u_k, -v_k)`` reconstructs the same
documents), so every topic is first **oriented** by its dominant sign (the side with the larger total
weight, TOIS §8.4.1; :func:`rlsi.quality.dominant_sign`). Two distances are offered:

* ``"topics"`` — between the oriented topic rows: ``sqrt(2 - 2 cos)``, the Euclidean distance of the
  unit-length rows (so classical MDS of it is the principal-component projection of the rows);
* ``"documents"`` — between the topics' document vectors: ``sqrt(2 - 2 r)`` with ``r`` the correlation of
  the oriented columns of ``V`` (topics that the same documents use lie close).

A dead (all-zero) topic has no direction: its cosine with every topic is 0 (distance ``sqrt 2``).

:func:`classical_mds` is Torgerson's classical scaling: the double-centred matrix ``B = -J D² J / 2``,
its two largest eigenpairs, coordinates ``vectors * sqrt(max(values, 0))``. The sign of each axis is fixed
(its largest-magnitude coordinate positive, the first such on ties) so that the same distances give the
same map on every machine.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..errors import RLSIError
from ..quality import check_components, dominant_sign

DISTANCES = ("topics", "documents")


def oriented_rows(components):
    """``(rows, signs)``: the topics (CSR or dense) multiplied by their dominant sign, and the signs."""
    C = check_components(components)
    signs = dominant_sign(C).astype(np.float64)
    if sp.issparse(C):
        return sp.diags(signs) @ C, signs
    return np.asarray(C, dtype=np.float64) * signs[:, None], signs


def _unit_rows(A):
    """Rows of a dense or sparse matrix scaled to unit L2 length (zero rows stay zero), dense K x K Gram."""
    if sp.issparse(A):
        A = sp.csr_matrix(A, dtype=np.float64)
        norms = np.sqrt(np.asarray(A.multiply(A).sum(axis=1)).ravel())
        inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        A = sp.diags(inv) @ A
        return np.asarray((A @ A.T).toarray())
    A = np.asarray(A, dtype=np.float64)
    norms = np.linalg.norm(A, axis=1)
    inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    A = A * inv[:, None]
    return A @ A.T


def _similarities(A):
    """Cosines of the rows of ``A`` (clipped to [-1, 1]; 1 on the diagonal, also for a zero row)."""
    G = np.clip(_unit_rows(A), -1.0, 1.0)
    np.fill_diagonal(G, 1.0)
    return G


def topic_cosines(components):
    """K x K cosine similarities of the oriented topic rows (0 against a dead topic, 1 on the diagonal)."""
    return _similarities(oriented_rows(components)[0])


def document_correlations(doc_topics, signs):
    """K x K correlations of the oriented columns of the document vectors ``V`` (n_docs x K); 0 against a
    topic whose column is constant, 1 on the diagonal."""
    V = doc_topics.toarray() if sp.issparse(doc_topics) else np.asarray(doc_topics, dtype=np.float64)
    if V.ndim != 2 or V.shape[1] != len(signs):
        raise RLSIError(f"document vectors have shape {V.shape}; expected (n_docs, {len(signs)})")
    if V.shape[0] < 2:
        raise RLSIError("distance='documents' needs at least two documents")
    return _similarities(((V - V.mean(axis=0)) * signs).T)


def similarity_distances(G):
    """``sqrt(2 - 2 G)``: the chord distance of a cosine or correlation matrix (zero diagonal)."""
    D = np.sqrt(np.maximum(2.0 - 2.0 * np.asarray(G, dtype=np.float64), 0.0))
    np.fill_diagonal(D, 0.0)
    return D


def classical_mds(D, n_components=2):
    """Classical (Torgerson) MDS of the symmetric distance matrix ``D`` (K x K).

    Returns ``(coords, kept)``: coords (K x n_components; axes of a non-positive eigenvalue are zero) and
    ``kept``, the share of the positive eigenvalues' sum that the axes hold (1.0 when the distances are
    exactly those of points in ``n_components`` dimensions; 0.0 when every distance is zero).
    """
    D = np.asarray(D, dtype=np.float64)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise RLSIError(f"a distance matrix must be square, got shape {D.shape}")
    if not np.all(np.isfinite(D)):
        raise RLSIError("the distance matrix holds NaN or infinite values")
    K = D.shape[0]
    coords = np.zeros((K, n_components))
    if K < 2:
        return coords, 0.0
    D2 = D ** 2
    row = D2.mean(axis=0)
    B = -0.5 * (D2 - row[:, None] - row[None, :] + row.mean())
    B = (B + B.T) / 2
    n = min(n_components, K)
    # LAPACK's divide and conquer for all eigenvalues, bisection for the n largest pairs: the fastest pair of
    # drivers on the nearly equal eigenvalues of sparse, nearly orthogonal topics (0.05 s + 0.2 s at K = 500)
    every = scipy.linalg.eigvalsh(B, driver="evd")
    values, vectors = scipy.linalg.eigh(B, subset_by_index=[K - n, K - 1], driver="evx")  # ascending
    positive = every[every > 0].sum()
    values, vectors = values[::-1], vectors[:, ::-1]
    for j in range(n):
        if values[j] <= 0:
            continue
        axis = vectors[:, j] * np.sqrt(values[j])
        big = int(np.argmax(np.abs(axis)))
        coords[:, j] = axis if axis[big] >= 0 else -axis
    kept = float(np.clip(values[:n].clip(min=0).sum() / positive, 0.0, 1.0)) if positive > 0 else 0.0
    return coords, kept


def topic_map(components, doc_topics=None, distance="topics"):
    """``(coords K x 2, kept share, signs)`` of the topic map (see the module docstring)."""
    if distance not in DISTANCES:
        raise RLSIError(f"distance={distance!r} is not supported; choose one of {', '.join(map(repr, DISTANCES))}")
    rows, signs = oriented_rows(components)
    if distance == "documents":
        if doc_topics is None:
            raise RLSIError("distance='documents' needs documents (X or doc_topics)")
        G = document_correlations(doc_topics, signs)
    else:
        G = _similarities(rows)
    coords, kept = classical_mds(similarity_distances(G))
    return coords, kept, signs
