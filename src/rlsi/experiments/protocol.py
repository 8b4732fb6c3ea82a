"""The whole comparison on one collection: :func:`run_protocol`."""

from __future__ import annotations

import time

import numpy as np

from .._validation import check_choice
from ..evaluation.metrics import DEFAULT_METRICS, get_metric
from .defaults import (DEFAULT_ALPHAS, DEFAULT_CV_TUNE, DEFAULT_FIT_NORMALIZE, DEFAULT_FOLD_GRID,
                       DEFAULT_K_GRID, DEFAULT_LAMBDA1_GRID)
from .edges import log_edges
from .grid import Experiment
from .methods import MethodSpec, make_methods
from .prepare import prepare_collection
from .report import ProtocolReport
from .selection import cross_validate, select_best

__all__ = ["run_protocol"]


def run_protocol(collection, methods=("lsi", "rlsi"), *, protocols=("cv", "best"), vectorizer=None,
                 prepared=None, k_grid=DEFAULT_K_GRID, lambda1_grid=DEFAULT_LAMBDA1_GRID,
                 fold_grid=DEFAULT_FOLD_GRID, fit_normalize=DEFAULT_FIT_NORMALIZE, alphas=DEFAULT_ALPHAS,
                 term_model="bm25", k1=1.2, b=0.75, topic_norm=None, term_norm=None, metrics=DEFAULT_METRICS,
                 best_metric="ndcg@1", cv_tune=DEFAULT_CV_TUNE, n_folds=5, n_repeats=1, seed=0,
                 random_state=0, test="ttest", keep_scores=False, progress=False, extra=None):
    """Run the whole comparison on one collection; returns a :class:`~rlsi.experiments.ProtocolReport`.

    ``methods``: names of :data:`~rlsi.experiments.METHODS` (or :class:`~rlsi.experiments.MethodSpec`
    objects); ``protocols``: any of ``"cv"`` and ``"best"``. The tuning metrics (``best_metric``,
    ``cv_tune``) are added to ``metrics`` when missing. The defaults are the pipeline of the
    ranking benchmark (``benchmarks/bench_ranking.py``): stemmed tf-idf (:func:`~rlsi.experiments.prepare_collection`),
    RLSI folded in by projection (``fold_grid``), tf-idf models fitted on L2-normalised rows
    (``fit_normalize``), min-max normalisation, 5-fold CV tuned on mean(MAP, NDCG@10). Other parameters:
    see :class:`~rlsi.experiments.Experiment`, :func:`~rlsi.experiments.select_best`,
    :func:`~rlsi.experiments.cross_validate`.
    """
    t0 = time.perf_counter()
    if isinstance(protocols, str):
        protocols = [p for p in protocols.split(",") if p]
    for p in protocols:
        check_choice("protocol", p, ("cv", "best"))
    check_choice("test", test, ("ttest", "randomization"))
    if prepared is None:
        prepared = prepare_collection(collection, vectorizer)
    names = [get_metric(m).name for m in metrics]
    all_metrics = list(names)
    for m in [best_metric, *cv_tune]:
        if get_metric(m).name not in all_metrics:
            all_metrics.append(get_metric(m).name)
    exp = Experiment(prepared, term_model=term_model, k1=k1, b=b, alphas=alphas, topic_norm=topic_norm,
                     term_norm=term_norm, metrics=all_metrics, fit_normalize=fit_normalize,
                     keep_scores=keep_scores, progress=progress)
    if isinstance(methods, str):
        methods = [m for m in methods.split(",") if m.strip()]
    specs = [m if isinstance(m, MethodSpec) else None for m in methods]
    named = [m for m in methods if not isinstance(m, MethodSpec)]
    made = iter(make_methods(named, k_grid=k_grid, lambda1_grid=lambda1_grid, fold_grid=fold_grid,
                             random_state=random_state, extra=extra)) if named else iter(())
    specs = [s if s is not None else next(made) for s in specs]
    base_vals = exp.baseline()
    baseline = {m: dict(zip(prepared.query_ids, map(float, base_vals[m]))) for m in names}
    grids, selections = {}, {p: [] for p in protocols}
    for spec in specs:
        grid = exp.run_method(spec)
        grids[spec.name] = grid
        for p in protocols:
            sel = select_best(grid, best_metric) if p == "best" else cross_validate(
                grid, n_folds=n_folds, n_repeats=n_repeats, tune=cv_tune, seed=seed)
            sel.per_query = {m: sel.per_query[m] for m in names}
            log_edges(sel.edges, prepared.name)
            selections[p].append(sel)
    settings = {"term_model": term_model, "k1": k1, "b": b, "topic_norm": exp.topic_norm,
                "term_norm": exp.term_norm, "alphas": list(exp.alphas), "k_grid": list(k_grid),
                "lambda1_grid": list(lambda1_grid),
                "fold_grid": None if fold_grid is None else [_fold_name(f) for f in fold_grid],
                "fit_normalize": fit_normalize, "best_metric": best_metric, "cv_tune": list(cv_tune),
                "n_folds": n_folds, "n_repeats": n_repeats, "seed": seed, "random_state": random_state,
                "n_docs": prepared.n_docs, "n_queries": prepared.n_queries,
                "n_terms": int(prepared.doc_tfidf.shape[1])}
    label = "BM25" if term_model == "bm25" else "VSM"
    return ProtocolReport(prepared.name, label, names, baseline, selections, grids, settings,
                          time.perf_counter() - t0, test)


def _fold_name(f):
    """A fold λ for the JSON settings: None (the model's own ridge), "inf" (projection) or a float."""
    return None if f is None else ("inf" if not np.isfinite(f) else float(f))
