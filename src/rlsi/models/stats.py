"""Sufficient statistics of the RLSI U-step: ``S = Σ w_i v_i v_iᵀ`` and ``R = Σ w_i d_i v_iᵀ``.

The U-step of every RLSI learner (TOIS Algorithm 2) needs the documents only through

* ``S`` (K x K, float64): the Gram matrix of the document vectors, ``V Vᵀ``;
* ``R`` (M x K): the term-topic correlations ``D Vᵀ``, one row per term;

so a learner that keeps these two matrices (and the total document weight, for the λ₁ scale) can forget
the documents themselves. :class:`TopicStatistics` holds them with per-document weights ``w_i``:
``rescale(f)`` multiplies every weight by ``f`` (the online re-scaling of §5.4.1), ``update`` adds a
mini-batch with weight 1, ``merge`` adds another statistics object, and ``grow`` appends zero rows of ``R``
for terms first seen now (a growing vocabulary: a new term has correlated with nothing so far).

Algebra. Sums are exact up to floating-point rounding in the order of additions, so

* statistics of two halves of a corpus, merged, equal those of the whole (the serial learner is the
  one-worker distributed learner);
* ``update(X, W)`` on a single batch holding the whole corpus gives ``S = WᵀW``, ``R = Xᵀ W``: exactly
  the statistics of one batch U-step (:class:`rlsi.models.screening.BatchR`).

``merge`` adds sums as they are; it does not re-scale. With forgetting (ρ > 0), bring both operands to
the same time first (``rescale``) or merge statistics built with the same schedule.

Embedded iterations (§5.4.3) re-project the same mini-batch several times: :meth:`begin_batch` applies
the re-scaling once and returns a :class:`PendingBatch` whose :meth:`PendingBatch.assign` sets (rather than
adds) the batch's contribution, so calling it ξ times leaves exactly the statistics of one ``update``
with the last document vectors.

Lazy re-scaling. ``R`` is stored as ``scale · R_stored``: ``rescale(f)`` multiplies S, the weight and the
scalar ``scale`` (O(K²), not M x K: at 7M terms x K = 500 in float32 a multiplication of every entry is a
14 GB pass per mini-batch), and a mini-batch writes its rows as ``R_stored[m] = R_stored[m] + (X_mᵀW)/scale``.
Readers either fold the scale in (the :attr:`TopicStatistics.R` property: a view when ``scale == 1``, else a
re-scaled copy) or work on the stored rows: the U-step of every penalty family here minimises
``uᵀSu − 2 rᵀu + λ P(u)``, and dividing that objective by ``scale > 0`` gives
``uᵀ(S/scale)u − 2 r_storedᵀu + (λ/scale) P(u)`` — the *same minimiser*, exactly (not an approximation):
:meth:`TopicStatistics.scaled_problem` returns ``(S/scale, λ/scale)`` for the stored rows. The zero-row
screening ``max|r| <= λ/2`` is the same test in stored units (``max|r_stored| <= (λ/scale)/2``). Against
multiplying R every mini-batch this only changes rounding: a row untouched by B mini-batches is rounded
once instead of B times. When ``scale`` falls below ``2^-40`` (ρ > 0 over a very long stream) it is
folded into R once (one M x K pass), so that the stored values stay far inside the float32 range.

Cost and memory: ``R`` is dense M x K (it is a sum over all documents and has no reason to be sparse);
a mini-batch touches only the rows of its own terms, ``nnz(X)·K`` work, formed from its transpose X_bᵀ in
blocks of terms (:data:`TRANSPOSE_ENTRIES` entries at a time, not the whole transposed batch; each row's sum
completed within its block, so the numbers do not depend on the block size); ``rescale`` is O(K²) (above).
The buffer of ``R`` grows geometrically so that appending a few terms per mini-batch does not copy
``R`` every time; only the first ``n_terms`` rows are meaningful and persisted (stored rows and scale).
"""

from __future__ import annotations

import numpy as np
import numba
from numba import njit, prange

