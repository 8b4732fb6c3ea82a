"""Online RLSI on the device (TOIS Algorithm 4 with ρ, η, ξ): the statistics and the topics on the card.

:class:`DeviceOnline` keeps ``S`` (K x K, float64, host: it is tiny), ``R`` (M x K, device, stored as
``scale · R_stored`` as :class:`rlsi.models.stats.TopicStatistics` does: the re-scaling of a mini-batch is
O(K²), never an M x K pass), the topics U (M x K, dense, device), each row's ``max_k |r_stored|`` and which rows
of U are non-zero; :class:`DeviceStream` is the placed stream of :mod:`rlsi.models.placement` over it, and the
mini-batch step of :meth:`rlsi.models.OnlineRLSI._learn` runs on it (:class:`DeviceMiniBatch`):

* the batch is compacted to the terms it holds (``X_c``, n x |cols|, and its transpose), on the host, and cut
  into blocks of ``term_rows`` of its terms;
* ξ times: ``Φ = X_c U[cols]``, ``W = Φ (UᵀU + λ₂I)⁻¹`` (``UᵀU`` over the non-zero rows of U only),
  ``S = S_base + WᵀW``, ``R_stored[cols] = R_base + X_cᵀW / scale`` (the batch's contribution replaced, not
  added ξ times), then the U-step on ``(S/scale, R_stored, λ₁/scale)`` — the same minimiser as on the re-scaled
  statistics — for the rows that can be non-zero (non-zero rows of U and rows with ``max|r| > λ/2``; every
  other row is optimal at zero), by the blocked coordinate descent of :mod:`rlsi.gpu.cd`.

Every M x K pass is made in blocks of ``term_rows`` rows (:data:`rlsi.gpu.memory.TERM_ROWS`): ``UᵀU``, the
batch's columns, the U-step's rows (each block gathered, solved and written back; the rows are independent,
so the blocks give the unblocked step's solution), and ``u_change_``, for which the old values of the rows a
batch changes are kept as int32 CSR (:class:`rlsi.gpu.topics.CSRBuilder`), not as dense copies. So an online
fit holds R and U and a few blocks (:func:`rlsi.gpu.memory.online_plan`): about 31 GB at 7M terms and K = 500
in float32, with mini-batches of 1,000 documents.

Mini-batches move asynchronously on a card: the next batch is compacted and copied to the card by a
background thread on the stream's one copy stream (:class:`rlsi.gpu.prefetch.Prefetcher`) while the current
one is computed (on numpy: one after the other). The step's bookkeeping (t, λ₁(t), the decay ``(t₀/t₁)^ρ``, the
initial and re-seeded topics, the random generator) is the learner's, written once for every placement, so a
device fit follows the host fit to rounding.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import RLSIError
from ..models.minibatch import batch_rows
from ..models.penalties import penalty as get_penalty, ridge_inverse
from ..models.stats import TopicStatistics
from .cd import gather_rows, rows_f, solve_penalty
from .corpus import spans
from .memory import TERM_ROWS, check_online, size, usable_budget
from .prefetch import Prefetcher
from .topics import CSRBuilder, dense_rows

#: Below this lazy ``scale`` the stored rows are multiplied out (as TopicStatistics does).
MIN_SCALE = 2.0 ** -40


class Batch:
    """A mini-batch compacted to its terms: ``cols_host`` (its term ids) and, per block of ``term_rows`` of
    them, ``(cols, Xc, XcT)`` on the device (the block's term ids, the n x |block| columns of the batch and
    their transpose); ``host``: the batch as host CSR (for the initial topics)."""

    def __init__(self, be, X, term_rows=TERM_ROWS):
        X = sp.csr_matrix(X, dtype=np.float64)
        self.host = X
        self.n, self.n_terms = X.shape
        cols = np.unique(X.indices)
        XcT = sp.csr_matrix((X.data, np.searchsorted(cols, X.indices), X.indptr),
                            shape=(X.shape[0], len(cols))).T.tocsr()
        self.cols_host = cols
        self.blocks = [(be.xp.asarray(cols[a:b].astype(np.int64)), be.csr(XcT[a:b].T.tocsr()), be.csr(XcT[a:b]))
                       for a, b in spans(len(cols), term_rows)]


def row_maxima(be, R, rows):
    """``max_k |r_mk|`` (float64) of every row of a device array, ``rows`` rows at a time."""
    out = be.xp.zeros(R.shape[0], dtype=np.float64)
    for a, b in spans(R.shape[0], rows):
        out[a:b] = be.xp.abs(R[a:b]).max(axis=1)
    return out


def dense_topics(be, U):
    """Host topics (M x K, CSR or dense) as a dense device array, made on the card from their CSR."""
    U = be.csr(sp.csr_matrix(U))
    return dense_rows(be, U, 0, U.shape[0])


def live_rows(be, U, rows):
    """Which rows of a device array have a non-zero, ``rows`` rows at a time."""
    out = be.xp.zeros(U.shape[0], dtype=bool)
    for a, b in spans(U.shape[0], rows):
        out[a:b] = be.xp.any(U[a:b] != 0, axis=1)
    return out


class DeviceOnline:
    """The device state of an online fit (see the module docstring); ``term_rows``: rows per block."""

    def __init__(self, be, n_components, term_rows=TERM_ROWS):
        self.be = be
        xp = be.xp
        K = int(n_components)
        self.K = K
        self.term_rows = max(1, int(term_rows))
        self.S = np.zeros((K, K))
        self.R = xp.zeros((0, K), dtype=be.dtype)
        self.U = None
        self.rowmax = xp.zeros(0, dtype=np.float64)
        self.live = xp.zeros(0, dtype=bool)
        self.scale = 1.0
        self.n_docs = 0
        self.weight = 0.0

    @property
    def n_terms(self):
        return int(self.R.shape[0])

    @classmethod
    def from_state(cls, be, n_components, stats, topics=None, term_rows=TERM_ROWS):
        """The device state of a stream's host state: its statistics (TopicStatistics) and topics (M x K, CSR or
        dense, or None) — a new stream, a loaded model, or a stream that went on elsewhere."""
        st = cls(be, n_components, term_rows)
        if stats.n_terms == 0 and topics is None:  # a new stream
            return st
        st.S = np.array(stats.S, dtype=np.float64)
        st.R = be.asarray(stats.stored_R)
        st.scale, st.n_docs, st.weight = float(stats.scale), int(stats.n_docs), float(stats.weight)
        st.rowmax = row_maxima(be, st.R, st.term_rows)
        if topics is not None:
            st.U = dense_topics(be, topics)
            st.live = live_rows(be, st.U, st.term_rows)
        else:
            st.live = be.xp.zeros(st.n_terms, dtype=bool)
        return st

    def grow(self, M):
        """Room for ``M`` terms: new rows of R (and U) are zero; the old arrays are copied into new ones (one
        at a time), or allocated at once for a state without terms."""
        xp = self.be.xp
        old = self.n_terms
        if M <= old:
            return
        if old:
            need = M * self.K * self.be.dtype.itemsize
            budget = usable_budget(self.be)
            if budget is not None and need > budget:
                raise RLSIError(f"OnlineRLSI(device=...): growing the vocabulary from {old} to {M} terms needs "
                                f"{size(need)} more on the card (a new R, then a new U, beside the old ones); the "
                                f"card has {size(budget)} usable: continue on the host (device='cpu')")

        def grown(A, dtype):
            B = xp.zeros((M,) + A.shape[1:], dtype=dtype)
            if old:
                B[:old] = A
            return B
        self.R = grown(self.R, self.R.dtype)
        self.rowmax = grown(self.rowmax, np.float64)
        self.live = grown(self.live, bool)
        if self.U is not None:
            self.U = grown(self.U, self.U.dtype)

    def rescale(self, factor):
        if factor == 0.0:
            self.R[...] = 0
            self.rowmax[...] = 0
            self.S[...] = 0.0
            self.weight, self.scale = 0.0, 1.0
        elif factor != 1.0:
            self.S *= factor
            self.weight *= factor
            self.scale *= float(factor)
            if self.scale < MIN_SCALE:
                self.R *= self.scale
                self.rowmax *= self.scale
                self.scale = 1.0

    def to_statistics(self, dtype):
        """A host :class:`TopicStatistics` of this state (stored rows and scale: a resumed stream continues)."""
        meta = {"state_version": 2, "n_components": self.K, "n_terms": self.n_terms, "n_docs": self.n_docs,
                "weight": self.weight, "dtype": np.dtype(dtype).name, "scale": self.scale}
        R = np.asarray(self.be.to_host(self.R)).astype(dtype, copy=False)
        return TopicStatistics._from_state(meta, {"S": self.S.copy(), "R": np.ascontiguousarray(R)})

    def topics_csr(self):
        """U (M x K) as host CSR (made on the card block by block)."""
        if self.U is None:
            return None
        xp = self.be.xp
        out = CSRBuilder(self.be, self.U.shape)
        for a, b in spans(self.n_terms, self.term_rows):
            out.add(xp.arange(a, b), self.U[a:b])
        return sp.csr_matrix(self.be.to_host(out.finish()))


def _gram_live(be, st):
    """``UᵀU`` (float64, host) from the non-zero rows of U, ``term_rows`` rows at a time."""
    xp = be.xp
    rows = xp.flatnonzero(st.live)
    G = xp.zeros((st.K, st.K), dtype=np.float64)
    for a, b in spans(int(rows.shape[0]), st.term_rows):
        Ub = st.U[rows[a:b]].astype(np.float64)
        G += Ub.T @ Ub
    return np.asarray(be.to_host(G), dtype=np.float64)


def _phi(be, st, batch):
    """``Φ = X_c U[cols]`` over the batch's blocks of terms."""
    Phi = None
    for cols, Xc, _ in batch.blocks:
        part = Xc @ gather_rows(be, st.U, cols)
        Phi = part if Phi is None else Phi + part
    if Phi is None:
        return be.xp.zeros((batch.n, st.K), dtype=be.dtype)
    return be.xp.asarray(Phi, dtype=be.dtype)


