"""TopicStatistics: the exact algebra of S = Σ v vᵀ and R = Σ d vᵀ (merge, re-scaling, growth, persistence)."""

import numpy as np
import pytest
import scipy.sparse as sp

import rlsi.io
from rlsi.errors import RLSIError
from rlsi.models import steps as _steps
from rlsi.models.penalties import SolverSettings, penalty
from rlsi.models.screening import batch_r_rows
from rlsi.models.stats import TopicStatistics

from conftest import planted_corpus


def _data(n_docs=120, seed=0, K=4):
    X = planted_corpus(n_docs=n_docs, seed=seed)
    W = np.random.default_rng(seed).standard_normal((n_docs, K))
    return X, W


def test_one_update_is_the_batch_statistics():
    X, W = _data()
    st = TopicStatistics(4, X.shape[1]).update(X, W)
    np.testing.assert_array_equal(st.S, _steps.gram(W))
    R = batch_r_rows(X.T.tocsr(), W)(0, X.shape[1])
    np.testing.assert_allclose(st.R, R, rtol=1e-14, atol=1e-14)
    assert st.n_docs == X.shape[0] and st.weight == X.shape[0]
    np.testing.assert_array_equal(st.r_rows(3, 9), st.R[3:9])


def test_two_halves_merged_equal_the_whole():
    X, W = _data(n_docs=150, seed=1)
    whole = TopicStatistics(4, X.shape[1]).update(X, W)
    a = TopicStatistics(4, X.shape[1]).update(X[:70], W[:70])
    b = TopicStatistics(4, X.shape[1]).update(X[70:], W[70:])
    merged = a.copy().merge(b)
    np.testing.assert_allclose(merged.S, whole.S, rtol=1e-13)
    np.testing.assert_allclose(merged.R, whole.R, rtol=1e-13, atol=1e-15)
    assert merged.n_docs == whole.n_docs and merged.weight == whole.weight
    # serial accumulation of the two halves is the same algebra
    serial = TopicStatistics(4, X.shape[1]).update(X[:70], W[:70]).update(X[70:], W[70:])
    np.testing.assert_array_equal(serial.S, merged.S)
    np.testing.assert_array_equal(serial.R, merged.R)


def test_merge_grows_to_the_larger_vocabulary_and_checks_topics():
    X, W = _data()
    small = TopicStatistics(4, 50).update(X[:, :50], W)
    big = TopicStatistics(4, X.shape[1]).update(X, W)
    small.merge(big)
    assert small.n_terms == X.shape[1]
    np.testing.assert_allclose(small.R[50:], big.R[50:])
    with pytest.raises(RLSIError, match="topics"):
        small.merge(TopicStatistics(3, 10))


def test_repeated_assign_leaves_one_update():
    """Embedded iterations replace the batch's contribution; they do not add it ξ times."""
    X, W = _data(seed=2)
    base_X, base_W = _data(n_docs=60, seed=3)
    once = TopicStatistics(4, X.shape[1]).update(base_X, base_W).update(X, W, decay=0.5)
    st = TopicStatistics(4, X.shape[1]).update(base_X, base_W)
    pending = st.begin_batch(X, decay=0.5)
    for scale in (3.0, -1.0, 1.0):
        pending.assign(W * scale)
    np.testing.assert_array_equal(st.S, once.S)
    np.testing.assert_array_equal(st.R, once.R)
    assert st.n_docs == once.n_docs and st.weight == once.weight == 0.5 * 60 + X.shape[0]