from .._validation import check_matrix, check_number
from ..errors import RLSIError
from ..io import register
from ..kernels.products import csr_row_into
from ..kernels.rows import row_absmax
from .stats_checks import check_statistics

_GROWTH = 1.25
_STATE_VERSION = 2  # 2: the lazy ``scale`` (version 1 files: scale 1)
#: Below this ``scale`` the lazy re-scaling is folded into R (stored values at most 2^40 times the true ones).
_MIN_SCALE = 2.0 ** -40


@register("TopicStatistics")
class TopicStatistics:
    """Running ``S`` (K x K) and ``R`` (n_terms x K) with the document count and total weight.

    Parameters
    ----------
    n_components : int — K.
    n_terms : int, default 0 — initial number of rows of R (all zero).
    dtype : numpy float dtype of R, default float64 (S is always float64).

    Attributes
    ----------
    S : ndarray (K, K) float64.
    R : ndarray (n_terms, K) — the statistics: a view of the used rows of the internal buffer when
        ``scale == 1``, else a re-scaled copy (see the module docstring; hot paths use ``stored_R``).
    stored_R : ndarray (n_terms, K) — the stored rows, ``R = scale · stored_R`` (a view).
    scale : float — the lazy re-scaling factor of R.
    n_docs : int — number of documents accumulated (the paper's t, counted in documents).
    weight : float — Σ of the current document weights (``n_docs`` without re-scaling).
    """

    @staticmethod
    def nbytes_for(n_terms, n_components, dtype):
        """Bytes of the statistics of ``n_terms`` terms: R (M x K of ``dtype``; one copy: lazily re-scaled)
        and S (K x K float64)."""
        K = int(n_components)
        return int(n_terms) * K * np.dtype(dtype).itemsize + 8 * K * K

    def __init__(self, n_components, n_terms=0, dtype=np.float64):
        check_number("n_components", n_components, low=1, integer=True)
        check_number("n_terms", n_terms, low=0, integer=True)
        dtype = np.dtype(dtype)
        if dtype not in (np.float64, np.float32):
            raise RLSIError(f"dtype={dtype} is not supported for R; use float64 or float32")
        self.n_components = int(n_components)
        self.S = np.zeros((self.n_components, self.n_components), dtype=np.float64)
        self._R = np.zeros((int(n_terms), self.n_components), dtype=dtype)
        self._n_terms = int(n_terms)
        self._scale = 1.0
        self.n_folds = 0  # times the scale was folded into R (stored values changed: caches of them are stale)
        self.n_docs = 0
        self.weight = 0.0

    # ------------------------------------------------------------------ views
    @property
    def n_terms(self):
        return self._n_terms

    @property
    def R(self):
        if self._scale == 1.0:
            return self._R[: self._n_terms]
        return _scaled(self._R[: self._n_terms], self._scale)

    @property
    def stored_R(self):
        return self._R[: self._n_terms]

    @property
    def scale(self):
        return self._scale

    @property
    def dtype(self):
        return self._R.dtype

    def r_rows(self, a, b):
        """Rows ``a..b`` of R (re-scaled): an ``r_rows`` callable of :func:`rlsi.models.steps.update_topics`
        with ``S``. The U-step's hot path uses :meth:`stored_rows` with :meth:`scaled_problem` instead."""
        if self._scale == 1.0:
            return self._R[a:b]
        return _scaled(self._R[a:b], self._scale)

    def stored_rows(self, a, b):
        """Rows ``a..b`` of ``stored_R`` (a view): the ``r_rows`` of a U-step on :meth:`scaled_problem`."""
        return self._R[a:b]

    def scaled_problem(self, lam):
        """``(S / scale, λ / scale)``: with the rows of ``stored_R`` these define a U-step whose objective is
        that on ``(S, R, λ)`` divided by ``scale`` — the same minimiser for every penalty (module docstring)."""
        if self._scale == 1.0:
            return self.S, float(lam)
        return self.S / self._scale, float(lam) / self._scale

    def copy(self):
        """An independent copy (S, the used rows of R, the scale, the counts)."""
        other = TopicStatistics(self.n_components, 0, self.dtype)
        other.S = self.S.copy()
        other._R = self.stored_R.copy()
        other._n_terms = self._n_terms
        other._scale = self._scale
        other.n_docs, other.weight = self.n_docs, self.weight
        return other

    def fold_scale(self):
        """Multiply the stored rows by ``scale`` (one M x K pass) and set it to 1. Returns self."""
        if self._scale != 1.0:
            self._writable()
            _scale_in_place(self._R[: self._n_terms], self._scale)
            self._scale = 1.0
            self.n_folds += 1
        return self

    # ------------------------------------------------------------------ algebra
    def _writable(self):
        """Make R writable (it may be a read-only memory map after loading with ``mmap=True``)."""
        if not self._R.flags.writeable:
            self._R = np.array(self._R, copy=True)

    def grow(self, n_new_terms):
        """Append ``n_new_terms`` zero rows to R (terms first seen now). Returns self."""
        check_number("n_new_terms", n_new_terms, low=0, integer=True)
        need = self._n_terms + int(n_new_terms)
        if need > self._R.shape[0]:
            cap = max(need, int(self._R.shape[0] * _GROWTH) + 1)
            buf = np.zeros((cap, self.n_components), dtype=self.dtype)
            buf[: self._n_terms] = self._R[: self._n_terms]
            self._R = buf
        else:
            self._writable()
            self._R[self._n_terms: need] = 0.0
        self._n_terms = need
        return self

    def rescale(self, factor):
        """Multiply every accumulated weight by ``factor`` (S, R and ``weight``; R lazily, through ``scale``).
        Returns self."""
        check_number("factor", factor, low=0.0)
        if factor == 0.0:  # everything forgotten: no scale to divide by later
            self._writable()
            self._R[: self._n_terms] = 0.0
            self.S[...] = 0.0
            self.weight = 0.0
            self._scale = 1.0
            self.n_folds += 1
        elif factor != 1.0:
            self.S *= factor
            self.weight *= factor
            self._scale *= float(factor)
            if self._scale < _MIN_SCALE:
                self.fold_scale()
        return self

    def reset_topics(self, topics):
        """Forget everything about the given topics: zero their rows/columns of S and columns of R
        (a topic re-seeded with new content starts without history). Returns self."""
        ks = np.asarray(topics, dtype=np.int64)
        if len(ks):
            if ks.min() < 0 or ks.max() >= self.n_components:
                raise RLSIError(f"topics {ks.tolist()} out of range for {self.n_components} topics")
            self._writable()
            self.S[ks, :] = 0.0
            self.S[:, ks] = 0.0
            self._R[: self._n_terms, ks] = 0.0
        return self

    def add_topics(self, S_new, R_new):
        """Append k topics that start decoupled: S becomes ``[[S, 0], [0, S_new]]`` (S_new k x k) and R gains the
        columns ``R_new`` (n_terms x k, true units; stored divided by the scale). Returns self."""
        S_new, R_new = np.atleast_2d(np.asarray(S_new, dtype=np.float64)), np.asarray(R_new, dtype=np.float64)
        K, k = self.n_components, R_new.shape[1]
        S = np.zeros((K + k, K + k))
        S[:K, :K], S[K:, K:] = self.S, S_new
        R = np.zeros((self._R.shape[0], K + k), dtype=self.dtype)
        R[:, :K], R[: self._n_terms, K:] = self._R, R_new / self._scale
        self.S, self._R, self.n_components = S, R, K + k
        self.n_folds += 1  # stored values changed: caches of them are stale
        return self

    def _check_batch(self, X, W):
        X = check_matrix(X, name="X_batch", dtype=np.float64, allow_empty=True)
        if X.shape[1] > self._n_terms:
            raise RLSIError(f"X_batch has {X.shape[1]} terms but the statistics have {self._n_terms}; "
                            f"call grow({X.shape[1] - self._n_terms}) first")
        if W is not None:
            W = np.asarray(W, dtype=np.float64)
            if W.shape != (X.shape[0], self.n_components):
                raise RLSIError(f"W_batch has shape {W.shape}, expected {(X.shape[0], self.n_components)}")
        return X, W

    def begin_batch(self, X_batch, decay=1.0, *, repeat=True, transpose_entries=None):
        """Re-scale by ``decay`` and open a mini-batch whose contribution :meth:`PendingBatch.assign` sets;
        ``repeat=False``: ``assign`` will be called once (ξ = 1), so the batch's rows of R before it need no
        copy (|terms of the batch| x K of R's dtype: 0.6 GB for 300k terms at K = 500 in float32) and are added
        to in place."""
        X, _ = self._check_batch(X_batch, None)
        self.rescale(decay)
        self._writable()
        return PendingBatch(self, X, repeat=repeat, transpose_entries=transpose_entries)

    def update(self, X_batch, W_batch, decay=1.0, *, transpose_entries=None):
        """``S ← decay·S + WᵀW``, ``R ← decay·R + XᵀW``, ``weight ← decay·weight + n``. Returns self.

        X_batch : (n, n_terms' <= n_terms) documents x terms; W_batch : (n, K) their topic vectors.
        """
        X, W = self._check_batch(X_batch, W_batch)
        self.rescale(decay)
        self._writable()
        PendingBatch(self, X, repeat=False, transpose_entries=transpose_entries).assign(W)
        return self

    def merge(self, other):
        """Add the sums of ``other`` (exact up to rounding); R grows to the larger vocabulary. Returns self.

        Terms are identified by row number, so both must index the same (possibly grown) vocabulary.
        """
        if not isinstance(other, TopicStatistics):
            raise RLSIError(f"can only merge TopicStatistics, not {type(other).__name__}")
        if other.n_components != self.n_components:
            raise RLSIError(f"cannot merge statistics of {other.n_components} topics into "
                            f"{self.n_components} topics")
        if other.n_terms > self.n_terms:
            self.grow(other.n_terms - self.n_terms)
        self._writable()
        self.S += other.S
        if self._scale == other._scale:  # (both 1 without forgetting): the sums of before, bit for bit
            self._R[: other.n_terms] += other.stored_R
        else:  # stored units: R_stored += R_other / scale
            self._R[: other.n_terms] += other.stored_R * (other._scale / self._scale)
        self.n_docs += other.n_docs
        self.weight += other.weight
        return self

    # ------------------------------------------------------------------ persistence (rlsi.io)
    def _to_state(self):
        meta = {"state_version": _STATE_VERSION, "n_components": self.n_components,
                "n_terms": self._n_terms, "n_docs": int(self.n_docs), "weight": float(self.weight),
                "dtype": self.dtype.name, "scale": float(self._scale)}
        return meta, {"S": self.S, "R": self.stored_R}  # stored rows + scale: a resumed stream is bit-identical

    @classmethod
    def _from_state(cls, meta, arrays):
        if meta.get("state_version") not in (1, _STATE_VERSION):
            raise RLSIError(f"unsupported TopicStatistics state version {meta.get('state_version')!r}")
        K, M = int(meta["n_components"]), int(meta["n_terms"])
        S, R = arrays["S"], arrays["R"]
        if S.shape != (K, K) or R.shape != (M, K) or S.dtype != np.float64 or R.dtype != np.dtype(meta["dtype"]):
            raise RLSIError(f"statistics arrays S {S.shape} {S.dtype}, R {R.shape} {R.dtype} do not match "
                             f"K={K}, n_terms={M}, dtype={meta['dtype']}")
        stats = cls(K, 0, R.dtype)
        stats.S = np.array(S, dtype=np.float64, copy=True)
        stats._R = R  # may be a read-only memory map: copied on the first write
        stats._n_terms = M
        stats.n_docs = int(meta["n_docs"])
        stats.weight = float(meta["weight"])
        stats._scale = float(meta.get("scale", 1.0))
        if not (np.isfinite(stats._scale) and stats._scale > 0):
            raise RLSIError(f"the saved statistics' scale {stats._scale!r} is not a positive number")
        return check_statistics(stats, "the saved statistics")  # S symmetric PSD (the O(K^2) tests)

    def __repr__(self):
        return (f"TopicStatistics(n_components={self.n_components}, n_terms={self.n_terms}, "
                f"n_docs={self.n_docs}, weight={self.weight:.6g}, scale={self._scale:.6g})")


