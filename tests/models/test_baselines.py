"""Baseline topic models: common interface, folding-in, PLSI = KL-NMF updates, persistence."""

import numpy as np
import pytest
import scipy.sparse as sp

import rlsi.io
from rlsi.errors import RLSIError
from rlsi.models.baselines import BASELINES, LDA, LSI, NMF, PLSI

from conftest import planted_corpus


@pytest.fixture(scope="module")
def counts():
    X = planted_corpus(n_docs=60, n_terms=40, n_topics=3, words_per_topic=10, seed=1)
    C = X.copy()
    C.data = np.ceil(C.data * 3)  # small integer counts
    return C


def _fit(cls, X, **kw):
    kw.setdefault("random_state", 0)
    if cls is LDA:
        kw.setdefault("max_iter", 20)
    return cls(3, **kw).fit(X)


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_common_interface(name, counts):
    cls = BASELINES[name]
    m = _fit(cls, counts)
    assert m.components_.shape == (3, counts.shape[1])
    W = m.transform(counts[:7])
    assert W.shape == (7, 3) and np.all(np.isfinite(W))
    empty = m.transform(sp.csr_matrix((2, counts.shape[1])))
    np.testing.assert_array_equal(empty, 0)  # no known term -> zero topic vector
    assert m.input_kind in ("tfidf", "counts")
    with pytest.raises(RLSIError, match="features"):
        m.transform(counts[:, :10])


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_persistence_round_trip(tmp_path, name, counts):
    m = _fit(BASELINES[name], counts)
    rlsi.io.save(tmp_path / name, model=m)
    back = rlsi.io.load(tmp_path / name)["model"]
    assert type(back) is type(m)
    np.testing.assert_allclose(back.components_, m.components_)
    np.testing.assert_allclose(back.transform(counts[:5]), m.transform(counts[:5]), atol=1e-8)


def test_lsi_is_truncated_svd_projection(counts):
    X = counts.toarray()
    m = LSI(3).fit(counts)
    _, s, Vt = np.linalg.svd(X, full_matrices=False)
    np.testing.assert_allclose(m.singular_values_, s[:3], rtol=1e-8)
    np.testing.assert_allclose(np.abs(m.components_ @ Vt[:3].T), np.eye(3), atol=1e-8)
    np.testing.assert_allclose(m.transform(counts), X @ m.components_.T, atol=1e-10)


def test_plsi_em_step_is_kl_nmf_multiplicative_update(counts):
    """One EM iteration == one Lee-Seung KL-NMF update of W and H (dense reference) followed by the
    rescaling to stochastic rows (Ding et al. 2008): the NMF denominators cancel in the rescaling."""
    N, M = counts.shape
    rng = np.random.default_rng(0)  # PLSI(random_state=0) draws phi then theta from this generator
    phi0 = rng.random((3, M)) + 0.1
    phi0 /= phi0.sum(1, keepdims=True)
    theta0 = rng.random((N, 3)) + 0.1
    theta0 /= theta0.sum(1, keepdims=True)
    V = counts.toarray()
    ratio = V / (theta0 @ phi0)
    H = phi0 * (theta0.T @ ratio) / theta0.sum(0)[:, None]   # KL-NMF update of H
    W = theta0 * (ratio @ phi0.T) / phi0.sum(1)[None, :]      # KL-NMF update of W
    m = PLSI(3, max_iter=1, random_state=0).fit(counts)
    np.testing.assert_allclose(m.components_, H / H.sum(1, keepdims=True), rtol=1e-10)
    np.testing.assert_allclose(m.doc_topic_, W / W.sum(1, keepdims=True), rtol=1e-10)


def test_plsi_likelihood_increases_and_folding_in_recovers_training_mixtures(counts):
    m = PLSI(3, max_iter=200, tol=1e-9, fold_max_iter=500, fold_tol=1e-10, random_state=0).fit(counts)
    assert np.all(np.diff(m.loglik_) >= -1e-8 * np.abs(m.loglik_[1:]))
    np.testing.assert_allclose(m.components_.sum(1), 1.0)
    folded = m.transform(counts)
    np.testing.assert_allclose(folded.sum(1), 1.0)
    # EM over theta alone is concave: folding the training documents lands close to their fitted mixtures
    assert np.abs(folded - m.doc_topic_).max() < 0.05


def test_lda_and_nmf_folding_shapes_and_signs(counts):
    lda = _fit(LDA, counts)
    W = lda.transform(counts[:4])
    np.testing.assert_allclose(W.sum(1), 1.0)
    np.testing.assert_allclose(lda.topic_word_.sum(1), 1.0)
    nmf = _fit(NMF, counts)
    assert np.all(nmf.transform(counts[:4]) >= 0)


def test_bad_input(counts):
    with pytest.raises(RLSIError, match="n_components"):
        LSI(500).fit(counts)
    neg = counts.copy()
    neg.data[0] = -1.0
    with pytest.raises(RLSIError, match="Negative values"):
        PLSI(2).fit(neg)
    with pytest.raises(RLSIError, match="Negative values"):
        NMF(2).fit(neg)
    with pytest.raises(RLSIError, match="algorithm"):
        LSI(2, algorithm="magic").fit(counts)
