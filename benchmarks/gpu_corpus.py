"""The device script's synthetic web-scale corpus, made with the array module of a backend (CuPy on the card).

:func:`device_corpus` draws a tf-idf CSR of planted topics and Zipfian terms in chunks of documents, so that
the int64 token arrays of one chunk (about 50 bytes a token) are all it holds besides the entries (12 bytes
each) and the matrix. On numpy it is the same code: what the suite and ``--smoke`` run, and what
``python benchmarks/gpu_corpus.py`` times on the host to plan the card's budget.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

#: Documents per chunk of the generator.
CHUNK_DOCS = 1 << 17


def device_corpus(be, n_docs, n_terms, tokens, *, n_topics=500, topic_vocab=4000, background=0.4, seed=0,
                  chunk_docs=CHUNK_DOCS):
    """A tf-idf CSR (docs x terms, the backend's dtype, int32 indices) made on the backend: each document has
    two planted topics (a window of ``topic_vocab`` terms each, Zipfian inside) and a Zipfian background share;
    ``tokens`` per document (Poisson). Weighting of the TOIS paper: ``n(t, d)/|d| · log(N/df(t))``."""
    xp = be.xp
    rs = xp.random.RandomState(seed)
    N, M = int(n_docs), int(n_terms)
    offset = rs.randint(0, M, size=n_topics)
    perm = rs.permutation(M)
    rows, cols, tf = [], [], []
    for a in range(0, N, chunk_docs):
        n = min(N, a + chunk_docs) - a
        lengths = xp.maximum(rs.poisson(tokens, n), 5).astype(xp.int64)
        T = int(lengths.sum())
        doc = xp.searchsorted(xp.cumsum(lengths), xp.arange(T, dtype=xp.int64), side="right")
        u = rs.random_sample(T)
        topic_of_doc = rs.randint(0, n_topics, size=(n, 2))
        topic = topic_of_doc[doc, (rs.random_sample(T) < 0.5).astype(xp.int64)]
        in_topic = (xp.exp(u * np.log(topic_vocab + 1.0)) - 1.0).astype(xp.int64)
        term = (offset[topic] + in_topic) % M
        del topic, in_topic
        in_bg = (xp.exp(u * np.log(M + 1.0)) - 1.0).astype(xp.int64)
        term = xp.where(rs.random_sample(T) < background, in_bg, term)
        del u, in_bg
        term = perm[xp.minimum(term, M - 1)]
        keys = xp.sort(doc * M + term)
        del doc, term
        first = xp.concatenate([xp.ones(1, dtype=bool), keys[1:] != keys[:-1]])
        starts = xp.flatnonzero(first)
        counts = xp.diff(xp.concatenate([starts, xp.asarray([T])]))
        uk = keys[starts]
        del keys, first, starts
        r = uk // M
        rows.append((r + a).astype(xp.int32))
        cols.append((uk % M).astype(xp.int32))
        tf.append((counts / lengths[r]).astype(xp.float32))
        del uk, r, counts, lengths
    rows, cols, tf = (xp.concatenate(p) for p in (rows, cols, tf))
    idf = xp.log(N / xp.maximum(xp.bincount(cols, minlength=M), 1).astype(xp.float64))
    data = (tf * idf[cols]).astype(be.dtype)
    del tf, idf
    indptr = xp.zeros(N + 1, dtype=xp.int32)
    xp.cumsum(xp.bincount(rows, minlength=N).astype(xp.int32), out=indptr[1:])
    del rows
    return be.sparse.csr_matrix((data, cols, indptr), shape=(N, M))


def main():
    """Time the generator on numpy at 1/``scale`` of the paper's shape (default 64) and extrapolate."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from rlsi.gpu.backend import numpy_backend

    scale = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    N, M = 1_600_000 // scale, 7_000_000 // scale
    t = time.perf_counter()
    X = device_corpus(numpy_backend(), N, M, 300, n_topics=500, seed=1)
    s = time.perf_counter() - t
    tokens = N * 300
    print(f"{N} x {M}, nnz {X.nnz:,}: {s:.2f} s on numpy ({s / tokens * 1e9:.0f} ns a token); the paper's "
          f"1.6M x 7M ({1_600_000 * 300 / 1e6:.0f}M tokens) would take about {s / tokens * 1_600_000 * 300:.0f} s "
          f"on one core")


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
        sys.exit(print(__doc__))
    main()