class PendingBatch:
    """The open contribution of one mini-batch to a :class:`TopicStatistics` (see ``begin_batch``).

    ``assign(W)`` makes the statistics equal to ``base + (WᵀW, XᵀW, n)`` where ``base`` is the state at
    ``begin_batch`` (after re-scaling); it only keeps the rows of R that the batch touches, and writes them
    in stored units (``R_stored[m] = base_stored[m] + (X_mᵀW) / scale``; module docstring).

    Memory: the batch X (n x M CSR, kept, not copied), its terms and their entry offsets (16 bytes per term),
    the row maxima (8 per term), the base rows with ``repeat`` (|terms| x K of R's dtype), and while
    :meth:`assign` runs one block of X_bᵀ (:data:`TRANSPOSE_ENTRIES` entries; the whole transposed batch of
    400,000 web documents would be 1 GB).
    """

    @staticmethod
    def nbytes_for(n_terms, batch_terms, batch_nnz, n_components, r_itemsize, index_bytes, repeat):
        """Bytes of a mini-batch of ``batch_nnz`` entries in ``batch_terms`` of the ``n_terms`` terms: the
        per-term counts (int64, M), the terms, their entry offsets and row maxima (24 per term), the base rows
        with ``repeat`` (of R's ``r_itemsize``) and one transposed block (float64 values, X's indices)."""
        c = int(batch_terms)
        return (8 * int(n_terms) + 24 * c + (c * int(n_components) * int(r_itemsize) if repeat else 0)
                + min(int(batch_nnz), TRANSPOSE_ENTRIES) * (8 + int(index_bytes)))

    def __init__(self, stats, X, *, repeat=True, transpose_entries=None):
        self.stats = stats
        self.n = X.shape[0]
        self.X = X
        # the terms the batch touches (ascending) and the start of each one's entries in the batch's transpose
        # X_bᵀ (|cols| x n CSR): counted by one kernel (numpy's ``mask[X.indices]`` would first copy the
        # indices to intp: 8 bytes per entry, 650 MB for 400,000 documents of the web corpus)
        cols, t_indptr = _batch_terms(X.indices, X.shape[1])
        self.cols = cols
        self._t_indptr = t_indptr
        # X_bᵀ formed in blocks of at most ``transpose_entries`` entries (None: TRANSPOSE_ENTRIES; the numbers do
        # not depend on it)
        self._blocks = _term_blocks(t_indptr, TRANSPOSE_ENTRIES if transpose_entries is None else transpose_entries)
        self._cached = None  # the transposed block when there is one only (built once for the ξ assigns)
        # the base rows, in R's dtype (exact in float64: the kernel reads them as float64); a single assign
        # reads them from R itself (the same numbers: the kernel reads each entry before writing it)
        self.R_base = stats._R[cols] if repeat else None
        self._assigned = False
        self.inv_scale = 1.0 / stats.scale
        self.rowmax = np.zeros(len(cols))
        self.S_base = stats.S.copy()
        self.weight_base = stats.weight
        self.n_docs_base = stats.n_docs

    def transposed_block(self, lo, hi):
        """Rows ``lo..hi`` (positions in ``cols``) of X_bᵀ as ``(indptr, indices, data)`` (CSR of hi − lo
        terms x n documents): each term's entries in document order, as scipy's ``X.T.tocsr()`` orders them."""
        if self._cached is not None and self._cached[0] == (lo, hi):
            return self._cached[1]
        X, t_indptr = self.X, self._t_indptr
        indptr = t_indptr[lo:hi + 1] - t_indptr[lo]
        nnz = int(indptr[-1])
        indices = np.empty(nnz, dtype=X.indices.dtype)
        data = np.empty(nnz, dtype=X.data.dtype)
        if nnz:
            _transpose_terms(X.indptr, X.indices, X.data, bool(X.has_sorted_indices), self.cols[lo:hi], indptr,
                             _term_parts(indptr, min(hi - lo, numba.get_num_threads())), indices, data)
        block = (indptr, indices, data)
        if len(self._blocks) == 2:
            self._cached = ((lo, hi), block)
        return block

    def write_rows(self, W, R, rows, rowmax, R_base=None):
        """``R[rows[i]] = base_i + inv_scale · (X_bᵀ W)_i`` for every term i of the batch (``base_i`` =
        ``R_base[i]``, or with None R's row itself), ``rowmax[i]`` = max_k |R[rows[i], k]| as stored. X_bᵀ is
        formed in blocks of terms of at most ``TRANSPOSE_ENTRIES`` entries (one term's row is never split: each
        row's float64 sum is completed within its block and rounded once when stored — the numbers of the
        whole transposed batch). W: n x K float64 contiguous."""
        b = self._blocks
        in_place = R_base is None
        for lo, hi in zip(b[:-1], b[1:]):
            indptr, indices, data = self.transposed_block(lo, hi)
            _assign_rows(indptr, indices, data, W, rows[lo:hi], _NO_BASE if in_place else R_base[lo:hi], R,
                         rowmax[lo:hi], self.inv_scale, in_place)

    def assign(self, W, *, into=None):
        """Set the batch's contribution to that of the document vectors ``W`` (n x K).

        The batch's rows of R go to R itself, and their maxima to ``rowmax`` (|cols|,): ``max_k |r_mk|`` of the
        rows written, as stored (in stored units: the online U-step's screening needs it and would otherwise
        read the rows again). ``into=(R_dest, rows, rowmax)`` writes them elsewhere instead: term ``cols[i]``'s
        row to ``R_dest[rows[i]]`` (R_dest: a copy of some of R's rows, x K of R's dtype; rows: |cols| int64)
        and its maximum to ``rowmax[i]`` (|cols|,) — what :class:`rlsi.models.active_rows.CompactBatch` does
        with its block of rows. S, the weight and the document count are those of the statistics either way."""
        st = self.stats
        if self.R_base is None and self._assigned:
            raise RLSIError("this mini-batch was opened with begin_batch(repeat=False): assign it once only")
        self._assigned = True
        W = np.ascontiguousarray(W, dtype=np.float64)
        if W.shape != (self.n, st.n_components):
            raise RLSIError(f"W_batch has shape {W.shape}, expected {(self.n, st.n_components)}")
        st.S = self.S_base + W.T @ W
        if len(self.cols):
            # R[cols] = R_base + X_bᵀ W in one pass per block of terms: no contribution array, no sum array, no
            # scatter copy. (The cache-blocked product of kernels.products, then base + contribution, was
            # measured no faster for 25,000 documents x K = 500: most of X's entries are in terms too rare for
            # a chunk of W to be reused.)
            R_dest, rows, rowmax = (st._R, self.cols, self.rowmax) if into is None else into
            self.write_rows(W, R_dest, rows, rowmax, self.R_base)
        st.weight = self.weight_base + float(self.n)
        st.n_docs = self.n_docs_base + self.n
        return st


    def assign_parts(self, parts):
        """:meth:`assign` from contributions computed where the documents are (the parts of a distributed
        mini-batch, in order): ``(S_p, cols_p, R_p)`` with ``S_p = W_pᵀW_p``, ``cols_p`` the terms part p touches
        (ascending) and ``R_p`` (len(cols_p) x K, float64) their rows of ``X_pᵀW_p``. The parts are summed in
        order from zero, then added to the base as :meth:`TopicStatistics.merge` adds (stored units:
        ``R_stored = base + ΣR_p / scale``); the row maxima of the rows written are kept as by :meth:`assign`."""
        st = self.stats
        if self.R_base is None and self._assigned:
            raise RLSIError("this mini-batch was opened with begin_batch(repeat=False): assign it once only")
        self._assigned = True
        K = st.n_components
        S = np.zeros((K, K))
        acc = np.zeros((len(self.cols), K))
        for S_p, cols_p, R_p in parts:
            S += S_p
            if len(cols_p):
                acc[np.searchsorted(self.cols, cols_p)] += R_p
        st.S = self.S_base + S
        if len(self.cols):
            base = self.R_base if self.R_base is not None else st._R[self.cols]
            st._R[self.cols] = base + (acc if st.scale == 1.0 else acc * self.inv_scale)
            self.rowmax = row_absmax(st._R[self.cols])
        st.weight = self.weight_base + float(self.n)
        st.n_docs = self.n_docs_base + self.n
        return st


