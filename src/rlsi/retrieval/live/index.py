"""The live index: :class:`LiveIndex`, its readers' snapshots and its one writer.

::

    from rlsi.retrieval.live import LiveIndex
    index = LiveIndex.create("news_index", model, vectorizer)     # or LiveIndex.open("news_index")
    index.add(texts, ids); index.commit()                         # durable when commit() returns
    index.delete(["d17"]); index.update(["new text"], ["d3"]); index.commit()
    index.search("boundary layer transition", k=10)               # [LiveHit(doc_id, score, term, topic, topics)]
    model.partial_fit(X_new); index.update_model(model, vectorizer)   # topics follow the stream
    index.close()

**Threads.** Searches run on a :class:`~rlsi.retrieval.live.snapshot.Snapshot`, the immutable view of the
last commit; ``index.search`` takes the current one, ``index.snapshot()`` hands it out for several queries
that must agree. Any number of threads search while one thread writes: writer methods (``add``,
``delete``, ``update``, ``commit``, ``rollback``, ``merge``, ``update_model``, ``refold``) are serialised by a
lock and publish a new snapshot only when a commit has reached the disk. Added documents are invisible to
searches until the commit.

**Processes.** The first writer call takes the folder's writer lock (:mod:`rlsi.retrieval.live.lock`):
a second writer, in any process, gets :class:`~rlsi.retrieval.live.lock.IndexLockedError` (one line) and
changes nothing. A process that only searches takes no lock; ``refresh()`` moves it to the newest
committed generation. Taking the lock removes what a killed writer left (files no manifest names, the
vocabulary's uncommitted tail).

**Durability.** ``commit()`` writes and fsyncs the new segment, deletes and vocabulary, then swaps the
manifest (:mod:`rlsi.retrieval.live.manifest`); when it returns the documents survive ``kill -9`` and a
power cut. A writer killed at any moment leaves the last committed generation whole.

**Topics that move.** ``update_model(model, vectorizer)`` stores the model as a new version and re-folds
every segment's documents with it (their raw counts are in the segments: no text is needed), one segment
per commit; new documents get vectors of both versions meanwhile. Until the last segment is done every
query is ranked with the *old* version's topics — query vector and document vectors alike — and the
commit that ends the re-fold switches every segment to the new version at once. ``background=True``
re-folds on a thread of its own between the writer's other calls.
"""

from __future__ import annotations

import copy
import logging
import threading
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ...errors import RLSIError
from ...text.ids import check_ids
from .buffer import Buffer
from .lock import WriterLock
from .manifest import LOCK_FILE, deletes_name, read_manifest, remove_orphans, segment_name, write_manifest
from .models import check_model
from .policy import TieredMergePolicy
from .reader import IndexReader
from .segment import save_array
from .setup import new_index, params_of
from .snapshot import SegmentView
from .writer import flush_segment, merge_segments, refold_segment

__all__ = ["LiveIndex"]

log = logging.getLogger(__name__)


