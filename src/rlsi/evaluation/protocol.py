"""The experimental protocol of the TOIS comparison (§8.2) as a reusable runner.

For each topic-modelling method and each setting of its grid (K, and λ₁ for RLSI), the model is fitted
**once** on the documents; the topic matching scores of every query against every document are computed
once and combined with the (fixed) term matching scores for every α of the grid (Eq. 9). Every
(setting, α) is evaluated per query, so that both protocols below, and any significance test, reuse the
same table of per-query values.

Two protocols select a setting from that table:

* ``"best"`` (the paper's, §8.2): the (setting, α) with the highest mean NDCG@1 **on the test queries
  themselves** (ties broken by MAP) — optimistic for NDCG@1, reported for comparison with the paper (on
  a few dozen queries it is also unstable: the chosen setting can be poor on the other metrics);
* ``"cv"`` (the honest headline): query-level k-fold cross-validation. For each fold the (setting, α) with
  the best mean tuning metric on the other folds is chosen, and the held-out queries are scored with it;
  every query is thus scored by a setting chosen without it. With ``n_repeats > 1`` the folds are drawn
  again with other seeds and each query's held-out score is the mean over repeats. The term baseline has
  no parameter and is scored as it is.

Per-query values are returned for the paired tests of :mod:`rlsi.evaluation.significance`.

The defaults (stemming, L2-normalised rows when fitting tf-idf models, projection folding-in for RLSI,
min-max score normalisation, the λ₁ grid, tuning on mean(MAP, NDCG@10)) are the pipeline measured in
``benchmarks/results/ranking.md``, where the evidence for each choice is given.

Evaluation is vectorised over the whole document ranking (no depth cut-off), with trec_eval's
conventions (:mod:`rlsi.evaluation.metrics`: ties broken by document id descending, linear gains, IDCG over
all judged documents, relevant documents missing from the corpus counted in R). A query none of whose
terms is in the vocabulary retrieves nothing and scores 0, as a query missing from a run does in trec_eval.
:func:`evaluate_scores` is tested against :func:`rlsi.evaluation.metrics.evaluate` for parity.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_choice, check_number
from ..errors import RLSIError
from .metrics import DEFAULT_METRICS, get_metric
from .significance import paired_ttest, randomization_test

__all__ = ["PreparedCollection", "prepare_collection", "evaluate_scores", "MethodSpec", "METHODS",
           "make_methods", "GridResult", "Experiment", "Selection", "select_best", "cross_validate",
           "ProtocolReport", "run_protocol", "query_folds", "DEFAULT_ALPHAS", "DEFAULT_K_GRID",
           "DEFAULT_LAMBDA1_GRID", "DEFAULT_FOLD_GRID", "DEFAULT_FIT_NORMALIZE", "DEFAULT_STEMMER",
           "DEFAULT_CV_TUNE"]

log = logging.getLogger(__name__)

#: α from 0 to 1 in steps of 0.05 (§8.2).
DEFAULT_ALPHAS = tuple(round(0.05 * i, 2) for i in range(21))
#: Number of topics (the paper's range [10, 50]).
DEFAULT_K_GRID = (10, 20, 30, 40, 50)
#: λ₁ of BatchRLSI on its per-thousand-documents scale (``lambda1_scale="per_doc"``); see the benchmark.
DEFAULT_LAMBDA1_GRID = (0.001, 0.002, 0.005, 0.01, 0.02)
#: RLSI folding-in searched by default: the projection ``v = Uᵀx`` (:class:`~rlsi.retrieval.topic.RidgeFolding`
#: with λ = inf); ``None`` would be the model's own ridge with its λ₂ (see the benchmark's ablation).
DEFAULT_FOLD_GRID = (math.inf,)
#: Fit tf-idf topic models on L2-normalised document rows by default (see :class:`Experiment`).
DEFAULT_FIT_NORMALIZE = "l2"
#: Stemmer of the default vectorizer used by the benchmark and ``rlsi evaluate``.
DEFAULT_STEMMER = "english"
#: Metric maximised on the training folds by the cross-validated protocol (mean of the listed metrics).
DEFAULT_CV_TUNE = ("map", "ndcg@10")


# ----------------------------------------------------------------------------------- preparation
@dataclass
class PreparedCollection:
    """A collection turned into matrices: documents and evaluated queries as tf-idf and counts, and
    the judgements aligned with the document columns."""

    name: str
    doc_ids: list
    query_ids: list
    query_texts: list
    doc_tfidf: object
    doc_counts: object
    query_tfidf: object
    query_counts: object
    grades: np.ndarray            # (n_queries, n_docs) grades of the corpus documents, clipped at 0
    ideal: list                   # per query: positive grades of all judged documents, sorted descending
    empty_queries: np.ndarray     # (n_queries,) bool: no query term in the vocabulary
    qrels: dict
    vectorizer: object = None
    doc_texts: list = field(default=None, repr=False)

    @property
    def n_queries(self):
        return len(self.query_ids)

    @property
    def n_docs(self):
        return len(self.doc_ids)


def prepare_collection(collection, vectorizer=None, *, fit_vectorizer=True):
    """Vectorise a :class:`~rlsi.evaluation.collection.Collection` for the protocol.

    ``vectorizer``: an :class:`rlsi.text.TfidfVectorizer` (default: English stop words and the
    :data:`DEFAULT_STEMMER` stemmer);
    it is fitted on the documents unless ``fit_vectorizer=False``. Evaluated queries are those of the
    qrels with a relevant document (:attr:`Collection.evaluated_queries`); one without text in the
    queries file is kept with empty text (it scores 0).
    """
    from ..text import TfidfVectorizer

    if vectorizer is None:
        vectorizer = TfidfVectorizer(stemmer=DEFAULT_STEMMER, norm=None)  # rows normalised by fit_normalize
    doc_ids = [str(d) for d in collection.corpus.ids]
    texts = list(collection.corpus.texts)
    if fit_vectorizer:
        vectorizer.fit(texts)
    doc_tfidf = vectorizer.transform(texts)
    doc_counts = vectorizer.transform_counts(texts)
    qids = [str(q) for q in collection.evaluated_queries]
    if not qids:
        raise RLSIError("the collection has no query with a relevant (rel > 0) judgement; nothing to evaluate")
    missing = [q for q in qids if q not in collection.queries]
    if missing:
        log.warning("%d judged queries have no text (e.g. %s); they score 0", len(missing), missing[:5])
    qtexts = [collection.queries.get(q, "") for q in qids]
    q_tfidf = vectorizer.transform(qtexts)
    q_counts = vectorizer.transform_counts(qtexts)
    col = {d: j for j, d in enumerate(doc_ids)}
    grades = np.zeros((len(qids), len(doc_ids)))
    ideal = []
    for i, q in enumerate(qids):
        judged = collection.qrels[q]
        for d, rel in judged.items():
            j = col.get(str(d))
            if j is not None and rel > 0:
                grades[i, j] = rel
        pos = np.array([r for r in judged.values() if r > 0], dtype=np.float64)
        ideal.append(-np.sort(-pos))
    empty = np.diff(q_counts.indptr) == 0
    return PreparedCollection(getattr(collection, "name", ""), doc_ids, qids, qtexts, doc_tfidf, doc_counts,
                              q_tfidf, q_counts, grades, ideal, empty, collection.qrels, vectorizer, texts)


# ----------------------------------------------------------------------------------- fast metrics
class _Evaluator:
    """Vectorised trec_eval-style metrics for dense score matrices over one prepared collection."""

    def __init__(self, prepared, metrics):
        self.metrics = [get_metric(m) for m in metrics]
        self.names = [m.name for m in self.metrics]
        for m in self.metrics:
            if m.base not in ("map", "ndcg", "p", "recall", "mrr"):
                raise RLSIError(f"metric {m.name!r} is not supported by the protocol")
        ids = np.asarray(prepared.doc_ids, dtype=str)
        # columns in trec_eval tie order (doc id descending): a stable sort on -score keeps that order
        self.perm = np.argsort(ids, kind="stable")[::-1].copy()
        self.grades = prepared.grades[:, self.perm]
        self.n_rel = np.array([len(x) for x in prepared.ideal], dtype=np.float64)
        self.empty = prepared.empty_queries
        n = self.grades.shape[1]
        self.disc = 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))
        self.idcg = {}
        for m in self.metrics:
            if m.base == "ndcg" and m.k not in self.idcg:
                self.idcg[m.k] = np.array([float(x[:m.k] @ (1.0 / np.log2(np.arange(2, len(x[:m.k]) + 2))))
                                           for x in prepared.ideal])

    def __call__(self, scores):
        """``{metric: (n_queries,) array}`` for a ``(n_queries, n_docs)`` score matrix."""
        # trec_eval compares scores in single precision: near-ties within float32 rounding are ties
        S = np.asarray(scores, dtype=np.float32)[:, self.perm]
        order = np.argsort(-S, axis=1, kind="stable")
        G = np.take_along_axis(self.grades, order, axis=1)
        hits = G > 0
        out = {}
        with np.errstate(invalid="ignore", divide="ignore"):
            for m in self.metrics:
                if m.base == "map":
                    cum = np.cumsum(hits, axis=1)
                    prec = cum / np.arange(1, G.shape[1] + 1)
                    v = np.where(self.n_rel > 0, (prec * hits).sum(axis=1) / self.n_rel, 0.0)
                elif m.base == "ndcg":
                    k = G.shape[1] if m.k is None else min(m.k, G.shape[1])
                    dcg = G[:, :k] @ self.disc[:k]
                    idcg = self.idcg[m.k]
                    v = np.where(idcg > 0, dcg / idcg, 0.0)
                elif m.base == "p":
                    v = np.where(self.n_rel > 0, hits[:, :m.k].sum(axis=1) / m.k, 0.0)
                elif m.base == "recall":
                    v = np.where(self.n_rel > 0, hits[:, :m.k].sum(axis=1) / self.n_rel, 0.0)
                else:  # mrr
                    first = np.argmax(hits, axis=1)
                    v = np.where(hits.any(axis=1), 1.0 / (first + 1.0), 0.0)
                v = np.where(self.empty, 0.0, v)
                out[m.name] = v
        return out


def evaluate_scores(prepared, scores, metrics=DEFAULT_METRICS):
    """Per-query metrics ``{metric: {qid: value}}`` of a ``(n_queries, n_docs)`` score matrix."""
    ev = _Evaluator(prepared, metrics)
    values = ev(scores)
    return {name: dict(zip(prepared.query_ids, map(float, values[name]))) for name in ev.names}


# ----------------------------------------------------------------------------------- methods
@dataclass
class MethodSpec:
    """A topic-modelling method: a display ``label``, a ``factory(**params) -> model`` and a grid."""

    name: str
    label: str
    factory: object
    grid: list

    def __post_init__(self):
        if not self.grid:
            raise RLSIError(f"method {self.name!r} has an empty parameter grid")


def _rlsi_factory(topic_penalty, doc_penalty):
    def make(n_components, lambda1, lambda2=1.0, random_state=0, max_iter=100, n_jobs=None):
        from ..models import BatchRLSI

        return BatchRLSI(n_components, lambda1=lambda1, lambda2=lambda2, topic_penalty=topic_penalty,
                         doc_penalty=doc_penalty, max_iter=max_iter, random_state=random_state, n_jobs=n_jobs)
    return make


def _baseline_factory(name):
    def make(n_components, random_state=0, **params):
        from ..models.baselines import BASELINES

        return BASELINES[name](n_components, random_state=random_state, **params)
    return make


#: name -> (label, factory, uses λ₁). "rlsi" is RLSI (Uℓ1-Vℓ2); the other variants follow §8.2.1.
METHODS = {
    "rlsi": ("RLSI", _rlsi_factory("l1", "l2"), True),
    "rlsi-l2l1": ("RLSI (Ul2-Vl1)", _rlsi_factory("l2", "l1"), True),
    "rlsi-l1l1": ("RLSI (Ul1-Vl1)", _rlsi_factory("l1", "l1"), True),
    "rlsi-l2l2": ("RLSI (Ul2-Vl2)", _rlsi_factory("l2", "l2"), True),
    "lsi": ("LSI", _baseline_factory("lsi"), False),
    "plsi": ("PLSI", _baseline_factory("plsi"), False),
    "lda": ("LDA", _baseline_factory("lda"), False),
    "nmf": ("NMF", _baseline_factory("nmf"), False),
}


def make_methods(names, *, k_grid=DEFAULT_K_GRID, lambda1_grid=DEFAULT_LAMBDA1_GRID, fold_grid=None,
                 random_state=0, extra=None):
    """:class:`MethodSpec` list for method names (keys of :data:`METHODS`), with the K and λ₁ grids.

    ``fold_grid``: optional folding-in λ values for the RLSI variants (``None`` = the model's own ridge
    with its λ₂, ``inf`` = projection; see :class:`~rlsi.retrieval.topic.RidgeFolding`), a grid dimension.
    ``extra``: optional ``{name: {param: value}}`` added to every setting of that method.
    """
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    specs = []
    for name in names:
        name = name.strip().lower()
        check_choice("method", name, METHODS)
        label, factory, uses_lambda = METHODS[name]
        base = {"random_state": random_state, **((extra or {}).get(name, {}))}
        if uses_lambda:
            folds = [None] if fold_grid is None else list(fold_grid)
            grid = [{"n_components": int(k), "lambda1": float(l1), **base,
                     **({} if fold_grid is None else {"fold_lambda2": f})}
                    for k in k_grid for l1 in lambda1_grid for f in folds]
        else:
            grid = [{"n_components": int(k), **base} for k in k_grid]
        specs.append(MethodSpec(name, label, factory, grid))
    return specs


# ----------------------------------------------------------------------------------- the grid
@dataclass
class GridResult:
    """Per-query values of one method over its grid: ``values[setting, alpha, metric, query]``."""

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

    def mean(self, metric):
        return self.values[:, :, self.metrics.index(metric), :].mean(axis=-1)


class Experiment:
    """Topic models on one prepared collection: term scores once, each grid setting fitted once.

    Parameters
    ----------
    prepared : :class:`PreparedCollection`.
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
        from ..retrieval.combine import DEFAULT_TERM_NORM, DEFAULT_TOPIC_NORM, NORMALIZERS

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
        self.evaluator = _Evaluator(prepared, self.metrics)
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
            from ..retrieval.term import BM25, VSM

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
        from ..retrieval.topic import TopicMatcher

        p = self.prepared
        matcher = TopicMatcher(model).fit(tfidf=p.doc_tfidf, counts=p.doc_counts)
        return matcher.score(tfidf=p.query_tfidf, counts=p.query_counts)

    def fit_model(self, spec, params):
        """The model of one setting, fitted on the documents (the input kind it expects).

        A ``fold_lambda2`` entry of ``params`` is not passed to the factory: the fitted model is wrapped
        in :class:`~rlsi.retrieval.topic.RidgeFolding` with that λ, and fits are shared between settings
        that differ only by it.
        """
        from ..retrieval.topic import RidgeFolding, model_input

        base = {k: v for k, v in params.items() if k != "fold_lambda2"}
        key = (spec.name, tuple(sorted((k, repr(v)) for k, v in base.items())))
        model = self._models.get(key)
        if model is None:
            model = spec.factory(**base)
            X = model_input(model, tfidf=self.prepared.doc_tfidf, counts=self.prepared.doc_counts)
            if self.fit_normalize == "l2" and getattr(model, "input_kind", "tfidf") == "tfidf":
                from sklearn.preprocessing import normalize

                X = normalize(X)
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X)
            self._models = {key: model}  # keep only the last fit: settings sharing it are adjacent
        if "fold_lambda2" in params:
            model = RidgeFolding(model, params["fold_lambda2"])
        return model

    def evaluate_alphas(self, topic):
        """``values[alpha, metric, query]`` of Eq. 9 for every α, given raw topic scores."""
        from ..retrieval.combine import normalize_scores

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
            from tqdm.auto import tqdm

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


