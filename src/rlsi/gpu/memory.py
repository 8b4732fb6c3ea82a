"""Memory plan of a device fit: what lives on the card, in which blocks, and whether it fits.

A batch fit keeps on the card (bytes, with ``s`` the dtype's size and int32 sparse indices, as cuSPARSE)::

    D = Xᵀ (terms x docs CSR) and X (docs x terms CSR)    2 · (nnz·(s + 4) + 4·(rows + 1))
    W (N x K), the document vectors                        N·K·s
    U: sparse (nnz(U)·(s + 4), twice while a U-step
       builds the new one) or dense (M·K·s)
    the rows of one U-step solve                           t·K·s · 6   (R rows gathered over term blocks, one
                                                                         more block, U rows, their copies in
                                                                         the sweeps, the GEMM block; t = term_rows)
    one document block of the V-step                       d·K·s · 8   (Φ, the new W rows, their float64
                                                                         copies for S, the drift and tr(UᵀDVᵀ))

``R = D Vᵀ`` is never whole: it is formed and consumed ``term_rows`` terms at a time (the paper's shape,
7M terms x K = 500, would be 14 GB in float32). When D and X do not fit next to the rest, they stay in host
memory and their blocks are streamed to the card (two blocks of each in flight). When even the resident part
(W, U and the blocks) does not fit, :func:`check` raises one :class:`rlsi.errors.RLSIError` line with the
estimate, before any work.

The paper's shape (1.6M docs x 7M terms, nnz 326M, K = 500, float32, topics at AvgComp 0.0044) plans to
14.0 GB with the corpus on the card, within the 40 GB target (9.4 GB with the corpus streamed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import RLSIError

GB = 1e9
#: Terms per block of the U-step and documents per block of the V-step (at most; fewer for small corpora).
TERM_ROWS = 1 << 18
DOC_ROWS = 1 << 17
#: Share of the card's free memory a plan may use (the rest: CuPy's pool slack, cuSPARSE buffers).
USABLE = 0.9
#: Topic density assumed for sparse topics when the caller gives none (the paper's AvgComp is 0.0044; a
#: fit's first U-steps are denser).
DEFAULT_DENSITY = 0.02


def size(b):
    """Bytes as "14.00 GB", or "3.4 MB" below 0.1 GB."""
    return f"{b / GB:.2f} GB" if b >= 0.1 * GB else f"{b / 1e6:.1f} MB"


def csr_bytes(nnz, rows, itemsize):
    return int(nnz) * (itemsize + 4) + 4 * (int(rows) + 1)


@dataclass
class MemoryPlan:
    """Bytes per component, the chosen placement of the corpus and the block sizes."""

    n_docs: int
    n_terms: int
    nnz: int
    n_components: int
    itemsize: int
    term_rows: int
    doc_rows: int
    streamed: bool
    components: dict = field(default_factory=dict)

    @property
    def total(self):
        return int(sum(self.components.values()))

    def describe(self):
        parts = ", ".join(f"{k} {size(v)}" for k, v in sorted(self.components.items(), key=lambda kv: -kv[1]))
        where = "corpus streamed from host memory" if self.streamed else "corpus on the card"
        return f"{size(self.total)} ({where}: {parts})"


def plan(n_docs, n_terms, nnz, n_components, *, dtype=np.float32, budget=None, topic_density=None,
         dense_topics=False, term_rows=TERM_ROWS, doc_rows=DOC_ROWS, stream=None):
    """The :class:`MemoryPlan` of a batch fit; ``budget`` (bytes) decides streaming when ``stream`` is None.

    topic_density : expected share of non-zero topic weights (sparse topics); ``dense_topics``: U is M x K.
    stream : None (stream only when the corpus does not fit beside the rest), True or False.
    """
    s = np.dtype(dtype).itemsize
    N, M, K = int(n_docs), int(n_terms), int(n_components)
    t = max(1, min(int(term_rows), M))
    d = max(1, min(int(doc_rows), N))
    dens = DEFAULT_DENSITY if topic_density is None else float(topic_density)
    corpus = {"D = X^T": csr_bytes(nnz, M, s), "X": csr_bytes(nnz, N, s)}
    rest = {"W": N * K * s,
            "U": M * K * s if dense_topics else 2 * csr_bytes(dens * M * K, M, s),
            "U-step block": 6 * t * K * s,
            "V-step block": 8 * d * K * s}
    if stream is None:
        stream = budget is not None and sum(corpus.values()) + sum(rest.values()) > budget
    if stream:  # two blocks of each matrix in flight on the card
        share_d = min(1.0, 2 * t / max(M, 1))
        share_x = min(1.0, 2 * d / max(N, 1))
        corpus = {"D blocks": int(corpus["D = X^T"] * share_d), "X blocks": int(corpus["X"] * share_x)}
    return MemoryPlan(N, M, int(nnz), K, s, t, d, bool(stream), {**corpus, **rest})


def check(p, budget, *, what="device='cuda'"):
    """Raise one RLSIError line when plan ``p`` does not fit ``budget`` bytes (None: no check)."""
    if budget is None or p.total <= budget:
        return p
    hint = "a smaller n_components, float32 (device='cuda'), sparser topics (a larger lambda1) or device='cpu'"
    raise RLSIError(f"{what} needs about {p.describe()} for {p.n_docs} x {p.n_terms} (nnz {p.nnz}), "
                    f"K={p.n_components}; the card has {size(budget)} usable: use {hint}")


def plan_for(be, n_docs, n_terms, nnz, n_components, *, budget=None, **kw):
    """Plan on backend ``be``: the budget is ``USABLE`` x the card's free memory (numpy: unlimited unless
    given), streaming when the corpus does not fit; raises when even streaming does not fit."""
    if budget is None:
        free = be.free_bytes()
        budget = None if free is None else int(USABLE * free)
    p = plan(n_docs, n_terms, nnz, n_components, dtype=be.dtype, budget=budget, **kw)
    return check(p, budget)


def online_bytes(n_terms, n_components, batch_nnz, batch_docs, itemsize):
    """Bytes of an online fit on the card: R and U (M x K each, dense), the row maxima and live rows, and one
    mini-batch in flight twice (the next one arrives while the current one is used)."""
    M, K = int(n_terms), int(n_components)
    return {"R": M * K * itemsize, "U": M * K * itemsize, "row maxima": 9 * M,
            "mini-batches": 2 * (csr_bytes(batch_nnz, batch_docs, itemsize) + 4 * batch_docs * K * itemsize)}


def check_online(be, n_terms, n_components, batch_nnz, batch_docs, budget=None):
    """Raise one RLSIError line when an online fit does not fit the card."""
    if budget is None:
        free = be.free_bytes()
        budget = None if free is None else int(USABLE * free)
    parts = online_bytes(n_terms, n_components, batch_nnz, batch_docs, be.dtype.itemsize)
    total = sum(parts.values())
    if budget is not None and total > budget:
        desc = ", ".join(f"{k} {size(v)}" for k, v in parts.items())
        raise RLSIError(f"OnlineRLSI(device=...) needs about {size(total)} of GPU memory ({desc}) for "
                        f"{n_terms} terms, K={n_components}; the card has {size(budget)} usable: use a "
                        f"smaller n_components or batch_size, or device='cpu'")
    return total
