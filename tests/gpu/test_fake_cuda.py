"""The CUDA-only branches of rlsi.gpu (streams and events, prefetch threads, free-memory budget, the fused
kernel's compilation and launch, int32 CSR topics, no SpGEMM) on the stand-in for CuPy of conftest.py: numpy
behind the CuPy names and signatures rlsi.gpu uses, CuPy's cuda namespace and memory pool, and the kernel's
source compiled for the host. The results must equal the numpy backend's."""

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi import BatchRLSI, OnlineRLSI
from rlsi.datasets.synthetic import make_corpus
from rlsi.errors import RLSIError
from rlsi.gpu import memory
from rlsi.gpu.backend import numpy_backend
from rlsi.gpu.batch import DeviceRLSIProblem
from rlsi.gpu.cd import FUSED_OPTIONS
from rlsi.gpu.placement import DevicePlacement
from rlsi.models.solver import initial_doc_vectors


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(300, 1200, 50, n_topics=8, topic_vocab=150, seed=3).X


def iterate(p, n=4):
    out = []
    for _ in range(n):
        p.u_step()
        p.v_step()
        out.append(p.objective())
    return np.array(out), p.components(np.float64)


KW = dict(lambda1=0.3, lambda2=1.0, inner_max_iter=8, topic_sweeps=3)


@pytest.mark.parametrize("opts", [{}, dict(stream=True, term_rows=200, doc_rows=64), dict(topics="dense"),
                                  dict(phi_cols=4, term_rows=150), dict(phi="dense")])
def test_batch_problem_on_the_stand_in(fake_backend, corpus, opts):
    be = fake_backend()
    assert be.is_cuda and "stand-in card" in be.describe() and not be.holds(corpus)
    W0 = initial_doc_vectors(corpus, BatchRLSI(6, random_state=0))
    ref, Uref = iterate(DeviceRLSIProblem(numpy_backend(np.float64), corpus, W0, **KW))
    p = DeviceRLSIProblem(be, corpus, W0, **KW, **opts)
    got, U = iterate(p)
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    assert abs(U - Uref).max() <= 1e-10 * abs(Uref).max()
    assert ("cd_block_double", FUSED_OPTIONS) in be.xp.kernels and "--fmad=false" in FUSED_OPTIONS
    assert p.Wd.flags.f_contiguous  # the SpMM operand cuSPARSE reads without a copy
    if "topics" not in opts:  # CSR topics on the card: int32 indices and row pointers
        assert p.U.indices.dtype == np.int32 and p.U.indptr.dtype == np.int32


def test_streamed_blocks_use_one_copy_stream_with_events(fake_backend, corpus):
    """A streamed fit makes one copy stream per matrix for the whole fit (not one per block); every block is
    waited for by the caller's stream, and every reuse waits for the caller's release of an earlier block."""
    be = fake_backend()
    W0 = initial_doc_vectors(corpus, BatchRLSI(6, random_state=0))
    p = DeviceRLSIProblem(be, corpus, W0, stream=True, term_rows=200, doc_rows=64, **KW)
    iterate(p, 3)
    assert len(be.xp.streams) == 2 and p.D.prefetch.streams_made == p.X.prefetch.streams_made == 1
    n_d, n_x = len(p.D), len(p.X)
    copy_d, copy_x = (s for s in be.xp.streams)
    assert copy_d.recorded == 3 * n_d and copy_x.recorded == 3 * n_x  # one ready event per block moved
    # block i + 1 is made after the caller released block i − 1 (blocks 0 and 1 wait for nothing)
    assert len(copy_d.waited) == 3 * (n_d - 2) and len(copy_x.waited) == 3 * (n_x - 2)
    assert all(e.stream not in be.xp.streams for e in copy_d.waited + copy_x.waited)  # recorded by the caller