class _Changes:
    """The old values of the rows a batch's U-steps change (each row saved once, as int32 CSR per block of
    rows), for ``u_change_ = ‖U_after − U_before‖`` over them."""

    def __init__(self, st):
        self.st = st
        self.saved = st.be.xp.zeros(st.n_terms, dtype=bool)
        self.parts = []

    def save(self, rows):
        """Keep the current values of ``rows`` (device ints, increasing) not saved yet."""
        xp, st = self.st.be.xp, self.st
        fresh = rows[~self.saved[rows]]
        n = int(fresh.shape[0])
        if n:
            old = CSRBuilder(st.be, (n, st.K), what="the old values of the rows a mini-batch changes")
            old.add(xp.arange(n), st.U[fresh])
            self.parts.append((fresh, old.finish()))
            self.saved[fresh] = True

    def norm(self):
        xp, st = self.st.be.xp, self.st
        change = 0.0
        for rows, old in self.parts:
            d = st.U[rows].astype(np.float64)
            d -= dense_rows(st.be, old, 0, int(rows.shape[0]), dtype=np.float64)
            d *= d
            change += float(xp.sum(d))
        return float(np.sqrt(change))


def _batches(be, X, spans_, term_rows=TERM_ROWS):
    """Device batches of the rows ``spans_`` (each a (a, b) run or an index array), the next one prepared in
    a background thread on a card while the current one is used."""
    def make(i):
        s = spans_[i]
        return Batch(be, batch_rows(X, *s) if isinstance(s, tuple) else batch_rows(X, s), term_rows)
    return Prefetcher(be).items(make, len(spans_))


