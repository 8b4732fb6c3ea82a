"""Edge warnings: a tuned optimum on the edge of a grid dimension is reported, an interior one is not."""

import itertools
import json
import logging
import math

import numpy as np
import pytest

from rlsi.experiments import GridResult, ProtocolReport, cross_validate, find_edges, select_best

KS = (10, 20, 30)
LAMBDAS = (0.001, 0.01, 0.1)
FOLDS = (0.1, 1.0, 10.0)
ALPHAS = (0.0, 0.5, 1.0)
QUERIES = [f"q{i}" for i in range(6)]


def _grid(optimum, *, ks=KS, lambdas=LAMBDAS, folds=FOLDS, alphas=ALPHAS):
    """A synthetic table whose (K, λ1, fold λ2, α) optimum is at the grid indices ``optimum``: the value
    of a point falls with its index distance to the optimum, the same for every query and metric."""
    settings, values = [], []
    for i, j, f in itertools.product(range(len(ks)), range(len(lambdas)), range(len(folds))):
        settings.append({"n_components": ks[i], "lambda1": lambdas[j], "fold_lambda2": folds[f],
                         "random_state": 0})
        per_alpha = []
        for a in range(len(alphas)):
            d = abs(i - optimum[0]) + abs(j - optimum[1]) + abs(f - optimum[2]) + abs(a - optimum[3])
            per_alpha.append(np.full((2, len(QUERIES)), 1.0 / (1.0 + d)))
        values.append(per_alpha)
    return GridResult("rlsi", "RLSI", settings, tuple(alphas), ["map", "ndcg@10"], list(QUERIES),
                      np.asarray(values), [0.0] * len(settings))


def _selections(grid):
    return [select_best(grid, "map", tiebreak=None), cross_validate(grid, n_folds=3, tune=("map",))]


def test_interior_optimum_has_no_warning():
    for sel in _selections(_grid((1, 1, 1, 1))):
        assert sel.chosen[0]["setting"]["n_components"] == 20
        assert sel.edges == []


# (dimension index, parameter, edge, grid index, displayed value, direction words)
EDGES = [
    (0, "n_components", "low", 0, "K=10", "smallest", "downward"),
    (0, "n_components", "high", 2, "K=30", "largest", "upward"),
    (1, "lambda1", "low", 0, "λ1=0.001", "smallest", "downward"),
    (1, "lambda1", "high", 2, "λ1=0.1", "largest", "upward"),
    (2, "fold_lambda2", "low", 0, "fold λ2=0.1", "smallest", "downward"),
    (2, "fold_lambda2", "high", 2, "fold λ2=10", "largest", "upward"),
]


@pytest.mark.parametrize("dim,param,edge,index,shown,where,direction", EDGES)
def test_optimum_on_each_edge_warns(dim, param, edge, index, shown, where, direction):
    optimum = [1, 1, 1, 1]
    optimum[dim] = index
    for sel in _selections(_grid(tuple(optimum))):
        assert [(w["parameter"], w["edge"]) for w in sel.edges] == [(param, edge)]
        w = sel.edges[0]
        assert w["method"] == "rlsi" and w["protocol"] == sel.protocol
        assert w["count"] == w["of"] == len(sel.chosen)
        assert w["message"].startswith(f"RLSI: {shown} is the {where} value of the grid: extend it {direction}")


@pytest.mark.parametrize("index,value,meaning", [(0, 0.0, "term score alone"), (2, 1.0, "topic score alone")])
def test_alpha_at_zero_or_one_warns(index, value, meaning):
    for sel in _selections(_grid((1, 1, 1, index))):
        assert [(w["parameter"], w["value"]) for w in sel.edges] == [("alpha", value)]
        assert meaning in sel.edges[0]["message"]


def test_alpha_edge_inside_the_unit_interval_says_extend():
    grid = _grid((1, 1, 1, 2), alphas=(0.2, 0.4, 0.6))
    (w,) = select_best(grid, "map", tiebreak=None).edges
    assert w["parameter"] == "alpha" and "α=0.6 is the largest value of the grid: extend it upward" in w["message"]


