"""Choosing a (setting, α) from a :class:`~rlsi.experiments.GridResult`: the two protocols.

* ``"best"`` (the paper's, §8.2, :func:`select_best`): the (setting, α) with the highest mean NDCG@1
  **on the test queries themselves** (ties broken by MAP) — optimistic for NDCG@1, reported for
  comparison with the paper (on a few dozen queries it is also unstable: the chosen setting can be poor
  on the other metrics);
* ``"cv"`` (the honest headline, :func:`cross_validate`): query-level k-fold cross-validation. For each
  fold the (setting, α) with the best mean tuning metric on the other folds is chosen, and the held-out
  queries are scored with it; every query is thus scored by a setting chosen without it. With
  ``n_repeats > 1`` the folds are drawn again with other seeds and each query's held-out score is the
  mean over repeats.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import check_number
from ..errors import RLSIError
from ..evaluation.metrics import get_metric
from .defaults import DEFAULT_CV_TUNE
from .edges import find_edges

__all__ = ["Selection", "select_best", "query_folds", "cross_validate"]


@dataclass
class Selection:
    """Outcome of a protocol for one method: per-query values and the chosen (setting, α) (per fold)."""

    method: str
    label: str
    protocol: str
    per_query: dict            # {metric: {qid: value}}
    chosen: list               # [{"setting": params, "alpha": a, "queries": n}] (one per fold, or one)
    edges: list = field(default_factory=list)   # chosen values on the edge of the grid (see rlsi.experiments.edges)

    def means(self):
        """``{metric: mean over queries}``."""
        return {m: float(np.mean(list(v.values()))) for m, v in self.per_query.items()}


def _criterion(grid, tune, rows):
    """Mean over ``rows`` (query indices) and over the metrics ``tune``: array (settings, alphas)."""
    idx = [grid.metrics.index(get_metric(t).name) for t in tune]
    return grid.values[:, :, idx, :][..., rows].mean(axis=(-1, -2))


def _argbest(crit, tiebreak=None):
    """Best (setting, alpha) of a (settings, alphas) criterion. Ties (within 1e-12) are broken by
    ``tiebreak`` (another criterion array) when given, then by the earlier setting and the smaller α
    (the simpler model)."""
    if crit.size == 0:
        raise RLSIError("cannot select a setting from an empty grid: give at least one value of every parameter")
    tied = crit >= crit.max() - 1e-12
    if tiebreak is not None and tied.sum() > 1:
        second = np.where(tied, tiebreak, -np.inf)
        tied = second >= second.max() - 1e-12
    s, a = np.unravel_index(np.flatnonzero(tied)[0], crit.shape)
    return int(s), int(a)


def _check_tune(tune, grid):
    if isinstance(tune, str):
        tune = (tune,)
    for t in tune:
        if get_metric(t).name not in grid.metrics:
            raise RLSIError(f"tuning metric {t!r} was not evaluated (evaluated: {', '.join(grid.metrics)})")
    return tuple(tune)


def select_best(grid, metric="ndcg@1", tiebreak="map"):
    """The paper's protocol: the (setting, α) with the best mean ``metric`` over all (test) queries.

    NDCG@1 takes few distinct values on a few dozen queries, so many settings tie; ties are broken by
    the mean ``tiebreak`` metric (None: by the earlier setting and the smaller α only).
    """
    tune = _check_tune(metric, grid)
    rows = np.arange(len(grid.query_ids))
    second = None
    if tiebreak is not None and get_metric(tiebreak).name in grid.metrics:
        second = _criterion(grid, (tiebreak,), rows)
    s, a = _argbest(_criterion(grid, tune, rows), second)
    per_query = {m: dict(zip(grid.query_ids, map(float, grid.values[s, a, i])))
                 for i, m in enumerate(grid.metrics)}
    chosen = [{"setting": grid.settings[s], "alpha": grid.alphas[a], "queries": len(rows)}]
    return Selection(grid.method, grid.label, "best", per_query, chosen, find_edges(grid, chosen, "best"))


def query_folds(n_queries, n_folds, seed):
    """Random partition of ``range(n_queries)`` into ``n_folds`` folds of near-equal size (each sorted)."""
    check_number("n_folds", n_folds, low=2, integer=True)
    if n_queries < n_folds:
        raise RLSIError(f"cross-validation needs at least n_folds={n_folds} queries, got {n_queries}")
    perm = np.random.default_rng(seed).permutation(n_queries)
    return [np.sort(f) for f in np.array_split(perm, n_folds)]


def cross_validate(grid, *, n_folds=5, n_repeats=1, tune=DEFAULT_CV_TUNE, seed=0):
    """Query-level k-fold CV: tune (setting, α) on the training folds, score the held-out fold.

    Repeat ``r`` draws its folds with seed ``seed + r``. Returns a :class:`Selection` whose per-query
    values are held-out scores (mean over repeats).
    """
    tune = _check_tune(tune, grid)
    check_number("n_repeats", n_repeats, low=1, integer=True)
    nq = len(grid.query_ids)
    acc = np.zeros((len(grid.metrics), nq))
    chosen = []
    for r in range(n_repeats):
        for f, test in enumerate(query_folds(nq, n_folds, seed + r)):
            train = np.setdiff1d(np.arange(nq), test)
            s, a = _argbest(_criterion(grid, tune, train))
            acc[:, test] += grid.values[s, a][:, test]
            chosen.append({"repeat": r, "fold": f, "setting": grid.settings[s], "alpha": grid.alphas[a],
                           "queries": int(len(test))})
    acc /= n_repeats
    per_query = {m: dict(zip(grid.query_ids, map(float, acc[i]))) for i, m in enumerate(grid.metrics)}
    return Selection(grid.method, grid.label, "cv", per_query, chosen, find_edges(grid, chosen, "cv"))
