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
gram blocks                   8 P K² + 8 min(T, P) min(N, G) K, the        ``tasks.gram(W)`` for S = WᵀW:
                              second term where W is float32 (P, G:        P partial grams; each of T
                              ``blas_rows.GRAM_PARTS``, ``GRAM_SUB_ROWS``; threads converts G rows at a
                              T: numba's threads)                          time (phase "S of the initial
                                                                           W"; no float64 copy of W)
per-term arrays               8 M + 16 M with ℓ1 topics                    document frequencies; the
                                                                           screening's row norms and bounds
W (document vectors)          N K b, twice during the V-step               old and new W side by side (the
                                                                           screening's drift of W is taken
                                                                           there: no copy of W is kept)
U (topics)                    sparse: 3 nnz(U) (b + 4) + (M + 1) 4         previous U, new blocks, stacked
                              dense: 2 M K b                               previous U and the new one
R blocks (U-step)             3 E b per worker                             R rows, warm start, solution
document blocks (V-step)      2 E 8 per worker                             Φ rows, solver temporary
dense copy of U (V-step)      M K b with "auto", sparse topics whose       ``RLSIProblem.v_step_topics``
                              sparse product would cost more
plan of sparse U (V-step)     4 M + h K b  (h rows > 20 % non-zero)        ``kernels.products.sparse_plan``
Gram matrices                 8 K² · 6                                     S, G, their prepared forms
============================  ===========================================  ==============================

``E`` is the entries of a block (``rlsi.models.tasks.block_rows``: about 4M). nnz(U), whether the V-step
takes its dense copy of U, and the plan's dense rows h depend on the topics, which are not known before the
fit. Two ways to count them:

* predicted (:func:`predict_topics`, what :func:`estimate_for` does by default): the fit's first U-step
  solved on a sample of documents and term rows (the λ₁ of Eq. 1 scaled to the sample: ``R`` and ``S``
  both scale with the documents, so the lasso keeps the same support; the sample's noise only adds
  non-zeros). It gives nnz(U), the V-step's work share ``Σ df(m) nnz(U_m) / (nnz(X) K)`` that decides
  the dense copy (``RLSITuning.sparse_work_share``) and h, nnz(U) and h counted with a margin of
  :data:`PREDICTION_MARGIN`, the copy when the predicted share is within :data:`SHARE_MARGIN` of the
  switch: a few seconds, and the estimate no longer counts a copy of U that the
  fit does not take (it made the estimate 35–66 % high at 100k x 500k);
* bounded: ``topic_density`` (0.05, the share beyond which ``topic_representation="auto"`` switches to
  dense topics when they fit in ``RLSITuning.dense_max_bytes``) bounds nnz(U), and the copy is counted whenever it
  is possible.

The peak is the largest of the phases (setup, S of the initial W, U-step, V-step); ``baseline`` adds what
the process holds already (the interpreter, the libraries, the compiled kernels: measure it with
:func:`current_rss` *before* X is loaded, or subtract X — it is a component: ``rlsi fit``'s preflight does
the latter). The search for λ₁ of ``target_terms_per_topic`` is the phase "λ1 search" (``search=True``: the
fit's one copy of D, shared by the search's problems, which the fit then continues, and up to three copies
of W at once). Not counted: the allocator's fragmentation, and what freed temporaries (the prediction's,
the initialisation's) leave resident: 5–10 % of the measured peaks at 50k–200k documents,
which is why the estimate there is a few % low.

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

import math
import os
from dataclasses import dataclass, field

import numba
import numpy as np

from .rlsi_policy import TUNING, RLSIPolicy

__all__ = ["MemoryEstimate", "TopicProfile", "estimate_batch_fit", "estimate_for", "estimate_online_fit",
           "predict_topics", "batch_terms", "current_rss", "peak_rss", "available_memory", "format_bytes",
           "parse_bytes"]

#: Factor on the predicted nnz(U) and dense plan rows (:func:`predict_topics`): the fit's later iterations
#: and the sample's noise move them by less than this on the measured corpora (memory_estimate.md) ...
PREDICTION_MARGIN = 1.5
#: ... and on the predicted work share of the V-step: the dense copy of U (M K b, the one component that
#: decides the error at mid sizes) is counted when the prediction is within this factor of the switch
#: (predicted 0.203 against 0.206 and 0.213 measured in the fit's two V-steps at 50k x 200k, K = 200).
SHARE_MARGIN = 1.25
#: Documents and term rows of :func:`predict_topics`: every one of the ``PREDICT_HEAD`` most frequent terms of
#: the sample (they decide the V-step's work) and a uniform sample of ``PREDICT_TERMS`` of the others.
PREDICT_DOCS = 20_000
PREDICT_HEAD = 2_000
PREDICT_TERMS = 4_000


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


@dataclass
class TopicProfile:
    """What the estimate needs to know of the topics U (M x K) of a fit: ``density`` nnz(U) / (M K),
    ``work_share`` ``Σ_m df(m) nnz(U_m) / (nnz(X) K)`` (the cost of the V-step's sparse ``X U`` against
    the dense one), ``heavy_rows`` term rows with more than ``kernels.products.DENSE_ROW_SHARE`` K
    non-zeros (held densely by the sparse product's plan)."""

    density: float
    work_share: float
    heavy_rows: int


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
                       topic_penalty="l1", topic_representation="auto", topic_density=0.05, topics=None,
                       block_entries=None, n_workers=1, init="docs", search=False, baseline=0,
                       tuning=TUNING) -> MemoryEstimate:
    """Estimate the peak memory of ``BatchRLSI(n_components, ...).fit(X)`` for X of this size (see the
    module docstring for the model). ``topics``: a :class:`TopicProfile` (:func:`predict_topics`) counts
    U, the V-step's dense copy of U and the sparse plan from the predicted topics (with
    :data:`PREDICTION_MARGIN`); None bounds them by ``topic_density``. ``n_workers``: blocks solved at once
    (the thread executor's workers; 1 for the default serial executor). ``search``: the fit searches λ₁ for
    ``target_terms_per_topic`` first (:mod:`rlsi.models.sparsity`): its own transposed copy, plus the
    problems of two successive rounds side by side (three copies of D at once; an upper bound read from
    the code, not measured). ``tuning``: the fit's (:class:`rlsi.models.rlsi_policy.RLSITuning`: the
    representation and the dense copy are decided with the fit's numbers). Returns a :class:`MemoryEstimate`."""
    from ..kernels import blas_rows
    from .tasks import block_rows

    N, M, nnz, K = int(n_docs), int(n_terms), int(nnz), int(n_components)
    margin = PREDICTION_MARGIN if topics is not None else 1.0
    if topics is not None:
        topic_density = min(1.0, margin * float(topics.density))
    b = np.dtype(dtype).itemsize
    i = np.dtype(index_dtype).itemsize if index_dtype is not None else (4 if max(nnz, M) < 2**31 else 8)
    X = nnz * (b + i) + (N + 1) * i
    D = nnz * (b + i) + (M + 1) * i
    W = N * K * b
    l1 = topic_penalty in ("l1", "nonneg_l1")
    per_term = 8 * M + (16 * M if l1 else 0)  # df; the screening's row norms and bounds
    # the fit's own decisions (rlsi_policy.RLSIPolicy, with the fit's tuning)
    policy = RLSIPolicy(topic_representation, M, K, b, "l1" if l1 else "l2", inner_max_iter=1, inner_tol=0.0,
                        topic_sweeps=None, tuning=tuning)
    density = float(topic_density)
    # the representation follows the density itself, so a predicted density decides it without the margin
    # (dense topics cost 2 M K b in the U-step, sparse ones 3 nnz(U))
    dense = policy.dense_at(float(topics.density) if topics is not None else density)
    if dense:
        U_step, U_kept = 2 * M * K * b, M * K * b
    else:
        nnz_u = int(density * M * K)
        U_kept = nnz_u * (b + 4) + (M + 1) * 4
        U_step = 3 * nnz_u * (b + 4) + (M + 1) * 4
    # "auto" with sparse topics: the V-step takes a dense copy of U once the sparse product X U would cost
    # more (tuning.sparse_work_share: common terms' topics fill first, so this happens at a few % density);
    # without a prediction, whenever it can
    copy = not dense and policy.copies_at(np.inf if topics is None else SHARE_MARGIN * topics.work_share)
    v_copy = M * K * b if copy else 0
    # the sparse product's plan (kernels.products.sparse_plan): a row index per term and the heavy rows
    # dense; a heavy row holds > DENSE_ROW_SHARE K entries, so there are at most nnz(U) / (0.2 K) of them
    plan = 0
    if not dense and not copy:
        from ..kernels.products import DENSE_ROW_SHARE

        heavy = (margin * topics.heavy_rows if topics is not None else
                 topic_density * M * K / (DENSE_ROW_SHARE * K))
        plan = 4 * M + int(min(M, heavy)) * K * b
    rows = block_rows(K, block_entries)
    workers = max(1, int(n_workers))
    r_blocks = 3 * min(rows, M) * K * b * min(workers, -(-M // rows))  # R rows, warm start, solution: fit dtype
    # Φ rows and the solver's temporary: the solution goes straight into W's rows (tasks.doc_block's out=)
    v_blocks = 2 * min(rows, N) * K * 8 * min(workers, -(-N // rows))
    gram = 6 * 8 * K * K
    init_tmp = 2 * 8 * N * K if init == "random" else 0
    # tasks.gram (blas_rows.gram_rows): partial grams, and a float32 W converted a sub-block per thread
    parts = max(1, min(blas_rows.GRAM_PARTS, -(-N // blas_rows.ROW_CHUNK)))
    threads = min(parts, int(numba.config.NUMBA_NUM_THREADS))
    gram_blocks = parts * K * K * 8 + (threads * min(N, blas_rows.GRAM_SUB_ROWS) * K * 8 if b != 8 else 0)
    base = int(baseline)

    phases = {
        "start": {"X": X, "W": W, "initial W temporaries": init_tmp, "document blocks": v_blocks},
        # ‖X‖² squares X's entries into float64 while D and the document frequencies exist
        "setup": {"X": X, "transposed copy": D, "W": W, "setup temporaries": 8 * nnz, "per-term arrays": 8 * M},
        # S = WᵀW of the initial W (tasks.gram: float32 W converted to float64 block by block, BLAS syrk each)
        "S of the initial W": {"X": X, "transposed copy": D, "W": W, "gram blocks": gram_blocks,
                               "per-term arrays": per_term, "Gram": gram},
        "U-step": {"X": X, "transposed copy": D, "W": W, "per-term arrays": per_term, "U": U_step,
                   "R blocks": r_blocks, "Gram": gram},
        "V-step": {"X": X, "transposed copy": D, "W": 2 * W, "per-term arrays": per_term, "U": U_kept,
                   "dense copy of U": v_copy, "plan of sparse U": plan, "document blocks": v_blocks, "Gram": gram},
    }
    if search:
        # the fit's W₀ and a round's W (the bisection's R rows read W as it is: sparsity._rows_of_R)
        phases["λ1 search"] = {"X": X, "transposed copy": D, "W": 3 * W, "per-term arrays": 2 * per_term,
                               "U": U_step, "R blocks": r_blocks, "Gram": gram}
    for comps in phases.values():
        comps["process before the fit"] = base
    totals = {name: sum(c.values()) for name, c in phases.items()}
    phase = max(totals, key=totals.get)
    return MemoryEstimate(peak=totals[phase], phase=phase, components=phases[phase], phases=totals)


def estimate_online_fit(n_docs, n_terms, nnz, n_components, *, batch_size=256, dtype=np.float64,
                        index_dtype=None, topic_density=0.05, batch_terms=None, stats_dtype=None, n_inner=1,
                        baseline=0, tuning=TUNING) -> MemoryEstimate:
    """Estimate the peak memory of ``OnlineRLSI(n_components, batch_size=..., n_inner=...).fit(X)`` (one or more
    passes over X, N x M with nnz entries; ℓ1 topics). An upper-bound model, read from ``online.py``,
    ``active_rows.py`` and ``stats.py`` (keep in step with them):

    * X: as for the batch fit (memory-mapped pages count once read); the statistics ``R``: M x K of
      ``stats_dtype`` (``OnlineRLSI(stats_dtype=None)`` follows X: float32 for float32 X) and ``S`` (the
      re-scaling is lazy: no second R);
    * topics, with nnz(U) <= ``topic_density`` M K and s the itemsize of R: dense (M K 8 <=
      ``RLSITuning.dense_max_bytes``): U, solved in place, and the live rows of before the mini-batch as CSR
      (``nnz(U) (8 + 4) + 8 M``); else CSR: the old and the new topics and the solved blocks' pieces
      ``3 nnz(U) (s + 4) + 4 M`` plus one block of solved rows (``SOLVE_ENTRIES`` s) and, for float32 R, the
      V-step's float64 copy of their values (8 nnz(U), ``kernels.products.sparse_plan``); the row maxima and
      live rows carried between mini-batches (9 M);
    * one mini-batch of η documents with ``nnz_b`` entries and c terms (``batch_terms``; default the bound
      min(M, batch_size · nnz / N), far above the distinct terms of a Zipfian batch: :func:`estimate_for` counts
      them on X): its float64 data ``8 nnz_b`` (none for float64 X: ``fit`` takes its rows as views, and the
      indices are X's own); its transposed block (``stats.TRANSPOSE_ENTRIES`` entries, 8 + i bytes each: the
      batch's rows of R are formed term block by term block); W (η K 8, the V-step's output, formed block by
      block with ``2 E 8`` of Φ rows and the solver's temporary, E = ``tasks.block_rows`` entries); the terms
      and their entry offsets (16 c) and row maxima (8 c); the per-term counts or one block's term positions
      (8 M); with ξ = ``n_inner`` > 1 the batch's rows of R before it (c x K of R's dtype; ξ = 1 adds to R
      in place). ``fit`` in X's order (``shuffle=True`` also copies each mini-batch's rows: (b + i) nnz_b).

    Returns a :class:`MemoryEstimate` with the single phase ``"mini-batch"``."""
    from .active_rows import SOLVE_ENTRIES
    from .stats import TRANSPOSE_ENTRIES
    from .tasks import block_rows

    N, M, nnz, K, eta = int(n_docs), int(n_terms), int(nnz), int(n_components), int(batch_size)
    b = np.dtype(dtype).itemsize
    i = np.dtype(index_dtype).itemsize if index_dtype is not None else (4 if max(nnz, M) < 2**31 else 8)
    X = nnz * (b + i) + (N + 1) * i
    if stats_dtype is None:
        stats_dtype = np.float32 if np.dtype(dtype) == np.float32 else np.float64
    s = np.dtype(stats_dtype).itemsize
    R = M * K * s + 8 * K * K
    nnz_u = int(float(topic_density) * M * K)
    dense = M * K * 8 <= tuning.dense_max_bytes
    topics = (M * K * 8 + nnz_u * 12 + 8 * M if dense else
              3 * nnz_u * (s + 4) + 4 * (M + 1) + min(M * K, SOLVE_ENTRIES) * s + (8 * nnz_u if s != 8 else 0)) + 9 * M
    c = min(M, -(-eta * nnz // max(N, 1)) if batch_terms is None else int(batch_terms))
    batch_nnz = -(-min(eta, N) * nnz // max(N, 1))
    n_b = min(eta, N)
    data = 8 * batch_nnz if b != 8 else 0
    block = min(batch_nnz, TRANSPOSE_ENTRIES) * (8 + i)
    doc_blocks = 2 * min(block_rows(K), n_b) * K * 8
    batch = ((c * K * s if int(n_inner) > 1 else 0) + data + block + n_b * K * 8 + doc_blocks + 24 * c + 8 * M)
    comps = {"X": X, "statistics R, S": R, "U": topics, "mini-batch": batch, "process before the fit": int(baseline)}
    total = sum(comps.values())
    return MemoryEstimate(peak=total, phase="mini-batch", components=comps, phases={"mini-batch": total})


def batch_terms(X, batch_size, samples=8):
    """The most distinct terms (columns) in one of ``samples`` mini-batches of ``batch_size`` rows of the CSR
    X, spread evenly over it (reads only those rows: cheap on a memory-mapped matrix)."""
    N = X.shape[0]
    starts = np.unique(np.linspace(0, max(0, N - batch_size), num=samples).astype(np.int64))
    from .stats import _term_counts

    most = 0
    for a in starts:
        cols = np.asarray(X.indices[X.indptr[a]: X.indptr[min(N, a + batch_size)]])
        # O(nnz), not the sort of np.unique (minutes for mini-batches of 400,000 at 7M terms), and no intp copy of
        # the indices (numpy's ``seen[cols] = True`` makes one: 650 MB there)
        most = max(most, int(np.count_nonzero(_term_counts(cols, X.shape[1]))))
    return most


def predict_topics(X, n_components, *, lambda1=None, target=None, lambda2=1.0, doc_penalty="l2", positive=False,
                   random_state=0, sample_docs=PREDICT_DOCS, head_terms=PREDICT_HEAD, sample_terms=PREDICT_TERMS,
                   max_iter=100, tol=1e-4) -> TopicProfile:
    """Predict the topics of the first U-step of ``BatchRLSI(n_components, init="docs")`` on X (N x M CSR,
    memory-mapped or not: only the sampled rows are read) with the effective λ₁ ``lambda1`` (Eq. 1), or
    with the λ₁ that gives ``target`` terms per topic.

    How: K random documents as the initial topics (as ``init="docs"``), the ridge projection of
    ``sample_docs`` random documents on them (``W_s``), and the lasso of the term rows of ``R_s = D_s W_s``
    with ``S_s = W_sᵀW_s`` and λ₁ · n_s / N (both R and S grow with the documents, λ₁ is scaled to match):
    the ``head_terms`` most frequent terms of the sample, which carry most of X's entries and so decide the
    V-step's cost, and a uniform sample of ``sample_terms`` of the others, weighted up to all of them. The
    first U-step is the one before the V-step where the dense copy of U is decided first; on the ladder's
    corpora later iterations keep about its density.
    Returns a :class:`TopicProfile`."""
    from .._validation import check_random_state
    from ..kernels.lasso import lasso_rows
    from ..kernels.products import DENSE_ROW_SHARE, csr_dense_take
    from . import steps
    from .penalties import SolverSettings
    from .seeding import seed_topics

    rng = check_random_state(random_state)
    N, M = X.shape
    K = int(n_components)
    if K > M or (lambda1 is None) == (target is None):
        raise ValueError("predict_topics needs K <= M and one of lambda1, target")
    U0 = seed_topics(X, K, rng).astype(np.float64)  # as init="docs"
    docs = np.sort(rng.choice(N, size=min(N, int(sample_docs)), replace=False))
    Xs = X[docs].astype(np.float64)
    Ws, _ = steps.update_doc_vectors(Xs, U0, penalty=doc_penalty, lam=lambda2, settings=SolverSettings(max_iter, tol),
                                     dtype=np.float64)
    del U0
    Ds = Xs.T.tocsr()
    df = np.diff(Ds.indptr)
    live = np.flatnonzero(df > 0)  # a term absent from the sample: R row 0, a zero solution
    head = live[np.argsort(-df[live], kind="stable")[:int(head_terms)]]
    rest = np.setdiff1d(live, head)
    pick = np.sort(rng.choice(rest, size=min(len(rest), int(sample_terms)), replace=False)) if len(rest) else rest
    rows = np.concatenate([head, pick]).astype(np.int64)
    weight = np.concatenate([np.ones(len(head)), np.full(len(pick), len(rest) / max(1, len(pick)))])
    R, _ = csr_dense_take(Ds, rows, Ws, dtype=np.float64)
    S = steps.gram(Ws)
    scale = len(docs) / N

    def counts(lam):
        U, _ = lasso_rows(R, S, None, lam, max_iter=max_iter, tol=tol, positive=positive)
        return np.count_nonzero(U, axis=1)

    if target is not None:  # the λ₁ whose weighted count of non-zeros gives ``target`` per topic
        hi = 2.0 * float(np.abs(R).max(initial=0.0)) + 1e-300
        lo = hi * 1e-9
        for _ in range(40):
            mid = math.sqrt(lo * hi)
            if float(weight @ counts(mid)) > target * K:
                lo = mid
            else:
                hi = mid
            if hi / lo < 1.02:
                break
        lam = math.sqrt(lo * hi)
    else:
        lam = float(lambda1) * scale
    nz = counts(lam)
    return TopicProfile(density=float(weight @ nz) / (M * K),
                        work_share=float(weight @ (df[rows] * nz)) / max(1.0, float(Xs.nnz) * K),
                        heavy_rows=int(round(float(weight @ (nz > DENSE_ROW_SHARE * K)))))


def estimate_for(model, X, *, baseline=0, topic_density=None) -> MemoryEstimate:
    """:func:`estimate_batch_fit` for ``model.fit(X)`` (a :class:`BatchRLSI` and a CSR matrix), or
    :func:`estimate_online_fit` for an :class:`OnlineRLSI`. ``topic_density``: None predicts the batch
    fit's topics from a sample of X (:func:`predict_topics`; the bound 0.05 where they cannot be predicted:
    ``init="random"``, ℓ2 topics); a number bounds nnz(U) by it (and 0.05 for the online estimate)."""
    from .executor import ThreadExecutor
    from .online import OnlineRLSI

    if isinstance(model, OnlineRLSI):
        N, M = X.shape
        return estimate_online_fit(N, M, X.nnz, model.n_components, batch_size=model.batch_size, dtype=X.dtype,
                                   index_dtype=X.indices.dtype,
                                   topic_density=0.05 if topic_density is None else topic_density,
                                   batch_terms=batch_terms(X, model.batch_size),
                                   stats_dtype=model._stats_dtype(X.dtype), n_inner=model.n_inner,
                                   baseline=baseline, tuning=model._tuning)

    executor = getattr(model, "executor", None)
    workers = 1
    if executor == "threads" or isinstance(executor, ThreadExecutor):
        workers = getattr(executor, "n_workers", None) or os.cpu_count() or 1
    N, M = X.shape
    from .penalties import penalty

    topics = None
    target = getattr(model, "target_terms_per_topic", None)
    K = model.n_components
    # sizes the fit itself refuses (K above the vocabulary or the non-empty documents) are left to its checks
    predictable = (topic_density is None and model.init == "docs" and penalty(model.topic_penalty).norm == "l1"
                   and K <= M and np.count_nonzero(np.diff(X.indptr)) >= K)
    if predictable:
        topics = predict_topics(X, K, lambda1=None if target else model.effective_lambda1(N), target=target,
                                lambda2=model.lambda2, doc_penalty=model.doc_penalty,
                                positive=penalty(model.topic_penalty).nonneg,
                                # an int seed as the fit's; never the model's Generator (it would move its draws)
                                random_state=model.random_state if isinstance(model.random_state, (int, np.integer))
                                else 0, max_iter=model.inner_max_iter, tol=model.inner_tol)
    return estimate_batch_fit(N, M, X.nnz, model.n_components, dtype=X.dtype, index_dtype=X.indices.dtype,
                              topic_penalty=model.topic_penalty, topic_representation=model.topic_representation,
                              topic_density=0.05 if topic_density is None else topic_density, topics=topics,
                              n_workers=workers, init=model.init,
                              search=getattr(model, "target_terms_per_topic", None) is not None, baseline=baseline,
                              tuning=model._tuning)
