"""A searcher: index a corpus once, then rank documents by term + topic matching (TOIS §7, Eq. 9).

::

    from rlsi.retrieval import Searcher
    searcher = Searcher(model, vectorizer, alpha=0.3).index(texts, doc_ids)
    searcher.search("boundary layer transition", k=10)   # [Hit(doc_id, score, term_score, topic_score)]
    searcher.save("model_dir")                             # model + vectorizer + index, pickle-free
    searcher = Searcher.load("model_dir")

Indexing tokenizes every document with the (fitted) vectorizer, builds the term index (BM25 on raw counts,
or VSM on tf-idf) and folds every document into the topic space once, keeping the L2-normalised topic
vectors (:class:`~rlsi.retrieval.topic.TopicMatcher`; for a group model
:class:`~rlsi.retrieval.group_topic.ClassTopicMatcher`, each document on its class's topics with its class kept,
and a query folded in once per class, §7.3 of the GRLSI paper). A query is scored against all documents with
both components; each row is normalised per query and interpolated (:mod:`rlsi.retrieval.combine`).

Scores returned with each hit: ``score`` (the combined score that orders the hits), ``term_score`` (raw
BM25 / cosine) and ``topic_score`` (raw topic cosine). Ties are broken by document id descending, the
trec_eval order (:func:`rlsi.evaluation.trec.ranked`), so a saved run evaluates exactly as ranked here.

Queries that no index term matches (empty text, only stop words or unknown words) have neither a term nor
a topic representation: they return an empty list (and a log message), never an error. With
``model=None`` the searcher is a plain term-matching engine (``alpha`` must then be 0).

Large corpora (:meth:`Searcher.from_matrix`): the index of a matrix directory (``rlsi synth`` / ``rlsi
ingest``, which store the raw counts BM25 needs next to the tf-idf matrix) is built block by block
(:mod:`rlsi.retrieval.build`), saved like any index and loaded memory-mapped (``load(path, mmap=True)``),
so that a query reads only its posting lists. ``search(..., candidates=N)`` is the fast mode for such
indexes (the TOIS web experiment, §8.3, reranks a fixed set of documents per query in the same way): the
term model retrieves the N best documents (:func:`rlsi.retrieval.postings.top_n`, no sort of all scores),
the topic cosine is computed for those N only, and Eq. 9 with the same per-query normalisations is
applied over the N candidates. With N >= the number of documents it is the exact ranking (tested);
``candidates=None`` (default) scores every document with both components. Vectorised queries (a
synthetic corpus has no vectorizer) are ranked by :meth:`search_vectors`.

Persistence: the index is registered with :mod:`rlsi.io` as ``"Searcher"``; :meth:`save` writes the three
components ``model``, ``vectorizer`` and ``index`` into one model directory, the layout that ``rlsi fit``
writes plus the index, and :meth:`load` reattaches them.
"""

from __future__ import annotations

import logging
import math
from typing import NamedTuple

import numpy as np

from .._validation import check_choice, check_number
from ..errors import ModelFormatError, NotFittedError, RLSIError
from ..io import register
from .postings import top_n
from .combine import DEFAULT_TERM_NORM, DEFAULT_TOPIC_NORM, NORMALIZERS, interpolate
from .term import BM25, VSM
from .group_topic import ClassTopicMatcher, topic_matcher
from .topic import RidgeFolding
from .searcher_state import TERM_MODELS, searcher_from_state, searcher_state

__all__ = ["Searcher", "Hit", "TERM_MODELS"]

log = logging.getLogger(__name__)



class Hit(NamedTuple):
    """One search result (a tuple ``(doc_id, score, term_score, topic_score)``)."""

    doc_id: str
    score: float
    term_score: float
    topic_score: float


def _check_vectorizer(vectorizer):
    for attr in ("transform", "transform_counts"):
        if not hasattr(vectorizer, attr):
            raise RLSIError(f"the vectorizer must have a {attr} method (rlsi.text.TfidfVectorizer does)")
    if not hasattr(vectorizer, "vocabulary_"):
        raise NotFittedError("the vectorizer is not fitted: fit it on the corpus (or load a fitted one) first")


