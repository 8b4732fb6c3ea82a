"""What a result list shows of a document: its title and a snippet of its text around the query's words.

A document read by :func:`rlsi.text.read_corpus` with the default text fields ``("title", "text")`` is its
title and its text joined by a line break, so the title is the first line of a text of several lines. The
snippet is a window of the rest, whitespace collapsed, that starts shortly before the first word sharing
its first four letters with a word of the query that is not a stop word (``smoking`` finds ``smokers``: a
stem-like match, as the index matched them), or the start of the text when no such word is there.
"""

from __future__ import annotations

import re

__all__ = ["title_and_snippet", "SNIPPET_WIDTH", "TITLE_WIDTH"]

#: Characters of a snippet and of a title, ellipses excluded.
SNIPPET_WIDTH = 160
TITLE_WIDTH = 100
#: Letters of a query word (of at least as many) a document word must start with to count as a match.
PREFIX = 4

_WORD = re.compile(r"\w+")


def _cut(text, width):
    """``text`` cut to at most ``width`` characters at a word boundary, with ``…`` when cut."""
    if len(text) <= width:
        return text
    head = text[:width]
    space = head.rfind(" ")
    return (head[:space] if space > width // 2 else head).rstrip() + "…"


def title_and_snippet(text, query, *, width=SNIPPET_WIDTH):
    """``(title, snippet)`` of a document ``text`` for the ``query`` (strings; the title is ``""`` for a text
    of one line). See the module docstring."""
    lines = str(text).strip().split("\n", 1)
    title, body = (lines[0], lines[1]) if len(lines) == 2 else ("", lines[0])
    title = _cut(" ".join(title.split()), TITLE_WIDTH)
    body = " ".join(body.split())
    from .tokenize import english_stop_words

    stop = english_stop_words()
    prefixes = {w[:PREFIX] for w in _WORD.findall(str(query).lower()) if len(w) >= PREFIX and w not in stop}
    start = 0
    if prefixes:
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(prefixes))) + r")", re.IGNORECASE)
        found = pattern.search(body)
        if found:
            start = max(0, found.start() - width // 4)
            if start:  # begin at a word
                space = body.find(" ", start)
                start = space + 1 if 0 <= space < found.start() else found.start()
    snippet = _cut(body[start:], width)
    return title, ("…" + snippet if start else snippet)
