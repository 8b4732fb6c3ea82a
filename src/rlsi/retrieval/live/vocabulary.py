"""The live index's vocabulary: a map term -> id that only grows (an id is never renumbered or reused).

A segment stores global term ids, so the ids of every committed segment stay valid whatever is added
later. The vocabulary starts with the columns of the index's first vectorizer (id j = its column j) and
grows with every new token of an added document, so that BM25 finds a term as soon as one document holds
it, before any topic model knows it. An index of vectorised documents (a synthetic corpus, no vectorizer)
has an *anonymous* vocabulary: only a number of columns, widened by wider matrices.

On disk it is one append-only file of JSON strings, one term a line (``vocabulary.jsonl``); the manifest
records how many terms and bytes belong to its generation and their CRC-32, so a reader reads exactly the
committed prefix, and a writer killed after appending leaves a tail that the next writer cuts off. Readers
of an older generation keep working while the file grows: they never read past their own prefix.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np

from ...errors import ModelFormatError, RLSIError
from ...io.checksums import ALGORITHM, bytes_digest

__all__ = ["Vocabulary", "VOCABULARY_FILE"]

VOCABULARY_FILE = "vocabulary.jsonl"
#: Largest vocabulary file read (bytes): 7M web terms of ~12 characters take ~100 MB.
MAX_VOCABULARY_BYTES = 4 << 30


def _crc_value(digest: str) -> int:
    algo, _, hexa = digest.partition(":")
    if algo != ALGORITHM or len(hexa) != 8:
        raise ModelFormatError(f"vocabulary digest {digest[:30]!r} is not a {ALGORITHM} digest")
    return int(hexa, 16)


class Vocabulary:
    """Append-only term -> id map (``terms=None``: anonymous, ``n_terms`` columns without names).

    Safe to read from several threads while one writer grows it: a reader only uses the ids below the
    ``n_terms`` of its snapshot (:meth:`lookup`), and a term's id never changes once given.
    """

    def __init__(self, terms=None, n_terms=0):
        self.named = terms is not None
        self._terms = list(terms) if self.named else None
        self._ids = {t: i for i, t in enumerate(self._terms)} if self.named else None
        if self.named and len(self._ids) != len(self._terms):
            raise RLSIError("the vocabulary holds a term twice")
        self._n = len(self._terms) if self.named else int(n_terms)

    def __len__(self):
        return self._n

    def term(self, i):
        """The term of id ``i`` (its number as text in an anonymous vocabulary)."""
        return self._terms[i] if self.named else str(i)

    def lookup(self, tokens, limit=None):
        """Ids (int64) of ``tokens`` known among the first ``limit`` ids (default all), and how many tokens
        there were (unknown ones count in a document's length but get no id)."""
        if not self.named:
            raise RLSIError("this index holds vectorised documents (no vocabulary of words): rank vectorised "
                            "queries with search_vectors")
        limit = self._n if limit is None else limit
        get = self._ids.get
        ids = [i for i in (get(t, -1) for t in tokens) if 0 <= i < limit]
        return np.asarray(ids, dtype=np.int64), len(tokens)

    def grow(self, tokens):
        """Ids of ``tokens``, unknown ones appended as new terms (ids ``n_terms``, ``n_terms + 1``, ...)."""
        ids = self._ids
        out = np.empty(len(tokens), dtype=np.int64)
        for j, t in enumerate(tokens):
            i = ids.get(t)
            if i is None:
                i = self._n
                self._terms.append(t)
                ids[t] = i
                self._n = i + 1
            out[j] = i
        return out

    def extend(self, terms):
        """Append the terms of ``terms`` that are not in the vocabulary (a new vectorizer's columns)."""
        if self.named:
            self.grow([t for t in terms if t not in self._ids])

    def widen(self, n_terms):
        """An anonymous vocabulary takes ``n_terms`` columns (never fewer than it has)."""
        if self.named:
            raise RLSIError("vectorised documents need an index without a word vocabulary (created without a "
                            "vectorizer)")
        self._n = max(self._n, int(n_terms))

    # ------------------------------------------------------------------ persistence
    def append_to(self, folder, entry):
        """Append the terms past the committed ``entry`` to the file; returns the new entry
        (``{"file", "terms", "bytes", "digest"}``, or ``{"terms"}`` when anonymous)."""
        if not self.named:
            return {"terms": self._n}
        done = entry["terms"] if entry else 0
        size = entry["bytes"] if entry else 0
        crc = _crc_value(entry["digest"]) if entry else 0
        if done == self._n and entry:
            return dict(entry)
        new = "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in self._terms[done:self._n]).encode("utf-8")
        path = Path(folder) / VOCABULARY_FILE
        with open(path, "r+b" if path.exists() else "w+b") as f:
            f.seek(size)
            f.truncate()
            f.write(new)  # the commit that names these bytes fsyncs the file first
        crc = zlib.crc32(new, crc)
        return {"file": VOCABULARY_FILE, "terms": self._n, "bytes": size + len(new),
                "digest": f"{ALGORITHM}:{crc & 0xFFFFFFFF:08x}"}

    @staticmethod
    def check_entry(entry, where):
        """Check a manifest entry (untrusted input): ModelFormatError naming the problem."""
        def count(key, high):
            v = entry.get(key)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= high:
                raise ModelFormatError(f"{where}.{key} must be an integer in [0, {high}], got {str(v)[:30]!r}")
        if not isinstance(entry, dict):
            raise ModelFormatError(f"{where} must be an object")
        count("terms", 2**40)
        if "file" in entry:
            if entry["file"] != VOCABULARY_FILE or not isinstance(entry.get("digest"), str):
                raise ModelFormatError(f"{where} names no vocabulary file and digest")
            count("bytes", MAX_VOCABULARY_BYTES)
            _crc_value(entry["digest"])

    @classmethod
    def load(cls, folder, entry, where="vocabulary"):
        """The vocabulary of a committed manifest ``entry`` (checked; ModelFormatError if damaged)."""
        cls.check_entry(entry, where)
        if "file" not in entry:
            return cls(None, entry["terms"])
        path = Path(folder) / VOCABULARY_FILE
        try:
            with open(path, "rb") as f:
                data = f.read(entry["bytes"])
        except OSError as exc:
            raise ModelFormatError(f"cannot read {path}: {exc.strerror or exc}") from None
        if len(data) != entry["bytes"] or bytes_digest(data) != entry["digest"]:
            raise ModelFormatError(f"{path} is damaged: its first {entry['bytes']} bytes do not match the "
                                   f"manifest's checksum")
        try:
            terms = [json.loads(line) for line in data.decode("utf-8").splitlines()]
        except (UnicodeDecodeError, ValueError) as exc:
            raise ModelFormatError(f"{path} is damaged: {' '.join(str(exc).split())[:80]}") from None
        if len(terms) != entry["terms"] or not all(isinstance(t, str) for t in terms):
            raise ModelFormatError(f"{path} is damaged: {len(terms)} lines for {entry['terms']} terms")
        try:
            return cls(terms)
        except RLSIError:
            raise ModelFormatError(f"{path} is damaged: a term is listed twice") from None
