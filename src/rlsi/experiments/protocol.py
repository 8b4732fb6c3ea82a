"""The whole comparison on one collection: :func:`run_protocol`."""

from __future__ import annotations

import time

from .config import ProtocolConfig
from .edges import log_edges
from .grid import Experiment
from .methods import MethodSpec, make_methods
from .prepare import prepare_collection
from .report import ProtocolReport
from .selection import cross_validate, select_best

__all__ = ["run_protocol"]


def run_protocol(collection, methods=("lsi", "rlsi"), config=None, *, prepared=None, vectorizer=None):
    """Run the whole comparison on one collection; returns a :class:`~rlsi.experiments.ProtocolReport`.

    ``methods``: names of :data:`~rlsi.experiments.METHODS` (or :class:`~rlsi.experiments.MethodSpec`
    objects); ``config``: a :class:`~rlsi.experiments.ProtocolConfig` (None: the defaults). ``prepared``: the
    collection as matrices (:func:`~rlsi.experiments.prepare_collection`), else prepared here with
    ``vectorizer`` (None: the default stemmed tf-idf).
    """
    config = ProtocolConfig() if config is None else config
    if not isinstance(config, ProtocolConfig):
        raise TypeError(f"config must be a ProtocolConfig, not {type(config).__name__}")
    t0 = time.perf_counter()
    if prepared is None:
        prepared = prepare_collection(collection, vectorizer)
    names = config.metric_names
    exp = Experiment(prepared, term_model=config.term_model, k1=config.k1, b=config.b, alphas=config.alphas,
                     topic_norm=config.topic_norm, term_norm=config.term_norm, metrics=config.all_metrics,
                     fit_normalize=config.fit_normalize, keep_scores=config.keep_scores, progress=config.progress)
    if isinstance(methods, str):
        methods = [m for m in methods.split(",") if m.strip()]
    named = [m for m in methods if not isinstance(m, MethodSpec)]
    made = iter(make_methods(named, k_grid=config.k_grid, lambda1_grid=config.lambda1_grid,
                             fold_grid=config.fold_grid, random_state=config.seed, extra=config.extra))
    specs = [m if isinstance(m, MethodSpec) else next(made) for m in methods]
    base_vals = exp.baseline()
    baseline = {m: dict(zip(prepared.query_ids, map(float, base_vals[m]))) for m in names}
    grids, selections = {}, {p: [] for p in config.protocols}
    for spec in specs:
        grid = exp.run_method(spec)
        grids[spec.name] = grid
        for p in config.protocols:
            sel = select_best(grid, config.best_metric) if p == "best" else cross_validate(
                grid, n_folds=config.n_folds, n_repeats=config.n_repeats, tune=config.cv_tune, seed=config.seed)
            sel.per_query = {m: sel.per_query[m] for m in names}
            if config.log_edges:
                log_edges(sel.edges, prepared.name)
            selections[p].append(sel)
    settings = {**config.settings(), "topic_norm": exp.topic_norm, "term_norm": exp.term_norm,
                "n_docs": prepared.n_docs, "n_queries": prepared.n_queries,
                "n_terms": int(prepared.doc_tfidf.shape[1])}
    label = "BM25" if config.term_model == "bm25" else "VSM"
    return ProtocolReport(prepared.name, label, names, baseline, selections, grids, settings,
                          time.perf_counter() - t0, config.test)
