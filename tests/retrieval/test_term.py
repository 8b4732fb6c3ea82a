"""BM25 and VSM term-matching scorers against plain-python references (and bm25s)."""

import json
import math
import re
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi.errors import ModelFormatError, RLSIError
from rlsi.retrieval.term import BM25, VSM

TEXTS = [
    "the wing flutter of a swept wing at high speed",
    "heat conduction in composite slabs heat flux",
    "",                                                   # empty document
    "laminar boundary layer on a flat plate",
    "boundary layer transition at high speed flow speed speed",
    "flutter flutter flutter",
    "the the the the the the the the the plate",
]
QUERIES = ["wing flutter", "boundary layer speed speed", "unknown words only", "plate the", ""]


def _tokens(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def _counts(token_lists, vocab):
    rows, cols = [], []
    for i, tokens in enumerate(token_lists):
        for t in tokens:
            if t in vocab:
                rows.append(i)
                cols.append(vocab[t])
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(token_lists), len(vocab)))


def _setup(texts=TEXTS, queries=QUERIES):
    docs = [_tokens(t) for t in texts]
    vocab = {}
    for tokens in docs:
        for t in tokens:
            vocab.setdefault(t, len(vocab))
    qs = [_tokens(q) for q in queries]
    return docs, qs, vocab, _counts(docs, vocab), _counts(qs, vocab)


