"""OnlineRLSI on the device code path (numpy backend) against the host path: same stream to rounding."""

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi import OnlineRLSI
from rlsi.datasets.synthetic import make_corpus
from rlsi.io import load, save

EXACT = dict(inner_max_iter=8, random_state=0)  # no support solves on the host: pure coordinate descent


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(500, 1200, 50, n_topics=8, topic_vocab=150, seed=4).X


def assert_same(a, b, Xq):
    assert abs(a.components_ - b.components_).max() <= 1e-10 * abs(a.components_).max()
    np.testing.assert_allclose(b.stats_.R, a.stats_.R, rtol=0, atol=1e-10 * np.abs(a.stats_.R).max())
    np.testing.assert_allclose(b.stats_.S, a.stats_.S, rtol=1e-10)
    assert b.stats_.n_docs == a.stats_.n_docs and b.stats_.weight == pytest.approx(a.stats_.weight, rel=1e-14)
    assert b.u_change_ == pytest.approx(a.u_change_, rel=1e-9)
    assert b.lambda1_effective_ == a.lambda1_effective_ and b.n_batches_ == a.n_batches_
    np.testing.assert_allclose(b.transform(Xq), a.transform(Xq), rtol=0, atol=1e-10)


@pytest.mark.parametrize("kw", [dict(), dict(rho=1.0, n_inner=10), dict(rho=1.0, n_inner=3, topic_sweeps=2),
                                dict(n_passes=2, shuffle=True), dict(topic_penalty="l2", lambda1=0.5),
                                dict(init="random")])
def test_device_stream_equals_host_stream(corpus, kw):
    kw = {"lambda1": 0.05, **kw}
    a = OnlineRLSI(6, batch_size=90, device="cpu", **EXACT, **kw).fit(corpus)
    b = OnlineRLSI(6, batch_size=90, device="numpy:float64", **EXACT, **kw).fit(corpus)
    assert_same(a, b, corpus[:30])
    assert b.components_.dtype == np.float64 and sp.isspmatrix_csr(b.components_)


def test_tracking_setting_with_default_sweeps_within_target(corpus):
    """ρ = 1, ξ = 10 with the host kernel's support solves in the first U-step: the same topics to 1e-4."""
    a = OnlineRLSI(6, lambda1=0.05, lambda2=1.0, rho=1.0, n_inner=10, batch_size=100, random_state=0).fit(corpus)
    b = OnlineRLSI(6, lambda1=0.05, lambda2=1.0, rho=1.0, n_inner=10, batch_size=100, random_state=0,
                   device="numpy:float64").fit(corpus)
    assert abs(a.components_ - b.components_).max() <= 1e-4 * abs(a.components_).max()


def test_partial_fit_growing_vocabulary_and_resume(corpus, tmp_path):
    """Batches with more columns each time (new terms appended), a save in the middle, a resumed stream."""
    widths = [700, 900, 1200, 1200]
    parts = [corpus[i * 100:(i + 1) * 100][:, :w] for i, w in enumerate(widths)]
    a = OnlineRLSI(6, lambda1=0.05, rho=1.0, n_inner=2, **EXACT)
    b = OnlineRLSI(6, lambda1=0.05, rho=1.0, n_inner=2, device="numpy:float64", **EXACT)
    for P in parts[:2]:
        Wa, Wb = a.partial_fit_transform(P), b.partial_fit_transform(P)
        np.testing.assert_allclose(Wb, Wa, atol=1e-12)
    save(tmp_path / "b", model=b)
    b = load(tmp_path / "b")["model"]
    assert b.device == "numpy:float64"
    for P in parts[2:]:
        a.partial_fit(P)
        b.partial_fit(P)
    assert a.n_features_in_ == b.n_features_in_ == 1200
    assert_same(a, b, corpus[:20])


