"""A point-in-time view of a live index, and search on it.

A :class:`Snapshot` is immutable: one committed generation's segments, each with its deletes of that
generation (:class:`SegmentView`), the vocabulary size, the index-wide statistics and the one model
version that serves it. Any number of threads search one snapshot at once; a commit publishes a new
snapshot and never changes one in use, so a search sees one whole generation from start to end.

Scores, with N, the mean length and each term's document frequency counted over the live documents
of the snapshot (deleted ones never count):

* ``term_score`` — BM25 (:mod:`rlsi.retrieval.term`), its weights applied at query time per segment
  (:func:`rlsi.retrieval.live.kernels.bm25_postings`): the same float as an index built from scratch;
* ``topic_score`` — the cosine of the query's and the document's topic vectors, both folded in by the
  snapshot's model version (documents' vectors of other versions are never read: a ranking never mixes
  two model versions);
* ``score`` — Eq. 9 with the searcher's per-query normalisations (:mod:`rlsi.retrieval.combine`), over
  every live document (``candidates=None``) or over the term model's ``candidates`` best documents, the
  two modes of :class:`~rlsi.retrieval.Searcher` with the same candidate set and tie order (document id
  descending, the trec_eval order).

Each hit explains itself: ``topics`` lists the topics that contributed most to its topic score, as
``(topic, q_k · v_k)`` pairs (largest magnitude first).
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ...errors import RLSIError
from ..combine import interpolate
from ..postings import top_n
from .kernels import bm25_postings, drop_rows_df

__all__ = ["Snapshot", "SegmentView", "LiveHit", "EXPLAINED_TOPICS"]

log = logging.getLogger(__name__)

#: Topics listed per hit, and the smallest share of the largest contribution a listed topic has.
EXPLAINED_TOPICS = 3
EXPLAINED_SHARE = 1e-3


class LiveHit(NamedTuple):
    """One result: ``(doc_id, score, term_score, topic_score, topics)``; ``topics`` is a tuple of
    ``(topic, contribution)`` pairs, the topics that made most of the topic score."""

    doc_id: str
    score: float
    term_score: float
    topic_score: float
    topics: tuple = ()


class SegmentView:
    """A segment as one generation sees it: its deleted rows, live document frequencies and sizes."""

    def __init__(self, seg, deleted=None, entry=None):
        self.seg = seg
        self.entry = entry  # the manifest entry (writer side)
        self.deleted = np.zeros(0, dtype=np.int64) if deleted is None else np.asarray(deleted, dtype=np.int64)
        n = seg.n_docs
        self.dead = None
        self.live_df = seg.column_df()
        if len(self.deleted):
            self.dead = np.zeros(n, dtype=bool)
            self.dead[self.deleted] = True
            drop_rows_df(np.asarray(seg.row_ptr), np.asarray(seg.cols), self.deleted, self.live_df)
        self.n_live = n - len(self.deleted)
        doc_len = np.asarray(seg.doc_len)
        self.live_len = float(doc_len.sum() - (doc_len[self.deleted].sum() if len(self.deleted) else 0.0))
        self._tie = None

    def live_rows(self):
        return np.arange(self.seg.n_docs) if self.dead is None else np.flatnonzero(~self.dead)

    def tie_keys(self):
        """Per row, its rank in descending id order within the segment (smaller ranks first on ties)."""
        if self._tie is None:
            order = np.asarray(self.seg.order)
            tie = np.empty(len(order), dtype=np.int64)
            tie[order[::-1]] = np.arange(len(order))
            self._tie = tie
        return self._tie


class Snapshot:
    """One committed generation (see the module docstring). Built by the index, never by callers."""

    def __init__(self, *, generation, params, vocabulary, n_terms, tokenizer, model, views, pending_version=None):
        self.generation = int(generation)
        self.params = dict(params)
        self.vocabulary = vocabulary
        self.n_terms = int(n_terms)
        self.tokenizer = tokenizer
        self.model = model  # a ModelVersion or None
        self.views = tuple(views)
        self.pending_version = pending_version
        self.n_docs = sum(v.n_live for v in self.views)
        self.total_len = sum(v.live_len for v in self.views)
        self._order = None

    # ------------------------------------------------------------------ facts
    @property
    def model_version(self):
        return None if self.model is None else self.model.version

    @property
    def n_segments(self):
        return len(self.views)

    def __len__(self):
        return self.n_docs

    def locate(self, doc_ids):
        """``(view index, row)`` of each id (-1, -1 where it is not a live document)."""
        ids = np.asarray([str(d) for d in doc_ids], dtype=str) if len(doc_ids) else np.zeros(0, dtype="<U1")
        where = np.full(len(ids), -1, dtype=np.int64)
        rows = np.full(len(ids), -1, dtype=np.int64)
        for i, view in enumerate(self.views):
            r = view.seg.rows_of(ids)
            if view.dead is not None:
                r[(r >= 0) & view.dead[np.maximum(r, 0)]] = -1
            hit = (r >= 0) & (where < 0)
            where[hit], rows[hit] = i, r[hit]
        return where, rows

    def __contains__(self, doc_id):
        return bool(self.locate([doc_id])[0][0] >= 0)

    def document(self, doc_id, n_topics=5):
        """What the index holds about a live document: its length, segment and strongest topics (None if
        the id is not live)."""
        where, rows = self.locate([doc_id])
        if where[0] < 0:
            return None
        view, r = self.views[where[0]], int(rows[0])
        info = {"id": str(doc_id), "segment": view.seg.name, "length": float(view.seg.doc_len[r]),
                "model_version": self.model_version, "topics": []}
        if self.model is not None:
            v = np.asarray(view.seg.topics[self.model.version][r], dtype=np.float64)
            top = np.argsort(-np.abs(v), kind="stable")[:n_topics]
            info["topics"] = [(int(t), float(v[t])) for t in top if v[t] != 0]
        return info

    # ------------------------------------------------------------------ queries
    def _query_terms(self, counts_row):
        """Sorted term ids and their query counts (float64) of a 1-row CSR over the vocabulary."""
        Q = sp.csr_matrix(counts_row, dtype=np.float64)
        Q.sum_duplicates()
        return Q.indices.astype(np.int64), Q.data

    def _idf(self, columns):
        """BM25's idf of the query terms (``columns``: their local column in each segment, -1 if absent)."""
        df = np.zeros(len(columns[0]) if columns else 0, dtype=np.float64)
        for view, cols in zip(self.views, columns):
            found = cols >= 0
            df[found] += view.live_df[cols[found]]
        return np.log1p((self.n_docs - df + 0.5) / (df + 0.5))  # the expression of BM25.fit

    def _term_scores(self, view, cols, qtf, idf, avgdl):
        """Dense BM25 scores of every row of one segment (None when no query term is in it) and the rows
        reached (deleted ones left out)."""
        seg = view.seg
        present = cols[cols >= 0]
        if len(present) == 0:
            return None, np.zeros(0, dtype=np.int64)
        n = seg.n_docs
        out = np.zeros(n)
        col_ptr = np.asarray(seg.col_ptr)
        total = int((col_ptr[present + 1] - col_ptr[present]).sum())
        touched = np.empty(min(total, n), dtype=np.int64)
        m = bm25_postings(col_ptr, np.asarray(seg.rows), np.asarray(seg.tf), cols, qtf, idf,
                          np.asarray(seg.doc_len), float(self.params["k1"]), float(self.params["b"]), avgdl,
                          out, np.zeros(n, dtype=np.bool_), touched)
        touched = touched[:m]
        if view.dead is not None:
            touched = touched[~view.dead[touched]]
        return out, touched

    def _query_vector(self, counts_row, n_tokens, tfidf_row=None):
        if self.model is None:
            return None
        return self.model.fold(counts_row, np.asarray([n_tokens]), self.vocabulary, tfidf=tfidf_row)

    def _alpha(self, alpha):
        a = self.params["alpha"] if alpha is None else alpha
        if not (isinstance(a, (int, float)) and 0.0 <= a <= 1.0):
            raise RLSIError(f"alpha={a!r}: must be between 0 and 1")
        if a > 0 and self.model is None:
            raise RLSIError(f"alpha={a} gives weight to topic matching but the index has no topic model; use alpha=0")
        return float(a)

    def search(self, query, k=10, *, candidates=None, alpha=None):
        """The ``k`` best live documents for one query string (a list of :class:`LiveHit`; empty when no
        query term is in the vocabulary)."""
        if not isinstance(query, str):
            raise RLSIError(f"the query must be a str, got {type(query).__name__}")
        return self.search_many([query], k, candidates=candidates, alpha=alpha)[0]

    def search_many(self, queries, k=10, *, candidates=None, alpha=None):
        """:meth:`search` for each query string."""
        if isinstance(queries, str):
            queries = [queries]
        if self.tokenizer is None:
            raise RLSIError("this index holds vectorised documents (no vectorizer): rank vectorised queries with "
                            "search_vectors")
        _check_k(k, candidates)
        alpha = self._alpha(alpha)
        results = []
        for i, q in enumerate(queries):
            if not isinstance(q, str):
                raise RLSIError(f"query {i} is a {type(q).__name__}, expected str")
            ids, n_tokens = self.vocabulary.lookup(self.tokenizer(q), limit=self.n_terms)
            counts = sp.csr_matrix((np.ones(len(ids)), ids, [0, len(ids)]), shape=(1, self.n_terms))
            results.append(self._rank(counts, n_tokens, None, k, candidates, alpha))
        return results

    def search_vectors(self, counts, tfidf=None, *, k=10, candidates=None, alpha=None):
        """Rank vectorised queries: raw query counts (CSR, one row per query, the vocabulary's columns) and,
        for a topic model of tf-idf on an index without a vectorizer, their tf-idf."""
        _check_k(k, candidates)
        alpha = self._alpha(alpha)
        counts = sp.csr_matrix(counts, dtype=np.float64)
        if counts.shape[1] > self.n_terms:
            raise RLSIError(f"query vectors have {counts.shape[1]} columns; the index has {self.n_terms} terms")
        counts.resize((counts.shape[0], self.n_terms))
        tfidf = None if tfidf is None else sp.csr_matrix(tfidf)
        lengths = np.asarray(counts.sum(axis=1)).ravel()
        return [self._rank(counts[i], lengths[i], None if tfidf is None else tfidf[i], k, candidates, alpha)
                for i in range(counts.shape[0])]

    def _rank(self, counts_row, n_tokens, tfidf_row, k, candidates, alpha):
        terms, qtf = self._query_terms(counts_row)
        if len(terms) == 0 or self.n_docs == 0:
            if len(terms) == 0:
                log.info("a query has no term known to the index: no result")
            return []
        columns = [v.seg.local_columns(terms) for v in self.views]
        idf = self._idf(columns)
        avgdl = (self.total_len / self.n_docs) or 1.0
        scored = [self._term_scores(v, cols, qtf, idf, avgdl) for v, cols in zip(self.views, columns)]
        if candidates is None or candidates >= self.n_docs:
            picks = [v.live_rows() for v in self.views]
        else:
            picks = self._candidates(scored, int(candidates))
        every = [len(rows) == v.seg.n_docs for v, rows in zip(self.views, picks)]  # no copy of a whole segment
        term = np.concatenate([np.zeros(len(rows)) if out is None else (out if all_ else out[rows])
                               for (out, _), rows, all_ in zip(scored, picks, every)])
        qv = self._query_vector(counts_row, n_tokens, tfidf_row)
        if qv is not None:
            version = self.model.version
            parts = []
            for v, rows, all_ in zip(self.views, picks, every):
                V = np.asarray(v.seg.topics[version])
                parts.append(np.asarray(qv @ (V if all_ else V[rows]).T, dtype=np.float64)[0])
            topic = np.concatenate(parts)
        else:
            topic = np.zeros_like(term)
        combined = interpolate(topic[None, :], term[None, :], alpha, topic_norm=self.params["topic_norm"],
                               term_norm=self.params["term_norm"])[0]
        if not (np.isfinite(term).all() and np.isfinite(topic).all() and np.isfinite(combined).all()):
            raise RLSIError("the scores hold NaN or infinite values: the index or its model is damaged")
        where = np.concatenate([np.full(len(rows), i, dtype=np.int64) for i, rows in enumerate(picks)])
        rows = np.concatenate(picks).astype(np.int64)
        tie = self._all_tie() if len(rows) == self.n_docs else self._tie(where, rows)
        best = top_n(combined, tie, len(combined) if k is None else min(k, len(combined)))
        hits = []
        for j in best:
            view, r = self.views[where[j]], rows[j]
            hits.append(LiveHit(str(view.seg.ids[r]), float(combined[j]), float(term[j]), float(topic[j]),
                                self._explain(qv, view, r)))
        return hits

    def _all_tie(self):
        """:meth:`_tie` of every live document in view order, computed once per snapshot."""
        if self._order is None:
            picks = [v.live_rows() for v in self.views]
            where = np.concatenate([np.full(len(r), i, dtype=np.int64) for i, r in enumerate(picks)])
            self._order = self._tie(where, np.concatenate(picks).astype(np.int64))
        return self._order

    def _tie(self, where, rows):
        """Tie keys of the picked documents: their rank in descending id order among all of them."""
        ids = np.concatenate([np.asarray(self.views[i].seg.ids[rows[where == i]]) for i in range(len(self.views))])
        back = np.concatenate([np.flatnonzero(where == i) for i in range(len(self.views))])
        order = np.argsort(ids, kind="stable")[::-1]
        tie = np.empty(len(ids), dtype=np.int64)
        tie[back[order]] = np.arange(len(ids))
        return tie

    def _candidates(self, scored, n):
        """Per segment, the rows of the ``n`` best live documents by term score (ties: id descending),
        then zero-score documents in the same order when fewer than ``n`` score — the candidate set of
        :meth:`rlsi.retrieval.Searcher.search` with ``candidates=n``."""
        pool_s, pool_id, pool_w, pool_r = [], [], [], []
        for i, ((out, touched), view) in enumerate(zip(scored, self.views)):
            if out is None:
                continue
            hit = touched[out[touched] != 0]
            if len(hit) > n:
                hit = hit[top_n(out[hit], view.tie_keys()[hit], n)]
            pool_s.append(out[hit])
            pool_id.append(np.asarray(view.seg.ids[hit]))
            pool_w.append(np.full(len(hit), i, dtype=np.int64))
            pool_r.append(hit)
        s = np.concatenate(pool_s) if pool_s else np.zeros(0)
        ids = np.concatenate(pool_id) if pool_id else np.zeros(0, dtype="<U1")
        w = np.concatenate(pool_w) if pool_w else np.zeros(0, dtype=np.int64)
        r = np.concatenate(pool_r) if pool_r else np.zeros(0, dtype=np.int64)
        if (s < 0).any():
            raise RLSIError("negative term scores: the index is damaged")  # pragma: no cover - BM25 is >= 0
        keep = _best(s, ids, n)
        w, r = w[keep], r[keep]
        if len(keep) < n:
            fw, fr = self._zero_fill(scored, n - len(keep))
            w, r = np.concatenate([w, fw]), np.concatenate([r, fr])
        return [np.sort(r[w == i]) for i in range(len(self.views))]

    def _zero_fill(self, scored, need):
        """The first ``need`` live documents with term score 0 in descending id order, across segments."""
        fill_id, fill_w, fill_r = [], [], []
        for i, ((out, _), view) in enumerate(zip(scored, self.views)):
            seq = np.asarray(view.seg.order)[::-1]
            ok = out[seq] == 0 if out is not None else np.ones(len(seq), dtype=bool)
            if view.dead is not None:
                ok &= ~view.dead[seq]
            seq = seq[ok][:need]
            fill_id.append(np.asarray(view.seg.ids[seq]))
            fill_w.append(np.full(len(seq), i, dtype=np.int64))
            fill_r.append(seq)
        ids = np.concatenate(fill_id)
        take = np.argsort(ids, kind="stable")[::-1][:need]
        return np.concatenate(fill_w)[take], np.concatenate(fill_r)[take]

    def _explain(self, qv, view, r):
        if qv is None:
            return ()
        contrib = qv[0].astype(np.float64) * np.asarray(view.seg.topics[self.model.version][r], dtype=np.float64)
        top = np.argsort(-np.abs(contrib), kind="stable")[:EXPLAINED_TOPICS]
        floor = EXPLAINED_SHARE * abs(contrib[top[0]]) if len(top) else 0.0
        return tuple((int(t), float(contrib[t])) for t in top if contrib[t] != 0 and abs(contrib[t]) >= floor)


def _best(scores, ids, n):
    """Positions of the ``n`` best entries by score, ties broken by id descending (the trec order): the
    scores decide by a partition; ids are compared only among the entries tied at the cut."""
    if len(scores) <= n:
        return np.arange(len(scores))
    cut = -np.partition(-scores, n - 1)[n - 1]
    above = np.flatnonzero(scores > cut)
    tied = np.flatnonzero(scores == cut)
    tied = tied[np.argsort(ids[tied], kind="stable")[::-1][: n - len(above)]]
    return np.concatenate([above, tied])


def _check_k(k, candidates):
    from ..._validation import check_number

    if k is not None:
        check_number("k", k, low=1, integer=True)
    if candidates is not None:
        check_number("candidates", candidates, low=1, integer=True)
