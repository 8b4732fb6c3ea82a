"""The documents' side of the explorer: topic shares, the documents at both ends of a topic, the document
map and the text shown for a document.

With ``V`` the documents' topic vectors (n_docs x K, what ``model.transform(X)`` returns) and ``X`` the
documents (rows of the matrix the model folds in):

* **share** of topic k: ``sum_d |v_dk| / ||x_d||_2`` over the documents with a non-empty row (TOIS §8.2.3,
  as :mod:`rlsi.tracking` measures it), divided by its total over topics;
* **ends** of topic k: the documents of largest positive ``v_dk`` and of most negative ``v_dk``;
* **document map**: each document at the weighted mean of the topic map's coordinates, weights
  ``|v_dk|`` (a document lies among the topics it uses), coloured by its strongest topic (largest
  ``|v_dk|``); at most ``max_docs`` documents, an evenly spread, seeded sample of them beyond that, so the
  page stays small for any corpus.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import RLSIError

#: Characters of a title and of a snippet written to the page.
TITLE_CHARS = 90
SNIPPET_CHARS = 200
#: Characters of a title in the document map's hover text.
MAP_TITLE_CHARS = 60


def row_norms(X):
    """L2 norm of every row of a dense or sparse matrix."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel())
    return np.linalg.norm(np.asarray(X, dtype=np.float64), axis=1)


def check_doc_topics(V, n_topics, n_docs=None):
    """``V`` as a dense float64 array (n_docs x n_topics), finite (RLSIError otherwise)."""
    V = V.toarray() if sp.issparse(V) else np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or V.shape[1] != n_topics or (n_docs is not None and V.shape[0] != n_docs):
        want = f"({'n_docs' if n_docs is None else n_docs}, {n_topics})"
        raise RLSIError(f"document vectors have shape {V.shape}; expected {want}")
    if not np.all(np.isfinite(V)):
        raise RLSIError("the document vectors hold NaN or infinite values (is the model damaged?)")
    return V.astype(np.float64, copy=False)


def topic_shares(V, norms):
    """Per topic its share of the corpus (see the module docstring); zeros when no document has weight."""
    ok = norms > 0
    mass = (np.abs(V[ok]) / norms[ok, None]).sum(axis=0) if ok.any() else np.zeros(V.shape[1])
    total = mass.sum()
    return mass / total if total > 0 else np.zeros(V.shape[1])


def topic_ends(V, n):
    """Per topic ``(top, bottom)``: lists of ``(document, v)``, the ``n`` largest positive ``v_dk`` (largest
    first) and the ``n`` most negative (most negative first); ties by document index."""
    out = []
    docs = np.arange(V.shape[0])
    for k in range(V.shape[1]):
        col = V[:, k]
        ends = []
        for side in (1.0, -1.0):
            score = side * col
            idx = docs[score > 0]
            s = score[idx]
            if n < idx.size:
                keep = s >= np.partition(s, s.size - n)[s.size - n]
                idx, s = idx[keep], s[keep]
            order = np.lexsort((idx, -s))[:n]
            ends.append([(int(idx[j]), float(col[idx[j]])) for j in order])
        out.append(tuple(ends))
    return out


def map_sample(n_docs, max_docs, random_state=0):
    """Sorted indices of the documents drawn on the map: all of them, or ``max_docs`` chosen by a seeded
    permutation."""
    if n_docs <= max_docs:
        return np.arange(n_docs)
    rng = np.random.default_rng(random_state)
    return np.sort(rng.permutation(n_docs)[:max_docs])


def map_positions(V, coords):
    """``(positions n x 2, strongest topic n, drawn mask n)``: each document at the |v|-weighted mean of the
    topics' map coordinates; documents without topic weight are not drawn."""
    A = np.abs(V)
    total = A.sum(axis=1)
    drawn = total > 0
    pos = np.zeros((V.shape[0], 2))
    pos[drawn] = (A[drawn] @ coords) / total[drawn, None]
    return pos, A.argmax(axis=1), drawn


def clip_text(text, n):
    """``text`` on one line (runs of white space as one space), cut to ``n`` characters with an ellipsis."""
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 1].rstrip() + "…"


def document_texts(docs):
    """``(ids, titles, bodies)`` of documents given as a :class:`rlsi.text.Corpus`, a sequence of strings
    or a sequence of dicts (``id``, ``title``, ``text``). A document without a title shows the first line
    of its text (the title, in a corpus read with the default text fields ``title,text``)."""
    if hasattr(docs, "texts") and hasattr(docs, "ids"):
        titles = (docs.fields or {}).get("title") if hasattr(docs, "fields") else None
        items = [{"id": i, "text": t, "title": titles[n] if titles else None}
                 for n, (i, t) in enumerate(zip(docs.ids, docs.texts))]
    else:
        items = []
        for n, d in enumerate(docs):
            if isinstance(d, str):
                items.append({"id": str(n), "text": d, "title": None})
            elif isinstance(d, dict):
                items.append({"id": str(d.get("id", n)), "text": str(d.get("text") or ""),
                              "title": d.get("title")})
            else:
                raise RLSIError(f"docs[{n}] is a {type(d).__name__}; give strings, dicts with 'text' (and "
                                f"'title', 'id'), or an rlsi.text.Corpus")
    ids, titles, bodies = [], [], []
    for item in items:
        text = str(item["text"] or "")
        title = item["title"]
        if title is None or not str(title).strip():
            head, _, rest = text.strip().partition("\n")
            title, text = (head, rest) if rest.strip() else (head, "")
        elif text.startswith(str(title)):
            text = text[len(str(title)):]
        ids.append(str(item["id"]))
        titles.append(clip_text(title, TITLE_CHARS))
        bodies.append(text)
    return ids, titles, bodies