def test_single_valued_dimension_is_not_an_edge():
    grid = _grid((0, 0, 0, 0), ks=(50,), lambdas=(0.01,), folds=(1.0,), alphas=(0.3,))
    assert select_best(grid, "map", tiebreak=None).edges == []
    # random_state (constant over the grid) is never reported
    assert all(w["parameter"] != "random_state" for w in select_best(_grid((0, 0, 0, 0)), "map").edges)


def test_unordered_and_infinite_fold_values_are_not_edges():
    grid = _grid((1, 1, 0, 1), folds=(None, 1.0, math.inf))   # optimum at None (the model's own ridge)
    assert select_best(grid, "map", tiebreak=None).edges == []
    grid = _grid((1, 1, 2, 1), folds=(None, 1.0, math.inf))   # optimum at inf (projection: a limit)
    assert select_best(grid, "map", tiebreak=None).edges == []


def test_cv_counts_the_folds_that_chose_the_edge():
    grid = _grid((2, 1, 1, 1))
    # queries q0, q1 prefer K = 10 strongly: folds that train on both of them choose K = 10
    grid.values[[s for s, p in enumerate(grid.settings) if p["n_components"] == 10], :, :, :2] = 5.0
    sel = cross_validate(grid, n_folds=3, tune=("map",))
    n_low = sum(c["setting"]["n_components"] == 10 for c in sel.chosen)
    by = {(w["parameter"], w["edge"]): w for w in sel.edges}
    assert 0 < n_low < len(sel.chosen)
    assert by[("n_components", "low")]["count"] == n_low
    assert by[("n_components", "high")]["count"] == len(sel.chosen) - n_low
    assert f"(chosen in {n_low} of {len(sel.chosen)} folds)" in by[("n_components", "low")]["message"]


def test_find_edges_on_an_explicit_choice():
    grid = _grid((1, 1, 1, 1))
    chosen = [{"setting": grid.settings[-1], "alpha": 1.0}]
    params = {(w["parameter"], w["edge"]) for w in find_edges(grid, chosen, "best")}
    assert params == {("n_components", "high"), ("lambda1", "high"), ("fold_lambda2", "high"), ("alpha", "high")}


def test_report_shows_the_warnings_in_text_markdown_and_json():
    sels = _selections(_grid((2, 0, 1, 1)))
    q = QUERIES
    baseline = {"map": dict.fromkeys(q, 0.1), "ndcg@10": dict.fromkeys(q, 0.1)}
    rep = ProtocolReport("coll", "BM25", ["map", "ndcg@10"], baseline, {"best": [sels[0]], "cv": [sels[1]]})
    text, md = rep.to_text(), rep.to_markdown()
    for out in (text, md):
        assert "RLSI: K=30 is the largest value of the grid: extend it upward" in out
        assert "RLSI: λ1=0.001 is the smallest value of the grid: extend it downward" in out
    assert text.count("warning: RLSI: K=30") == 2        # once per protocol
    data = json.loads(rep.to_json())
    assert {(w["protocol"], w["parameter"], w["edge"]) for w in data["edge_warnings"]} == {
        ("best", "n_components", "high"), ("best", "lambda1", "low"),
        ("cv", "n_components", "high"), ("cv", "lambda1", "low")}
    assert any("K=30" in m for m in data["protocols"]["cv"][1]["edge_warnings"])
    assert data["protocols"]["cv"][0]["edge_warnings"] == []      # the term baseline has no grid


def test_run_protocol_logs_the_warnings(tiny, caplog):
    from rlsi.experiments import ProtocolConfig, run_protocol

    with caplog.at_level(logging.WARNING, logger="rlsi.experiments"):
        rep = run_protocol(tiny, ["lsi"], ProtocolConfig(k_grid=(2, 3), n_folds=2, alphas=(0.0, 0.5, 1.0)))
    warned = rep.edge_warnings()
    assert warned, "K has two values and α three: some chosen value is on an edge"
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for w in warned:
        assert any(w["message"] in m for m in logged)
