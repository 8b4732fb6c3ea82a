"""Following an online model's topics over a stream: :class:`TopicTracker` and :func:`track`.

The tracker accumulates each segment's topic shares from the mini-batches' topic vectors, and at the
segment's end takes a snapshot of the topics (top terms, alive flags, lives); see :mod:`rlsi.tracking`
for the definitions.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_number
from ..errors import RLSIError
from .timeline import TopicTimeline

__all__ = ["TopicTracker", "track"]


def _topic_rows(components):
    """Topics (K x M, dense or sparse) as CSR with sorted column indices per row."""
    C = sp.csr_matrix(components)
    C.sort_indices()
    return C


def _cosine(a_idx, a_val, b_idx, b_val):
    """Cosine of two sparse vectors given as (sorted unique indices, values); 0 if either is zero."""
    na, nb = np.linalg.norm(a_val), np.linalg.norm(b_val)
    if na == 0 or nb == 0:
        return 0.0
    common, ia, ib = np.intersect1d(a_idx, b_idx, assume_unique=True, return_indices=True)
    return float(np.dot(a_val[ia], b_val[ib]) / (na * nb)) if len(common) else 0.0


class TopicTracker:
    """Accumulates shares per segment and takes topic snapshots (see :mod:`rlsi.tracking`).

    Use: for each mini-batch, ``observe(X, W, segment)`` with the batch's tf-idf X and its topic vectors W
    (``OnlineRLSI.partial_fit_transform``); at the end of each segment, ``snapshot(components,
    feature_names)``. :func:`track` does both around a model.
    """

    def __init__(self, n_components, *, n_top_terms=10, orient=True):
        check_number("n_components", n_components, low=1, integer=True)
        check_number("n_top_terms", n_top_terms, low=1, integer=True)
        self.n_components = int(n_components)
        self.n_top_terms = int(n_top_terms)
        self.orient = bool(orient)
        self.timeline = TopicTimeline(self.n_components)
        self._current = None      # label of the open segment
        self._share = None
        self._n = 0
        self._life = np.zeros(self.n_components, dtype=np.int64)
        self._was_alive = np.zeros(self.n_components, dtype=bool)
        self._last_vec = [None] * self.n_components   # last live (indices, values) of each topic

    def observe(self, X, W, segment):
        """Add the shares of a batch (X: n x M tf-idf, W: n x K) to ``segment`` (opened if new)."""
        if self._current is not None and segment != self._current:
            raise RLSIError(f"segment {self._current!r} is still open: snapshot() it before observing "
                            f"{segment!r}")
        if self._current is None:
            if segment in self.timeline.segments:
                raise RLSIError(f"segment {segment!r} was already closed: documents must come in "
                                f"segment order (sort them by date)")
            self._current = segment
            self._share = np.zeros(self.n_components)
            self._n = 0
        W = np.asarray(W, dtype=np.float64)
        self._grow(W.shape[1])
        if W.shape[1] != self.n_components or W.shape[0] != X.shape[0]:
            raise RLSIError(f"W has shape {W.shape}; expected ({X.shape[0]}, {self.n_components})")
        X = sp.csr_matrix(X)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        ok = norms > 0
        if ok.any():
            self._share += (np.abs(W[ok]) / norms[ok, None]).sum(axis=0)
        self._n += X.shape[0]

    def snapshot(self, components, feature_names):
        """Close the open segment with the topics ``components`` (K x M) and the term names of the
        columns (a sequence; it may be longer than M). Returns the closed segment's label."""
        if self._current is None:
            raise RLSIError("no open segment: observe() a batch first")
        C = _topic_rows(components)
        self._grow(C.shape[0])
        if C.shape[0] != self.n_components:
            raise RLSIError(f"components have {C.shape[0]} topics; the tracker has {self.n_components}")
        if len(feature_names) < C.shape[1]:
            raise RLSIError(f"{len(feature_names)} feature names for {C.shape[1]} columns")
        tl, seg = self.timeline, self._current
        top, alive, drift = [], [], []
        for k in range(self.n_components):
            idx = C.indices[C.indptr[k]:C.indptr[k + 1]]
            val = C.data[C.indptr[k]:C.indptr[k + 1]]
            live = bool(len(val)) and bool(np.any(val != 0))
            alive.append(live)
            moved = None
            if live and self._was_alive[k] and self._last_vec[k] is not None:
                prev = self._last_vec[k]
                # 12 decimals: the rounding noise of an unchanged topic (1e-16) is no movement
                moved = round(max(0.0, 1.0 - _cosine(prev[0], prev[1], idx, val.astype(np.float64))), 12)
            drift.append(moved)
            if not live:
                top.append([])
                if self._was_alive[k]:
                    tl.events.append({"topic": k, "kind": "died", "segment": seg, "life": int(self._life[k])})
                self._was_alive[k] = False
                continue
            if not self._was_alive[k]:
                self._life[k] += 1
                if self._life[k] > 1:
                    prev = self._last_vec[k]
                    sim = _cosine(prev[0], prev[1], idx, val) if prev is not None else 0.0
                    tl.events.append({"topic": k, "kind": "reborn", "segment": seg, "life": int(self._life[k]),
                                      "similarity": sim})
            self._was_alive[k] = True
            self._last_vec[k] = (idx.copy(), val.astype(np.float64))
            if self.orient and val[val < 0].sum() + val[val > 0].sum() < 0:
                val = -val  # negative part dominates: shown as -u_k (with -v_k the model is unchanged)
            l1 = float(np.abs(val).sum())
            n = min(self.n_top_terms, len(val))
            best = np.argpartition(-np.abs(val), n - 1)[:n]
            best = best[np.lexsort((idx[best], -np.abs(val[best])))]
            top.append([(str(feature_names[idx[j]]), float(val[j] / l1)) for j in best])
        tl.segments.append(seg)
        tl.n_docs.append(int(self._n))
        tl.share.append(self._share.tolist())
        tl.top_terms.append(top)
        tl.alive.append(alive)
        tl.life.append(self._life.tolist())
        tl.drift.append(drift)
        self._current = None
        return seg

    def born(self, k, segment, documents, batch=None):
        """Record that topic k was born in ``segment`` (at mini-batch ``batch``) from ``documents`` (their ids)."""
        self._grow(k + 1)
        event = {"topic": int(k), "kind": "born", "segment": segment, "life": 1, "documents": list(documents)}
        if batch is not None:
            event["batch"] = int(batch)
        self.timeline.events.append(event)

    def _grow(self, K):
        """Room for K topics (topics born in the stream): the new ones were never alive in the segments so far."""
        new = K - self.n_components
        if new <= 0:
            return
        self.n_components = self.timeline.n_components = K
        if self._share is not None:
            self._share = np.concatenate([self._share, np.zeros(new)])
        self._life = np.concatenate([self._life, np.zeros(new, dtype=np.int64)])
        self._was_alive = np.concatenate([self._was_alive, np.zeros(new, dtype=bool)])
        self._last_vec += [None] * new
        tl = self.timeline
        for rows, pad in ((tl.share, 0.0), (tl.alive, False), (tl.life, 0), (tl.drift, None)):
            for row in rows:
                row.extend([pad] * new)
        for row in tl.top_terms:
            row.extend([] for _ in range(new))

    def name_topics(self, names):
        """Give the topics names (a model's ``topic_names_``: a string or None per topic; seed words' names), shown
        after their labels in the reports; None, or names that name no topic, leave them unnamed."""
        if names is None or not any(names):
            self.timeline.names = None
            return
        if len(names) != self.n_components:
            raise RLSIError(f"{len(names)} topic names for {self.n_components} topics")
        self.timeline.names = [str(n) if n else None for n in names]

    @property
    def open_segment(self):
        """Label of the segment being accumulated; None after a snapshot until the next observe."""
        return self._current


