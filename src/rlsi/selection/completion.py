"""Document completion for squared-loss topic models: fold in half of a held-out document, score the rest.

Protocol. Each held-out document's non-zero entries (its distinct terms, with their weights) go to one of two
halves at random, one fair coin per entry (:func:`split_terms`). The first half ``x₁`` is folded in with the
model's ``transform`` (the ridge projection of RLSI: the document vector ``w`` that the model would give a
document holding only those terms), and ``x̂ = w U`` predicts every term. The second half ``x₂`` is scored
on every term *outside* the first half — the terms the model was not shown, present in the document or not:
the document's error is ``‖(x₂ − x̂) restricted to the terms not in x₁‖²``. It is the held-out form of
RLSI's own loss (squared error), on tf-idf or any weighting, and needs no probabilities (RLSI's topics and
document vectors are signed). The score of a model pools the held-out documents whose two halves are both
non-empty (:func:`completion_score`):

    completion = 1 − Σ_d ‖(x₂ − x̂)…‖² / Σ_d ‖x₂‖²

the share of the unseen halves' squared weight that the model predicts: 1 predicts them exactly, 0 is what
predicting nothing scores, a negative value predicts worse than nothing (weight spread on terms the
documents do not have). It comes with the standard error of a ratio
estimator over documents (the delta method: ``√(Σ_d (a_d − R b_d)² · n/(n−1)) / Σ_d b_d`` for errors ``a_d``,
norms ``b_d`` and ``R = Σa / Σb``), what the one-standard-error rule of :mod:`rlsi.selection.rule` needs. The
pooled ratio, rather than the mean of the documents' own ratios, keeps a document whose second half is one
rare term of tiny weight from dominating the score (its own ratio can be in the hundreds).

The split splits distinct terms, not tokens (as ``split_counts(..., unit="terms")`` of
:mod:`rlsi.models.stc.perplexity`), because a weighted matrix has no tokens to thin; a term is never in
both halves, so the model cannot score by copying the first half.

Cost: ``O(nnz · K)`` without forming ``x̂`` over the vocabulary: ``‖x̂‖² = w G wᵀ`` with ``G = U Uᵀ``, the
cross term from ``x₂ Uᵀ``, and the first half's part of ``‖x̂‖²`` from the topic weights of its terms,
gathered in chunks of :data:`CHUNK_ENTRIES`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import RLSIError

__all__ = ["CHUNK_ENTRIES", "split_terms", "completion_errors", "completion_score"]

#: Entries (non-zeros x topics) gathered at once for the first half's share of ``‖x̂‖²`` (8 MB of float64).
CHUNK_ENTRIES = 1 << 20


def split_terms(X, rng):
    """``(X1, X2)``, CSR with ``X1 + X2 = X``: each non-zero entry of X to one half by a fair coin of ``rng``
    (a numpy Generator)."""
    X = sp.csr_matrix(X)
    first = rng.random(X.nnz) < 0.5
    halves = []
    for keep in (first, ~first):
        half = sp.csr_matrix((np.where(keep, X.data, 0), X.indices.copy(), X.indptr.copy()), shape=X.shape)
        half.eliminate_zeros()
        halves.append(half)
    return tuple(halves)


def completion_score(model, X1, X2, chunk_entries=CHUNK_ENTRIES):
    """``(completion, standard error)`` of a fitted model on the halves X1 (shown) and X2 (scored): the
    pooled ratio of the module docstring."""
    errors, norms = completion_errors(model, X1, X2, chunk_entries)
    ratio = errors.sum() / norms.sum()
    n = errors.size
    se = np.sqrt(np.sum((errors - ratio * norms) ** 2) * n / (n - 1)) / norms.sum() if n > 1 else np.nan
    return float(1.0 - ratio), float(se)


def completion_errors(model, X1, X2, chunk_entries=CHUNK_ENTRIES):
    """``(errors, norms)`` per document whose halves X1 and X2 are both non-empty: the squared error of the
    prediction of x₂ on the terms outside x₁, and ``‖x₂‖²`` (module docstring). ``model``: fitted, with
    ``transform`` and ``components_`` (K x M); ``chunk_entries``: see :data:`CHUNK_ENTRIES`."""
    X1, X2 = sp.csr_matrix(X1, dtype=np.float64), sp.csr_matrix(X2, dtype=np.float64)
    if X1.shape != X2.shape:
        raise RLSIError(f"the two halves differ in shape: {X1.shape} and {X2.shape}")
    rows = np.flatnonzero((np.diff(X1.indptr) > 0) & (np.diff(X2.indptr) > 0))
    if rows.size == 0:
        raise RLSIError("no held-out document has terms in both halves; give held-out documents with at "
                        "least two distinct terms")
    X1, X2 = X1[rows], X2[rows]
    C = sp.csr_matrix(model.components_, dtype=np.float64)
    W = np.asarray(model.transform(X1), dtype=np.float64)
    G = (C @ C.T).toarray()
    predicted_sq = np.einsum("dk,kl,dl->d", W, G, W)                     # ‖x̂‖² over the vocabulary
    cross = np.einsum("dk,dk->d", np.asarray((X2 @ C.T).todense()), W)   # x₂ · x̂ (x₂ lies outside x₁)
    shown_sq = _shown_sq(W, C, X1, chunk_entries)                                        # ‖x̂‖² on the terms of x₁
    x2_sq = np.asarray(X2.multiply(X2).sum(axis=1)).ravel()
    return x2_sq - 2.0 * cross + (predicted_sq - shown_sq), x2_sq


def _shown_sq(W, C, X1, chunk_entries):
    """Σ over the terms j of each document's first half of ``x̂_j²``, ``x̂_j = w · U[:, j]``."""
    Ct = C.T.tocsr()  # terms x topics
    doc = np.repeat(np.arange(X1.shape[0]), np.diff(X1.indptr))
    out = np.zeros(X1.shape[0])
    step = max(1, chunk_entries // max(W.shape[1], 1))
    for start in range(0, X1.nnz, step):
        terms = X1.indices[start:start + step]
        values = np.einsum("pk,pk->p", W[doc[start:start + step]], Ct[terms].toarray())
        np.add.at(out, doc[start:start + step], values * values)
    return out
