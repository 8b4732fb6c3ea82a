"""The row screening of the batch U-step (rlsi.models.screening): its kernels, and the safety of its bound
under the rounding of the products (float32 and float64)."""

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from rlsi._rows import row_norms
from rlsi.kernels.products import csr_dense_rows
from rlsi.models.rlsi_policy import rounding_factor
from rlsi.models.screening import DRIFT_CHUNK, ScreenedBatchR, _column_drift, csr_row_norms


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [0, 1, DRIFT_CHUNK, 3 * DRIFT_CHUNK + 5])
def test_drift_and_norms_are_the_column_sums_of_squares(dtype, n):
    rng = np.random.default_rng(n)
    W = rng.standard_normal((n, 6)).astype(dtype)
    old = rng.standard_normal((n, 6)).astype(dtype)
    drift, norms = _column_drift(W, old)
    np.testing.assert_allclose(drift, np.square(W.astype(np.float64) - old).sum(axis=0), rtol=1e-12, atol=0)
    np.testing.assert_allclose(norms, np.square(W.astype(np.float64)).sum(axis=0), rtol=1e-12, atol=0)
    drift0, norms0 = _column_drift(W, W[:0])  # no old W: norms only
    assert not drift0.any()
    np.testing.assert_array_equal(norms0, norms)


def test_drift_does_not_depend_on_the_number_of_threads():
    rng = np.random.default_rng(1)
    W = rng.standard_normal((5 * DRIFT_CHUNK + 17, 9))
    base = rng.standard_normal(W.shape)
    many = _column_drift(W, base)
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        one = _column_drift(W, base)
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(many[0], one[0])
    np.testing.assert_array_equal(many[1], one[1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_norms_equal_the_shared_helper_bit_for_bit(dtype):
    D = sp.random(300, 500, density=0.05, random_state=2, format="csr", dtype=np.float64).astype(dtype)
    D.data[D.indptr[7]:D.indptr[8]] = 0  # an empty row
    D.eliminate_zeros()
    assert D.indptr[7] == D.indptr[8]
    np.testing.assert_array_equal(csr_row_norms(D), row_norms(D))


def test_rounding_factor():
    g32 = rounding_factor([0, 10, 2**22, 2**24], np.float32)
    u = 2.0**-24
    assert g32[0] == pytest.approx(2 * u / (1 - 2 * u), rel=1e-12)
    assert g32[1] == pytest.approx(12 * u / (1 - 12 * u), rel=1e-12)
    assert np.isfinite(g32[2]) and np.isinf(g32[3])  # (n+2)u >= 1/2: no bound
    assert rounding_factor([10], np.float64)[0] < 1e-14


def _bound_after(D, W_s, W_t, half_lam):
    """A provider that computed every row at W_s, then moved to W_t through advance(): the rows it
    would skip at W_t."""
    p = ScreenedBatchR(D, half_lam)
    p.set_state(W_s, None)
    p(0, D.shape[0])
    p.advance(W_s, W_t)
    p.set_state(W_t, None)
    return ~p._need(0, D.shape[0]), p


def test_float32_rounding_term_is_needed_and_keeps_the_screening_safe():
    """In float32, fl(2^24 + 1) = 2^24 and fl(2^24 + 3) = 2^24 + 4: the row (1, 1, 1) gives r̂ = 0 at
    W_s = (2^24, 1, −2^24) and r̂ = 4 at W_t = (2^24 + 2, 1, −2^24), while the exact drift bound allows
    |r̂_s| + ‖d‖‖ΔW‖ = 2√3 < 3.5 = λ/2. Without the rounding term that row would be skipped (a zero
    solution) although the lasso sees r̂ = 4 > λ/2 and makes it non-zero."""
    D = sp.csr_matrix(np.ones((1, 3), dtype=np.float32))
    W_s = np.array([[2.0**24], [1.0], [-(2.0**24)]], dtype=np.float32)
    W_t = np.array([[2.0**24 + 2], [1.0], [-(2.0**24)]], dtype=np.float32)
    r_s = csr_dense_rows(D, 0, 1, W_s)[0, 0]
    r_t = csr_dense_rows(D, 0, 1, W_t)[0, 0]
    assert (r_s, r_t) == (0.0, 4.0)  # the products accumulate in float32, in storage order
    half_lam = 3.5
    naive = abs(r_s) + np.sqrt(3.0) * 2.0
    assert naive <= half_lam * (1 - 1e-6) < abs(r_t)  # the bound without rounding would skip the row
    skip, _ = _bound_after(D, W_s, W_t, half_lam)
    assert not skip[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_skipped_rows_have_computed_maxima_below_the_threshold(dtype):
    """Over random W drifts (several advances), every row the bound skips has max_k |r̂_mk| <= λ/2 in the
    product actually computed: the skipped rows are exactly zero solutions."""
    rng = np.random.default_rng(5)
    D = sp.random(400, 3000, density=0.02, random_state=3, format="csr", dtype=np.float64).astype(dtype)
    W = rng.standard_normal((3000, 8)).astype(dtype)
    p = ScreenedBatchR(D, 0.0)
    p.set_state(W, None)
    rowmax0 = np.abs(csr_dense_rows(D, 0, 400, W)).max(axis=1)
    p.half_lam = float(np.quantile(rowmax0, 0.6))  # many rows near the threshold
    p(0, 400)
    skipped = 0
    for _ in range(4):
        W_new = (W + 1e-3 * rng.standard_normal(W.shape)).astype(dtype)
        p.advance(W, W_new)
        W = W_new
        p.set_state(W, None)
        skip = ~p._need(0, 400)
        actual = np.abs(csr_dense_rows(D, 0, 400, W).astype(np.float64)).max(axis=1)
        assert np.all(actual[skip] <= p.half_lam)
        skipped += int(skip.sum())
        p(0, 400)
    assert skipped > 0  # the bound does skip rows: the check above is not vacuous


def test_a_w_that_did_not_come_through_advance_voids_the_bounds():
    D = sp.random(50, 200, density=0.1, random_state=4, format="csr")
    rng = np.random.default_rng(0)
    W = rng.standard_normal((200, 4))
    p = ScreenedBatchR(D, 1e6)  # every row below the threshold: all skipped once the bounds are valid
    p.set_state(W, None)
    p(0, 50)
    W2 = W + 0.01
    p.advance(W, W2)
    p.set_state(W2, None)
    assert not p._need(0, 50).any()
    p(0, 50)
    p.set_state(W2 + 1.0, None)  # a new W without advance(): bounds void, every row computed
    assert p._need(0, 50).all()
    p(0, 50)
    W3 = W2 + 1.0
    p.advance(W, W3)  # not the state's W: ignored, and the next state voids the bounds
    p.set_state(W3, None)
    assert p._need(0, 50).all()
