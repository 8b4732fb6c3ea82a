"""Preparing a collection for the protocol, and its vectorised evaluation against the metrics module."""

import numpy as np
import pytest

from rlsi.datasets import demo_collection_dir
from rlsi.evaluation import evaluate, load_collection, run_from_scores
from rlsi.experiments import evaluate_scores, prepare_collection
from rlsi.retrieval import BM25

METRICS = ("map", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "p@5", "recall@10", "mrr", "ndcg")


def test_prepare_aligns_judgements_with_the_corpus(tiny):
    p = prepare_collection(tiny)
    assert p.n_docs == 10 and p.query_ids == ["1", "2", "3", "4", "5"]
    assert p.doc_tfidf.shape[0] == p.doc_counts.shape[0] == 10
    assert p.query_tfidf.shape == (5, p.doc_tfidf.shape[1])
    # query 2 judges d4, d5, d10 (rel 1, 1, 2) and "missing-doc" (rel 1), which is not in the corpus
    j = {d: i for i, d in enumerate(p.doc_ids)}
    assert p.grades[1, j["d10"]] == 2 and p.grades[1, j["d4"]] == 1 and p.grades[1].sum() == 4
    assert p.ideal[1].tolist() == [2.0, 1.0, 1.0, 1.0]             # the missing document counts in R
    assert p.empty_queries.tolist() == [False, False, False, False, True]   # "zebra" is not in the corpus


def test_evaluate_scores_equals_evaluate_on_a_prepared_collection(tiny):
    p = prepare_collection(tiny)
    rng = np.random.default_rng(3)
    scores = np.round(rng.random((p.n_queries, p.n_docs)), 1)       # ties
    fast = evaluate_scores(p, scores, METRICS)
    ref = evaluate(run_from_scores(scores, p.query_ids, p.doc_ids, depth=None), p.qrels, METRICS)
    for m in METRICS:
        for q in p.query_ids:
            expected = 0.0 if q == "5" else ref[m][q]               # query 5 has no known term: it scores 0
            assert fast[m][q] == pytest.approx(expected, abs=1e-12), (m, q)


def test_med_bm25_matches_metrics_module_and_the_published_table():
    """The packaged MED collection (rlsi.datasets), BM25 with the protocol's default pipeline."""
    coll = load_collection(demo_collection_dir())
    p = prepare_collection(coll)
    S = BM25().fit(p.doc_counts).score(p.query_counts)
    fast = evaluate_scores(p, S, METRICS)
    ref = evaluate(run_from_scores(S, p.query_ids, p.doc_ids, depth=None), coll.qrels, METRICS)
    for m in METRICS:
        for q in p.query_ids:
            assert fast[m][q] == pytest.approx(ref[m][q], abs=1e-12), (m, q)
    # MED is judged binary: IDCG@1 = 1 and DCG@1 = [top document relevant], so NDCG@1 = P@1 per query
    p1 = evaluate_scores(p, S, ["p@1"])["p@1"]
    assert fast["ndcg@1"] == p1
    # The BM25 row and the vocabulary size of MED that benchmarks/bench_ranking.py reports with the same
    # pipeline (stemmed tf-idf, BM25 k1 = 1.2, b = 0.75), 4 decimals
    assert p.doc_tfidf.shape[1] == 9415
    published = {"map": 0.5377, "ndcg@1": 0.8667, "ndcg@3": 0.8078, "ndcg@5": 0.7643, "ndcg@10": 0.6988}
    for m, value in published.items():
        assert np.mean(list(fast[m].values())) == pytest.approx(value, abs=5e-5), m
