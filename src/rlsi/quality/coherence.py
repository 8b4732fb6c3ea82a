"""Topic coherence from document co-occurrence: UMass (Mimno et al., 2011) and NPMI.

Both measures look at each topic's top ``n`` terms, ranked as the paper shows topics (footnote 14: the
terms of the dominant sign, see :func:`rlsi.quality.topics.top_term_indices`), and at a reference corpus
``X`` of shape ``(n_documents, n_terms)`` whose columns are the topics' terms. A term occurs in a document
when its entry is non-zero (counts are binarised). With ``N`` documents, ``D(v)`` the number of documents
containing ``v`` and ``D(v, v')`` the number containing both:

* UMass, for top terms ``v_1..v_T`` in rank order: the pairs ``l < m`` each give
  ``log((D(v_m, v_l) + 1) / D(v_l))``. Mimno et al. sum them; with ``aggregate="mean"`` (the default) the
  sum is divided by the number of pairs, so that topics with fewer than ``n`` top terms (possible for sparse
  RLSI topics) are comparable. A pair whose conditioning term ``v_l`` never occurs is undefined and skipped.
* NPMI (document-level windows): for each unordered pair,
  ``log(P(i, j) / (P(i) P(j))) / -log P(i, j)`` with ``P(i) = D(i) / N``, ``P(i, j) = D(i, j) / N``; by
  its limits it is ``-1`` when the terms never co-occur and ``1`` when both occur in every document. Pairs
  with a term that never occurs are skipped. The topic's value is the mean over pairs.

A topic with fewer than two top terms, or no defined pair, has coherence ``nan``.

Only the needed columns of ``X`` are gathered and only small per-topic ``T x T`` co-occurrence matrices
are formed; the full term x term matrix is never built.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .._validation import check_choice, check_number
from ..errors import RLSIError
from .topics import check_components, top_term_indices


def _check_corpus(X):
    """``X`` as a CSR matrix or an ndarray, checked to be a real 2-D matrix with at least one document."""
    X = X.tocsr() if sp.issparse(X) else np.asarray(X)
    if X.ndim != 2:
        raise RLSIError(f"X must be 2-D (documents x terms), got {X.ndim}-D")
    if X.shape[0] == 0:
        raise RLSIError("X has no document; coherence needs a reference corpus")
    if not (X.dtype == bool or np.issubdtype(X.dtype, np.integer) or np.issubdtype(X.dtype, np.floating)):
        raise RLSIError(f"X must hold real numbers, got dtype {X.dtype}")
    return X


def _gather_binary(X, columns):
    """The listed columns of a checked ``X`` as a binary float64 CSC matrix (documents x columns)."""
    sub = sp.csr_matrix(X[:, columns])
    sub.sum_duplicates()
    if sub.dtype.kind == "f" and not np.all(np.isfinite(sub.data)):
        raise RLSIError("X contains NaN or infinite value(s)")
    sub.data = (sub.data != 0).astype(np.float64)
    sub.eliminate_zeros()
    return sub.tocsc()


def co_document_frequencies(X, term_indices):
    """``C`` with ``C[a, b]`` = number of documents of ``X`` containing both terms ``term_indices[a]`` and
    ``term_indices[b]`` (the diagonal holds the document frequencies)."""
    X = _check_corpus(X)
    cols = np.asarray(term_indices, dtype=np.intp).ravel()
    if cols.size and (cols.min() < 0 or cols.max() >= X.shape[1]):
        raise RLSIError(f"term indices must lie in [0, {X.shape[1]})")
    B = _gather_binary(X, cols)
    return np.rint((B.T @ B).toarray()).astype(np.int64)


def _per_topic_counts(components, X, n, by):
    """Yield, per topic, the co-document-frequency matrix of its top terms (rank order), and ``N``."""
    C = check_components(components)
    check_number("n", n, low=1, integer=True)
    X = _check_corpus(X)
    if X.shape[1] != C.shape[1]:
        raise RLSIError(f"X has {X.shape[1]} terms but the topics have {C.shape[1]}")
    tops = top_term_indices(C, n, by)
    union = np.unique(np.concatenate(tops)) if any(t.size for t in tops) else np.zeros(0, np.intp)
    B, n_docs = _gather_binary(X, union), X.shape[0]
    out = []
    for idx in tops:
        local = np.searchsorted(union, idx)
        Bt = B[:, local]
        out.append(np.rint((Bt.T @ Bt).toarray()))
    return out, n_docs


def umass_coherence(components, X, n=10, *, aggregate="mean", by="dominant"):
    """Per topic UMass coherence of the top ``n`` terms against documents ``X`` (see the module docstring);
    ``aggregate`` is ``"mean"`` (over pairs) or ``"sum"`` (Mimno et al.'s original)."""
    check_choice("aggregate", aggregate, ("mean", "sum"))
    counts, _ = _per_topic_counts(components, X, n, by)
    scores = np.full(len(counts), np.nan)
    for k, C in enumerate(counts):
        terms = []
        for m in range(1, C.shape[0]):
            for l in range(m):
                if C[l, l] > 0:
                    terms.append(math.log((C[m, l] + 1.0) / C[l, l]))
        if terms:
            scores[k] = sum(terms) if aggregate == "sum" else sum(terms) / len(terms)
    return scores


def npmi_coherence(components, X, n=10, *, by="dominant"):
    """Per topic mean NPMI over the pairs of the top ``n`` terms, documents as windows (module docstring)."""
    counts, n_docs = _per_topic_counts(components, X, n, by)
    scores = np.full(len(counts), np.nan)
    for k, C in enumerate(counts):
        values = []
        for i in range(C.shape[0]):
            for j in range(i + 1, C.shape[0]):
                di, dj, dij = C[i, i], C[j, j], C[i, j]
                if di == 0 or dj == 0:
                    continue
                if dij == 0:
                    values.append(-1.0)
                elif dij == n_docs:
                    values.append(1.0)
                else:
                    pij = dij / n_docs
                    values.append(math.log(pij / ((di / n_docs) * (dj / n_docs))) / -math.log(pij))
        if values:
            scores[k] = sum(values) / len(values)
    return scores


COHERENCE_MEASURES = {"umass": umass_coherence, "npmi": npmi_coherence}


def topic_coherence(components, X, measure="umass", n=10):
    """Per topic coherence with the named measure (a key of :data:`COHERENCE_MEASURES`)."""
    return COHERENCE_MEASURES[check_choice("measure", measure, COHERENCE_MEASURES)](components, X, n)


def avg_topic_coherence(components, X, measure="umass", n=10):
    """Mean of :func:`topic_coherence` over the topics where it is defined; ``nan`` if none is."""
    scores = topic_coherence(components, X, measure, n)
    scores = scores[~np.isnan(scores)]
    return float(scores.mean()) if scores.size else math.nan
