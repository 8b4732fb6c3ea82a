"""Synthetic count corpora for the STC tests."""

import numpy as np
import scipy.sparse as sp


def planted_counts(n_docs=120, n_topics=3, words_per_topic=8, noise_terms=4, seed=0, strength=6.0):
    """Counts from disjoint planted topics (topic t owns ``words_per_topic`` terms) plus noise terms;
    returns (X, y) with y the dominant topic of each document."""
    rng = np.random.default_rng(seed)
    M = n_topics * words_per_topic + noise_terms
    B = np.zeros((n_topics, M))
    for t in range(n_topics):
        B[t, t * words_per_topic:(t + 1) * words_per_topic] = 1.0 / words_per_topic
    y = rng.integers(0, n_topics, n_docs)
    mix = rng.gamma(0.3, 1.0, size=(n_docs, n_topics))
    mix[np.arange(n_docs), y] += strength
    lam = mix @ B * 3.0
    lam[:, n_topics * words_per_topic:] += 0.3
    X = sp.csr_matrix(rng.poisson(lam).astype(np.float64))
    X.sum_duplicates()
    return X, y