# ----------------------------------------------------------------------------------- selection
@dataclass
class Selection:
    """Outcome of a protocol for one method: per-query values and the chosen (setting, α) (per fold)."""

    method: str
    label: str
    protocol: str
    per_query: dict            # {metric: {qid: value}}
    chosen: list               # [{"setting": params, "alpha": a, "queries": n}] (one per fold, or one)

    def means(self):
        return {m: float(np.mean(list(v.values()))) for m, v in self.per_query.items()}


def _criterion(grid, tune, rows):
    """Mean over ``rows`` (query indices) and over the metrics ``tune``: array (settings, alphas)."""
    idx = [grid.metrics.index(get_metric(t).name) for t in tune]
    return grid.values[:, :, idx, :][..., rows].mean(axis=(-1, -2))


def _argbest(crit, grid, tiebreak=None):
    """Best (setting, alpha). Ties (within 1e-12) are broken by ``tiebreak`` (another criterion array)
    when given, then by the earlier setting and the smaller α (the simpler model)."""
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
    s, a = _argbest(_criterion(grid, tune, rows), grid, second)
    per_query = {m: dict(zip(grid.query_ids, map(float, grid.values[s, a, i])))
                 for i, m in enumerate(grid.metrics)}
    return Selection(grid.method, grid.label, "best", per_query,
                     [{"setting": grid.settings[s], "alpha": grid.alphas[a], "queries": len(rows)}])


