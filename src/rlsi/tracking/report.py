"""Reports of a :class:`~rlsi.tracking.TopicTimeline`: Markdown, plain text, a JSON-ready dict, CSV."""

from __future__ import annotations

import numpy as np

__all__ = ["to_markdown", "to_text", "to_dict", "to_csv", "terms_text", "event_lines"]


def terms_text(timeline, p, k, n_terms, weights=True):
    """Top terms of topic k at segment p: ``"a 0.21, b -0.1"`` (``weights=True``, three significant digits: a
    topic of thousands of terms gives its top terms weights such as 0.0042 and 0.00041, which three decimals
    would print as 0.004 and 0.000) or ``"a, -b"``; ``"(dead)"`` for a dead topic."""
    items = timeline.top_terms[p][k][:n_terms]
    if not timeline.alive[p][k]:
        return "(dead)"
    if weights:
        return ", ".join(f"{t} {w:.3g}" for t, w in items)
    return ", ".join(f"-{t}" if w < 0 else t for t, w in items)


#: Documents named in the sentence of a birth (timeline.json has them all).
BORN_SHOWN = 10


def event_lines(timeline):
    """One sentence per born, dead or reborn event."""
    lines = []
    for e in timeline.events:
        name, named = f"T{e['topic'] + 1}", timeline.name_suffix(e["topic"])
        if e["kind"] == "born":
            docs = e["documents"]
            shown = ", ".join(map(str, docs[:BORN_SHOWN])) + (f" and {len(docs) - BORN_SHOWN} more"
                                                              if len(docs) > BORN_SHOWN else "")
            at = f" (mini-batch {e['batch']})" if "batch" in e else ""
            lines.append(f"{name}{named} born at {e['segment']}{at} from {len(docs)} documents no topic explained: {shown}")
        elif e["kind"] == "died":
            lines.append(f"{name}{named} died at {e['segment']} (all weights zero)")
        else:
            sim = e["similarity"]
            how = "similar to its former self" if sim >= 0.5 else "about something else"
            lines.append(f"{name}{named} reborn at {e['segment']} as {name}.{e['life']} "
                         f"({how}: cosine {sim:.2f} with its last live state)")
    return lines


def to_markdown(timeline, n_terms=5, topics=None, title="Topic tracking"):
    """Markdown report: share table (percent of each segment's topic mass), rising topics,
    per-topic tables of top terms per segment, and dead/reborn events."""
    tl = timeline
    topics = range(tl.n_components) if topics is None else topics
    F = tl.share_fraction()
    out = [f"# {title}", "",
           f"{len(tl.segments)} segments, {int(np.sum(tl.n_docs))} documents, "
           f"{tl.n_components} topics. Share of a topic in a segment: Σ |v_k| / ‖d‖₂ over the segment's "
           f"documents (TOIS §8.2.3), shown as % of the segment's total (†: topic dead, all weights zero); "
           f"term weights are u_mk / ‖u_k‖₁ (negative terms signed; a topic whose negative part "
           f"dominates is shown as −u_k). T7.2 is the second life of topic 7 after it died.", ""]
    out += ["## Topic shares (%)", ""]
    head = ["segment", "docs"] + [tl.label(k) for k in topics]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join(["---"] * len(head)) + "|")
    for p, seg in enumerate(tl.segments):
        cells = [seg, str(tl.n_docs[p])] + [
            f"{100 * F[p, k]:.1f}" if tl.alive[p][k] or F[p, k] > 0 else "†" for k in topics]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    rising = [r for r in tl.rising(5) if r[2] > 0]
    if rising:
        out += ["## Largest rises", ""]
        for k, p, r in rising:
            out.append(f"- {tl.label(k, p)} rises by {100 * r:.1f} points at {tl.segments[p]}: "
                       f"{terms_text(tl, p, k, n_terms, weights=False)}")
        out.append("")
    events = event_lines(tl)
    if events:
        out += ["## Born, dead and reborn topics", ""] + [f"- {line}" for line in events] + [""]
    out += ["## Top terms per segment", ""]
    for k in topics:
        out += [f"### {tl.label(k)}", "", "| segment | share % | top terms (normalised weight) |",
                "|---|---|---|"]
        for p, seg in enumerate(tl.segments):
            out.append(f"| {seg} | {100 * F[p, k]:.1f} | {terms_text(tl, p, k, n_terms)} |")
        out.append("")
    return "\n".join(out)


def to_text(timeline, n_terms=5, topics=None):
    """Plain-text report: one block per topic, one line per segment, then the events."""
    tl = timeline
    topics = range(tl.n_components) if topics is None else topics
    F = tl.share_fraction()
    width = max([len(s) for s in tl.segments] + [7])
    lines = []
    for k in topics:
        lines.append(tl.label(k))
        for p, seg in enumerate(tl.segments):
            terms = terms_text(tl, p, k, n_terms, weights=False)
            lines.append(f"  {seg:<{width}} {100 * F[p, k]:6.1f}%  {terms}")
        lines.append("")
    lines += event_lines(tl)
    return "\n".join(lines).rstrip() + "\n"


def to_dict(timeline):
    """JSON-ready dict of the whole timeline (shares and their fractions as nested lists; ``names`` the topics'
    names, or None)."""
    tl = timeline
    return {"n_components": tl.n_components, "segments": list(tl.segments),
            "n_docs": [int(n) for n in tl.n_docs], "share": tl.shares.tolist(),
            "share_fraction": tl.share_fraction().tolist(),
            "top_terms": [[[[t, float(w)] for t, w in topic] for topic in seg] for seg in tl.top_terms],
            "alive": [[bool(a) for a in row] for row in tl.alive],
            "life": [[int(x) for x in row] for row in tl.life], "events": list(tl.events),
            "drift": [[None if x is None else float(x) for x in row] for row in tl.drift],
            "names": None if tl.names is None else list(tl.names)}


def to_csv(timeline):
    """Segments x topics share fractions as CSV text (header: segment, docs, T1..TK)."""
    tl = timeline
    F = tl.share_fraction()
    rows = ["segment,docs," + ",".join(f"T{k + 1}" for k in range(tl.n_components))]
    for p, seg in enumerate(tl.segments):
        rows.append(f"\"{seg}\",{tl.n_docs[p]}," + ",".join(f"{x:.6g}" for x in F[p]))
    return "\n".join(rows) + "\n"
