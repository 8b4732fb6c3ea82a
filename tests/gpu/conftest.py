"""Fixtures of the device tests.

``host_kernels``: the fused CUDA kernel of rlsi.gpu.cd compiled for the host (gcc) and run thread by thread, as
a CuPy RawKernel would run it — what the tests give a backend as ``kernels={"cd_block": ...}``.

``fake_backend``: a "cuda" Backend on a stand-in for CuPy (:class:`FakeCupy`): numpy behind the CuPy names and
signatures rlsi.gpu uses (each checked in CuPy 13.0's and 14.2's source; any other name is refused), CuPy's
streams, events and memory pool, RawKernel compiling the kernel's source for the host, and a CSR matrix
with CuPy's int32 indices and no SpGEMM outside ``phi="sparse"``. Tests using either are skipped without a C
compiler."""

import ctypes
import inspect
import shutil
import subprocess
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

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


# ------------------------------------------------------------------------------------------ the fake CuPy
# What rlsi.gpu and benchmarks/bench_gpu.py call in the ``cupy`` namespace, each name and signature read in
# CuPy 13.0.0's and 14.2.0's source (cupy/__init__.py and the modules it imports from): the fake runs numpy
# behind these signatures and refuses any other name, or a keyword the CuPy function does not take, as a card
# would. A new call in rlsi.gpu fails here until it is checked against CuPy's source and added.
UFUNC = ("x", "*out", "*dtype", "*casting")
UFUNC2 = ("x1", "x2", "*out", "*dtype", "*casting")
CUPY_FUNCTIONS = {
    "abs": UFUNC, "exp": UFUNC, "log": UFUNC, "sqrt": UFUNC, "square": UFUNC, "maximum": UFUNC2, "minimum": UFUNC2,
    "any": ("a", "axis", "out", "keepdims"), "arange": ("start", "stop", "step", "dtype"),
    "array": ("obj", "dtype", "copy", "order", "subok", "ndmin", "*blocking"),
    "asarray": ("a", "dtype", "order", "*blocking"),  # 14 adds ``copy``: 13 has not
    "ascontiguousarray": ("a", "dtype"), "asfortranarray": ("a", "dtype"),
    "bincount": ("x", "weights", "minlength"), "concatenate": ("tup", "axis", "out", "*dtype", "*casting"),
    "count_nonzero": ("a", "axis"), "cumsum": ("a", "axis", "dtype", "out"),
    "diff": ("a", "n", "axis", "prepend", "append"), "empty": ("shape", "dtype", "order"),
    "flatnonzero": ("a",), "nonzero": ("a",), "ones": ("shape", "dtype", "order"),
    "quantile": ("a", "q", "axis", "out", "overwrite_input", "method", "keepdims", "*interpolation"),
    "searchsorted": ("a", "v", "side", "sorter"), "sort": ("a", "axis", "kind"),
    "sum": ("a", "axis", "dtype", "out", "keepdims"), "take": ("a", "indices", "axis", "out"),
    "where": ("condition", "x", "y"), "zeros": ("shape", "dtype", "order"),
    "zeros_like": ("a", "dtype", "order", "subok", "shape"),
}
CUPY_TYPES = ("bool_", "float32", "float64", "int32", "int64", "ndarray", "dtype")
#: NVRTC options the fake RawKernel accepts (NVRTC's documented spellings).
NVRTC_OPTIONS = {"--fmad=false", "--fmad=true", "-std=c++11", "-std=c++14", "-std=c++17", "--use_fast_math"}


def _signature(names):
    params = [inspect.Parameter(n.lstrip("*"), inspect.Parameter.KEYWORD_ONLY if n.startswith("*") else
                                inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None) for n in names]
    params[0] = params[0].replace(default=inspect.Parameter.empty)
    return inspect.Signature(params)


def _checked(name, fn):
    sig = _signature(CUPY_FUNCTIONS[name])

    def call(*args, **kwargs):
        try:
            sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"cupy.{name}{sig}: {exc}") from None
        if name == "searchsorted" and not all(isinstance(a, np.ndarray) for a in args[:2]):
            raise NotImplementedError("cupy.searchsorted: Only int or ndarray are supported for a and v")
        if name in ("zeros", "empty", "ones") and kwargs.get("order", "C") not in ("C", "F"):
            raise ValueError(f"cupy.{name}: order must be 'C' or 'F'")
        return fn(*args, **kwargs)
    return call


