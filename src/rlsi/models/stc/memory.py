"""How much memory an STC fit needs before it starts (``rlsi fit-stc``, and its ``--memory-limit``), as
:mod:`rlsi.models.memory` does for RLSI: the bytes of each allocating component for the sizes of the fit,
summed phase by phase, the largest phase the peak.

Shapes: X is N x M word counts with nnz entries (float64 values, int32 or int64 indices), K topics, T numba
threads, an online mini-batch of η documents with nnz_b entries on c distinct terms (≤ M).

============================  ===========================================  ==============================
component                     bytes                                        what it is
============================  ===========================================  ==============================
X                             nnz (8 + i) + (N + 1) i                      the counts (``check_counts``)
int64 index copies            (nnz + N + 1) 8 per coding pass              the CSR the coding kernel reads
dictionary                    2 K M 8                                      β and its transposed copy
                                                                           (online: β and the factored
                                                                           dictionary U · diag(c))
coding statistics             (2 T + 4) c K 8 + 2 T c 8                    the kernel's per-run sums of G
                                                                           and B (T runs at once), their
                                                                           totals and the K x c copies it
                                                                           returns (c = M in batch)
returned statistics           2 c K 8                                      G and B of the pass
dictionary step               3 K M 8                                      G + B, the new β, the blend
document codes                N K 8 (batch), η K 8 (online)                θ
word codes                    nnz K 8 (batch, ``keep_word_codes``)         the warm starts S
start                         3 K M 8; with ``dictionary_init="lda"``      random documents + noise, or
                              4 K M 8 + 2 N K 8                            scikit-learn's LDA state
classifier (MedSTC)           2 N K 8                                      the SVM refit on θ
per-document arrays           3 N 8                                        objectives, sweeps, zeros
============================  ===========================================  ==============================

The dictionary terms dominate at a large K or vocabulary: K = 100,000 on 20 Newsgroups' 53,975 terms is
43 GB for β alone, which :func:`preflight` refuses at once instead of failing after a minute with
"out of memory". Not counted: the allocator's fragmentation and scikit-learn's temporaries inside the LDA
start and the SVMs beyond their inputs' copies. Measured (2,000 x 20,000, K = 200, development machine): the
live arrays' peak (tracemalloc, numba's included) is within 10 % of the estimate; the resident peak is 4 %
below it with two threads and 18 % above it with one (freed blocks of tens of MB the allocator keeps).
"""

from __future__ import annotations

import numpy as np

from ...errors import RLSIError
from ..memory import MemoryEstimate, available_memory, current_rss, format_bytes

__all__ = ["estimate_stc_fit", "estimate_for", "preflight"]

_F = 8  # float64: every STC array


def estimate_stc_fit(n_docs, n_terms, nnz, n_components, *, online=False, batch_size=64, batch_terms=None,
                     threads=1, keep_word_codes=False, lda_start=False, classifier=False, index_itemsize=4,
                     baseline=0) -> MemoryEstimate:
    """The peak memory of an STC fit of these sizes (see the module docstring), as a
    :class:`rlsi.models.memory.MemoryEstimate` with the phases ``start``, ``coding`` and ``dictionary step``."""
    N, M, nnz, K, T = int(n_docs), int(n_terms), int(nnz), int(n_components), max(1, int(threads))
    i = int(index_itemsize)
    X = nnz * (_F + i) + (N + 1) * i
    dictionary = 2 * K * M * _F
    if online:
        eta = min(int(batch_size), N)
        batch_nnz = -(-eta * nnz // max(N, 1))
        c = min(M, batch_nnz if batch_terms is None else int(batch_terms))
        codes = eta * K * _F
        copies = (batch_nnz + eta + 1) * _F
        word_codes = 0
        per_doc = 3 * eta * _F
    else:
        c = M
        codes = N * K * _F
        copies = (nnz + N + 1) * _F
        word_codes = nnz * K * _F if keep_word_codes else 0
        per_doc = 3 * N * _F
    stats = (2 * T + 4) * c * K * _F + 2 * T * c * _F
    returned = 2 * c * K * _F
    start = (4 * K * M + 2 * N * K) * _F if lda_start else 3 * K * M * _F
    classify = 2 * N * K * _F if classifier else 0
    base = int(baseline)
    phases = {
        "start": {"X": X, "start": start, "process before the fit": base},
        "coding": {"X": X, "int64 index copies": copies, "dictionary": dictionary, "coding statistics": stats,
                   "document codes": codes, "word codes": word_codes, "per-document arrays": per_doc,
                   "process before the fit": base},
        "dictionary step": {"X": X, "dictionary": dictionary, "returned statistics": returned,
                            "dictionary step": 3 * K * M * _F, "document codes": codes, "word codes": word_codes,
                            "classifier": classify, "process before the fit": base},
    }
    totals = {name: sum(comps.values()) for name, comps in phases.items()}
    phase = max(totals, key=totals.get)
    return MemoryEstimate(peak=totals[phase], phase=phase, components=phases[phase], phases=totals, breakdown=phases)


def estimate_for(model, X, *, baseline=0) -> MemoryEstimate:
    """:func:`estimate_stc_fit` for ``model.fit(X)`` (an STC learner of :mod:`rlsi.models.stc`, unfitted; X the
    N x M count CSR)."""
    from ...kernels.threads import numba_threads
    from . import kernels

    N, M = X.shape
    online = hasattr(model, "n_epochs")
    with numba_threads(getattr(model, "n_jobs", None)):
        threads = kernels.n_threads()
    return estimate_stc_fit(N, M, X.nnz, model.n_components, online=online,
                            batch_size=getattr(model, "batch_size", 64), threads=threads,
                            keep_word_codes=bool(getattr(model, "keep_word_codes", False)) and not online,
                            lda_start=getattr(model, "dictionary_init", "documents") == "lda",
                            classifier=hasattr(model, "delta"), index_itemsize=np.dtype(X.indices.dtype).itemsize,
                            baseline=baseline)


def preflight(model, X, *, limit=None):
    """Refuse (RLSIError, one line) an STC fit whose estimated peak exceeds ``limit`` bytes (default: the memory
    available now, plus what the process holds besides X). Returns the estimate."""
    nbytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    base = max(0, current_rss() - nbytes)
    estimate = estimate_for(model, X, baseline=base)
    what = "--memory-limit"
    if limit is None:
        avail = available_memory()
        if avail is None:  # unknown here: not checked
            return estimate
        limit, what = avail + base, "memory available"
    if estimate.peak > limit:
        raise RLSIError(f"this fit needs {estimate.describe()}, more than the {format_bytes(limit)} of {what}; "
                        f"use fewer topics (-k), a smaller vocabulary (--min-df), or a machine with more memory")
    return estimate