class DeviceStream:
    """Online RLSI's stream on a device (a ``PlacedStream`` of :mod:`rlsi.models.placement`): the statistics and
    topics of a :class:`DeviceOnline`, the mini-batches compacted and moved to the card ahead of use
    (:func:`_batches`), each mini-batch's step a :class:`DeviceMiniBatch`. The statistics are copied to the host
    (:meth:`statistics`) only when read, at most once per mini-batch."""

    release_after_fit = False

    def __init__(self, be, spec, st, stats_dtype):
        self.be, self.spec, self.st = be, spec, st
        self.stats_dtype = np.dtype(stats_dtype)
        self.key = f"{be.name}:{be.dtype.name}"
        self._host = None

    @classmethod
    def open(cls, be, spec, stats, topics=None, *, n_inner=1, first=None, term_rows=TERM_ROWS):
        """The stream from its host state (``stats``: TopicStatistics, ``topics``: M x K or None); ``first``:
        ``(n_terms, docs, nnz)`` of a new stream's mini-batches, checked against the card's memory first
        (:func:`rlsi.gpu.memory.check_online`)."""
        if first is not None:
            check_online(be, first[0], spec.n_components, first[2], first[1], n_inner=n_inner)
        st = DeviceOnline.from_state(be, spec.n_components, stats, topics, term_rows)
        return cls(be, spec, st, stats.dtype)

    # ------------------------------------------------------------------ state
    @property
    def n_docs(self):
        return self.st.n_docs

    @property
    def weight(self):
        return self.st.weight

    @property
    def has_topics(self):
        return self.st.U is not None

    def grow(self, M):
        self.st.grow(M)

    def set_topics(self, U0):
        st = self.st
        st.U = dense_topics(self.be, U0)
        st.live = live_rows(self.be, st.U, st.term_rows)

    def topics(self):
        return self.st.topics_csr()

    def reseed(self, U, topics):
        """Continue with the topics U (host CSR), whose ``topics`` were re-seeded (their rows and columns of S and
        columns of R forgotten on the card). Only a batch that re-seeds moves U back to the card."""
        if not len(topics):
            return
        st, xp = self.st, self.be.xp
        st.U = dense_topics(self.be, U)
        st.live = live_rows(self.be, st.U, st.term_rows)
        st.S[topics, :] = 0.0
        st.S[:, topics] = 0.0
        st.R[:, xp.asarray(topics)] = 0
        st.rowmax = row_maxima(self.be, st.R, st.term_rows)
        self._host = None

    def add_topics(self, U, stats):
        """Continue with more topics (a topic born in the stream): the card's state rebuilt from the host's."""
        self.spec = self.spec.with_topics(U.shape[1])
        self.st = DeviceOnline.from_state(self.be, U.shape[1], stats, U, self.st.term_rows)
        self._host = None

    def statistics(self):
        if self._host is None:
            self._host = self.st.to_statistics(self.stats_dtype)
        return self._host

    def attributes(self):
        return {}

    def release(self):
        """Nothing to release: the card's arrays go with the stream."""

    # ------------------------------------------------------------------ mini-batches
    def batches(self, X, spans):
        return _batches(self.be, X, spans, self.st.term_rows)

    def batch(self, X):
        return Batch(self.be, batch_rows(sp.csr_matrix(X), 0, X.shape[0]), self.st.term_rows)

    @staticmethod
    def host(batch):
        return batch.host

    def begin(self, batch, decay, n_inner):
        self._host = None
        return DeviceMiniBatch(self, batch, decay, n_inner)


