"""What ``rlsi serve`` serves, without HTTP: :class:`SearchService` opens an index folder and answers
searches, document look-ups, topics and health as JSON-ready dicts, and takes documents through its one
writer (:mod:`rlsi.serve.writer`). The web app (:mod:`rlsi.serve.app`) only parses requests and calls it.

**The folder.** A live index (``rlsi index MODEL --live --corpus FILE``) is served as it is. A model folder
without documents (``rlsi fit``) becomes an empty live index when the service opens it: its model and
vectorizer become model version 1 (``rlsi topics`` and ``rlsi transform`` still read the folder) and
``POST /documents`` fills it. A folder holding a static index is refused with the command that rebuilds it
as a live index (a static index stores BM25 weights, not the counts a live index needs).

**Threads.** Searches run on any number of threads, each on the snapshot of the last commit (a search never
sees half a commit), while the writer thread adds, deletes, merges and re-folds: searches never wait for
it. A search runs numba's kernels on its own thread only: the requests are the parallelism, and on two
loaded cores waking a kernel thread for one query took 4 ms of a 5 ms search (1.3 ms on one thread). The writer takes the index's writer lock when the service opens (a second writer, a server or ``rlsi
index --add``, is refused with one line that names the holder).

**Read-only** (``read_only=True``): the folder is opened as a reader (no lock, nothing written), and a
thread moves to the newest commit every :data:`~rlsi.serve.limits.REFRESH_SECONDS` (another process
writes it: a read-only server beside a writing one).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from ..errors import RLSIError
from .errors import BadRequest, Forbidden, NotFound
from .limits import DEFAULT_K, MAX_TOPIC_TERMS, REFRESH_SECONDS, Limits
from .texts import CorpusTexts, TextStore

__all__ = ["SearchService", "HIT_TERMS"]

log = logging.getLogger(__name__)

#: Top terms shown with each topic of a hit (the page's bar labels).
HIT_TERMS = 3


def _open_index(path, read_only):
    """``(index, converted)``: the live index of ``path`` (see the module docstring)."""
    from ..io.kinds import folder_kind, require_model_folder
    from ..io.store import read_manifest
    from ..retrieval.live import LiveIndex
    from ..retrieval.live.maintain import static_index_message
    from ..retrieval.live.reader import IndexReader

    require_model_folder(path)
    kind = folder_kind(path)
    if kind is None:
        raise RLSIError(f"{path} is not a live index or a model folder (no manifest.json): build one with "
                        f"'rlsi fit CORPUS -o {path}' and 'rlsi index {path} --live --corpus CORPUS'")
    if kind == "live":
        return (IndexReader.open(path) if read_only else LiveIndex.open(path)), False
    if "index" in read_manifest(path)["components"]:
        raise RLSIError(static_index_message(path))
    if read_only:
        raise RLSIError(f"{path} is a model folder without documents: serve it without --read-only (it becomes a "
                        f"live index that POST /documents fills), or build one with 'rlsi index {path} --live "
                        f"--corpus FILE'")
    return LiveIndex.from_model_dir(path), True


class SearchService:
    """A served index (see the module docstring).

    path : a live index or a model folder. read_only : search only (no writer, no lock). corpus : a corpus
    file whose texts give titles and snippets to documents indexed without the server (``rlsi index
    --live --corpus``). text_fields : the JSON fields of a document joined into its text. limits : the
    request caps (:class:`~rlsi.serve.limits.Limits`).
    """

    def __init__(self, path, *, read_only=False, corpus=None, text_fields=("title", "text"), limits=None):
        self.path = Path(path)
        self.read_only = bool(read_only)
        self.text_fields = tuple(text_fields)
        self.limits = limits or Limits()
        self.index, self.converted = _open_index(self.path, self.read_only)
        self.writer = self.store = self._refresher = None
        self._stop = threading.Event()
        self._closed = False
        self._terms_lock = threading.Lock()  # held for a dict look-up: searches never wait on a build
        self._explorer_lock = threading.Lock()  # held while the explorer page is built
        self._topic_terms = {}  # model version -> (per topic its label, per topic [(term, weight)])
        self._explorer = {}  # model version -> HTML
        try:
            self.corpus_texts = None
            if corpus is not None:
                from ..text import read_corpus

                self.corpus_texts = CorpusTexts(read_corpus(corpus, text_fields=self.text_fields))
            self.store = TextStore(self.path, read_only=self.read_only)
            if self.read_only:
                self._refresher = threading.Thread(target=self._refresh_loop, name="rlsi-serve-refresh", daemon=True)
                self._refresher.start()
            else:
                from .writer import Writer

                self.index.commit()  # nothing to commit: takes the writer lock now (a second writer is refused)
                self.writer = Writer(self.index, self.store)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ reading
    def _refresh_loop(self):
        failing = False
        while not self._stop.wait(REFRESH_SECONDS):
            try:
                self.index.refresh()
                failing = False
            except Exception as exc:  # noqa: BLE001 - a writer mid-change, a damaged file: said once, retried
                if not failing:
                    log.warning("cannot move to the newest commit of %s (retrying): %s", self.path, exc)
                failing = True

    def _texts(self, ids):
        found = self.store.get_many(ids)
        if self.corpus_texts is not None:
            missing = [i for i in ids if i not in found]
            if missing:
                found.update(self.corpus_texts.get_many(missing))
        return found

    def _topic_table(self, snap):
        """Per topic of the snapshot's model, its label and its top terms with their weights: ``(labels, terms)``
        (cached per model version)."""
        mv = snap.model
        if mv is None:
            return [], []
        with self._terms_lock:
            cached = self._topic_terms.get(mv.version)
        if cached is None:
            import numpy as np

            from ..quality import top_terms_with_weights, topic_label

            comps = mv.model.components_
            names = (mv.vectorizer.get_feature_names_out() if mv.vectorizer is not None
                     else np.arange(comps.shape[1]).astype(str))
            topic_names = getattr(mv.model, "topic_names_", None)  # seed words' names: T1 [hockey]
            cached = ([topic_label(k, topic_names) for k in range(comps.shape[0])],
                      top_terms_with_weights(comps, names, n=MAX_TOPIC_TERMS))
            with self._terms_lock:
                self._topic_terms = {mv.version: cached}  # the versions served before are dropped
        return cached

    @staticmethod
    def _topic(topics, t, weight=None, n=HIT_TERMS):
        labels, terms = topics
        out = {"topic": int(t), "label": labels[t] if t < len(labels) else f"T{int(t) + 1}"}
        if weight is not None:
            out["weight"] = float(weight)
        out["terms"] = [w for w, _ in terms[t][:n]] if t < len(terms) else []
        return out

    def check_query(self, q, k, alpha):
        """The query, ``k`` and α of a search, checked against the limits (BadRequest)."""
        if q is None or not str(q).strip():
            raise BadRequest("the query is empty: give some words, e.g. /search?q=space+shuttle")
        q = str(q)
        if len(q) > self.limits.max_query_chars:
            raise BadRequest(f"the query has {len(q):,} characters; the limit is {self.limits.max_query_chars:,} "
                             f"(--max-query)")
        k = DEFAULT_K if k is None else k
        if not 1 <= k <= self.limits.max_k:
            raise BadRequest(f"k={k}: must be between 1 and {self.limits.max_k} (--max-k)")
        return q, int(k), alpha

    def search(self, q, k=None, alpha=None):
        """The ``k`` best documents for the query ``q`` (see :mod:`rlsi.serve` for the answer's fields)."""
        from ..kernels.threads import numba_threads
        from ..text.snippets import title_and_snippet

        q, k, alpha = self.check_query(q, k, alpha)
        snap = self.index.snapshot()
        with numba_threads(1):  # one query is small work: waking a second kernel thread costs more than it saves
            hits = snap.search(q, k, alpha=alpha)
        topics = self._topic_table(snap)
        texts = self._texts([h.doc_id for h in hits])
        out = []
        for h in hits:
            if h.term_score == 0 and h.topic_score <= 0:  # matches neither by words nor by topics
                continue
            title, snippet = title_and_snippet(texts[h.doc_id], q) if h.doc_id in texts else ("", "")
            out.append({"doc_id": h.doc_id, "score": h.score, "term_score": h.term_score, "topic_score": h.topic_score,
                        "title": title, "snippet": snippet,
                        "topics": [self._topic(topics, t, w) for t, w in h.topics]})
        used = snap.params["alpha"] if alpha is None else float(alpha)
        return {"query": q, "k": k, "alpha": used, "generation": snap.generation,
                "model_version": snap.model_version, "documents": snap.n_docs, "hits": out}

    def document(self, doc_id):
        """What the index holds about one document, with its text when known (NotFound when it is not live)."""
        snap = self.index.snapshot()
        info = snap.document(str(doc_id))
        if info is None:
            raise NotFound(f"no document {str(doc_id)[:80]!r} in the index")
        topics = self._topic_table(snap)
        info["topics"] = [self._topic(topics, t, w) for t, w in info["topics"]]
        info["text"] = self._texts([info["id"]]).get(info["id"])
        info["generation"] = snap.generation
        return info

    def topics(self, n=10):
        """The serving model's topics, each with its ``n`` top terms and their weights (none without a model)."""
        if not 1 <= n <= MAX_TOPIC_TERMS:
            raise BadRequest(f"n={n}: must be between 1 and {MAX_TOPIC_TERMS}")
        snap = self.index.snapshot()
        topics = self._topic_table(snap)
        terms = topics[1]
        return {"model_version": snap.model_version, "generation": snap.generation,
                "topics": [dict(self._topic(topics, t, n=n), weights=[w for _, w in terms[t][:n]])
                           for t in range(len(terms))]}

    def health(self):
        snap = self.index.snapshot()
        from .. import __version__

        return {"status": "ok", "rlsi": __version__, "generation": snap.generation, "documents": snap.n_docs,
                "segments": snap.n_segments, "model_version": snap.model_version,
                "pending_version": self.index.pending_version, "topics": bool(snap.model is not None),
                "read_only": self.read_only, "queued_writes": 0 if self.writer is None else self.writer.queued,
                "alpha": snap.params["alpha"]}

    def explorer_html(self):
        """The topic explorer of the serving model (:func:`rlsi.explore`), built at the first request and
        kept per model version; NotFound when the index has no topic model."""
        snap = self.index.snapshot()
        mv = snap.model
        if mv is None:
            raise NotFound("the index has no topic model: there is no topic explorer")
        with self._explorer_lock:
            page = self._explorer.get(mv.version)
            if page is None:  # built under the lock: one build per version, whoever asks first
                from ..explorer import explore

                docs = None if self.corpus_texts is None else self.corpus_texts.corpus
                page = explore(mv.model, vectorizer=mv.vectorizer, docs=docs,
                               title=f"rlsi topics: {self.path.resolve().name}, model version {mv.version}").html
                self._explorer = {mv.version: page}
        return page

    # ------------------------------------------------------------------ writing
    def check_writable(self):
        """Forbidden when the service takes no documents (read-only)."""
        if self.writer is None:
            raise Forbidden("this server is read-only (--read-only): it takes no documents")

    def _writer(self):
        self.check_writable()
        return self.writer

    def put(self, ids, texts):
        """Add or replace documents; a future of ``{"added", "replaced", "generation"}`` resolved after the
        commit."""
        return self._writer().put(ids, texts)

    def delete(self, doc_id):
        """Delete a document; a future of ``{"deleted", "generation"}`` resolved after the commit."""
        return self._writer().delete(str(doc_id))

    def update_model(self, model, vectorizer=None):
        """Serve ``model`` (with ``vectorizer``): it becomes the next model version, re-folded segment by
        segment between the writer's commits, searches on the old version until the switch; a future of the
        new version number."""
        return self._writer().call(lambda index: index.update_model(model, vectorizer, refold=False))

    def merge(self, max_segments=1):
        """Merge the index's segments (on the writer thread); a future of the generation."""
        return self._writer().call(lambda index: index.merge(max_segments))

    # ------------------------------------------------------------------ closing
    def close(self):
        """Finish the queued writes (committed), stop the threads, release the writer lock (once)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self.writer is not None:
            self.writer.close()
        if self._refresher is not None:
            self._refresher.join()
        if self.store is not None:
            self.store.close()
        self.index.close()
