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
setup temporaries             8 nnz                                        the squares of X's entries for
                                                                           ‖X‖² (float64), freed at once
per-term arrays               8 M + 16 M with ℓ1 topics                    document frequencies; the
                                                                           screening's row norms and bounds
W (document vectors)          N K b, twice during the V-step               old and new W side by side (the
                                                                           screening's drift of W is taken
                                                                           there: no copy of W is kept)
U (topics)                    sparse: 3 nnz(U) (b + 4) + (M + 1) 4         previous U, new blocks, stacked
                              dense: 2 M K b                               previous U and the new one
R blocks (U-step)             3 E b per worker                             R rows, warm start, solution
document blocks (V-step)      2 E 8 per worker                             Φ rows, solver temporary
dense copy of U (V-step)      M K b with "auto" and sparse topics          ``RLSIProblem.v_step_topics``
Gram matrices                 8 K² · 6                                     S, G, their prepared forms
============================  ===========================================  ==============================

``E`` is the entries of a block (``rlsi.models.tasks.block_rows``: about 4M). nnz(U) is not known
before the fit: ``topic_density`` (default 0.05, the share beyond which ``topic_representation="auto"``
switches to dense topics when they fit in ``DENSE_MAX_BYTES``) bounds it. The peak is the largest of the
phases (setup, U-step, V-step); ``baseline`` adds what the process holds already (the interpreter, the
libraries, the compiled kernels: measure it with :func:`current_rss`). The search for λ₁ of
``target_terms_per_topic`` is the phase "λ1 search" (``search=True``: the fit's one copy of D, shared by
the search's problems, and up to three copies of W at once). Not counted: the allocator's fragmentation.

Why a memory limit does not size the blocks. The blocks are the one part of the peak that a block size
could bound, and they are small: ``E`` = 4M entries make 3 E b = 96 MB of R blocks in float64 (48 MB in
float32; 2 E 8 = 64 MB of document blocks) per worker, about 1 % of the peak of the paper's web fit (N = 1.6M, M = 7M, K = 500:
X, D and W are GBs each; see the table). Smaller blocks would save at most that and cost time (more
tasks, shorter products); the levers that matter are the fit dtype (float32 halves X, D and W), K, and
the memory of the machine. So ``--memory-limit`` refuses a fit that would not fit (with the components)
instead of resizing blocks.

:func:`estimate_online_fit` estimates one pass of :class:`rlsi.models.OnlineRLSI` the same way (its
docstring has its model): the statistics R (M x K, float64) dominate at a large vocabulary.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

