"""Ranking metrics with trec_eval's definitions (MAP, NDCG@k, P@k, recall@k, MRR).

Conventions (those of trec_eval 9 / pytrec_eval, checked against ``pytrec_eval`` in the tests):

* **Ranking order.** A query's documents are ordered by score descending; ties are broken by docid
  *descending* (plain string comparison), as trec_eval does. The rank column of a run file is ignored.
  trec_eval stores scores in single precision, so scores are compared after rounding to float32 (scores
  closer than about 6e-8 relative are tied); without this, near-ties would be ordered differently from
  trec_eval and MAP could differ in the 4th decimal.
* **Relevance.** ``rel > 0`` is relevant. ``rel <= 0`` (judged non-relevant, negative grades included)
  and unjudged documents are non-relevant with gain 0.
* With ``r_i`` the grade at rank ``i`` (1-based), ``R`` the number of relevant documents in the qrels of
  the query (retrieved or not) and ``[x]`` = 1 if x holds:

  - ``AP  = (1/R) * sum_i [r_i > 0] * P@i``
  - ``P@k = (1/k) * sum_{i<=k} [r_i > 0]`` (divided by ``k`` even when fewer were retrieved)
  - ``recall@k = (1/R) * sum_{i<=k} [r_i > 0]``
  - ``RR  = 1 / (rank of the first relevant document)``, 0 if none was retrieved
  - ``DCG@k = sum_{i<=k} max(r_i, 0) / log2(i + 1)`` (linear gain = grade); ``NDCG@k = DCG@k / IDCG@k``
    where IDCG@k is the DCG of the ideal ordering of *all judged* documents of the query (as trec_eval's
    ``ndcg_cut``). ``ndcg`` without cutoff uses the whole ranking (trec_eval's ``ndcg``).

  A query with ``R = 0`` scores 0 on every metric.

* :func:`evaluate` averages over the queries of the qrels that have at least one relevant document. Such a
  query missing from the run scores 0 (trec_eval ``-c``); run queries absent from the qrels are ignored.

Two back ends share the registry :data:`METRICS`: each metric has a per-query form (a ranked vector of
grades, used by :func:`evaluate` on TREC runs) and a vectorised form over a whole matrix of rankings
(used by :class:`MatrixEvaluator` on dense ``(n_queries, n_docs)`` score matrices, e.g. by
:mod:`rlsi.experiments`). Both follow the conventions above; the tests check that they agree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import RLSIError
from .trec import rank_order

__all__ = ["METRICS", "Metric", "get_metric", "evaluate", "mean_scores", "average_precision",
           "ndcg_at_k", "precision_at_k", "recall_at_k", "reciprocal_rank", "DEFAULT_METRICS",
           "MatrixEvaluator", "judgement_matrix"]

DEFAULT_METRICS = ("map", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10")


# --- metrics over a ranked vector of grades ---------------------------------------------------------
# ``rels``: grades of the retrieved documents in ranking order, clipped at 0 (float array);
# ``ideal``: positive grades of all judged documents, sorted descending; ``n_rel = len(ideal)``.

def _discounts(n):
    return 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))


def _ap(rels, ideal, k):
    if len(ideal) == 0:
        return 0.0
    hits = rels > 0
    ranks = np.flatnonzero(hits) + 1.0
    return float(np.sum(np.arange(1, len(ranks) + 1) / ranks) / len(ideal))


def _idcg(ideal, k):
    """DCG of the ideal ordering of the judged grades ``ideal`` (sorted descending) at cutoff ``k``."""
    best = ideal if k is None else ideal[:k]
    return float(best @ _discounts(len(best)))


def _ndcg(rels, ideal, k):
    if len(ideal) == 0:
        return 0.0
    gains = rels if k is None else rels[:k]
    return float(gains @ _discounts(len(gains))) / _idcg(ideal, k)


def _precision(rels, ideal, k):
    return float(np.count_nonzero(rels[:k] > 0) / k) if len(ideal) else 0.0


def _recall(rels, ideal, k):
    return float(np.count_nonzero(rels[:k] > 0) / len(ideal)) if len(ideal) else 0.0


def _rr(rels, ideal, k):
    hits = np.flatnonzero(rels > 0)
    return float(1.0 / (hits[0] + 1)) if len(hits) else 0.0


# --- the same metrics over a matrix of rankings (one query per row) ----------------------------------
# ``R``: a :class:`_RankedRows` (grades of every row in ranking order, clipped at 0, whole ranking);
# ``k``: the cutoff (None: whole ranking). Each returns an ``(n_queries,)`` array; a row with ``R = 0``
# scores 0. The arithmetic is that of the per-query forms above, vectorised over rows.

@dataclass(frozen=True)
class _RankedRows:
    grades: np.ndarray   # (n_queries, n_docs) grades in ranking order, clipped at 0
    hits: np.ndarray     # grades > 0
    n_rel: np.ndarray    # (n_queries,) R: relevant judged documents, retrieved or not
    idcg: dict           # cutoff k (None: all) -> (n_queries,) IDCG@k over all judged documents


def _ap_rows(R, k):
    prec = np.cumsum(R.hits, axis=1) / np.arange(1, R.hits.shape[1] + 1)
    return np.where(R.n_rel > 0, (prec * R.hits).sum(axis=1) / R.n_rel, 0.0)


def _ndcg_rows(R, k):
    cut = R.grades.shape[1] if k is None else min(k, R.grades.shape[1])
    dcg = R.grades[:, :cut] @ _discounts(cut)
    idcg = R.idcg[k]        # at the metric's own k: the ideal ordering may hold more documents than the corpus
    return np.where(idcg > 0, dcg / idcg, 0.0)


def _precision_rows(R, k):
    return np.where(R.n_rel > 0, R.hits[:, :k].sum(axis=1) / k, 0.0)


def _recall_rows(R, k):
    return np.where(R.n_rel > 0, R.hits[:, :k].sum(axis=1) / R.n_rel, 0.0)


def _rr_rows(R, k):
    first = np.argmax(R.hits, axis=1)
    return np.where(R.hits.any(axis=1), 1.0 / (first + 1.0), 0.0)


@dataclass(frozen=True)
class _Spec:
    function: object     # per query: (ranked grades, ideal grades, k) -> float
    rows: object         # vectorised: (_RankedRows, k) -> (n_queries,) array
    cutoff: str          # "none", "optional" or "required"
    forms: str
    description: str


#: Metric families by canonical name; :func:`get_metric` parses full names such as ``"ndcg@10"``.
METRICS: dict[str, _Spec] = {
    "map": _Spec(_ap, _ap_rows, "none", "map", "mean average precision (trec_eval map)"),
    "ndcg": _Spec(_ndcg, _ndcg_rows, "optional", "ndcg, ndcg@k",
                  "normalised DCG, linear gain (trec_eval ndcg, ndcg_cut_k)"),
    "p": _Spec(_precision, _precision_rows, "required", "p@k", "precision at k (trec_eval P_k)"),
    "recall": _Spec(_recall, _recall_rows, "required", "recall@k", "recall at k (trec_eval recall_k)"),
    "mrr": _Spec(_rr, _rr_rows, "none", "mrr",
                 "reciprocal rank of the first relevant document (trec_eval recip_rank)"),
}

_ALIASES = {"map": "map", "ap": "map", "ndcg": "ndcg", "ndcg_cut": "ndcg", "p": "p", "precision": "p",
            "recall": "recall", "mrr": "mrr", "rr": "mrr", "recip_rank": "mrr"}
_NAME = re.compile(r"^([a-z_]+?)(?:[@_](\d+))?$")


@dataclass(frozen=True)
class Metric:
    """A parsed metric: ``base`` (a key of :data:`METRICS`) and cutoff ``k`` (None: whole ranking)."""

    base: str
    k: int | None = None

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``"ndcg@10"``."""
        return self.base if self.k is None else f"{self.base}@{self.k}"

    def from_grades(self, rels, ideal) -> float:
        """The metric from ranked grades (clipped at 0) and the sorted positive grades of the qrels."""
        return METRICS[self.base].function(rels, ideal, self.k)

    def __call__(self, scores: Mapping[str, float], judgements: Mapping[str, int]) -> float:
        """The metric for one query: ``scores`` ``{docid: score}``, ``judgements`` ``{docid: rel}``."""
        return self.from_grades(_ranked_grades(scores, judgements), _ideal(judgements))