def track(model, batches, *, feature_names, n_top_terms=10, orient=True, callback=None, doc_ids=None):
    """Fit ``model`` online over ``batches`` and track its topics; returns a :class:`TopicTimeline`.

    model : an estimator with ``partial_fit_transform(X) -> W`` and ``components_`` (OnlineRLSI).
    batches : iterable of ``(X_batch, segment)`` in stream order; consecutive batches with the same
        segment label form one segment, whose snapshot is taken after its last batch.
    feature_names : sequence, or a callable returning the current names (a growing vocabulary).
    callback : optional ``callback(n_docs_in_batch)`` after each batch (progress bars).
    doc_ids : optional sequence of the streamed documents' ids, in stream order: a topic born in the stream
        (``OnlineRLSI(birth=...)``, its ``births_``) is recorded as a ``born`` event with the ids of the documents
        that caused it (without: their positions in the stream, from 0).

    A model with seed words (``seed_terms``) looks their strings up in ``feature_names`` as they are at the first
    mini-batch (its vocabulary: a word first seen later is named in the model's one warning and left out); its
    ``topic_names_`` (the seed groups' names; None for the others and for a born topic) name the timeline's
    topics.
    """
    names = feature_names if callable(feature_names) else (lambda: feature_names)
    tracker = None
    start = int(getattr(model, "n_docs_seen_", 0) or 0)
    n_births = len(getattr(model, "births_", None) or [])
    for X, seg in batches:
        if tracker is not None and tracker.open_segment is not None and seg != tracker.open_segment:
            tracker.snapshot(model.components_, names())
        # seed words (OnlineRLSI(seed_terms=...)) are looked up in the vocabulary of the first mini-batch
        first = tracker is None and getattr(model, "seed_terms", None) is not None
        W = model.partial_fit_transform(X, feature_names=names()) if first else model.partial_fit_transform(X)
        if tracker is None:
            tracker = TopicTracker(W.shape[1], n_top_terms=n_top_terms, orient=orient)
        tracker.observe(X, W, seg)
        for b in (getattr(model, "births_", None) or [])[n_births:]:
            docs = [p - start for p in b["documents"] if p >= start]
            tracker.born(b["topic"], seg, docs if doc_ids is None else [doc_ids[p] for p in docs], b["batch"])
            n_births += 1
        if callback is not None:
            callback(X.shape[0])
    if tracker is None:
        raise RLSIError("the stream is empty: nothing to track")
    if tracker.open_segment is not None:
        tracker.snapshot(model.components_, names())
    tracker.name_topics(getattr(model, "topic_names_", None))
    return tracker.timeline


