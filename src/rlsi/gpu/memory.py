"""Memory plan of a device fit: every array the fit allocates on the card, in which phase, and whether it fits.

A plan is the arrays that live through the fit (*resident*) plus the largest of its *phases* (the arrays one
step allocates and frees again): total = resident + max(phase). With ``s`` the dtype's size, int32 sparse
indices (as cuSPARSE), ``t`` = term_rows, ``d`` = doc_rows, ``b`` the topics per block of the coordinate
descent, ``c`` the columns of U per dense column block and ``nnz(U)`` the topics' non-zero weights, a batch
fit (:class:`rlsi.gpu.batch.DeviceRLSIProblem`) holds::

    resident   X, D = Xᵀ (CSR)            nnz·(s + 4) + 4·(rows + 1) each (streamed: the largest block's,
                                          three times: in use, being copied, waiting for reuse)
               W (N x K)                  N·K·s (column-major on a card: the SpMM operand, never copied)
               U                          CSR nnz(U)·(s + 4) + 4·(M + 1), or dense M·K·s
               live rows                  2·M (this U-step's and the last one's)
    U-step     one solve of t rows        5·t·K·s  (R, U, the running rows' copies, one narrowed copy)
                                          + 2·b·t·s (the block of G) + 2·t·K (masks)
               the warm start's entries   min(nnz(U), t·K)·(s + 28) (the rows' CSR copy, scatter positions)
               the new U's parts          nnz(U)·(s + 4) + 4·M (CSRBuilder), and one chunk of positions
    V-step     Uᵀ (CSR)                   nnz(U)·(s + 4) + 4·(K + 1), and cuSPARSE's transposition buffer
                                          (counted as one more copy of the entries)
               a dense column block of U  M·c·s (+ 24 bytes per entry scattered)
               one document block         d·K·(2s + 16) (Φ, W, the float64 copy of W and its product
                                          with Φ) + d·c·s (one SpMM output); ℓ1 documents: the solve
               UᵀU                        t·K·8 (a float64 dense row block of U, + 24 bytes per entry)
    objective  P(U)                       nnz(U)·s (|U|'s entries)
    set-up     (a corpus on the card)     the given W₀ (N·K·s), the transposition's buffer (counted as a copy
                                          of D) and a float64 row block of W (d·K·8)

and, where ``"auto"`` may switch the topics between CSR and dense (the dense array within the tuning's
``dense_max_bytes``), U resident as the larger of the two and a phase holding both at the switch.

``R = D Vᵀ`` is never whole: it is formed and consumed ``term_rows`` terms at a time (the paper's shape,
7M terms x K = 500, would be 14 GB in float32). When D and X do not fit beside the rest, they stay in host
memory and their blocks are streamed to the card. When even the resident part and the largest phase do not
fit, :func:`check` raises one :class:`rlsi.errors.RLSIError` line with the estimate, before any work. The
topics' non-zero weights are bounded too (:func:`topic_nnz_budget`): at most 2³¹ − 1 (int32 indices), and at
most what the budget leaves for U.

The paper's shape (1.6M docs x 7M terms, nnz 326M, K = 500, float32, topics at AvgComp 0.0044) plans to
13.31 GB with the corpus on the card (docs/gpu.md has the table; tests/gpu/test_backend_memory.py measures the
steps' allocations on numpy against the plan). An online fit (:func:`online_plan`) holds R and U (M x K each,
dense) and its phases per mini-batch, all in blocks of ``term_rows`` rows: 32.50 GB at 7M terms, K = 500,
mini-batches of 1,000 documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import RLSIError
from .backend import INT32_MAX

GB = 1e9
#: Terms per block of the U-step and documents per block of the V-step (at most; fewer for small corpora).
TERM_ROWS = 1 << 18
DOC_ROWS = 1 << 17
#: Share of the card's free memory a plan may use (the rest: CuPy's pool slack and rounding, cuBLAS's
#: workspace, CUDA's context).
USABLE = 0.9
#: Topic density assumed for sparse topics when the caller gives none (the paper's AvgComp is 0.0044; a
#: fit's first U-steps are denser).
DEFAULT_DENSITY = 0.02
#: Bytes of one dense column block of U in the V-step's Φ = X U (rlsi.gpu.topics.Columns).
PHI_BYTES = 1 << 30
#: Elements of a solved block turned into CSR entries at a time (rlsi.gpu.topics.CSRBuilder): the bool mask,
#: the scan and the int64 positions of ``nonzero`` stay within this many elements.
CHUNK_ELEMENTS = 1 << 22
#: Temporary bytes per entry scattered into a dense block (rlsi.gpu.topics.dense_rows): its position, its row,
#: and CuPy's int64 flat index of the two.
SCATTER = 24
#: Topics per block of the coordinate descent (rlsi.gpu.cd.BLOCK).
CD_BLOCK = 32


def size(b):
    """Bytes as "14.00 GB", or "3.4 MB" below 0.1 GB."""
    return f"{b / GB:.2f} GB" if b >= 0.1 * GB else f"{b / 1e6:.1f} MB"


def csr_bytes(nnz, rows, itemsize):
    return int(nnz) * (itemsize + 4) + 4 * (int(rows) + 1)


def chunk_bytes(itemsize, elements=CHUNK_ELEMENTS):
    """Temporaries of turning one chunk of a dense block (at most ``elements``) into CSR entries: the mask and
    its flat copy, the scan (int32), the positions (two int64), CuPy's flat index of them (int64), the int32
    columns and the values, each entry counted as non-zero."""
    return min(CHUNK_ELEMENTS, int(elements)) * (34 + itemsize)


def solve_bytes(n, K, itemsize, block):
    """Peak of one coordinate-descent solve of n rows (rlsi.gpu.cd.solve_rows)."""
    return 5 * n * K * itemsize + 2 * min(block, K) * n * itemsize + 2 * n * K


def block_nnz(row_nnz, rows, nnz, n_rows):
    """The most entries in one block of ``rows`` rows: from the rows' counts when given, else the average."""
    rows = max(1, min(int(rows), max(int(n_rows), 1)))
    if row_nnz is None or len(row_nnz) == 0:
        return int(np.ceil(int(nnz) * rows / max(int(n_rows), 1)))
    row_nnz = np.asarray(row_nnz, dtype=np.int64)
    return int(np.add.reduceat(row_nnz, np.arange(0, len(row_nnz), rows)).max())