def _bm25_reference(docs, query, k1, b):
    """Plain python: sum over query tokens (with repetition) of idf * tf / (tf + k1 (1 - b + b dl/avgdl))."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    df = Counter(t for d in docs for t in set(d))
    out = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for t in query:
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf[t] / (tf[t] + k1 * (1 - b + b * len(d) / avgdl))
        out.append(s)
    return out


def _random_corpus(seed, n_docs=80, n_words=40):
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, n_words + 1)
    p /= p.sum()
    texts = [" ".join(f"w{j}" for j in rng.choice(n_words, size=rng.integers(0, 40), p=p))
             for _ in range(n_docs)]
    queries = [" ".join(f"w{j}" for j in rng.choice(n_words + 5, size=rng.integers(1, 6)))
               for _ in range(15)]
    return texts, queries


@pytest.mark.parametrize("k1, b", [(1.2, 0.75), (0.9, 0.4), (2.0, 1.0), (0.0, 0.0)])
def test_bm25_matches_plain_python(k1, b):
    for texts, queries in [(TEXTS, QUERIES), _random_corpus(1)]:
        docs, qs, vocab, X, Q = _setup(texts, queries)
        scores = BM25(k1=k1, b=b).fit(X).score(Q)
        assert scores.shape == (len(qs), len(docs))
        for i, q in enumerate(qs):
            np.testing.assert_allclose(scores[i], _bm25_reference(docs, q, k1, b), rtol=1e-12, atol=1e-15)


def test_bm25_idf_is_non_negative_and_documented_formula():
    docs, qs, vocab, X, Q = _setup()
    model = BM25().fit(X)
    # "the" occurs in 2 of 7 documents: idf = log(1 + (7 - 2 + 0.5) / (2 + 0.5))
    assert model.idf_[vocab["the"]] == pytest.approx(math.log(1 + 5.5 / 2.5))
    common = BM25().fit(sp.csr_matrix(np.ones((5, 2))))
    assert np.all(common.idf_ > 0)                       # df = N still gives a positive idf
    assert model.avgdl_ == pytest.approx(sum(len(d) for d in docs) / len(docs))


def test_bm25_matches_bm25s_lucene():
    bm25s = pytest.importorskip("bm25s", reason="bm25s (pip install bm25s) is needed for this parity test")
    for texts, queries in [(TEXTS, QUERIES), _random_corpus(2)]:
        docs, qs, vocab, X, Q = _setup(texts, queries)
        ours = BM25(k1=1.2, b=0.75).fit(X).score(Q)
        theirs = bm25s.BM25(k1=1.2, b=0.75, method="lucene", dtype="float64")
        theirs.index(docs, show_progress=False)
        compared = 0
        for i, q in enumerate(qs):
            known = [t for t in q if t in vocab]
            if not known:
                continue
            np.testing.assert_allclose(ours[i], theirs.get_scores(known), rtol=1e-10, atol=1e-12)
            compared += 1
        assert compared >= 3


def test_query_without_known_terms_scores_zero():
    docs, qs, vocab, X, Q = _setup()
    for model, queries in [(BM25().fit(X), Q), (VSM().fit(X), Q)]:
        scores = model.score(queries)
        assert np.all(scores[2] == 0) and np.all(scores[4] == 0)   # unknown words; empty query
        assert model.score(sp.csr_matrix((0, len(vocab)))).shape == (0, len(docs))
        assert np.all(model.score(np.zeros(len(vocab))) == 0)      # a dense 1-D query works too
        assert np.all(scores[:, 2] == 0)                            # the empty document


def test_vsm_is_cosine_of_given_vectors():
    texts, queries = _random_corpus(3)
    docs, qs, vocab, X, Q = _setup(texts, queries)
    idf = np.log(X.shape[0] / np.maximum(np.bincount(X.indices, minlength=X.shape[1]), 1))
    D = (X @ sp.diags(idf)).tocsr()
    Qw = (Q @ sp.diags(idf)).tocsr()
    scores = VSM().fit(D).score(Qw)
    Dd, Qd = D.toarray(), Qw.toarray()
    for i in range(len(qs)):
        for j in range(len(docs)):
            denom = np.linalg.norm(Qd[i]) * np.linalg.norm(Dd[j])
            expected = Qd[i] @ Dd[j] / denom if denom > 0 else 0.0
            assert scores[i, j] == pytest.approx(expected, abs=1e-12)
    assert np.max(scores) <= 1 + 1e-12


def test_scoring_only_depends_on_query_columns():
    # changing the weights of terms that are not in the query must not change its scores
    docs, qs, vocab, X, Q = _setup()
    model = BM25().fit(X)
    q = Q[[0]]
    before = model.score(q)
    W = model.weights_.tolil()
    others = [j for j in range(X.shape[1]) if q[0, j] == 0]
    W[:, others] = 99.0
    model.weights_ = W.tocsc()
    np.testing.assert_array_equal(model.score(q), before)
    assert model.weights_.format == "csc"


@pytest.mark.parametrize("cls", [BM25, VSM])
def test_state_round_trip_is_json_and_arrays(cls):
    docs, qs, vocab, X, Q = _setup()
    model = (BM25(k1=1.5, b=0.5) if cls is BM25 else VSM()).fit(X)
    meta, arrays = model._to_state()
    meta = json.loads(json.dumps(meta))
    assert all(isinstance(v, np.ndarray) for v in arrays.values())
    restored = cls._from_state(meta, {k: v.copy() for k, v in arrays.items()})
    np.testing.assert_array_equal(restored.score(Q), model.score(Q))
    if cls is BM25:
        assert (restored.k1, restored.b) == (1.5, 0.5)
        np.testing.assert_array_equal(restored.idf_, model.idf_)


def test_damaged_state():
    docs, qs, vocab, X, Q = _setup()
    meta, arrays = BM25().fit(X)._to_state()
    with pytest.raises(ModelFormatError, match="not a VSM"):
        VSM._from_state(meta, arrays)
    with pytest.raises(ModelFormatError, match="version 99"):
        BM25._from_state({**meta, "version": 99}, arrays)
    with pytest.raises(ModelFormatError, match="damaged BM25 state"):
        BM25._from_state(meta, {k: v for k, v in arrays.items() if k != "idf"})
    with pytest.raises(ModelFormatError, match="damaged BM25 state"):
        BM25._from_state(meta, {**arrays, "weights_indptr": arrays["weights_indptr"][:-1]})
    with pytest.raises(ModelFormatError, match="damaged BM25 state"):
        BM25._from_state({**meta, "weights_shape": [len(docs) + 1, len(vocab)]}, arrays)


def test_input_errors():
    docs, qs, vocab, X, Q = _setup()
    with pytest.raises(RLSIError, match="not fitted"):
        BM25().score(Q)
    with pytest.raises(RLSIError, match="negative"):
        BM25().fit(-X)
    with pytest.raises(RLSIError, match="b=1.5"):
        BM25(b=1.5).fit(X)
    with pytest.raises(RLSIError, match="k1=-1"):
        BM25(k1=-1).fit(X)
    with pytest.raises(RLSIError, match="queries have 3 term columns .* fitted on"):
        BM25().fit(X).score(sp.csr_matrix((1, 3)))
    with pytest.raises(RLSIError, match="NaN"):
        VSM().fit(X).score(np.full((1, X.shape[1]), np.nan))


@pytest.mark.parametrize("value", [-1, "n_docs", 10**6])
def test_state_with_out_of_range_row_index_is_refused(value):
    docs, qs, vocab, X, Q = _setup()
    meta, arrays = BM25().fit(X)._to_state()
    indices = arrays["weights_indices"].copy()
    indices[0] = X.shape[0] if value == "n_docs" else value
    with pytest.raises(ModelFormatError, match="damaged BM25 state: .*index"):
        BM25._from_state(meta, {**arrays, "weights_indices": indices})


@pytest.mark.parametrize("params", [{"k1": "x", "b": 0.75}, {"k1": 1.2, "b": 2.0}, {"k1": 1.2}, {"k1": -1, "b": 0.5}])
def test_state_with_bad_parameters_is_refused(params):
    docs, qs, vocab, X, Q = _setup()
    meta, arrays = BM25().fit(X)._to_state()
    with pytest.raises(ModelFormatError, match="damaged BM25 state"):
        BM25._from_state({**meta, "params": params}, arrays)
