"""The blocked coordinate descent of the device U-step against plain per-row cyclic coordinate descent."""

import numpy as np
import pytest

from rlsi.gpu.backend import numpy_backend
from rlsi.gpu.cd import solve_penalty, solve_rows
from rlsi.kernels.lasso import lasso_rows
from rlsi.models.penalties import penalty
from rlsi.oracle.paper import _lasso_cd_paper

BE = numpy_backend(np.float64)


def problem(n=60, K=9, seed=0, dead=()):
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((K, 3 * K))
    V[list(dead)] = 0.0  # dead topics: s_kk = 0
    S = V @ V.T
    R = rng.standard_normal((n, K)) * 2.0
    return R, S


@pytest.mark.parametrize("block", [1, 2, 4, 9, 32])
def test_blocked_cd_equals_the_paper_oracle_from_zero(block):
    R, S = problem()
    lam = 1.5
    U, sweeps = solve_rows(BE, R, S, None, lam / 2.0, max_iter=200, tol=1e-10, block=block)
    expect = np.array([_lasso_cd_paper(S, r, lam, 200, 1e-10) for r in R])
    np.testing.assert_allclose(U, expect, rtol=0, atol=1e-12)
    assert U.flags.f_contiguous and sweeps.min() >= 1


@pytest.mark.parametrize("max_iter", [1, 2, 3, 9])
@pytest.mark.parametrize("positive", [False, True])
def test_capped_warm_started_sweeps_follow_the_host_kernel(max_iter, positive):
    """Same order, same per-row stop rule and sweep counts as the host kernel (no support solves below 10
    sweeps), from a warm start with negative entries, and with a work budget."""
    R, S = problem(n=80, K=11, seed=1)
    U0 = np.random.default_rng(2).standard_normal(R.shape)
    for work in (None, 11 * 6.0):
        U, sw = solve_rows(BE, R, S, U0, 0.7, max_iter=max_iter, tol=1e-4, positive=positive, block=4,
                           max_work=work)
        V, sv = lasso_rows(R, S, U0, 1.4, max_iter=max_iter, tol=1e-4, positive=positive, max_work=work)
        np.testing.assert_allclose(U, V, rtol=0, atol=1e-13)
        np.testing.assert_array_equal(sw, sv)


def test_dead_topics_get_zero_weight_without_division():
    R, S = problem(dead=(0, 4))
    with np.errstate(all="raise"):
        U, _ = solve_rows(BE, R, S, np.ones_like(R), 0.5, max_iter=50, tol=1e-8, block=3)
    assert np.all(U[:, [0, 4]] == 0.0) and np.all(np.isfinite(U))
    V, _ = lasso_rows(R, S, np.ones_like(R), 1.0, max_iter=9, tol=1e-8)
    U9, _ = solve_rows(BE, R, S, np.ones_like(R), 0.5, max_iter=9, tol=1e-8, block=3)
    np.testing.assert_allclose(U9, V, rtol=0, atol=1e-12)


def test_rows_optimal_at_zero_are_not_swept():
    R, S = problem()
    R[:10] *= 1e-3  # max|r| <= λ/2 with a zero start: optimal at zero
    U, sweeps = solve_rows(BE, R, S, None, 0.5, max_iter=5, tol=1e-6)
    assert np.all(sweeps[:10] == 0) and np.all(U[:10] == 0.0) and np.all(sweeps[10:] >= 1)


def test_penalties_closed_form_and_nonneg_ridge():
    R, S = problem(K=6)
    l2 = penalty("l2")
    U, sweeps = solve_penalty(BE, l2, l2.prepare(S, 2.0), R, None, 2.0, max_iter=10, tol=1e-8)
    np.testing.assert_allclose(U, np.linalg.solve(S + 2.0 * np.eye(6), R.T).T, rtol=1e-10)
    assert sweeps is None
    nn = penalty("nonneg_l2")
    U, _ = solve_penalty(BE, nn, nn.prepare(S, 2.0), R, None, 2.0, max_iter=9, tol=1e-6)
    V, _ = lasso_rows(R, S + 2.0 * np.eye(6), None, 0.0, max_iter=9, tol=1e-6, positive=True)
    np.testing.assert_allclose(U, V, rtol=0, atol=1e-12)
    assert U.min() >= 0.0


def test_float32_compute_dtype():
    R, S = problem()
    U, _ = solve_rows(numpy_backend(np.float32), R, S, None, 0.75, max_iter=200, tol=1e-6)
    expect = np.array([_lasso_cd_paper(S, r, 1.5, 200, 1e-10) for r in R])
    assert U.dtype == np.float32
    np.testing.assert_allclose(U, expect, rtol=0, atol=1e-4)