@dataclass
class MemoryPlan:
    """Bytes per array that lives through the fit (``resident``) and per array of each phase (``phases``),
    the placement of the corpus, the block sizes, and the budget the plan was checked against (None: none)."""

    n_docs: int
    n_terms: int
    nnz: int
    n_components: int
    itemsize: int
    term_rows: int
    doc_rows: int
    streamed: bool
    resident: dict = field(default_factory=dict)
    phases: dict = field(default_factory=dict)
    budget: int = None
    what: str = "device='cuda'"
    #: Where the data comes from, for :meth:`describe` (None: the corpus, on the card or streamed).
    placement: str = None

    @property
    def peak_phase(self):
        """The name of the phase with the most bytes."""
        return max(self.phases, key=lambda k: sum(self.phases[k].values())) if self.phases else None

    @property
    def phase_bytes(self):
        """Bytes of each phase (its arrays summed)."""
        return {k: int(sum(v.values())) for k, v in self.phases.items()}

    @property
    def total(self):
        return int(sum(self.resident.values())) + max(self.phase_bytes.values(), default=0)

    @property
    def components(self):
        """Resident arrays and the arrays of the largest phase (name: bytes)."""
        peak = self.peak_phase
        return {**self.resident, **({f"{peak}: {k}": v for k, v in self.phases[peak].items()} if peak else {})}

    def describe(self):
        parts = ", ".join(f"{k} {size(v)}" for k, v in sorted(self.resident.items(), key=lambda kv: -kv[1]))
        where = self.placement or ("corpus streamed from host memory" if self.streamed else "corpus on the card")
        peak = self.peak_phase
        tail = f"; the {peak} {size(self.phase_bytes[peak])} at its peak" if peak else ""
        return f"{size(self.total)} ({where}: {parts}{tail})"