def test_float32_device(corpus):
    X32 = corpus.astype(np.float32)
    a = OnlineRLSI(6, lambda1=0.05, batch_size=100, **EXACT).fit(X32)
    b = OnlineRLSI(6, lambda1=0.05, batch_size=100, device="numpy", **EXACT).fit(X32)
    assert b.stats_.R.dtype == np.float32
    assert abs(a.components_ - b.components_).max() <= 1e-4 * abs(a.components_).max()


def test_reseed_dead(corpus):
    """Topics killed by a strong λ₁ are re-seeded from the same documents, with their statistics forgotten."""
    kw = dict(lambda1=3.0, rho=1.0, n_inner=2, batch_size=100, reseed_dead=True, **EXACT)
    a = OnlineRLSI(6, **kw).fit(corpus)
    b = OnlineRLSI(6, device="numpy:float64", **kw).fit(corpus)
    assert a.n_reseeded_ > 0 and b.n_reseeded_ == a.n_reseeded_
    assert_same(a, b, corpus[:20])


def test_a_host_stream_continues_on_the_device_and_back(corpus):
    parts = [corpus[i * 100:(i + 1) * 100] for i in range(5)]
    a = OnlineRLSI(6, lambda1=0.05, rho=1.0, n_inner=2, **EXACT)
    b = OnlineRLSI(6, lambda1=0.05, rho=1.0, n_inner=2, **EXACT)
    for P in parts[:2]:
        a.partial_fit(P)
        b.partial_fit(P)
    b.set_params(device="numpy:float64")
    for P in parts[2:4]:
        a.partial_fit(P)
        b.partial_fit(P)
    b.set_params(device="cpu")
    a.partial_fit(parts[4])
    b.partial_fit(parts[4])
    assert_same(a, b, corpus[:20])


def test_partial_fit_copies_the_statistics_only_when_read(corpus, tmp_path, monkeypatch):
    """R stays on the card between partial_fit calls: one copy when stats_ is read, none for a second read."""
    from rlsi.gpu.online import DeviceOnline

    copies = []
    to_statistics = DeviceOnline.to_statistics
    monkeypatch.setattr(DeviceOnline, "to_statistics", lambda st, dtype: copies.append(st) or to_statistics(st, dtype))
    parts = [corpus[i * 80:(i + 1) * 80] for i in range(5)]
    a = OnlineRLSI(6, lambda1=0.05, rho=1.0, n_inner=2, **EXACT)
    b = OnlineRLSI(6, lambda1=0.05, rho=1.0, n_inner=2, device="numpy:float64", **EXACT)
    for P in parts[:4]:
        a.partial_fit(P)
        b.partial_fit(P)
    assert copies == [] and b.components_.shape == (6, corpus.shape[1]) and b.n_docs_seen_ == 320
    stats = b.stats_
    assert len(copies) == 1 and b.stats_ is stats and stats.n_docs == 320
    save(tmp_path / "b", model=b)
    assert len(copies) == 1
    a.partial_fit(parts[4])
    b.partial_fit(parts[4])
    assert len(copies) == 1 and stats.n_docs == 320  # a copy read once stays the statistics of its step
    assert_same(a, b, corpus[:20])
    assert len(copies) == 2


@pytest.mark.parametrize("device", ["cpu", "numpy:float64"])
def test_a_stream_saved_from_the_device_resumes(corpus, tmp_path, device):
    """partial_fit on the device, save without reading stats_, load, go on on the host or on the device: the
    uninterrupted stream's topics and statistics."""
    parts = [corpus[i * 80:(i + 1) * 80] for i in range(6)]
    kw = dict(lambda1=0.05, rho=1.0, n_inner=2, device="numpy:float64", **EXACT)
    ref = OnlineRLSI(6, **kw)
    b = OnlineRLSI(6, **kw)
    for P in parts[:3]:
        ref.partial_fit(P)
        b.partial_fit(P)
    save(tmp_path / "b", model=b)
    c = load(tmp_path / "b")["model"]
    c.set_params(device=device)
    for P in parts[3:]:
        np.testing.assert_allclose(c.partial_fit_transform(P), ref.partial_fit_transform(P), rtol=0, atol=1e-10)
    assert c.n_docs_seen_ == ref.n_docs_seen_ == 480
    assert_same(ref, c, corpus[:20])