def test_free_memory_decides_streaming_and_the_error(fake_backend, corpus):
    W0 = np.ones((corpus.shape[0], 6))
    kw = dict(lambda1=0.3, lambda2=1.0, term_rows=100, doc_rows=30)
    need = DeviceRLSIProblem(fake_backend(), corpus, W0, **kw).plan.total
    streamed = DeviceRLSIProblem(fake_backend(), corpus, W0, stream=True, **kw).plan.total
    free = int((need + streamed) / 2 / memory.USABLE)  # all on the card would not fit; streamed it does
    p = DeviceRLSIProblem(fake_backend(free=free), corpus, W0, **kw)
    assert p.plan.streamed and p.D.streamed and p.X.streamed and p.plan.total < need
    with pytest.raises(RLSIError, match=r"needs about .* MB .*; the card has 0\.0 MB usable"):
        DeviceRLSIProblem(fake_backend(free=1000), corpus, W0, **kw)


def test_free_bytes_within_the_pool_limit(fake_backend):
    be = fake_backend(free=10 ** 9)
    assert be.free_bytes() == 10 ** 9
    be.xp.get_default_memory_pool().set_limit(size=4 * 10 ** 8)
    assert be.free_bytes() == 4 * 10 ** 8


def test_topic_budget_refuses_before_int32_wraps(fake_backend, corpus):
    """U is built as int32 CSR with a budget of non-zero weights: a budget passed as an argument refuses with
    one line; the default budget is the int32 limit (or less, what the memory budget leaves)."""
    W0 = initial_doc_vectors(corpus, BatchRLSI(6, random_state=0))
    be = fake_backend()
    plain = DeviceRLSIProblem(be, corpus, W0, **KW)
    assert plain.max_topic_nnz == 2 ** 31 - 1
    p = DeviceRLSIProblem(be, corpus, W0, **KW, max_topic_nnz=40, term_rows=100)
    with pytest.raises(RLSIError) as err:
        p.u_step()  # 50 non-zero weights
    msg = str(err.value)
    assert "\n" not in msg and "more than 40 non-zero weights" in msg and "lambda1" in msg
    tight = DeviceRLSIProblem(be, corpus, W0, **KW, budget=plain.plan.total)
    assert 0 < tight.max_topic_nnz < 2 ** 31 - 1


def test_sparse_products_only_where_asked(fake_backend, corpus):
    """The fake's CSR refuses sparse x sparse products (cuSPARSE SpGEMM, in no plan): the default V-step
    ran above without one; phi="sparse" asks for it, with the same fit."""
    W0 = initial_doc_vectors(corpus, BatchRLSI(6, random_state=0))
    with pytest.raises(AssertionError, match="SpGEMM"):
        iterate(DeviceRLSIProblem(fake_backend(), corpus, W0, phi="sparse", **KW), 1)
    got, _ = iterate(DeviceRLSIProblem(fake_backend(spgemm=True), corpus, W0, phi="sparse", **KW), 2)
    ref, _ = iterate(DeviceRLSIProblem(numpy_backend(np.float64), corpus, W0, **KW), 2)
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_the_stand_in_refuses_what_cupy_has_not(fake_backend):
    xp = fake_backend().xp
    with pytest.raises(AttributeError, match="not among the CuPy names checked"):
        xp.linalg  # noqa: B018
    with pytest.raises(TypeError, match="cupy.asarray"):
        xp.asarray(np.ones(3), copy=False)  # CuPy 14 takes copy=, 13 does not
    with pytest.raises(NotImplementedError):
        xp.searchsorted(np.arange(3), 1)
    with pytest.raises(AssertionError, match="int32"):
        fake_backend().sparse.csr_matrix((np.ones(2), np.arange(2), np.array([0, 2])), shape=(1, 2))