def plan(n_docs, n_terms, nnz, n_components, *, dtype=np.float32, budget=None, topic_density=None,
         dense_topics=False, switch_density=None, term_rows=TERM_ROWS, doc_rows=DOC_ROWS, stream=None, card=False,
         phi="auto", phi_cols=None, block=CD_BLOCK, doc_l1=False, term_nnz=None, doc_nnz=None):
    """The :class:`MemoryPlan` of a batch fit; ``budget`` (bytes) decides streaming when ``stream`` is None.

    topic_density : expected share of non-zero topic weights (sparse topics); ``dense_topics``: U is M x K
    (with ``switch_density``: the fit may switch between the two there, "auto" within the tuning's cap).
    stream : None (stream only when the corpus does not fit beside the rest), True or False; card : the
    corpus is on the card already (its transposition and the given W₀ are in the set-up phase).
    phi, phi_cols, block : the V-step's product and the coordinate descent's block (as the problem's);
    doc_l1 : ℓ1 document penalty (the V-step solves by coordinate descent); term_nnz, doc_nnz : entries per
    row of D and X (host arrays) for the largest block (None: the average).
    """
    s = np.dtype(dtype).itemsize
    N, M, K, nnz = int(n_docs), int(n_terms), int(n_components), int(nnz)
    t = max(1, min(int(term_rows), M))
    d = max(1, min(int(doc_rows), N))
    dens = DEFAULT_DENSITY if topic_density is None else float(topic_density)
    nnz_u = int(dens * M * K)
    u_csr = csr_bytes(nnz_u, M, s)
    corpus = {"D = X^T": csr_bytes(nnz, M, s), "X": csr_bytes(nnz, N, s)}
    resident = {"W": N * K * s, "U": max(M * K * s, u_csr) if dense_topics and switch_density else
                (M * K * s if dense_topics else u_csr), "live rows": 2 * M}
    d_blk, x_blk = block_nnz(term_nnz, t, nnz, M), block_nnz(doc_nnz, d, nnz, N)
    warm = min(nnz_u, t * K) * (s + 4 + SCATTER)
    parts = 0 if dense_topics and not switch_density else nnz_u * (s + 4) + 4 * M + chunk_bytes(s, t * K)
    u_step = {"one solve of term rows": solve_bytes(t, K, s, block), "the warm start's entries": warm,
              "the new topics' parts": parts, "one term block's rows of D": csr_bytes(d_blk, t, s)}
    width = max(1, min(K, int(phi_cols) if phi_cols else int(max(1, PHI_BYTES // max(1, M * s)))))
    v_step = {"the document block": d * K * (2 * s + 16) + d * width * s,
              "U^T U row block": t * K * 8 + min(nnz_u, t * K) * SCATTER}
    if dense_topics and not switch_density:
        pass  # Φ = X U reads the dense topics as they are
    elif phi == "dense":
        v_step["dense copy of U"] = M * K * s + min(nnz_u, M * K) * SCATTER
    else:
        v_step["U^T and its transposition"] = 2 * csr_bytes(nnz_u, K, s)
        if phi != "sparse":
            v_step["a dense column block of U"] = M * width * s + min(nnz_u, M * width) * SCATTER
    if doc_l1:
        v_step["the document block"] += solve_bytes(d, K, s, block)
    phases = {"U-step": u_step, "V-step": v_step,
              "objective": {"P(U)": max(nnz_u * s, t * K * 16 if dense_topics else 0)}}
    if switch_density:  # "auto" may switch: the dense array beside the CSR topics of the switch's density
        phases["switch of representation"] = {"dense U": M * K * s,
                                              "CSR U": int(switch_density * M * K) * (s + 4 + SCATTER)
                                              + chunk_bytes(s, M * K)}
    if card:
        phases["set-up"] = {"the given W0": N * K * s, "transposition buffer": corpus["D = X^T"],
                            "W^T W row block": d * K * 8}
    if stream is None:
        stream = budget is not None and (sum(corpus.values()) + sum(resident.values())
                                         + max(sum(p.values()) for p in phases.values()) > budget)
    if stream:  # three blocks of each matrix at a time: in use, being copied, freed but not yet reused
        corpus = {"D blocks": 3 * csr_bytes(d_blk, t, s), "X blocks": 3 * csr_bytes(x_blk, d, s)}
    return MemoryPlan(N, M, nnz, K, s, t, d, bool(stream), {**corpus, **resident}, phases,
                      None if budget is None else int(budget))


def check(p, budget, *, what=None):
    """Raise one RLSIError line when plan ``p`` does not fit ``budget`` bytes (None: no check)."""
    if budget is None or p.total <= budget:
        return p
    hint = "a smaller n_components, float32 (device='cuda'), sparser topics (a larger lambda1) or device='cpu'"
    raise RLSIError(f"{what or p.what} needs about {p.describe()} for {p.n_docs} x {p.n_terms} (nnz {p.nnz}), "
                    f"K={p.n_components}; the card has {size(budget)} usable: use {hint}")


def usable_budget(be, budget=None):
    """``budget``, or ``USABLE`` x the card's free memory (None on numpy: unlimited)."""
    if budget is not None:
        return int(budget)
    free = be.free_bytes()
    return None if free is None else int(USABLE * free)


def plan_for(be, n_docs, n_terms, nnz, n_components, *, budget=None, **kw):
    """Plan on backend ``be``: the budget is ``USABLE`` x the card's free memory (numpy: unlimited unless
    given), streaming when the corpus does not fit; raises when even streaming does not fit."""
    budget = usable_budget(be, budget)
    p = plan(n_docs, n_terms, nnz, n_components, dtype=be.dtype, budget=budget, **kw)
    return check(p, budget)


def topic_nnz_budget(p, budget, max_nnz=None):
    """The most non-zero topic weights of a fit with plan ``p``: ``max_nnz`` if given, else what ``budget``
    leaves beside the rest of the plan for the topics (their CSR, the new topics' parts, Uᵀ and its buffer:
    ``4 · (s + 4)`` bytes per weight), and never more than 2³¹ − 1 (int32 indices)."""
    if max_nnz is not None:
        return int(min(int(max_nnz), INT32_MAX))
    if budget is None:
        return INT32_MAX
    s = p.itemsize
    planned = int(p.resident.get("U", 0)) + int(p.phases.get("U-step", {}).get("the new topics' parts", 0))
    spare = int(budget) - p.total + planned
    return int(min(INT32_MAX, max(0, spare) // (4 * (s + 4))))


def online_plan(n_terms, n_components, batch_nnz, batch_docs, itemsize, *, n_inner=1, term_rows=TERM_ROWS,
                topic_density=None, block=CD_BLOCK, grow=False):
    """The :class:`MemoryPlan` of an online fit (rlsi.gpu.online): R and U (M x K, dense), the rows' maxima and
    flags, the mini-batches in flight, the batch's rows of R kept across the ξ embedded iterations, the old
    values of the rows a batch changes (CSR), and per-batch phases in blocks of ``term_rows`` rows.
    ``grow``: the vocabulary grows (a new R, then a new U, beside the old ones)."""
    s, M, K = int(itemsize), int(n_terms), int(n_components)
    t = max(1, min(int(term_rows), M))
    n, bnnz = max(1, int(batch_docs)), int(batch_nnz)
    cols = min(M, bnnz)
    cb = max(1, min(t, cols))
    nnz_u = int((DEFAULT_DENSITY if topic_density is None else float(topic_density)) * M * K)
    batch = 2 * csr_bytes(bnnz, max(n, cols), s) + 8 * cols
    resident = {"R": M * K * s, "U": M * K * s, "row maxima and flags": 10 * M, "mini-batches in flight": 3 * batch,
                "the batch's rows of R": cols * K * s if n_inner > 1 else 0,
                "old values of changed rows": csr_bytes(nnz_u, M, s), "W and Phi": 2 * n * K * s + n * K * 8}
    phases = {"U^T U": {"rows": 8 * M, "a block of live rows": t * K * (s + 8)},
              "Phi": {"a block of U's batch rows": 2 * cb * K * s, "SpMM output": n * K * s},
              "statistics": {"a block of the batch's rows of R": cb * K * (8 + 4 * s)},
              "U-step": {"rows": 8 * M + 3 * M, "one solve of term rows": solve_bytes(t, K, s, block) + t * K,
                         "old values of fresh rows": t * K * s + chunk_bytes(s, t * K)},
              "change": {"a block of changed rows": t * K * (2 * s + 8) + min(nnz_u, t * K) * SCATTER}}
    if grow:
        phases["vocabulary growth"] = {"the new R or U": M * K * s}
    return MemoryPlan(n, M, bnnz, K, s, t, n, False, resident, phases, what="OnlineRLSI(device=...)",
                      placement="mini-batches from host memory")


def check_online(be, n_terms, n_components, batch_nnz, batch_docs, budget=None, **kw):
    """Raise one RLSIError line when an online fit does not fit the card; returns its plan."""
    budget = usable_budget(be, budget)
    p = online_plan(n_terms, n_components, batch_nnz, batch_docs, be.dtype.itemsize, **kw)
    if budget is not None and p.total > budget:
        raise RLSIError(f"OnlineRLSI(device=...) needs about {p.describe()} of GPU memory for {n_terms} terms, "
                        f"K={n_components}; the card has {size(budget)} usable: use a smaller n_components or "
                        f"batch_size, or device='cpu'")
    p.budget = budget
    return p
