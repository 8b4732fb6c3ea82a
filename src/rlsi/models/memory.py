"""How much memory a batch RLSI fit needs, by component, before it starts (``rlsi fit --memory-limit``).

The estimate follows what :class:`rlsi.models.BatchRLSI` allocates (read from ``batch.py``, ``steps.py``,
``tasks.py`` and ``screening.py``; keep in step with them). Shapes: X is N x M with nnz entries of
``b`` bytes and indices of ``i`` bytes (int32 or int64), K topics.

============================  ===========================================  ==============================
component                     bytes                                        where
============================  ===========================================  ==============================
X                             nnz (b + i) + (N + 1) i                      the input (memory-mapped: its
                                                                           pages are resident once read)
transposed copy D = Xᵀ        nnz (b + i) + (M + 1) i                      ``RLSIProblem.D`` (R = D W)
setup temporaries             16 nnz + 24 M                                row norms of D for screening
                                                                           (row ids int64 + squares
                                                                           float64), freed after setup
W (document vectors)          N K b, twice during the V-step               old and new W side by side
screening copy of W           8 N K + 16 M                                 ``ScreenedBatchR`` (ℓ1 topics)
U (topics)                    sparse: 3 nnz(U) (b + 4) + (M + 1) 4         previous U, new blocks, stacked
                              dense: 2 M K b                               previous U and the new one
R blocks (U-step)             3 E 8 per worker                             R rows, warm start, solution
document blocks (V-step)      2 E 8 per worker                             Φ rows, solver temporary
dense copy of U (V-step)      M K b with "auto" and sparse topics          ``RLSIProblem.v_step_topics``
Gram matrices                 8 K² · 6                                     S, G, their prepared forms
============================  ===========================================  ==============================

``E`` is the entries of a block (``rlsi.models.tasks.block_rows``: about 4M). nnz(U) is not known
before the fit: ``topic_density`` (default 0.05, the share beyond which ``topic_representation="auto"``
switches to dense topics when they fit in ``DENSE_MAX_BYTES``) bounds it. The peak is the largest of the
phases (setup, U-step, V-step); ``baseline`` adds what the process holds already (the interpreter, the
libraries, the compiled kernels: measure it with :func:`current_rss`). Not counted: the search for λ₁ of
``target_terms_per_topic`` (a few extra U-steps, same components), and the allocator's fragmentation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

__all__ = ["MemoryEstimate", "estimate_batch_fit", "estimate_for", "current_rss", "peak_rss", "available_memory",
           "format_bytes", "parse_bytes"]


@dataclass
class MemoryEstimate:
    """``peak`` bytes (the largest phase), ``phase`` (its name), ``components`` (bytes of each component at
    that phase, the baseline included), ``phases`` (peak bytes of every phase)."""

    peak: int
    phase: str
    components: dict = field(default_factory=dict)
    phases: dict = field(default_factory=dict)

    def describe(self) -> str:
        """One line: the peak and its components, largest first."""
        parts = ", ".join(f"{name} {format_bytes(v)}" for name, v in
                          sorted(self.components.items(), key=lambda kv: -kv[1]) if v > 0)
        return f"about {format_bytes(self.peak)} at its peak ({self.phase}: {parts})"


def format_bytes(n) -> str:
    """``1.5 GB`` style (powers of 1024)."""
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"  # pragma: no cover


_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2, "g": 1024**3, "gb": 1024**3,
          "t": 1024**4, "tb": 1024**4}


def parse_bytes(text) -> int:
    """``"20G"``, ``"512MB"``, ``"1.5 GB"``, ``"1000000"`` -> bytes (powers of 1024); ValueError otherwise."""
    s = str(text).strip().lower().replace(" ", "").replace("ib", "b")
    num = s.rstrip("kmgtb")
    unit = s[len(num):]
    try:
        value = float(num) * _UNITS[unit]
    except (KeyError, ValueError):
        raise ValueError(f"{text!r} is not a size (examples: 20G, 512M, 1.5GB)") from None
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{text!r} must be a positive size")
    return int(value)


def current_rss() -> int:
    """Resident memory of this process now (bytes); 0 where it cannot be read."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def peak_rss() -> int:
    """Peak resident memory of this process so far (bytes): ``VmHWM`` of /proc/self/status, which starts
    afresh at ``exec`` (``ru_maxrss`` does not: on Linux a child started by fork/vfork + exec inherits the
    parent's peak), else ``ru_maxrss``."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def available_memory():
    """Memory the system can give (``MemAvailable`` of /proc/meminfo, bytes), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def estimate_batch_fit(n_docs, n_terms, nnz, n_components, *, dtype=np.float64, index_dtype=None,
                       topic_penalty="l1", topic_representation="auto", topic_density=0.05, block_entries=None,
                       n_workers=1, init="docs", baseline=0) -> MemoryEstimate:
    """Estimate the peak memory of ``BatchRLSI(n_components, ...).fit(X)`` for X of this size (see the
    module docstring for the model). ``n_workers``: blocks solved at once (the thread executor's
    workers; 1 for the default serial executor). Returns a :class:`MemoryEstimate`."""
    from .batch import DENSE_ABOVE, DENSE_MAX_BYTES
    from .tasks import block_rows

    N, M, nnz, K = int(n_docs), int(n_terms), int(nnz), int(n_components)
    b = np.dtype(dtype).itemsize
    i = np.dtype(index_dtype).itemsize if index_dtype is not None else (4 if max(nnz, M) < 2**31 else 8)
    X = nnz * (b + i) + (N + 1) * i
    D = nnz * (b + i) + (M + 1) * i
    W = N * K * b
    l1 = topic_penalty in ("l1", "nonneg_l1")
    screen = (8 * N * K + 16 * M) if l1 else 0
    dense_ok = M * K * b <= DENSE_MAX_BYTES
    density = float(topic_density)
    dense = topic_representation == "dense" or (topic_representation == "auto" and dense_ok and (
        not l1 or density > DENSE_ABOVE))
    if dense:
        U_step, U_kept = 2 * M * K * b, M * K * b
    else:
        nnz_u = int(density * M * K)
        U_kept = nnz_u * (b + 4) + (M + 1) * 4
        U_step = 3 * nnz_u * (b + 4) + (M + 1) * 4
    # "auto" with sparse topics: the V-step takes a dense copy of U once the sparse product X U would cost
    # more (batch.SPARSE_WORK_SHARE: common terms' topics fill first, so this happens at a few % density)
    v_copy = M * K * b if (topic_representation == "auto" and dense_ok and not dense) else 0
    rows = block_rows(K, block_entries)
    workers = max(1, int(n_workers))
    r_blocks = 3 * min(rows, M) * K * 8 * min(workers, -(-M // rows))
    # Φ rows and the solver's temporary: the solution goes straight into W's rows (tasks.doc_block's out=)
    v_blocks = 2 * min(rows, N) * K * 8 * min(workers, -(-N // rows))
    gram = 6 * 8 * K * K
    init_tmp = 2 * 8 * N * K if init == "random" else 0
    base = int(baseline)

    phases = {
        "start": {"X": X, "W": W, "initial W temporaries": init_tmp, "document blocks": v_blocks},
        "setup": {"X": X, "transposed copy": D, "W": W, "setup temporaries": 16 * nnz + 24 * M},
        "U-step": {"X": X, "transposed copy": D, "W": W, "screening copy of W": screen, "U": U_step,
                   "R blocks": r_blocks, "Gram": gram},
        "V-step": {"X": X, "transposed copy": D, "W": 2 * W, "screening copy of W": screen, "U": U_kept,
                   "dense copy of U": v_copy, "document blocks": v_blocks, "Gram": gram},
    }
    for comps in phases.values():
        comps["process before the fit"] = base
    totals = {name: sum(c.values()) for name, c in phases.items()}
    phase = max(totals, key=totals.get)
    return MemoryEstimate(peak=totals[phase], phase=phase, components=phases[phase], phases=totals)


def estimate_for(model, X, *, baseline=0, topic_density=0.05) -> MemoryEstimate:
    """:func:`estimate_batch_fit` for ``model.fit(X)`` (a :class:`BatchRLSI` and a CSR matrix)."""
    from .executor import ThreadExecutor

    executor = getattr(model, "executor", None)
    workers = 1
    if executor == "threads" or isinstance(executor, ThreadExecutor):
        workers = getattr(executor, "n_workers", None) or os.cpu_count() or 1
    N, M = X.shape
    return estimate_batch_fit(N, M, X.nnz, model.n_components, dtype=X.dtype, index_dtype=X.indices.dtype,
                              topic_penalty=model.topic_penalty, topic_representation=model.topic_representation,
                              topic_density=topic_density, n_workers=workers, init=model.init, baseline=baseline)