def get_metric(name: str) -> Metric:
    """Parse ``"map"``, ``"mrr"``, ``"ndcg"``, ``"ndcg@10"``, ``"p@5"``, ``"recall@100"`` (case-insensitive;
    trec_eval spellings ``ndcg_cut_10``, ``P_5``, ``recall_100``, ``recip_rank`` are accepted too)."""
    known = "; ".join(spec.forms for spec in METRICS.values())
    match = _NAME.match(str(name).strip().lower())
    base = _ALIASES.get(match.group(1)) if match else None
    if base is None:
        raise RLSIError(f"unknown metric {name!r}; known forms: {known} (k a positive integer)")
    spec = METRICS[base]
    k = int(match.group(2)) if match.group(2) is not None else None
    if (k is None and spec.cutoff == "required") or (k is not None and spec.cutoff == "none") or k == 0:
        raise RLSIError(f"metric {name!r}: {base} is written {spec.forms} (k a positive integer)")
    return Metric(base, k)


# --- ranking --------------------------------------------------------------------------------------

def _ranked_grades(scores: Mapping[str, float], judgements: Mapping[str, int]) -> np.ndarray:
    """Grades (clipped at 0) of the documents of ``scores`` in evaluation order (see module doc)."""
    if not scores:
        return np.zeros(0)
    ids = np.array([str(d) for d in scores.keys()])
    values = np.fromiter(scores.values(), dtype=np.float64, count=len(ids))
    if not np.all(np.isfinite(values)):
        bad = ids[~np.isfinite(values)][0]
        raise RLSIError(f"run score of document {bad!r} is not finite")
    order = rank_order(ids, values)
    grades = np.fromiter((judgements.get(d, 0) for d in ids[order]), dtype=np.float64, count=len(ids))
    return np.maximum(grades, 0.0)


