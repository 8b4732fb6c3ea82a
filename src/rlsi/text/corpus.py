"""Corpora in memory and their readers (JSON lines, optionally gzip'ed; folders of text files).

A :class:`Corpus` holds parallel lists: ``ids[i]`` and ``texts[i]`` are the id and text of document
``i``, and ``fields[name][i]`` is the value of an extra JSON field (``label``, ``date``, ``split``...)
for that document (``None`` where the document lacks it).

JSON lines format (the format of the shared IR collections): one JSON object a line, e.g.
``{"id": "12", "title": "...", "text": "...", "label": "sci.med"}``.

* text: the values of ``text_fields`` (default ``("title", "text")``) that are non-blank strings,
  joined with ``"\\n"`` in the order of ``text_fields``; a missing or ``null`` field is skipped. An object
  with none of the text fields is an error; one whose text fields are all empty gives an empty
  document (a zero row once vectorized).
* id: the ``"id"`` value (a string, or an integer turned into a string); when ``"id"`` is missing
  or ``null``, the 1-based **line number** in the file, as a string. Ids must be unique.
* fields: every other key (not ``id``, not a text field), in order of first appearance.
* blank lines are skipped; a UTF-8 byte-order mark is accepted; the content must be UTF-8.

Every problem with the input raises :class:`rlsi.errors.CorpusError` with a one-line message naming
the file (and the line number when it applies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import CorpusError
from ..io.jsonl import iter_json_lines
from .ids import check_id, check_ids

__all__ = ["Corpus", "read_jsonl", "read_text_folder", "read_corpus", "record_text"]


@dataclass
class Corpus:
    """Documents as parallel lists: ``ids`` (unique str), ``texts`` (str) and extra ``fields``.

    ``len(corpus)`` is the number of documents; iterating a corpus yields its **texts**, so a corpus
    can be passed directly to :meth:`rlsi.text.TfidfVectorizer.fit`.
    """

    ids: list[str]
    texts: list[str]
    fields: dict[str, list] = field(default_factory=dict)

    def __post_init__(self):
        self.ids = [str(i) for i in self.ids]
        self.texts = list(self.texts)
        self.fields = {k: list(v) for k, v in self.fields.items()}
        n = len(self.ids)
        if len(self.texts) != n:
            raise CorpusError(f"corpus has {n} ids but {len(self.texts)} texts")
        for name, values in self.fields.items():
            if len(values) != n:
                raise CorpusError(f"corpus field {name!r} has {len(values)} values for {n} documents")
        if len(set(self.ids)) != n:
            seen = set()
            dup = next(i for i in self.ids if i in seen or seen.add(i))
            raise CorpusError(f"corpus has duplicate document id {dup!r}")

    def __len__(self):
        return len(self.ids)

    def __iter__(self):
        return iter(self.texts)

    def subset(self, indices) -> "Corpus":
        """A new corpus with the documents at ``indices`` (integer positions, or a boolean mask)."""
        idx = np.asarray(indices)
        if idx.dtype == bool:
            if idx.shape != (len(self),):
                raise CorpusError(f"boolean mask of shape {idx.shape} for a corpus of {len(self)} "
                                  "documents")
            idx = np.flatnonzero(idx)
        elif idx.size == 0:
            idx = idx.astype(np.int64)
        elif not np.issubdtype(idx.dtype, np.integer):
            raise CorpusError(f"subset indices must be integers or a boolean mask, got {idx.dtype}")
        idx = idx.ravel().tolist()
        n = len(self)
        bad = [i for i in idx if not -n <= i < n]
        if bad:
            raise CorpusError(f"subset index {bad[0]} is out of range for a corpus of {n} documents")
        return Corpus(ids=[self.ids[i] for i in idx], texts=[self.texts[i] for i in idx],
                      fields={k: [v[i] for i in idx] for k, v in self.fields.items()})


def read_jsonl(path, text_fields=("title", "text")) -> Corpus:
    """Read a JSON lines corpus (gzip-compressed when it starts with the gzip magic bytes or ends in .gz).

    See the module docstring for how ``ids``, ``texts`` and ``fields`` are formed.
    """
    text_fields = _text_fields(text_fields)
    path = Path(path)
    ids, texts, extra = [], [], {}
    for lineno, obj in iter_json_lines(path, what="corpus", error=CorpusError):
        ids.append(_record_id(obj.get("id"), lineno, path))
        texts.append(_record_text(obj, text_fields, lineno, path))
        n = len(ids)
        for key, value in obj.items():
            if key == "id" or key in text_fields:
                continue
            column = extra.get(key)
            if column is None:
                column = extra[key] = [None] * (n - 1)
            column.append(value)
        for column in extra.values():
            if len(column) < n:
                column.append(None)
    if not ids:
        raise CorpusError(f"{path} contains no document")
    _check_unique(ids, path)
    return Corpus(ids=ids, texts=texts, fields=extra)


def _text_fields(text_fields):
    if isinstance(text_fields, str):
        text_fields = (text_fields,)
    try:
        fields = tuple(text_fields)
    except TypeError:
        raise CorpusError(f"text_fields={text_fields!r} must be a field name or a list of them") from None
    if not fields or not all(isinstance(f, str) and f for f in fields):
        raise CorpusError(f"text_fields={text_fields!r} must name at least one field")
    return fields


def _record_id(value, lineno, path) -> str:
    if value is None:
        return str(lineno)
    if isinstance(value, str):
        return check_id(value, f"{path}, line {lineno}")
    if isinstance(value, int) and not isinstance(value, bool):
        return check_id(str(value), f"{path}, line {lineno}")
    raise CorpusError(f"{path}, line {lineno}: \"id\" must be a string or an integer, got "
                      f"{type(value).__name__}")


def _record_text(obj, text_fields, lineno, path) -> str:
    return record_text(obj, text_fields, f"{path}, line {lineno}")


def record_text(obj, text_fields, where) -> str:
    """The text of a JSON object: its ``text_fields`` joined (see the module docstring); CorpusError
    ``where: ...`` when a field is not a string or none is there."""
    parts, found = [], False
    for name in text_fields:
        value = obj.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise CorpusError(f"{where}: field {name!r} must be a string, got {type(value).__name__}")
        found = True
        if value.strip():
            parts.append(value)
    if not found:
        names = ", ".join(repr(n) for n in text_fields)
        raise CorpusError(f"{where}: object has none of the text fields {names}")
    return "\n".join(parts)


def _check_unique(ids, path):
    """Every id valid text, printable and unique (:func:`rlsi.text.ids.check_ids`)."""
    check_ids(ids, str(path))


def read_text_folder(path, pattern="*.txt") -> Corpus:
    """One document per file matching ``pattern`` anywhere under the folder ``path`` (recursive).

    The id of a file is its path relative to ``path``, with ``/`` separators and without its last
    suffix (``sub/a.txt`` -> ``"sub/a"``); documents are sorted by id. Files must be UTF-8.
    """
    root = Path(path)
    if not root.exists():
        raise CorpusError(f"corpus folder not found: {root}")
    if not root.is_dir():
        raise CorpusError(f"{root} is not a folder")
    files = sorted((p for p in root.rglob(pattern) if p.is_file()),
                   key=lambda p: p.relative_to(root).with_suffix("").as_posix())
    if not files:
        raise CorpusError(f"{root} contains no file matching {pattern!r}")
    ids, texts = [], []
    for p in files:
        try:
            text = p.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{p}: not UTF-8 text (byte {exc.start})") from None
        except OSError as exc:
            raise CorpusError(f"cannot read {p}: {exc.strerror or exc}") from None
        ids.append(p.relative_to(root).with_suffix("").as_posix())
        texts.append(text)
    _check_unique(ids, root)
    return Corpus(ids=ids, texts=texts)


def read_corpus(path, text_fields=("title", "text"), pattern="*.txt") -> Corpus:
    """:func:`read_text_folder` for a folder (``pattern``; each file is one document, so
    ``text_fields`` does not apply), :func:`read_jsonl` for a file (``text_fields``)."""
    p = Path(path)
    if not p.exists():
        raise CorpusError(f"corpus not found: {p}")
    if p.is_dir():
        return read_text_folder(p, pattern=pattern)
    return read_jsonl(p, text_fields=text_fields)
