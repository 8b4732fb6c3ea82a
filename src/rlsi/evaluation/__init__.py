"""Evaluation of rankings: TREC files, trec_eval-compatible metrics, significance tests, collections.

The retrieval experiments that fit topic models and evaluate them with these metrics are in
:mod:`rlsi.experiments` (this package does not depend on the models).

Typical use::

    from rlsi.evaluation import load_collection, evaluate, mean_scores, compare
    coll = load_collection("shared/data/cranfield")
    per_query = evaluate(run, coll.qrels)            # MAP and NDCG@1/3/5/10 per query
    mean_scores(per_query)                           # {"map": ..., "ndcg@1": ...}
    compare(per_query_new, per_query_baseline)       # one-sided paired t-test per metric
"""

from .collection import Collection, load_collection, read_queries
from .metrics import (DEFAULT_METRICS, METRICS, MatrixEvaluator, Metric, average_precision, evaluate,
                      get_metric, judgement_matrix, mean_scores, ndcg_at_k, precision_at_k, recall_at_k,
                      reciprocal_rank)
from .significance import Comparison, compare, paired_ttest, randomization_test
from .trec import ranked, read_qrels, read_run, run_from_scores, write_qrels, write_run

__all__ = [
    "Collection", "load_collection", "read_queries",
    "DEFAULT_METRICS", "METRICS", "Metric", "get_metric", "evaluate", "mean_scores",
    "average_precision", "ndcg_at_k", "precision_at_k", "recall_at_k", "reciprocal_rank",
    "MatrixEvaluator", "judgement_matrix",
    "Comparison", "compare", "paired_ttest", "randomization_test",
    "ranked", "read_qrels", "read_run", "run_from_scores", "write_qrels", "write_run",
]