def stream_on(be, corpus, term_rows, batch=90, **kw):
    """The estimator and its device state after streaming ``corpus`` on the device placement of ``be`` with blocks
    of ``term_rows`` rows (the stream's state read after the fit: partial_fit keeps it open)."""
    from rlsi.gpu.placement import DevicePlacement

    est = OnlineRLSI(6, batch_size=batch, placement=DevicePlacement(be, term_rows=term_rows), **EXACT, **kw)
    for a in range(0, corpus.shape[0], batch):
        est.partial_fit(corpus[a:a + batch])
    return est, est._stream.st


@pytest.mark.parametrize("kw", [dict(lambda1=0.05, rho=1.0, n_inner=3), dict(lambda1=0.05, n_inner=1)])
def test_blocks_of_term_rows_give_the_unblocked_step(corpus, kw):
    """Every M x K pass of a step in blocks of 7 term rows (U-step rows, the batch's columns, UᵀU, the change)
    against one block of all rows: the same stream to rounding."""
    from rlsi.gpu.backend import numpy_backend

    be = numpy_backend(np.float64)
    a, sa = stream_on(be, corpus, term_rows=10 ** 6, **kw)
    b, sb = stream_on(be, corpus, term_rows=7, **kw)
    np.testing.assert_allclose(sb.U, sa.U, rtol=0, atol=1e-13 * np.abs(sa.U).max())
    np.testing.assert_allclose(sb.R, sa.R, rtol=0, atol=1e-13 * np.abs(sa.R).max())
    np.testing.assert_allclose(sb.S, sa.S, rtol=1e-13)
    np.testing.assert_array_equal(sb.live, sa.live)
    assert b.u_change_ == pytest.approx(a.u_change_, rel=1e-12)
    assert abs(a.components_ - b.components_).max() <= 1e-13 * abs(a.components_).max()


def test_online_plan_counts_what_a_step_allocates():
    """A stream's steps on numpy under tracemalloc, with 40 blocks of term rows: R, U and the flags are the
    plan's resident arrays to the byte, and a step allocates no more than the plan's per-batch arrays and its
    largest phase (so no copy of R or U: one would be more than all of that)."""
    import tracemalloc

    from rlsi.gpu import memory
    from rlsi.gpu.backend import numpy_backend
    from rlsi.gpu.placement import DevicePlacement

    X = make_corpus(600, 20000, 40, n_topics=8, topic_vocab=800, seed=2).X
    be = numpy_backend(np.float64)
    est = OnlineRLSI(8, lambda1=0.05, rho=1.0, n_inner=3, batch_size=100, placement=DevicePlacement(be, term_rows=256),
                     **EXACT)
    est.partial_fit(X[:100])
    stream = est._stream
    st = stream.st
    batches = [stream.batch(X[a:a + 100]) for a in range(100, 600, 100)]
    peak = 0
    tracemalloc.start()
    try:
        for b in batches:
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            est._learn(b, None, True)  # one mini-batch step on the stream, its vectors left on the card
            peak = max(peak, tracemalloc.get_traced_memory()[1] - base)
    finally:
        tracemalloc.stop()
    nnz_u = int(np.count_nonzero(st.U))
    bnnz = max(b.host.nnz for b in batches)
    p = memory.online_plan(20000, 8, bnnz, 100, 8, n_inner=3, term_rows=256, topic_density=nnz_u / (20000 * 8))
    assert st.R.nbytes == p.resident["R"] and st.U.nbytes == p.resident["U"]
    assert st.rowmax.nbytes + st.live.nbytes + st.live.nbytes == p.resident["row maxima and flags"]
    per_batch = sum(v for k, v in p.resident.items() if k not in ("R", "U", "row maxima and flags",
                                                                      "mini-batches in flight"))
    allowed = per_batch + max(p.phase_bytes.values()) + 64_000
    assert 0.3 * allowed < peak <= allowed < st.U.nbytes
