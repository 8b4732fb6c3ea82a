"""Document ids and terms as rlsi stores them: valid text, printable, of bounded length, ids unique.

Ids and terms are saved as fixed-width unicode arrays (``.npy`` ``<U`` of the longest one: 4 bytes a
character for every entry), and a saved folder is loaded only if every character is a valid code point
(:mod:`rlsi.io.safety`). So that nothing is written that cannot be loaded, or that is hundreds of times
larger than its content, they are checked before anything is written:

* an id is at most :data:`MAX_ID_LENGTH` characters, holds no lone surrogate (``"\\ud800"`` is valid JSON
  but not text) and no control character (C0, DEL, C1: they would be printed raw or break TSV lines);
* an id is not empty nor only white space (a result line or a qrels file could not name the document);
* the ids of one corpus, matrix or index are unique;
* terms longer than :data:`rlsi.text.tokenize.MAX_TERM_LENGTH` are never made (the tokenizer drops them).

Every problem raises :class:`rlsi.errors.CorpusError` (one line naming the id or its document).
"""

from __future__ import annotations

import numpy as np

from ..errors import CorpusError

__all__ = ["MAX_ID_LENGTH", "id_problem", "check_id", "check_ids"]

#: Longest document id accepted (characters). Ids are stored at the width of the longest one, so one
#: id of this length in a million documents costs 4 GB; real ids (URLs, DOIs, paths) stay far below.
MAX_ID_LENGTH = 512


def id_problem(doc_id: str):
    """None when ``doc_id`` can be stored and printed, else the reason (one phrase)."""
    if not doc_id.strip():
        return "is empty" if not doc_id else "is only white space"
    if len(doc_id) > MAX_ID_LENGTH:
        return f"is {len(doc_id)} characters long; ids are limited to {MAX_ID_LENGTH}"
    if doc_id.isprintable() or doc_id.isascii() and all(" " <= c <= "~" for c in doc_id):
        return None
    for c in doc_id:
        code = ord(c)
        if 0xD800 <= code <= 0xDFFF:
            return f"holds a lone surrogate U+{code:04X}, which is not a character (invalid UTF-16 in the JSON)"
        if code < 0x20 or 0x7F <= code < 0xA0:
            return f"holds the control character U+{code:04X}"
    return None


def _show(doc_id: str) -> str:
    text = doc_id[:40].encode("unicode_escape", "backslashreplace").decode("ascii")
    return "'" + text + ("..." if len(doc_id) > 40 else "") + "'"


def check_id(doc_id: str, where: str) -> str:
    """``doc_id`` if it can be stored (see :func:`id_problem`), else CorpusError ``where: id ... <problem>``."""
    problem = id_problem(doc_id)
    if problem is not None:
        raise CorpusError(f"{where}: document id {_show(doc_id)} {problem}")
    return doc_id


def check_ids(ids, where: str) -> np.ndarray:
    """A ``<U`` array of the ids after checking each (:func:`check_id`) and that they are unique."""
    arr = np.asarray(ids)
    if arr.dtype.kind != "U":
        arr = arr.astype(str)
    if arr.ndim != 1:
        raise CorpusError(f"{where}: document ids must be a 1-D sequence of text")
    if arr.dtype.itemsize // 4 > MAX_ID_LENGTH or not all(s.isprintable() and s.strip() for s in arr.tolist()):
        for i, doc_id in enumerate(arr.tolist()):
            check_id(doc_id, f"{where}, document {i + 1}")
    seen = {}
    for i, doc_id in enumerate(arr.tolist()):
        first = seen.setdefault(doc_id, i)
        if first != i:
            raise CorpusError(f"{where}: duplicate document id {_show(doc_id)} (documents {first + 1} and {i + 1}); "
                              "ids must be unique")
    return arr
