"""BatchRLSI on the device code path (numpy backend) against the host path: same fit to rounding."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi import BatchRLSI
from rlsi.datasets.synthetic import make_corpus
from rlsi.gpu.backend import numpy_backend
from rlsi.gpu.batch import DeviceRLSIProblem, fold_in
from rlsi.io import load, save
from rlsi.models.solver import initial_doc_vectors

# pure cyclic coordinate descent on the host too: the host kernel adds support solves from 10 sweeps up
EXACT = dict(inner_max_iter=8, max_iter=5, tol=0.0, random_state=0)


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(300, 1200, 50, n_topics=8, topic_vocab=150, seed=3).X


def fit_both(X, **kw):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for device in ("cpu", "numpy:float64"):
            m = BatchRLSI(6, device=device, **kw)
            W = m.fit_transform(X)
            out.append((m, W))
    return out


def assert_same_fit(a, b, Xq, rtol=1e-12):
    (ma, Wa), (mb, Wb) = a, b
    np.testing.assert_allclose(mb.objective_, ma.objective_, rtol=rtol)
    assert sp.isspmatrix_csr(mb.components_) and mb.components_.dtype == ma.components_.dtype
    assert abs(ma.components_ - mb.components_).max() <= 1e-10 * abs(ma.components_).max()
    np.testing.assert_allclose(Wb, Wa, rtol=0, atol=1e-10 * np.abs(Wa).max())
    np.testing.assert_allclose(mb.transform(Xq), ma.transform(Xq), rtol=0, atol=1e-10)
    assert mb.n_iter_ == ma.n_iter_ and mb.lambda1_ == pytest.approx(ma.lambda1_, rel=1e-12)
    assert mb.topic_representation_ == ma.topic_representation_


@pytest.mark.parametrize("lambda1", [0.5, 0.02])  # sparse topics; dense topics (the representation switches)
@pytest.mark.parametrize("topic_sweeps", [3, None])
def test_device_path_equals_host_fit(corpus, lambda1, topic_sweeps):
    # λ₂ = 1 (the paper's): λ₁ = 0.5 gives sparse topics there, 0.02 dense ones
    a, b = fit_both(corpus, lambda1=lambda1, lambda2=1.0, topic_sweeps=topic_sweeps, **EXACT)
    assert_same_fit(a, b, corpus[:40])
    if lambda1 == 0.5:  # sparse topics: the same rows screened (dense ones: the host path stops screening)
        assert b[0].n_rows_screened_ == a[0].n_rows_screened_ > 0
    assert b[0].device_plan_.n_components == 6


@pytest.mark.parametrize("pens", [("l2", "l2"), ("nonneg_l1", "l2"), ("l1", "l1")])
def test_other_penalties(corpus, pens):
    a, b = fit_both(corpus, lambda1=0.1, topic_penalty=pens[0], doc_penalty=pens[1], **EXACT)
    assert_same_fit(a, b, corpus[:40], rtol=1e-10)


@pytest.mark.parametrize("lambda1,representation", [(0.5, "dense"), (0.02, "sparse")])
def test_topic_representation_and_screening_reach_the_device(corpus, lambda1, representation):
    """The device problem takes the estimator's topic_representation (here against what "auto" would choose)
    and the tuning's screening, as the host problem does."""
    a, b = fit_both(corpus, lambda1=lambda1, topic_representation=representation, **EXACT)
    assert_same_fit(a, b, corpus[:10])
    assert b[0].topic_representation_ == representation
    m = BatchRLSI(6, lambda1=0.5, device="numpy:float64", **EXACT).with_tuning(screen=False).fit(corpus)
    assert m.n_rows_screened_ == 0 and b[0].device_plan_.n_components == 6


def test_default_settings_within_target(corpus):
    """With the host kernel's support solves (uncapped first U-step) the iterates differ, the fit does not."""
    (ma, _), (mb, _) = fit_both(corpus, lambda1=0.05, max_iter=5, tol=0.0, random_state=0)
    np.testing.assert_allclose(mb.objective_, ma.objective_, rtol=1e-4)


def test_init_random_and_v_init(corpus):
    a, b = fit_both(corpus, lambda1=0.05, init="random", **EXACT)
    assert_same_fit(a, b, corpus[:10])
    V0 = np.random.default_rng(0).standard_normal((corpus.shape[0], 6))
    ma = BatchRLSI(6, lambda1=0.05, **EXACT).fit(corpus, V_init=V0)
    mb = BatchRLSI(6, lambda1=0.05, device="numpy:float64", **EXACT).fit(corpus, V_init=V0)
    np.testing.assert_allclose(mb.objective_, ma.objective_, rtol=1e-12)


def problem(X, W, **kw):
    return DeviceRLSIProblem(numpy_backend(np.float64), X, W, lambda1=0.03 * X.shape[0] / 1000 * 10,
                             lambda2=1.0, inner_max_iter=8, topic_sweeps=3, **kw)


