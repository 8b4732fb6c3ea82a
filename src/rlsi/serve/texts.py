"""The documents' texts, kept beside a live index for titles, snippets and ``GET /documents/{id}``.

A live index stores term counts and topic vectors, not text (:mod:`rlsi.retrieval.live`). The server keeps
the text of every document it is sent in ``texts.sqlite3`` in the index folder: one SQLite table, id ->
text, in WAL mode with full synchronisation, so a text is on disk before the index commit that makes its
document visible (the writer stores the texts of a group of requests in one transaction, then commits the
index). The index decides which documents exist; the store only supplies their text:

* a text whose document is not in the index (a commit that failed or was killed after the texts were
  stored) is never shown, and the next add of that id replaces it;
* a document without a stored text (indexed by ``rlsi index --add``) is shown by its id, or with its text
  from ``--corpus`` (:class:`CorpusTexts`).

The live index's writer cleanup removes only the files of its own layout (segments, model versions), so
this file stays. Readers use their own connections; a read-only server opens the file read-only.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from ..errors import RLSIError

__all__ = ["TextStore", "CorpusTexts", "STORE_FILE"]

#: The store's file in the index folder.
STORE_FILE = "texts.sqlite3"
_SCHEMA = "CREATE TABLE IF NOT EXISTS texts (id TEXT PRIMARY KEY, text TEXT NOT NULL) WITHOUT ROWID"
#: Ids per SELECT (SQLite's default limit of host parameters is 999 in older builds).
_CHUNK = 500


class TextStore:
    """Texts by document id in ``folder/texts.sqlite3`` (see the module docstring). ``read_only`` opens an
    existing file without writing (a missing one reads as empty)."""

    def __init__(self, folder, *, read_only=False):
        self.path = Path(folder) / STORE_FILE
        self.read_only = bool(read_only)
        self._local = threading.local()
        self._connections = []
        self._guard = threading.Lock()
        self._closed = False
        if not self.read_only:
            conn = self._connection()
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            conn.commit()

    def _connection(self):
        """This thread's connection (SQLite connections are not shared between threads)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise RLSIError(f"the text store {self.path} is closed")
            try:
                if self.read_only:
                    if not self.path.exists():
                        return None
                    conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                           check_same_thread=False)
                else:
                    conn = sqlite3.connect(self.path, check_same_thread=False)
                    conn.execute("PRAGMA synchronous=FULL")
                conn.execute("PRAGMA busy_timeout=10000")
            except sqlite3.Error as exc:
                raise RLSIError(f"cannot open the text store {self.path}: {exc}") from None
            self._local.conn = conn
            with self._guard:
                self._connections.append(conn)
        return conn

    def get_many(self, ids):
        """``{id: text}`` of the ``ids`` the store holds."""
        conn = self._connection()
        ids = [str(i) for i in ids]
        if conn is None or not ids:
            return {}
        out = {}
        try:
            for a in range(0, len(ids), _CHUNK):
                part = ids[a:a + _CHUNK]
                marks = ",".join("?" * len(part))
                out.update(conn.execute(f"SELECT id, text FROM texts WHERE id IN ({marks})", part).fetchall())
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):  # a read-only server started before the writer made it
                return {}
            raise RLSIError(f"cannot read the text store {self.path}: {exc}") from None
        return out

    def get(self, doc_id):
        return self.get_many([doc_id]).get(str(doc_id))

    def apply(self, changes):
        """Store ``changes`` in one durable transaction, in order: ``(id, text)`` puts a text (replacing one),
        ``(id, None)`` removes it."""
        if self.read_only:
            raise RLSIError(f"the text store {self.path} is open read-only")
        conn = self._connection()
        try:
            with conn:  # one transaction: committed (fsynced) at the end, rolled back on an error
                for doc_id, text in changes:
                    if text is None:
                        conn.execute("DELETE FROM texts WHERE id = ?", (doc_id,))
                    else:
                        conn.execute("INSERT OR REPLACE INTO texts (id, text) VALUES (?, ?)", (doc_id, text))
        except sqlite3.Error as exc:
            raise RLSIError(f"cannot write the text store {self.path}: {exc}") from None

    def close(self):
        with self._guard:
            self._closed = True
            for conn in self._connections:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._connections.clear()


class CorpusTexts:
    """The texts of a corpus file (``rlsi serve --corpus``), by id: what the documents of ``rlsi index
    --live --corpus`` say, for their titles and snippets. Held in memory (as ``rlsi search --corpus``
    reads it)."""

    def __init__(self, corpus):
        self.corpus = corpus
        self._texts = dict(zip(corpus.ids, corpus.texts))

    def __len__(self):
        return len(self._texts)

    def get_many(self, ids):
        return {i: self._texts[i] for i in map(str, ids) if i in self._texts}
