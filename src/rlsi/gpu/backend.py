"""The array module the device code runs on: CuPy on a CUDA card, or numpy/scipy on the host.

Every device step (:mod:`rlsi.gpu.cd`, :mod:`rlsi.gpu.corpus`, :mod:`rlsi.gpu.batch`, :mod:`rlsi.gpu.online`)
is written against a :class:`Backend`: ``xp`` (``cupy`` or ``numpy``), ``sparse`` (``cupyx.scipy.sparse`` or
``scipy.sparse``), the compute dtype, and the few things that differ between the two (moving arrays, free
memory, the layout of dense operands: cuSPARSE's SpMM reads column-major arrays, scipy's row-major ones, and
either copies the other kind). The same code therefore runs on numpy, which is how the test suite exercises it without a
card, and on CuPy, where the products are cuSPARSE/cuBLAS calls.

Devices, as the ``device`` parameter of :class:`rlsi.BatchRLSI` and :class:`rlsi.OnlineRLSI` names them
(strings, so that a model's parameters stay JSON for :mod:`rlsi.io`):

==================  =====================================================================================
``"cpu"``           the host path of the estimators (numba kernels); no Backend
``"cuda"``          CuPy on the current CUDA card, float32 (``"cuda:float32"``, ``"cuda:float64"``)
``"numpy"``         the device code path on numpy/scipy, float32 (``"numpy:float32"``, ``"numpy:float64"``):
                    for tests and debugging; it is slower than ``"cpu"``
==================  =====================================================================================

``"cuda"`` without CuPy, or without a usable card, ends in one :class:`rlsi.errors.RLSIError` that names what
is missing and how to install it (``pip install "rlsi[gpu]"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..errors import RLSIError
from ..registry import DEVICES as _DEVICES

#: The most entries of a CSR matrix on the card: int32 indices and row pointers.
INT32_MAX = 2 ** 31 - 1

#: The accepted ``device`` strings (:data:`rlsi.registry.DEVICES`: the parameter check and its message derive from
#: the keys).
DEVICES = _DEVICES

INSTALL_HINT = 'pip install "rlsi[gpu]" (CuPy for CUDA 12, cupy-cuda12x; with a CUDA 13 driver cupy-cuda13x works too)'


@dataclass
class Backend:
    """One array module and its compute dtype.

    name : "cuda" or "numpy"; xp : the array module; sparse : its scipy.sparse-like module;
    dtype : numpy dtype of the device arrays (float32 by default: the card's fast path).
    """

    name: str
    xp: object
    sparse: object
    dtype: np.dtype = field(default_factory=lambda: np.dtype(np.float32))
    #: Compiled kernels the backend brings (name -> callable ``k(grid, block, args)`` as a CuPy RawKernel);
    #: empty: CuPy compiles its own, numpy uses array operations.
    kernels: dict = field(default_factory=dict)
    #: Memory order of the dense right-hand sides of sparse x dense products (W, blocks of U): "F" for
    #: cuSPARSE (CuPy copies anything else to column-major first), "C" for scipy.
    layout: str = "C"

    @property
    def is_cuda(self):
        return self.name == "cuda"

    # ------------------------------------------------------------------ moving data
    def asarray(self, a, dtype=None):
        """A device array of ``a`` (host or device) in ``dtype`` (the backend's by default)."""
        return self.xp.asarray(a, dtype=self.dtype if dtype is None else dtype)

    def to_host(self, a):
        """A numpy array (or scipy CSR for a sparse matrix) of a device array; numpy input as it is."""
        if self.is_cuda:
            if hasattr(a, "get"):
                return a.get()
            return a
        return a

    def csr(self, A, dtype=None):
        """A device CSR matrix of a host scipy sparse matrix (or of a device one), in ``dtype``; on a card with
        int32 indices and row pointers (CuPy 13 casts wider ones to int32 unchecked: a matrix of 2³¹ entries or
        more is refused here)."""
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        if self.is_cuda and not self.holds(A):  # a host matrix (scipy or dense): moved
            A = sp.csr_matrix(A)
            if A.nnz > INT32_MAX:
                raise RLSIError(f"a block of {A.nnz} non-zeros cannot go to the card: CSR matrices there have int32 "
                                f"indices (at most {INT32_MAX} entries); use smaller blocks or device='cpu'")
            return self.sparse.csr_matrix(
                (self.xp.asarray(A.data, dtype=dtype), self.xp.asarray(A.indices, dtype=np.int32),
                 self.xp.asarray(A.indptr, dtype=np.int32)), shape=A.shape)
        A = self.sparse.csr_matrix(A)
        return A.astype(dtype) if A.dtype != dtype else A

    def holds(self, A):
        """Whether ``A`` is a sparse matrix of this device (a CuPy matrix on the card), not a host one."""
        return self.is_cuda and self.sparse.issparse(A) and not sp.issparse(A)

    def scalar(self, a):
        """A Python float of a 0-d device array (one device-to-host copy on CuPy)."""
        return float(a)

    # ------------------------------------------------------------------ device facts
    def free_bytes(self):
        """Free device memory in bytes: the card's free memory plus what CuPy's pool holds unused, within the
        pool's limit when one is set (``MemoryPool.set_limit``); None on numpy (host memory is the caller's)."""
        if not self.is_cuda:
            return None
        free, _total = self.xp.cuda.runtime.memGetInfo()
        pool = self.xp.get_default_memory_pool()
        free = int(free) + int(pool.free_bytes())
        limit = int(pool.get_limit())
        return free if limit == 0 else max(0, min(free, limit - int(pool.used_bytes())))

    def synchronize(self):
        if self.is_cuda:
            self.xp.cuda.get_current_stream().synchronize()

    def describe(self):
        if not self.is_cuda:
            return f"numpy {np.__version__} on the host ({self.dtype.name})"
        dev = self.xp.cuda.Device()
        props = self.xp.cuda.runtime.getDeviceProperties(dev.id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        return f"{name} (CuPy {self.xp.__version__}, {self.dtype.name})"


def numpy_backend(dtype=np.float32, kernels=None):
    """The device code path on numpy/scipy (what the test suite runs); ``kernels``: see :class:`Backend`."""
    return Backend("numpy", np, sp, np.dtype(dtype), dict(kernels or {}))


def _import_cupy():
    try:
        import cupy  # noqa: F401
        import cupyx.scipy.sparse as cusparse
    except ImportError as exc:
        raise RLSIError(f"device='cuda' needs CuPy, which is not installed ({exc}); install it with "
                        f"{INSTALL_HINT}, or use device='cpu'") from None
    return cupy, cusparse


def cuda_backend(dtype=np.float32):
    """CuPy on the current card; one clear RLSIError when CuPy or a usable card is missing."""
    cupy, cusparse = _import_cupy()
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDA driver missing or broken: CuPy raises its own runtime errors
        raise RLSIError(f"device='cuda': CuPy is installed but no CUDA card can be used ({exc}); check the "
                        f"NVIDIA driver (nvidia-smi), or use device='cpu'") from None
    if n < 1:
        raise RLSIError("device='cuda': CuPy is installed but no CUDA card is visible (0 devices; check "
                        "CUDA_VISIBLE_DEVICES and nvidia-smi), or use device='cpu'")
    return Backend("cuda", cupy, cusparse, np.dtype(dtype), layout="F")


def cuda_available():
    """Whether device='cuda' can run here (CuPy importable and a card visible); never raises."""
    try:
        cuda_backend()
    except RLSIError:
        return False
    return True


def resolve(device, *, param="device"):
    """The Backend of a ``device`` value (a name of :data:`DEVICES` other than "cpu", or a Backend)."""
    if isinstance(device, Backend):
        return device
    if not isinstance(device, str) or device not in DEVICES or device == "cpu":
        choices = ", ".join(repr(k) for k in DEVICES)
        raise RLSIError(f"{param}={device!r} is not a device; choose one of {choices}")
    kind, _, dtype = device.partition(":")
    dtype = np.dtype(dtype or "float32")
    return cuda_backend(dtype) if kind == "cuda" else numpy_backend(dtype)


def is_device(device):
    """True when ``device`` selects the device code path (anything but "cpu" / None)."""
    return device is not None and not (isinstance(device, str) and device == "cpu")
