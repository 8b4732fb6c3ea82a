"""Quality measures of a term-topic matrix (paper §8.2.1, §8.2.2 and §8.4.1).

Every function takes ``components`` laid out as scikit-learn does: shape ``(n_topics, n_terms)``, one row
per topic (the transpose of the paper's term-topic matrix ``U``). It may be a dense array or a
``scipy.sparse`` matrix (any format; it is read as CSR, one row at a time, never densified), or a fitted
estimator with a ``components_`` attribute. A term "belongs" to a topic when its weight is non-zero;
explicitly stored zeros of a sparse matrix are ignored, so dense and sparse inputs give identical results.

Definitions, for a topic with weights ``w_1..w_M``:

* ``PosContri = sum of w_j over w_j > 0`` and ``NegContri = sum of |w_j| over w_j < 0`` (§8.4.1).
* dominant sign: ``+1`` if ``PosContri >= NegContri`` else ``-1`` (ties and all-zero "dead" topics: +1).
* majority ratio ``MR = max(PosContri, NegContri) / (PosContri + NegContri)``; ``nan`` for a dead topic,
  and :func:`avg_majority_ratio` averages over the other topics.
* top terms (footnote 14, Table XXVI): "dominant" ranks only the terms whose weight has the dominant sign,
  by ``sign * w`` decreasing (a negative-dominated topic lists its most negative terms first); "abs" ranks
  every non-zero term by ``|w|``; "positive" ranks the positive terms by ``w``. Ties are broken by the
  smaller term index. Zero weights are never listed, so a list may be shorter than asked (empty for a dead
  topic).
* compactness: share of the ``M`` terms with a non-zero weight; AvgComp is its mean over topics (§8.2.1).
* representability at ``n``: sum of the ``n`` largest ``|w|`` divided by the sum of all ``|w|``; 0 for a
  dead topic, which counts as 0 in the average (§8.2.2).
* overlap at ``n``: the paper says "average overlap of the top terms among topic pairs". Our exact reading:
  for each unordered pair of topics, ``|A ∩ B| / n`` with ``A``, ``B`` their top-``n`` term sets (ranked as
  ``by``, "dominant" by default), averaged over all pairs; ``nan`` with fewer than two topics.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import scipy.sparse as sp

from .._validation import check_choice, check_number
from ..errors import RLSIError

RANKINGS = ("dominant", "abs", "positive")


# --------------------------------------------------------------------------------------------- input
def check_components(components, name="components"):
    """Return ``components`` as a finite float ndarray or a duplicate-free, sorted CSR matrix.

    A fitted estimator is replaced by its ``components_``. Raises :class:`RLSIError` for anything that is
    not a non-empty, finite, real 2-D matrix.
    """
    if not sp.issparse(components) and not isinstance(components, np.ndarray) \
            and hasattr(components, "components_"):
        components = components.components_
    if sp.issparse(components):
        X = components.tocsr()
        if X.ndim != 2:
            raise RLSIError(f"{name} must be 2-D (topics x terms)")
    else:
        X = np.asarray(components)
        if X.ndim != 2:
            raise RLSIError(f"{name} must be 2-D (topics x terms), got {X.ndim}-D")
    if not (X.dtype == bool or np.issubdtype(X.dtype, np.integer) or np.issubdtype(X.dtype, np.floating)):
        raise RLSIError(f"{name} must hold real numbers, got dtype {X.dtype}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise RLSIError(f"{name} is empty: shape {X.shape}; need at least one topic and one term")
    if sp.issparse(X):
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        values = X.data
    else:
        values = X
    if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
        raise RLSIError(f"{name} contains {int(np.count_nonzero(~np.isfinite(values)))} NaN or infinite value(s)")
    return X


def _check_names(feature_names, n_terms):
    names = np.asarray(feature_names, dtype=object)
    if names.ndim != 1 or names.shape[0] != n_terms:
        raise RLSIError(f"feature_names has {names.size} entries but the topics have {n_terms} terms")
    return names


def _rows(X):
    """Yield ``(indices, weights)`` of the non-zero entries of each row (float64 weights, index order)."""
    if sp.issparse(X):
        for k in range(X.shape[0]):
            lo, hi = X.indptr[k], X.indptr[k + 1]
            vals = np.asarray(X.data[lo:hi], dtype=np.float64)
            keep = vals != 0
            yield np.asarray(X.indices[lo:hi][keep], dtype=np.intp), vals[keep]
    else:
        for row in X:
            idx = np.flatnonzero(row)
            yield idx, np.asarray(row[idx], dtype=np.float64)


def _pos_neg(vals):
    return float(vals[vals > 0].sum()), float(np.abs(vals[vals < 0]).sum())


def _rank(idx, vals, n, by):
    """The top ``n`` of one row as ``(indices, weights)``, best first, ties by smaller index."""
    if by == "dominant":
        pos, neg = _pos_neg(vals)
        score = vals if pos >= neg else -vals
    elif by == "abs":
        score = np.abs(vals)
    else:
        score = vals
    keep = score > 0
    idx, vals, score = idx[keep], vals[keep], score[keep]
    if n < score.size:  # cut to the candidates tied with or above the n-th score, then sort exactly
        threshold = np.partition(score, score.size - n)[score.size - n]
        keep = score >= threshold
        idx, vals, score = idx[keep], vals[keep], score[keep]
    order = np.lexsort((idx, -score))[:n]
    return idx[order], vals[order]


def _check_n(name, n):
    return check_number(name, n, low=1, integer=True)


# ----------------------------------------------------------------------------------------- top terms
def dominant_sign(components):
    """Per topic, ``+1`` if PosContri >= NegContri else ``-1`` (ties and dead topics: ``+1``)."""
    X = check_components(components)
    return np.array([1 if pos >= neg else -1 for pos, neg in (_pos_neg(v) for _, v in _rows(X))],
                    dtype=np.int64)


def top_term_indices(components, n=10, by="dominant"):
    """Per topic, an int array of at most ``n`` term indices, best first (see the module docstring)."""
    return [idx for idx, _ in _top(components, n, by)]


def top_terms(components, feature_names, n=10, by="dominant"):
    """Per topic, the list of at most ``n`` top terms (strings), best first; ``[]`` for a dead topic."""
    X = check_components(components)
    names = _check_names(feature_names, X.shape[1])
    return [[str(names[j]) for j in idx] for idx, _ in _top(X, n, by)]


def top_terms_with_weights(components, feature_names, n=10, by="dominant"):
    """Per topic, a list of ``(term, weight)`` pairs (signed weights as stored), best first."""
    X = check_components(components)
    names = _check_names(feature_names, X.shape[1])
    return [[(str(names[j]), float(w)) for j, w in zip(idx, vals)] for idx, vals in _top(X, n, by)]


def _top(components, n, by):
    X = check_components(components)
    _check_n("n", n)
    check_choice("by", by, RANKINGS)
    return [_rank(idx, vals, n, by) for idx, vals in _rows(X)]


# ------------------------------------------------------------------------------------------ measures
def compactness(components):
    """Per topic, the share of terms with a non-zero weight (``nnz / n_terms``)."""
    X = check_components(components)
    return np.array([idx.size for idx, _ in _rows(X)], dtype=np.float64) / X.shape[1]


def avg_compactness(components):
    """AvgComp (§8.2.1): the mean over topics of :func:`compactness`."""
    return float(np.mean(compactness(components)))


def representability(components, n_top=10):
    """Per topic, ``sum of the n_top largest |w| / sum of all |w|`` (§8.2.2); 0 for a dead topic."""
    X = check_components(components)
    _check_n("n_top", n_top)
    out = np.zeros(X.shape[0])
    for k, (_, vals) in enumerate(_rows(X)):
        a = np.abs(vals)
        total = a.sum()
        if total > 0:
            top = a if a.size <= n_top else np.partition(a, a.size - n_top)[a.size - n_top:]
            out[k] = top.sum() / total
    return out


def avg_representability(components, n_top=10):
    """Topic representability (§8.2.2): the mean over all topics (dead ones count 0) of
    :func:`representability`."""
    return float(np.mean(representability(components, n_top)))


def overlap(components, n_top=10, by="dominant"):
    """Topic overlap (§8.2.2): mean over unordered topic pairs of ``|A ∩ B| / n_top`` for their top-``n_top``
    term sets (shorter sets still divide by ``n_top``); ``nan`` with fewer than two topics."""
    X = check_components(components)
    sets = top_term_indices(X, n_top, by)
    n_topics = len(sets)
    if n_topics < 2:
        return math.nan
    rows = np.repeat(np.arange(n_topics), [s.size for s in sets])
    cols = np.concatenate(sets) if rows.size else np.zeros(0, dtype=np.intp)
    B = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n_topics, X.shape[1]))
    shared = (B @ B.T).toarray()  # shared[i, j] = |A_i ∩ A_j|
    pairs_total = (shared.sum() - np.trace(shared)) / 2.0
    return float(pairs_total / n_top / (n_topics * (n_topics - 1) / 2))


def contributions(components):
    """Per topic PosContri, NegContri and MR (§8.4.1) as a dict of arrays
    ``{"pos_contri", "neg_contri", "majority_ratio"}``; MR is ``nan`` for a dead topic."""
    X = check_components(components)
    pn = np.array([_pos_neg(v) for _, v in _rows(X)], dtype=np.float64).reshape(-1, 2)
    pos, neg = pn[:, 0], pn[:, 1]
    total = pos + neg
    with np.errstate(invalid="ignore", divide="ignore"):
        mr = np.where(total > 0, np.maximum(pos, neg) / np.where(total > 0, total, 1.0), np.nan)
    return {"pos_contri": pos, "neg_contri": neg, "majority_ratio": mr}


def avg_majority_ratio(components):
    """Mean MR over the topics that are not dead; ``nan`` if every topic is dead."""
    mr = contributions(components)["majority_ratio"]
    mr = mr[~np.isnan(mr)]
    return float(mr.mean()) if mr.size else math.nan


# ------------------------------------------------------------------------------------------- reports
def topic_label(k, names=None):
    """How topic k (row k of ``components_``) is labelled in the reports: ``T{k+1}`` (numbered from 1), and its
    name in brackets after it when ``names`` (a model's ``topic_names_``: a string or None per topic) names it,
    ``T1 [hockey]``."""
    name = names[k] if names is not None and 0 <= k < len(names) else None
    return f"T{k + 1} [{name}]" if name else f"T{k + 1}"


def topic_summary(components, feature_names, n_terms=10, by="dominant", start=0, labels=None):
    """One dict per topic: ``index`` (0-based row, plus ``start`` when ``components`` are the rows from
    ``start`` on of a larger model: a topic group), ``sign``, ``terms``, ``weights``, ``compactness``,
    ``pos_contri``, ``neg_contri``, ``majority_ratio``, and ``label`` with ``labels`` (one per topic, a string or
    None: a model's ``topic_names_``)."""
    X = check_components(components)
    names = _check_names(feature_names, X.shape[1])
    tops = _top(X, n_terms, by)
    comp = compactness(X)
    contri = contributions(X)
    signs = dominant_sign(X)
    return [{
        **({} if labels is None else {"label": labels[k]}),
        "index": int(start) + k,
        "sign": int(signs[k]),
        "terms": [str(names[j]) for j in idx],
        "weights": [float(w) for w in vals],
        "compactness": float(comp[k]),
        "pos_contri": float(contri["pos_contri"][k]),
        "neg_contri": float(contri["neg_contri"][k]),
        "majority_ratio": float(contri["majority_ratio"][k]),
    } for k, (idx, vals) in enumerate(tops)]


def format_topics(components, feature_names, n_terms=10, by="dominant", start=0, labels=None):
    """Plain-text table, one line per topic, as printed by ``rlsi topics``::

        T4   comp=0.8%  MR=0.97  cancer tumor cell ...

    Topics are numbered from 1 as in the tracking reports (``T4`` is row 3 of ``components_``); compactness
    is in percent. A negative-dominated topic (its weight mostly negative; the terms are its most negative
    ones) starts with ``(-)`` and a last line explains the mark; when there is one, the other lines are
    indented by as much, and the ``comp`` field is padded, so that columns stay aligned. A dead topic shows
    ``MR=n/a`` and ``(empty topic)``. ``start``: the row of the first topic in its model (a topic group of
    a group model is numbered as its rows, so that numbers run on across the groups). ``labels``: the topics'
    names (a string or None each; a model's ``topic_names_``), shown after the number in brackets.
    """
    summary = topic_summary(components, feature_names, n_terms, by, start=start, labels=labels)
    names = [f"[{t['label']}]" if t.get("label") else "" for t in summary]
    name_width = max((len(n) for n in names), default=0)
    width = len(f"T{int(start) + len(summary)}")
    any_negative = any(t["sign"] < 0 for t in summary)
    comps = [f"{100 * t['compactness']:.1f}%" for t in summary]
    comp_width = max(len(c) for c in comps)
    lines = []
    for t, comp, name in zip(summary, comps, names):
        mark = ("(-) " if t["sign"] < 0 else "    ") if any_negative else ""
        mr = "n/a " if math.isnan(t["majority_ratio"]) else f"{t['majority_ratio']:.2f}"
        terms = " ".join(t["terms"]) if t["terms"] else "(empty topic)"
        label = f"  {name:<{name_width}}" if name_width else ""
        lines.append(f"{mark}{'T' + str(t['index'] + 1):<{width}}{label}  comp={comp:<{comp_width}}  MR={mr}  {terms}")
    if any_negative:
        lines.append("(-) the topic's weight is mostly negative; its terms are listed by their negative weights")
    return "\n".join(lines)


# Scalar summaries of a whole model, each a function of ``components`` alone.
QUALITY_MEASURES = {
    "avg_compactness": avg_compactness,
    "avg_representability@10": partial(avg_representability, n_top=10),
    "overlap@10": partial(overlap, n_top=10),
    "avg_majority_ratio": avg_majority_ratio,
}
_PARAMETRIC = {"avg_representability": avg_representability, "overlap": overlap}


def get_quality_measure(name):
    """The function for a measure name: a key of :data:`QUALITY_MEASURES`, or ``avg_representability@N`` /
    ``overlap@N`` for any positive integer ``N``. Unknown names raise :class:`RLSIError` listing choices."""
    if isinstance(name, str) and name not in QUALITY_MEASURES and "@" in name:
        base, _, k = name.partition("@")
        if base in _PARAMETRIC and k.isdigit() and int(k) >= 1:
            return partial(_PARAMETRIC[base], n_top=int(k))
    return QUALITY_MEASURES[check_choice("measure", name, QUALITY_MEASURES)]


def quality_report(components, n_top=10, measures=None):
    """``{name: value}`` for ``measures`` (names as in :func:`get_quality_measure`); by default AvgComp,
    representability and overlap at ``n_top``, and the average MR."""
    _check_n("n_top", n_top)
    X = check_components(components)
    if measures is None:
        measures = ["avg_compactness", f"avg_representability@{n_top}", f"overlap@{n_top}",
                    "avg_majority_ratio"]
    funcs = [(name, get_quality_measure(name)) for name in measures]  # validate every name first
    return {name: float(f(X)) for name, f in funcs}
