"""The Gram-lasso kernel: KKT conditions (property tests), zero screening, dead coordinates."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlsi.kernels.lasso import lasso_rows
from rlsi.oracle.paper import _lasso_cd_paper


def kkt_violation(r, S, u, lam):
    """Largest violation of the lasso optimality conditions of  uᵀSu - 2rᵀu + lam‖u‖₁.

    Gradient of the smooth part: 2(Su - r). At the optimum: 2(r - Su)_k = lam·sign(u_k) where u_k != 0
    and |2(r - Su)_k| <= lam where u_k == 0 (coordinates with s_kk = 0 are fixed at 0 and skipped).
    """
    c = 2.0 * (r - S @ u)
    worst = 0.0
    for k in range(len(u)):
        if S[k, k] <= 0:
            continue
        if u[k] != 0:
            worst = max(worst, abs(c[k] - lam * np.sign(u[k])))
        else:
            worst = max(worst, abs(c[k]) - lam)
    return worst


@st.composite
def lasso_problems(draw):
    K = draw(st.integers(1, 8))
    N = draw(st.integers(1, 12))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((K, N)) * draw(st.floats(0.1, 3.0))
    if draw(st.booleans()):
        V[rng.integers(K)] = 0.0  # a dead topic: s_kk = 0
    S = V @ V.T
    # rows of R = D Vᵀ for some document rows D (R outside the range of V would make λ→0 unbounded)
    D = rng.standard_normal((draw(st.integers(1, 5)), N)) * draw(st.floats(0.01, 5.0))
    R = D @ V.T
    lam = draw(st.floats(0.001, 4.0))
    warm = draw(st.booleans())
    U0 = rng.standard_normal(R.shape) if warm else None
    return R, S, U0, lam


@settings(max_examples=150, deadline=None)
@given(lasso_problems())
def test_kkt_conditions_hold_at_the_returned_solution(problem):
    R, S, U0, lam = problem
    # tol=0: sweep until no coordinate moves (or the cap); rank-deficient Grams converge slowly
    U, _ = lasso_rows(R, S, U0, lam, max_iter=200000, tol=0.0)
    scale = max(1.0, np.abs(R).max(), np.abs(S).max())
    for r, u in zip(R, U):
        assert np.all(np.isfinite(u))
        assert kkt_violation(r, S, u, lam) <= 1e-6 * scale
        dead = np.diag(S) <= 0
        assert np.all(u[dead] == 0)


def test_matches_the_paper_coordinate_descent():
    rng = np.random.default_rng(3)
    V = rng.standard_normal((6, 30))
    S, R = V @ V.T, rng.standard_normal((10, 6)) * 5
    U, _ = lasso_rows(R, S, None, 1.5, max_iter=10000, tol=1e-14)
    for r, u in zip(R, U):
        np.testing.assert_allclose(u, _lasso_cd_paper(S, r, 1.5, 10000, 1e-14), atol=1e-10)


def test_rows_below_threshold_are_skipped_and_zero():
    S = np.eye(3) * 2.0
    R = np.array([[0.1, -0.2, 0.05], [3.0, 0.0, 0.0]])
    U, sweeps = lasso_rows(R, S, None, 1.0)  # threshold lam/2 = 0.5
    assert sweeps[0] == 0 and np.all(U[0] == 0)
    assert sweeps[1] >= 1
    np.testing.assert_allclose(U[1], [(3.0 - 0.5) / 2.0, 0, 0])


def test_all_dead_gram_gives_zero_without_nan():
    U, _ = lasso_rows(np.ones((2, 3)), np.zeros((3, 3)), None, 0.1)
    assert np.all(U == 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_preserved(dtype):
    rng = np.random.default_rng(0)
    V = rng.standard_normal((4, 10))
    U, _ = lasso_rows(rng.standard_normal((5, 4)).astype(dtype), V @ V.T, None, 0.3)
    assert U.dtype == dtype
