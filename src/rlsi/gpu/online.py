"""Online RLSI on the device (TOIS Algorithm 4 with ρ, η, ξ): the statistics and the topics on the card.

:class:`DeviceOnline` keeps ``S`` (K x K, float64, host: it is tiny), ``R`` (M x K, device, stored as
``scale · R_stored`` as :class:`rlsi.models.stats.TopicStatistics` does: the re-scaling of a mini-batch is
O(K²), never an M x K pass), the topics U (M x K, dense, device), each row's ``max_k |r_stored|`` and which rows
of U are non-zero. A mini-batch step is :meth:`rlsi.models.OnlineRLSI._step` on these arrays:

* the batch is compacted to the terms it holds (``X_c``, n x |cols|, and its transpose), on the host;
* ξ times: ``Φ = X_c U[cols]``, ``W = Φ (UᵀU + λ₂I)⁻¹`` (``UᵀU`` over the non-zero rows of U only),
  ``S = S_base + WᵀW``, ``R_stored[cols] = R_base + X_cᵀW / scale`` (the batch's contribution replaced, not
  added ξ times), then the U-step on ``(S/scale, R_stored, λ₁/scale)`` — the same minimiser as on the re-scaled
  statistics — for the rows that can be non-zero (non-zero rows of U and rows with ``max|r| > λ/2``; every
  other row is optimal at zero), by the blocked coordinate descent of :mod:`rlsi.gpu.cd`.

Mini-batches move asynchronously on a card: the next batch is compacted and copied to the card by a
background thread on its own CUDA stream while the current one is computed (on numpy: one after the other).
The estimator's bookkeeping (t, λ₁(t), the decay ``(t₀/t₁)^ρ``, the initial topics, the random generator) is
the host path's own methods, so a device fit follows the host fit to rounding.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from ..models.host_statistics import HostStatistics
from ..models.minibatch import batch_rows
from ..models.penalties import penalty as get_penalty, ridge_inverse
from ..models.stats import TopicStatistics
from .backend import resolve
from .batch import gram_blocks
from .cd import solve_penalty
from .memory import check_online

#: Below this lazy ``scale`` the stored rows are multiplied out (as TopicStatistics does).
MIN_SCALE = 2.0 ** -40


class Batch:
    """A mini-batch compacted to its terms: ``cols`` (its term ids), ``Xc`` (n x |cols|) and ``XcT`` on the
    device, and the host CSR (for the initial topics)."""

    def __init__(self, be, X):
        X = sp.csr_matrix(X, dtype=np.float64)
        self.host = X
        self.n, self.n_terms = X.shape
        cols = np.unique(X.indices)
        Xc = sp.csr_matrix((X.data, np.searchsorted(cols, X.indices), X.indptr), shape=(X.shape[0], len(cols)))
        self.cols_host = cols
        if be.is_cuda:
            with be.stream() as stream:
                self._move(be, cols, Xc)
                stream.synchronize()
        else:
            self._move(be, cols, Xc)

    def _move(self, be, cols, Xc):
        self.cols = be.xp.asarray(cols.astype(np.int64))
        self.Xc = be.csr(Xc)
        self.XcT = be.csr(Xc.T.tocsr())


class DeviceOnline:
    """The device state of an online fit (see the module docstring)."""

    def __init__(self, be, n_components):
        self.be = be
        xp = be.xp
        K = int(n_components)
        self.K = K
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
    def from_estimator(cls, be, est):
        """The device state of an estimator's host state (a loaded model, or a stream begun on the host)."""
        st = cls(be, est.n_components)
        stats = est.stats_
        st.S = np.array(stats.S, dtype=np.float64)
        st.R = be.asarray(stats.stored_R)
        st.scale, st.n_docs, st.weight = float(stats.scale), int(stats.n_docs), float(stats.weight)
        st.rowmax = be.xp.abs(st.R).max(axis=1).astype(np.float64) if st.n_terms else st.rowmax
        if est._U is not None:
            U = est._U
            st.U = be.asarray(U.toarray() if sp.issparse(U) else U)
            st.live = be.xp.any(st.U != 0, axis=1)
        else:
            st.live = be.xp.zeros(st.n_terms, dtype=bool)
        return st

    def grow(self, M):
        xp = self.be.xp
        extra = M - self.n_terms
        if extra <= 0:
            return
        self.R = xp.concatenate([self.R, xp.zeros((extra, self.K), dtype=self.R.dtype)])
        self.rowmax = xp.concatenate([self.rowmax, xp.zeros(extra)])
        self.live = xp.concatenate([self.live, xp.zeros(extra, dtype=bool)])
        if self.U is not None:
            self.U = xp.concatenate([self.U, xp.zeros((extra, self.K), dtype=self.U.dtype)])

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
        """U (M x K) as host CSR."""
        U = self.U
        if U is None:
            return None
        C = self.be.sparse.csr_matrix(U)
        C.eliminate_zeros()
        return sp.csr_matrix(self.be.to_host(C))


