"""Fixture ``host_kernels``: the fused CUDA kernel of rlsi.gpu.cd compiled for the host (gcc) and run thread by
thread, as a CuPy RawKernel would run it — what the tests give a backend as ``kernels={"cd_block": ...}``.
Tests using it are skipped without a C compiler."""

import ctypes
import shutil
import subprocess

import pytest

from rlsi.gpu.cd import fused_source

CC = shutil.which("gcc") or shutil.which("cc")

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


def build_kernels(d):
    """Compile the kernel for float and double into folder ``d``; returns {"float": k, "double": k}."""
    src = HOST + "".join(fused_source(t).replace('extern "C"', "") + LAUNCH.format(t=t) for t in ("float", "double"))
    (d / "k.c").write_text(src)
    subprocess.run([CC, "-O1", "-shared", "-fPIC", "-std=c99", "-ffp-contract=off", "-o", str(d / "k.so"),
                    str(d / "k.c")], check=True)
    lib = ctypes.CDLL(str(d / "k.so"))
    return {"float": HostKernel(lib, "float"), "double": HostKernel(lib, "double")}


@pytest.fixture(scope="session")
def host_kernels(tmp_path_factory):
    if CC is None:
        pytest.skip("no C compiler to build the CUDA kernel's source for the host")
    return build_kernels(tmp_path_factory.mktemp("fused"))
