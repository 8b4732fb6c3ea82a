"""The synthetic corpus generator: deterministic for a seed, the same matrix in memory, streamed to disk,
and as the all-at-once generator it replaced (rlsi.oracle.synthetic), whatever the chunk size."""

import numpy as np
import pytest

from rlsi.datasets.synthetic import describe, make_corpus, write_corpus
from rlsi.errors import RLSIError
from rlsi.io.matrix import load_matrix
from rlsi.oracle.synthetic import make_corpus_at_once

SMALL = dict(n_docs=400, n_terms=3000, tokens_per_doc=40, n_topics=12, topic_vocab=300)


def _same(A, B):
    return A.shape == B.shape and np.array_equal(A.indptr, B.indptr) and np.array_equal(A.indices, B.indices) \
        and np.array_equal(A.data, B.data) and A.dtype == B.dtype


def test_deterministic_for_a_seed():
    a, b = make_corpus(**SMALL, seed=7), make_corpus(**SMALL, seed=7)
    assert _same(a.X, b.X) and _same(a.counts, b.counts)
    assert np.array_equal(a.doc_topics, b.doc_topics) and np.array_equal(a.topic_terms, b.topic_terms)
    c = make_corpus(**SMALL, seed=8)
    assert not (c.X.shape == a.X.shape and c.X.nnz == a.X.nnz and np.array_equal(c.X.data, a.X.data))


@pytest.mark.parametrize("chunk_tokens", [97, 2_000, 1 << 22])
@pytest.mark.parametrize("seed, dtype", [(0, np.float64), (3, np.float32)])
def test_same_matrix_as_the_all_at_once_generator(chunk_tokens, seed, dtype):
    X, counts, doc_topics, topic_terms = make_corpus_at_once(**SMALL, seed=seed, dtype=dtype)
    c = make_corpus(**SMALL, seed=seed, dtype=dtype, chunk_tokens=chunk_tokens)
    assert _same(c.X, X)
    assert (c.counts != counts).nnz == 0
    assert np.array_equal(c.doc_topics, doc_topics) and np.array_equal(c.topic_terms, topic_terms)


def test_streamed_to_disk_equals_in_memory(tmp_path):
    kw = dict(SMALL, seed=4, dtype=np.float32, norm="l2")
    info = write_corpus(tmp_path / "c", **kw, chunk_tokens=1_500)
    c = make_corpus(**kw)
    m = load_matrix(tmp_path / "c")
    assert _same(m.X, c.X) and info["nnz"] == c.X.nnz and info["n_tokens"] == int(c.counts.sum())
    assert np.array_equal(m.doc_lengths, np.asarray(c.counts.sum(axis=1)).ravel())  # min_tokens > 0: no padding
    assert np.array_equal(m.extra["doc_topics"], c.doc_topics)
    assert np.array_equal(m.extra["topic_terms"], c.topic_terms)
    assert m.meta["source"]["seed"] == 4 and m.meta["norm"] == "l2"
    norms = np.sqrt(np.asarray(m.X.multiply(m.X).sum(axis=1)).ravel())
    assert np.allclose(norms[norms > 0], 1.0, atol=1e-5)
    assert not [p.name for p in (tmp_path / "c").iterdir() if "scratch" in p.name]


def test_statistics_follow_the_parameters():
    c = make_corpus(n_docs=2_000, n_terms=20_000, tokens_per_doc=80, n_topics=20, seed=1)
    lengths = np.asarray(c.counts.sum(axis=1)).ravel()
    assert abs(lengths.mean() - 80) < 5  # Poisson(Gamma(2, mean 80)) averages 80 (+ the min_tokens floor)
    assert c.X.shape == (2_000, 20_000)
    df = np.bincount(c.X.indices, minlength=20_000)
    assert df.max() < 2_000  # the weights keep no term of every document
    assert "2000 docs x 20000 terms" in describe(c)


@pytest.mark.parametrize("kwargs, words", [
    (dict(n_docs=0), "n_docs=0 must be >= 1"),
    (dict(tokens_per_doc=0), "tokens_per_doc=0 must be > 0"),
    (dict(background_share=1.0), "background_share=1.0 must be < 1"),
    (dict(dtype=np.int32), "dtype"),
    (dict(norm="l1"), "norm='l1' is not supported"),
    (dict(seed=-1), "seed=-1 must be >= 0"),
])
def test_bad_parameters(kwargs, words):
    with pytest.raises(RLSIError, match=words):
        make_corpus(**dict(SMALL, **kwargs))
