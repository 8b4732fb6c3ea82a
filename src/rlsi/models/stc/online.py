"""Online sparse topical coding (§4, Algorithm 1 with the mini-batches of Eq. 12).

Each mini-batch is coded with β fixed (numba, documents in parallel; word codes never leave the
per-thread workspace) and β takes one step with ``α_t = τ0 / (t + τ)``, t the number of mini-batches seen
so far (Theorem 2's schedule; the paper sets τ = 10 and tunes τ0 per batch size, smaller for larger
batches): by default ``β ← (1 − α_t) β + α_t β̂_t``, β̂_t the majorise–minimise step on the mini-batch
(α_t is capped at 1; with 1/t rates this averages the mini-batch solutions), with
``dictionary_step="projected"`` the paper's ``β ← Π_P(β − α_t G_t / |batch|)``, or with
``dictionary_step="lbfgs"`` the same blend with β̂_t from the released code's solver (projected L-BFGS,
:func:`rlsi.models.stc.dictionary.lbfgs_dictionary`) on the mini-batch's loss ℓ(S_t, ·), its word codes
S_t kept while the mini-batch is processed. The mini-batch's loss involves only the columns of its terms
and says nothing about how a topic's mass divides between them and the rest of the vocabulary (the rest
costs nothing), so the L-BFGS step moves β on the batch's terms only and keeps the mass each topic gives
them: each row of β[:, terms] lives on ``{x ≥ 10⁻³⁰ m_k, Σ x = m_k}``, m_k its mass before the step. With
one mini-batch of the whole corpus and α = 1 each step is exactly one dictionary step of batch STC (tested;
for ``"lbfgs"`` batch STC with ``keep_word_codes=True``).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..._params import BATCH_SIZE, LDA_PASSES, PASSES, Choice, Real
from ...io import register
from ...kernels.threads import numba_threads
from ..streaming import StreamingFit
from . import dictionary, simplex
from .core import STCBase, check_counts, check_training_counts, log


@register("OnlineSTC")
class OnlineSTC(StreamingFit, STCBase):
    """Online STC (``collapsed=True``: online collapsed STC). Parameters of :class:`STCBase` plus

    The defaults are the ``table2`` preset's (:mod:`rlsi.models.stc.settings`): the online STC + SVM row of
    Table 2 at batch 32 (71.4 % on 20 Newsgroups, paper 66.3 %).

    batch_size : int, default 32 — documents per mini-batch.
    n_epochs : int, default 1 — passes over X in ``fit`` (documents shuffled each pass).
    tau0, tau : floats, default 1.0 and 10.0 — the learning rate ``α_t = τ0/(t + τ)``.
    dictionary_step : "projected" (default), "mm" or "lbfgs" — the step of each mini-batch (module
        docstring; "lbfgs" keeps the word codes of the mini-batch, nnz(batch) x K, while it is processed).
    dictionary_init : "lda" (default), "documents" or "uniform" — β⁰ as in :class:`SparseTopicalCoding`
        (the LDA start is outside the paper); online, "lda" fits the LDA on all of X in ``fit``, on the first
        mini-batch in ``partial_fit``.
    lda_passes : int, default 10 — batch passes of that LDA fit (as in :class:`SparseTopicalCoding`).

    ``partial_fit(X)`` takes one mini-batch (all of X). ``fit`` and ``partial_fit`` are the streaming skeleton's
    (:class:`rlsi.models.streaming.StreamingFit`). Attributes: ``components_``; ``n_batches_`` (t);
    ``n_docs_seen_``; ``word_code_sparsity_`` of the last mini-batch; ``n_iter_`` (epochs).
    """

    _parameter_constraints = {"batch_size": BATCH_SIZE, "n_epochs": PASSES,
                              "tau0": Real(low=0.0, low_open=True), "tau": Real(low=0.0),
                              "dictionary_init": Choice(("documents", "lda", "uniform")),
                              "lda_passes": LDA_PASSES}
    _state_scalars = ("n_features_in_", "n_iter_", "n_batches_", "n_docs_seen_")

    def __init__(self, n_components=60, *, lam=0.2, gamma=0.2, rho=0.01, eps=1e-3, prior="normal",
                 collapsed=False, max_sweeps=21, tol=1e-4, dictionary_step="projected", normalize_gradient=True,
                 batch_size=32, n_epochs=1, tau0=1.0, tau=10.0, dictionary_init="lda", lda_passes=10,
                 random_state=0, n_jobs=None, verbose=0):
        self.n_components = n_components
        self.lam = lam
        self.gamma = gamma
        self.rho = rho
        self.eps = eps
        self.prior = prior
        self.collapsed = collapsed
        self.max_sweeps = max_sweeps
        self.tol = tol
        self.dictionary_step = dictionary_step
        self.normalize_gradient = normalize_gradient
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.tau0 = tau0
        self.tau = tau
        self.dictionary_init = dictionary_init
        self.lda_passes = lda_passes
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def learning_rate(self, t):
        """α_t = τ0 / (t + τ) (at most 1 for the blended ``"mm"`` and ``"lbfgs"`` steps)."""
        a = self.tau0 / (t + self.tau)
        return a if self.dictionary_step == "projected" else min(a, 1.0)

    def _start(self, M, X=None, y=None):
        self.n_features_in_ = M
        self._set_components(self._init_beta(M, X, y))
        self.n_batches_ = 0
        self.n_docs_seen_ = 0
        self.n_iter_ = 0

    # ------------------------------------------------------------------ the streaming skeleton's hooks
    def _stream_threads(self):
        return numba_threads(self.n_jobs)

    def _stream_started(self):
        return getattr(self, "components_", None) is not None

    def _stream_total(self, X):
        return X.shape[0] * self.n_epochs

    def _check_stream_input(self, X, y):
        return check_training_counts(self._check_X(X, reset=True)), None  # unsupervised: y is ignored

    def _check_partial_input(self, X, y, new):
        if new:
            return check_training_counts(self._check_X(X, reset=True)), y
        return check_counts(self._check_X(X, reset=False)), y

    def _start_stream(self, X, y, partial=False):
        self._start(X.shape[1], X, self._init_labels(y))

    def _mini_batches(self, X, y):
        """Every pass shuffles the documents (``random_state``); the ``"mm"`` and ``"lbfgs"`` steps of ``fit`` keep the
        dictionary as βᵀ = U · diag(c) (:class:`_LazyDictionary`) so that a small mini-batch costs O(K · its
        vocabulary), not O(K · M): the blend (1 − α) β + α β̂ only rescales c and adds β̂ on the batch's terms
        ("mm"), or rewrites the batch's terms ("lbfgs"). The projected step needs whole rows (the projection), so
        it keeps the dense path."""
        rng = np.random.default_rng(self.random_state)
        t0 = time.perf_counter()
        self._lazy = None if self.dictionary_step == "projected" else _LazyDictionary(self.components_)
        try:
            for epoch in range(self.n_epochs):
                order = rng.permutation(X.shape[0])
                for a in range(0, len(order), self.batch_size):
                    rows = np.sort(order[a:a + self.batch_size])
                    yield X[rows], None if y is None else y[rows], len(rows)
                if self._lazy is not None:
                    self._set_components(self._lazy.dense())
                self.n_iter_ += 1
                if self.verbose:
                    log.info("%s epoch %d: %d mini-batches, word-code sparsity %.3f, %.1fs", type(self).__name__,
                             epoch + 1, self.n_batches_, self.word_code_sparsity_, time.perf_counter() - t0)
        finally:
            self._lazy = None

    def _learn(self, X, y, fitting):
        """One mini-batch update (Algorithm 1, lines 3–6): on ``fit``'s factored dictionary, or on β."""
        lazy = getattr(self, "_lazy", None) if fitting else None
        if lazy is None:
            self._update(X, y)
        else:
            self._update_lazy(lazy, X, y)

    def _update(self, X, y):
        if self.dictionary_step == "lbfgs":
            beta = np.array(self.components_, dtype=np.float64)
            cols, local = _local_columns(X)
            beta[:, cols] = self._lbfgs_step(local, np.ascontiguousarray(beta[:, cols]), X, y, len(cols) == beta.shape[1])
            self._set_components(beta)
            return
        beta = np.asarray(self.components_, dtype=np.float64)
        self._before_coding(X, beta, y)
        theta = np.zeros((X.shape[0], self.n_components))
        G, B, f, sweeps, zeros, cols = self._code(X, beta, theta, want_grad=True, **self._supervision(X, y))
        self.word_code_sparsity_ = float(zeros.sum() / max(X.nnz * self.n_components, 1))
        self.last_objective_ = float(f.sum())
        alpha = self.learning_rate(self.n_batches_)
        self._set_components(self._dictionary_step(beta, G, B, X.shape[0], alpha, cols))
        self._after_update(X, y, theta, alpha)
        self.n_batches_ += 1
        self.n_docs_seen_ += X.shape[0]

    def _update_lazy(self, lazy, X, y):
        """:meth:`_update` on the factored dictionary: the same arithmetic (codes of the batch under β,
        the majorise–minimise or L-BFGS step on the batch's terms, the blend with α_t), touching only those
        terms."""
        cols, local = _local_columns(X)
        betaT = lazy.rows(cols)  # (|cols|, K) = β[:, cols]ᵀ
        if self.dictionary_step == "lbfgs":
            lazy.assign(cols, self._lbfgs_step(local, np.ascontiguousarray(betaT.T), X, y,
                                               len(cols) == lazy.U.shape[0]))
            return
        self._before_coding(local, betaT.T, y)
        theta = np.zeros((X.shape[0], self.n_components))
        G, B, f, sweeps, zeros, _ = self._code(local, betaT.T, theta, want_grad=True,
                                               **self._supervision(X, y))
        self.word_code_sparsity_ = float(zeros.sum() / max(X.nnz * self.n_components, 1))
        self.last_objective_ = float(f.sum())
        alpha = self.learning_rate(self.n_batches_)
        sub = np.ascontiguousarray(betaT.T)
        new_sub = simplex.mm_rows(sub, G + B, B)
        # a topic with no code mass in the batch keeps its row (as in _dictionary_step)
        active = np.any(sub * B > 0, axis=1)
        lazy.blend(cols, new_sub, alpha, active)
        self._after_update(X, y, theta, alpha)
        self.n_batches_ += 1
        self.n_docs_seen_ += X.shape[0]

    def _lbfgs_step(self, local, sub, X, y, whole):
        """``"lbfgs"``: code the mini-batch (``local``: its counts on its own terms, ``sub`` = β on them,
        K x |terms|) keeping its word codes, then ``(1 − α_t) sub + α_t β̂`` with β̂ the projected L-BFGS
        solution of ℓ(S_t, ·) that keeps each topic's mass on these terms (all of β's rows sum to 1 when
        ``whole``: the batch has every term, and the rows are projected on the simplex as in batch STC)."""
        self._before_coding(local, sub, y)
        theta = np.zeros((X.shape[0], self.n_components))
        S = np.zeros((X.nnz, self.n_components))
        _, _, f, _, zeros, _ = self._code(local, sub, theta, S=S, want_grad=False, **self._supervision(X, y))
        self.word_code_sparsity_ = float(zeros.sum() / max(X.nnz * self.n_components, 1))
        self.last_objective_ = float(f.sum())
        alpha = self.learning_rate(self.n_batches_)
        new, _ = dictionary.lbfgs_dictionary(local, sub, S, float(self.eps),
                                             mass=None if whole else sub.sum(axis=1))
        out = new if alpha == 1.0 else (1.0 - alpha) * sub + alpha * new
        self._after_update(X, y, theta, alpha)
        self.n_batches_ += 1
        self.n_docs_seen_ += X.shape[0]
        return out

    def _supervision(self, X, y):
        return {}

    def _before_coding(self, X, beta, y):
        """Called with each mini-batch (X on the columns of ``beta``, K x those columns) before it is coded."""

    def _init_labels(self, y):
        return None

    def _after_update(self, X, y, theta, alpha):
        pass


