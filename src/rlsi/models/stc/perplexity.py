"""Held-out perplexity by document completion (§5.1.1, Eq. 17–19), for STC and for scikit-learn's LDA.

Protocol (the same for both models, so they compare on the same split): every test token is assigned
to one of two halves at random (:func:`split_counts`: ``w₁ ~ Binomial(w, ½)``, ``w₂ = w − w₁``, one seed).
The first half infers the document's code with the topics frozen; the second half is scored.
``split_counts(..., unit="terms")`` splits the *distinct terms* instead (each term, with its whole count,
goes to one half) — §5.1.1 says "half of the test terms" for STC and "half of the test words" for LDA;
the token split is the default because it is the same split for both models (the term
split raises both perplexities by 10–20 % on 20 Newsgroups).

* STC (Eq. 19): θ from the first half (:meth:`STCBase.transform`); every term n of the second half gets
  the word code ``s_n = θ`` (the mode of ``p(s | θ)`` without the Laplace factor: STC has no posterior
  over word codes to sample from) and ``log p(w₂ | w₁, β) = Σ_n log Poisson(w₂n; θᵀβ_n + ε)``, divided
  by the number of *distinct* terms of the second halves (Eq. 19's ``|I₂|``).
* LDA (Eq. 18): θ = the normalised variational document-topic posterior of the first half
  (``LatentDirichletAllocation.transform``), ``p(n) = Σ_k θ_k φ_kn`` with φ the normalised topics, and
  ``log p(w₂ | w₁) = Σ_n w₂n log p(n)``, divided by the number of *tokens* of the second halves.

Caveat (the paper's Appendix): the two numbers are not the same quantity — Eq. 19 is a Poisson
likelihood of counts per distinct term under unnormalised codes, Eq. 18 a multinomial likelihood per
token — so "STC 1,589 vs LDA 5,656" (Table 1) compares each model in its own measure. The Appendix's
"interchange" experiment shows each model's bases score better under its own measure; read the pair as
two perplexities, not as one model being better by a factor of 3.5.

Caveat (ε): Eq. 19 is not a property of the topics alone. At the paper's ρ = 0.1 about half of the held-out
terms get ``θᵀβ_n < ε`` (no code mass), so their Poisson mean is ε itself and each such term costs about
``w log(1/ε)``: on 20 Newsgroups the same online STC scores 16,089 with ε = 1e-4 and 4,458 with ε = 1e-3
(the released code's value, now the default), against 9,131 for LDA, at the printed λ, γ, ρ. Quote
ε with every STC perplexity.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from ...errors import RLSIError
from .core import check_counts


def split_counts(X, seed=0, unit="tokens"):
    """(X1, X2) with X1 + X2 = X: the two halves of document completion.

    ``unit="tokens"`` (default): each token of the count matrix X to one half at random (binomial
    thinning), so a term may appear in both halves; ``unit="terms"``: each distinct term of a document,
    with its whole count, to one half at random (§5.1.1's "half of the test terms"; no term in both).
    Documents with a second half that is empty are kept (they add nothing to either sum)."""
    if unit not in ("tokens", "terms"):
        raise RLSIError(f"unit={unit!r} is not a document-completion split; use 'tokens' or 'terms'")
    X = check_counts(X)
    rng = np.random.default_rng(seed)
    counts = np.rint(X.data).astype(np.int64)
    if np.any(np.abs(counts - X.data) > 1e-9):
        raise RLSIError("document completion splits tokens: X must hold integer counts")
    if unit == "terms":
        first = np.where(rng.random(counts.shape[0]) < 0.5, counts, 0).astype(np.float64)
    else:
        first = rng.binomial(counts, 0.5).astype(np.float64)
    X1 = sp.csr_matrix((first, X.indices.copy(), X.indptr.copy()), shape=X.shape)
    X2 = sp.csr_matrix((counts - first, X.indices.copy(), X.indptr.copy()), shape=X.shape)
    X1.eliminate_zeros()
    X2.eliminate_zeros()
    return X1, X2


def stc_perplexity(model, X1, X2, details=False):
    """Eq. (19): exp(−Σ log Poisson(w₂n; θᵀβ_n + ε) / Σ_i |I₂_i|), θ inferred from X1.

    ``details=True`` returns ``(perplexity, info)`` with ``info["floor"]``, Eq. (19) with θ = 0 (every
    held-out term at the Poisson mean ε: what the measure gives a model that knows nothing), and
    ``info["share_below_eps"]``, the share of held-out terms with ``θᵀβ_n < ε`` (module docstring)."""
    theta = model.transform(X1)
    X2 = check_counts(X2)
    n = X2.nnz
    if n == 0:
        raise RLSIError("the held-out halves are empty; give test documents with at least two tokens")
    B = np.asarray(model.components_, dtype=np.float64)
    rows = np.repeat(np.arange(X2.shape[0]), np.diff(X2.indptr))
    code = np.einsum("pk,kp->p", theta[rows], B[:, X2.indices])
    w = X2.data
    eps = float(model.eps)

    def perplexity(mean):
        return float(np.exp(-np.sum(w * np.log(mean) - mean - gammaln(w + 1.0)) / n))

    value = perplexity(code + eps)
    if not details:
        return value
    return value, {"floor": perplexity(np.full_like(w, eps)), "share_below_eps": float(np.mean(code < eps))}


def lda_perplexity(lda, X1, X2):
    """Eq. (18) for a fitted ``sklearn.decomposition.LatentDirichletAllocation``: exp(−Σ w₂ log p / N₂)."""
    theta = lda.transform(X1)
    X2 = check_counts(X2)
    phi = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    rows = np.repeat(np.arange(X2.shape[0]), np.diff(X2.indptr))
    p = np.einsum("pk,kp->p", theta[rows], phi[:, X2.indices])
    total = X2.data.sum()
    if total == 0:
        raise RLSIError("the held-out halves are empty; give test documents with at least two tokens")
    return float(np.exp(-np.sum(X2.data * np.log(p)) / total))


def lda_word_code_sparsity(lda, X, threshold=1e-3):
    """Fraction of LDA word codes (per-occurrence topic responsibilities ``∝ θ_k φ_kn``) below
    ``threshold``: LDA's responsibilities are never exactly zero, so the comparison with STC's exact
    zeros needs a threshold (reported with the number)."""
    theta = lda.transform(X)
    X = check_counts(X)
    phi = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    R = theta[rows] * phi[:, X.indices].T
    R /= np.maximum(R.sum(axis=1, keepdims=True), 1e-300)
    return float(np.mean(R < threshold))
