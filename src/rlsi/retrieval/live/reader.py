"""Reading a live index: :class:`IndexReader` opens a committed generation, hands out its snapshot and
moves to a newer one on :meth:`~IndexReader.refresh`.

It takes no lock and writes nothing: any number of processes read an index that one writer changes
(:class:`~rlsi.retrieval.live.index.LiveIndex`, which is a reader that also writes). A generation is opened
whole or not at all: its files are checked (CRC-32, shapes, every index in range) before a kernel reads
them, and when a writer elsewhere removes them meanwhile (a merge), the reader opens the newer generation.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from ...errors import ModelFormatError, RLSIError
from .manifest import read_manifest
from .models import read_version
from .segment import open_segment, read_deletes
from .snapshot import SegmentView, Snapshot
from .vocabulary import Vocabulary

__all__ = ["IndexReader", "OPEN_TRIES"]

log = logging.getLogger(__name__)

#: Tries to open a generation whose files a writer removes meanwhile (another process merged them away).
OPEN_TRIES = 5


class IndexReader:
    """A live index opened for searching (see the module docstring): :meth:`open`, :meth:`snapshot`,
    :meth:`search`, :meth:`refresh`."""

    def __init__(self, path, *, weigh=None, mmap=True):
        self.path = Path(path)
        self.weigh = weigh
        self.mmap = mmap
        self._lock = threading.RLock()
        self._models = {}
        self._views = {}
        self._closed = False
        self._alpha = None
        self._load(read_manifest(self.path))

    @classmethod
    def open(cls, path, *, weigh=None, mmap=True):
        """The live index in the folder ``path`` at its last committed generation (ModelFormatError when the
        folder is damaged or not a live index)."""
        return cls(path, weigh=weigh, mmap=mmap)

    # ------------------------------------------------------------------ loading
    def _load(self, manifest, tries=OPEN_TRIES):
        """Read the generation of ``manifest``: vocabulary, model versions, segments (unchanged segments of
        the generation held are kept as they are); publish its snapshot."""
        for _ in range(tries):
            try:
                self._adopt(manifest)
                return
            except (OSError, ModelFormatError):
                newer = read_manifest(self.path)
                if newer["live"]["generation"] == manifest["live"]["generation"]:
                    raise  # damage, not a writer that moved on
                manifest = newer  # a writer elsewhere removed this generation's files: take the newer one
        raise ModelFormatError(f"{self.path}: the index changed {tries} times while it was opened; try again")

    def _adopt(self, manifest):
        live = manifest["live"]
        vocab = Vocabulary.load(self.path, live["vocabulary"], f"{self.path}: vocabulary")
        params = live["params"]
        from ..searcher_state import params_from_state

        checked = params_from_state(params)
        models = {}
        for key in ("model_version", "pending_version"):
            v = live[key]
            if v is None:
                continue
            held = self._models.get(v)
            models[v] = held if held is not None else read_version(
                self.path, v, live["models"][str(v)], fold_lambda2=checked["fold_lambda2"], dtype=checked["dtype"],
                weigh=self.weigh, mmap=self.mmap)
        versions = list(models)
        views = {}
        for entry in live["segments"]:
            old = self._views.get(entry["name"])
            if old is not None and old.entry == entry:
                views[entry["name"]] = old
                continue
            where = f"{self.path}: segment {entry['name']}"
            seg = open_segment(self.path, entry, len(vocab), [v for v in versions if str(v) in entry["topics"]],
                               mmap=self.mmap, where=where)
            deleted = read_deletes(self.path, entry["deletes"], seg.n_docs, where) if entry["deletes"] else None
            views[entry["name"]] = SegmentView(seg, deleted, entry)
        self._manifest, self._vocab, self._models, self._views = manifest, vocab, models, views
        self._publish()

    def _publish(self):
        live = self._manifest["live"]
        serving = live["model_version"]
        model = self._models.get(serving)
        tok = live["tokenizer"]
        from ...text.tokenize import Tokenizer

        self._snapshot = Snapshot(
            generation=live["generation"], params=self._search_params(), vocabulary=self._vocab,
            n_terms=live["vocabulary"]["terms"], tokenizer=Tokenizer(**tok) if tok is not None else None,
            model=model, views=[self._views[s["name"]] for s in live["segments"]],
            pending_version=live["pending_version"])

    def _search_params(self):
        p = dict(self._manifest["live"]["params"])
        if self._alpha is not None:
            p["alpha"] = self._alpha
        return p

    def refresh(self):
        """Move to the newest committed generation on disk (a process that searches an index another
        process writes); returns True if the generation changed. A writer is always current."""
        with self._lock:
            self._check_open()
            manifest = read_manifest(self.path)
            if manifest["live"]["generation"] == self.generation:
                return False
            self._load(manifest)
            return True

    # ------------------------------------------------------------------ reading
    def snapshot(self):
        """The :class:`~rlsi.retrieval.live.snapshot.Snapshot` of the last commit (immutable: a
        point-in-time view for any number of searches)."""
        return self._snapshot

    def search(self, query, k=10, *, candidates=None, alpha=None):
        """Search the last commit: the ``k`` best :class:`~rlsi.retrieval.live.snapshot.LiveHit`."""
        return self._snapshot.search(query, k, candidates=candidates, alpha=alpha)

    def search_many(self, queries, k=10, *, candidates=None, alpha=None):
        return self._snapshot.search_many(queries, k, candidates=candidates, alpha=alpha)

    def search_vectors(self, counts, tfidf=None, *, k=10, candidates=None, alpha=None):
        return self._snapshot.search_vectors(counts, tfidf, k=k, candidates=candidates, alpha=alpha)

    @property
    def generation(self):
        return self._snapshot.generation

    @property
    def n_docs_(self):
        return self._snapshot.n_docs

    def __len__(self):
        return self._snapshot.n_docs

    def __contains__(self, doc_id):
        return doc_id in self._snapshot

    @property
    def model(self):
        m = self._snapshot.model
        return None if m is None else m.model

    @property
    def vectorizer(self):
        m = self._models.get(self._manifest["live"]["model_version"])
        return None if m is None else m.vectorizer

    @property
    def fold_lambda2(self):
        """The folding-in of documents and queries (:class:`~rlsi.retrieval.Searcher`'s ``fold_lambda2``)."""
        from ..searcher_state import params_from_state

        return params_from_state(self._manifest["live"]["params"])["fold_lambda2"]

    @property
    def term_model(self):
        return "bm25"

    @property
    def model_version(self):
        return self._snapshot.model_version

    @property
    def pending_version(self):
        return self._manifest["live"]["pending_version"]

    @property
    def alpha(self):
        """Weight of the topic score for searches without their own ``alpha`` (this process only; the
        index keeps the one it was built with)."""
        return self._snapshot.params["alpha"]

    @alpha.setter
    def alpha(self, value):
        self._snapshot._alpha(value)
        self._alpha = float(value)
        self._publish()

    @property
    def n_segments(self):
        return self._snapshot.n_segments

    def stats(self):
        """Sizes of the last commit: generation, documents, segments (live / deleted per segment), terms,
        model versions."""
        snap = self._snapshot
        return {"generation": snap.generation, "documents": snap.n_docs, "terms": snap.n_terms,
                "model_version": snap.model_version, "pending_version": self.pending_version,
                "segments": [{"name": v.seg.name, "documents": v.n_live, "deleted": len(v.deleted)}
                             for v in snap.views]}

    def _check_open(self):
        if self._closed:
            raise RLSIError(f"the live index {self.path} is closed")

    def close(self):
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        s = self._snapshot
        return (f"{type(self).__name__}({str(self.path)!r}, generation={s.generation}, documents={s.n_docs}, "
                f"segments={s.n_segments}, model_version={s.model_version})")


def check_live_folder(path) -> str:
    """Open the live index at ``path`` at its last committed generation, which verifies every segment file
    against its checksum and checks it as untrusted input (ModelFormatError naming the file), and say in
    a phrase what it holds (for ``rlsi check``)."""
    with IndexReader.open(path) as reader:
        stats = reader.stats()
    segs = stats["segments"]
    deleted = sum(s["deleted"] for s in segs)
    plural = "s" if len(segs) != 1 else ""
    return (f"generation {stats['generation']}: {len(segs)} segment{plural} of {stats['documents']} live documents "
            f"({deleted} deleted) open and match their checksums")