class FakeStream:
    """``cupy.cuda.Stream(null=False, non_blocking=False, ptds=False)``: record, wait_event, synchronize, with."""

    def __init__(self, cupy, null=False, non_blocking=False, ptds=False):
        self.cupy, self.waited, self.recorded = cupy, [], 0

    def __enter__(self):
        self.cupy.current.append(self)
        return self

    def __exit__(self, *exc):
        self.cupy.current.pop()
        return False

    def record(self, event=None):
        event = FakeEvent() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        assert isinstance(event, FakeEvent) and event.stream is not None, "wait_event of an event never recorded"
        self.waited.append(event)

    def synchronize(self):
        pass


class FakeEvent:
    """``cupy.cuda.Event(block=False, disable_timing=False, interprocess=False)``."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.stream = None

    def record(self, stream=None):
        self.stream = stream
        if stream is not None:
            stream.recorded += 1

    def synchronize(self):
        pass


class FakePool:
    """``cupy.get_default_memory_pool()``: the calls rlsi.gpu and the device script make. With ``trace`` it
    reports numpy's allocations (tracemalloc): used_bytes the live ones, total_bytes the peak since the last
    ``free_all_blocks``, as a pool that caches every freed block would."""

    def __init__(self, trace=False):
        self.trace, self.limit = trace, 0
        if trace and not tracemalloc.is_tracing():
            tracemalloc.start()

    def used_bytes(self):
        return tracemalloc.get_traced_memory()[0] if self.trace else 0

    def total_bytes(self):
        return tracemalloc.get_traced_memory()[1] if self.trace else 0

    def free_bytes(self):
        return self.total_bytes() - self.used_bytes()

    def free_all_blocks(self, stream=None):
        if self.trace:
            tracemalloc.reset_peak()

    def set_limit(self, size=None, fraction=None):
        assert size is None or fraction is None, "set_limit takes size or fraction"
        self.limit = int(size or 0)

    def get_limit(self):
        return self.limit


class FakeCupy:
    """numpy behind CuPy's names and signatures (see :data:`CUPY_FUNCTIONS`), CuPy's ``cuda`` namespace, memory
    pool and RawKernel (the kernel's source compiled for the host). ``free``: the card's free bytes;
    ``streams``: every Stream made; ``kernels``: (name, options) of every RawKernel made."""

    __version__ = "14.2.0 (fake: numpy)"

    def __init__(self, free=1 << 40, trace=False, kernel_dir=None):
        self.free, self.streams, self.kernels, self.current = int(free), [], [], []
        self._kernel_dir = kernel_dir
        self._pool = FakePool(trace)
        null = FakeStream(self)
        self.cuda = SimpleNamespace(
            Stream=self._stream, Event=FakeEvent, Device=lambda device=None: SimpleNamespace(id=0),
            get_current_stream=lambda device_id=-1: self.current[-1] if self.current else null,
            memory=SimpleNamespace(OutOfMemoryError=type("OutOfMemoryError", (MemoryError,), {})),
            runtime=SimpleNamespace(memGetInfo=lambda: (self.free, 2 * self.free), getDeviceCount=lambda: 1,
                                    getDeviceProperties=lambda device: {"name": b"stand-in card"}))
        self.random = SimpleNamespace(RandomState=FakeRandomState)
        for name in CUPY_FUNCTIONS:
            setattr(self, name, _checked(name, getattr(np, name)))
        for name in CUPY_TYPES:
            setattr(self, name, getattr(np, name))

    def _stream(self, null=False, non_blocking=False, ptds=False):
        s = FakeStream(self, null, non_blocking, ptds)
        self.streams.append(s)
        return s

    def get_default_memory_pool(self):
        return self._pool

    def RawKernel(self, code, name, options=(), backend="nvrtc", *, translate_cucomplex=False,
                  enable_cooperative_groups=False, jitify=False):
        assert isinstance(options, tuple), "RawKernel options must be a tuple (CuPy types it so)"
        assert set(options) <= NVRTC_OPTIONS, f"unknown NVRTC options {set(options) - NVRTC_OPTIONS}"
        self.kernels.append((name, options))
        ctype = name.rsplit("_", 1)[-1]
        return compile_kernels(self._kernel_dir, code, ctype)[ctype]

    def __getattr__(self, name):
        raise AttributeError(f"cupy.{name} is not among the CuPy names checked against CuPy 13.0 and 14.2 "
                             f"(tests/gpu/conftest.py CUPY_FUNCTIONS): check it in CuPy's source, then add it")


class FakeRandomState:
    """``cupy.random.RandomState``: the methods the device script draws with (CuPy 13/14 signatures)."""

    def __init__(self, seed=None):
        self._rs = np.random.RandomState(seed)

    def poisson(self, lam=1.0, size=None, dtype=int):
        return self._rs.poisson(lam, size).astype(dtype)

    def random_sample(self, size=None, dtype=float):
        return self._rs.random_sample(size).astype(dtype)

    def randint(self, low, high=None, size=None, dtype=int):
        return self._rs.randint(low, high, size).astype(dtype)

    def permutation(self, a):
        return self._rs.permutation(a)


class FakeCSR(sp.csr_matrix):
    """``cupyx.scipy.sparse.csr_matrix`` as the fake makes it: int32 indices and row pointers (a wider index
    array is refused where CuPy 13 would wrap it), float32/float64 data, no sparse x sparse product unless the
    fake's ``spgemm`` allows it (cuSPARSE's SpGEMM is in no memory plan)."""

    allow_spgemm = False

    def __init__(self, arg1, shape=None, dtype=None, copy=False, *, maxprint=None):
        if isinstance(arg1, tuple) and len(arg1) == 3:
            data, indices, indptr = arg1
            for a in arg1:
                assert isinstance(a, np.ndarray) and a.ndim == 1, "data, indices and indptr must be 1-D arrays"
            for a in (indices, indptr):
                assert a.dtype == np.int32, f"{a.dtype} indices: the card's CSR indices are int32"
            assert len(data) <= 2 ** 31 - 1, "more entries than int32 indices address"
        super().__init__(arg1, shape=shape, dtype=dtype, copy=copy, maxprint=maxprint)
        if self.nnz > 2 ** 31 - 1 or int(self.indptr[-1]) > 2 ** 31 - 1:
            raise AssertionError("CuPy 13 would wrap these int32 indices (cupy#9490)")
        assert self.dtype in (np.float32, np.float64), f"{self.dtype} data"

    def _matmul_sparse(self, other):
        if not self.allow_spgemm:
            raise AssertionError("sparse x sparse product (cuSPARSE SpGEMM) outside phi='sparse'")
        return super()._matmul_sparse(other)


def fake_sparse(spgemm=False):
    """The ``cupyx.scipy.sparse`` of the fake: its csr_matrix, scipy's ``issparse``, ``diags``, ``coo_matrix``."""
    csr = type("FakeCSR", (FakeCSR,), {"allow_spgemm": spgemm})
    return SimpleNamespace(csr_matrix=csr, issparse=sp.issparse, diags=sp.diags, coo_matrix=sp.coo_matrix)