def _ideal(judgements: Mapping[str, int]) -> np.ndarray:
    grades = np.fromiter(judgements.values(), dtype=np.float64, count=len(judgements))
    return -np.sort(-grades[grades > 0])


def average_precision(scores, judgements) -> float:
    """AP of one query (``scores`` ``{docid: score}``, ``judgements`` ``{docid: rel}``)."""
    return Metric("map")(scores, judgements)


def ndcg_at_k(scores, judgements, k: int | None) -> float:
    """NDCG@k of one query (linear gain, log2(rank+1) discount; ``k=None`` for the whole ranking)."""
    return Metric("ndcg", _check_k(k, allow_none=True))(scores, judgements)


def precision_at_k(scores, judgements, k: int) -> float:
    """P@k of one query."""
    return Metric("p", _check_k(k))(scores, judgements)


def recall_at_k(scores, judgements, k: int) -> float:
    """Recall@k of one query."""
    return Metric("recall", _check_k(k))(scores, judgements)


def reciprocal_rank(scores, judgements) -> float:
    """Reciprocal rank of the first relevant document of one query (0 if none retrieved)."""
    return Metric("mrr")(scores, judgements)


def _check_k(k, allow_none=False):
    if k is None and allow_none:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise RLSIError(f"k={k!r} must be a positive integer")
    return int(k)


# --- whole runs -----------------------------------------------------------------------------------

def evaluate(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
             metrics: Sequence[str] = DEFAULT_METRICS) -> dict[str, dict[str, float]]:
    """Per-query scores ``{metric: {qid: value}}`` of ``run`` against ``qrels``.

    Metric keys are the names as given. Queries: those of ``qrels`` with at least one ``rel > 0``, in
    qrels order; one missing from ``run`` scores 0.
    """
    if isinstance(metrics, str):
        metrics = (metrics,)
    parsed = [(name, get_metric(name)) for name in metrics]
    if not parsed:
        raise RLSIError("no metric requested")
    qids = [q for q, judged in qrels.items() if any(rel > 0 for rel in judged.values())]
    if not qids:
        raise RLSIError("the qrels have no query with a relevant (rel > 0) document; nothing to evaluate")
    out: dict[str, dict[str, float]] = {name: {} for name, _ in parsed}
    for qid in qids:
        judged = qrels[qid]
        try:
            rels = _ranked_grades(run.get(qid, {}), judged)
        except RLSIError as exc:
            raise RLSIError(f"query {qid!r}: {exc}") from None
        ideal = _ideal(judged)
        for name, metric in parsed:
            out[name][qid] = metric.from_grades(rels, ideal)
    return out


