"""RLSI on a GPU: the device placement of the RLSI problem (``BatchRLSI(device="cuda")``,
``OnlineRLSI(device="cuda")``), written against an array module so that the same code runs on CuPy and, for the
tests, on numpy/scipy (``device="numpy"``). See docs/gpu.md.

Modules: :mod:`~rlsi.gpu.backend` (the array module, device names), :mod:`~rlsi.gpu.cd` (blocked cyclic
coordinate descent), :mod:`~rlsi.gpu.corpus` (row blocks, streaming, screening), :mod:`~rlsi.gpu.prefetch`
(blocks moved ahead of use on one copy stream), :mod:`~rlsi.gpu.memory` (the memory plan),
:mod:`~rlsi.gpu.topics` (int32 CSR topics and their dense blocks), :mod:`~rlsi.gpu.batch` (the batch problem),
:mod:`~rlsi.gpu.online` (online RLSI's stream), :mod:`~rlsi.gpu.placement` (the placement: registered as ``"cuda"``
and ``"numpy"`` when this package is imported; the learners never import it). Importing this package never
imports CuPy.
"""

from .backend import DEVICES, cuda_available, numpy_backend, resolve  # noqa: F401
from .placement import DevicePlacement  # noqa: F401  (registers the device placements)