_COMPILED = {}


def compile_kernels(d, code, ctype):
    """The cd_block kernel ``code`` (for ``ctype``) compiled for the host in folder ``d`` (once per source)."""
    key = (code, ctype)
    if key not in _COMPILED:
        import tempfile
        folder = Path(tempfile.mkdtemp(dir=d))
        src = HOST + code.replace('extern "C"', "") + LAUNCH.format(t=ctype)
        (folder / "k.c").write_text(src)
        subprocess.run([CC, "-O1", "-shared", "-fPIC", "-std=c99", "-ffp-contract=off", "-o", str(folder / "k.so"),
                        str(folder / "k.c")], check=True)
        _COMPILED[key] = HostKernel(ctypes.CDLL(str(folder / "k.so")), ctype)
    return {ctype: _COMPILED[key]}


def fake_backend_class():
    from rlsi.gpu.backend import Backend

    class FakeBackend(Backend):
        """A "cuda" Backend on the fake CuPy, whose device matrices are the fake's CSR matrices."""

        def holds(self, A):
            return isinstance(A, FakeCSR)
    return FakeBackend


@pytest.fixture
def fake_backend(tmp_path_factory):
    """``make(free=..., dtype=..., trace=False, spgemm=False, layout="F")``: a Backend named "cuda" on the fake
    CuPy (its ``xp`` is the FakeCupy, so ``be.xp.streams`` etc. are there for the test); ``be.sparse.csr_matrix``
    puts a matrix "on the card"."""
    if CC is None:
        pytest.skip("no C compiler to build the CUDA kernel's source for the host")
    d = tmp_path_factory.mktemp("fake_kernels")
    traced = []

    def make(free=1 << 40, dtype=np.float64, trace=False, spgemm=False, layout="F"):
        traced.append(trace)
        return fake_backend_class()("cuda", FakeCupy(free, trace, d), fake_sparse(spgemm), np.dtype(dtype),
                                    layout=layout)
    yield make
    if any(traced) and tracemalloc.is_tracing():
        tracemalloc.stop()
