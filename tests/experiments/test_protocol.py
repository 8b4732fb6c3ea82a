"""The whole protocol: an end-to-end run on a tiny collection, and a regression run on the packaged MED."""

import json
import math

import numpy as np
import pytest

from rlsi.datasets import demo_collection_dir
from rlsi.evaluation import load_collection
from rlsi.experiments import ProtocolConfig, run_protocol


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