def _gram_live(be, st):
    """``UᵀU`` from the non-zero rows of U."""
    rows = be.xp.flatnonzero(st.live)
    return gram_blocks(be, st.U[rows])


def _reseed(est, st, batch):
    """``reseed_dead``: the host path's choice of documents (:meth:`rlsi.models.OnlineRLSI._reseed`, on the
    topics as host CSR), then the re-seeded topics' statistics forgotten on the card (rows and columns of S,
    columns of R). Only a batch that re-seeds moves U back to the card."""
    be, xp = st.be, st.be.xp
    U = st.topics_csr()
    dead = np.flatnonzero(np.bincount(U.indices, minlength=st.K) == 0)
    if len(dead) == 0:
        return
    before = est.n_reseeded_
    U_new = sp.csr_matrix(est._reseed(batch.host, U))
    if est.n_reseeded_ == before:
        return
    alive = np.bincount(U_new.indices, minlength=st.K) > 0
    ks = dead[alive[dead]]
    st.U = be.asarray(U_new.toarray())
    st.live = xp.any(st.U != 0, axis=1)
    st.S[ks, :] = 0.0
    st.S[:, ks] = 0.0
    st.R[:, xp.asarray(ks)] = 0
    st.rowmax = xp.abs(st.R).max(axis=1).astype(np.float64) if st.n_terms else st.rowmax


def step(est, st, batch, *, want_w=True):
    """One mini-batch of Algorithm 4 on the device state ``st`` for estimator ``est``; returns W (host f64), or
    None with ``want_w=False`` (``fit``: no copy back per mini-batch)."""
    be, xp = st.be, st.be.xp
    warm = est.topics_initialized_
    n, M = batch.n, batch.n_terms
    st.grow(M)
    est.n_features_in_ = max(est.n_features_in_, M)
    t0 = st.n_docs
    if st.U is None:
        U0 = est._initial_topics(batch.host)
        if U0 is not None:
            st.U = be.asarray(sp.csr_matrix(U0).toarray())
            st.live = xp.any(st.U != 0, axis=1)
            est.topics_initialized_ = True
    elif est.reseed_dead:
        _reseed(est, st, batch)
    st.rescale(est.decay_at(t0, n))
    lam1 = est.lambda1_at(st.weight + n)
    S_base, weight_base = st.S.copy(), st.weight
    W = xp.zeros((n, st.K), dtype=be.dtype)
    if st.U is None:  # nothing to learn from yet: only count the documents
        st.weight, st.n_docs = weight_base + float(n), t0 + n
        est.lambda1_effective_ = lam1
        est.n_batches_ += 1
        est.n_docs_seen_ = st.n_docs
        return np.zeros((n, st.K))
    cols = batch.cols
    R_base = st.R[cols].copy() if est.n_inner > 1 else None
    tpen = get_penalty(est.topic_penalty, param="topic_penalty")
    dpen = get_penalty(est.doc_penalty, param="doc_penalty")
    saved = xp.zeros(st.n_terms, dtype=bool)  # rows whose value before the batch is kept (for u_change_)
    before = []
    inv = 1.0 / st.scale
    for it in range(est.n_inner):
        G = _gram_live(be, st)
        Phi = xp.asarray(batch.Xc @ st.U[cols], dtype=be.dtype)
        W0 = W if (dpen.warm_start and it > 0) else None
        W, _ = solve_penalty(be, dpen, dpen.prepare(G, est.lambda2), Phi, W0, est.lambda2,
                             max_iter=est.inner_max_iter, tol=est.inner_tol)
        W = xp.asarray(W, dtype=be.dtype)
        W64 = W.astype(np.float64)
        st.S = S_base + np.asarray(be.to_host(W64.T @ W64))
        contrib = xp.asarray(batch.XcT @ W).astype(np.float64) * inv
        st.R[cols] = (contrib + (st.R[cols] if R_base is None else R_base)).astype(st.R.dtype)
        st.rowmax[cols] = xp.abs(st.R[cols]).max(axis=1).astype(np.float64) if int(cols.shape[0]) else 0.0
        st.weight, st.n_docs = weight_base + float(n), t0 + n
        # U-step on the stored rows with (S/scale, λ/scale): the same minimiser (rlsi.models.stats)
        S_s, lam_s = (st.S, lam1) if st.scale == 1.0 else (st.S / st.scale, lam1 / st.scale)
        half = lam_s / 2.0 if tpen.norm == "l1" else -1.0
        rows = xp.flatnonzero(st.live | (st.rowmax > half))
        if int(rows.shape[0]) == 0:
            continue
        fresh = rows[~saved[rows]]
        before.append((fresh, st.U[fresh].copy()))
        saved[fresh] = True
        Ub, _ = solve_penalty(be, tpen, tpen.prepare(S_s, lam_s), st.R[rows], st.U[rows], lam_s,
                              max_iter=est._topic_sweeps(warm or it > 0), tol=est.inner_tol)
        st.U[rows] = Ub
        st.live[rows] = xp.any(Ub != 0, axis=1)
    change = 0.0
    for rows, old in before:
        d = (st.U[rows] - old).astype(np.float64)
        change += float(xp.sum(d * d))
    est.u_change_ = float(np.sqrt(change))
    est.lambda1_effective_ = lam1
    est.n_batches_ += 1
    est.n_docs_seen_ = st.n_docs
    return np.asarray(be.to_host(W)).astype(np.float64) if want_w else None


