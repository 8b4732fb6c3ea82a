"""Search at web scale: the index of a matrix directory built block by block, candidate mode,
posting-list kernels, and the saved index memory-mapped on load."""

import json
import math
import mmap

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi.cli.main import main
from rlsi.datasets import demo_corpus_path
from rlsi.datasets.synthetic import make_corpus, write_corpus
from rlsi.errors import RLSIError
from rlsi.io.matrix import load_matrix, save_matrix
from rlsi.models import BatchRLSI
from rlsi.oracle import search as oracle
from rlsi.retrieval import Searcher
from rlsi.retrieval.postings import accumulate, top_n
from rlsi.retrieval.topic import RidgeFolding
from rlsi.text import TfidfVectorizer, read_jsonl
from rlsi.text.ingest import ingest

N_DOCS, N_TERMS = 400, 1500
SYNTH = dict(n_topics=8, topic_vocab=150, seed=4)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A synthetic matrix directory, the generator's own counts/tf-idf, and a model fitted on it."""
    path = tmp_path_factory.mktemp("synth") / "m"
    write_corpus(path, N_DOCS, N_TERMS, 40, **SYNTH)
    ref = make_corpus(N_DOCS, N_TERMS, 40, **SYNTH)
    model = BatchRLSI(6, max_iter=2, random_state=0).fit(ref.X)
    return path, ref, model


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """The demo corpus ingested into a matrix directory, its texts, and a model fitted on the matrix."""
    path = tmp_path_factory.mktemp("ingest") / "m"
    vec = ingest(demo_corpus_path(), path, vectorizer=TfidfVectorizer(min_df=2, max_df=0.5), batch_docs=97)
    corpus = read_jsonl(demo_corpus_path())
    m = load_matrix(path)
    model = BatchRLSI(5, max_iter=2, random_state=0).fit(sp.csr_matrix(m.X))
    return path, corpus, vec, model


def _is_mapped(arr):
    while arr is not None:
        if isinstance(arr, (np.memmap, mmap.mmap)):
            return True
        arr = getattr(arr, "base", None)
    return False


def _queries(n_terms, n, seed):
    rng = np.random.default_rng(seed)
    rows = [np.unique(rng.integers(0, n_terms, rng.integers(1, 6))) for _ in range(n)]
    counts = sp.csr_matrix((np.ones(sum(map(len, rows))), np.concatenate(rows),
                            np.concatenate([[0], np.cumsum(list(map(len, rows)))])), shape=(n, n_terms))
    tfidf = counts.multiply(1.0 / np.maximum(counts.sum(axis=1), 1)).tocsr()
    return counts, tfidf


