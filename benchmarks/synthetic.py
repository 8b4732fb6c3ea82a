"""Synthetic topic-structured Zipfian corpus as a tf-idf CSR matrix (documents x terms).

Model (all sampling vectorised, seeded):

* Vocabulary of ``n_terms`` term ids. Term ids are a random permutation of frequency ranks, as in a
  real vocabulary sorted alphabetically.
* Background: a Zipf law ``p(rank r) ∝ 1 / (r + 1)^background_exponent`` over the whole vocabulary.
* ``n_topics`` planted topics. Topic t owns a slice of ``topic_vocab`` terms: a window, at a random
  offset, of a second random ordering of the vocabulary, so that slices of different topics overlap
  (a term belongs to ``n_topics * topic_vocab / n_terms`` topics on average). Inside its slice a topic
  is Zipfian with ``topic_exponent``, over its own random ordering of the slice. Topic popularity is
  itself Zipfian (``topic_popularity_exponent``), so there are big and small topics.
* Document d: length ``|d| ~ Poisson(Gamma(shape=2, mean=tokens_per_doc))`` (at least ``min_tokens``),
  a share ``background_share`` of its tokens from the background, the rest from 1..``max_doc_topics``
  topics with Dirichlet(1) weights.
* Weighting of the TOIS paper (§8.1): ``tf-idf(t, d) = n(t, d) / |d| · log(N / df(t))`` (natural log).
  Terms that never occur keep their (empty) column, so the matrix is exactly ``n_docs x n_terms``;
  a term occurring in every document has idf 0 and its entries are removed.

``python benchmarks/synthetic.py --docs 50000 --terms 200000 --tokens 150`` prints statistics and the
generation time.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass
class SyntheticCorpus:
    """``X``: tf-idf CSR (N x M); ``counts``: raw term counts CSR (N x M, int32); ``doc_topics``: planted
    topics of each document (N x max_doc_topics, -1 = none); ``topic_terms``: the slice of each topic
    (n_topics x topic_vocab term ids, most probable first)."""

    X: sp.csr_matrix
    counts: sp.csr_matrix
    doc_topics: np.ndarray
    topic_terms: np.ndarray
    seconds: float


def _zipf_cdf(n, exponent):
    p = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** exponent
    c = np.cumsum(p)
    c /= c[-1]
    return c


def make_corpus(n_docs=50_000, n_terms=200_000, tokens_per_doc=150, *, n_topics=200, topic_vocab=4_000,
                background_share=0.4, max_doc_topics=3, background_exponent=1.0, topic_exponent=1.1,
                topic_popularity_exponent=0.5, min_tokens=5, dtype=np.float64, seed=0):
    """Generate the corpus; returns a :class:`SyntheticCorpus`. See the module docstring."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    N, M, T = int(n_docs), int(n_terms), int(n_topics)
    V = min(int(topic_vocab), M)

    # --- documents: lengths, topics and topic weights
    lengths = rng.poisson(rng.gamma(2.0, tokens_per_doc / 2.0, size=N))
    lengths = np.maximum(lengths, min_tokens).astype(np.int64)
    n_tok = int(lengths.sum())
    pop = _zipf_cdf(T, topic_popularity_exponent)
    topic_rank_to_id = rng.permutation(T)
    n_dt = rng.integers(1, max_doc_topics + 1, size=N)
    doc_topics = topic_rank_to_id[np.searchsorted(pop, rng.random((N, max_doc_topics)))]
    slot = np.arange(max_doc_topics)[None, :]
    doc_topics = np.where(slot < n_dt[:, None], doc_topics, -1)
    w = rng.exponential(size=(N, max_doc_topics)) * (slot < n_dt[:, None])  # Dirichlet(1) on used slots
    cw = np.cumsum(w, axis=1)
    cw /= cw[:, -1:]

    # --- tokens: source (background or one topic slot of the document), then a term
    doc_of = np.repeat(np.arange(N, dtype=np.int64), lengths)
    u = rng.random(n_tok)
    is_bg = u < background_share
    terms = np.empty(n_tok, dtype=np.int64)

    bg_perm = rng.permutation(M)
    nb = int(is_bg.sum())
    terms[is_bg] = bg_perm[np.searchsorted(_zipf_cdf(M, background_exponent), rng.random(nb))]

    # topic slices: window [offset, offset + V) of a second ordering of the vocabulary
    slice_order = rng.permutation(M)
    offsets = rng.integers(0, M, size=T)
    local = np.argsort(rng.random((T, V)), axis=1)  # each topic's own ordering of its slice
    topic_terms = slice_order[(offsets[:, None] + local) % M]

    tk = ~is_bg
    d_tk = doc_of[tk]
    u_tk = (u[tk] - background_share) / (1.0 - background_share)  # uniform again on [0, 1)
    s = (cw[d_tk] < u_tk[:, None]).sum(axis=1)
    s = np.minimum(s, n_dt[d_tk] - 1)
    topic = doc_topics[d_tk, s]
    rank = np.searchsorted(_zipf_cdf(V, topic_exponent), rng.random(len(d_tk)))
    terms[tk] = topic_terms[topic, rank]

    # --- counts CSR (documents sorted, terms sorted inside each document)
    key = doc_of * M + terms
    key.sort()
    flag = np.empty(len(key), dtype=bool)
    flag[0] = True
    np.not_equal(key[1:], key[:-1], out=flag[1:])
    starts = np.flatnonzero(flag)
    uniq = key[starts]
    cnt = np.diff(np.append(starts, len(key)))
    rows = uniq // M
    cols = (uniq - rows * M).astype(np.int32)
    indptr = np.zeros(N + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=N), out=indptr[1:])
    if indptr[-1] < np.iinfo(np.int32).max:
        indptr = indptr.astype(np.int32)
    counts = sp.csr_matrix((cnt.astype(np.int32), cols, indptr), shape=(N, M))

    # --- tf-idf
    df = np.bincount(cols, minlength=M)
    idf = np.zeros(M)
    nz = df > 0
    idf[nz] = np.log(N / df[nz])
    data = cnt / lengths[rows] * idf[cols]
    X = sp.csr_matrix((data.astype(dtype), cols.copy(), indptr.copy()), shape=(N, M))
    if (df == N).any():
        X.eliminate_zeros()
    X.has_sorted_indices = True
    return SyntheticCorpus(X=X, counts=counts, doc_topics=doc_topics, topic_terms=topic_terms,
                           seconds=time.perf_counter() - t0)


def describe(c: SyntheticCorpus) -> str:
    X = c.X
    N, M = X.shape
    df = np.bincount(X.indices, minlength=M)
    tokens = int(c.counts.data.sum())
    return (f"{N} docs x {M} terms, {tokens / N:.1f} tokens/doc, nnz={X.nnz} ({X.nnz / N:.1f}/doc, "
            f"density {X.nnz / (N * M):.2e}), terms occurring: {(df > 0).sum()} "
            f"(df>=2: {(df >= 2).sum()}), max df {df.max()}, generated in {c.seconds:.1f} s")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=50_000)
    p.add_argument("--terms", type=int, default=200_000)
    p.add_argument("--tokens", type=float, default=150)
    p.add_argument("--topics", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    c = make_corpus(a.docs, a.terms, a.tokens, n_topics=a.topics, seed=a.seed)
    print(describe(c))


if __name__ == "__main__":
    main()
