"""How much memory a batch RLSI fit needs, by component, before it starts (``rlsi fit --memory-limit``).

The estimate sums, phase by phase, the bytes that the components of :class:`rlsi.models.BatchRLSI`
report for the sizes of a fit: each allocating component has an ``*nbytes*`` function of the shapes,
dtypes and block sizes next to its allocation, so a change of an allocation changes the estimate there.
Shapes: X is N x M with nnz entries of ``b`` bytes and indices of ``i`` bytes (int32 or int64), K topics.

============================  ===========================================  ==============================
component                     counted by                                   what it is
============================  ===========================================  ==============================
X                             ``kernels.convert.csr_nbytes``:              the input (memory-mapped: its
                              nnz (b + i) + (N + 1) i                      pages are resident once read)
transposed copy D = Xᵀ        ``RLSIProblem.transposed_nbytes``            ``RLSIProblem.D`` (R = D W)
setup temporaries             ``RLSIProblem.setup_nbytes``: 8 nnz          the float64 squares of X's
                                                                           entries for ‖X‖², freed at once
gram blocks                   ``kernels.blas_rows.gram_rows_nbytes``       S = WᵀW of the initial W: the
                                                                           partial grams, and float64
                                                                           sub-blocks of a float32 W
per-term arrays               ``RLSIProblem.per_term_nbytes``: 8 M, and    document frequencies; the
                              ``ScreenedBatchR.nbytes_for``: 24 M          screening's row norms, slack
                                                                           and bounds
W (document vectors)          ``steps.doc_vectors_nbytes``: N K b, twice   old and new W side by side (the
                              during the V-step                            screening's drift of W is taken
                                                                           there: no copy of W is kept)
U (topics)                    ``steps.update_topics_nbytes`` (U-step),     sparse: previous U, new blocks,
                              ``steps.topics_nbytes`` (V-step)             stacked; dense: previous and new
R blocks (U-step)             ``tasks.topic_blocks_nbytes``: 3 E b per     R rows, warm start, solution
                              worker
document blocks (V-step)      ``tasks.doc_blocks_nbytes``: 2 E 8 per       Φ rows, solver temporary
                              worker
dense copy of U (V-step)      ``steps.topics_nbytes``: M K b with          ``RLSIProblem.v_step_topics``
                              "auto", sparse topics whose sparse product
                              would cost more
plan of sparse U (V-step)     ``kernels.products.sparse_plan_nbytes``:     ``sparse_plan``: a row index per
                              4 M + h K b  (h rows > 20 % non-zero)        term and the heavy rows dense
Gram matrices                 ``RLSIProblem.statistics_nbytes``: 8 K² · 6  S, G, their prepared forms
initial W temporaries         ``seeding.random_doc_vectors_nbytes``        ``init="random"``'s draws
============================  ===========================================  ==============================

The decisions (the representation of U, the V-step's dense copy) are the fit's own
(:class:`rlsi.models.rlsi_policy.RLSIPolicy` with the fit's :class:`~rlsi.models.rlsi_policy.RLSITuning`),
and so is the block size (``RLSITuning.block_entries``, which the fit's steps are given).

``E`` is the entries of a block (``rlsi.models.tasks.block_rows`` of ``RLSITuning.block_entries``: about 4M). nnz(U), whether the V-step
takes its dense copy of U, and the plan's dense rows h depend on the topics, which are not known before the
fit. Two ways to count them:

* predicted (:func:`predict_topics`, what :func:`estimate_for` does by default): the fit's first U-step
  solved on a sample of documents and term rows (the λ₁ of Eq. 1 scaled to the sample: ``R`` and ``S``
  both scale with the documents, so the lasso keeps the same support; the sample's noise only adds
  non-zeros), then the fit's alternations on that sample up to its ``max_iter`` and ``tol`` (topics that
  densify as the fit goes on, as at small λ₂, are counted at their densest). It gives nnz(U), the V-step's
  work share ``Σ df(m) nnz(U_m) / (nnz(X) K)`` that decides the dense copy
  (``RLSITuning.sparse_work_share``) and h, nnz(U) and h counted with a margin of
  :data:`PREDICTION_MARGIN`, the copy when the predicted share is within :data:`SHARE_MARGIN` of the
  switch: seconds per alternation of the sample; the copy is counted only where the fit takes it (counted
  whenever possible, it is 35–66 % of the peak at 100k x 500k: the bound's margin there);
* bounded: ``topic_density`` (0.05, the share beyond which ``topic_representation="auto"`` switches to
  dense topics when they fit in ``RLSITuning.dense_max_bytes``) bounds nnz(U), and the copy is counted whenever it
  is possible.

The peak is the largest of the phases (setup, S of the initial W, U-step, V-step); ``baseline`` adds what
the process holds already (the interpreter, the libraries, the compiled kernels: measure it with
:func:`current_rss` *before* X is loaded, or subtract X — it is a component: ``rlsi fit``'s preflight does
the latter). The search for λ₁ of ``target_terms_per_topic`` is the phase "λ1 search" (``search=True``: the
fit's one copy of D, shared by the search's problems, which the fit then continues, and up to three copies
of W at once). The allocator's fragmentation and what freed temporaries leave resident are not allocations
of their own: the component "freed temporaries" (:data:`FREED`) counts the pages that an earlier
iteration's W (and, beyond two iterations, its blocks) leave resident, and "allocator slack"
(:data:`ALLOCATOR_SHARE` of the rest) the rest, so that the estimate errs on the safe side
(benchmarks/results/memory_estimate.md has the measured range).

:mod:`rlsi.models.memory_check` decides with these estimates before a fit (``rlsi fit``): the floor (no
topics), the bound (topics at the density bound) and, only where those two leave it open, the prediction.

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

import numpy as np
import scipy.sparse as sp

from .regularization import DEFAULT_LAMBDA2
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
#: Most alternations of :func:`predict_topics` on its sample (:func:`estimate_for` runs as many as the fit's
#: ``max_iter``, stopping at its ``tol``): at λ₂ = 1 the first U-step already has the fit's density
#: (20 Newsgroups, K = 30: 0.10 % against 0.08 %); at the default λ₂ = 1e-3 the topics densify for as long
#: as the fit runs (20 Newsgroups: 1.1 % after the first U-step, 3.0 % after 10, 5.5 % where the fit stops
#: after 26; predicted 4.5 %), and a prediction cut at 30 of a fit's 65 iterations saw 0.62 of its density.
PREDICT_ITERATIONS = 100
#: The allocator's fragmentation and the pages freed temporaries leave resident beyond :data:`FREED`, as a share
#: of the counted bytes (the baseline excluded) (the measured range: benchmarks/results/memory_estimate.md).
ALLOCATOR_SHARE = 0.12
#: How much denser topics predicted on a sample of the documents come out than the fit's (the noise of fewer
#: documents lets more terms pass λ₁ scaled to them): 40,000 x 50,000, K = 200, λ₂ = 1, two iterations: 5.5 %
#: on 20,000 documents, 4.5 % on all 40,000, 3.9 % fitted (1.4 times). The switches to dense topics and to
#: the V-step's dense copy are judged on the predicted density and work share divided by this; the counted
#: nnz(U) keeps :data:`PREDICTION_MARGIN`.
SAMPLE_INFLATION = 1.3
SLACK = "allocator slack"
#: What the temporaries of earlier iterations leave resident in a batch fit: from its second V-step one more W,
#: and in a fit of more than two iterations one more set of the phase's blocks too. Measured: the resident memory
#: between the steps of a default fit grows over its first iterations by about that much (40,000 x 50,000,
#: K = 200, float32: 353 to 501 MB) and then stays; an online fit's mini-batches show no such growth.
FREED = "freed temporaries"


@dataclass
class MemoryEstimate:
    """``peak`` bytes (the largest phase), ``phase`` (its name), ``components`` (bytes of each component at
    that phase, the baseline included), ``phases`` (peak bytes of every phase), ``breakdown`` (the
    components of every phase)."""

    peak: int
    phase: str
    components: dict = field(default_factory=dict)
    phases: dict = field(default_factory=dict)
    breakdown: dict = field(default_factory=dict)

    @property
    def allocations(self) -> dict:
        """Bytes of every phase without the allocator slack and the freed temporaries (:data:`SLACK`,
        :data:`FREED`): what the components allocate."""
        return {name: sum(v for k, v in comps.items() if k not in (SLACK, FREED))
                for name, comps in self.breakdown.items()}

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
    non-zeros (held densely by the sparse product's plan). ``sampled``: predicted on a sample of the documents
    (its density is inflated by the sample's noise: :data:`SAMPLE_INFLATION`)."""

    density: float
    work_share: float
    heavy_rows: int
    sampled: bool = False


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
                       iterations=1, tuning=TUNING) -> MemoryEstimate:
    """Estimate the peak memory of ``BatchRLSI(n_components, ...).fit(X)`` for X of this size (see the
    module docstring for the model). ``topics``: a :class:`TopicProfile` (:func:`predict_topics`) counts
    U, the V-step's dense copy of U and the sparse plan from the predicted topics (with
    :data:`PREDICTION_MARGIN`); None bounds them by ``topic_density``. ``n_workers``: blocks solved at once
    (the thread executor's workers; 1 for the default serial executor). ``search``: the fit searches λ₁ for
    ``target_terms_per_topic`` first (:mod:`rlsi.models.sparsity`): the phase "λ1 search", with the fit's
    one transposed copy (shared by the search's problems) and up to three copies of W at once (not
    measured). ``block_entries``: the blocks' entries (None: ``tuning.block_entries``, as the fit).
    ``tuning``: the fit's (:class:`rlsi.models.rlsi_policy.RLSITuning`: the representation, the dense copy
    and the block size are the fit's). ``iterations``: the fit's ``max_iter``; from two on, the phases of the
    iterations also hold :data:`FREED`. Returns a :class:`MemoryEstimate`."""
    from ..kernels.blas_rows import gram_rows_nbytes
    from ..kernels.convert import csr_nbytes, index_itemsize
    from ..kernels.products import max_heavy_rows, sparse_plan_nbytes
    from .local import RLSIProblem
    from .seeding import random_doc_vectors_nbytes
    from .steps import doc_vectors_nbytes, topics_nbytes, update_topics_nbytes
    from .tasks import doc_blocks_nbytes, topic_blocks_nbytes

    N, M, nnz, K = int(n_docs), int(n_terms), int(nnz), int(n_components)
    margin = PREDICTION_MARGIN if topics is not None else 1.0
    if topics is not None:
        topic_density = min(1.0, margin * float(topics.density))
    b = np.dtype(dtype).itemsize
    i = np.dtype(index_dtype).itemsize if index_dtype is not None else index_itemsize(nnz, M)
    entries = tuning.block_entries if block_entries is None else block_entries
    X = csr_nbytes(N, nnz, b, i)
    D = RLSIProblem.transposed_nbytes(M, nnz, b, i)
    W = doc_vectors_nbytes(N, K, b)
    l1 = topic_penalty in ("l1", "nonneg_l1")
    per_term = RLSIProblem.per_term_nbytes(M, RLSIProblem.screens("l1" if l1 else "l2", tuning))
    # the fit's own decisions (rlsi_policy.RLSIPolicy, with the fit's tuning)
    policy = RLSIPolicy(topic_representation, M, K, b, "l1" if l1 else "l2", inner_max_iter=1, inner_tol=0.0,
                        topic_sweeps=None, tuning=tuning)
    density = float(topic_density)
    # the representation follows the density itself, so a predicted density decides it without the margin (and,
    # predicted on a sample of the documents, without the sample's inflation)
    decide = density if topics is None else float(topics.density) / (SAMPLE_INFLATION if topics.sampled else 1.0)
    dense = policy.dense_at(decide)
    nnz_u = None if dense else int(density * M * K)
    U_step, U_kept = update_topics_nbytes(M, K, b, nnz_u), topics_nbytes(M, K, b, nnz_u)
    # "auto" with sparse topics: the V-step takes a dense copy of U once the sparse product X U would cost
    # more (tuning.sparse_work_share: common terms' topics fill first, so this happens at a few % density);
    # without a prediction, whenever it can
    share = None if topics is None else topics.work_share / (SAMPLE_INFLATION if topics.sampled else 1.0)
    copy = not dense and policy.copies_at(np.inf if topics is None else SHARE_MARGIN * share)
    v_copy = topics_nbytes(M, K, b) if copy else 0
    # the sparse product's plan of the topics the V-step projects on (sparse, not copied)
    plan = 0
    if not dense and not copy:
        heavy = margin * topics.heavy_rows if topics is not None else max_heavy_rows(nnz_u, K)
        plan = sparse_plan_nbytes(M, int(heavy), K, b)
    r_blocks = topic_blocks_nbytes(M, K, b, workers=n_workers, block_entries=entries)
    v_blocks = doc_blocks_nbytes(N, K, workers=n_workers, block_entries=entries)
    gram = RLSIProblem.statistics_nbytes(K)
    init_tmp = random_doc_vectors_nbytes(N, K) if init == "random" else 0
    gram_blocks = gram_rows_nbytes(N, K, b)  # S = WᵀW of the initial W (tasks.gram)
    base = int(baseline)

    phases = {
        "start": {"X": X, "W": W, "initial W temporaries": init_tmp, "document blocks": v_blocks},
        # ‖X‖² squares X's entries into float64 while D and the document frequencies exist
        "setup": {"X": X, "transposed copy": D, "W": W, "setup temporaries": RLSIProblem.setup_nbytes(nnz),
                  "per-term arrays": RLSIProblem.per_term_nbytes(M, False)},
        # S = WᵀW of the initial W (tasks.gram: float32 W converted to float64 block by block, BLAS syrk each)
        "S of the initial W": {"X": X, "transposed copy": D, "W": W, "gram blocks": gram_blocks,
                               "per-term arrays": per_term, "Gram": gram},
        "U-step": {"X": X, "transposed copy": D, "W": W, "per-term arrays": per_term, "U": U_step,
                   "R blocks": r_blocks, "Gram": gram},
        "V-step": {"X": X, "transposed copy": D, "W": 2 * W, "per-term arrays": per_term, "U": U_kept,
                   "dense copy of U": v_copy, "plan of sparse U": plan, "document blocks": v_blocks, "Gram": gram},
    }
    if search:
        # the fit's W₀ and a round's W (the bisection's R rows read W as it is: sparsity.rows_of_R)
        phases["λ1 search"] = {"X": X, "transposed copy": D, "W": 3 * W, "per-term arrays": 2 * per_term,
                               "U": U_step, "R blocks": r_blocks, "Gram": gram}
    if int(iterations) > 2:  # the pages an earlier iteration's W and blocks leave resident
        phases["U-step"][FREED] = W + r_blocks
        phases["V-step"][FREED] = W + v_blocks
    elif int(iterations) == 2:  # the first V-step's W
        phases["V-step"][FREED] = W
    for comps in phases.values():
        comps[SLACK] = int(ALLOCATOR_SHARE * sum(comps.values()))
        comps["process before the fit"] = base
    totals = {name: sum(c.values()) for name, c in phases.items()}
    phase = max(totals, key=totals.get)
    return MemoryEstimate(peak=totals[phase], phase=phase, components=phases[phase], phases=totals, breakdown=phases)