def query_folds(n_queries, n_folds, seed):
    """Random partition of ``range(n_queries)`` into ``n_folds`` folds of near-equal size."""
    check_number("n_folds", n_folds, low=2, integer=True)
    if n_queries < n_folds:
        raise RLSIError(f"cross-validation needs at least n_folds={n_folds} queries, got {n_queries}")
    perm = np.random.default_rng(seed).permutation(n_queries)
    return [np.sort(f) for f in np.array_split(perm, n_folds)]


def cross_validate(grid, *, n_folds=5, n_repeats=1, tune=DEFAULT_CV_TUNE, seed=0):
    """Query-level k-fold CV: tune (setting, α) on the training folds, score the held-out fold.

    Returns a :class:`Selection` whose per-query values are held-out scores (mean over repeats).
    """
    tune = _check_tune(tune, grid)
    check_number("n_repeats", n_repeats, low=1, integer=True)
    nq = len(grid.query_ids)
    acc = np.zeros((len(grid.metrics), nq))
    chosen = []
    for r in range(n_repeats):
        for f, test in enumerate(query_folds(nq, n_folds, seed + r)):
            train = np.setdiff1d(np.arange(nq), test)
            s, a = _argbest(_criterion(grid, tune, train), grid)
            acc[:, test] += grid.values[s, a][:, test]
            chosen.append({"repeat": r, "fold": f, "setting": grid.settings[s], "alpha": grid.alphas[a],
                           "queries": int(len(test))})
    acc /= n_repeats
    per_query = {m: dict(zip(grid.query_ids, map(float, acc[i]))) for i, m in enumerate(grid.metrics)}
    return Selection(grid.method, grid.label, "cv", per_query, chosen)


