"""Held-out perplexity by document completion (WWW 2013 §5.1.1, Eq. 18 for LDA, Eq. 19 for STC) and LDA's
word-code sparsity, against plain-Python sums over a tiny corpus and against values worked by hand.

The models' own inference (``transform``) is theirs; what is checked here is the measure built on it: which
half infers the code, which half is scored, what is summed and what it is divided by."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import LatentDirichletAllocation

from rlsi.models.stc import OnlineSTC, SparseTopicalCoding
from rlsi.models.stc.perplexity import lda_perplexity, lda_word_code_sparsity, split_counts, stc_perplexity

# six documents over five terms: two themes (terms 0-1, terms 3-4) and a shared term 2
COUNTS = np.array([[4, 3, 1, 0, 0],
                   [3, 5, 0, 1, 0],
                   [0, 1, 2, 4, 3],
                   [0, 0, 1, 3, 5],
                   [2, 2, 2, 2, 2],
                   [5, 0, 0, 0, 1]], dtype=np.float64)


class Fixed:
    """A fitted model stand-in: ``transform`` returns the given codes, whatever the documents."""

    def __init__(self, theta, components, eps=0.0):
        self.theta, self.components_, self.eps = np.asarray(theta, float), np.asarray(components, float), eps

    def transform(self, X):
        assert X.shape[0] == len(self.theta)
        return self.theta


def _halves():
    X = sp.csr_matrix(COUNTS)
    X1, X2 = split_counts(X, seed=3)
    assert X2.nnz > 5 and X1.nnz > 5  # both halves hold tokens of most documents
    return X1, X2


def lda_reference(theta, components, X2):
    """Eq. (18): exp(− Σ_i Σ_n w₂[i,n] log Σ_k θ[i,k] φ[k,n] / Σ_i Σ_n w₂[i,n]), φ the normalised topics."""
    W2 = X2.toarray()
    phi = [[c / sum(row) for c in row] for row in components]
    loglik = tokens = 0.0
    for i in range(W2.shape[0]):
        for n in range(W2.shape[1]):
            if W2[i, n]:
                loglik += W2[i, n] * math.log(sum(theta[i][k] * phi[k][n] for k in range(len(phi))))
                tokens += W2[i, n]
    return math.exp(-loglik / tokens)


def stc_reference(theta, components, X2, eps):
    """Eq. (19): exp(− Σ log Poisson(w₂[i,n]; Σ_k θ[i,k] β[k,n] + ε) / |I₂|), over the (i, n) with w₂ > 0."""
    W2 = X2.toarray()
    loglik, terms = 0.0, 0
    for i in range(W2.shape[0]):
        for n in range(W2.shape[1]):
            w = W2[i, n]
            if w:
                mean = sum(theta[i][k] * components[k][n] for k in range(len(components))) + eps
                loglik += w * math.log(mean) - mean - math.lgamma(w + 1)
                terms += 1
    return math.exp(-loglik / terms)


def test_lda_perplexity_by_hand():
    """θ = (½, ½), φ₁ = (½, ½, 0), φ₂ = (½, 0, ½): p = (½, ¼, ¼); held-out counts (2, 1, 0):
    log p(w₂) = 2 log ½ + log ¼ = −4 log 2 over 3 tokens, perplexity 2^(4/3)."""
    model = Fixed([[0.5, 0.5]], [[1.0, 1.0, 0.0], [3.0, 0.0, 3.0]])  # unnormalised rows: φ is normalised
    X2 = sp.csr_matrix([[2.0, 1.0, 0.0]])
    assert lda_perplexity(model, X2, X2) == pytest.approx(2 ** (4 / 3), rel=1e-14)


def test_lda_perplexity_of_uniform_topics_is_the_vocabulary_size():
    """Uniform topics give every held-out token probability 1/M, whatever θ: perplexity M."""
    X1, X2 = _halves()
    theta = np.random.default_rng(0).dirichlet([1.0, 1.0], size=6)
    assert lda_perplexity(Fixed(theta, np.ones((2, 5))), X1, X2) == pytest.approx(5.0, rel=1e-14)


def test_lda_perplexity_of_a_fitted_lda_is_the_plain_sum():
    X1, X2 = _halves()
    lda = LatentDirichletAllocation(2, max_iter=20, random_state=0).fit(sp.csr_matrix(COUNTS))
    theta = lda.transform(X1)  # the first half infers the codes
    expected = lda_reference(theta.tolist(), lda.components_.tolist(), X2)
    assert lda_perplexity(lda, X1, X2) == pytest.approx(expected, rel=1e-12)
    # scored on the half that inferred the codes it is lower: the split is what makes it held out
    assert lda_perplexity(lda, X1, X1) < expected


def test_lda_word_code_sparsity_by_hand():
    """θ = (½, ½), φ₁ = (½, ½, 0), φ₂ = (½, 0, ½), a document holding terms 0, 1 and 2: responsibilities
    (½, ½), (1, 0), (0, 1) — two of the six below the threshold."""
    model = Fixed([[0.5, 0.5]], [[1.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    X = sp.csr_matrix([[3.0, 1.0, 2.0]])
    assert lda_word_code_sparsity(model, X) == pytest.approx(2 / 6, rel=1e-14)
    assert lda_word_code_sparsity(model, X, threshold=0.6) == pytest.approx(4 / 6, rel=1e-14)


def test_lda_word_code_sparsity_of_a_fitted_lda_is_the_plain_count():
    X = sp.csr_matrix(COUNTS)
    lda = LatentDirichletAllocation(3, max_iter=20, random_state=0).fit(X)
    theta, phi = lda.transform(X), lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    below = total = 0
    for i, n in zip(*np.nonzero(COUNTS)):  # one word code per (document, term) the document holds
        r = [theta[i, k] * phi[k, n] for k in range(3)]
        below += sum(x / sum(r) < 0.05 for x in r)
        total += 3
    assert lda_word_code_sparsity(lda, X, threshold=0.05) == pytest.approx(below / total, rel=1e-14)
    assert 0 < below < total  # the threshold splits the codes: the count is not trivially 0 or 1


def test_stc_perplexity_by_hand():
    """θ = (1, 0), β₁ = (2, 1), ε = 0, held-out counts (1, 2): log Poisson(1; 2) = log 2 − 2 and
    log Poisson(2; 1) = −1 − log 2, sum −3 over |I₂| = 2 distinct terms (not 3 tokens): perplexity e^1.5."""
    model = Fixed([[1.0, 0.0]], [[2.0, 1.0], [5.0, 5.0]], eps=0.0)
    X2 = sp.csr_matrix([[1.0, 2.0]])
    assert stc_perplexity(model, X2, X2) == pytest.approx(math.exp(1.5), rel=1e-14)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # few iterations on purpose
@pytest.mark.parametrize("make", [lambda: SparseTopicalCoding(2, max_iter=5, random_state=0),
                                  lambda: OnlineSTC(2, batch_size=3, n_epochs=2, random_state=0)],
                         ids=["batch", "online"])
def test_stc_perplexity_of_a_fitted_model_is_the_plain_sum(make):
    X = sp.csr_matrix(COUNTS)
    model = make().fit(X)
    X1, X2 = _halves()
    theta = model.transform(X1)
    expected = stc_reference(theta.tolist(), model.components_.tolist(), X2, model.eps)
    value, info = stc_perplexity(model, X1, X2, details=True)
    assert value == pytest.approx(expected, rel=1e-12)
    zero = np.zeros_like(theta).tolist()  # the floor: every held-out term at the Poisson mean ε
    assert info["floor"] == pytest.approx(stc_reference(zero, model.components_.tolist(), X2, model.eps), rel=1e-12)
    codes = theta @ model.components_
    held = X2.toarray() > 0
    assert info["share_below_eps"] == pytest.approx(np.mean(codes[held] < model.eps), abs=1e-15)
    assert value < info["floor"]