def run(p, n=4):
    objs = []
    for _ in range(n):
        p.u_step()
        p.v_step()
        objs.append(p.objective())
    return np.array(objs), p.components(np.float64)


@pytest.mark.parametrize("opts", [dict(screen=False), dict(topics="dense"), dict(topics="sparse", phi="sparse"),
                                  dict(topics="sparse", phi="dense"), dict(term_rows=97, doc_rows=31),
                                  dict(stream=True, term_rows=200, doc_rows=64), dict(block=1), dict(block=5)])
def test_options_give_the_same_fit(corpus, opts):
    """Screening, representations, Φ products, block sizes and streaming change the work, not the result."""
    W0 = initial_doc_vectors(corpus, BatchRLSI(6, random_state=0))
    ref, Uref = run(problem(corpus, W0.copy()))
    got, U = run(problem(corpus, W0.copy(), **opts))
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    assert abs(U - Uref).max() <= 1e-10 * abs(Uref).max()


def test_objective_is_eq1(corpus):
    """The objective from the statistics equals Eq. (1) evaluated directly on the dense matrices."""
    W0 = initial_doc_vectors(corpus, BatchRLSI(6, random_state=0))
    p = problem(corpus, W0)
    run(p, 2)
    U = p.components(np.float64).T.tocsr()
    W = p.host_vectors(np.float64)
    D = corpus.T.toarray()
    direct = np.square(D - U.toarray() @ W.T).sum() + p.lambda1 * abs(U).sum() + np.square(W).sum()
    assert p.objective() == pytest.approx(direct, rel=1e-10)


def test_dead_topics_match_the_host(corpus):
    """λ₁ large enough to empty most topics: s_kk = 0 on both paths, no division, the same fit."""
    a, b = fit_both(corpus, lambda1=3.0, lambda2=1.0, **EXACT)
    assert 1 <= len(a[0].dead_topics()) < 6
    np.testing.assert_array_equal(b[0].dead_topics(), a[0].dead_topics())
    assert_same_fit(a, b, corpus[:10])


def test_float32_device(corpus):
    X32 = corpus.astype(np.float32)
    ma = BatchRLSI(6, lambda1=0.1, **EXACT).fit(X32)
    mb = BatchRLSI(6, lambda1=0.1, device="numpy", **EXACT).fit(X32)
    assert mb.components_.dtype == np.float32 and mb.transform(X32[:5]).dtype == np.float32
    np.testing.assert_allclose(mb.objective_, ma.objective_, rtol=1e-5)


def test_save_load_keeps_the_device(corpus, tmp_path):
    m = BatchRLSI(6, lambda1=0.1, device="numpy:float64", **EXACT).fit(corpus)
    save(tmp_path / "m", model=m)
    back = load(tmp_path / "m")["model"]
    assert back.device == "numpy:float64" and sp.isspmatrix_csr(back.components_)
    np.testing.assert_allclose(back.transform(corpus[:20]), m.transform(corpus[:20]), rtol=1e-12)
    host = BatchRLSI(**{**back.get_params(), "device": "cpu"})
    host._set_components(back.components_)
    host.n_features_in_ = back.n_features_in_
    np.testing.assert_allclose(host.transform(corpus[:20]), m.transform(corpus[:20]), atol=1e-12)


def test_fold_in_blocks(corpus):
    m = BatchRLSI(6, lambda1=0.1, **EXACT).fit(corpus)
    W = fold_in(numpy_backend(np.float64), corpus, m.components_, lam=m.lambda2, doc_rows=17)
    np.testing.assert_allclose(W, m.transform(corpus), atol=1e-12)


def test_target_terms_per_topic(corpus):
    """The λ₁ search of the host path with device problems: the same λ₁ and the same fit."""
    a, b = fit_both(corpus, target_terms_per_topic=25, **EXACT)
    assert b[0].lambda1_ == pytest.approx(a[0].lambda1_, rel=1e-9)
    assert_same_fit(a, b, corpus[:20], rtol=1e-10)
    assert b[0].n_rows_screened_ == a[0].n_rows_screened_


@pytest.mark.parametrize("init", ["docs", "random"])
def test_initialisation_on_the_device_equals_the_host(corpus, init):
    """The initialisation used for a corpus already on the card: the same draws, the same W₀."""
    from rlsi.gpu.placement import initial_doc_vectors as device_vectors
    est = BatchRLSI(6, init=init, random_state=7)
    W = device_vectors(numpy_backend(np.float64), est, corpus)
    np.testing.assert_allclose(W, initial_doc_vectors(corpus, est), rtol=1e-12, atol=1e-14)


def test_the_problem_does_not_write_into_the_given_w(corpus):
    W0 = initial_doc_vectors(corpus, BatchRLSI(6, random_state=0))
    keep = W0.copy()
    run(problem(corpus, W0), 2)
    np.testing.assert_array_equal(W0, keep)