#: Entries of the batch's transposed X formed at once by :meth:`PendingBatch.write_rows` (2M: 24 MB of float64
#: data and int32 indices; the whole transposed mini-batch of 400,000 web documents would be 1 GB). The numbers
#: do not depend on it. Each block costs a binary search per document and row (sorted X) and its scattered
#: writes: blocks of 2M-4M entries, whose writes stay in cache, formed 20M entries (100,000 documents of the
#: synthetic ladder) as fast as scipy's whole transpose; 16M entries took 3 times longer.
TRANSPOSE_ENTRIES = 1 << 21


def _term_blocks(t_indptr, max_entries):
    """Boundaries (positions in ``cols``, ascending, first 0, last |cols|) of consecutive term ranges with at most
    ``max_entries`` entries each (a term with more is a block of its own)."""
    c = len(t_indptr) - 1
    if c == 0:
        return np.zeros(1, dtype=np.int64)
    bounds = [0]
    while bounds[-1] < c:
        lo = bounds[-1]
        hi = int(np.searchsorted(t_indptr, t_indptr[lo] + max_entries, side="right")) - 1
        bounds.append(min(c, max(hi, lo + 1)))
    return np.asarray(bounds, dtype=np.int64)


@njit(cache=True)
def _term_counts(indices, M):
    """Entries per column (M,) int64 of a CSR's ``indices``."""
    counts = np.zeros(M, dtype=np.int64)
    for p in range(indices.shape[0]):
        counts[indices[p]] += 1
    return counts