def _same(a, b, rtol=1e-9, atol=1e-12):
    assert [h.doc_id for h in a] == [h.doc_id for h in b]
    np.testing.assert_allclose([tuple(h[1:]) for h in a], [tuple(h[1:]) for h in b], rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------------- building
@pytest.mark.parametrize("block_rows", [1, 37, 10_000])
@pytest.mark.parametrize("term_model", ["bm25", "vsm"])
def test_index_from_matrix_equals_index_matrices(synthetic, block_rows, term_model):
    path, ref, model = synthetic
    params = dict(alpha=0.4, term_model=term_model, fold_lambda2=math.inf)
    built = Searcher.from_matrix(path, model, block_rows=block_rows, **params)
    # the reference: the generator's in-memory counts and tf-idf, indexed the ordinary way
    expected = Searcher(model, None, **params).index_matrices(tfidf=ref.X, counts=ref.counts,
                                                               doc_ids=[str(i) for i in range(N_DOCS)])
    A, B = built.term_index_.weights_, expected.term_index_.weights_
    assert A.format == "csc" and A.shape == B.shape
    assert np.array_equal(A.indptr, B.indptr) and np.array_equal(A.indices, B.indices)
    assert np.array_equal(A.data, B.data)
    if term_model == "bm25":
        for attr in ("idf_", "doc_len_"):
            assert np.array_equal(getattr(built.term_index_, attr), getattr(expected.term_index_, attr))
    assert np.array_equal(built.topic_index_.doc_vectors_, expected.topic_index_.doc_vectors_)
    assert list(built.doc_ids_) == list(expected.doc_ids_)
    # float32: the float64 weights and vectors rounded once
    small = Searcher.from_matrix(path, model, block_rows=block_rows, dtype=np.float32, **params)
    assert small.term_index_.weights_.dtype == np.float32
    assert np.array_equal(small.term_index_.weights_.data, B.data.astype(np.float32))
    np.testing.assert_allclose(small.topic_index_.doc_vectors_, expected.topic_index_.doc_vectors_, atol=1e-6)


def test_index_of_an_ingested_corpus_equals_the_text_index(ingested):
    path, corpus, vec, model = ingested
    built = Searcher.from_matrix(path, model, alpha=0.5, block_rows=50)
    assert built.vectorizer.feature_names_ == vec.feature_names_
    texts = Searcher(model, vec, alpha=0.5).index(corpus.texts, corpus.ids)
    queries = ["blood pressure", "heart surgery patients", "library", "zebra quasar"]
    for a, b in zip(built.search_many(queries, k=8), texts.search_many(queries, k=8)):
        _same(a, b)


def test_directory_without_counts_loads_but_refuses_bm25(tmp_path, synthetic):
    _, ref, model = synthetic
    save_matrix(tmp_path / "old", ref.X)  # as older rlsi wrote it: no counts
    m = load_matrix(tmp_path / "old")
    assert m.counts is None and (m.X != ref.X).nnz == 0
    with pytest.raises(RLSIError, match="no raw term counts.*rlsi synth") as info:
        Searcher.from_matrix(m, model)
    assert "\n" not in str(info.value)
    vsm = Searcher.from_matrix(m, model, term_model="vsm")  # VSM needs the tf-idf only
    assert vsm.n_docs_ == N_DOCS


def test_model_of_other_columns_is_refused(synthetic):
    path, _, _ = synthetic
    other = BatchRLSI(3, max_iter=1, random_state=0).fit(make_corpus(50, 300, 20, n_topics=3, topic_vocab=50).X)
    with pytest.raises(RLSIError, match="fitted on this matrix"):
        Searcher.from_matrix(path, other)


# ----------------------------------------------------------------------------------- candidate mode
@pytest.mark.parametrize("alpha", [0.0, 0.3, 1.0])
def test_candidate_mode_equals_exact_mode_when_it_covers_every_document(synthetic, alpha):
    path, _, model = synthetic
    s = Searcher.from_matrix(path, model, alpha=alpha, fold_lambda2=math.inf, dtype=np.float32)
    counts, tfidf = _queries(N_TERMS, 12, seed=1)
    exact = s.search_vectors(counts, tfidf, k=10)
    for n in (N_DOCS, N_DOCS + 7):
        for a, b in zip(s.search_vectors(counts, tfidf, k=10, candidates=n), exact):
            # float32 topic vectors: the two modes sum the same K products in different kernels, so a cosine
            # near 0 can differ by a few float32 ulps of the unit-scale terms (seen: 3e-9 at 0.002)
            _same(a, b, rtol=1e-6, atol=1e-6)
    full = s.search_vectors(counts[:2], tfidf[:2], k=None, candidates=N_DOCS)
    assert all(len(r) == N_DOCS for r in full)


def test_candidate_mode_on_text_queries_equals_exact_mode(ingested):
    path, corpus, vec, model = ingested
    s = Searcher.from_matrix(path, model, alpha=0.5)
    queries = ["blood pressure", "heart", "zebra"]
    for a, b in zip(s.search_many(queries, k=5, candidates=len(corpus.ids)), s.search_many(queries, k=5)):
        _same(a, b)
    assert s.search("zebra", candidates=10) == []


@pytest.mark.parametrize("n_candidates", [1, 7, 60, None])
def test_candidate_mode_matches_the_plain_numpy_oracle(synthetic, n_candidates):
    path, ref, model = synthetic
    alpha = 0.35
    s = Searcher.from_matrix(path, model, alpha=alpha, fold_lambda2=math.inf)
    counts, tfidf = _queries(N_TERMS, 6, seed=2)
    C = ref.counts.toarray()
    U = model.components_.toarray()  # K x M
    V = np.asarray(ref.X @ U.T)  # the projection folding (fold_lambda2=inf), dense
    got = s.search_vectors(counts, tfidf, k=10, candidates=n_candidates)
    matched = []
    for i in range(counts.shape[0]):
        term = oracle.bm25_scores(C, counts[i].toarray().ravel())
        matched.append(int((term > 0).sum()))
        topic = oracle.cosines(V, tfidf[i].toarray().ravel() @ U.T)
        want = oracle.rank(term, topic, range(N_DOCS), alpha, 10, n_candidates)
        assert [h.doc_id for h in got[i]] == [d for d, _ in want]
        np.testing.assert_allclose([h.score for h in got[i]], [sc for _, sc in want], rtol=1e-9, atol=1e-12)
        for h in got[i]:
            assert h.term_score == pytest.approx(term[int(h.doc_id)], rel=1e-9)
            assert h.topic_score == pytest.approx(topic[int(h.doc_id)], rel=1e-9, abs=1e-12)
    if n_candidates == 7:  # both cases: more matching documents than candidates, and fewer (zeros fill in)
        assert min(matched) < 7 < max(matched)


def test_bad_candidates_and_vectors_are_refused(synthetic):
    path, _, model = synthetic
    s = Searcher.from_matrix(path, model, alpha=0.5)
    counts, tfidf = _queries(N_TERMS, 2, seed=3)
    for bad in (0, -3, 2.5):
        with pytest.raises(RLSIError, match="candidates"):
            s.search_vectors(counts, tfidf, candidates=bad)
    with pytest.raises(RLSIError, match="term columns"):
        s.search_vectors(counts[:, :10], tfidf[:, :10])
    with pytest.raises(RLSIError, match="tf-idf"):
        s.search_vectors(counts)
    with pytest.raises(RLSIError, match="no vectorizer"):
        s.search("anything")  # a synthetic corpus has no vectorizer: text cannot be mapped


# ----------------------------------------------------------------------------------- persistence
def test_saved_index_is_memory_mapped_and_gives_the_same_results(tmp_path, synthetic):
    path, _, model = synthetic
    s = Searcher.from_matrix(path, RidgeFolding(model, math.inf), alpha=0.4, dtype=np.float32)
    counts, tfidf = _queries(N_TERMS, 8, seed=5)
    before = [s.search_vectors(counts, tfidf, k=10, candidates=c) for c in (None, 50)]
    s.save(tmp_path / "idx")
    back = Searcher.load(tmp_path / "idx", mmap=True)
    W = back.term_index_.weights_
    assert W.dtype == np.float32 and back.vectorizer is None
    assert _is_mapped(W.data) and _is_mapped(W.indices) and _is_mapped(back.topic_index_.doc_vectors_)
    after = [back.search_vectors(counts, tfidf, k=10, candidates=c) for c in (None, 50)]
    for x, y in zip(before, after):
        for a, b in zip(x, y):
            _same(a, b)


def test_cli_builds_saves_and_searches_the_index_of_a_matrix(tmp_path, capsys, ingested):
    path, corpus, vec, _ = ingested

    def run(*argv):
        status = main(["-q", *map(str, argv)])
        out, err = capsys.readouterr()
        assert status == 0, err
        return out

    run("fit", "--matrix", path, "-o", tmp_path / "model", "-k", 5, "--max-iter", 2)
    run("index", tmp_path / "model", "--matrix", path)
    fast = run("search", tmp_path / "model", "blood pressure", "--candidates", 2000, "--json")
    exact = run("search", tmp_path / "model", "blood pressure", "--json")
    assert fast == exact  # 2000 candidates cover the corpus (1033 documents)
    # the float32 index of the matrix ranks as the float64 index built from the texts
    from_text = run("search", tmp_path / "model", "blood pressure", "--corpus", demo_corpus_path(), "--json")
    a, b = (json.loads(x)["results"] for x in (fast, from_text))
    assert [h["doc_id"] for h in a] == [h["doc_id"] for h in b]
    np.testing.assert_allclose([h["score"] for h in a], [h["score"] for h in b], rtol=1e-5)


# ----------------------------------------------------------------------------------- kernels
def test_top_n_is_the_sorted_head_with_ties_by_key():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 6, 500).astype(np.float64)  # many ties
    keys = rng.permutation(500)
    full = np.lexsort((keys, -scores))
    for n in (0, 1, 9, 250, 500, 800):
        assert np.array_equal(top_n(scores, keys, n), full[:n])


