"""The CUDA-only branches of rlsi.gpu (streams, prefetch threads, free-memory budget, the fused kernel's launch)
on a stand-in for CuPy: numpy with CuPy's ``cuda`` namespace and memory pool, and the fused kernel compiled for
the host. The results must equal the numpy backend's."""

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi import BatchRLSI, OnlineRLSI
from rlsi.datasets.synthetic import make_corpus
from rlsi.errors import RLSIError
from rlsi.gpu import memory
from rlsi.gpu.backend import Backend, numpy_backend
from rlsi.gpu.batch import DeviceRLSIProblem
from rlsi.gpu.online import DeviceOnline, _batches, publish, step

class _Stream:
    def __init__(self, non_blocking=False):
        self.synced = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        self.synced += 1


class _Pool:
    def free_bytes(self):
        return 0

    def total_bytes(self):
        return 0

    def free_all_blocks(self):
        pass


class FakeCupy:
    """numpy, plus what rlsi.gpu asks of CuPy besides the array functions."""

    def __init__(self, free):
        self.cuda = SimpleNamespace(
            Stream=_Stream, get_current_stream=lambda: _Stream(), Device=lambda: SimpleNamespace(id=0),
            runtime=SimpleNamespace(memGetInfo=lambda: (free, 2 * free), getDeviceCount=lambda: 1,
                                    getDeviceProperties=lambda i: {"name": b"stand-in card"}))
        self._pool = _Pool()

    def get_default_memory_pool(self):
        return self._pool

    def __getattr__(self, name):
        return getattr(np, name)


@pytest.fixture
def kernels(host_kernels):
    return host_kernels


def fake(kernels, free=1 << 40, dtype=np.float64):
    ctype = "double" if np.dtype(dtype) == np.float64 else "float"
    return Backend("cuda", FakeCupy(free), sp, np.dtype(dtype), {"cd_block": kernels[ctype]})


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


@pytest.mark.parametrize("opts", [{}, dict(stream=True, term_rows=200, doc_rows=64), dict(topics="dense")])
def test_batch_problem_on_the_stand_in(kernels, corpus, opts):
    be = fake(kernels)
    assert be.is_cuda and "stand-in card" in be.describe() and not be.holds(corpus)
    W0 = BatchRLSI(6, random_state=0)._initial_doc_vectors(corpus, None)
    kw = dict(lambda1=0.3, lambda2=1.0, inner_max_iter=8, topic_sweeps=3)
    ref, Uref = iterate(DeviceRLSIProblem(numpy_backend(np.float64), corpus, W0, **kw))
    got, U = iterate(DeviceRLSIProblem(be, corpus, W0, **kw, **opts))
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    assert abs(U - Uref).max() <= 1e-10 * abs(Uref).max()


def test_free_memory_decides_streaming_and_the_error(kernels, corpus):
    W0 = np.ones((corpus.shape[0], 6))
    blocks = dict(term_rows=100, doc_rows=30)
    need = memory.plan(*corpus.shape, corpus.nnz, 6, dtype=np.float64, **blocks).total
    free = int(need / memory.USABLE) - 1  # all on the card would not fit; streamed it does
    p = DeviceRLSIProblem(fake(kernels, free=free), corpus, W0, lambda1=0.3, lambda2=1.0, **blocks)
    assert p.plan.streamed and p.D.streamed and p.X.streamed and p.plan.total < need
    with pytest.raises(RLSIError, match=r"needs about .* MB .*; the card has 0\.0 MB usable"):
        DeviceRLSIProblem(fake(kernels, free=1000), corpus, W0, lambda1=0.3, lambda2=1.0, **blocks)


def test_online_prefetch_thread_on_the_stand_in(kernels, corpus):
    """Mini-batches made by the prefetch thread under a stream: the stream of the numpy backend, exactly."""
    kw = dict(lambda1=0.05, rho=1.0, n_inner=3, batch_size=70, inner_max_iter=8, random_state=0)
    ref = OnlineRLSI(6, device="numpy:float64", **kw).fit(corpus)
    est = OnlineRLSI(6, device="numpy:float64", **kw)
    est._validate_params()
    est._reset(corpus.dtype)
    be = fake(kernels)
    st = DeviceOnline(be, 6)
    spans = [(a, min(corpus.shape[0], a + 70)) for a in range(0, corpus.shape[0], 70)]
    for batch in _batches(be, corpus, spans):
        step(est, st, batch)
    publish(est, st, corpus.dtype)
    assert abs(est.components_ - ref.components_).max() <= 1e-10 * abs(ref.components_).max()
    np.testing.assert_allclose(est.stats_.R, ref.stats_.R, atol=1e-12)
    assert est.n_batches_ == ref.n_batches_ == len(spans)


