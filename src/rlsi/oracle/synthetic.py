"""The synthetic corpus generator as first written (benchmarks/synthetic.py before #13): every token of the
corpus drawn at once, in plain numpy. It holds all tokens in memory (46 GB at 1.6M x 7M), so it is only
the oracle that :func:`rlsi.datasets.synthetic.make_corpus` and the streaming
:func:`rlsi.datasets.synthetic.write_corpus` are tested against: same seed, same matrix. See
:mod:`rlsi.datasets.synthetic` for the model.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _zipf_cdf(n, exponent):
    p = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** exponent
    c = np.cumsum(p)
    c /= c[-1]
    return c


def make_corpus_at_once(n_docs=50_000, n_terms=200_000, tokens_per_doc=150, *, n_topics=200, topic_vocab=4_000,
                        background_share=0.4, max_doc_topics=3, background_exponent=1.0, topic_exponent=1.1,
                        topic_popularity_exponent=0.5, min_tokens=5, dtype=np.float64, seed=0):
    """``(X, counts, doc_topics, topic_terms)``: tf-idf CSR (N x M), int32 counts CSR, planted topics."""
    rng = np.random.default_rng(seed)
    N, M, T = int(n_docs), int(n_terms), int(n_topics)
    V = min(int(topic_vocab), M)

    lengths = rng.poisson(rng.gamma(2.0, tokens_per_doc / 2.0, size=N))
    lengths = np.maximum(lengths, min_tokens).astype(np.int64)
    n_tok = int(lengths.sum())
    pop = _zipf_cdf(T, topic_popularity_exponent)
    topic_rank_to_id = rng.permutation(T)
    n_dt = rng.integers(1, max_doc_topics + 1, size=N)
    doc_topics = topic_rank_to_id[np.searchsorted(pop, rng.random((N, max_doc_topics)))]
    slot = np.arange(max_doc_topics)[None, :]
    doc_topics = np.where(slot < n_dt[:, None], doc_topics, -1)
    w = rng.exponential(size=(N, max_doc_topics)) * (slot < n_dt[:, None])
    cw = np.cumsum(w, axis=1)
    cw /= cw[:, -1:]

    doc_of = np.repeat(np.arange(N, dtype=np.int64), lengths)
    u = rng.random(n_tok)
    is_bg = u < background_share
    terms = np.empty(n_tok, dtype=np.int64)

    bg_perm = rng.permutation(M)
    nb = int(is_bg.sum())
    terms[is_bg] = bg_perm[np.searchsorted(_zipf_cdf(M, background_exponent), rng.random(nb))]

    slice_order = rng.permutation(M)
    offsets = rng.integers(0, M, size=T)
    local = np.argsort(rng.random((T, V)), axis=1)
    topic_terms = slice_order[(offsets[:, None] + local) % M]

    tk = ~is_bg
    d_tk = doc_of[tk]
    u_tk = (u[tk] - background_share) / (1.0 - background_share)
    s = (cw[d_tk] < u_tk[:, None]).sum(axis=1)
    s = np.minimum(s, n_dt[d_tk] - 1)
    topic = doc_topics[d_tk, s]
    rank = np.searchsorted(_zipf_cdf(V, topic_exponent), rng.random(len(d_tk)))
    terms[tk] = topic_terms[topic, rank]

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
    counts = sp.csr_matrix((cnt.astype(np.int32), cols, indptr), shape=(N, M))

    df = np.bincount(cols, minlength=M)
    idf = np.zeros(M)
    nz = df > 0
    idf[nz] = np.log(N / df[nz])
    data = cnt / lengths[rows] * idf[cols]
    X = sp.csr_matrix((data.astype(dtype), cols.copy(), indptr.copy()), shape=(N, M))
    X.eliminate_zeros()
    return X, counts, doc_topics, topic_terms