# ----------------------------------------------------------------------------------- report
def _test(a, b, test):
    qids = list(a)
    x = np.array([a[q] for q in qids])
    y = np.array([b[q] for q in qids])
    if test == "randomization":
        return randomization_test(x, y, alternative="greater")[1]
    return paired_ttest(x, y, alternative="greater")[1]


@dataclass
class ProtocolReport:
    """Results of :func:`run_protocol` for one collection: rows per protocol, with p-values."""

    collection: str
    baseline_label: str
    metrics: list
    baseline: dict                    # {metric: {qid: value}}
    selections: dict                  # protocol -> [Selection]
    grids: dict = field(default_factory=dict, repr=False)   # method -> GridResult
    settings: dict = field(default_factory=dict)
    seconds: float = 0.0
    test: str = "ttest"

    def p_values(self, selection, against=None):
        """One-sided p-values (A > B) of ``selection`` against the baseline (or another per-query dict)."""
        ref = self.baseline if against is None else against
        return {m: _test(selection.per_query[m], ref[m], self.test) for m in self.metrics}

    def rows(self, protocol):
        """Table rows: ``{"method", "means": {metric: mean}, "p": {metric: p}, "chosen": [...]}``."""
        base_means = {m: float(np.mean(list(v.values()))) for m, v in self.baseline.items()}
        out = [{"method": self.baseline_label, "means": base_means, "p": None, "chosen": None}]
        for sel in self.selections.get(protocol, []):
            out.append({"method": f"{self.baseline_label}+{sel.label}", "means": sel.means(),
                        "p": self.p_values(sel), "chosen": sel.chosen})
        return out

    def to_markdown(self, protocols=None, level=0.05, show_p=False):
        """Markdown tables (one per protocol): Method x metrics, ``*`` for p < level vs the baseline,
        the best value of each column in bold."""
        parts = []
        for protocol in protocols or list(self.selections):
            rows = self.rows(protocol)
            title = {"best": "best setting by NDCG@1 on the test queries (paper protocol)",
                     "cv": "query-level cross-validation (held-out scores)"}.get(protocol, protocol)
            parts.append(f"**{self.collection}** — {title}\n")
            parts.append(_markdown_table(rows, self.metrics, level, show_p))
        return "\n".join(parts)

    def to_text(self, protocols=None, level=0.05):
        """Plain-text tables for the terminal."""
        parts = []
        for protocol in protocols or list(self.selections):
            rows = self.rows(protocol)
            parts.append(f"{self.collection} — protocol: {protocol} (* p < {level} vs {self.baseline_label}, "
                         f"one-sided paired {'t-test' if self.test == 'ttest' else 'randomization test'})")
            width = max(len(r["method"]) for r in rows) + 2
            parts.append("Method".ljust(width) + "".join(f"{m.upper():>10}" for m in self.metrics))
            for r in rows:
                cells = []
                for m in self.metrics:
                    star = "*" if r["p"] is not None and r["p"][m] < level else " "
                    cells.append(f"{r['means'][m]:9.4f}{star}")
                parts.append(r["method"].ljust(width) + "".join(cells))
            parts.append("")
        return "\n".join(parts)

    def to_dict(self):
        out = {"collection": self.collection, "baseline": self.baseline_label, "metrics": self.metrics,
               "test": self.test, "settings": self.settings, "seconds": round(self.seconds, 2), "protocols": {}}
        for protocol in self.selections:
            rows = self.rows(protocol)
            sels = [None] + self.selections[protocol]
            out["protocols"][protocol] = [
                {"method": r["method"], "means": r["means"], "p_values": r["p"], "chosen": r["chosen"],
                 "per_query": (self.baseline if s is None else s.per_query)}
                for r, s in zip(rows, sels)]
        return out

    def to_json(self, **kwargs):
        return json.dumps(_finite(self.to_dict()), indent=1, default=_json_default, allow_nan=False, **kwargs)