@register("Searcher")
class Searcher:
    """Topic-enhanced searcher (see the module docstring).

    Parameters
    ----------
    model : fitted topic model with ``transform`` (BatchRLSI, LSI, PLSI, LDA, NMF...), or None.
    vectorizer : fitted :class:`rlsi.text.TfidfVectorizer` (the one the model was fitted with).
    alpha : float in [0, 1], default 0.5 — weight of the topic score in Eq. 9 (cross-validation chose
        0.45 on Cranfield and CISI and 0.7–0.85 on MED, ``benchmarks/bench_ranking.py``).
    term_model : {"bm25", "vsm"}, default "bm25".
    k1, b : BM25 parameters, default 1.2 and 0.75 (the paper's).
    topic_norm, term_norm : per-query normalisations (:data:`rlsi.retrieval.combine.NORMALIZERS`).
    fold_lambda2 : None (default), a number >= 0 or ``math.inf`` — folding-in of documents and queries:
        None uses the model's own ``transform``; a number folds in by ridge regression with that λ on the
        model's topics, ``inf`` by the projection ``v = Uᵀx`` (:class:`~rlsi.retrieval.topic.RidgeFolding`).
        None is the topic vector of TOIS §7 and the default of ``rlsi search`` too
        (:data:`rlsi.retrieval.directory.DEFAULT_FOLDING`). The model itself is saved unchanged.
    dtype : float type of the cached topic vectors.
    """

    def __init__(self, model=None, vectorizer=None, *, alpha=0.5, term_model="bm25", k1=1.2, b=0.75,
                 topic_norm=DEFAULT_TOPIC_NORM, term_norm=DEFAULT_TERM_NORM, fold_lambda2=None, dtype=np.float64):
        self.model = model
        self.vectorizer = vectorizer
        self.alpha = alpha
        self.term_model = term_model
        self.k1 = k1
        self.b = b
        self.topic_norm = topic_norm
        self.term_norm = term_norm
        self.fold_lambda2 = fold_lambda2
        self.dtype = dtype

    def _topic_model(self):
        """The model as used for folding-in (wrapped in RidgeFolding when ``fold_lambda2`` is set)."""
        if self.model is None or self.fold_lambda2 is None:
            return self.model
        return RidgeFolding(self.model, self.fold_lambda2)

    # ------------------------------------------------------------------ checks
    def _validate(self):
        check_number("alpha", self.alpha, low=0.0, high=1.0)
        check_choice("term_model", self.term_model, TERM_MODELS)
        check_choice("topic_norm", self.topic_norm, NORMALIZERS)
        check_choice("term_norm", self.term_norm, NORMALIZERS)
        if self.model is None and self.alpha > 0:
            raise RLSIError(f"alpha={self.alpha} gives weight to topic matching but the searcher has no "
                            "topic model; pass a model or use alpha=0")
        if self.model is not None and not hasattr(self.model, "transform"):
            raise RLSIError(f"the model ({type(self.model).__name__}) has no transform method")
        if self.fold_lambda2 is not None and not (isinstance(self.fold_lambda2, float) and
                                                  math.isinf(self.fold_lambda2)):
            check_number("fold_lambda2", self.fold_lambda2, low=0.0)

    def _check_index(self):
        if getattr(self, "doc_ids_", None) is None:
            raise RLSIError("the searcher has no index yet: call index(documents) first")

    def _check_ready(self, text=True):
        self._check_index()
        if text and self.vectorizer is None:
            raise RLSIError("the searcher has no vectorizer: load it with Searcher.load(model_dir) or attach "
                            "the fitted vectorizer (searcher.vectorizer = ...)")
        if self.alpha > 0 and self.model is None:
            raise RLSIError("the searcher has no topic model: load it with Searcher.load(model_dir) or "
                            "attach it (searcher.model = ...), or set alpha=0")

    @property
    def n_docs_(self):
        self._check_index()
        return len(self.doc_ids_)

    # ------------------------------------------------------------------ indexing
    def index(self, documents, doc_ids=None, *, labels=None, show_progress=False):
        """Index ``documents`` (an iterable of str); ``doc_ids`` default to "0", "1", ...

        ``labels``: group models only — each document's class (one of the model's ``classes_``), against
        whose topics a query is matched with it (§7.3); None: the class the model predicts for the document
        (smallest reconstruction error, §4.3).
        Returns self. Documents must be tokenised with the model's vectorizer, which must be fitted.
        """
        self._validate()
        _check_vectorizer(self.vectorizer)
        if isinstance(documents, str):
            raise RLSIError("index() needs a list of documents, got a single string")
        documents = list(documents)
        if not documents:
            raise RLSIError("nothing to index: the document list is empty")
        if doc_ids is None:
            doc_ids = [str(i) for i in range(len(documents))]
        doc_ids = [str(d) for d in doc_ids]
        if len(doc_ids) != len(documents):
            raise RLSIError(f"{len(doc_ids)} document ids for {len(documents)} documents")
        if len(set(doc_ids)) != len(doc_ids):
            seen, dup = set(), None
            for d in doc_ids:
                if d in seen:
                    dup = d
                    break
                seen.add(d)
            raise RLSIError(f"document id {dup!r} is used more than once")
        counts = self.vectorizer.transform_counts(documents)
        tfidf = self.vectorizer.transform(documents)
        return self.index_matrices(tfidf=tfidf, counts=counts, doc_ids=doc_ids, labels=labels)

    def index_matrices(self, *, tfidf, counts, doc_ids, labels=None):
        """Index already vectorised documents (tf-idf and raw counts, documents x terms); ``labels``: see
        :meth:`index`."""
        self._validate()
        if tfidf.shape != counts.shape or tfidf.shape[0] != len(doc_ids):
            raise RLSIError(f"tf-idf {tfidf.shape}, counts {counts.shape} and {len(doc_ids)} ids do not match")
        topic = self._new_topic_index(labels)
        term = BM25(self.k1, self.b).fit(counts) if self.term_model == "bm25" else VSM().fit(tfidf)
        self.term_index_ = term
        self.topic_index_ = None
        if topic is not None:
            self.topic_index_ = topic.fit(tfidf=tfidf, counts=counts)
        self.doc_ids_ = np.asarray([str(d) for d in doc_ids], dtype=str)
        self._doc_order_ = None
        return self

    def _new_topic_index(self, labels=None):
        """The (unfitted) topic index of the model: :class:`~rlsi.retrieval.group_topic.ClassTopicMatcher` for
        a group model (documents matched on their class's topics, §7.3), else
        :class:`~rlsi.retrieval.topic.TopicMatcher`; None without a model."""
        if self.model is None:
            if labels is not None:
                raise RLSIError("document labels were given but the searcher has no topic model to use them")
            return None
        topic = topic_matcher(self._topic_model(), doc_labels=labels, dtype=self.dtype)
        if labels is not None and not isinstance(topic, ClassTopicMatcher):
            raise RLSIError(f"document labels (classes) are used by group models only (§7.3); the model is a "
                            f"{type(self.model).__name__}")
        return topic

    @classmethod
    def from_matrix(cls, matrix, model=None, vectorizer=None, *, labels=None, block_rows=None, show_progress=False,
                    **params):
        """A searcher indexing the documents of a matrix directory, built block by block
        (:mod:`rlsi.retrieval.build`): the same index as ``index_matrices(tfidf=X, counts=C)`` on the
        directory's tf-idf ``X`` and raw counts ``C``, without holding either in memory.

        matrix : a matrix directory path or a loaded :class:`rlsi.io.matrix.CorpusMatrix`.
        model : fitted topic model (fitted on this matrix's columns), or None for term matching only.
        vectorizer : default the directory's own (None for a synthetic corpus: then only
            :meth:`search_vectors` can rank). ``params``: the constructor's (alpha, term_model, dtype...;
            ``dtype=np.float32`` halves the index). A directory written without counts cannot give a BM25
            index (RLSIError naming the fix); ``term_model="vsm"`` needs only X.
        labels : group models only, as in :meth:`index` (one per row of the matrix).
        """
        from ..io.matrix import CorpusMatrix, load_matrix
        from .build import DEFAULT_BLOCK_ROWS, index_matrix

        if not isinstance(matrix, CorpusMatrix):
            # every checksum, memory-mapped arrays included: the build reads every page anyway
            matrix = load_matrix(matrix, vectorizer=vectorizer is None, verify=True)
        if vectorizer is None:
            vectorizer = matrix.vectorizer
        if vectorizer is not None:
            _check_vectorizer(vectorizer)
            if len(vectorizer.vocabulary_) != matrix.X.shape[1]:
                raise RLSIError(f"the vectorizer has {len(vectorizer.vocabulary_)} terms but the matrix "
                                f"{matrix.X.shape[1]} columns: use the matrix directory's own vectorizer")
        comps = getattr(model, "components_", None)
        if comps is not None and comps.shape[1] != matrix.X.shape[1]:
            raise RLSIError(f"the model has {comps.shape[1]} terms but the matrix {matrix.X.shape[1]} columns: "
                            "use a model fitted on this matrix directory (rlsi fit --matrix DIR)")
        s = cls(model, vectorizer, **params)
        s._validate()
        return index_matrix(s, matrix, labels=labels, block_rows=block_rows or DEFAULT_BLOCK_ROWS,
                            show_progress=show_progress)

    # ------------------------------------------------------------------ scoring
    def _vectorize(self, queries):
        """Query strings -> ``(counts, tfidf)`` CSR matrices (n_queries x n_terms)."""
        self._check_ready()
        if isinstance(queries, str):
            queries = [queries]
        queries = list(queries)
        for i, q in enumerate(queries):
            if not isinstance(q, str):
                raise RLSIError(f"query {i} is a {type(q).__name__}, expected str")
        if not queries:
            return None, None
        return self.vectorizer.transform_counts(queries), self.vectorizer.transform(queries)

    def score_matrices(self, queries):
        """Raw ``(term, topic)`` score matrices ``(n_queries, n_docs)`` for a list of query strings
        (``topic`` is all zeros without a model), plus a boolean mask of queries with no known term."""
        counts, tfidf = self._vectorize(queries)
        if counts is None:
            n = len(self.doc_ids_)
            return np.zeros((0, n)), np.zeros((0, n)), np.zeros(0, dtype=bool)
        return self._score_vectors(counts, tfidf)

    def _score_vectors(self, counts, tfidf):
        empty = np.diff(counts.indptr) == 0
        if self.term_model == "bm25":
            term = self.term_index_.score(counts)
        else:
            term = self.term_index_.score(tfidf)
        if self.topic_index_ is not None and self.model is not None:
            topic = self.topic_index_.attach(self._topic_model()).score(tfidf=tfidf, counts=counts)
        else:
            topic = np.zeros_like(term)
        return term, topic, empty

    def combined_scores(self, term, topic):
        """Eq. 9 on raw score matrices with this searcher's alpha and normalisations."""
        return interpolate(topic, term, self.alpha, topic_norm=self.topic_norm, term_norm=self.term_norm)

    def _order(self):
        if getattr(self, "_doc_order_", None) is None:
            # tie-break key: larger doc id first (trec_eval order); rank of each id in descending order
            ids = self.doc_ids_
            key = np.empty(len(ids), dtype=np.int64)
            key[np.argsort(ids, kind="stable")[::-1]] = np.arange(len(ids))
            self._doc_order_ = key
        return self._doc_order_

    def search_many(self, queries, k=10, *, candidates=None):
        """Rank for each query string; returns a list (one per query) of lists of :class:`Hit`.

        candidates : None (every document scored by both components) or N >= 1 — the candidate mode:
        the term model's N best documents are reranked with the topic score (module docstring)."""
        self._validate()
        self._check_search_args(k, candidates)
        counts, tfidf = self._vectorize(queries)
        if counts is None:
            return []
        return self._rank(counts, tfidf, k, candidates)

    def search_vectors(self, counts, tfidf=None, *, k=10, candidates=None):
        """Rank vectorised queries: ``counts`` (raw query term counts) and ``tfidf`` (their tf-idf, needed
        by the vsm term model and by topic models of tf-idf), CSR ``(n_queries, n_terms)`` in the index's
        columns. Same results as :meth:`search_many` on the strings these vectors come from."""
        import scipy.sparse as sp

        self._validate()
        self._check_ready(text=False)
        self._check_search_args(k, candidates)
        counts = sp.csr_matrix(counts)
        needs_tfidf = self.term_model == "vsm" or (self.alpha > 0 and self.topic_index_ is not None
                                                   and getattr(self.model, "input_kind", "tfidf") == "tfidf")
        if tfidf is None:
            if needs_tfidf:
                raise RLSIError("search_vectors needs the queries' tf-idf (tfidf=) for this term or topic model")
            tfidf = counts
        tfidf = sp.csr_matrix(tfidf)
        n_terms = self.term_index_.n_terms_
        if counts.shape[1] != n_terms or tfidf.shape != counts.shape:
            raise RLSIError(f"query matrices {counts.shape} and {tfidf.shape} must both have the index's "
                            f"{n_terms} term columns and one row per query")
        return self._rank(counts, tfidf, k, candidates)

    @staticmethod
    def _check_search_args(k, candidates):
        if k is not None:
            check_number("k", k, low=1, integer=True)
        if candidates is not None:
            check_number("candidates", candidates, low=1, integer=True)

    def _rank(self, counts, tfidf, k, candidates):
        if candidates is not None:
            return [self._rank_candidates(counts[i], tfidf[i], k, int(candidates)) for i in range(counts.shape[0])]
        # exact mode, a few queries at a time: three dense (queries x documents) float64 matrices
        step = max(1, (1 << 24) // max(1, len(self.doc_ids_)))
        results = []
        for a in range(0, counts.shape[0], step):
            results.extend(self._rank_exact(counts[a:a + step], tfidf[a:a + step], k))
        return results

    def _rank_candidates(self, counts, tfidf, k, n_candidates):
        """One query (1-row CSR matrices) in candidate mode; a list of :class:`Hit`."""
        if counts.nnz == 0:
            log.info("a query has no term known to the index: no result")
            return []
        tie = self._order()
        term_row, touched = self.term_index_.score_postings(counts if self.term_model == "bm25" else tfidf)
        cand = self._candidates(term_row, touched, n_candidates)
        term = term_row[cand][None, :]
        if self.topic_index_ is not None and self.model is not None:
            # the candidates' rows only (sorted: a memory-mapped index is read in file order)
            topic = self.topic_index_.attach(self._topic_model()).score(tfidf=tfidf, counts=counts, docs=cand)
        else:
            topic = np.zeros_like(term)
        combined = self.combined_scores(term, topic)
        if not (np.isfinite(term).all() and np.isfinite(topic).all() and np.isfinite(combined).all()):
            raise RLSIError("the scores hold NaN or infinite values: the model or the index is damaged "
                            "(rebuild the index, or refit the model)")
        kk = len(cand) if k is None else min(k, len(cand))
        best = top_n(combined[0], tie[cand], kk)
        return [Hit(str(self.doc_ids_[cand[j]]), float(combined[0, j]), float(term[0, j]), float(topic[0, j]))
                for j in best]

    def _candidates(self, term_row, touched, n):
        """The ``n`` best documents by ``term_row`` (ties: trec order), as sorted document indices.

        Only the documents the query's posting lists reached (``touched``) are ranked, not all N scores;
        when fewer than ``n`` score above 0, the rest are the zero-score documents first in the tie
        order, a fixed sequence (:meth:`_tie_sequence`) — the same set as ranking every score."""
        n_docs = len(term_row)
        if n >= n_docs:
            return np.arange(n_docs)
        tie = self._order()
        scores = term_row[touched]
        hit = touched[scores != 0]
        if (scores < 0).any():  # negative weights (not BM25 / VSM on tf-idf): rank every score
            return np.sort(top_n(term_row, tie, n))
        if len(hit) >= n:
            return np.sort(hit[top_n(term_row[hit], tie[hit], n)])
        fill = self._tie_sequence()[:n]
        fill = fill[term_row[fill] == 0][: n - len(hit)]
        return np.sort(np.concatenate([hit, fill]))

    def _tie_sequence(self):
        """Document indices in tie order (the best of equal scores first), computed once."""
        order = self._order()
        cached = getattr(self, "_tie_seq_", None)
        if cached is None or cached[0] is not order:
            seq = np.empty(len(order), dtype=np.int64)
            seq[order] = np.arange(len(order))
            self._tie_seq_ = cached = (order, seq)
        return cached[1]

    def _rank_exact(self, counts, tfidf, k):
        term, topic, empty = self._score_vectors(counts, tfidf)
        combined = self.combined_scores(term, topic)
        if not (np.isfinite(term).all() and np.isfinite(topic).all() and np.isfinite(combined).all()):
            raise RLSIError("the scores hold NaN or infinite values: the model or the index is damaged "
                            "(rebuild the index, or refit the model)")
        tie = self._order()
        n = len(self.doc_ids_)
        kk = n if k is None else min(k, n)
        results = []
        for i in range(combined.shape[0]):
            if empty[i]:
                log.info("query %d has no term known to the index: no result", i)
                results.append([])
                continue
            row = combined[i]
            order = top_n(row, tie, kk)  # score descending, then the trec order; no sort of all scores
            results.append([Hit(str(self.doc_ids_[j]), float(row[j]), float(term[i, j]), float(topic[i, j]))
                            for j in order])
        return results

    def search(self, query, k=10, *, candidates=None):
        """The ``k`` best documents for one query string (an empty list if no query term is known);
        ``candidates``: see :meth:`search_many`."""
        if not isinstance(query, str):
            raise RLSIError(f"the query must be a str, got {type(query).__name__}")
        return self.search_many([query], k=k, candidates=candidates)[0]

    # ------------------------------------------------------------------ persistence
    def get_params(self):
        """The searcher's parameters as a JSON-ready dict."""
        fold = self.fold_lambda2
        return {"alpha": float(self.alpha), "term_model": self.term_model, "k1": float(self.k1),
                "b": float(self.b), "topic_norm": self.topic_norm, "term_norm": self.term_norm,
                "fold_lambda2": None if fold is None else ("inf" if math.isinf(fold) else float(fold)),
                "dtype": np.dtype(self.dtype).name}

    def _to_state(self):
        """The index only (doc ids, term index, topic vectors); model and vectorizer are saved alongside."""
        return searcher_state(self)

    @classmethod
    def _from_state(cls, meta, arrays):
        """Rebuild an index from :meth:`_to_state` output, checking it as untrusted input."""
        return searcher_from_state(cls, meta, arrays)

    def save(self, path):
        """Write ``model``, ``vectorizer`` and ``index`` into the model directory ``path`` (atomic)."""
        from .. import io as rio

        self._check_index()
        components = {"index": self}
        if self.vectorizer is not None:  # None: an index of a synthetic corpus (search_vectors only)
            components["vectorizer"] = self.vectorizer
        if self.model is not None:
            components["model"] = self.model
        return rio.save(path, **components)

    @classmethod
    def load(cls, path, *, mmap=False):
        """Load a model directory holding ``index``, ``vectorizer`` and (if any) ``model``.

        mmap : memory-map the arrays (read-only) instead of reading them: a large index then costs page
        cache, and a query reads only its posting lists and the topic vectors it scores. An index built
        from a matrix directory without a vectorizer (a synthetic corpus) loads without one."""
        from .. import io as rio

        bundle = rio.load(path, mmap=mmap)
        if "index" not in bundle:
            raise ModelFormatError(f"{path} has no search index (components: {sorted(bundle)}); build one "
                                   "with Searcher(model, vectorizer).index(documents) or `rlsi search --corpus`")
        s = bundle["index"]
        if not isinstance(s, cls):
            raise ModelFormatError(f"component 'index' of {path} is a {type(s).__name__}, not a Searcher")
        s.vectorizer = bundle.get("vectorizer")
        s.model = bundle.get("model")
        if s.vectorizer is None:
            log.info("%s has no vectorizer: rank vectorised queries with search_vectors()", path)
        s._check_consistent(path)
        return s

    def attach(self, model, vectorizer):
        """Attach the model and vectorizer to an index loaded on its own; returns self."""
        self.model, self.vectorizer = model, vectorizer
        self._check_consistent("the attached components")
        return self

    @property
    def n_terms_(self):
        """Number of term columns of the index (the vocabulary it was built with)."""
        if getattr(self, "term_index_", None) is None:
            raise RLSIError("the searcher has no index yet: call index(documents) first")
        return self.term_index_.n_terms_

    def _check_consistent(self, where):
        n_terms = len(getattr(self.vectorizer, "vocabulary_", {}) or {})
        if n_terms and self.term_index_.n_terms_ != n_terms:
            raise ModelFormatError(f"{where}: the index has {self.term_index_.n_terms_} terms but the "
                                   f"vectorizer has {n_terms}; they were not built together (the model "
                                   f"directory is damaged, or rebuild the index with --corpus)")
        if self.topic_index_ is not None and self.model is not None:
            try:  # the index's topics (and a group index's classes) against the model
                self.topic_index_.attach(self._topic_model())
            except ModelFormatError as exc:
                raise ModelFormatError(f"{where}: {exc}") from None

    def __repr__(self):
        n = len(self.doc_ids_) if getattr(self, "doc_ids_", None) is not None else 0
        return (f"Searcher(model={type(self.model).__name__ if self.model is not None else None}, "
                f"alpha={self.alpha}, term_model={self.term_model!r}, fold_lambda2={self.fold_lambda2}, "
                f"documents={n})")