def _batch_terms(indices, M):
    """``(cols, t_indptr)``: the columns present in ``indices`` (ascending, int64) and the cumulated counts of
    their entries (|cols| + 1, int64: the indptr of the transposed matrix restricted to them)."""
    counts = _term_counts(indices, int(M))
    cols = np.flatnonzero(counts)
    t_indptr = np.zeros(len(cols) + 1, dtype=np.int64)
    np.cumsum(counts[cols], out=t_indptr[1:])
    return cols, t_indptr


def _term_parts(t_indptr, parts):
    """Boundaries (len ``parts`` + 1, positions in the block, ascending) splitting a block's terms, whose entries
    start at ``t_indptr`` (block-local, first 0), into ``parts`` runs of about equal entries."""
    cuts = np.searchsorted(t_indptr, np.linspace(0, t_indptr[-1], parts + 1)[1:-1], side="left")
    return np.concatenate([[0], cuts, [len(t_indptr) - 1]]).astype(np.int64)


@njit(cache=True, parallel=True)
def _transpose_terms(indptr, indices, data, sorted_rows, cols, t_indptr, splits, t_indices, t_data):
    """The rows of Xᵀ for the ascending columns ``cols`` (a contiguous run of the batch's terms) into the CSR
    ``(t_indptr, t_indices, t_data)`` (t_indptr given). The terms are split into runs (``splits``, positions in
    cols) filled in parallel: each run's part reads all of X's rows in order and writes its own terms only, so
    each term's entries come in row order (then storage order), as in scipy's transpose. ``sorted_rows``: X's
    rows have sorted indices, so a part finds its run in a row by binary search instead of reading the row."""
    c0 = cols[0]
    # position of a column in cols: cols is an ascending run of the batch's terms, so a term in [c0, c-last]
    # belongs to the block (every column of the batch in that range is in cols)
    pos = np.full(cols[cols.shape[0] - 1] - c0 + 1, -1, dtype=np.int64)
    for i in prange(cols.shape[0]):
        pos[cols[i] - c0] = i
    nxt = t_indptr[:-1].copy()
    for part in prange(splits.shape[0] - 1):
        lo, hi = splits[part], splits[part + 1]
        if lo == hi:
            continue
        a0 = cols[lo]
        a1 = cols[hi - 1]
        for r in range(indptr.shape[0] - 1):
            p, end = indptr[r], indptr[r + 1]
            if sorted_rows:  # the row's entries in [a0, a1] are consecutive: binary search for the first
                hi_p = end
                while p < hi_p:
                    mid = (p + hi_p) // 2
                    if indices[mid] < a0:
                        p = mid + 1
                    else:
                        hi_p = mid
            while p < end:
                j = indices[p]
                if j > a1:
                    if sorted_rows:
                        break
                elif j >= a0:
                    t = pos[j - c0]
                    q = nxt[t]
                    t_indices[q] = r
                    t_data[q] = data[p]
                    nxt[t] = q + 1
                p += 1