def _fold_name(f):
    return None if f is None else ("inf" if not np.isfinite(f) else float(f))


def _finite(o):
    """Replace infinite floats (a projection fold λ) by the string "inf" so the JSON is strict."""
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    if isinstance(o, (float, np.floating)) and math.isinf(o):
        return "inf" if o > 0 else "-inf"
    return o


def _json_default(o):
    if isinstance(o, np.generic):
        o = o.item()
        return "inf" if isinstance(o, float) and math.isinf(o) else o
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"{type(o).__name__} is not JSON serialisable")


def _markdown_table(rows, metrics, level, show_p):
    head = "| Method | " + " | ".join(m.upper() if m == "map" else m.replace("ndcg", "NDCG") for m in metrics) + " |"
    sep = "|---|" + "---:|" * len(metrics)
    best = {m: max(r["means"][m] for r in rows) for m in metrics}
    lines = [head, sep]
    for r in rows:
        cells = []
        for m in metrics:
            v = r["means"][m]
            text = f"{v:.4f}"
            if r["p"] is not None and r["p"][m] < level:
                text += " *"
            if show_p and r["p"] is not None:
                text += f" (p={_fmt_p(r['p'][m])})"
            if math.isclose(v, best[m], abs_tol=1e-12):
                text = f"**{text}**"
            cells.append(text)
        lines.append(f"| {r['method']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _fmt_p(p):
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def run_protocol(collection, methods=("lsi", "rlsi"), *, protocols=("cv", "best"), vectorizer=None,
                 prepared=None, k_grid=DEFAULT_K_GRID, lambda1_grid=DEFAULT_LAMBDA1_GRID,
                 fold_grid=DEFAULT_FOLD_GRID, fit_normalize=DEFAULT_FIT_NORMALIZE, alphas=DEFAULT_ALPHAS,
                 term_model="bm25", k1=1.2, b=0.75, topic_norm=None, term_norm=None, metrics=DEFAULT_METRICS,
                 best_metric="ndcg@1", cv_tune=DEFAULT_CV_TUNE, n_folds=5, n_repeats=1, seed=0,
                 random_state=0, test="ttest", keep_scores=False, progress=False, extra=None):
    """Run the whole comparison on one collection; returns a :class:`ProtocolReport`.

    ``methods``: names of :data:`METHODS` (or :class:`MethodSpec` objects); ``protocols``: any of
    ``"cv"`` and ``"best"``. The tuning metrics (``best_metric``, ``cv_tune``) are added to ``metrics``
    when missing. The defaults are the pipeline of ``benchmarks/results/ranking.md``: stemmed tf-idf
    (:func:`prepare_collection`), RLSI folded in by projection (``fold_grid``), tf-idf models fitted on
    L2-normalised rows (``fit_normalize``), min-max normalisation, 5-fold CV tuned on mean(MAP, NDCG@10). Other parameters: see :class:`Experiment`, :func:`select_best`, :func:`cross_validate`.
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