def _local_columns(X):
    """``(cols, local)``: the terms of the mini-batch X (sorted) and X on those columns only."""
    cols = np.unique(X.indices)
    local = sp.csr_matrix((X.data, np.searchsorted(cols, X.indices), X.indptr), shape=(X.shape[0], len(cols)))
    return cols, local


class _LazyDictionary:
    """β (K x M) stored as ``βᵀ = U · diag(c)``: U (M x K, C order: a term's K weights together, the layout
    the coding kernel reads) and one scale c_k per topic.

    ``blend(cols, new, α, active)`` sets ``β_k ← (1 − α) β_k + α β̂_k`` for the active topics, where β̂_k is
    zero outside ``cols`` (the majorise–minimise step of a mini-batch puts no mass on terms it did not
    see): c_k ← (1 − α) c_k and ``U[cols, k] += α β̂_k / c_k`` — O(K |cols|) instead of O(K M). The scales
    shrink like Π(1 − α_t) (≈ τ/(t + τ)); they are folded back into U before they underflow.
    """

    def __init__(self, beta):
        self.U = np.ascontiguousarray(np.asarray(beta, dtype=np.float64).T)
        self.c = np.ones(self.U.shape[1])

    def rows(self, cols):
        return self.U[cols] * self.c

    def blend(self, cols, new, alpha, active):
        if not np.any(active):
            return
        ks = np.flatnonzero(active)
        if alpha >= 1.0:  # the step replaces the row: nothing of the old β survives
            self.U[:, ks] = 0.0
            self.c[ks] = 1.0
            self.U[np.ix_(cols, ks)] = new[ks].T
            return
        self.c[ks] *= 1.0 - alpha
        self.U[np.ix_(cols, ks)] += alpha * new[ks].T / self.c[ks]
        if self.c[ks].min() < 1e-200:
            self.U *= self.c
            self.c[:] = 1.0

    def assign(self, cols, values):
        """β[:, cols] ← values (K x |cols|)."""
        self.U[cols] = values.T / self.c

    def dense(self):
        """β (K x M)."""
        return np.ascontiguousarray((self.U * self.c).T)
