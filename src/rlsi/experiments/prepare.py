"""A test collection turned into the matrices of the protocol, and its vectorised evaluation."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from ..errors import RLSIError
from ..evaluation.metrics import DEFAULT_METRICS, MatrixEvaluator, judgement_matrix
from ..text import TfidfVectorizer
from .defaults import DEFAULT_STEMMER

__all__ = ["PreparedCollection", "prepare_collection", "evaluate_scores"]

log = logging.getLogger(__name__)


@dataclass
class PreparedCollection:
    """A collection turned into matrices: documents and evaluated queries as tf-idf and counts, and
    the judgements aligned with the document columns.

    ``doc_tfidf``, ``doc_counts``: (n_docs, n_terms) CSR; ``query_tfidf``, ``query_counts``: (n_queries,
    n_terms) CSR; ``grades``: (n_queries, n_docs); ``ideal``: n_queries arrays; ``empty_queries``:
    (n_queries,) bool.
    """

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

    def evaluator(self, metrics=DEFAULT_METRICS):
        """A :class:`~rlsi.evaluation.metrics.MatrixEvaluator` of ``(n_queries, n_docs)`` score matrices
        (queries without a known term score 0)."""
        return MatrixEvaluator(self.doc_ids, self.grades, self.ideal, metrics, empty=self.empty_queries)


def prepare_collection(collection, vectorizer=None, *, fit_vectorizer=True):
    """Vectorise a :class:`~rlsi.evaluation.collection.Collection` for the protocol.

    ``vectorizer``: an :class:`rlsi.text.TfidfVectorizer` (default: English stop words and the
    :data:`~rlsi.experiments.DEFAULT_STEMMER` stemmer);
    it is fitted on the documents unless ``fit_vectorizer=False``. Evaluated queries are those of the
    qrels with a relevant document (:attr:`Collection.evaluated_queries`); one without text in the
    queries file is kept with empty text (it scores 0).
    """
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
    grades, ideal = judgement_matrix(qids, doc_ids, collection.qrels)
    empty = np.diff(q_counts.indptr) == 0
    return PreparedCollection(getattr(collection, "name", ""), doc_ids, qids, qtexts, doc_tfidf, doc_counts,
                              q_tfidf, q_counts, grades, ideal, empty, collection.qrels, vectorizer, texts)


def evaluate_scores(prepared, scores, metrics=DEFAULT_METRICS):
    """Per-query metrics ``{metric: {qid: value}}`` of a ``(n_queries, n_docs)`` score matrix."""
    ev = prepared.evaluator(metrics)
    values = ev(scores)
    return {name: dict(zip(prepared.query_ids, map(float, values[name]))) for name in ev.names}