def _batches(be, X, spans_):
    """Device batches of the rows ``spans_`` (each a (a, b) run or an index array), the next one prepared in
    a background thread on a card while the current one is used."""
    def make(s):
        return Batch(be, batch_rows(X, *s) if isinstance(s, tuple) else batch_rows(X, s))
    if not be.is_cuda:
        for s in spans_:
            yield make(s)
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        nxt = pool.submit(make, spans_[0]) if spans_ else None
        for i in range(len(spans_)):
            cur = nxt.result()
            nxt = pool.submit(make, spans_[i + 1]) if i + 1 < len(spans_) else None
            yield cur


def _state(est, be):
    st = getattr(est, "_device_state", None)
    same = st is not None and st.be.name == be.name and st.be.dtype == be.dtype
    if same and HostStatistics.pending(est) is st:  # the stream's statistics are this state's, on the card
        return st
    stats = est.stats_
    if not same or st.n_docs != stats.n_docs or st.n_terms != stats.n_terms:
        # none yet, another device, or the host path went on since
        st = DeviceOnline.from_estimator(be, est)
        est._device_state = st
    return st


def publish(est, st, dtype):
    """The host attributes of the device state after a step: ``_U`` (CSR) and ``est._publish()``;
    ``stats_`` is left on the card until it is read (:class:`HostStatistics`)."""
    est._U = st.topics_csr()
    est.__dict__["_stats_pending"] = (st, est._stats_dtype(dtype))
    est._row_cache = None
    est._publish()


def fit_online(est, X):
    """``OnlineRLSI.fit(X)`` on ``est.device`` (the host path's passes, order and mini-batches)."""
    est._validate_params()
    be = resolve(est.device)
    X = est._check_X(be.to_host(X) if be.holds(X) else X, reset=True)  # a stream on the card: its host copy
    HostStatistics.forget(est)
    est._reset(X.dtype)
    N, M = X.shape
    check_online(be, M, est.n_components, int(X.nnz * min(1.0, est.batch_size / max(N, 1))) + 1,
                 min(est.batch_size, N))
    est._device_state = st = DeviceOnline(be, est.n_components)
    for _ in range(est.n_passes):
        order = est._rng.permutation(N) if est.shuffle else None
        spans_ = [(a, min(N, a + est.batch_size)) if order is None else np.sort(order[a:a + est.batch_size])
                  for a in range(0, N, est.batch_size)]
        for batch in _batches(be, X, spans_):
            step(est, st, batch, want_w=False)
    publish(est, st, X.dtype)
    return est


def partial_fit_transform(est, X):
    """``OnlineRLSI.partial_fit_transform(X)`` on ``est.device``."""
    be = resolve(est.device)
    X = be.to_host(X) if be.holds(X) else X

    def new_stream(X):  # the memory plan's check before any state; no device state from an earlier stream
        check_online(be, X.shape[1], est.n_components, X.nnz, X.shape[0])
        est._device_state = None

    X = est._check_partial_input(X, new_stream)
    st = _state(est, be)
    W = step(est, st, Batch(be, batch_rows(sp.csr_matrix(X), 0, X.shape[0])))
    publish(est, st, X.dtype)
    return W.astype(X.dtype, copy=False)


__all__ = ["DeviceOnline", "fit_online", "partial_fit_transform", "step", "ridge_inverse"]
