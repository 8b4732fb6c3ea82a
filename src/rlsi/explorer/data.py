"""The explorer's data: everything the page shows, as one JSON-ready dict built from a model and its
documents (:func:`explorer_data`).

The dict holds the top terms of each topic only (:mod:`rlsi.explorer.terms`), the topic map
(:mod:`rlsi.explorer.layout`), the diagnostics of :mod:`rlsi.quality`, and with documents their shares,
the documents at both ends of each topic and a bounded sample for the document map
(:mod:`rlsi.explorer.documents`). Its size grows with the number of topics, ``n_terms``, ``n_ends`` and
``max_map_docs``, never with the vocabulary or the corpus. Numbers are rounded to the digits the page
shows, so the same inputs give the same bytes.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_number
from ..errors import RLSIError
from ..quality import check_components, compactness, contributions, npmi_coherence, quality_report
from . import documents as D
from .layout import topic_map
from .models import model_facts
from .terms import RELEVANCE_STEPS, rounded, term_lookup, topic_terms

#: Defaults of :func:`explorer_data` (and ``rlsi explore``).
N_TERMS = 30
LOOKUP_TOPICS = 5
N_ENDS = 5
MAX_MAP_DOCS = 2000
COHERENCE_TERMS = 10
#: At most this many (topic, weight) pairs of the term lookup beyond the shown terms: each term gets
#: ``min(lookup_topics, LOOKUP_PAIRS // terms held)`` (5 for up to 4,000 terms held, none at 500 topics).
LOOKUP_PAIRS = 20_000
#: Characters of document text (titles and snippets) a page holds at most; the snippets share what the
#: titles leave, up to :data:`rlsi.explorer.documents.SNIPPET_CHARS` each (none below 20).
TEXT_CHARS = 300_000


def _num(x, digits=4):
    """A float rounded for the page, or None for NaN / infinity (JSON has no NaN)."""
    x = float(x)
    return rounded(x, digits) if math.isfinite(x) else None


def _nums(values, digits=4):
    return [_num(v, digits) for v in values]


def check_options(n_terms, lookup_topics, n_ends, max_map_docs, coherence_terms):
    """The size options as checked integers (RLSIError naming a bad one)."""
    check_number("n_terms", n_terms, low=1, integer=True)
    check_number("lookup_topics", lookup_topics, low=0, integer=True)
    check_number("n_ends", n_ends, low=0, integer=True)
    check_number("max_map_docs", max_map_docs, low=0, integer=True)
    check_number("coherence_terms", coherence_terms, low=2, integer=True)


def topic_names(model, n_topics):
    """The topics' names (a model's ``topic_names_``: seed words' names, :mod:`rlsi.models.seeds`) as a list of
    ``n_topics`` strings or None, or None when the model names none of them."""
    names = getattr(model, "topic_names_", None)
    if not isinstance(names, (list, tuple)) or len(names) != n_topics or not any(names):
        return None
    return [str(n) if n else None for n in names]


def _terms_part(C, names, n_terms, lookup_topics):
    """The topics' shown terms (entries flattened as term, weight, exclusivity) and the term table."""
    per_topic = topic_terms(C, n_terms)
    columns = sorted({c for t in per_topic for c, _, _ in t["entries"]})
    position = {c: i for i, c in enumerate(columns)}
    held = {(k, c) for k, t in enumerate(per_topic) for c, _, _ in t["entries"]}
    per_term = min(lookup_topics, LOOKUP_PAIRS // max(len(columns), 1))
    lookup = term_lookup(C, columns, per_term, exclude=held)
    topics = {
        "scale": [list(t["scale"]) for t in per_topic],
        "quota": [list(t["quota"]) for t in per_topic],
        "counts": [list(t["counts"]) for t in per_topic],
        "entries": [[x for c, w, e in t["entries"] for x in (position[c], w, e)] for t in per_topic],
    }
    terms = {"names": [str(names[c]) for c in columns], "nz": [n for n, _ in lookup],
             "extra": [[t] + [x for k, w in extra for x in (k, w)] for t, (_, extra) in enumerate(lookup) if extra],
             "extra_per_term": per_term}
    return topics, terms


def _documents_part(V, norms, coords, docs, n_ends, max_map_docs, random_state):
    """Shares, both ends of each topic, the document map sample, and the text of the documents used."""
    shares = D.topic_shares(V, norms)
    ends = D.topic_ends(V, n_ends)
    sample = D.map_sample(V.shape[0], max_map_docs, random_state)
    pos, strongest, drawn = D.map_positions(V[sample], coords)
    sample, pos, strongest = sample[drawn], pos[drawn], strongest[drawn]
    end_docs = sorted({d for top, bottom in ends for d, _ in top + bottom})
    used = sorted(set(end_docs) | set(sample.tolist()))
    index = {d: i for i, d in enumerate(used)}
    ids = titles = bodies = None
    if docs is not None:
        ids, titles, bodies = D.document_texts(docs)
        if len(ids) != V.shape[0]:
            raise RLSIError(f"docs has {len(ids)} documents but X has {V.shape[0]} rows; give the same documents")
    end_set = set(end_docs)
    table = {"ids": [ids[d] if ids else str(d) for d in used], "titles": [], "snippets": []}
    if titles is None:
        table["titles"] = [f"document {d}" for d in used]
        table["snippets"] = [""] * len(used)
    else:
        table["titles"] = [titles[d] if d in end_set else D.clip_text(titles[d], D.MAP_TITLE_CHARS) for d in used]
        left = TEXT_CHARS - sum(len(t) for t in table["titles"])
        n_chars = min(D.SNIPPET_CHARS, left // max(len(end_set), 1))
        table["snippets"] = [D.clip_text(bodies[d], n_chars) if d in end_set and n_chars >= 20 else ""
                             for d in used]
    part = {
        "n": int(V.shape[0]), "with_text": titles is not None, **table,
        "ends": [[[x for d, v in side for x in (index[d], _num(v))] for side in (top, bottom)] for top, bottom in ends],
        "map": {"n_drawn": int(sample.size), "x": [round(float(v), 3) for v in pos[:, 0]],
                "y": [round(float(v), 3) for v in pos[:, 1]], "topic": [int(k) for k in strongest],
                "doc": [index[int(d)] for d in sample]},
    }
    return shares, part


def explorer_data(model, feature_names, *, X=None, doc_topics=None, docs=None, n_terms=N_TERMS,
                  lookup_topics=LOOKUP_TOPICS, n_ends=N_ENDS, max_map_docs=MAX_MAP_DOCS,
                  coherence_terms=COHERENCE_TERMS, distance="topics", random_state=0, progress=None):
    """The page's data (see the module docstring).

    model : a fitted topic model (``components_``); feature_names : the term of every column.
    X : the documents (rows of the matrix the model folds in), for shares and NPMI coherence.
    doc_topics : the documents' topic vectors (``model.transform(X)``), for shares, ends and the map.
    docs : their titles and text (see :func:`rlsi.explorer.documents.document_texts`).
    progress : optional callable taking the name of each step as it starts.
    """
    check_options(n_terms, lookup_topics, n_ends, max_map_docs, coherence_terms)
    step = progress or (lambda name: None)
    facts = model_facts(model)
    C = check_components(model.components_)
    K, M = C.shape
    names = np.asarray(feature_names, dtype=object)
    if names.ndim != 1 or names.shape[0] != M:
        raise RLSIError(f"{names.size} term names for a model of {M} terms; give the model's vectorizer")
    V = norms = None
    if doc_topics is not None:
        V = D.check_doc_topics(doc_topics, K, None if X is None else X.shape[0])
        norms = D.row_norms(X) if X is not None else np.ones(V.shape[0])
    step("terms")
    topics, terms = _terms_part(C, names, n_terms, lookup_topics)
    step("map")
    coords, kept, signs = topic_map(C, V, distance)
    contri = contributions(C)
    pos, neg = contri["pos_contri"], contri["neg_contri"]
    balance = np.divide(pos - neg, pos + neg, out=np.zeros(K), where=(pos + neg) > 0)
    topics.update({
        "x": _nums(coords[:, 0]), "y": _nums(coords[:, 1]), "sign": [int(s) for s in signs],
        "balance": _nums(balance, 3), "nnz": [int(a + b) for a, b in topics["counts"]],
        "compactness": _nums(compactness(C)), "mr": _nums(contri["majority_ratio"], 3),
        "names": topic_names(model, K),
    })
    npmi = None
    if X is not None:
        step("coherence")
        if X.shape[1] != M:
            raise RLSIError(f"X has {X.shape[1]} terms but the model has {M}; vectorize with the model's vectorizer")
        npmi = npmi_coherence(C, X, n=coherence_terms)
    topics["npmi"] = None if npmi is None else _nums(npmi, 3)
    docs_part = None
    topics["share"] = None
    if V is not None:
        step("documents")
        shares, docs_part = _documents_part(V, norms, coords, docs, n_ends, max_map_docs, random_state)
        topics["share"] = _nums(shares)
    elif docs is not None:
        raise RLSIError("docs needs X (or doc_topics): the documents' topic vectors place them")
    dead = [int(k) for k in np.flatnonzero(np.asarray(topics["nnz"]) == 0)]
    quality = {k: _num(v) for k, v in quality_report(C).items()}
    summary = {"quality": quality, "dead": dead, "map_kept": _num(kept, 3),
               "avg_npmi": None if npmi is None or np.all(np.isnan(npmi)) else _num(np.nanmean(npmi), 3),
               "coherence_terms": coherence_terms if npmi is not None else None}
    return {"format": "rlsi-explorer", "model": facts, "topics": topics, "terms": terms, "docs": docs_part,
            "summary": summary, "settings": {"n_terms": n_terms, "relevance_steps": RELEVANCE_STEPS,
                                             "distance": distance, "n_ends": n_ends,
                                             "lookup_topics": lookup_topics}}