class LiveIndex(IndexReader):
    """A search index that takes documents (see the module docstring). Build it with :meth:`create`,
    :meth:`from_model_dir` or :meth:`open`, never directly."""

    def __init__(self, path, *, weigh=None, merge_policy=None, mmap=True, durable=True):
        self.durable = bool(durable)
        self.merge_policy = TieredMergePolicy() if merge_policy is None else (merge_policy or None)
        self._process_lock = WriterLock(path, LOCK_FILE)
        self._refold_thread = None
        self._background_error = None
        self._buffer = Buffer()
        super().__init__(path, weigh=weigh, mmap=mmap)

    def _adopt(self, manifest):
        super()._adopt(manifest)
        self._buffer = Buffer()

    def refresh(self):
        """A writer is always at its newest generation; an index not written yet moves to the newest on
        disk (:meth:`IndexReader.refresh`)."""
        return False if self._process_lock.held else super().refresh()

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(cls, path, model=None, vectorizer=None, *, alpha=None, k1=1.2, b=0.75, topic_norm=None,
               term_norm=None, fold_lambda2=None, dtype=np.float64, n_terms=None, weigh=None, merge_policy=None,
               durable=True):
        """A new, empty live index in the folder ``path`` (which must not exist or be empty), serving
        ``model`` (or None: term matching only) with ``vectorizer`` (None: vectorised documents over
        ``n_terms`` columns, ranked with :meth:`search_vectors`). The other parameters are
        :class:`~rlsi.retrieval.Searcher`'s; ``merge_policy`` a :class:`TieredMergePolicy` (None: the default;
        ``False``: merge only when asked); ``durable=False`` commits without fsyncing the new files (they
        survive a killed process, not a power cut: for a bulk load that can be redone)."""
        new_index(path, model, vectorizer, params_of(model, alpha=alpha, k1=k1, b=b, topic_norm=topic_norm,
                                                     term_norm=term_norm, fold_lambda2=fold_lambda2, dtype=dtype),
                  n_terms=n_terms)
        return cls(path, weigh=weigh, merge_policy=merge_policy, durable=durable)

    @classmethod
    def from_model_dir(cls, path, *, alpha=None, fold_lambda2=None, dtype=np.float64, merge_policy=None, **params):
        """Turn the model folder ``path`` (``rlsi fit``) into an empty live index in place: its model and
        vectorizer become model version 1; a static search index it holds is dropped."""
        from .setup import convert_model_dir

        convert_model_dir(path, alpha=alpha, fold_lambda2=fold_lambda2, dtype=dtype, **params)
        return cls(path, merge_policy=merge_policy)

    @classmethod
    def open(cls, path, *, weigh=None, merge_policy=None, mmap=True, durable=True):
        """The live index in the folder ``path`` at its last committed generation, ready to write (the
        writer lock is taken at the first change); ModelFormatError when the folder is damaged."""
        return cls(path, weigh=weigh, merge_policy=merge_policy, mmap=mmap, durable=durable)

    # ------------------------------------------------------------------ the writer
    def _writable(self):
        """Take the writer lock (once); catch up with a generation another writer committed; clean up."""
        self._check_open()
        if self._background_error is not None:
            err, self._background_error = self._background_error, None
            raise err
        if self._process_lock.held:
            return
        self._process_lock.acquire()
        try:
            manifest = read_manifest(self.path)
            if manifest["live"]["generation"] != self.generation or manifest != self._manifest:
                self._load(manifest)
            removed = remove_orphans(self.path, self._manifest)
            if removed:
                log.info("%s: removed %d files an interrupted writer left", self.path, removed)
        except BaseException:
            self._process_lock.release()
            raise

    def add(self, texts, ids):
        """Add documents (strings) under ``ids`` (new: an id already in the index or the buffer is refused;
        :meth:`update` replaces). Visible to searches and durable after :meth:`commit`."""
        with self._lock:
            self._writable()
            tok = self._snapshot.tokenizer
            if tok is None:
                raise RLSIError("this index holds vectorised documents (no vectorizer): add them with add_vectors")
            if isinstance(texts, str):
                raise RLSIError("add() needs a list of documents, got a single string")
            texts = list(texts)
            ids = self._new_ids(ids, len(texts))
            for i, t in enumerate(texts):
                if not isinstance(t, str):
                    raise RLSIError(f"document {i} is a {type(t).__name__}, expected str")
            rows, cols, lengths = [], [], []
            for i, t in enumerate(texts):
                tokens = tok(t)
                term_ids = self._vocab.grow(tokens)
                rows.append(np.full(len(term_ids), i, dtype=np.int64))
                cols.append(term_ids)
                lengths.append(len(tokens))
            self._buffer.add(ids, _counts(rows, cols, len(texts), len(self._vocab)), np.asarray(lengths), None)
            return len(texts)

    def add_vectors(self, counts, ids, *, tfidf=None):
        """Add vectorised documents: raw counts (CSR, documents x the vocabulary's columns; wider widens an
        index without a vectorizer) and, for a topic model of tf-idf, their tf-idf."""
        with self._lock:
            self._writable()
            C = sp.csr_matrix(counts, dtype=np.float64, copy=True)
            ids = self._new_ids(ids, C.shape[0])
            if C.nnz and (not np.isfinite(C.data).all() or C.data.min() < 0):
                raise RLSIError("counts must be finite and non-negative (raw term counts)")
            if C.shape[1] > len(self._vocab):
                self._vocab.widen(C.shape[1])
            C.eliminate_zeros()
            C.sum_duplicates()
            C.resize((C.shape[0], len(self._vocab)))
            if tfidf is not None and sp.csr_matrix(tfidf).shape[0] != C.shape[0]:
                raise RLSIError(f"tfidf has {sp.csr_matrix(tfidf).shape[0]} rows for {C.shape[0]} documents")
            lengths = np.asarray(C.sum(axis=1)).ravel()
            self._buffer.add(ids, C, lengths, None if tfidf is None else sp.csr_matrix(tfidf))
            return C.shape[0]

    def add_matrix(self, matrix, *, rows=None, segment_docs=200_000, block_rows=20_000, show_progress=False):
        """Add the documents of a matrix directory (``rlsi synth`` / ``rlsi ingest``: raw counts, tf-idf and
        ids) — all, or the range ``rows=(start, stop)`` — ``segment_docs`` per commit, read ``block_rows`` at
        a time (memory: one segment's counts); returns the number added."""
        from ..._progress import progress_bar
        from ...io.matrix import CorpusMatrix, load_matrix
        from ..build import _row_slice

        if not isinstance(matrix, CorpusMatrix):
            matrix = load_matrix(matrix, vectorizer=False, verify=True)  # every page is read anyway
        X, C = matrix.X, matrix.count_matrix()
        n = X.shape[0]
        start, stop = (0, n) if rows is None else (max(0, int(rows[0])), min(n, int(rows[1])))
        width = len(str(max(n - 1, 0)))
        bar = progress_bar(stop - start, "index", verbose=show_progress, unit="doc")
        pending = 0
        for a in range(start, stop, block_rows):
            b = min(stop, a + block_rows)
            ids = (np.asarray(matrix.doc_ids[a:b]).astype(str) if matrix.doc_ids is not None
                   else np.arange(a, b).astype(f"U{width}"))  # "0" ... "N-1", as Searcher.from_matrix names them
            self.add_vectors(_row_slice(C, a, b), ids, tfidf=_row_slice(X, a, b))
            pending += b - a
            if b == stop or pending >= segment_docs:
                self.commit()
                pending = 0
            if bar is not None:
                bar.update(b - a)
        if bar is not None:
            bar.close()
        return stop - start

    def _new_ids(self, ids, n):
        ids = check_ids([str(d) for d in ids], f"{self.path}") if n else np.zeros(0, dtype="<U1")
        if len(ids) != n:
            raise RLSIError(f"{len(ids)} document ids for {n} documents")
        taken = [d for d in ids.tolist() if d in self._buffer]
        where, rows = self._locate(ids)
        taken += [d for d, w in zip(ids.tolist(), where) if w >= 0]
        if taken:
            raise RLSIError(f"document id {taken[0]!r} is already in the index (use update to replace it)")
        return ids

    def _locate(self, ids):
        """(view index, row) of committed live documents, pending deletes counted as gone."""
        where, rows = self._snapshot.locate(ids)
        for i in np.flatnonzero(where >= 0):
            view = self._snapshot.views[where[i]]
            if int(rows[i]) in self._buffer.deleted.get(view.seg.name, ()):
                where[i] = -1
        return where, rows

    def delete(self, ids):
        """Delete the documents ``ids`` (committed or buffered); returns how many were found. Takes
        effect at the next :meth:`commit`; the statistics then no longer count them."""
        with self._lock:
            self._writable()
            ids = [str(d) for d in ids]
            found = self._buffer.drop(ids)
            rest = [d for d in ids if d not in found]
            where, rows = self._locate(rest)
            for w, r in zip(where, rows):
                if w >= 0:
                    self._buffer.deleted.setdefault(self._snapshot.views[w].seg.name, set()).add(int(r))
            return len(found) + int((where >= 0).sum())

    def update(self, texts, ids):
        """Replace the documents ``ids`` by ``texts`` (those not in the index are added): a delete and an add
        in one call, committed together."""
        with self._lock:
            ids = [str(d) for d in ids]
            self.delete(ids)
            return self.add(texts, ids)

    def commit(self):
        """Make the added and deleted documents durable and visible; returns the new generation (the same
        one when there was nothing to commit). Merges segments afterwards as the merge policy says."""
        with self._lock:
            self._writable()
            if self._commit_buffer():
                self._auto_merge()
            return self.generation

    def rollback(self):
        """Drop the adds and deletes made since the last commit (that generation stays as it is); returns how
        many there were. A server drops a group of requests this way when their commit failed."""
        with self._lock:
            self._check_open()
            n, self._buffer = self._buffer.size, Buffer()
            return n

    def _commit_buffer(self, extra=None):
        """Flush the buffer and deletes into a new generation (``extra(manifest)`` edits it further)."""
        buf = self._buffer
        if not buf and extra is None:
            return False
        manifest = copy.deepcopy(self._manifest)
        live = manifest["live"]
        gen = live["generation"] + 1
        new_views = dict(self._views)
        if buf.n_live:
            counts, lengths, ids, tfidf = buf.collect(len(self._vocab))
            name = segment_name(live["next_segment"])
            live["next_segment"] += 1
            seg, entry = flush_segment(self.path, name, counts, lengths, ids, self._active_models(), self._vocab,
                                       topic_dtype=self._topic_dtype(), tfidf=tfidf)
            live["segments"].append(entry)
            new_views[name] = SegmentView(seg, None, entry)
        for name, rows in buf.deleted.items():
            self._apply_deletes(live, new_views, name, rows, gen)
        live["vocabulary"] = self._vocab.append_to(self.path, live["vocabulary"])
        if extra is not None:
            extra(manifest, new_views)
        self._swap(manifest, new_views, gen)
        return True

    def _apply_deletes(self, live, views, name, rows, gen):
        view = views[name]
        rows = np.union1d(view.deleted, np.fromiter(rows, dtype=np.int64))
        entry = copy.deepcopy(view.entry)
        idx = next(i for i, s in enumerate(live["segments"]) if s["name"] == name)
        if len(rows) == view.seg.n_docs:  # every document deleted: the segment goes
            del live["segments"][idx]
            del views[name]
            return
        fname = deletes_name(name, gen)
        entry["deletes"] = save_array(self.path / fname, rows)
        entry["deleted"] = len(rows)
        live["segments"][idx] = entry
        views[name] = SegmentView(view.seg, rows, entry)

    def _swap(self, manifest, views, gen):
        """Commit point: the manifest of generation ``gen`` replaces the last one; then the new snapshot is
        published and the files no generation names any more are removed."""
        manifest["live"]["generation"] = gen
        write_manifest(self.path, manifest, self._manifest, durable=self.durable)
        self._manifest, self._views = manifest, views
        kept = manifest["live"]["models"]
        self._models = {v: m for v, m in self._models.items() if str(v) in kept}
        self._buffer = Buffer()
        self._publish()
        remove_orphans(self.path, manifest)

    def _active_models(self):
        live = self._manifest["live"]
        return [self._models[v] for v in (live["model_version"], live["pending_version"]) if v is not None]

    # ------------------------------------------------------------------ merges
    def merge(self, max_segments=1, *, show_progress=False):
        """Commit, then merge segments until at most ``max_segments`` remain (smallest first; deleted
        documents are dropped); returns the generation. Scores do not change."""
        with self._lock:
            self._writable()
            self._commit_buffer()
            while len(self._views) > max(1, int(max_segments)):
                names = [s["name"] for s in self._manifest["live"]["segments"]]
                by_size = sorted(names, key=lambda n: self._views[n].n_live)
                take = len(names) - max(1, int(max_segments)) + 1
                self._merge([n for n in names if n in set(by_size[:take])], show_progress)
            if len(self._views) == 1:
                only = next(iter(self._views.values()))
                if len(only.deleted):
                    self._merge([only.seg.name], show_progress)
            return self.generation

    def _auto_merge(self):
        if self.merge_policy is None:
            return
        for _ in range(64):  # a merge can fill the tier above: cascade, bounded
            segs = [(s["name"], self._views[s["name"]].n_live, s["docs"]) for s in self._manifest["live"]["segments"]]
            groups = self.merge_policy.select(segs)
            if not groups:
                return
            for group in groups:
                self._merge(group, False)

    def _merge(self, names, show_progress):
        from ..._progress import progress_bar

        views = [self._views[n] for n in names]
        manifest = copy.deepcopy(self._manifest)
        live = manifest["live"]
        name = segment_name(live["next_segment"])
        live["next_segment"] += 1
        total = sum(v.n_live for v in views)
        bar = progress_bar(total, "merge", verbose=show_progress, unit="doc")
        seg, entry = merge_segments(self.path, name, views, self._active_models(), self._vocab,
                                    live["vocabulary"]["terms"], topic_dtype=self._topic_dtype(),
                                    show=None if bar is None else bar.update)
        if bar is not None:
            bar.close()
        first = min(i for i, s in enumerate(live["segments"]) if s["name"] in names)
        kept = [s for s in live["segments"] if s["name"] not in names]
        kept.insert(first, entry)
        live["segments"] = kept
        new_views = {n: v for n, v in self._views.items() if n not in names}
        new_views[name] = SegmentView(seg, None, entry)
        self._swap(manifest, new_views, live["generation"] + 1)

    def _topic_dtype(self):
        from ..searcher_state import params_from_state

        return params_from_state(self._manifest["live"]["params"])["dtype"]

    # ------------------------------------------------------------------ model versions
    def update_model(self, model, vectorizer=None, *, background=False, refold=True, info=None):
        """Serve ``model`` (with ``vectorizer``; None keeps the current one) as a new model version: every
        segment is re-folded with it, then one commit switches all of them (see the module docstring).
        ``background=True`` returns at once and re-folds on a thread (:meth:`wait_refold`); ``refold=False``
        only registers the version: the caller re-folds step by step with :meth:`refold`. Returns the new
        version number (``info``: what to record with it, e.g. its source)."""
        from .setup import register_version

        with self._lock:
            self._writable()
            self._commit_buffer()
            if vectorizer is None:
                vectorizer = self.vectorizer
            vectorizer = check_model(model, vectorizer)
            version = register_version(self, model, vectorizer, info)
        if background:
            self._refold_thread = threading.Thread(target=self._refold_all, name="rlsi-refold", daemon=True)
            self._refold_thread.start()
        elif refold:
            self.refold()
        return version

    def _refold_all(self):
        try:
            while self.refold(max_segments=1):
                pass
        except BaseException as exc:  # reported to the writer's next call
            self._background_error = exc

    def wait_refold(self, timeout=None):
        """Wait for a background re-fold; raise what it raised."""
        t = self._refold_thread
        if t is not None:
            t.join(timeout)
        if self._background_error is not None:
            err, self._background_error = self._background_error, None
            raise err

    def refold(self, max_segments=None):
        """Re-fold up to ``max_segments`` segments (default all) with the pending model version, one commit
        each; the commit after the last switches the index to it. Returns the segments still to re-fold."""
        with self._lock:
            self._writable()
            pending = self._manifest["live"]["pending_version"]
            if pending is None:
                return 0
            model = self._models[pending]
            todo = [s["name"] for s in self._manifest["live"]["segments"] if str(pending) not in s["topics"]]
            for name in todo[: len(todo) if max_segments is None else int(max_segments)]:
                view = self._views[name]
                V, entry = refold_segment(self.path, view, model, self._vocab, self._snapshot.n_terms,
                                          topic_dtype=self._topic_dtype())

                def add_topics(manifest, views, name=name, V=V, entry=entry):
                    seg_entry = next(s for s in manifest["live"]["segments"] if s["name"] == name)
                    seg_entry["topics"][str(pending)] = entry
                    old = views[name]
                    seg = replace(old.seg, topics={**old.seg.topics, pending: V})  # readers keep the old object
                    views[name] = SegmentView(seg, old.deleted, seg_entry)

                self._commit_buffer(extra=add_topics)
                todo.remove(name)
            if not todo:
                from .setup import switch_version

                self._commit_buffer(extra=switch_version(self, pending))
            return len(todo)

    # ------------------------------------------------------------------ closing
    def close(self):
        """Wait for a background re-fold, release the writer lock. Uncommitted documents are dropped."""
        t = self._refold_thread
        if t is not None and t is not threading.current_thread():
            t.join()
        with self._lock:
            if self._buffer:
                log.warning("%s: closed with %d uncommitted documents and deletes; they are dropped",
                            self.path, self._buffer.size)
            self._process_lock.release()
            self._closed = True

def _counts(rows, cols, n_docs, n_terms):
    r = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    C = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n_docs, n_terms))
    C.sum_duplicates()
    return C