def test_accumulate_reads_the_posting_lists():
    rng = np.random.default_rng(1)
    W = sp.random(50, 30, density=0.2, random_state=2, format="csc", dtype=np.float32)
    terms = np.array([3, 7, 21])
    weights = rng.random(3)
    out = np.zeros(50)
    accumulate(W.indptr, W.indices, W.data, terms, weights, out)
    np.testing.assert_allclose(out, W.toarray().astype(np.float64)[:, terms] @ weights, rtol=1e-12)


def test_score_postings_lists_each_reached_document_once(synthetic):
    path, ref, model = synthetic
    s = Searcher.from_matrix(path, None, alpha=0.0)
    counts, _ = _queries(N_TERMS, 5, seed=6)
    for i in range(5):
        row, touched = s.term_index_.score_postings(counts[i])
        np.testing.assert_array_equal(row, s.term_index_.score(counts[i])[0])
        reached = np.flatnonzero(np.asarray(ref.counts[:, counts[i].indices].sum(axis=1)).ravel())
        assert len(touched) == len(set(touched.tolist())) and sorted(touched.tolist()) == reached.tolist()


def test_cli_index_of_a_synthetic_matrix_has_no_text_queries(tmp_path, capsys):
    def run(*argv):
        status = main(["-q", *map(str, argv)])
        return status, capsys.readouterr()

    assert run("synth", "--docs", 300, "--terms", 800, "--tokens", 30, "--topics", 5, "--topic-vocab", 60,
               "-o", tmp_path / "m")[0] == 0
    assert run("fit", "--matrix", tmp_path / "m", "-o", tmp_path / "model", "-k", 4, "--max-iter", 2)[0] == 0
    assert run("index", tmp_path / "model", "--matrix", tmp_path / "m")[0] == 0
    back = Searcher.load(tmp_path / "model", mmap=True)
    assert back.n_docs_ == 300 and back.vectorizer is None and back.term_index_.weights_.dtype == np.float32
    status, (out, err) = run("search", tmp_path / "model", "--matrix", tmp_path / "m", "some words")
    assert status != 0 and "no vectorizer" in err and len(err.strip().splitlines()) == 1
    status, (out, err) = run("search", tmp_path / "model", "words", "--save-index")
    assert status != 0 and "--save-index needs --corpus FILE or --matrix DIR" in err
    status, (out, err) = run("index", tmp_path / "model")  # documents to index, or a live index's changes
    assert status == 2 and "give the documents to index" in err and len(err.strip().splitlines()) == 1


def test_synth_and_ingest_store_the_raw_counts(synthetic, ingested):
    path, ref, _ = synthetic
    assert (load_matrix(path).count_matrix() != ref.counts).nnz == 0  # no term is in every document here
    path, corpus, vec, _ = ingested
    expected = vec.transform_counts(corpus.texts)
    got = load_matrix(path).count_matrix()
    assert got.shape == expected.shape and (got != expected).nnz == 0
