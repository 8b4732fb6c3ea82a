"""Regularization settings shared by the RLSI learners: the λ₁ scale, initial topics, dead topics.

λ₁ scale. Eq. (1) sums the loss over N documents but not the ℓ1 penalty, so a λ₁ tuned on one corpus is
too strong on a smaller one (the paper's λ₁ = 0.5 suits 29,528 AP documents and empties every topic of
the 1,033 MED abstracts). ``lambda1_scale="per_doc"`` (the default of every learner) reads ``lambda1`` as
the per-document θ of Eq. (4): the solver uses ``λ₁ = lambda1 · n / 1000`` where n is the (weighted)
number of documents in the statistics — N for a batch fit, the re-scaled count for an online one — so the
same value gives comparable sparsity on corpora of any size. ``lambda1_scale="paper"`` uses ``lambda1``
as the λ₁ of Eq. (1), to reproduce the paper's tables.
"""

from __future__ import annotations

import logging
import math
import warnings

from .._warnings import user_stacklevel
from ..errors import RLSIError

log = logging.getLogger(__name__)

LAMBDA1_SCALES = {"per_doc": "lambda1 per 1000 documents (size-independent)",
                  "paper": "lambda1 as in Eq. (1) of the paper"}
DOCS_PER_UNIT = 1000.0
#: Default λ₁ (per 1000 documents) and λ₂ of BatchRLSI, OnlineRLSI and their Dask placements: topics dense
#: enough to carry a linear classifier (20 Newsgroups, K = 30, tf-idf → BatchRLSI → LogisticRegression: 59.3 %,
#: level with TruncatedSVD(30); λ₁ = 0.05 with the paper's λ₂ = 1 leaves topics on 0.08 % of the terms and 33.4 %)
#: and document vectors at LSI's scale. Sparser topics to read: a larger λ₁ or ``target_terms_per_topic``.
DEFAULT_LAMBDA1 = 0.01
DEFAULT_LAMBDA2 = 1e-3
#: The two uses of the regularization, as keyword arguments (``BatchRLSI(20, **READING)``). ``FEATURES``: the
#: estimators' defaults above, for a pipeline. ``READING``: topics a person reads, the defaults of every command
#: that prints or reports topics (``rlsi fit``, ``rlsi track``, the group models): on MED (``rlsi fit``, K = 20)
#: 186 terms per topic (median; 747 at most) where FEATURES leaves 6,006 of the 13,037, and on Reuters by month
#: (``rlsi track``) topics whose shares rise by up to 12.2 points from one month to the next where FEATURES
#: keeps every topic between 3 and 7 % (benchmarks/results/defaults.md). By the scale argument (λ₁, λ₂) and
#: (λ₁/t, λ₂t²) give the same topics up to scale: FEATURES is READING's λ₂ with a λ₁ 160 times smaller, topics
#: 30 times denser, not document vectors of another scale.
FEATURES = {"lambda1": DEFAULT_LAMBDA1, "lambda2": DEFAULT_LAMBDA2}
READING = {"lambda1": 0.05, "lambda2": 1.0}
#: Initial topics: K distinct documents (default) or the paper's Gaussian start.
INITS = {"docs": "K random documents as initial topics", "random": "Gaussian start (paper)"}


class DeadTopicsWarning(UserWarning):
    """Most topics ended all-zero: λ₁ (or λ₂) is too large for this corpus."""


def effective_lambda1(lambda1, scale, n_docs):
    """The λ₁ of Eq. (1) for statistics holding ``n_docs`` (weighted) documents; must stay finite."""
    if scale == "paper":
        return float(lambda1)
    if not (math.isfinite(float(n_docs)) and float(n_docs) >= 0):  # not the user's λ₁: a damaged state
        raise RLSIError(f"the statistics hold {n_docs} documents, not a finite count >= 0: the model's saved "
                        f"state (or the data it was given) is damaged")
    value = float(lambda1) * float(n_docs) / DOCS_PER_UNIT
    if not math.isfinite(value):
        raise RLSIError(f"lambda1={lambda1!r} overflows: per 1000 documents it gives λ₁ = {value} for "
                        f"{n_docs:g} documents; choose a value below 1e300 (useful values are 1e-5 to 1)")
    return value


def warn_dead_topics(model, n_docs):
    """Warn (DeadTopicsWarning) when more than half the topics are empty, naming the parameter to lower."""
    dead = len(model.dead_topics())
    K = model.components_.shape[0]
    if getattr(model, "topic_penalty", "l1") in ("l1", "nonneg_l1") and dead > K // 2:
        if model.lambda2 >= 1e3:
            warnings.warn(
                f"{dead} of {K} topics are empty: lambda2={model.lambda2:g} shrinks every document vector "
                f"to almost zero, which leaves the topics nothing to fit; use a value near 1",
                DeadTopicsWarning, stacklevel=user_stacklevel())
            return
        scale = "lambda1" if model.lambda1_scale == "per_doc" else "lambda1 (paper scale)"
        warnings.warn(
            f"{dead} of {K} topics are empty: {scale}={model.lambda1:g} (λ₁={model.lambda1_effective_:g} "
            f"for {n_docs:g} documents) is too strong for this corpus; try a value 3-10x smaller",
            DeadTopicsWarning, stacklevel=user_stacklevel())
    elif dead:
        log.info("%d of %d topics are empty (all-zero weights)", dead, K)
