"""The whole protocol: an end-to-end run on a tiny collection, and a regression run on the packaged MED."""

import json
import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from rlsi.datasets import demo_collection_dir
from rlsi.evaluation import load_collection
from rlsi.experiments import MethodSpec, ProtocolConfig, prepare_collection, query_folds, run_protocol


def test_run_protocol_end_to_end_on_a_tiny_collection(tiny):
    rep = run_protocol(tiny, ["lsi", "rlsi"], ProtocolConfig(k_grid=(2, 3), lambda1_grid=(0.05,),
                                                             fold_grid=(None, math.inf), n_folds=2,
                                                             alphas=(0.0, 0.5, 1.0), fit_normalize="l2"))
    assert set(rep.selections) == {"cv", "best"}
    rows = rep.rows("cv")
    assert [r["method"] for r in rows] == ["BM25", "BM25+LSI", "BM25+RLSI"]
    assert rep.baseline["map"]["5"] == 0.0          # a query with no known term scores 0
    assert 0 < rep.baseline["map"]["2"] < 1         # a relevant document missing from the corpus counts in R
    assert rep.grids["rlsi"].values.shape == (4, 3, 5, 5)   # (K, fold) settings x alphas x metrics x queries
    text = rep.to_text()
    assert "BM25+RLSI" in text and "NDCG@10" in text
    md = rep.to_markdown(show_p=True)
    assert md.count("| BM25+LSI |") == 2 and "p=" in md
    data = json.loads(rep.to_json())
    assert data["protocols"]["cv"][2]["chosen"][0]["setting"]["n_components"] in (2, 3)
    assert data["settings"]["fold_grid"] == [None, "inf"]
    assert "Infinity" not in rep.to_json()


# Regression values of exactly the run below on the packaged MED, to 1e-9 (the tolerance only absorbs
# summation-order noise: one document ranked differently moves a mean over 30 queries by far more). The
# ranking figures of benchmarks/bench_ranking.py rest on this pipeline: a change here changes them too.
MED_REGRESSION = {
    ("cv", "BM25"): {"map": 0.5377192912478969, "ndcg@1": 0.8666666666666667, "ndcg@3": 0.8078213121003793,
                     "ndcg@5": 0.7643093771901425, "ndcg@10": 0.6987637150178325},
    ("cv", "BM25+LSI"): {"map": 0.663881350108163, "ndcg@1": 0.8666666666666667, "ndcg@3": 0.8333333333333333,
                         "ndcg@5": 0.7958681006083148, "ndcg@10": 0.7498194044436771},
    ("cv", "BM25+RLSI"): {"map": 0.6476188144330097, "ndcg@1": 0.8333333333333334,
                          "ndcg@3": 0.8275601061647702, "ndcg@5": 0.778079685761432,
                          "ndcg@10": 0.7552633224811872},
    ("best", "BM25+LSI"): {"map": 0.663881350108163, "ndcg@1": 0.8666666666666667,
                           "ndcg@3": 0.8333333333333333, "ndcg@5": 0.7958681006083148,
                           "ndcg@10": 0.7498194044436771},
    ("best", "BM25+RLSI"): {"map": 0.6395139011448675, "ndcg@1": 0.8666666666666667,
                            "ndcg@3": 0.8312852484015171, "ndcg@5": 0.7841545628045314,
                            "ndcg@10": 0.7347572591361765},
}
MED_P_MAP = {("cv", "BM25+LSI"): 3.264859327730902e-07, ("cv", "BM25+RLSI"): 2.401282563604685e-06,
             ("best", "BM25+RLSI"): 1.4917591354584051e-05}
MED_GRID_SUMS = {"lsi": 864.9734022463391, "rlsi": 1705.4404864006174}   # sum of values[s, a, metric, q]
MED_RLSI_DENSITY = [0.32819968135953265, 0.32819968135953265, 0.23473181093998938, 0.23473181093998938]


def test_med_protocol_reproduces_the_pinned_values():
    coll = load_collection(demo_collection_dir())
    rep = run_protocol(coll, ["lsi", "rlsi"], ProtocolConfig(k_grid=(10, 20), lambda1_grid=(0.005,),
                                                             fold_grid=(None, math.inf), alphas=(0.0, 0.3, 0.6, 1.0),
                                                             n_folds=3, n_repeats=2, seed=0))
    rows = {(p, r["method"]): r for p in ("cv", "best") for r in rep.rows(p)}
    for key, means in MED_REGRESSION.items():
        for m, value in means.items():
            assert rows[key]["means"][m] == pytest.approx(value, rel=0, abs=1e-9), (key, m)
    for key, p in MED_P_MAP.items():
        assert rows[key]["p"]["map"] == pytest.approx(p, rel=1e-6), key
    # every fold of both repeats chose K = 20 at α = 0.6; RLSI's CV folds chose the model's own folding-in
    # (fold_lambda2 None) while the paper protocol picked the projection (inf)
    for r in rows[("cv", "BM25+LSI")]["chosen"]:
        assert (r["setting"]["n_components"], r["alpha"]) == (20, 0.6)
    for r in rows[("cv", "BM25+RLSI")]["chosen"]:
        assert (r["setting"]["n_components"], r["setting"]["fold_lambda2"], r["alpha"]) == (20, None, 0.6)
    assert len(rows[("cv", "BM25+RLSI")]["chosen"]) == 6
    best = rows[("best", "BM25+RLSI")]["chosen"][0]
    assert (best["setting"]["n_components"], best["setting"]["fold_lambda2"], best["alpha"]) == (20, math.inf, 0.6)
    for name, total in MED_GRID_SUMS.items():
        assert float(rep.grids[name].values.sum()) == pytest.approx(total, rel=0, abs=1e-9), name
    assert rep.grids["rlsi"].density == pytest.approx(MED_RLSI_DENSITY, rel=0, abs=1e-15)
    assert np.all(np.asarray(rep.grids["lsi"].density) == 1.0)       # LSI topics are dense
    # K = 20, chosen everywhere above, is the largest value of (10, 20): every protocol and method warns;
    # α = 0.6 is interior, λ1 has a single value, and the fold λ (None / inf) is unordered or a limit
    edges = {(w["protocol"], w["method"], w["parameter"], w["edge"], w["count"]) for w in rep.edge_warnings()}
    assert edges == {("cv", "lsi", "n_components", "high", 6), ("cv", "rlsi", "n_components", "high", 6),
                     ("best", "lsi", "n_components", "high", 1), ("best", "rlsi", "n_components", "high", 1)}


