"""The experimental protocol: fast metrics = trec_eval-style metrics, selection rules, CV hygiene."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi.errors import RLSIError
from rlsi.evaluation import evaluate, load_collection, run_from_scores
from rlsi.evaluation.collection import Collection
from rlsi.text import Corpus
from rlsi.evaluation.protocol import (GridResult, PreparedCollection, cross_validate, evaluate_scores,
                                      make_methods, prepare_collection, query_folds, run_protocol,
                                      select_best)

from conftest import shared_collection

METRICS = ("map", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "p@5", "recall@10", "mrr", "ndcg")


def _prepared(grades, doc_ids, qids, ideal_extra=None, empty=None):
    nq, nd = grades.shape
    qrels, ideal = {}, []
    for i, q in enumerate(qids):
        judged = {doc_ids[j]: int(grades[i, j]) for j in range(nd) if grades[i, j] != 0}
        judged.update((ideal_extra or {}).get(q, {}))
        qrels[q] = judged
        pos = np.array([r for r in judged.values() if r > 0], dtype=float)
        ideal.append(-np.sort(-pos))
    z = sp.csr_matrix((nq, 1))
    return PreparedCollection("t", list(doc_ids), list(qids), [""] * nq, None, None, z, z,
                              np.maximum(grades, 0).astype(float), ideal,
                              np.zeros(nq, bool) if empty is None else np.asarray(empty), qrels)


def test_fast_metrics_equal_trec_eval_definitions_with_ties_and_missing_docs():
    rng = np.random.default_rng(0)
    nq, nd = 12, 40
    doc_ids = [f"D{rng.integers(0, 10**6)}_{j}" for j in range(nd)]
    qids = [f"q{i}" for i in range(nq)]
    grades = rng.choice([0, 0, 0, 0, 1, 2, 3, -1], size=(nq, nd))
    grades[:, 0] = np.maximum(grades[:, 0], 1)  # every query has a relevant document
    extra = {"q3": {"not-in-corpus": 2}, "q7": {"gone": 1, "gone2": 0}}
    p = _prepared(grades, doc_ids, qids, extra)
    scores = np.round(rng.random((nq, nd)), 1)  # many ties
    scores[5] = 0.0                              # a query whose scores are all tied
    fast = evaluate_scores(p, scores, METRICS)
    ref = evaluate(run_from_scores(scores, qids, doc_ids, depth=None), p.qrels, METRICS)
    for m in METRICS:
        for q in qids:
            assert fast[m][q] == pytest.approx(ref[m][q], abs=1e-12), (m, q)


def test_queries_without_known_terms_score_zero():
    grades = np.array([[1, 0, 2], [0, 1, 0]])
    p = _prepared(grades, ["a", "b", "c"], ["q1", "q2"], empty=[False, True])
    out = evaluate_scores(p, np.array([[3.0, 2.0, 1.0], [0.0, 1.0, 0.0]]))
    assert all(out[m]["q2"] == 0.0 for m in out)
    assert out["map"]["q1"] == pytest.approx((1 + 2 / 3) / 2)


def _grid(values, settings=None):
    n_set, n_alpha, n_metric, nq = values.shape
    return GridResult("m", "M", settings or [{"n_components": i} for i in range(n_set)],
                      tuple(np.linspace(0, 1, n_alpha)), ["map", "ndcg@10", "ndcg@1"][:n_metric],
                      [f"q{i}" for i in range(nq)], values, [0.0] * n_set)


def test_select_best_takes_the_argmax_of_the_paper_metric():
    rng = np.random.default_rng(1)
    values = rng.random((3, 4, 3, 10))
    g = _grid(values)
    sel = select_best(g, "ndcg@1")
    crit = values[:, :, 2].mean(-1)
    s, a = np.unravel_index(np.argmax(crit), crit.shape)
    assert sel.chosen[0]["setting"] == g.settings[s] and sel.chosen[0]["alpha"] == g.alphas[a]
    assert sel.per_query["map"] == dict(zip(g.query_ids, values[s, a, 0]))


def test_cross_validation_never_looks_at_held_out_queries():
    # setting 1 is perfect on query 0 only and useless elsewhere; setting 0 is decent everywhere.
    nq = 10
    values = np.full((2, 2, 3, nq), 0.5)
    values[1, :, :, :] = 0.0
    values[1, :, :, 0] = 50.0   # so large that it wins whenever query 0 is in the training folds
    g = _grid(values)
    sel = cross_validate(g, n_folds=5, tune=("map",), seed=0)
    folds = query_folds(nq, 5, 0)
    held_out_fold = next(i for i, f in enumerate(folds) if 0 in f)
    for c in sel.chosen:
        expected = g.settings[0] if c["fold"] == held_out_fold else g.settings[1]
        assert c["setting"] == expected
    # query 0 is scored by setting 0 (chosen without it): 0.5, never 50
    assert sel.per_query["map"]["q0"] == 0.5


def test_query_folds_partition_and_repeats_average():
    folds = query_folds(23, 5, 3)
    assert sorted(np.concatenate(folds).tolist()) == list(range(23))
    assert {len(f) for f in folds} <= {4, 5}
    with pytest.raises(RLSIError, match="at least"):
        query_folds(3, 5, 0)
    values = np.random.default_rng(0).random((2, 3, 3, 12))
    sel = cross_validate(_grid(values), n_folds=3, n_repeats=4, seed=0)
    assert len(sel.chosen) == 12
    assert all(0 <= v <= 1 for v in sel.per_query["map"].values())


def test_make_methods_grids():
    specs = make_methods("lsi,rlsi", k_grid=(10, 20), lambda1_grid=(0.01, 0.1), fold_grid=(None, math.inf))
    assert [s.name for s in specs] == ["lsi", "rlsi"]
    assert len(specs[0].grid) == 2 and len(specs[1].grid) == 8
    with pytest.raises(RLSIError, match="method"):
        make_methods(["lsa"])


DOCS = [
    ("d1", "aircraft wing flutter at high speed"), ("d2", "airplane wing design and flutter tests"),
    ("d3", "jet aircraft engine noise reduction"), ("d4", "heart disease and blood pressure"),
    ("d5", "cardiac surgery on the heart valves"), ("d6", "blood vessels arteries and the heart"),
    ("d7", "library catalog of books"), ("d8", "books indexing in the library catalog"),
    ("d9", "supersonic aircraft wing loads"), ("d10", "cardiac arrest and heart failure"),
]
QUERIES = {"1": "airplane wing", "2": "cardiac heart", "3": "library books", "4": "aircraft noise",
           "5": "zebra"}
QRELS = {"1": {"d1": 1, "d2": 2, "d9": 1}, "2": {"d4": 1, "d5": 1, "d10": 2, "missing-doc": 1},
         "3": {"d7": 1, "d8": 1}, "4": {"d3": 1}, "5": {"d1": 1}}


def _tiny():
    corpus = Corpus([d for d, _ in DOCS], [t for _, t in DOCS])
    return Collection(corpus, QUERIES, QRELS, "tiny")


def test_run_protocol_end_to_end_on_a_tiny_collection():
    rep = run_protocol(_tiny(), ["lsi", "rlsi"], k_grid=(2, 3), lambda1_grid=(0.05,), fold_grid=(None, math.inf),
                       n_folds=2, alphas=(0.0, 0.5, 1.0), fit_normalize="l2")
    assert set(rep.selections) == {"cv", "best"}
    rows = rep.rows("cv")
    assert [r["method"] for r in rows] == ["BM25", "BM25+LSI", "BM25+RLSI"]
    assert rep.baseline["map"]["5"] == 0.0          # a query with no known term scores 0
    assert 0 < rep.baseline["map"]["2"] < 1         # a relevant document missing from the corpus counts in R
    text = rep.to_text()
    assert "BM25+RLSI" in text and "NDCG@10" in text
    md = rep.to_markdown(show_p=True)
    assert md.count("| BM25+LSI |") == 2 and "p=" in md
    import json

    data = json.loads(rep.to_json())
    assert data["protocols"]["cv"][2]["chosen"][0]["setting"]["n_components"] in (2, 3)
    assert "Infinity" not in rep.to_json()


def test_med_bm25_matches_metrics_module():
    coll = load_collection(shared_collection("med"))
    p = prepare_collection(coll)
    from rlsi.retrieval import BM25

    S = BM25().fit(p.doc_counts).score(p.query_counts)
    fast = evaluate_scores(p, S)
    ref = evaluate(run_from_scores(S, p.query_ids, p.doc_ids, depth=None), coll.qrels)
    for m in fast:
        assert np.mean(list(fast[m].values())) == pytest.approx(np.mean(list(ref[m].values())), abs=1e-12)
    assert 0.45 < np.mean(list(fast["map"].values())) < 0.6
