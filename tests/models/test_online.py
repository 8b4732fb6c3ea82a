"""OnlineRLSI (TOIS Algorithm 4 with re-scaling, mini-batches and embedded iterations)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

import rlsi.io
from rlsi.errors import RLSIError
from rlsi.models import BatchRLSI
from rlsi.models import steps as _steps
from rlsi.models.penalties import SolverSettings, penalty
from rlsi.models.screening import batch_r_rows
from rlsi.models.online import OnlineRLSI
from rlsi.text.stream import StreamingTfidf

from conftest import in_numba_threads, planted_corpus

TIGHT = dict(inner_max_iter=2000, inner_tol=1e-12)
EXACT = dict(TIGHT, topic_sweeps=None)  # every U-step solved to inner_tol: Algorithm 4 as published


@pytest.fixture(scope="module")
def corpus():
    return planted_corpus(n_docs=300, seed=2)


@pytest.fixture(scope="module")
def initial(corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return BatchRLSI(4, lambda1=2.0, random_state=0, max_iter=3).fit(corpus)


def test_one_step_on_the_whole_corpus_is_one_batch_u_update(corpus, initial):
    """ρ = 0, one mini-batch = the corpus, ξ = 1: the online U equals the batch U-step from the same V."""
    X, N = corpus, corpus.shape[0]
    W0, _ = _steps.update_doc_vectors(X, initial.topics_, penalty="l2", lam=1.0)
    online = OnlineRLSI(4, lambda1=2.0, lambda2=1.0, rho=0.0, batch_size=N, n_inner=1, topic_init=initial.components_,
                        **EXACT).fit(X)
    U, _ = _steps.update_topics(batch_r_rows(X.T.tocsr(), W0), penalty("l1").prepared(_steps.gram(W0), 2.0 * N / 1000),
                                None, _tight_steps(), n_terms=X.shape[1])
    np.testing.assert_allclose(online.components_.toarray(), U.T.toarray(), atol=1e-9)
    assert online.lambda1_effective_ == pytest.approx(2.0 * N / 1000)
    np.testing.assert_allclose(online.stats_.S, _steps.gram(W0), rtol=1e-12)


def test_embedded_iterations_are_batch_iterations(corpus, initial):
    """ξ embedded iterations on a single batch of everything = ξ outer iterations of BatchRLSI."""
    X, N = corpus, corpus.shape[0]
    W0, _ = _steps.update_doc_vectors(X, initial.topics_, penalty="l2", lam=1.0)
    online = OnlineRLSI(4, lambda1=2.0, lambda2=1.0, batch_size=N, n_inner=4, topic_init=initial.components_,
                        **EXACT).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        batch = BatchRLSI(4, lambda1=2.0, lambda2=1.0, max_iter=4, tol=0, topic_sweeps=None, **TIGHT).fit(X, V_init=W0)
    np.testing.assert_allclose(online.components_.toarray(), batch.components_.toarray(), atol=1e-9)


@pytest.mark.parametrize("sweeps", [1, 2])
def test_capped_embedded_iterations_are_capped_batch_iterations(corpus, initial, sweeps):
    """With ``topic_sweeps`` the first U-step of the stream is exact and the later embedded ones take that
    many sweeps: ξ of them on one batch of everything = ξ BatchRLSI iterations with the same cap and without
    the batch fit's work budget on its cold first U-step (OnlineRLSI has none); and the cap is a different
    path from the exact U-steps."""
    X, N = corpus, corpus.shape[0]
    W0, _ = _steps.update_doc_vectors(X, initial.topics_, penalty="l2", lam=1.0)
    params = dict(lambda1=2.0, lambda2=1.0, batch_size=N, n_inner=4, topic_init=initial.components_, **TIGHT)
    online = OnlineRLSI(4, topic_sweeps=sweeps, **params).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        batch = BatchRLSI(4, lambda1=2.0, lambda2=1.0, max_iter=4, tol=0, topic_sweeps=sweeps, **TIGHT)
        batch.with_tuning(cold_dense_sweeps=None).fit(X, V_init=W0)
    np.testing.assert_allclose(online.components_.toarray(), batch.components_.toarray(), atol=1e-8)
    exact = OnlineRLSI(4, topic_sweeps=None, **params).fit(X)
    assert np.abs(online.components_ - exact.components_).max() > 1e-6


def _tight_steps():
    return SolverSettings(max_iter=TIGHT["inner_max_iter"], tol=TIGHT["inner_tol"])


def test_topic_changes_shrink_over_a_stationary_stream():
    """Proposition 5.5: ‖U_{t+1} − U_t‖_F = O(1/t) — compare quarters and fit the log-log slope."""
    X = planted_corpus(n_docs=2000, seed=3)
    model = OnlineRLSI(4, lambda1=2.0, random_state=0)
    changes = []
    for a in range(0, X.shape[0], 40):
        model.partial_fit(X[a:a + 40])
        changes.append(model.u_change_)
    c = np.asarray(changes)
    q = len(c) // 4
    early, second, last = c[:q].mean(), c[q:2 * q].mean(), c[-q:].mean()
    assert early > second > last and last < early / 5
    t = np.arange(1, len(c) + 1)
    slope = np.polyfit(np.log(t[3:]), np.log(c[3:] + 1e-300), 1)[0]
    assert slope < -0.5


def test_rescaling_and_lambda1_over_time():
    X = planted_corpus(n_docs=200, seed=4)
    b = 50
    model = OnlineRLSI(4, lambda1=2.0, rho=1.0, random_state=0)
    for a in range(0, 200, b):
        model.partial_fit(X[a:a + b])
    # weight of a document that arrived when the count reached t_i is (t_i / t)^ρ
    ends = np.arange(b, 201, b)
    weight = b * float(np.sum(ends / 200.0))  # b documents per batch
    assert model.stats_.weight == pytest.approx(weight, rel=1e-12)
    assert model.n_docs_seen_ == 200
    assert model.lambda1_effective_ == pytest.approx(2.0 * weight / 1000)
    # the mini-batch factor is the product of the per-document factors ((j-1)/j)^ρ
    per_doc = np.prod([((j - 1) / j) ** 1.5 for j in range(101, 151)])
    assert OnlineRLSI(rho=1.5).decay_at(100, 50) == pytest.approx(per_doc, rel=1e-12)
    paper = OnlineRLSI(4, lambda1=0.7, lambda1_scale="paper", random_state=0).fit(X)
    assert paper.lambda1_effective_ == 0.7


def test_fit_is_a_sequence_of_partial_fits():
    X = planted_corpus(n_docs=230, seed=5)
    params = dict(lambda1=2.0, rho=0.5, n_inner=2, batch_size=60, random_state=1)
    fitted = OnlineRLSI(4, **params).fit(X)
    streamed = OnlineRLSI(4, **params)
    for a in range(0, 230, 60):
        streamed.partial_fit(X[a:a + 60])
    _assert_same_state(fitted, streamed)
    assert fitted.n_batches_ == 4 and fitted.n_iter_ == 4


def _assert_same_state(a, b):
    assert (a.components_ != b.components_).nnz == 0
    np.testing.assert_array_equal(a.components_.toarray(), b.components_.toarray())
    np.testing.assert_array_equal(a.stats_.S, b.stats_.S)
    np.testing.assert_array_equal(a.stats_.R, b.stats_.R)
    assert a.stats_.weight == b.stats_.weight and a.n_docs_seen_ == b.n_docs_seen_


@pytest.mark.parametrize("mmap", [False, True])
def test_resume_from_saved_state_is_bit_identical(tmp_path, mmap):
    X = planted_corpus(n_docs=400, seed=6)
    # a growing vocabulary: batch i only sees the first 80 + 10 i columns
    batches = [X[a:a + 50, : 80 + 5 * (a // 50)] for a in range(0, 400, 50)]
    params = dict(lambda1=3.0, rho=1.0, n_inner=3, reseed_dead=True, random_state=7)
    straight = OnlineRLSI(4, **params)
    for Xb in batches:
        straight.partial_fit(Xb)
    first = OnlineRLSI(4, **params)
    for Xb in batches[:3]:
        first.partial_fit(Xb)
    rlsi.io.save(tmp_path / "m", model=first)
    resumed = rlsi.io.load(tmp_path / "m", mmap=mmap)["model"]
    assert isinstance(resumed, OnlineRLSI)
    for Xb in batches[3:]:
        resumed.partial_fit(Xb)
    _assert_same_state(straight, resumed)
    Xq = X[:20, : straight.n_features_in_]
    np.testing.assert_array_equal(straight.transform(Xq), resumed.transform(Xq))


def test_saving_keeps_topic_init_and_random_generator(tmp_path, initial):
    model = OnlineRLSI(4, lambda1=2.0, topic_init=initial, shuffle=True, random_state=3)
    model.fit(planted_corpus(n_docs=100, seed=8))
    rlsi.io.save(tmp_path / "m", model=model)
    back = rlsi.io.load(tmp_path / "m")["model"]
    np.testing.assert_array_equal(back.topic_init.toarray(), initial.components_.toarray())
    assert back._rng.bit_generator.state == model._rng.bit_generator.state
    assert back.get_params()["shuffle"] is True


def test_new_terms_late_in_the_stream_get_topic_weights():
    """Term 120 (new column) appears only after the vocabulary grew, always with topic-0 words."""
    rng = np.random.default_rng(0)
    X = planted_corpus(n_docs=600, n_terms=120, seed=9).tolil()
    late = sp.lil_matrix((600, 1))
    topic0_docs = np.flatnonzero(np.asarray(X[:, :12].sum(axis=1)).ravel() > 2)
    for d in topic0_docs[topic0_docs >= 300]:
        late[d, 0] = rng.uniform(0.8, 1.2)
    X = sp.hstack([X.tocsr(), late.tocsr()], format="csr")
    model = OnlineRLSI(4, lambda1=2.0, rho=1.0, n_inner=3, random_state=0)
    for a in range(0, 600, 50):
        Xb = X[a:a + 50]
        model.partial_fit(Xb if a >= 300 else Xb[:, :120])  # the new term does not exist before doc 300
        if a < 300:
            assert model.n_features_in_ == 120
    assert model.n_features_in_ == 121 and model.stats_.n_terms == 121
    weights = model.components_[:, 120].toarray().ravel()
    k = int(np.argmax(np.abs(weights)))
    assert abs(weights[k]) > 0
    # ... in the topic of the words it co-occurs with
    assert np.abs(model.components_[k, :12].toarray()).sum() > 0.5 * np.abs(model.components_[k].toarray()).sum()


def test_fewer_columns_than_seen_is_an_error():
    X = planted_corpus(n_docs=60, seed=10)
    model = OnlineRLSI(3, random_state=0).partial_fit(X)
    with pytest.raises(RLSIError, match="expecting 120 features"):
        model.partial_fit(X[:, :100])


def test_empty_and_unknown_term_documents_do_not_crash():
    model = OnlineRLSI(3, lambda1=1.0, random_state=0)
    W = model.partial_fit_transform(sp.csr_matrix((5, 30)))  # nothing to learn from yet
    assert not model.topics_initialized_ and W.shape == (5, 3) and not W.any()
    assert model.components_.shape == (3, 30) and model.n_docs_seen_ == 5
    X = planted_corpus(n_docs=90, n_terms=30, n_topics=3, words_per_topic=10, seed=11).tolil()
    X[10:20] = 0  # empty documents inside a batch
    W = model.partial_fit_transform(X.tocsr())
    assert model.topics_initialized_ and not W[10:20].any() and np.isfinite(W).all()
    assert np.isfinite(model.components_.data).all()
    # folding in queries made only of terms the stream never saw (and an empty one)
    vec = StreamingTfidf()
    vec.partial_fit_transform(["alpha beta gamma", "beta gamma delta", "alpha delta"])
    m2 = OnlineRLSI(2, lambda1=0.1, random_state=0).partial_fit(vec.transform(["alpha beta gamma", "delta"]))
    Q = vec.transform(["zebra quokka", ""])
    assert Q.nnz == 0
    np.testing.assert_array_equal(m2.transform(Q), np.zeros((2, 2)))


def test_fewer_nonempty_documents_than_topics_initialise_distinct_topics():
    X = planted_corpus(n_docs=3, seed=12)
    model = OnlineRLSI(5, lambda1=0.01, random_state=0).partial_fit(X)
    assert model.topics_initialized_
    dense = model.components_.toarray()
    assert len({tuple(np.round(r, 12)) for r in dense if r.any()}) == sum(1 for r in dense if r.any())


def test_random_init_and_topic_init_with_fewer_terms():
    X = planted_corpus(n_docs=200, seed=13)
    m = OnlineRLSI(4, lambda1=2.0, init="random", rho=1.0, n_inner=5, random_state=0).fit(X)
    assert m.components_.nnz > 0
    small = OnlineRLSI(4, lambda1=2.0, random_state=0).fit(X[:, :100])
    grown = OnlineRLSI(4, lambda1=2.0, topic_init=small.components_).partial_fit(X)
    assert grown.components_.shape == (4, 120)
    with pytest.raises(RLSIError, match="topic_init"):
        OnlineRLSI(4, topic_init=m.components_).partial_fit(X[:, :100])
    with pytest.raises(RLSIError, match="not fitted"):
        OnlineRLSI(4, topic_init=BatchRLSI(4)).partial_fit(X)
    with pytest.raises(RLSIError, match="topics"):
        OnlineRLSI(3, topic_init=m.components_).partial_fit(X)


def test_reseeding_dead_topics():
    X = planted_corpus(n_docs=200, seed=14)
    init = OnlineRLSI(4, lambda1=2.0, random_state=0).fit(X).components_.tolil()
    init[3] = 0  # a spare, dead topic
    model = OnlineRLSI(4, lambda1=2.0, topic_init=init.tocsr(), reseed_dead=True, random_state=0)
    model.partial_fit(X[:50])
    # the live topics explain these documents: nothing qualifies as a new theme
    assert model.n_reseeded_ == 0 and 3 in model.dead_topics()
    new_theme = sp.hstack([sp.csr_matrix((20, 120)), sp.random(20, 10, density=0.6, random_state=0)],
                          format="csr")
    model.partial_fit(new_theme)
    assert model.n_reseeded_ == 1 and 3 not in model.dead_topics()
    assert model.components_[3, 120:].nnz > 0


@pytest.mark.parametrize("dense_topics", [True, False])
def test_float32_statistics_drift_little_from_float64(monkeypatch, dense_topics):
    """R in float32 (the default for float32 X): each mini-batch's rows are summed in float64 and rounded
    once when stored, and the re-scaling rounds once more, so after B mini-batches R is within about
    2 B float32 roundings of float64 statistics — not the rounding of every document's addition — and the
    topics follow. Both topic representations (dense working topics, and sparse ones for a vocabulary too
    large for a dense M x K, whose U-step gives topics of R's dtype)."""

    tuning = {} if dense_topics else dict(dense_max_bytes=0)  # CSR topics: dense ones would not fit
    X = planted_corpus(n_docs=3000, seed=21).astype(np.float32)
    params = dict(lambda1=2.0, rho=1.0, batch_size=100, n_inner=3, random_state=0)
    ref = OnlineRLSI(4, stats_dtype="float64", **params).with_tuning(**tuning).fit(X)
    low = OnlineRLSI(4, **params).with_tuning(**tuning).fit(X)
    assert ref.stats_.R.dtype == np.float64 and low.stats_.R.dtype == np.float32
    assert low.stats_.R.nbytes * 2 == ref.stats_.R.nbytes
    n_batches = low.n_batches_
    eps = np.finfo(np.float32).eps
    R64, R32 = ref.stats_.R, low.stats_.R.astype(np.float64)
    assert np.abs(R32 - R64).max() <= 2 * n_batches * eps * np.abs(R64).max()
    assert np.abs(R32 - R64).max() > 0  # it did round
    U64, U32 = ref.components_.toarray(), low.components_.toarray()
    assert np.linalg.norm(U32 - U64) <= 1e-4 * np.linalg.norm(U64)
    np.testing.assert_allclose(low.stats_.S, ref.stats_.S, rtol=1e-4, atol=1e-4 * np.abs(ref.stats_.S).max())


def test_float32_statistics_resume_from_saved_state(tmp_path):
    X = planted_corpus(n_docs=300, seed=22).astype(np.float32)
    params = dict(lambda1=2.0, rho=1.0, n_inner=2, batch_size=50, random_state=1)
    straight = OnlineRLSI(4, **params).fit(X)
    first = OnlineRLSI(4, **params)
    for a in range(0, 150, 50):
        first.partial_fit(X[a:a + 50])
    rlsi.io.save(tmp_path / "m", model=first)
    resumed = rlsi.io.load(tmp_path / "m")["model"]
    assert resumed.stats_.R.dtype == np.float32
    for a in range(150, 300, 50):
        resumed.partial_fit(X[a:a + 50])
    _assert_same_state(straight, resumed)


@pytest.mark.parametrize("dense_topics", [True, False])
@pytest.mark.parametrize("stats_dtype", ["float64", "float32"])
def test_row_screening_state_carried_between_batches_is_exact(monkeypatch, stats_dtype, dense_topics):
    """The row maxima of the stored R and the live rows of U kept from one mini-batch to the next (the lazy
    re-scaling with ρ changes only the scale) are those a fresh scan of R and U gives, bit for bit."""
    from rlsi.kernels.rows import row_absmax

    tuning = {} if dense_topics else dict(dense_max_bytes=0)  # CSR topics: dense ones would not fit
    X = planted_corpus(n_docs=600, seed=23)
    model = OnlineRLSI(4, lambda1=2.0, rho=1.0, n_inner=2, stats_dtype=stats_dtype, random_state=0).with_tuning(**tuning)
    for a in range(0, 600, 60):
        model.partial_fit(X[a:a + 60])
        cache = model._stream.row_cache
        U, rowmax, live, G = cache.U, cache.rowmax, cache.live, cache.G
        assert U is model._stream.U and sp.issparse(U) != dense_topics
        Ud = (U.toarray() if sp.issparse(U) else U).astype(np.float64)  # G = UᵀU carried to the next mini-batch's first V-step
        np.testing.assert_allclose(G, Ud.T @ Ud, rtol=1e-12, atol=1e-14 * max(1.0, np.abs(G).max()))
        assert model.stats_.scale < 1.0 or a == 0  # re-scaled lazily
        np.testing.assert_array_equal(rowmax, row_absmax(model.stats_.stored_R))
        live_now = np.diff(U.tocsr().indptr) > 0 if sp.issparse(U) else _steps.nonzero_row_mask(U)
        np.testing.assert_array_equal(live, live_now)


@pytest.mark.parametrize("small_blocks", [False, True])
@pytest.mark.parametrize("dense_topics", [True, False])
def test_lazy_rescaling_and_live_rows_equal_the_eager_oracle(monkeypatch, dense_topics, small_blocks):
    """Lazy re-scaling (a stored scale, R never multiplied) and the U-step on the live rows only (dense or
    CSR topics, one or several blocks of rows) give the topics and statistics of Algorithm 4 done eagerly
    — all of S and R multiplied every mini-batch, every term row solved from zero (the numpy oracle) —
    over several mini-batches with ρ = 1 and ξ = 3, to rounding and solver tolerance. ``small_blocks`` also
    takes the V-step's projection from the live rows as CSR (the path of large batches) and, for dense topics,
    the scattered rows instead of the compact block (:class:`rlsi.models.active_rows.CompactBatch`)."""
    from rlsi.oracle import online_rlsi

    tuning = {} if dense_topics else dict(dense_max_bytes=0)  # CSR topics: dense ones would not fit
    if small_blocks:  # 7 rows per block of the U-step, the projection from the live rows as CSR, the scattered path
        tuning.update(online_solve_entries=4 * 7, online_csr_projection=0, online_compact=False)
    X = planted_corpus(n_docs=240, seed=31)
    docs = X[[0, 60, 120, 180]].toarray()
    U0 = (docs / np.linalg.norm(docs, axis=1, keepdims=True)).T  # M x K: four documents as U₀
    params = dict(lambda1=2.0, lambda2=1.0, rho=1.0, batch_size=40, n_inner=3)
    model = OnlineRLSI(4, topic_init=U0.T, stats_dtype="float64", random_state=0, **params, **EXACT)
    model.with_tuning(**tuning).fit(X)
    U, S, R, weight = online_rlsi(X, U0, **params)
    assert model.stats_.scale < 0.2  # R was never multiplied: (40/240) of the first batch's weight
    assert sp.issparse(model._stream.U) != dense_topics
    assert np.count_nonzero(U) > 0 and (U == 0).any()
    np.testing.assert_allclose(model.components_.toarray().T, U, atol=1e-8)
    np.testing.assert_allclose(model.stats_.S, S, rtol=1e-9, atol=1e-12 * np.abs(S).max())
    np.testing.assert_allclose(model.stats_.R, R, rtol=1e-9, atol=1e-12 * np.abs(R).max())
    assert model.stats_.weight == pytest.approx(weight, rel=1e-12)


@pytest.mark.parametrize("rho,n_inner,n_passes", [(0.0, 1, 1), (0.5, 2, 2), (1.0, 3, 1), (2.0, 1, 3), (1.0, 5, 2)])
def test_online_equals_the_eager_oracle(rho, n_inner, n_passes):
    """Over forgetting rates ρ (none, slow, the paper's tracking rate, fast), embedded iterations ξ and
    passes (a later pass continues the stream), the default OnlineRLSI (lazy re-scaling, live rows only,
    compact block for ξ > 1) gives the topics and statistics of Algorithm 4 done eagerly in numpy, to
    solver tolerance."""
    from rlsi.oracle import online_rlsi

    X = planted_corpus(n_docs=200, seed=37)
    docs = X[[0, 50, 100, 150]].toarray()
    U0 = (docs / np.linalg.norm(docs, axis=1, keepdims=True)).T
    params = dict(lambda1=2.0, lambda2=1.0, rho=rho, batch_size=40, n_inner=n_inner)
    model = OnlineRLSI(4, topic_init=U0.T, n_passes=n_passes, stats_dtype="float64", random_state=0, **params,
                       **EXACT).fit(X)
    U, S, R, weight = online_rlsi(X, U0, n_passes=n_passes, **params)
    assert model.n_docs_seen_ == 200 * n_passes
    assert np.count_nonzero(U) > 0 and (U == 0).any()
    np.testing.assert_allclose(model.components_.toarray().T, U, atol=1e-8)
    np.testing.assert_allclose(model.stats_.S, S, rtol=1e-9, atol=1e-12 * np.abs(S).max())
    np.testing.assert_allclose(model.stats_.R, R, rtol=1e-9, atol=1e-12 * np.abs(R).max())
    assert model.stats_.weight == pytest.approx(weight, rel=1e-12)


def test_compact_block_equals_the_scattered_rows(monkeypatch):
    """ξ > 1 on dense topics runs each mini-batch on a compact copy of the rows it can touch (CompactBatch);
    the scattered path (ActiveRows on the M x K arrays) gives the same topics, statistics and carried row
    state bit for bit, over a stream with ρ = 1 where the vocabulary grows, with a block limit that sends
    some mini-batches to the scattered path (the two mixed in one stream), and with ℓ1 document vectors."""
    import rlsi.models.active_rows as active_mod

    X = planted_corpus(n_docs=400, n_terms=160, seed=43)
    opened = []
    real_open = active_mod.CompactBatch.open.__func__

    def counting_open(cls, *args, **kwargs):
        blk = real_open(cls, *args, **kwargs)
        opened.append(blk is not None)
        return blk

    monkeypatch.setattr(active_mod.CompactBatch, "open", classmethod(counting_open))

    def stream(compact, limit=active_mod.COMPACT_MAX_ENTRIES, doc_penalty="l2"):
        model = OnlineRLSI(4, lambda1=1.0, rho=1.0, n_inner=3, doc_penalty=doc_penalty, random_state=0)
        model.with_tuning(online_compact=compact, online_compact_entries=limit)
        changes = []
        for a in range(0, 400, 50):  # the first batches see fewer terms: the vocabulary grows
            model.partial_fit(X[a:a + 50, : 120 if a < 150 else 160])
            changes.append(model.u_change_)
        return model, changes

    # the ridge V-step has a path of its own on the block; "l1" documents go through the general V-step
    for limit, doc_penalty in ((active_mod.COMPACT_MAX_ENTRIES, "l2"), (4 * 100, "l2"),
                               (active_mod.COMPACT_MAX_ENTRIES, "l1")):
        ref, ref_changes = stream(False, doc_penalty=doc_penalty)
        assert not opened
        got, changes = stream(True, limit, doc_penalty)
        assert any(opened) and (all(opened) == (limit > 4 * 160))
        assert got.components_.nnz > 0
        np.testing.assert_array_equal(got.components_.toarray(), ref.components_.toarray())
        np.testing.assert_array_equal(got.stats_.stored_R, ref.stats_.stored_R)
        np.testing.assert_array_equal(got.stats_.S, ref.stats_.S)
        for name in ("rowmax", "live", "n_folds", "G"):
            np.testing.assert_array_equal(getattr(got._stream.row_cache, name), getattr(ref._stream.row_cache, name))
        np.testing.assert_allclose(changes, ref_changes, rtol=1e-12)
        opened.clear()


@pytest.mark.parametrize("n_inner", [1, 3])
@pytest.mark.parametrize("dense_topics", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_term_blocks_and_shared_indices_leave_the_fit_bit_identical(monkeypatch, n_inner, dense_topics, dtype):
    """``fit``'s mini-batches share X's indices (float64 data only) and their rows of R are formed in blocks
    of terms (the tuning's ``transpose_entries``); a block of 5 entries (many blocks per mini-batch, the common
    terms each above it) gives the same topics and statistics bit for bit as one block per mini-batch, over ρ =
    1, ξ = 1 and ξ = 3 (the compact block), dense and CSR topics, float32 and float64 X."""
    tuning = {} if dense_topics else dict(dense_max_bytes=0)  # CSR topics: dense ones would not fit
    X = planted_corpus(n_docs=300, seed=44).astype(dtype)

    def run(block):
        return OnlineRLSI(4, lambda1=1.0, rho=1.0, n_inner=n_inner, batch_size=70, topic_sweeps=3,
                          random_state=0).with_tuning(transpose_entries=block, **tuning).fit(X)

    ref, got = run(1 << 30), run(5)
    assert got.components_.nnz > 0
    np.testing.assert_array_equal(got.components_.toarray(), ref.components_.toarray())
    np.testing.assert_array_equal(got.stats_.stored_R, ref.stats_.stored_R)
    np.testing.assert_array_equal(got.stats_.S, ref.stats_.S)
    # and fit equals partial_fit on scipy's row slices (copies of the rows, converted by the step)
    parts = OnlineRLSI(4, lambda1=1.0, rho=1.0, n_inner=n_inner, batch_size=70, topic_sweeps=3, random_state=0)
    parts.with_tuning(**tuning)
    for a in range(0, 300, 70):
        parts.partial_fit(X[a:a + 70])
    np.testing.assert_array_equal(got.components_.toarray(), parts.components_.toarray())
    np.testing.assert_array_equal(got.stats_.stored_R, parts.stats_.stored_R)


def test_batch_rows_share_the_indices_of_x():
    from rlsi.models.minibatch import batch_rows

    X = planted_corpus(n_docs=50, seed=45).astype(np.float32)
    Xb = batch_rows(X, 10, 30)
    assert np.shares_memory(Xb.indices, X.indices) and Xb.data.dtype == np.float64
    assert Xb.has_canonical_format
    assert (Xb != X[10:30].astype(np.float64)).nnz == 0
    rows = np.array([3, 7, 40])
    assert (batch_rows(X, rows) != X[rows].astype(np.float64)).nnz == 0


@pytest.mark.parametrize("n_inner", [1, 3])
@pytest.mark.parametrize("dense_topics", [True, False])
def test_u_change_is_the_distance_between_consecutive_topics(monkeypatch, n_inner, dense_topics):
    """``u_change_`` (tracked over the solved rows: summed in the row kernel with ξ = 1, from the CSR of the
    live rows before the batch with ξ > 1, or a sparse difference for CSR topics) is ‖U_t − U_{t−1}‖_F."""

    tuning = {} if dense_topics else dict(dense_max_bytes=0)  # CSR topics: dense ones would not fit
    X = planted_corpus(n_docs=300, seed=41)
    model = OnlineRLSI(4, lambda1=2.0, rho=1.0, n_inner=n_inner, random_state=0).with_tuning(**tuning)
    model.partial_fit(X[:60])
    for a in range(60, 300, 60):
        before = model.components_.toarray()
        model.partial_fit(X[a:a + 60])
        expected = np.linalg.norm(model.components_.toarray() - before)
        assert expected > 0
        assert model.u_change_ == pytest.approx(expected, rel=1e-9)


def test_parameter_validation():
    X = planted_corpus(n_docs=20, seed=15)
    for bad in (dict(rho=-1), dict(batch_size=0), dict(n_inner=0), dict(lambda1_scale="x"),
                dict(init="x"), dict(shuffle="yes"), dict(n_passes=0), dict(topic_sweeps=0),
                dict(stats_dtype="float16")):
        with pytest.raises(RLSIError):
            OnlineRLSI(2, **bad).fit(X)


@parametrize_with_checks([OnlineRLSI(n_components=2, lambda1=0.01, batch_size=8, n_inner=2, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("n_inner", [1, 3])
@pytest.mark.parametrize("dense_topics", [True, False])
def test_topics_do_not_depend_on_the_thread_count(monkeypatch, n_inner, dense_topics, request):
    """The same stream gives bit-identical topics and statistics on 1 and 2 threads: the partial sums of
    G = UᵀU follow the rows solved, not the threads (they once followed ``numba.get_num_threads()``, and the
    topics differed in the last digits). Enough term rows (thousands) for many parts, both paths of the
    U-step (the compact block of ξ > 1, the scattered rows of ξ = 1) and both topic representations."""
    if not in_numba_threads(request):
        return  # compared in a child with two numba threads
    tuning = {} if dense_topics else dict(dense_max_bytes=0)  # CSR topics: dense ones would not fit
    X = sp.random(1500, 4000, density=0.01, random_state=3, format="csr")
    params = dict(lambda1=0.05, rho=1.0, n_inner=n_inner, batch_size=300, random_state=0)
    one = OnlineRLSI(12, n_jobs=1, **params).with_tuning(**tuning).fit(X)
    two = OnlineRLSI(12, n_jobs=2, **params).with_tuning(**tuning).fit(X)
    assert one.components_.nnz > 1000  # thousands of live term rows: many parts of G
    _assert_same_state(one, two)


def test_resume_of_dense_held_topics_agrees_to_rounding(tmp_path):
    # λ₁ = 3 and ρ = 0: the fit holds its topics dense, the loaded model sparse (see the module docstring)
    X = planted_corpus(n_docs=400, seed=6)
    batches = [X[a:a + 50] for a in range(0, 400, 50)]
    params = dict(lambda1=3.0, random_state=7)
    straight = OnlineRLSI(4, **params)
    for Xb in batches:
        straight.partial_fit(Xb)
    first = OnlineRLSI(4, **params)
    for Xb in batches[:3]:
        first.partial_fit(Xb)
    rlsi.io.save(tmp_path / "m", model=first)
    resumed = rlsi.io.load(tmp_path / "m")["model"]
    for Xb in batches[3:]:
        resumed.partial_fit(Xb)
    np.testing.assert_allclose(resumed.components_.toarray(), straight.components_.toarray(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(resumed.stats_.S, straight.stats_.S, rtol=1e-12)