__all__ = ["MemoryEstimate", "estimate_batch_fit", "estimate_for", "estimate_online_fit", "batch_terms", "current_rss", "peak_rss", "available_memory",
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
                       n_workers=1, init="docs", search=False, baseline=0) -> MemoryEstimate:
    """Estimate the peak memory of ``BatchRLSI(n_components, ...).fit(X)`` for X of this size (see the
    module docstring for the model). ``n_workers``: blocks solved at once (the thread executor's
    workers; 1 for the default serial executor). ``search``: the fit searches λ₁ for
    ``target_terms_per_topic`` first (:mod:`rlsi.models.sparsity`): its own transposed copy, plus the
    problems of two successive rounds side by side (three copies of D at once; an upper bound read from
    the code, not measured). Returns a :class:`MemoryEstimate`."""
    from .batch import DENSE_ABOVE, DENSE_MAX_BYTES
    from .tasks import block_rows

    N, M, nnz, K = int(n_docs), int(n_terms), int(nnz), int(n_components)
    b = np.dtype(dtype).itemsize
    i = np.dtype(index_dtype).itemsize if index_dtype is not None else (4 if max(nnz, M) < 2**31 else 8)
    X = nnz * (b + i) + (N + 1) * i
    D = nnz * (b + i) + (M + 1) * i
    W = N * K * b
    l1 = topic_penalty in ("l1", "nonneg_l1")
    per_term = 8 * M + (16 * M if l1 else 0)  # df; the screening's row norms and bounds
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
    r_blocks = 3 * min(rows, M) * K * b * min(workers, -(-M // rows))  # R rows, warm start, solution: fit dtype
    # Φ rows and the solver's temporary: the solution goes straight into W's rows (tasks.doc_block's out=)
    v_blocks = 2 * min(rows, N) * K * 8 * min(workers, -(-N // rows))
    gram = 6 * 8 * K * K
    init_tmp = 2 * 8 * N * K if init == "random" else 0
    base = int(baseline)

    phases = {
        "start": {"X": X, "W": W, "initial W temporaries": init_tmp, "document blocks": v_blocks},
        # ‖X‖² squares X's entries into float64 while D and the document frequencies exist
        "setup": {"X": X, "transposed copy": D, "W": W, "setup temporaries": 8 * nnz, "per-term arrays": 8 * M},
        "U-step": {"X": X, "transposed copy": D, "W": W, "per-term arrays": per_term, "U": U_step,
                   "R blocks": r_blocks, "Gram": gram},
        "V-step": {"X": X, "transposed copy": D, "W": 2 * W, "per-term arrays": per_term, "U": U_kept,
                   "dense copy of U": v_copy, "document blocks": v_blocks, "Gram": gram},
    }
    if search:
        phases["λ1 search"] = {"X": X, "transposed copy": D, "W": 3 * W, "per-term arrays": 2 * per_term,
                               "U": U_step, "R blocks": r_blocks, "Gram": gram}
    for comps in phases.values():
        comps["process before the fit"] = base
    totals = {name: sum(c.values()) for name, c in phases.items()}
    phase = max(totals, key=totals.get)
    return MemoryEstimate(peak=totals[phase], phase=phase, components=phases[phase], phases=totals)


def estimate_online_fit(n_docs, n_terms, nnz, n_components, *, batch_size=256, dtype=np.float64,
                        index_dtype=None, topic_density=0.05, batch_terms=None, stats_dtype=None, n_inner=1,
                        baseline=0) -> MemoryEstimate:
    """Estimate the peak memory of ``OnlineRLSI(n_components, batch_size=..., n_inner=...).fit(X)`` (one or more
    passes over X, N x M with nnz entries; ℓ1 topics). An upper-bound model, read from ``online.py``,
    ``active_rows.py`` and ``stats.py`` (keep in step with them):

    * X: as for the batch fit (memory-mapped pages count once read); the statistics ``R``: M x K of
      ``stats_dtype`` (``OnlineRLSI(stats_dtype=None)`` follows X: float32 for float32 X) and ``S`` (the
      re-scaling is lazy: no second R);
    * topics, with nnz(U) <= ``topic_density`` M K and s the itemsize of R: dense (M K 8 <=
      ``DENSE_MAX_BYTES``): U, solved in place, and the live rows of before the mini-batch as CSR
      (``nnz(U) (8 + 4) + 8 M``); else CSR: the old and the new topics and the solved blocks' pieces
      ``3 nnz(U) (s + 4) + 4 M`` plus one block of solved rows (``SOLVE_ENTRIES`` s); the row maxima and
      live rows carried between mini-batches (9 M);
    * one mini-batch: its c terms (``batch_terms``; default the bound min(M, batch_size · nnz / N), far
      above the distinct terms of a Zipfian batch: :func:`estimate_for` counts them on X): with ξ =
      ``n_inner`` > 1 the batch's rows of R before it (c x K float64; ξ = 1 adds to R in place); X_bᵀ
      (nnz of the batch, 12 bytes each); W, Φ: 2 η K 8; the term mask and remap (9 M).

    Returns a :class:`MemoryEstimate` with the single phase ``"mini-batch"``."""
    from .active_rows import SOLVE_ENTRIES
    from .batch import DENSE_MAX_BYTES

    N, M, nnz, K, eta = int(n_docs), int(n_terms), int(nnz), int(n_components), int(batch_size)
    b = np.dtype(dtype).itemsize
    i = np.dtype(index_dtype).itemsize if index_dtype is not None else (4 if max(nnz, M) < 2**31 else 8)
    X = nnz * (b + i) + (N + 1) * i
    if stats_dtype is None:
        stats_dtype = np.float32 if np.dtype(dtype) == np.float32 else np.float64
    s = np.dtype(stats_dtype).itemsize
    R = M * K * s + 8 * K * K
    nnz_u = int(float(topic_density) * M * K)
    dense = M * K * 8 <= DENSE_MAX_BYTES
    topics = (M * K * 8 + nnz_u * 12 + 8 * M if dense else
              3 * nnz_u * (s + 4) + 4 * (M + 1) + min(M * K, SOLVE_ENTRIES) * s) + 9 * M
    c = min(M, -(-eta * nnz // max(N, 1)) if batch_terms is None else int(batch_terms))
    batch_nnz = -(-min(eta, N) * nnz // max(N, 1))
    batch = (c * K * 8 if int(n_inner) > 1 else 0) + 12 * batch_nnz + 2 * min(eta, N) * K * 8 + 9 * M
    comps = {"X": X, "statistics R, S": R, "U": topics, "mini-batch": batch, "process before the fit": int(baseline)}
    total = sum(comps.values())
    return MemoryEstimate(peak=total, phase="mini-batch", components=comps, phases={"mini-batch": total})


def batch_terms(X, batch_size, samples=8):
    """The most distinct terms (columns) in one of ``samples`` mini-batches of ``batch_size`` rows of the CSR
    X, spread evenly over it (reads only those rows: cheap on a memory-mapped matrix)."""
    N = X.shape[0]
    starts = np.unique(np.linspace(0, max(0, N - batch_size), num=samples).astype(np.int64))
    most = 0
    for a in starts:
        cols = np.asarray(X.indices[X.indptr[a]: X.indptr[min(N, a + batch_size)]])
        most = max(most, len(np.unique(cols)))
    return most


def estimate_for(model, X, *, baseline=0, topic_density=0.05) -> MemoryEstimate:
    """:func:`estimate_batch_fit` for ``model.fit(X)`` (a :class:`BatchRLSI` and a CSR matrix), or
    :func:`estimate_online_fit` for an :class:`OnlineRLSI`."""
    from .executor import ThreadExecutor
    from .online import OnlineRLSI

    if isinstance(model, OnlineRLSI):
        N, M = X.shape
        return estimate_online_fit(N, M, X.nnz, model.n_components, batch_size=model.batch_size, dtype=X.dtype,
                                   index_dtype=X.indices.dtype, topic_density=topic_density,
                                   batch_terms=batch_terms(X, model.batch_size),
                                   stats_dtype=model._stats_dtype(X.dtype), n_inner=model.n_inner,
                                   baseline=baseline)

    executor = getattr(model, "executor", None)
    workers = 1
    if executor == "threads" or isinstance(executor, ThreadExecutor):
        workers = getattr(executor, "n_workers", None) or os.cpu_count() or 1
    N, M = X.shape
    return estimate_batch_fit(N, M, X.nnz, model.n_components, dtype=X.dtype, index_dtype=X.indices.dtype,
                              topic_penalty=model.topic_penalty, topic_representation=model.topic_representation,
                              topic_density=topic_density, n_workers=workers, init=model.init,
                              search=getattr(model, "target_terms_per_topic", None) is not None, baseline=baseline)