def estimate_online_fit(n_docs, n_terms, nnz, n_components, *, batch_size=256, dtype=np.float64,
                        index_dtype=None, topic_density=0.05, batch_terms=None, stats_dtype=None, n_inner=1,
                        baseline=0, tuning=TUNING) -> MemoryEstimate:
    """Estimate the peak memory of ``OnlineRLSI(n_components, batch_size=..., n_inner=...).fit(X)`` (one or more
    passes over X, N x M with nnz entries; ℓ1 topics), an upper bound summed from what the allocating
    components report:

    * X (``kernels.convert.csr_nbytes``; memory-mapped pages count once read); the statistics R and S
      (``TopicStatistics.nbytes_for``: R is M x K of ``stats_dtype``, which ``OnlineRLSI(stats_dtype=None)``
      takes from X, float32 for float32 X; the re-scaling is lazy: no second R);
    * the topics, with nnz(U) <= ``topic_density`` M K (``ActiveRows.nbytes_for``: dense when M K 8 <=
      ``RLSITuning.dense_max_bytes``, else CSR in R's dtype), and for CSR topics the V-step's plan
      (``kernels.products.sparse_plan_nbytes``: the row index, and the float64 copy of the weights of float32
      topics; its heavy rows are not predicted here);
    * one mini-batch of η documents with ``nnz_b`` entries and c terms (``batch_terms``; default the bound
      min(M, batch_size · nnz / N), far above the distinct terms of a Zipfian batch: :func:`estimate_for`
      counts them on X): ``PendingBatch.nbytes_for`` (per-term counts, the terms' offsets and row maxima, the
      base rows for ξ = ``n_inner`` > 1, one transposed block of ``stats.TRANSPOSE_ENTRIES`` entries),
      ``OnlineRLSI.batch_nbytes`` (the float64 copy of float32 values, W) and ``tasks.doc_blocks_nbytes``
      (the V-step's blocks). ``fit`` in X's order (``shuffle=True`` also copies each mini-batch's rows:
      (b + i) nnz_b).

    Returns a :class:`MemoryEstimate` with the single phase ``"mini-batch"``."""
    from ..kernels.convert import csr_nbytes, index_itemsize
    from ..kernels.products import sparse_plan_nbytes
    from .active_rows import ActiveRows
    from .online import OnlineRLSI
    from .stats import PendingBatch, TopicStatistics
    from .tasks import doc_blocks_nbytes

    N, M, nnz, K, eta = int(n_docs), int(n_terms), int(nnz), int(n_components), int(batch_size)
    b = np.dtype(dtype).itemsize
    i = np.dtype(index_dtype).itemsize if index_dtype is not None else index_itemsize(nnz, M)
    X = csr_nbytes(N, nnz, b, i)
    if stats_dtype is None:
        stats_dtype = np.float32 if np.dtype(dtype) == np.float32 else np.float64
    s = np.dtype(stats_dtype).itemsize
    R = TopicStatistics.nbytes_for(M, K, stats_dtype)
    nnz_u = int(float(topic_density) * M * K)
    dense = M * K * 8 <= tuning.dense_max_bytes  # OnlineRLSI._working_topics
    topics = ActiveRows.nbytes_for(M, K, nnz_u, s, dense)
    if not dense:
        topics += sparse_plan_nbytes(M, 0, K, 8, converted=nnz_u if s != 8 else 0)
    c = min(M, -(-eta * nnz // max(N, 1)) if batch_terms is None else int(batch_terms))
    n_b = min(eta, N)
    batch_nnz = -(-n_b * nnz // max(N, 1))
    batch = (PendingBatch.nbytes_for(M, c, batch_nnz, K, s, i, repeat=int(n_inner) > 1)
             + OnlineRLSI.batch_nbytes(n_b, batch_nnz, b, K) + doc_blocks_nbytes(n_b, K))
    comps = {"X": X, "statistics R, S": R, "U": topics, "mini-batch": batch}
    comps[SLACK] = int(ALLOCATOR_SHARE * sum(comps.values()))
    comps["process before the fit"] = int(baseline)
    total = sum(comps.values())
    return MemoryEstimate(peak=total, phase="mini-batch", components=comps, phases={"mini-batch": total},
                          breakdown={"mini-batch": comps})


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


def predict_topics(X, n_components, *, lambda1=None, target=None, lambda2=DEFAULT_LAMBDA2, doc_penalty="l2",
                   positive=False, random_state=0, sample_docs=PREDICT_DOCS, head_terms=PREDICT_HEAD,
                   sample_terms=PREDICT_TERMS, max_iter=100, tol=1e-4, iterations=1, fit_tol=1e-4) -> TopicProfile:
    """Predict the topics of ``BatchRLSI(n_components, init="docs")`` on X (N x M CSR, memory-mapped or
    not: only the sampled rows are read) with the effective λ₁ ``lambda1`` (Eq. 1), or with the λ₁ that
    gives ``target`` terms per topic: after its first U-step, or with ``lambda1`` and ``iterations`` > 1 the
    most of any of up to that many alternations on the sample (stopping at a relative objective change
    below ``fit_tol``, as the fit does).

    How: K random documents as the initial topics (as ``init="docs"``), the ridge projection of
    ``sample_docs`` random documents on them (``W_s``), and the lasso of the term rows of ``R_s = D_s W_s``
    with ``S_s = W_sᵀW_s`` and λ₁ · n_s / N (both R and S grow with the documents, λ₁ is scaled to match):
    the ``head_terms`` most frequent terms of the sample, which carry most of X's entries and so decide the
    V-step's cost, and a uniform sample of ``sample_terms`` of the others, weighted up to all of them. The
    first U-step is the one before the V-step where the dense copy of U is decided first. The later
    alternations minimise the sample's objective ``Σ_t w_t (‖d_t − W u_t‖² + λ₁ n_s/N ‖u_t‖₁) + λ₂‖W‖²``
    over the sampled term rows t (weights w_t: 1 for the head, the rest's count over the sample's for the
    others): the U-step row by row as above, the V-step with rows and columns scaled by √w_t.
    Returns a :class:`TopicProfile`."""
    from .._validation import check_random_state
    from ..kernels.lasso import lasso_rows
    from ..kernels.products import csr_dense_take
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
    U, _ = lasso_rows(R, S, None, lam, max_iter=max_iter, tol=tol, positive=positive)
    profile = _profile(U, weight, df[rows], Xs.nnz, M, sampled=len(docs) < N)
    if target is not None or iterations <= 1:
        return profile
    root = np.sqrt(weight)
    Xr = (Xs[:, rows] @ sp.diags(root)).tocsr()  # the sampled term columns, weighted
    previous = None
    for _ in range(int(iterations) - 1):
        Ws, _ = steps.update_doc_vectors(Xr, U * root[:, None], penalty=doc_penalty, lam=lambda2,
                                         settings=SolverSettings(max_iter, tol), dtype=np.float64)
        R, _ = csr_dense_take(Ds, rows, Ws, dtype=np.float64)
        S = steps.gram(Ws)
        U, _ = lasso_rows(R, S, U, lam, max_iter=max_iter, tol=tol, positive=positive)
        now = _profile(U, weight, df[rows], Xs.nnz, M)
        profile = TopicProfile(max(profile.density, now.density), max(profile.work_share, now.work_share),
                               max(profile.heavy_rows, now.heavy_rows), sampled=profile.sampled)
        objective = float(weight @ (np.einsum("ik,kl,il->i", U, S, U) - 2.0 * np.einsum("ik,ik->i", R, U)
                                    + lam * np.abs(U).sum(axis=1))) + lambda2 * float(np.square(Ws).sum())
        if previous is not None and abs(previous - objective) <= fit_tol * abs(previous):
            break
        previous = objective
    return profile


def _profile(U, weight, df_rows, sample_nnz, M, sampled=False):
    """The :class:`TopicProfile` of the sampled term rows U of a prediction, weighted up to all M rows."""
    from ..kernels.products import DENSE_ROW_SHARE

    K = U.shape[1]
    nz = np.count_nonzero(U, axis=1)
    return TopicProfile(density=float(weight @ nz) / (M * K),
                        work_share=float(weight @ (df_rows * nz)) / max(1.0, float(sample_nnz) * K),
                        heavy_rows=int(round(float(weight @ (nz > DENSE_ROW_SHARE * K)))), sampled=sampled)


def estimate_for(model, X, *, baseline=0, topic_density=None, topics=None,
                 topic_representation=None) -> MemoryEstimate:
    """:func:`estimate_batch_fit` for ``model.fit(X)`` (a :class:`BatchRLSI` and a CSR matrix), or
    :func:`estimate_online_fit` for an :class:`OnlineRLSI`. ``topic_density``: None predicts the batch
    fit's topics from a sample of X (:func:`predict_topics`; the bound 0.05 where they cannot be predicted:
    ``init="random"``, ℓ2 topics); a number bounds nnz(U) by it (and 0.05 for the online estimate).
    ``topics``: a :class:`TopicProfile` to count instead of predicting one (a zero profile: the floor of
    :mod:`rlsi.models.memory_check`); ``topic_representation``: the batch topics' representation instead of
    the model's (``"dense"``: the bound of dense topics)."""
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

    target = getattr(model, "target_terms_per_topic", None)
    K = model.n_components
    # sizes the fit itself refuses (K above the vocabulary or the non-empty documents) are left to its checks
    predictable = (topic_density is None and topics is None and model.init == "docs"
                   and penalty(model.topic_penalty).norm == "l1" and K <= M
                   and np.count_nonzero(np.diff(X.indptr)) >= K)
    if predictable:
        topics = predict_topics(X, K, lambda1=None if target else model.effective_lambda1(N), target=target,
                                lambda2=model.lambda2, doc_penalty=model.doc_penalty,
                                positive=penalty(model.topic_penalty).nonneg,
                                # an int seed as the fit's; never the model's Generator (it would move its draws)
                                random_state=model.random_state if isinstance(model.random_state, (int, np.integer))
                                else 0, max_iter=model.inner_max_iter, tol=model.inner_tol,
                                iterations=min(PREDICT_ITERATIONS, model.max_iter), fit_tol=model.tol)
    return estimate_batch_fit(N, M, X.nnz, model.n_components, dtype=X.dtype, index_dtype=X.indices.dtype,
                              topic_penalty=model.topic_penalty,
                              topic_representation=topic_representation or model.topic_representation,
                              topic_density=0.05 if topic_density is None else topic_density, topics=topics,
                              n_workers=workers, init=model.init,
                              search=getattr(model, "target_terms_per_topic", None) is not None, baseline=baseline,
                              iterations=model.max_iter, tuning=model._tuning)
