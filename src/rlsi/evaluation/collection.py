"""Test collections: documents, queries and relevance judgements.

Shared IR format (a folder):

* ``corpus.jsonl.gz`` (or ``corpus.jsonl``) -- JSON lines ``{"id": str, "title": str, "text": str, ...}``,
  read by :func:`rlsi.text.corpus.read_jsonl` (the text is the ``text_fields`` joined by a newline).
* ``queries.jsonl`` -- JSON lines ``{"id": str, "text": str, ...}``; ``queries.tsv`` (``qid<TAB>text``)
  is accepted instead.
* ``qrels.tsv`` -- TREC qrels ``qid 0 docid rel`` (see :mod:`rlsi.evaluation.trec`).

The three files may also be given one by one (``load_collection(corpus=..., queries=..., qrels=...)``).

Inconsistencies are reported with :mod:`logging` warnings and kept, so that scores agree with trec_eval:

* judged documents that are not in the corpus stay in the qrels (relevant but never retrievable, so they
  lower recall and AP as they would in trec_eval);
* judged queries that are not in the queries file stay in the qrels (with no run they score 0);
* queries with empty text are kept (they retrieve nothing useful and score 0 or near 0).

Queries without any relevant judgement are simply not evaluated (see :func:`~rlsi.evaluation.evaluate`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import RLSIError
from ..io.jsonl import iter_json_lines
from ..text.corpus import Corpus, read_jsonl
from .trec import read_qrels

__all__ = ["Collection", "load_collection", "read_queries"]

logger = logging.getLogger(__name__)


@dataclass
class Collection:
    """Documents (``corpus.ids`` / ``corpus.texts``), ``queries`` ``{qid: text}`` and ``qrels``
    ``{qid: {docid: rel}}``."""

    corpus: Corpus
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    name: str = ""

    @property
    def evaluated_queries(self) -> list[str]:
        """Query ids with at least one relevant (rel > 0) document, in qrels order: those evaluated."""
        return [q for q, judged in self.qrels.items() if any(r > 0 for r in judged.values())]

    def __repr__(self):
        return (f"Collection(name={self.name!r}, documents={len(self.corpus.ids)}, "
                f"queries={len(self.queries)}, judged_pairs={sum(len(j) for j in self.qrels.values())})")


def read_queries(path) -> dict[str, str]:
    """Read queries ``{qid: text}`` from JSON lines ``{"id", "text"}`` or a ``qid<TAB>text`` file
    (``.tsv``/``.txt``)."""
    path = Path(path)
    queries: dict[str, str] = {}
    lines: dict[str, int] = {}

    def add(qid, text, lineno):
        if qid in queries:
            raise RLSIError(f"{path}, line {lineno}: query id {qid!r} already used on line {lines[qid]}")
        queries[qid], lines[qid] = text, lineno

    if path.suffix in (".tsv", ".txt"):
        if not path.is_file():
            raise RLSIError(f"queries file not found: {path}")
        try:
            with open(path, encoding="utf-8") as handle:
                for lineno, line in enumerate(handle, start=1):
                    line = line.rstrip("\r\n")
                    if not line.strip():
                        continue
                    qid, sep, text = line.partition("\t")
                    if not sep or not qid.strip():
                        raise RLSIError(f"{path}, line {lineno}: expected 'qid<TAB>text'")
                    add(qid.strip(), text.strip(), lineno)
        except (OSError, UnicodeDecodeError) as exc:
            raise RLSIError(f"cannot read queries file {path}: {exc}") from None
    else:
        for lineno, obj in iter_json_lines(path, what="queries", error=RLSIError):
            if obj.get("id") in (None, ""):
                raise RLSIError(f"{path}, line {lineno}: the queries entry has no \"id\"")
            text = obj.get("text")
            if not isinstance(text, str):
                raise RLSIError(f"{path}, line {lineno}: query {obj['id']!r} has no \"text\" string")
            add(str(obj["id"]), text, lineno)
    if not queries:
        raise RLSIError(f"queries file {path} holds no query")
    return queries


def _find(folder, names, what):
    for name in names:
        if (folder / name).is_file():
            return folder / name
    raise RLSIError(f"collection folder {folder} has no {what} file (looked for {', '.join(names)})")


def _examples(items, n=5):
    items = list(items)
    shown = ", ".join(repr(x) for x in items[:n])
    return shown + (", ..." if len(items) > n else "")


def load_collection(path=None, *, corpus=None, queries=None, qrels=None,
                    text_fields: Sequence[str] = ("title", "text")) -> Collection:
    """Load a test collection from a folder in the shared format and/or from separate files.

    ``corpus``, ``queries`` and ``qrels`` are file paths; each overrides the file of the folder ``path``
    (all three are needed when ``path`` is None). See the module docstring for formats and checks.
    """
    folder = None
    if path is not None:
        folder = Path(path)
        if not folder.is_dir():
            raise RLSIError(f"collection folder not found: {folder}")
        corpus = corpus or _find(folder, ("corpus.jsonl.gz", "corpus.jsonl"), "corpus")
        queries = queries or _find(folder, ("queries.jsonl", "queries.tsv"), "queries")
        qrels = qrels or _find(folder, ("qrels.tsv", "qrels.txt", "qrels"), "qrels")
    missing = [name for name, value in (("corpus", corpus), ("queries", queries), ("qrels", qrels))
               if value is None]
    if missing:
        raise RLSIError(f"load_collection needs a folder or the {', '.join(missing)} file path(s)")
    if isinstance(text_fields, str):
        text_fields = (text_fields,)
    docs = read_jsonl(corpus, text_fields=text_fields)
    query_texts = read_queries(queries)
    judgements = read_qrels(qrels)
    if not judgements:
        raise RLSIError(f"qrels file {qrels} holds no judgement")

    doc_ids = set(docs.ids)
    unknown_docs = [(q, d) for q, judged in judgements.items() for d in judged if d not in doc_ids]
    if unknown_docs:
        logger.warning("%s: %d judged (query, document) pair(s) name documents not in the corpus; kept as "
                       "never-retrievable (e.g. %s)", qrels, len(unknown_docs),
                       _examples(f"{q}/{d}" for q, d in unknown_docs))
    unknown_queries = [q for q in judgements if q not in query_texts]
    if unknown_queries:
        logger.warning("%s: %d judged quer(y/ies) are not in %s; they will score 0 (e.g. %s)", qrels,
                       len(unknown_queries), queries, _examples(unknown_queries))
    empty = [q for q, text in query_texts.items() if not text.strip()]
    if empty:
        logger.warning("%s: %d quer(y/ies) have empty text (e.g. %s)", queries, len(empty), _examples(empty))
    name = folder.name if folder is not None else Path(corpus).name.split(".")[0]
    return Collection(docs, query_texts, judgements, name)