#: Rows per task of :func:`_assign_rows` (one K-vector of scratch per task, not per row).
_ASSIGN_CHUNK = 64


_NO_BASE = np.zeros((0, 0))


@njit(cache=True, parallel=True)
def _assign_rows(indptr, indices, data, W, cols, R_base, R, rowmax, inv_scale, in_place):
    """``R[cols[i]] = R_base[i] + inv_scale · Σ_p data[p] W[indices[p]]`` over row i of a CSR (|cols| x n):
    the sum over p in float64 from zero, then added to the base (the order of ``R_base + XcT W``, so the
    distributed learner's merged sums are the same numbers; ``inv_scale`` = 1 multiplies exactly), stored in
    R's dtype; ``rowmax[i]`` = max_k |R[cols[i], k]| as stored. ``in_place``: the base is R's row itself."""
    K = W.shape[1]
    n = cols.shape[0]
    for chunk in prange((n + _ASSIGN_CHUNK - 1) // _ASSIGN_CHUNK):
        acc = np.empty(K)
        for i in range(chunk * _ASSIGN_CHUNK, min(n, (chunk + 1) * _ASSIGN_CHUNK)):
            csr_row_into(acc, indptr, indices, data, W, i)
            c = cols[i]
            m = 0.0
            for k in range(K):
                base = np.float64(R[c, k]) if in_place else np.float64(R_base[i, k])
                R[c, k] = base + inv_scale * acc[k]
                v = abs(np.float64(R[c, k]))
                if v > m:
                    m = v
            rowmax[i] = m


@njit(cache=True, parallel=True)
def _scale_in_place(A, f):
    """``A *= f`` with the product in float64 and one rounding to A's dtype (rows in parallel)."""
    for i in prange(A.shape[0]):
        for k in range(A.shape[1]):
            A[i, k] = np.float64(A[i, k]) * f


@njit(cache=True, parallel=True)
def _scaled_into(A, f, out):
    for i in prange(A.shape[0]):
        for k in range(A.shape[1]):
            out[i, k] = np.float64(A[i, k]) * f


def _scaled(A, f):
    """``f · A`` as a new array of A's dtype (product in float64, rounded once)."""
    out = np.empty(A.shape, dtype=A.dtype)
    _scaled_into(np.ascontiguousarray(A), float(f), out)
    return out
