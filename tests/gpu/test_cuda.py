"""On a CUDA card only (skipped elsewhere): the CuPy path against the host path. The device script runs this file
as its card-tests stage under a time cap, so the tests come in the order of what a first run must show."""

import numpy as np
import pytest

from rlsi import BatchRLSI, OnlineRLSI
from rlsi.datasets.synthetic import make_corpus
from rlsi.gpu.backend import cuda_available
from rlsi.models.solver import initial_doc_vectors

pytestmark = pytest.mark.skipif(not cuda_available(),
                                reason='needs CuPy and a CUDA card (pip install "rlsi[gpu]")')


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(2000, 5000, 80, n_topics=20, topic_vocab=400, seed=5).X


@pytest.mark.parametrize("device,rtol", [("cuda:float64", 1e-10), ("cuda", 1e-4)])
def test_batch_on_the_card(corpus, device, rtol):
    kw = dict(lambda1=0.05, inner_max_iter=8, max_iter=5, tol=0.0, random_state=0)
    a = BatchRLSI(20, **kw).fit(corpus)
    b = BatchRLSI(20, device=device, **kw).fit(corpus)
    np.testing.assert_allclose(b.objective_, a.objective_, rtol=rtol)
    np.testing.assert_allclose(b.transform(corpus[:100]), a.transform(corpus[:100]), atol=100 * rtol)


def problem_objectives(corpus, **opts):
    """Three iterations of the device problem on the card with the ways of working ``opts``."""
    from rlsi.gpu.backend import resolve
    from rlsi.gpu.batch import DeviceRLSIProblem
    W0 = initial_doc_vectors(corpus, BatchRLSI(20, random_state=0))
    p = DeviceRLSIProblem(resolve("cuda:float64"), corpus, W0, lambda1=0.05 * corpus.shape[0] / 1000,
                          lambda2=1.0, inner_max_iter=8, topic_sweeps=3, **opts)
    objs = []
    for _ in range(3):
        p.u_step()
        p.v_step()
        objs.append(p.objective())
    return np.array(objs)


def test_fused_and_array_kernels_agree(corpus):
    """The fused kernel is compiled with --fmad=false: the same bits as the array operations, in float64."""
    np.testing.assert_allclose(problem_objectives(corpus, kernel="fused"), problem_objectives(corpus, kernel="xp"),
                               rtol=1e-12)


def test_topics_are_int32_csr_on_the_card(corpus):
    from rlsi.gpu.backend import resolve
    from rlsi.gpu.batch import DeviceRLSIProblem
    W0 = initial_doc_vectors(corpus, BatchRLSI(20, random_state=0))
    p = DeviceRLSIProblem(resolve("cuda"), corpus, W0, lambda1=0.05 * corpus.shape[0] / 1000, lambda2=1.0,
                          inner_max_iter=8, topic_sweeps=3, topics="sparse")
    p.u_step()
    p.v_step()
    assert p.U.indices.dtype == np.int32 and p.U.indptr.dtype == np.int32 and p.Wd.flags.f_contiguous
    assert np.isfinite(p.objective())


@pytest.mark.parametrize("opts", [dict(stream=True, term_rows=1000, doc_rows=300), dict(phi_cols=3),
                                  dict(screen=False), dict(topics="dense"), dict(phi="dense"), dict(phi="sparse")])
def test_options_on_the_card(corpus, opts):
    np.testing.assert_allclose(problem_objectives(corpus, **opts), problem_objectives(corpus), rtol=1e-10)


def test_online_on_the_card(corpus):
    kw = dict(lambda1=0.05, rho=1.0, n_inner=10, batch_size=250, inner_max_iter=8, random_state=0)
    a = OnlineRLSI(20, **kw).fit(corpus)
    b = OnlineRLSI(20, device="cuda:float64", **kw).fit(corpus)
    assert abs(a.components_ - b.components_).max() <= 1e-9 * abs(a.components_).max()


def test_corpus_already_on_the_card(corpus):
    import cupyx.scipy.sparse as cusparse
    kw = dict(lambda1=0.05, inner_max_iter=8, max_iter=3, tol=0.0, random_state=0)
    a = BatchRLSI(20, device="cuda:float64", **kw).fit(corpus)
    b = BatchRLSI(20, device="cuda:float64", **kw)
    W = b.fit_transform(cusparse.csr_matrix(corpus))
    assert W.shape == (corpus.shape[0], 20) and hasattr(W, "get")
    np.testing.assert_allclose(b.objective_, a.objective_, rtol=1e-10)


def test_estimator_settings_on_the_card(corpus):
    kw = dict(lambda1=0.05, inner_max_iter=8, max_iter=3, tol=0.0, random_state=0, device="cuda:float64")
    a = BatchRLSI(20, **kw).fit(corpus)
    b = BatchRLSI(20, topic_representation="dense", **kw).with_tuning(screen=False).fit(corpus)
    assert b.topic_representation_ == "dense" and b.n_rows_screened_ == 0
    np.testing.assert_allclose(b.objective_, a.objective_, rtol=1e-10)


def test_target_terms_and_reseed_on_the_card(corpus):
    kw = dict(inner_max_iter=8, max_iter=3, tol=0.0, random_state=0, target_terms_per_topic=60)
    a = BatchRLSI(20, **kw).fit(corpus)
    b = BatchRLSI(20, device="cuda:float64", **kw).fit(corpus)
    assert b.lambda1_ == pytest.approx(a.lambda1_, rel=1e-8)
    np.testing.assert_allclose(b.objective_, a.objective_, rtol=1e-9)
    okw = dict(lambda1=3.0, rho=1.0, n_inner=2, batch_size=250, reseed_dead=True, inner_max_iter=8, random_state=0)
    a = OnlineRLSI(20, **okw).fit(corpus)
    b = OnlineRLSI(20, device="cuda:float64", **okw).fit(corpus)
    assert b.n_reseeded_ == a.n_reseeded_


def test_online_stream_on_the_card(corpus):
    import cupyx.scipy.sparse as cusparse
    kw = dict(lambda1=0.05, rho=1.0, n_inner=3, batch_size=500, inner_max_iter=8, random_state=0)
    a = OnlineRLSI(20, device="cuda:float64", **kw).fit(corpus)
    b = OnlineRLSI(20, device="cuda:float64", **kw).fit(cusparse.csr_matrix(corpus))
    assert abs(a.components_ - b.components_).max() == 0.0
