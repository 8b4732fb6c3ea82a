"""The tracking page's data: a :class:`rlsi.tracking.TopicTimeline` as one JSON-ready dict.

Per segment (period) and topic: the share fraction (the topic's part of the segment's topic mass, as the
Markdown report and ``shares.png`` show it), alive flag, life number (``T7.2`` is the second life of
topic 7), drift since the previous segment and top terms with their signed normalised weights; plus the
born / died / reborn events (a birth with the ids of the documents that caused it), and the topics' names (seed
words' names, shown after their labels: ``T1 [hockey]``) or None. Term strings are written once and referred to
by position.
"""

from __future__ import annotations

import math

from .._validation import check_number
from .terms import rounded

#: Top terms per topic and segment on the tracking page.
TRACKING_TERMS = 8


def _num(x, digits=4):
    return None if x is None or not math.isfinite(float(x)) else rounded(x, digits)


def tracking_data(timeline, n_terms=TRACKING_TERMS, title="Topic tracking"):
    """The page's data of ``timeline`` (see the module docstring)."""
    check_number("n_terms", n_terms, low=1, integer=True)
    tl = timeline
    F = tl.share_fraction()
    names, position = [], {}

    def term(t):
        if t not in position:
            position[t] = len(names)
            names.append(t)
        return position[t]

    top = [[[x for t, w in topic[:n_terms] for x in (term(str(t)), rounded(w))] for topic in seg]
           for seg in tl.top_terms]
    drift = getattr(tl, "drift", None) or [[None] * tl.n_components for _ in tl.segments]
    events = [{"topic": int(e["topic"]), "kind": str(e["kind"]), "segment": str(e["segment"]),
               "life": int(e.get("life", 1)), "similarity": _num(e["similarity"], 3) if "similarity" in e else None,
               "documents": [str(d) for d in e.get("documents", ())]}
              for e in tl.events]
    return {"format": "rlsi-tracking", "title": title, "n_topics": int(tl.n_components),
            "segments": [str(s) for s in tl.segments], "n_docs": [int(n) for n in tl.n_docs],
            "fraction": [[_num(x) for x in row] for row in F.tolist()],
            "alive": [[1 if a else 0 for a in row] for row in tl.alive],
            "life": [[int(x) for x in row] for row in tl.life],
            "drift": [[_num(x, 3) for x in row] for row in drift],
            "terms": names, "top": top, "events": events,
            "names": None if tl.names is None else [None if n is None else str(n) for n in tl.names]}