class DeviceMiniBatch:
    """One mini-batch of Algorithm 4 on a :class:`DeviceStream` (the module docstring): ``project`` the V-step and
    the batch's statistics, ``solve`` the U-step, ``close`` the change of U and the batch's vectors."""

    def __init__(self, stream, batch, decay, n_inner):
        self.stream, self.batch = stream, batch
        st, spec = stream.st, stream.spec
        n = batch.n
        t0 = st.n_docs
        st.rescale(decay)
        self.lam1 = spec.effective_lambda1(st.weight + n)
        self.S_base, self.weight_base, self.t0 = st.S.copy(), st.weight, t0
        if st.U is None:  # nothing to learn from yet: only count the documents
            st.weight, st.n_docs = self.weight_base + float(n), t0 + n
            return
        self.R_base = [st.R[cols] for cols, _, _ in batch.blocks] if n_inner > 1 else None  # gathers: copies
        self.tpen = get_penalty(spec.topic_penalty, param="topic_penalty")
        self.dpen = get_penalty(spec.doc_penalty, param="doc_penalty")
        self.changes = _Changes(st)
        self.inv = 1.0 / st.scale

    @property
    def has_topics(self):
        return self.stream.st.U is not None

    def project(self, W_prev):
        """``Φ = X_c U[cols]``, ``W = Φ (UᵀU + λ₂I)⁻¹`` (warm-started from ``W_prev`` where the solver is
        iterative), ``S = S_base + WᵀW`` and ``R_stored[cols] = R_base + X_cᵀW / scale``."""
        stream = self.stream
        st, be, spec, batch = stream.st, stream.be, stream.spec, self.batch
        xp = be.xp
        G = _gram_live(be, st)
        Phi = _phi(be, st, batch)
        W0 = W_prev if self.dpen.warm_start else None
        W, _ = solve_penalty(be, self.dpen, self.dpen.prepare(G, spec.lambda2), Phi, W0, spec.lambda2,
                             max_iter=spec.inner_max_iter, tol=spec.inner_tol)
        Phi = None
        W = xp.asarray(W, dtype=be.dtype)
        W64 = W.astype(np.float64)
        st.S = self.S_base + np.asarray(be.to_host(W64.T @ W64))
        W64 = None
        for i, (cols, _, XcT) in enumerate(batch.blocks):  # R_stored[cols] = R_base + X_cᵀW / scale
            new = xp.asarray(XcT @ W).astype(np.float64)
            new *= self.inv
            new += st.R[cols] if self.R_base is None else self.R_base[i]
            new = new.astype(st.R.dtype)
            st.R[cols] = new
            st.rowmax[cols] = xp.abs(new).max(axis=1).astype(np.float64)
            new = None
        st.weight, st.n_docs = self.weight_base + float(batch.n), self.t0 + batch.n
        return W

    def solve(self, max_iter):
        """The U-step on the stored rows with ``(S/scale, λ/scale)`` (the same minimiser, :mod:`rlsi.models.stats`)
        for the rows that can be non-zero, in blocks of ``term_rows``."""
        st, be, spec = self.stream.st, self.stream.be, self.stream.spec
        xp = be.xp
        S_s, lam_s = (st.S, self.lam1) if st.scale == 1.0 else (st.S / st.scale, self.lam1 / st.scale)
        half = lam_s / 2.0 if self.tpen.norm == "l1" else -1.0
        rows = xp.flatnonzero(st.live | (st.rowmax > half))
        prepared = self.tpen.prepare(S_s, lam_s)
        for a, b in spans(int(rows.shape[0]), st.term_rows):
            rb = rows[a:b]
            self.changes.save(rb)
            Ub, _ = solve_penalty(be, self.tpen, prepared, st.R[rb], rows_f(xp, st.U, rb), lam_s,
                                  max_iter=max_iter, tol=spec.inner_tol, own_u0=True)
            st.U[rb] = Ub
            st.live[rb] = xp.any(Ub != 0, axis=1)
            Ub = None

    def close(self, W, want_w=True):
        """``(W, ‖U_t − U_{t−1}‖_F)``: the batch's vectors on the host (float64; None without ``want_w``: ``fit``
        copies nothing back per mini-batch)."""
        if not self.has_topics:
            return np.zeros((self.batch.n, self.stream.spec.n_components)), 0.0
        W = np.asarray(self.stream.be.to_host(W)).astype(np.float64) if want_w else None
        return W, self.changes.norm()


__all__ = ["Batch", "DeviceMiniBatch", "DeviceOnline", "DeviceStream", "ridge_inverse"]
