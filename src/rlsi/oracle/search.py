"""Topic-enhanced search as specified (TOIS §7, Eq. 9), in plain dense numpy: the oracle of
:mod:`rlsi.retrieval` (BM25 index, candidate mode, per-query normalisation, tie order).

One query at a time, every document scored by a Python-level formula; no sparse matrix, no kernel.
For tests on small data only.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bm25_scores", "cosines", "rank"]


def bm25_scores(counts, query_counts, k1=1.2, b=0.75):
    """BM25 (Lucene variant, the docstring of :mod:`rlsi.retrieval.term`) of one query against every
    document. counts : dense (N x M) raw counts; query_counts : dense (M,). Returns (N,) float64."""
    C = np.asarray(counts, dtype=np.float64)
    n_docs = C.shape[0]
    df = (C > 0).sum(axis=0)
    idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
    length = C.sum(axis=1)
    avgdl = length.mean() if length.mean() > 0 else 1.0
    out = np.zeros(n_docs)
    for d in range(n_docs):
        for t in np.flatnonzero(query_counts):
            tf = C[d, t]
            out[d] += query_counts[t] * idf[t] * tf / (tf + k1 * (1.0 - b + b * length[d] / avgdl))
    return out


def cosines(doc_vectors, query_vector):
    """Cosine of one query vector (K,) with every document vector (N x K); zero vectors give 0."""
    D = np.asarray(doc_vectors, dtype=np.float64)
    q = np.asarray(query_vector, dtype=np.float64)
    out = np.zeros(len(D))
    qn = np.sqrt(q @ q)
    for d in range(len(D)):
        dn = np.sqrt(D[d] @ D[d])
        if dn > 0 and qn > 0:
            out[d] = D[d] @ q / (dn * qn)
    return out


def _minmax(s):
    lo, hi = s.min(), s.max()
    return (s - lo) / (hi - lo) if hi > lo else np.zeros_like(s)


def rank(term, topic, doc_ids, alpha, k, n_candidates=None):
    """Eq. 9 with min-max normalisation over the scored set; returns ``[(doc_id, score), ...]`` best first.

    The scored set is every document, or (candidate mode) the ``n_candidates`` best by ``term``. Ties:
    larger doc id first (trec_eval order), in the candidate cut as in the final ranking."""
    ids = [str(x) for x in doc_ids]
    order = sorted(range(len(ids)), key=lambda d: (-term[d], _desc(ids[d])))
    scored = order if n_candidates is None else order[:n_candidates]
    t = np.array([term[d] for d in scored])
    v = np.array([topic[d] for d in scored])
    if alpha == 0:
        combined = _minmax(t)
    elif alpha == 1:
        combined = _minmax(v)
    else:
        combined = alpha * _minmax(v) + (1 - alpha) * _minmax(t)
    best = sorted(range(len(scored)), key=lambda j: (-combined[j], _desc(ids[scored[j]])))[:k]
    return [(ids[scored[j]], float(combined[j])) for j in best]


class _desc(str):
    """A string that sorts in descending order."""

    def __lt__(self, other):
        return str.__gt__(self, other)
