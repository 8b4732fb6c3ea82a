"""Combining topic and term matching scores (TOIS §7, Eq. 9)::

    s(q, d) = α · s_topic(q, d) + (1 − α) · s_term(q, d)

Eq. 9 mixes two scores on different scales: a cosine in [-1, 1] and a BM25 score in [0, ∞) whose range
depends on the query (its length and the idf of its terms). A single α can only work across queries if
both are first brought to a common per-query scale. :data:`NORMALIZERS` are applied to each query's row
of scores (over all indexed documents) before interpolation:

* ``"minmax"`` — ``(s − min) / (max − min)``, the row in [0, 1];
* ``"zscore"`` — ``(s − mean) / std``;
* ``"max"``    — ``s / max |s|`` (keeps 0 at 0: documents sharing no query term keep term score 0);
* ``"none"``   — raw scores (the paper's literal Eq. 9).

A constant row (e.g. the term scores of a query none of whose terms is known, or which no document
contains) normalises to all zeros under every rule, so it contributes nothing and the ranking is left to
the other component.

Choice and evidence: ``benchmarks/bench_ranking.py`` compares the rules on Cranfield, MED and CISI
under query-level cross-validation (α tuned on training folds for each rule). Min-max, z-score and max
are within about ±0.007 MAP of each other for both LSI and RLSI, with no rule best everywhere; raw scores
("none") lose 0.009–0.012 MAP and 0.02–0.03 NDCG@10 on CISI, where query lengths (hence BM25 ranges) vary most.
The default is min-max on both components (bounded, both in [0, 1], so α reads as a share);
``"none"`` is kept to reproduce the paper literally.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice, check_number
from ..errors import RLSIError

__all__ = ["NORMALIZERS", "normalize_scores", "interpolate", "Combiner",
           "DEFAULT_TERM_NORM", "DEFAULT_TOPIC_NORM"]


def _none(S):
    return S


def _minmax(S):
    lo = S.min(axis=1, keepdims=True)
    span = S.max(axis=1, keepdims=True) - lo
    return np.divide(S - lo, span, out=np.zeros_like(S), where=span > 0)


def _zscore(S):
    mean = S.mean(axis=1, keepdims=True)
    std = S.std(axis=1, keepdims=True)
    return np.divide(S - mean, std, out=np.zeros_like(S), where=std > 0)


def _max(S):
    top = np.abs(S).max(axis=1, keepdims=True)
    return np.divide(S, top, out=np.zeros_like(S), where=top > 0)


#: Per-query score normalisations, by name.
NORMALIZERS = {
    "minmax": _minmax,
    "zscore": _zscore,
    "max": _max,
    "none": _none,
}

DEFAULT_TERM_NORM = "minmax"
DEFAULT_TOPIC_NORM = "minmax"


def normalize_scores(scores, method="minmax"):
    """Normalise each row (one query over all documents) of ``scores`` with ``NORMALIZERS[method]``.

    ``scores``: 1-D (one query) or 2-D ``(n_queries, n_docs)``; returns float64 of the same shape.
    """
    check_choice("normalization", method, NORMALIZERS)
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim not in (1, 2):
        raise RLSIError(f"scores must be 1-D or 2-D (queries x documents), got {S.ndim}-D")
    if not np.all(np.isfinite(S)):
        raise RLSIError("scores contain NaN or infinite values")
    if S.shape[-1] == 0:
        return S.copy()
    out = NORMALIZERS[method](S.reshape(-1, S.shape[-1]) if S.ndim == 1 else S)
    if method == "none":
        out = out.copy()
    return out.reshape(S.shape)


def interpolate(topic, term, alpha, *, topic_norm=DEFAULT_TOPIC_NORM, term_norm=DEFAULT_TERM_NORM):
    """``α · norm(topic) + (1 − α) · norm(term)`` (Eq. 9), rows normalised per query first.

    ``topic`` and ``term`` have the same shape (1-D for one query or ``(n_queries, n_docs)``).
    """
    check_number("alpha", alpha, low=0.0, high=1.0)
    T = np.asarray(topic, dtype=np.float64)
    B = np.asarray(term, dtype=np.float64)
    if T.shape != B.shape:
        raise RLSIError(f"topic scores {T.shape} and term scores {B.shape} must have the same shape")
    if alpha == 0.0:
        return normalize_scores(B, term_norm)
    if alpha == 1.0:
        return normalize_scores(T, topic_norm)
    return alpha * normalize_scores(T, topic_norm) + (1.0 - alpha) * normalize_scores(B, term_norm)


class Combiner:
    """Eq. 9 with fixed ``alpha`` and per-query normalisations (see the module docstring)."""

    def __init__(self, alpha=0.5, *, topic_norm=DEFAULT_TOPIC_NORM, term_norm=DEFAULT_TERM_NORM):
        self.alpha = alpha
        self.topic_norm = topic_norm
        self.term_norm = term_norm
        self.validate()

    def validate(self):
        """Check the parameters; raise RLSIError naming a bad one."""
        check_number("alpha", self.alpha, low=0.0, high=1.0)
        check_choice("topic_norm", self.topic_norm, NORMALIZERS)
        check_choice("term_norm", self.term_norm, NORMALIZERS)
        return self

    def __call__(self, topic, term):
        return interpolate(topic, term, self.alpha, topic_norm=self.topic_norm, term_norm=self.term_norm)

    def get_params(self):
        """The parameters as a dict (alpha, topic_norm, term_norm)."""
        return {"alpha": float(self.alpha), "topic_norm": self.topic_norm, "term_norm": self.term_norm}

    def __repr__(self):
        return f"Combiner(alpha={self.alpha!r}, topic_norm={self.topic_norm!r}, term_norm={self.term_norm!r})"