def test_rescale_multiplies_all_weights():
    X, W = _data()
    st = TopicStatistics(4, X.shape[1]).update(X, W)
    S, R = st.S.copy(), st.R.copy()
    st.rescale(0.25)
    np.testing.assert_array_equal(st.S, 0.25 * S)
    np.testing.assert_array_equal(st.R, 0.25 * R)
    assert st.weight == 0.25 * X.shape[0] and st.n_docs == X.shape[0]
    with pytest.raises(RLSIError):
        st.rescale(-1.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lazy_rescaling_equals_multiplying_R(dtype):
    """``rescale`` only changes the scale (the stored rows stay as they are), and R = scale · stored equals
    the eager ``R ← c R + XᵀW`` of every mini-batch to rounding; the U-step on the stored rows with
    ``scaled_problem`` has the same solution as on the re-scaled R."""
    K, M = 4, 120
    st = TopicStatistics(K, M, dtype)
    R = np.zeros((M, K))
    for i, c in enumerate((1.0, 0.5, 0.8, 0.25, 0.9)):
        X, W = _data(n_docs=30, seed=10 + i)
        stored = st.stored_R.copy()
        st.rescale(c)
        np.testing.assert_array_equal(st.stored_R, stored)  # no pass over R
        st.update(X, W)
        R = c * R + X.T @ W
    assert st.scale == pytest.approx(0.5 * 0.8 * 0.25 * 0.9, rel=1e-15)
    assert st.R.dtype == dtype
    rtol = 1e-13 if dtype == np.float64 else 8 * np.finfo(np.float32).eps
    np.testing.assert_allclose(st.R, R, rtol=0, atol=rtol * np.abs(R).max())
    np.testing.assert_allclose(st.r_rows(3, 9), st.R[3:9], rtol=1e-15)
    S_eff, lam_eff = st.scaled_problem(0.3)
    tight = SolverSettings(max_iter=1000, tol=1e-12)
    U_lazy, _ = _steps.update_topics(st.stored_rows, penalty("l1").prepared(S_eff, lam_eff), None, tight, n_terms=M)
    U_eager, _ = _steps.update_topics(st.r_rows, penalty("l1").prepared(st.S, 0.3), None, tight, n_terms=M)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(U_lazy.toarray(), U_eager.toarray(), atol=tol * abs(U_eager).max())
    assert U_eager.nnz > 0


def test_scale_is_folded_into_R_when_tiny_and_merge_handles_scales():
    X, W = _data()
    st = TopicStatistics(4, X.shape[1]).update(X, W)
    R = st.R.copy()
    st.rescale(2.0 ** -20)
    assert st.n_folds == 0 and st.scale == 2.0 ** -20
    st.rescale(2.0 ** -21)  # below 2^-40: folded (stored values multiplied once, scale back to 1)
    assert st.n_folds == 1 and st.scale == 1.0
    np.testing.assert_array_equal(st.stored_R, R * 2.0 ** -41)
    a = TopicStatistics(4, X.shape[1]).update(X[:60], W[:60]).rescale(0.3)
    b = TopicStatistics(4, X.shape[1]).update(X[60:], W[60:]).rescale(0.7)
    expected = a.R + b.R
    np.testing.assert_allclose(a.merge(b).R, expected, rtol=1e-13, atol=1e-15)
    assert a.scale == 0.3
    folded = a.copy().fold_scale()
    np.testing.assert_allclose(folded.R, a.R, rtol=1e-15)


def test_grow_appends_zero_rows_and_accepts_narrower_batches():
    X, W = _data()
    st = TopicStatistics(4, 10)
    with pytest.raises(RLSIError, match="grow"):
        st.update(X, W)
    for _ in range(30):  # many small growths: amortised buffer, used rows only
        st.grow(4)
    assert st.n_terms == 130 and st.R.shape == (130, 4) and not st.R.any()
    st.update(X[:, :100], W)  # a batch from before the last terms existed
    np.testing.assert_allclose(st.R[:100], TopicStatistics(4, 100).update(X[:, :100], W).R)
    assert not st.R[100:].any()


def test_reset_topics_forgets_them():
    X, W = _data()
    st = TopicStatistics(4, X.shape[1]).update(X, W)
    st.reset_topics([1])
    assert not st.S[1].any() and not st.S[:, 1].any() and not st.R[:, 1].any()
    assert st.S[0, 0] > 0 and st.R[:, 0].any()


def test_update_topics_reads_rows_from_the_statistics():
    X, W = _data()
    st = TopicStatistics(4, X.shape[1]).update(X, W)
    U1, _ = _steps.update_topics(st.r_rows, penalty("l1").prepared(st.S, 0.3), None, n_terms=st.n_terms)
    U2, _ = _steps.update_topics(batch_r_rows(X.T.tocsr(), W), penalty("l1").prepared(_steps.gram(W), 0.3), None,
                                 n_terms=X.shape[1])
    np.testing.assert_allclose(U1.toarray(), U2.toarray(), atol=1e-12)


@pytest.mark.parametrize("mmap", [False, True])
def test_save_load_round_trip(tmp_path, mmap):
    X, W = _data()
    st = TopicStatistics(4, X.shape[1]).update(X, W).rescale(0.5)
    rlsi.io.save(tmp_path / "st", stats=st)
    back = rlsi.io.load(tmp_path / "st", mmap=mmap)["stats"]
    np.testing.assert_array_equal(back.S, st.S)
    np.testing.assert_array_equal(back.R, st.R)
    assert (back.n_docs, back.weight, back.n_terms) == (st.n_docs, st.weight, st.n_terms)
    assert back.scale == st.scale == 0.5  # stored rows and scale: a resumed stream is bit-identical
    back.update(X, W)  # a read-only memory map is copied on the first write
    st.update(X, W)
    np.testing.assert_array_equal(back.R, st.R)
    np.testing.assert_array_equal(back.stored_R, st.stored_R)


def test_version_1_state_loads_with_scale_1():
    X, W = _data()
    st = TopicStatistics(4, X.shape[1]).update(X, W)
    meta, arrays = st._to_state()
    meta = {k: v for k, v in meta.items() if k != "scale"}
    back = TopicStatistics._from_state(dict(meta, state_version=1), arrays)
    assert back.scale == 1.0
    np.testing.assert_array_equal(back.R, st.R)
    with pytest.raises(RLSIError, match="scale"):
        TopicStatistics._from_state(dict(meta, scale=0.0), arrays)


def test_bad_inputs():
    with pytest.raises(RLSIError):
        TopicStatistics(0)
    st = TopicStatistics(2, 5)
    with pytest.raises(RLSIError, match="shape"):
        st.update(sp.csr_matrix((3, 5)), np.zeros((3, 3)))
    with pytest.raises(RLSIError, match="out of range"):
        st.reset_topics([2])


def test_csr_of_the_live_rows_of_dense_topics():
    """The CSR the online V-step projects with (the listed rows of a dense U, others empty) holds exactly
    those rows' non-zero entries."""
    from rlsi.kernels.convert import csr_of_dense_rows as _csr_of_rows

    rng = np.random.default_rng(3)
    U = rng.standard_normal((50, 7)) * (rng.random((50, 7)) < 0.3)
    rows = np.flatnonzero(rng.random(50) < 0.5)
    expected = np.zeros_like(U)
    expected[rows] = U[rows]
    got = _csr_of_rows(U, rows)
    assert got.shape == U.shape and got.has_sorted_indices
    np.testing.assert_array_equal(got.toarray(), expected)
    assert got.nnz == np.count_nonzero(expected)


def _whole_batch_assign(st, X, W, repeat):
    """The rows of R written the simple way: the whole transposed batch (scipy), the base rows copied in
    float64, one kernel call (the reference of the blocked path)."""
    from rlsi.models.stats import _NO_BASE, _assign_rows

    cols = np.unique(X.indices).astype(np.int64)
    remap = np.zeros(X.shape[1], dtype=X.indices.dtype)
    remap[cols] = np.arange(len(cols), dtype=X.indices.dtype)
    XcT = sp.csr_matrix((X.data, remap[X.indices], X.indptr), shape=(X.shape[0], len(cols))).T.tocsr()
    R_base = st._R[cols].astype(np.float64) if repeat else _NO_BASE
    rowmax = np.zeros(len(cols))
    _assign_rows(XcT.indptr, XcT.indices, XcT.data, np.ascontiguousarray(W), cols, R_base, st._R, rowmax,
                 1.0 / st.scale, not repeat)
    return rowmax


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("repeat", [False, True])
@pytest.mark.parametrize("block", [1, 7, 100, 1 << 24])
def test_term_blocks_write_the_rows_of_the_whole_transposed_batch(monkeypatch, dtype, repeat, block):
    """The batch's rows of R formed in blocks of terms (``transpose_entries``, here down to one entry: every
    term a block of its own, common terms larger than a block) are bit-identical to those of the whole
    transposed batch, with a lazy scale and float32 or float64 statistics."""
    X, W = _data(n_docs=90, seed=5)
    X = X.astype(np.float64)
    prior_X, prior_W = _data(n_docs=40, seed=6)
    ref = TopicStatistics(4, X.shape[1], dtype).update(prior_X, prior_W, transpose_entries=block).rescale(0.3)
    got = ref.copy()
    ref_max = _whole_batch_assign(ref, X, W, repeat)
    pending = got.begin_batch(X, repeat=repeat, transpose_entries=block)
    if block == 7:
        assert len(pending._blocks) > 3
    pending.assign(W)
    np.testing.assert_array_equal(got.stored_R, ref.stored_R)
    np.testing.assert_array_equal(pending.rowmax, ref_max)
    if repeat:  # ξ > 1: a second assign starts again from the base rows
        pending.assign(W * -2.0)
        ref2 = ref.copy()
        ref2._R[pending.cols] = pending.R_base
        _whole_batch_assign(ref2, X, W * -2.0, False)
        np.testing.assert_array_equal(got.stored_R, ref2.stored_R)


def test_term_blocks_are_consecutive_and_bounded():
    from rlsi.models.stats import _term_blocks

    t_indptr = np.cumsum([0, 3, 1, 10, 2, 2, 2, 1])
    b = _term_blocks(t_indptr, 4)
    assert b.tolist() == [0, 2, 3, 5, 7]  # 3+1 | 10 (alone, above the bound) | 2+2 | 2+1
    assert _term_blocks(np.zeros(1, dtype=np.int64), 4).tolist() == [0]
