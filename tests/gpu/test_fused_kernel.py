"""The fused CUDA kernel of the in-block updates, compiled for the host (gcc) and run thread by thread:
the same solutions as the array-operation path and the host kernel. Skipped without a C compiler."""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from rlsi.gpu.backend import numpy_backend
from rlsi.gpu.cd import fused_source, solve_rows
from rlsi.kernels.lasso import lasso_rows

CC = shutil.which("gcc") or shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build the CUDA kernel's source for the host")

HOST = """
struct dim { long long x; };
static struct dim blockIdx, blockDim, threadIdx;
#define __global__
#define __restrict__ restrict
"""
LAUNCH = """
void launch_{t}(long long grid, long long threads, const {t}* R, {t}* U, {t}* Gt, const {t}* S, const double* diag,
                long long na, int K, int s, int e, {t} half, int positive, {t}* md, {t}* mu, int* ch)
{{
    blockDim.x = threads;
    for (long long g = 0; g < grid; ++g)
        for (long long t = 0; t < threads; ++t) {{
            blockIdx.x = g; threadIdx.x = t;
            cd_block_{t}(R, U, Gt, S, diag, na, K, s, e, half, positive, md, mu, ch);
        }}
}}
"""


class HostKernel:
    """``k(grid, block, args)`` like a CuPy RawKernel, running every thread of the grid in order."""

    def __init__(self, lib, ctype):
        self.fn = getattr(lib, f"launch_{ctype}")
        real = ctypes.c_float if ctype == "float" else ctypes.c_double
        p = ctypes.c_void_p
        self.fn.argtypes = [ctypes.c_longlong, ctypes.c_longlong, p, p, p, p, p, ctypes.c_longlong, ctypes.c_int,
                            ctypes.c_int, ctypes.c_int, real, ctypes.c_int, p, p, p]
        self.fn.restype = None

    def __call__(self, grid, block, args):
        R, U, Gt, S, diag, na, K, s, e, half, positive, md, mu, ch = args
        for a, order in ((R, "F"), (U, "F"), (Gt, "C"), (S, "C"), (diag, "C"), (md, "C"), (mu, "C"), (ch, "C")):
            assert a.flags[f"{order}_CONTIGUOUS"], "the kernel's layout"
        ptr = [a.ctypes.data for a in (R, U, Gt, S, diag)]
        self.fn(grid[0], block[0], *ptr, int(na), int(K), int(s), int(e), float(half), int(positive),
                md.ctypes.data, mu.ctypes.data, ch.ctypes.data)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    d = tmp_path_factory.mktemp("fused")
    src = HOST + "".join(fused_source(t).replace('extern "C"', "") + LAUNCH.format(t=t) for t in ("float", "double"))
    (d / "k.c").write_text(src)
    subprocess.run([CC, "-O1", "-shared", "-fPIC", "-std=c99", "-ffp-contract=off", "-o", str(d / "k.so"),
                    str(d / "k.c")], check=True)
    lib = ctypes.CDLL(str(d / "k.so"))
    return {"float": HostKernel(lib, "float"), "double": HostKernel(lib, "double")}


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