def mean_scores(per_query: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Mean over queries of each metric of an :func:`evaluate` result: ``{metric: mean}``."""
    means = {}
    for name, values in per_query.items():
        if not values:
            raise RLSIError(f"metric {name!r} has no per-query value to average")
        means[name] = math.fsum(values.values()) / len(values)
    return means


# --- dense score matrices -------------------------------------------------------------------------

def judgement_matrix(query_ids: Sequence[str], doc_ids: Sequence[str],
                     qrels: Mapping[str, Mapping[str, int]]) -> tuple[np.ndarray, list]:
    """Judgements aligned with a document list: ``(grades, ideal)``.

    ``grades``: ``(n_queries, n_docs)`` float array, the grade of each corpus document clipped at 0 (0 for
    unjudged ones); ``ideal``: per query, the positive grades of *all* its judged documents sorted
    descending (documents missing from ``doc_ids`` included: they count in R and in the IDCG).
    """
    col = {str(d): j for j, d in enumerate(doc_ids)}
    grades = np.zeros((len(query_ids), len(doc_ids)))
    ideal = []
    for i, q in enumerate(query_ids):
        judged = qrels.get(q, {})
        for d, rel in judged.items():
            j = col.get(str(d))
            if j is not None and rel > 0:
                grades[i, j] = rel
        ideal.append(_ideal(judged))
    return grades, ideal


class MatrixEvaluator:
    """Per-query metrics of dense score matrices over one fixed document list, vectorised over queries.

    The conventions are those of the module (and of :func:`evaluate`): every document of a row is ranked
    (no depth cut-off) by its score rounded to float32, ties by docid descending.

    Parameters
    ----------
    doc_ids : sequence of n_docs document ids (the columns of the score matrices).
    grades : (n_queries, n_docs) array, grades clipped at 0 (see :func:`judgement_matrix`).
    ideal : n_queries arrays, positive grades of all judged documents sorted descending.
    metrics : metric names (:func:`get_metric`); :attr:`names` holds their canonical names.
    empty : optional (n_queries,) bool array: queries that retrieve nothing (e.g. none of their terms is
        in the vocabulary). They score 0 on every metric, as a query missing from a run does in trec_eval.
    """

    def __init__(self, doc_ids, grades, ideal, metrics: Sequence[str] = DEFAULT_METRICS, *, empty=None):
        if isinstance(metrics, str):
            metrics = (metrics,)
        self.metrics = [get_metric(m) for m in metrics]
        if not self.metrics:
            raise RLSIError("no metric requested")
        self.names = [m.name for m in self.metrics]
        ids = np.asarray(doc_ids, dtype=str)
        grades = np.asarray(grades, dtype=np.float64)
        if grades.shape != (len(ideal), len(ids)):
            raise RLSIError(f"grades have shape {grades.shape}; expected ({len(ideal)}, {len(ids)}) "
                            f"(queries x documents)")
        # columns in trec_eval tie order (docid descending): a stable sort on -score then keeps that order
        self._perm = np.argsort(ids, kind="stable")[::-1].copy()
        self._grades = grades[:, self._perm]
        self._n_rel = np.array([len(x) for x in ideal], dtype=np.float64)
        self._empty = np.zeros(len(ideal), dtype=bool) if empty is None else np.asarray(empty, dtype=bool)
        self._idcg = {m.k: np.array([_idcg(x, m.k) for x in ideal])
                      for m in self.metrics if m.base == "ndcg"}

    @classmethod
    def from_qrels(cls, query_ids, doc_ids, qrels, metrics: Sequence[str] = DEFAULT_METRICS, *, empty=None):
        """An evaluator for the rows ``query_ids`` and the columns ``doc_ids``, judged by ``qrels``."""
        grades, ideal = judgement_matrix(query_ids, doc_ids, qrels)
        return cls(doc_ids, grades, ideal, metrics, empty=empty)

    def __call__(self, scores) -> dict[str, np.ndarray]:
        """``{metric: (n_queries,) array}`` for a ``(n_queries, n_docs)`` score matrix."""
        # trec_eval compares scores in single precision: near-ties within float32 rounding are ties
        S = np.asarray(scores, dtype=np.float32)
        if S.shape != self._grades.shape:
            raise RLSIError(f"scores have shape {S.shape}; expected {self._grades.shape} (queries x documents)")
        order = np.argsort(-S[:, self._perm], axis=1, kind="stable")
        G = np.take_along_axis(self._grades, order, axis=1)
        ranked = _RankedRows(G, G > 0, self._n_rel, self._idcg)
        out = {}
        with np.errstate(invalid="ignore", divide="ignore"):   # rows with R = 0 are set to 0 by np.where
            for m in self.metrics:
                out[m.name] = np.where(self._empty, 0.0, METRICS[m.base].rows(ranked, m.k))
        return out