class CardBackend(Backend):
    """The stand-in, where a matrix flagged ``_on_card`` plays a CuPy matrix already on the card."""

    def holds(self, A):
        return bool(getattr(A, "_on_card", False))


def on_card(X):
    Y = sp.csr_matrix(X, copy=True)
    Y._on_card = True
    return Y


def card_backend(kernels):
    return CardBackend("cuda", FakeCupy(1 << 40), sp, np.dtype(np.float64), {"cd_block": kernels["double"]})


def test_corpus_on_the_card_paths(kernels, corpus):
    """Blocks as views, row norms, the initialisation and the λ₁ search's bisection for a corpus on the card."""
    from rlsi.gpu.corpus import row_norms
    from rlsi.gpu.fit import initial_doc_vectors, lambda1_for_target
    from rlsi.models.screening import csr_row_norms

    be = card_backend(kernels)
    Xc = on_card(corpus)
    D = on_card(corpus.T.tocsr())
    np.testing.assert_allclose(row_norms(be, D), csr_row_norms(corpus.T.tocsr()), rtol=1e-14)
    est = BatchRLSI(6, lambda1=0.3, random_state=0, inner_max_iter=8, target_terms_per_topic=25)
    W0 = initial_doc_vectors(be, est, Xc)
    np.testing.assert_allclose(W0, est._initial_doc_vectors(corpus, None), rtol=1e-12, atol=1e-14)
    kw = dict(lambda1=0.3, lambda2=est.lambda2, inner_max_iter=8, topic_sweeps=3)
    p = DeviceRLSIProblem(be, Xc, W0, doc_rows=50, **kw)
    assert p.card and len(p.X._blocks) == 6  # blocks of 50 documents cut from the corpus on the card
    ref, Uref = iterate(DeviceRLSIProblem(numpy_backend(np.float64), corpus, W0, **kw))
    got, U = iterate(p)
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    assert p.W is p.Wd  # a corpus on the card gets its W on the card

    def problem_at(W, lam):
        return DeviceRLSIProblem(be, Xc, W, **{**kw, "lambda1": lam})
    lam_card, _ = lambda1_for_target(be, est, Xc, W0, problem_at)
    lam_host, _ = est._lambda1_for_target(corpus, W0, 25)
    assert lam_card == pytest.approx(lam_host, rel=1e-9)


def test_initialisation_on_the_card_is_the_host_draw(kernels, corpus):
    """A corpus on the card is seeded by rlsi.models.seeding, as on the host: the same W₀ for each init, and the
    host's checks and messages for a given V₀ and for too few documents."""
    from rlsi.gpu.fit import initial_doc_vectors

    be = card_backend(kernels)
    Xc = on_card(corpus)
    for init in ("docs", "random"):
        est = BatchRLSI(6, init=init, random_state=4, inner_max_iter=8)
        np.testing.assert_allclose(initial_doc_vectors(be, est, Xc), est._initial_doc_vectors(corpus, None),
                                   rtol=1e-12, atol=1e-14)
    est = BatchRLSI(6, random_state=0)
    V = np.ones((corpus.shape[0], 6))
    np.testing.assert_array_equal(initial_doc_vectors(be, est, Xc, V), V)
    for bad, message in ((V[:, :5], r"V_init has shape \(300, 5\), expected"), (V * np.nan, "NaN or infinite")):
        with pytest.raises(RLSIError, match=message):
            est._initial_doc_vectors(corpus, bad)
        with pytest.raises(RLSIError, match=message):
            initial_doc_vectors(be, est, Xc, bad)
    few = sp.csr_matrix(corpus[:300].toarray() * (np.arange(300) < 4)[:, None])
    for run in (lambda: est._initial_doc_vectors(few, None), lambda: initial_doc_vectors(be, est, on_card(few))):
        with pytest.raises(RLSIError, match="needs at least 6 documents with non-zero weights; X has 4 of 300 "
                                            r"\(with tf-idf weights"):
            run()
