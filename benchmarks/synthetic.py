"""Synthetic topic-structured Zipfian corpus as a tf-idf CSR matrix (documents x terms).

The generator is the library's (:mod:`rlsi.datasets.synthetic`: the model is described there; ``rlsi synth``
streams the same matrix to a matrix directory); this module keeps the benchmarks' import path
(``from synthetic import make_corpus, describe``).

``python benchmarks/synthetic.py --docs 50000 --terms 200000 --tokens 150`` prints statistics and the
generation time.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rlsi.datasets.synthetic import SyntheticCorpus, describe, make_corpus

__all__ = ["SyntheticCorpus", "make_corpus", "describe", "ab_matrix"]


def ab_matrix():
    """The A/B corpus of ``ab_batch.py``, ``bench_topic_sweeps.py`` and ``bench_block_lasso.py``
    (``make_corpus(20000, 60000, 150, n_topics=100, seed=0)``, CSR), cached as an npz in ``$AB_CACHE``
    (default ``/tmp/rlsi_ab_X.npz``) so that interleaved runs read the same matrix."""
    import scipy.sparse as sp

    cache = Path(os.environ.get("AB_CACHE", "/tmp/rlsi_ab_X.npz"))
    if not cache.exists():
        sp.save_npz(cache, make_corpus(20000, 60000, 150, n_topics=100, seed=0).X.tocsr())
    return sp.load_npz(cache).tocsr()


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
