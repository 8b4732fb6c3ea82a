"""Fitting every setting of a method's grid once, and evaluating Eq. 9 at every α per query.

For each setting the model is fitted **once** on the documents; the topic matching scores of every query
against every document are computed once and combined with the (fixed) term matching scores for every α
of the grid (Eq. 9). The result is a table of per-query values ``values[setting, alpha, metric, query]``
(:class:`GridResult`) that the selection rules (:mod:`rlsi.experiments.selection`) and the significance
tests reuse.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.preprocessing import normalize
from tqdm.auto import tqdm

from .._validation import check_choice, check_number
from ..errors import RLSIError
from ..evaluation.metrics import DEFAULT_METRICS
from ..retrieval.combine import DEFAULT_TERM_NORM, DEFAULT_TOPIC_NORM, NORMALIZERS, normalize_scores
from ..retrieval.term import BM25, VSM
from ..retrieval.group_topic import topic_matcher
from ..retrieval.topic import RidgeFolding, model_input
from .defaults import DEFAULT_ALPHAS

__all__ = ["GridResult", "Experiment"]

log = logging.getLogger(__name__)


@dataclass
class GridResult:
    """Per-query values of one method over its grid: ``values[setting, alpha, metric, query]``, an
    array of shape (n_settings, n_alphas, n_metrics, n_queries)."""

    method: str
    label: str
    settings: list
    alphas: tuple
    metrics: list
    query_ids: list
    values: np.ndarray
    fit_seconds: list
    topic_scores: dict = field(default_factory=dict, repr=False)  # setting index -> (nq, nd) float32
    density: list = field(default_factory=list)  # per setting: share of non-zero topic weights (AvgComp)


class Experiment:
    """Topic models on one prepared collection: term scores once, each grid setting fitted once.

    Parameters
    ----------
    prepared : :class:`~rlsi.experiments.PreparedCollection`.
    term_model : "bm25" or "vsm"; k1, b : BM25 parameters (paper: 1.2, 0.75).
    alphas : interpolation grid; topic_norm, term_norm : per-query normalisations (Eq. 9).
    metrics : metric names evaluated per query.
    fit_normalize : None or "l2" — fit tf-idf models (RLSI, LSI, NMF) on L2-normalised document rows, so
        that every document weighs the same in the squared loss (the paper's tf-idf divides by |d|, which
        lets short documents dominate). Folding-in is unaffected: it is linear (or scale-equivariant), so
        the cosines do not depend on the scale of a row.
    keep_scores : keep each setting's topic score matrix (float32) for later analysis.
    progress : show tqdm progress bars.
    """

    def __init__(self, prepared, *, term_model="bm25", k1=1.2, b=0.75, alphas=DEFAULT_ALPHAS,
                 topic_norm=None, term_norm=None, metrics=DEFAULT_METRICS, fit_normalize=None,
                 keep_scores=False, progress=False):
        self.prepared = prepared
        self.term_model = check_choice("term_model", term_model, ("bm25", "vsm"))
        self.k1, self.b = k1, b
        self.alphas = tuple(float(a) for a in alphas)
        for a in self.alphas:
            check_number("alpha", a, low=0.0, high=1.0)
        if not self.alphas:
            raise RLSIError("the alpha grid is empty")
        self.topic_norm = check_choice("topic_norm", topic_norm or DEFAULT_TOPIC_NORM, NORMALIZERS)
        self.term_norm = check_choice("term_norm", term_norm or DEFAULT_TERM_NORM, NORMALIZERS)
        self.metrics = list(metrics)
        self.evaluator = prepared.evaluator(self.metrics)
        self.metric_names = self.evaluator.names
        self.fit_normalize = check_choice("fit_normalize", fit_normalize, (None, "l2"))
        self.keep_scores = keep_scores
        self.progress = progress
        self._term = None
        self._models = {}

    # -- term matching -------------------------------------------------------------------------
    @property
    def term_scores(self):
        """Raw term matching scores ``(n_queries, n_docs)`` (computed once)."""
        if self._term is None:
            p = self.prepared
            if self.term_model == "bm25":
                self._term = BM25(self.k1, self.b).fit(p.doc_counts).score(p.query_counts)
            else:
                self._term = VSM().fit(p.doc_tfidf).score(p.query_tfidf)
        return self._term

    def baseline(self):
        """Per-query values of the term model alone: ``{metric: (n_queries,) array}``."""
        return self.evaluator(self.term_scores)

    # -- topic matching ------------------------------------------------------------------------
    def topic_scores(self, model):
        """Topic cosine ``(n_queries, n_docs)`` of a fitted model (documents and queries folded in)."""
        p = self.prepared
        # group models score by the class of each document (§7.3); the indexed documents are the training ones
        matcher = topic_matcher(model, doc_labels="fit").fit(tfidf=p.doc_tfidf, counts=p.doc_counts)
        return matcher.score(tfidf=p.query_tfidf, counts=p.query_counts)

    def fit_model(self, spec, params):
        """The model of one setting, fitted on the documents (the input kind it expects).

        A ``fold_lambda2`` entry of ``params`` is not passed to the factory: the fitted model is wrapped
        in :class:`~rlsi.retrieval.topic.RidgeFolding` with that λ, and fits are shared between settings
        that differ only by it.
        """
        base = {k: v for k, v in params.items() if k != "fold_lambda2"}
        key = (spec.name, tuple(sorted((k, repr(v)) for k, v in base.items())))
        model = self._models.get(key)
        if model is None:
            model = spec.factory(**base)
            X = model_input(model, tfidf=self.prepared.doc_tfidf, counts=self.prepared.doc_counts)
            if self.fit_normalize == "l2" and getattr(model, "input_kind", "tfidf") == "tfidf":
                X = normalize(X)
            # a grid deliberately includes settings that stop at max_iter or kill topics: the table
            # records how they rank, and one warning per setting would drown the progress output
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X)
            self._models = {key: model}  # keep only the last fit: settings sharing it are adjacent
        if "fold_lambda2" in params:
            model = RidgeFolding(model, params["fold_lambda2"])
        return model

    def evaluate_alphas(self, topic):
        """``values[alpha, metric, query]`` of Eq. 9 for every α, given raw topic scores
        ``(n_queries, n_docs)``."""
        Tn = normalize_scores(topic, self.topic_norm)
        Bn = normalize_scores(self.term_scores, self.term_norm)
        out = np.empty((len(self.alphas), len(self.metric_names), self.prepared.n_queries))
        for a, alpha in enumerate(self.alphas):
            S = Bn if alpha == 0.0 else (Tn if alpha == 1.0 else alpha * Tn + (1.0 - alpha) * Bn)
            vals = self.evaluator(S)
            for m, name in enumerate(self.metric_names):
                out[a, m] = vals[name]
        return out

    def run_method(self, spec):
        """Fit every setting of ``spec`` once and evaluate it at every α: a :class:`GridResult`."""
        values, seconds, kept, density = [], [], {}, []
        bar = None
        if self.progress:
            bar = tqdm(total=len(spec.grid), desc=f"{self.prepared.name or 'collection'} {spec.label}",
                       unit="fit", leave=False)
        for s, params in enumerate(spec.grid):
            t0 = time.perf_counter()
            model = self.fit_model(spec, params)
            topic = self.topic_scores(model)
            seconds.append(time.perf_counter() - t0)
            density.append(_density(model))
            values.append(self.evaluate_alphas(topic))
            if self.keep_scores:
                kept[s] = topic.astype(np.float32)
            log.debug("%s %s: %.1fs", spec.name, params, seconds[-1])
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        return GridResult(spec.name, spec.label, [dict(p) for p in spec.grid], self.alphas, self.metric_names,
                          list(self.prepared.query_ids), np.asarray(values), seconds, kept, density)


def _density(model):
    """Share of non-zero entries of ``components_`` (the paper's topic compactness AvgComp)."""
    comp = getattr(model, "components_", None)
    if comp is None:
        return float("nan")
    nnz = comp.nnz if hasattr(comp, "nnz") else int(np.count_nonzero(comp))
    return float(nnz / max(1, comp.shape[0] * comp.shape[1]))
