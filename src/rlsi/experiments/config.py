"""The settings of one run of the protocol: :class:`ProtocolConfig`, a value :func:`~rlsi.experiments.run_protocol`
takes whole (``dataclasses.replace(config, n_folds=3)`` for a variant)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional

from .._validation import check_choice, check_number
from ..evaluation.metrics import DEFAULT_METRICS, get_metric
from .defaults import (DEFAULT_ALPHAS, DEFAULT_CV_TUNE, DEFAULT_FIT_NORMALIZE, DEFAULT_FOLD_GRID, DEFAULT_K_GRID,
                       DEFAULT_LAMBDA1_GRID)

__all__ = ["ProtocolConfig", "PROTOCOLS", "TESTS"]

#: The protocols: ``"cv"`` tunes on training folds of queries and reports held-out scores; ``"best"`` reports
#: the best setting on the test queries themselves (the paper's, optimistic).
PROTOCOLS = ("cv", "best")
#: One-sided paired significance tests against the term baseline.
TESTS = ("ttest", "randomization")


def _tuple(values):
    return tuple(values) if not isinstance(values, str) else tuple(v for v in values.split(",") if v)


@dataclass(frozen=True)
class ProtocolConfig:
    """Settings of :func:`~rlsi.experiments.run_protocol`; the defaults are the pipeline of
    :mod:`rlsi.experiments.defaults` (stemmed tf-idf, RLSI folded in by projection, tf-idf models fitted on
    L2-normalised rows, min-max normalisation, 5-fold CV tuned on mean(MAP, NDCG@10)).

    Grids: ``k_grid`` (K of every method), ``lambda1_grid`` (RLSI's λ₁ per 1000 documents), ``fold_grid``
    (RLSI folding-in λ: None the model's own, ``inf`` the projection; None for the grid: the method's
    default), ``extra`` (``{method: {parameter: value}}`` added to every setting of that method).
    Ranking: ``alphas`` (Eq. 9's grid), ``term_model`` ("bm25" or "vsm"), ``k1``/``b`` (BM25),
    ``topic_norm``/``term_norm`` (per-query normalisations; None: min-max), ``fit_normalize`` ("l2" or None).
    Selection: ``protocols`` (of :data:`PROTOCOLS`), ``metrics`` reported, ``best_metric`` (the "best"
    protocol's), ``cv_tune`` (the metrics whose mean the "cv" protocol maximises), ``n_folds``,
    ``n_repeats``, ``test`` (of :data:`TESTS`). ``seed``: the seed of the query folds (repeat ``r`` draws
    with ``seed + r``) and the ``random_state`` of every model. ``keep_scores``: keep each setting's topic
    scores; ``progress``: progress bars; ``log_edges``: log each edge warning (:mod:`rlsi.experiments.edges`)
    as the protocol finds it (``rlsi evaluate`` prints them itself, once, after the tables).
    """

    protocols: tuple = PROTOCOLS
    k_grid: tuple = DEFAULT_K_GRID
    lambda1_grid: tuple = DEFAULT_LAMBDA1_GRID
    fold_grid: Optional[tuple] = DEFAULT_FOLD_GRID
    extra: Optional[Mapping] = None
    alphas: tuple = DEFAULT_ALPHAS
    term_model: str = "bm25"
    k1: float = 1.2
    b: float = 0.75
    topic_norm: Optional[str] = None
    term_norm: Optional[str] = None
    fit_normalize: Optional[str] = DEFAULT_FIT_NORMALIZE
    metrics: tuple = DEFAULT_METRICS
    best_metric: str = "ndcg@1"
    cv_tune: tuple = DEFAULT_CV_TUNE
    n_folds: int = 5
    n_repeats: int = 1
    test: str = "ttest"
    seed: int = 0
    keep_scores: bool = False
    progress: bool = False
    log_edges: bool = True

    def __post_init__(self):
        for name in ("protocols", "k_grid", "lambda1_grid", "alphas", "metrics", "cv_tune"):
            object.__setattr__(self, name, _tuple(getattr(self, name)))
        if self.fold_grid is not None:
            object.__setattr__(self, "fold_grid", tuple(self.fold_grid))
        for p in self.protocols:
            check_choice("protocol", p, PROTOCOLS)
        check_choice("test", self.test, TESTS)
        check_choice("term_model", self.term_model, ("bm25", "vsm"))
        check_number("n_folds", self.n_folds, low=2, integer=True)
        check_number("n_repeats", self.n_repeats, low=1, integer=True)
        check_number("seed", self.seed, low=0, integer=True)

    @property
    def metric_names(self):
        """The canonical names of ``metrics`` (the reported ones)."""
        return [get_metric(m).name for m in self.metrics]

    @property
    def all_metrics(self):
        """The metric names evaluated: ``metrics``, then the tuning metrics missing from them."""
        names = self.metric_names
        for m in [self.best_metric, *self.cv_tune]:
            if get_metric(m).name not in names:
                names.append(get_metric(m).name)
        return names

    def settings(self):
        """The settings as JSON values (``inf`` as ``"inf"``), for the report."""
        return {"term_model": self.term_model, "k1": self.k1, "b": self.b, "alphas": list(self.alphas),
                "k_grid": list(self.k_grid), "lambda1_grid": list(self.lambda1_grid),
                "fold_grid": None if self.fold_grid is None else [_fold_name(f) for f in self.fold_grid],
                "fit_normalize": self.fit_normalize, "best_metric": self.best_metric,
                "cv_tune": list(self.cv_tune), "n_folds": self.n_folds, "n_repeats": self.n_repeats,
                "seed": self.seed}


def _fold_name(f):
    """A fold λ for the JSON settings: None (the model's own ridge), "inf" (projection) or a float."""
    return None if f is None else ("inf" if math.isinf(f) else float(f))
