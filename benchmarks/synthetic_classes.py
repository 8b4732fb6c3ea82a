"""Synthetic corpus with planted classes: shared topics plus topics of each class, tf-idf CSR.

The group models' generative picture (Wang et al., SIGIR 2012, Eq. 1) as a sampler, seeded and vectorised
like :mod:`synthetic` (whose Zipf helper and TOIS tf-idf weighting it reuses):

* ``n_classes`` classes of about equal size (a document's class is uniform);
* ``n_shared`` shared topics, each Zipfian over its own slice of ``topic_vocab`` terms drawn from the whole
  vocabulary (slices overlap);
* ``n_class_topics`` topics per class, each Zipfian over a slice of ``topic_vocab`` terms of the class's
  own block of ``class_vocab`` terms (the blocks of different classes are disjoint, so class topics do not
  overlap across classes; the shared slices cover the blocks too);
* a background Zipf law over the whole vocabulary;
* document d of class p: length ``Poisson(Gamma(2, mean=tokens_per_doc))`` (at least ``min_tokens``);
  each token from the background with probability ``background_share``, else from one shared topic of
  the document with probability ``shared_share``, else from one of its class's topics. A document uses
  one shared topic and one or two topics of its class.

``python benchmarks/synthetic_classes.py --docs 200000 --classes 100`` prints statistics.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rlsi.datasets.synthetic import _zipf_cdf  # noqa: E402


@dataclass
class ClassCorpus:
    """``X``: tf-idf CSR (N x M); ``y``: (N,) class of each document; ``seconds``: generation time."""

    X: sp.csr_matrix
    y: np.ndarray
    seconds: float


def make_class_corpus(n_docs=200_000, n_terms=60_000, n_classes=100, *, n_shared=20, n_class_topics=5,
                      class_vocab=400, topic_vocab=150, tokens_per_doc=60, background_share=0.3,
                      shared_share=0.35, min_tokens=5, dtype=np.float64, seed=0):
    """Generate the corpus; returns a :class:`ClassCorpus` (see the module docstring)."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    N, M, P = int(n_docs), int(n_terms), int(n_classes)
    if P * class_vocab > M:
        raise ValueError(f"{P} classes x {class_vocab} class terms exceed the {M} terms")
    V = int(topic_vocab)
    y = rng.integers(0, P, size=N)
    lengths = np.maximum(rng.poisson(rng.gamma(2.0, tokens_per_doc / 2.0, size=N)), min_tokens).astype(np.int64)
    n_tok = int(lengths.sum())
    doc_of = np.repeat(np.arange(N, dtype=np.int64), lengths)
    terms = np.empty(n_tok, dtype=np.int64)

    # topic slices (term ids, most probable first)
    perm = rng.permutation(M)
    shared_terms = np.stack([rng.choice(M, size=V, replace=False) for _ in range(n_shared)])
    blocks = perm[:P * class_vocab].reshape(P, class_vocab)
    class_terms = np.stack([blocks[p][rng.choice(class_vocab, size=V, replace=False)]
                            for p in range(P) for _ in range(n_class_topics)])  # (P * Kc, V)
    topic_cdf = _zipf_cdf(V, 1.1)

    # each document: one shared topic, one or two of its class's topics (Dirichlet(1) weights)
    doc_shared = rng.integers(0, n_shared, size=N)
    n_ct = rng.integers(1, 3, size=N)
    picks = np.argsort(rng.random((N, n_class_topics)), axis=1)[:, :2]
    doc_class_topics = y[:, None] * n_class_topics + picks  # (N, 2) rows of class_terms
    w = rng.exponential(size=(N, 2)) * (np.arange(2)[None, :] < n_ct[:, None])
    cw = np.cumsum(w, axis=1)
    cw /= cw[:, -1:]

    u = rng.random(n_tok)
    bg = u < background_share
    sh = ~bg & (u < background_share + (1 - background_share) * shared_share)
    ct = ~bg & ~sh
    terms[bg] = rng.permutation(M)[np.searchsorted(_zipf_cdf(M, 1.0), rng.random(int(bg.sum())))]
    ranks = np.searchsorted(topic_cdf, rng.random(n_tok))
    terms[sh] = shared_terms[doc_shared[doc_of[sh]], ranks[sh]]
    d_ct = doc_of[ct]
    slot = (cw[d_ct] < rng.random(len(d_ct))[:, None]).sum(axis=1)
    slot = np.minimum(slot, n_ct[d_ct] - 1)
    terms[ct] = class_terms[doc_class_topics[d_ct, slot], ranks[ct]]

    # counts -> TOIS tf-idf n(t, d) / |d| · log(N / df)
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
    df = np.bincount(cols, minlength=M)
    idf = np.zeros(M)
    idf[df > 0] = np.log(N / df[df > 0])
    data = (cnt / lengths[rows] * idf[cols]).astype(dtype)
    X = sp.csr_matrix((data, cols, indptr.astype(np.int32)), shape=(N, M))
    X.eliminate_zeros()
    return ClassCorpus(X=X, y=y, seconds=time.perf_counter() - t0)


def describe(c: ClassCorpus) -> str:
    X = c.X
    N, M = X.shape
    sizes = np.bincount(c.y)
    return (f"{N} docs x {M} terms, {len(sizes)} classes ({sizes.min()}–{sizes.max()} docs each), nnz={X.nnz} "
            f"({X.nnz / N:.1f}/doc), terms occurring {(np.bincount(X.indices, minlength=M) > 0).sum()}, "
            f"generated in {c.seconds:.1f} s")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=200_000)
    p.add_argument("--terms", type=int, default=60_000)
    p.add_argument("--classes", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    print(describe(make_class_corpus(a.docs, a.terms, a.classes, seed=a.seed)))


if __name__ == "__main__":
    main()
