"""Selection rules: the paper's best-on-test-queries, and query-level cross-validation (CV hygiene)."""

import numpy as np
import pytest

from rlsi.errors import RLSIError
from rlsi.experiments import GridResult, cross_validate, query_folds, select_best


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


def test_select_best_breaks_ties_by_map_then_by_the_simpler_setting():
    values = np.zeros((2, 2, 3, 4))
    values[:, :, 2] = 1.0                      # NDCG@1 ties everywhere
    values[1, 1, 0] = 0.3                      # MAP breaks the tie: setting 1, alpha 1
    assert select_best(_grid(values), "ndcg@1").chosen[0]["setting"] == {"n_components": 1}
    tied = select_best(_grid(values), "ndcg@1", tiebreak=None).chosen[0]
    assert tied["setting"] == {"n_components": 0} and tied["alpha"] == 0.0


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
    g = _grid(values)
    sel = cross_validate(g, n_folds=3, n_repeats=4, seed=0)
    assert len(sel.chosen) == 12
    # each query's value is the mean of its held-out values over the 4 repeats (fold seeds 0..3)
    expected = np.zeros(12)
    for c in sel.chosen:
        s = g.settings.index(c["setting"])
        a = g.alphas.index(c["alpha"])
        test = query_folds(12, 3, c["repeat"])[c["fold"]]
        expected[test] += values[s, a, 0, test] / 4
    assert np.allclose([sel.per_query["map"][q] for q in g.query_ids], expected, rtol=0, atol=1e-15)


def test_tuning_metric_must_have_been_evaluated():
    with pytest.raises(RLSIError, match="was not evaluated"):
        cross_validate(_grid(np.zeros((1, 1, 2, 4))), n_folds=2, tune=("p@5",))


def test_empty_grid_is_one_clear_error():
    # a sub-grid filtered down to nothing (e.g. no λ1 ≥ 0.01 in a custom λ1 grid) must not end in numpy's
    # "zero-size array" traceback
    empty = _grid(np.zeros((0, 2, 3, 4)), settings=[])
    with pytest.raises(RLSIError, match="empty grid"):
        cross_validate(empty, n_folds=2, n_repeats=1)
    with pytest.raises(RLSIError, match="empty grid"):
        select_best(empty, "ndcg@1")
