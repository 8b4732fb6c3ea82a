"""The terms a topic shows: signed weights, exclusivity, relevance, and the term lookup.

For a topic ``k`` and a term ``t`` with weight ``w = w_kt`` (non-zero):

* weight share ``|w| / s`` with ``s`` the largest ``|w|`` of the term's side of the topic (its positive or
  its negative weights);
* **exclusivity** ``|w| / sum_j |w_jt|``: the term's share of its total absolute weight over all topics
  (1 when the term belongs to this topic alone);
* **relevance** at ``lam`` in [0, 1]: ``lam * |w| / s + (1 - lam) * exclusivity`` — ``lam = 1`` ranks
  by weight (as ``rlsi topics`` does), ``lam = 0`` by exclusivity. Ties go to the larger ``|w|``, then the
  smaller column index.

Each side of a topic (positive and negative weights) is ranked on its own, so that both ends of a signed
topic are read in words. A topic shows ``n_terms`` terms: the smaller side up to ``n_terms // 2`` and the
dominant side the rest (:func:`side_quotas`). The page's slider moves ``lam`` in steps of
``1 / RELEVANCE_STEPS``; the file holds, per side, the union of the top terms at every step
(:func:`candidates`), so the page shows the same top terms as this module at every step of the slider
(to the digits the file keeps: 4 significant digits of a weight, 3 decimals of an exclusivity). The page's size therefore depends on ``n_terms`` and the
number of topics, never on the vocabulary.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..quality import check_components, dominant_sign

#: The slider's steps: lam = i / RELEVANCE_STEPS for i = 0 .. RELEVANCE_STEPS.
RELEVANCE_STEPS = 10
#: Significant digits of the weights, and decimals of the exclusivities, written to the page.
WEIGHT_DIGITS = 4
EXCLUSIVITY_DECIMALS = 3


def rounded(x, digits=WEIGHT_DIGITS):
    """``x`` to ``digits`` significant digits (a float whose JSON text is short and the same everywhere)."""
    return float(f"{float(x):.{digits}g}")


def relevance(weight, exclusivity, scale, lam):
    """Relevance of terms with signed ``weight`` and ``exclusivity`` on a side of a topic whose largest
    |weight| is ``scale`` (the page computes the same expression in the same order)."""
    weight = np.abs(np.asarray(weight, dtype=np.float64))
    return lam * (weight / scale) + (1 - lam) * np.asarray(exclusivity, dtype=np.float64)


def rank(weight, exclusivity, columns, scale, lam, n=None):
    """Positions of the (top ``n``) terms by decreasing relevance at ``lam`` (ties: larger |weight|, then
    smaller column)."""
    weight, columns = np.asarray(weight, dtype=np.float64), np.asarray(columns)
    r = relevance(weight, exclusivity, scale, lam)
    sel = np.arange(r.size)
    if n is not None and n < r.size:  # cut to the terms tied with or above the n-th, then sort exactly
        sel = np.flatnonzero(r >= np.partition(r, r.size - n)[r.size - n])
    order = np.lexsort((columns[sel], -np.abs(weight[sel]), -r[sel]))
    return sel[order][:n]


def side_quotas(n_pos, n_neg, n_terms, sign=1):
    """``(q_pos, q_neg)``: terms shown per side, at most ``n_terms`` in all; the smaller-weight side (opposite
    the dominant ``sign``) gets up to ``n_terms // 2`` and the dominant side the rest."""
    if sign >= 0:
        q_neg = min(n_neg, n_terms // 2)
        q_pos = min(n_pos, n_terms - q_neg)
        return q_pos, min(n_neg, n_terms - q_pos)
    q_pos = min(n_pos, n_terms // 2)
    q_neg = min(n_neg, n_terms - q_pos)
    return min(n_pos, n_terms - q_neg), q_neg


def candidates(weight, exclusivity, columns, quota, steps=RELEVANCE_STEPS, scale=None):
    """Positions of the union of the top ``quota`` terms at every slider step ``i / steps`` of one side
    (``scale``: the side's largest |weight|, by default computed)."""
    if quota <= 0 or len(weight) == 0:
        return np.zeros(0, dtype=np.intp)
    scale = float(np.max(np.abs(weight))) if scale is None else scale
    if len(weight) <= quota:
        return np.arange(len(weight))
    keep = set()
    for i in range(steps + 1):
        keep.update(rank(weight, exclusivity, columns, scale, i / steps, quota).tolist())
    return np.array(sorted(keep), dtype=np.intp)


def _column_abs_sums(C):
    if sp.issparse(C):
        return np.bincount(C.indices, weights=np.abs(C.data), minlength=C.shape[1])
    return np.abs(C).sum(axis=0)


def _rows(C):
    """Per topic ``(columns, weights)`` of its non-zero entries, in column order."""
    if sp.issparse(C):
        for k in range(C.shape[0]):
            lo, hi = C.indptr[k], C.indptr[k + 1]
            idx, val = C.indices[lo:hi], np.asarray(C.data[lo:hi], dtype=np.float64)
            keep = val != 0
            yield idx[keep].astype(np.intp), val[keep]
    else:
        for row in C:
            idx = np.flatnonzero(row)
            yield idx, np.asarray(row[idx], dtype=np.float64)


def topic_terms(components, n_terms=30, steps=RELEVANCE_STEPS):
    """Per topic a dict: ``scale`` (the largest |weight| of the positive and of the negative side, rounded;
    0 for an empty side), ``quota`` (q_pos, q_neg), ``counts`` (non-zero positive and negative terms) and
    ``entries``: ``(column, weight, exclusivity)`` of the terms the page holds (weights and exclusivities
    rounded), positive side first, each side by decreasing |weight|."""
    C = check_components(components)
    col_sums = _column_abs_sums(C)
    signs = dominant_sign(C)
    out = []
    for k, (idx, val) in enumerate(_rows(C)):
        excl = np.abs(val) / np.where(col_sums[idx] > 0, col_sums[idx], 1.0)
        pos, neg = val > 0, val < 0
        q = side_quotas(int(pos.sum()), int(neg.sum()), n_terms, signs[k])
        entries, scale = [], []
        for side, quota in ((pos, q[0]), (neg, q[1])):
            i, v, e = idx[side], val[side], excl[side]
            scale.append(abs(rounded(np.max(np.abs(v))) if v.size else 0.0))
            chosen = candidates(v, e, i, quota, steps, scale[-1])
            chosen = chosen[np.lexsort((i[chosen], -np.abs(v[chosen])))]
            entries += [(int(i[j]), rounded(v[j]), round(float(e[j]), EXCLUSIVITY_DECIMALS)) for j in chosen]
        out.append({"scale": tuple(scale), "quota": q, "counts": (int(pos.sum()), int(neg.sum())),
                    "entries": entries})
    return out


def term_lookup(components, columns, per_term=5, exclude=None):
    """For each of ``columns`` (term indices): ``(n_topics, [(topic, weight), ...])`` — the number of topics
    where its weight is non-zero and its ``per_term`` largest-|weight| topics (rounded weights; ties by topic
    index), leaving out the pairs in ``exclude`` (a set of ``(topic, column)`` the page already holds)."""
    C = check_components(components)
    columns = np.asarray(columns, dtype=np.intp)
    if sp.issparse(C):
        C = sp.csc_matrix(C)
        C.eliminate_zeros()
        counts = np.diff(C.indptr)[columns]
    else:
        C = np.asarray(C)
        counts = np.count_nonzero(C[:, columns], axis=0)
    if per_term <= 0:
        return [(int(n), []) for n in counts]
    held = {}
    for k, t in exclude or ():
        held.setdefault(t, set()).add(k)
    out = []
    for t, n in zip(columns.tolist(), counts.tolist()):
        if sp.issparse(C):
            lo, hi = C.indptr[t], C.indptr[t + 1]
            topics, w = C.indices[lo:hi], np.asarray(C.data[lo:hi], dtype=np.float64)
        else:
            w = np.asarray(C[:, t], dtype=np.float64)
            topics = np.flatnonzero(w)
            w = w[topics]
        skip = held.get(t, ())
        want = per_term + len(skip)
        if want < w.size:  # the candidates tied with or above the want-th |weight|, then sorted exactly
            a = np.abs(w)
            keep = a >= np.partition(a, a.size - want)[a.size - want]
            topics, w = topics[keep], w[keep]
        order = np.lexsort((topics, -np.abs(w)))
        listed = [(int(topics[j]), rounded(w[j])) for j in order if int(topics[j]) not in skip][:per_term]
        out.append((int(n), listed))
    return out