def test_online_prefetch_thread_on_the_stand_in(fake_backend, corpus):
    """Mini-batches made by the prefetch thread on one copy stream: the stream of the numpy backend, exactly."""
    kw = dict(lambda1=0.05, rho=1.0, n_inner=3, batch_size=70, inner_max_iter=8, random_state=0)
    ref = OnlineRLSI(6, device="numpy:float64", **kw).fit(corpus)
    be = fake_backend()
    est = OnlineRLSI(6, placement=DevicePlacement(be, term_rows=300), **kw).fit(corpus)
    n_batches = -(-corpus.shape[0] // 70)
    assert abs(est.components_ - ref.components_).max() <= 1e-10 * abs(ref.components_).max()
    np.testing.assert_allclose(est.stats_.R, ref.stats_.R, atol=1e-12)
    assert est.n_batches_ == ref.n_batches_ == n_batches
    assert len(be.xp.streams) == 1 and be.xp.streams[0].recorded == n_batches


def on_card(be, X):
    """X as a matrix on the stand-in card."""
    return be.sparse.csr_matrix(sp.csr_matrix(X, copy=True))


def test_corpus_on_the_card_paths(fake_backend, corpus):
    """Blocks as views, row norms, the initialisation and the λ₁ search's bisection for a corpus on the card."""
    from rlsi.gpu.corpus import row_norms, sq_norm
    from rlsi.gpu.placement import DeviceCorpus
    from rlsi.gpu.placement import initial_doc_vectors as device_vectors
    from rlsi.models.local import LocalCorpus
    from rlsi.models.screening import csr_row_norms
    from rlsi.models.spec import RLSISpec
    from rlsi.models.start import search_lambda1

    be = fake_backend()
    Xc = on_card(be, corpus)
    D = on_card(be, corpus.T.tocsr())
    np.testing.assert_allclose(row_norms(be, D, rows=70), csr_row_norms(corpus.T.tocsr()), rtol=1e-14)
    assert sq_norm(be, Xc, chunk=500) == pytest.approx(float(np.square(corpus.data).sum()), rel=1e-14)
    est = BatchRLSI(6, lambda1=0.3, random_state=0, inner_max_iter=8, target_terms_per_topic=25)
    W0 = device_vectors(be, est, Xc)
    np.testing.assert_allclose(W0, initial_doc_vectors(corpus, est), rtol=1e-12, atol=1e-14)
    p = DeviceRLSIProblem(be, Xc, W0, doc_rows=50, **KW)
    assert p.card and len(p.X._blocks) == 6  # blocks of 50 documents cut from the corpus on the card
    assert "set-up" in p.plan.phases  # the given W0 and the transposition on the card
    ref, Uref = iterate(DeviceRLSIProblem(numpy_backend(np.float64), corpus, W0, **KW))
    got, U = iterate(p)
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    assert p.W is p.Wd  # a corpus on the card gets its W on the card

    # the λ₁ search of the one start, its bisection's rows of R made on the card, its problems there
    spec = RLSISpec.of(est)
    lam_card, _ = search_lambda1(spec, DeviceCorpus(be, Xc), W0)
    lam_host, _ = search_lambda1(spec, LocalCorpus(corpus), initial_doc_vectors(corpus, est))
    assert lam_card == pytest.approx(lam_host, rel=1e-9)


def test_initialisation_on_the_card_is_the_host_draw(fake_backend, corpus):
    """A corpus on the card is seeded by rlsi.models.seeding, as on the host: the same W₀ for each init, and the
    host's checks and messages for a given V₀ and for too few documents."""
    from rlsi.gpu.placement import initial_doc_vectors as device_vectors

    be = fake_backend()
    Xc = on_card(be, corpus)
    for init in ("docs", "random"):
        est = BatchRLSI(6, init=init, random_state=4, inner_max_iter=8)
        np.testing.assert_allclose(device_vectors(be, est, Xc), initial_doc_vectors(corpus, est),
                                   rtol=1e-12, atol=1e-14)
    est = BatchRLSI(6, random_state=0)
    V = np.ones((corpus.shape[0], 6))
    np.testing.assert_array_equal(device_vectors(be, est, Xc, V), V)
    for bad, message in ((V[:, :5], r"V_init has shape \(300, 5\), expected"), (V * np.nan, "NaN or infinite")):
        with pytest.raises(RLSIError, match=message):
            initial_doc_vectors(corpus, est, bad)
        with pytest.raises(RLSIError, match=message):
            device_vectors(be, est, Xc, bad)
    few = sp.csr_matrix(corpus[:300].toarray() * (np.arange(300) < 4)[:, None])
    for run in (lambda: initial_doc_vectors(few, est), lambda: device_vectors(be, est, on_card(be, few))):
        with pytest.raises(RLSIError, match="needs at least 6 documents with non-zero weights; X has 4 of 300 "
                                            r"\(with tf-idf weights"):
            run()