class OneTermTopic(BaseEstimator):
    """A one-topic model whose topic is one vocabulary term: a query and a document match (topic cosine 1)
    when both hold the term, else 0 — rankings a reader can work out by hand."""

    def __init__(self, column=0):
        self.column = column

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return (X[:, [self.column]].toarray() > 0).astype(np.float64)


def test_fold_split_and_selection_worked_by_hand(tiny):
    """The protocol on the ten-document collection with three one-term topic models ("wing", "heart",
    "librari") at α = 1 (topic scores alone), tuned and reported on MAP, worked by hand.

    Rankings: documents holding the term first; ties (every other document, and all of a query without the
    term) by docid descending, as trec_eval: d9 d8 d7 d6 d5 d4 d3 d2 d10 d1. Relevant: q1 {d1, d2, d9},
    q2 {d4, d5, d10, one missing from the corpus: R = 4}, q3 {d7, d8}, q4 {d3}; q5 has no known term (0).

    AP          q1                     q2                          q3                q4     q5
    wing        1 (d9 d2 d1 first)     13/60 = (1/5+2/6+3/9)/4     7/12 = (1/2+2/3)/2  1/7    0
    heart       31/60 = (1+2/8+3/10)/3  23/48 = (1/2+2/3+3/4)/4    7/12              1/7    0
    librari     31/60                  13/60                       1 (d8 d7 first)   1/7    0

    Folds (seed 0): default_rng(0).permutation(5) = [2, 4, 3, 0, 1], split in two ([2, 4, 3], [0, 1]; the
    first fold takes the odd query), each sorted: fold 0 = {q3, q4, q5}, fold 1 = {q1, q2}.
    Fold 0 held out: trained on q1, q2, mean MAP wing 0.608, heart 0.498, librari 0.367 → wing scores q3,
    q4, q5 (7/12, 1/7, 0). Fold 1 held out: trained on q3, q4, q5, wing = heart = 0.242 < librari 0.381 →
    librari scores q1, q2 (31/60, 13/60): neither query is scored by the setting that is best on it.
    CV MAP = (31/60 + 13/60 + 7/12 + 1/7 + 0) / 5 = 613/2100. The paper's protocol picks the best mean
    MAP on all queries: wing, (1 + 13/60 + 7/12 + 1/7) / 5 = 0.3886 (heart 0.3444, librari 0.3752).
    BM25 alone: q1, q3, q4 1 (their relevant documents hold the query terms and rank first), q2 11/16 (d5 and d10 hold both terms; d4 and d6 hold "heart" with the same length, so
    d6 ranks before d4: (1 + 1 + 3/4)/4), q5 0.
    """
    prepared = prepare_collection(tiny)
    vocab = list(prepared.vectorizer.get_feature_names_out())
    spec = MethodSpec("oneterm", "ONE", lambda term: OneTermTopic(vocab.index(term)),
                      [{"term": "wing"}, {"term": "heart"}, {"term": "librari"}])
    assert [f.tolist() for f in query_folds(5, 2, 0)] == [[2, 3, 4], [0, 1]]
    rep = run_protocol(tiny, [spec], ProtocolConfig(alphas=(1.0,), n_folds=2, seed=0, best_metric="map",
                                                    cv_tune=("map",)), prepared=prepared)
    assert prepared.query_ids == ["1", "2", "3", "4", "5"]
    wing, heart, librari = [1, 13 / 60, 7 / 12, 1 / 7, 0], [31 / 60, 23 / 48, 7 / 12, 1 / 7, 0], \
        [31 / 60, 13 / 60, 1, 1 / 7, 0]
    np.testing.assert_allclose(rep.grids["oneterm"].values[:, 0, 0], [wing, heart, librari], rtol=0, atol=1e-15)
    assert list(rep.baseline["map"].values()) == pytest.approx([1, 11 / 16, 1, 1, 0], abs=1e-15)
    cv = {r["method"]: r for r in rep.rows("cv")}["BM25+ONE"]
    assert [(c["fold"], c["setting"]["term"], c["queries"]) for c in cv["chosen"]] == [(0, "wing", 3),
                                                                                       (1, "librari", 2)]
    held_out = rep.selections["cv"][0].per_query["map"]
    assert list(held_out.values()) == pytest.approx([31 / 60, 13 / 60, 7 / 12, 1 / 7, 0], abs=1e-15)
    assert cv["means"]["map"] == pytest.approx(613 / 2100, abs=1e-15)
    best = {r["method"]: r for r in rep.rows("best")}["BM25+ONE"]
    assert best["chosen"][0]["setting"]["term"] == "wing"
    assert best["means"]["map"] == pytest.approx(np.mean(wing), abs=1e-15)
