"""The fused CUDA kernel of the in-block updates, compiled for the host (gcc) and run thread by thread:
the same solutions as the array-operation path and the host kernel. Skipped without a C compiler."""

import numpy as np
import pytest

from rlsi.gpu.backend import numpy_backend
from rlsi.gpu.cd import solve_rows
from rlsi.kernels.lasso import lasso_rows

@pytest.fixture
def kernels(host_kernels):
    return host_kernels


def problem(n=70, K=13, seed=0):
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((K, 3 * K))
    V[5] = 0.0  # a dead topic
    return rng.standard_normal((n, K)) * 2.0, V @ V.T, rng.standard_normal((n, K))


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("block", [1, 4, 32])
def test_fused_equals_array_path_and_host_kernel(kernels, positive, block):
    R, S, U0 = problem()
    fused = numpy_backend(np.float64, kernels={"cd_block": kernels["double"]})
    plain = numpy_backend(np.float64)
    for max_iter, work in ((3, None), (9, 13 * 5.0), (200, None)):
        args = dict(max_iter=max_iter, tol=1e-6, positive=positive, block=block, max_work=work)
        U, sw = solve_rows(fused, R, S, U0, 0.6, kernel="fused", **args)
        V, sv = solve_rows(plain, R, S, U0, 0.6, kernel="xp", **args)
        np.testing.assert_allclose(U, V, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(sw, sv)
        if max_iter < 10:
            H, sh = lasso_rows(R, S, U0, 1.2, max_iter=max_iter, tol=1e-6, positive=positive, max_work=work)
            np.testing.assert_allclose(U, H, rtol=0, atol=1e-12)
            np.testing.assert_array_equal(sw, sh)


def test_fused_float32(kernels):
    R, S, U0 = problem(seed=1)
    fused = numpy_backend(np.float32, kernels={"cd_block": kernels["float"]})
    U, _ = solve_rows(fused, R, S, U0, 0.6, max_iter=4, tol=1e-6, kernel="fused")
    V, _ = solve_rows(numpy_backend(np.float32), R, S, U0, 0.6, max_iter=4, tol=1e-6, kernel="xp")
    assert U.dtype == np.float32
    np.testing.assert_allclose(U, V, rtol=0, atol=1e-5)


def test_fused_needs_a_kernel():
    R, S, U0 = problem()
    with pytest.raises(ValueError, match="kernel='fused'"):
        solve_rows(numpy_backend(np.float64), R, S, U0, 0.6, max_iter=2, tol=1e-6, kernel="fused")
