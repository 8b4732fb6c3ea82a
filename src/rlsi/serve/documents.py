"""The body of ``POST /documents``: a JSON list of documents or JSON lines (one document a line), each
an object with an ``"id"`` (a string or an integer) and the text fields (default ``"title"`` and
``"text"``, joined by a line break as :func:`rlsi.text.read_corpus` joins them; other fields are ignored).

Everything is checked before the writer sees a document, so that a refused request changes nothing: the
body is UTF-8 JSON, there is at least one document and at most ``max_docs``, every id can be stored
(:func:`rlsi.text.ids.check_id`) and the ids of one request are unique. Each problem is one line naming
the document (``document 3``: the third of the list, or the third non-blank line).
"""

from __future__ import annotations

from ..io.safety import json_or_problem
from ..text.corpus import record_text
from ..text.ids import check_id
from .errors import BadRequest

__all__ = ["parse_documents"]


def _loads(text, where):
    obj, problem = json_or_problem(text)
    if problem is not None:
        raise BadRequest(f"{where}: {problem}")
    return obj


def _objects(text):
    """The body's objects: a JSON list (or one object), else JSON lines."""
    stripped = text.strip()
    if not stripped:
        raise BadRequest("the body is empty: send a JSON list of documents, or JSON lines (one document a line)")
    if stripped[0] == "[":
        items = _loads(stripped, "the body")
        if not isinstance(items, list):  # pragma: no cover - a '[' starts a list or is not JSON
            raise BadRequest("the body must be a JSON list of documents")
        return items
    lines = [ln for ln in stripped.splitlines() if ln.strip()]
    return [_loads(ln, f"document {n}") for n, ln in enumerate(lines, start=1)]


def _id(obj, where):
    value = obj.get("id")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        got = "none" if value is None else f"a {type(value).__name__}"
        raise BadRequest(f"{where}: \"id\" must be a string or an integer, got {got}")
    return check_id(str(value), where)


def parse_documents(body, *, text_fields=("title", "text"), max_docs):
    """``(ids, texts)`` of a request body (bytes); :class:`~rlsi.serve.errors.BadRequest` (or the
    :class:`~rlsi.errors.CorpusError` of an id or a field, also a 400) when it is not what the module
    docstring describes."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"the body is not UTF-8 text (byte {exc.start})") from None
    items = _objects(text)
    if not items:
        raise BadRequest("the list holds no document")
    if len(items) > max_docs:
        raise BadRequest(f"{len(items)} documents in one request; the limit is {max_docs} (--max-batch): "
                         f"send them in several requests")
    ids, texts, first = [], [], {}
    for n, obj in enumerate(items, start=1):
        where = f"document {n}"
        if not isinstance(obj, dict):
            raise BadRequest(f"{where}: expected a JSON object, got {type(obj).__name__}")
        doc_id = _id(obj, where)
        seen = first.setdefault(doc_id, n)
        if seen != n:
            raise BadRequest(f"{where}: the id {doc_id[:40]!r} is also document {seen}'s; ids must be unique")
        ids.append(doc_id)
        texts.append(record_text(obj, text_fields, where))
    return ids, texts
