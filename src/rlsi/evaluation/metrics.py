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
           "ndcg_at_k", "precision_at_k", "recall_at_k", "reciprocal_rank", "DEFAULT_METRICS"]

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


def _ndcg(rels, ideal, k):
    if len(ideal) == 0:
        return 0.0
    gains = rels if k is None else rels[:k]
    best = ideal if k is None else ideal[:k]
    idcg = float(best @ _discounts(len(best)))
    return float(gains @ _discounts(len(gains))) / idcg


def _precision(rels, ideal, k):
    return float(np.count_nonzero(rels[:k] > 0) / k) if len(ideal) else 0.0


def _recall(rels, ideal, k):
    return float(np.count_nonzero(rels[:k] > 0) / len(ideal)) if len(ideal) else 0.0


def _rr(rels, ideal, k):
    hits = np.flatnonzero(rels > 0)
    return float(1.0 / (hits[0] + 1)) if len(hits) else 0.0


@dataclass(frozen=True)
class _Spec:
    function: object
    cutoff: str          # "none", "optional" or "required"
    forms: str
    description: str


#: Metric families by canonical name; :func:`get_metric` parses full names such as ``"ndcg@10"``.
METRICS: dict[str, _Spec] = {
    "map": _Spec(_ap, "none", "map", "mean average precision (trec_eval map)"),
    "ndcg": _Spec(_ndcg, "optional", "ndcg, ndcg@k",
                  "normalised DCG, linear gain (trec_eval ndcg, ndcg_cut_k)"),
    "p": _Spec(_precision, "required", "p@k", "precision at k (trec_eval P_k)"),
    "recall": _Spec(_recall, "required", "recall@k", "recall at k (trec_eval recall_k)"),
    "mrr": _Spec(_rr, "none", "mrr", "reciprocal rank of the first relevant document (trec_eval recip_rank)"),
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
