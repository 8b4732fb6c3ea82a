"""Stability of topics across two fits: match the topics one to one, report how alike the matched pairs are.

Two fits of the same data from different random starts (``random_state``) give the same topics in another
order when the data hold K well-separated topics; with too many topics the extra ones split real topics in
ways that change from seed to seed, and with too few the merges do. The topics of the two fits (rows of
``components_``) are compared by the absolute value of their cosine similarity (a topic's sign is arbitrary
in RLSI: ``U V = (−U)(−V)``, so a topic and its negation are the same topic), matched one to one by the assignment that maximises the
total similarity (the Hungarian method, :func:`scipy.optimize.linear_sum_assignment`), and the stability is
the mean similarity of the matched pairs: 1 for identical topic sets in any order, about 0 for unrelated
ones. Two empty topics count as identical (similarity 1), an empty and a non-empty one as unrelated (0).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from ..errors import RLSIError

__all__ = ["topic_similarity", "matched_similarity"]


def topic_similarity(A, B):
    """Absolute cosine similarity of every topic of A (K_a x M) with every topic of B (K_b x M): (K_a, K_b)."""
    A, B = sp.csr_matrix(A, dtype=np.float64), sp.csr_matrix(B, dtype=np.float64)
    if A.shape[1] != B.shape[1]:
        raise RLSIError(f"the topics have {A.shape[1]} and {B.shape[1]} terms; compare fits of one vocabulary")
    na = np.sqrt(np.asarray(A.multiply(A).sum(axis=1)).ravel())
    nb = np.sqrt(np.asarray(B.multiply(B).sum(axis=1)).ravel())
    dots = np.asarray((A @ B.T).todense())
    with np.errstate(divide="ignore", invalid="ignore"):
        sim = np.abs(dots) / np.outer(na, nb)
    empty_a, empty_b = na == 0, nb == 0
    sim[empty_a[:, None] | empty_b[None, :]] = 0.0
    sim[empty_a[:, None] & empty_b[None, :]] = 1.0
    return sim


def matched_similarity(A, B):
    """``(stability, similarities)``: the mean absolute cosine similarity of the topics of A and B matched one to one
    (Hungarian), and the similarity of each matched pair (min(K_a, K_b) values, in A's order)."""
    sim = topic_similarity(A, B)
    if sim.size == 0:
        raise RLSIError("no topic to match")
    rows, cols = linear_sum_assignment(sim, maximize=True)
    pairs = sim[rows, cols]
    return float(pairs.mean()), pairs
