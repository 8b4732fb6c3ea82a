"""The bookkeeping kernel of the batch U-step's row screening (rlsi.models.screening)."""

import numba
import numpy as np
import pytest

from rlsi.models.screening import DRIFT_CHUNK, _drift_and_store


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [0, 1, DRIFT_CHUNK, 3 * DRIFT_CHUNK + 5])
def test_drift_is_the_column_sums_of_squares_and_w_is_stored(dtype, n):
    rng = np.random.default_rng(n)
    W = rng.standard_normal((n, 6)).astype(dtype)
    stored = rng.standard_normal((n, 6))
    before = stored.copy()
    sq = _drift_and_store(W, stored)
    expected = np.square(W.astype(np.float64) - before).sum(axis=0)
    np.testing.assert_allclose(sq, expected, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(stored, W.astype(np.float64))


def test_drift_does_not_depend_on_the_number_of_threads():
    rng = np.random.default_rng(1)
    W = rng.standard_normal((5 * DRIFT_CHUNK + 17, 9))
    base = rng.standard_normal(W.shape)
    many = _drift_and_store(W, base.copy())
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        one = _drift_and_store(W, base.copy())
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(many, one)
