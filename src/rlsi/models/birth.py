"""Topics from unexplained documents: topics born in a stream (a theme arrives that no topic covers, and a new
topic is seeded from its documents) and dead topics re-seeded (:func:`reseed_dead_topics`).

Online RLSI (Algorithm 4) cannot learn a theme whose documents share no term with the current topics: they
project to v ≈ 0 and add nothing to the statistics. ``OnlineRLSI(birth=TopicBirth(), max_components=K_max)``
watches every mini-batch for such a theme and, when one persists, adds a topic for it with the next free id
(K, K + 1, ... up to ``max_components``); existing topics keep their ids and rows.

How a birth is decided (:class:`BirthWatch`, after each mini-batch's step, with the topics U it leaves):

1. **Unexplained documents.** Each document is projected on U (the model's own V-step) and its relative residual
   ``‖d − Uv‖ / ‖d‖`` computed; those at or above ``residual`` (default 0.9: the topics explain at most 19 % of
   ‖d‖²) are the candidates. Fewer than ``min_docs`` candidates: nothing to decide.
2. **Coherence against a null** (off by default: ``coherence=0``). The candidates' residuals, scaled to unit norm, form a cosine matrix whose top
   eigenvalue λ measures how much of them one direction carries (λ ≈ 1 for unrelated residuals, ≈ 1 + m·c for
   m residuals of mean cosine c). The same is computed for the *null block*: the candidates' documents with
   their entries' term ids permuted among all the block's entries (each document keeps its length and
   weights, each term its number of occurrences, but which documents share terms is random), projected and
   residualised the same way. ``coherence_t = λ / λ_null``: pure noise gives about 1 (its structure is only
   term popularity, which the null keeps). On real text the null is the *more* coherent block (20 Newsgroups,
   K = 20: 0.4–0.7 in every mini-batch, with or without a new group in it: its shuffled popular terms are shared
   by every document), so it separates nothing there; it is kept for corpora where it does.
3. **A jump over the stream's own level** (off by default: ``jump=0``). A corpus with more themes than topics leaves coherent residuals in
   every mini-batch (the under-fitted themes). With ``jump > 0`` a birth needs ``coherence_t`` (λ / λ_null) at
   least ``jump`` times the median of the last ``history`` (default 8) mini-batches' values, after ``warmup``
   (default 4) of them: a theme new in the stream, not one the model has always under-fitted.
4. **Enough members** (the test that decides by default). The members are the candidates whose residual has
   cosine at least ``member_cosine`` (0.1) with the leading direction of the candidates' residuals; they must be
   at least ``min_docs`` (5) and ``min_share`` (5 %) of the mini-batch. Unrelated residuals (noise, or the
   idiosyncratic rest of documents of known themes) share no direction: each has cosine about 1/√n with it.
5. **Persistence.** The same direction (cosine at least ``agreement``, 0.3, between their seed topics) must
   pass 1–4 in ``persist`` (default 2) consecutive mini-batches: a burst of near-duplicates, or the chance
   alignment of a few documents of known themes in one mini-batch, does not make a topic. Measured: on 20
   Newsgroups (``benchmarks/results/births.md``) test 4 passes in 2 of the 44 mini-batches of the first part
   (never two running) and in most mini-batches once three held-back groups arrive; on pure noise and on a
   planted stream without a new theme in none (``tests/models/test_birth.py``).

The seed topic is the leading direction of the members' residuals (Σ a_i e_i/‖e_i‖, a the top eigenvector) of
the agreeing mini-batches, averaged: its positive part (the topic step's ℓ1 rows may turn signs later), its
``top_terms`` largest weights, unit ℓ2 norm. Its statistics are those of the members projected on the grown
topics: ``S_kk = Σ v_k²`` and ``R[:, k] = Σ d v_k`` (no cross terms with the other topics: it starts decoupled,
and S stays positive semi-definite); the other topics keep theirs. The next mini-batches' topic steps refine it
like any topic. At most one topic is born per mini-batch.

The watch's memory is its recent values and the pending mini-batches' members (at most ``persist − 1`` of
them), never the stream; it is not saved with the model (a resumed stream starts watching again). Its cost per
mini-batch is one projection of the batch and an eigen-decomposition of at most ``batch_size``² entries, and with
the null tests on (``coherence`` or ``jump``) the same again for the null block.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, fields

import numpy as np
import scipy.sparse as sp

from .._params import replace_fields
from ..errors import RLSIError
from ..kernels.products import csr_csr_dense

log = logging.getLogger(__name__)

__all__ = ["Birth", "BirthValue", "BirthWatch", "TopicBirth", "add_born_topic", "check_births", "reseed_dead_topics", "residuals",
           "resolve_birth"]


@dataclass(frozen=True)
class TopicBirth:
    """When a new topic is born in a stream (see :mod:`rlsi.models.birth` for each test and its default).

    residual : a document is unexplained when ‖d − Uv‖/‖d‖ >= residual.
    coherence : the candidates' residual coherence must be at least this many times that of the null block (0: off).
    jump : ... and this many times the median of the last ``history`` mini-batches' coherence (0: off).
    history, warmup : mini-batches in that median, and mini-batches watched before any birth.
    min_docs, min_share : members needed, in documents and as a share of the mini-batch.
    member_cosine : cosine of a member's residual with the leading direction.
    persist, agreement : consecutive mini-batches that must agree, and the cosine of their seed topics.
    top_terms : terms of the seed topic.
    """

    residual: float = 0.9
    coherence: float = 0.0
    jump: float = 0.0
    history: int = 8
    warmup: int = 4
    min_docs: int = 5
    min_share: float = 0.05
    member_cosine: float = 0.1
    persist: int = 2
    agreement: float = 0.3
    top_terms: int = 50

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v):
                raise RLSIError(f"birth: {f.name}={v!r} must be a finite number")
        if not 0 < self.residual <= 1:
            raise RLSIError(f"birth: residual={self.residual!r} must be in (0, 1]")
        for name in ("history", "warmup", "min_docs", "persist", "top_terms"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise RLSIError(f"birth: {name}={v!r} must be a positive integer")
        for name in ("coherence", "jump", "min_share", "member_cosine", "agreement"):
            if getattr(self, name) < 0:
                raise RLSIError(f"birth: {name}={getattr(self, name)!r} must be >= 0")

    def but(self, **changes):
        """A copy with ``changes`` (RLSIError naming a field that does not exist)."""
        return replace_fields(self, "birth", changes)

    def __rlsi_json__(self):
        return asdict(self)


def resolve_birth(value):
    """The :class:`TopicBirth` of a ``birth`` parameter, or None (off): None or False (off), True (the defaults),
    a TopicBirth, or a mapping of some of its fields (a saved model's)."""
    if value is None or value is False:
        return None
    if value is True:
        return TopicBirth()
    if isinstance(value, TopicBirth):
        return value
    if isinstance(value, dict):
        return TopicBirth().but(**value)
    raise RLSIError(f"birth={value!r} is not a birth setting; give None, True, a TopicBirth or a dict of its fields")


class BirthValue:
    """The parameter constraint of ``birth`` (:func:`resolve_birth` accepts it)."""

    def check(self, name, value):
        try:
            resolve_birth(value)
        except TypeError as exc:
            raise RLSIError(f"{name}={value!r}: {exc}") from None


@dataclass
class Birth:
    """A topic to add: ``seed`` (M x 1 CSR, unit norm, non-negative), the members' documents ``X`` (CSR) and
    their stream positions ``documents``; ``coherence`` the top eigenvalue λ of the members' batch (λ / λ_null with
    the null tests on)."""

    seed: sp.csr_matrix
    X: sp.csr_matrix
    documents: list
    coherence: float


@dataclass
class _Proposal:
    seed: np.ndarray        # (M,) dense, unit norm
    X: sp.csr_matrix        # the members' rows
    documents: np.ndarray   # their stream positions


def _residual_gram(X, U, W, G):
    """``(E Eᵀ, ‖e‖²)`` of the residuals E = X − W Uᵀ (dense n x n, n = rows of X) without forming E."""
    Phi = csr_csr_dense(X, U, dtype=np.float64)
    XX = (X @ X.T).toarray()
    cross = Phi @ W.T
    gram = XX - cross - cross.T + W @ G @ W.T
    return gram, Phi


def _top_eigen(gram, norms):
    """Top eigenvalue and eigenvector (summing positive) of the cosine matrix of a residual Gram matrix."""
    C = gram / np.outer(norms, norms)
    vals, vecs = np.linalg.eigh(C)
    a = vecs[:, -1]
    return float(vals[-1]), (a if a.sum() >= 0 else -a)


class BirthWatch:
    """The birth test of one stream (the module docstring). ``project(X, U) -> W``: the model's V-step."""

    def __init__(self, settings, project, seed=0):
        self.settings = settings
        self.project = project
        self.levels = []        # coherence of the recent mini-batches
        self.pending = []       # proposals of the consecutive mini-batches that agreed so far
        self._rng = np.random.default_rng(seed)

    def observe(self, X, U, first_position):
        """Watch one mini-batch X (CSR, n x M) with the topics U (M x K CSR) it left; ``first_position``: the
        stream position of its first document. Returns a :class:`Birth` or None."""
        s = self.settings
        proposal, level = self._propose(X, U, first_position)
        ready = len(self.levels) >= s.warmup
        baseline = float(np.median(self.levels[-s.history:])) if self.levels else 0.0
        if level is not None:
            self.levels.append(level)
            del self.levels[:-s.history]
        if proposal is None or not ready or level < s.coherence or level < s.jump * baseline:
            self.pending = []
            return None
        if self.pending and _cosine(self.pending[-1].seed, proposal.seed) < s.agreement:
            self.pending = []
        self.pending.append(proposal)
        if len(self.pending) < s.persist:
            return None
        born, self.pending = self.pending, []
        return self._birth(born, level, U.shape[0])

    def step(self, stream, X, first_position):
        """Watch a mini-batch on a placed stream (:mod:`rlsi.models.placement`); when a topic is born the stream
        goes on with it. Returns the birth's record (``topic``, ``n_docs_seen``, ``documents``, ``coherence``)
        or None."""
        born = self.observe(X, stream.topics(), first_position)
        if born is None:
            return None
        stats = stream.statistics()
        U = add_born_topic(stream.topics(), stats, born, self.project)
        stream.add_topics(U, stats)
        log.info("topic %d born after %d documents, from %d of them", U.shape[1] - 1, stream.n_docs,
                 len(born.documents))
        return {"topic": U.shape[1] - 1, "n_docs_seen": int(stream.n_docs), "documents": born.documents,
                "coherence": born.coherence}

    def _propose(self, X, U, first_position):
        """``(proposal or None, coherence_t or None)`` of one mini-batch."""
        s = self.settings
        W = self.project(X, U)
        resid, x2, G = residuals(X, U, W)
        resid = np.maximum(resid, 0.0)
        rel = np.sqrt(np.divide(resid, x2, out=np.zeros_like(resid), where=x2 > 0))
        cand = np.flatnonzero((x2 > 0) & (rel >= s.residual))
        if len(cand) < max(s.min_docs, 2):
            return None, None
        Xc, Wc = X[cand], W[cand]
        gram, Phic = _residual_gram(Xc, U, Wc, G)
        norms = np.sqrt(np.maximum(np.diag(gram), 1e-300))
        lam, a = _top_eigen(gram, norms)
        level = lam
        if s.coherence > 0 or s.jump > 0:  # the null block's λ (tests 2 and 3, off by default)
            Xn = self._null_block(Xc)
            gram_n, _ = _residual_gram(Xn, U, self.project(Xn, U), G)
            level = lam / _top_eigen(gram_n, np.sqrt(np.maximum(np.diag(gram_n), 1e-300)))[0]
        cos = np.sqrt(max(lam, 0.0)) * a   # cosine of each residual with the leading direction
        members = np.flatnonzero(cos >= s.member_cosine)
        if len(members) < max(s.min_docs, s.min_share * X.shape[0]):
            return None, level
        b = a / norms
        seed = np.asarray(Xc.T @ b).ravel() - np.asarray(U @ (Wc.T @ b)).ravel()
        return _Proposal(_truncated(seed, s.top_terms), Xc[members], first_position + cand[members]), level

    def _null_block(self, Xc):
        """The candidates' documents with their entries' term ids permuted among the block's entries."""
        Xn = sp.csr_matrix((Xc.data.copy(), self._rng.permutation(Xc.indices), Xc.indptr.copy()), shape=Xc.shape)
        Xn.sum_duplicates()
        return Xn

    def _birth(self, proposals, level, M):
        """The :class:`Birth` of agreeing proposals: their seeds averaged (on M terms), their members together."""
        seed = np.zeros(M)
        for p in proposals:
            seed[: len(p.seed)] += p.seed
        seed = _truncated(seed, self.settings.top_terms)
        rows = [sp.csr_matrix((p.X.data, p.X.indices, p.X.indptr), shape=(p.X.shape[0], M)) for p in proposals]
        docs = np.concatenate([p.documents for p in proposals])
        nz = np.flatnonzero(seed)
        col = sp.csr_matrix((seed[nz], (nz, np.zeros(len(nz), dtype=np.int64))), shape=(M, 1))
        return Birth(col, sp.vstack(rows, format="csr"), [int(d) for d in docs], float(level))


def residuals(X, U, W):
    """``(‖d − Uv‖², ‖d‖², UᵀU)``: the squared residuals and norms of the rows d of X (CSR) with their vectors v
    (rows of W) on the topics U (M x K CSR), and the topics' Gram matrix (dense)."""
    Phi = csr_csr_dense(X, U, dtype=np.float64)
    G = (U.T @ U).toarray()
    x2 = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return x2 - 2.0 * np.einsum("ij,ij->i", Phi, W) + np.einsum("ij,ij->i", W @ G, W), x2, G


def reseed_dead_topics(X, U, project, min_unexplained):
    """``(U, topics, documents)``: every dead (all-zero) topic of U (M x K CSR) replaced by one of the rows of X
    (CSR) that the live topics explain worst, at unit norm — only rows with at least ``min_unexplained`` of ‖d‖²
    unexplained qualify — the indices of the topics re-seeded and of the rows used (``reseed_dead`` of
    :class:`rlsi.models.OnlineRLSI`; ``project(X, U) -> W`` its V-step)."""
    K = U.shape[1]
    dead = np.flatnonzero(np.bincount(U.indices, minlength=K) == 0)
    none = np.zeros(0, dtype=np.int64)
    if len(dead) == 0 or X.nnz == 0:
        return U, none, none
    resid, x2, _ = residuals(X, U, project(X, U))
    rel = np.divide(resid, x2, out=np.zeros_like(resid), where=x2 > 0)
    cand = np.flatnonzero(rel >= min_unexplained)
    if len(cand) == 0:
        return U, none, none
    cand = cand[np.argsort(-resid[cand], kind="stable")][: len(dead)]
    ks = dead[: len(cand)]
    seeds = X[cand].multiply(1.0 / np.sqrt(x2[cand])[:, None]).tocsr()   # one unit-norm doc per topic
    place = sp.csr_matrix((np.ones(len(ks)), (ks, np.arange(len(ks)))), shape=(K, len(ks)))
    U = (U + (place @ seeds).T).tocsr()
    U.eliminate_zeros()
    return U, ks, cand


def check_births(births):
    """The ``births_`` of a saved model (untrusted: a list of records with the expected fields and types)."""
    kinds = {"topic": int, "batch": int, "n_docs_seen": int, "documents": list, "coherence": (int, float)}
    if not isinstance(births, list) or not all(
            isinstance(b, dict) and set(b) == set(kinds) and all(isinstance(b[k], t) for k, t in kinds.items())
            and all(isinstance(d, int) for d in b["documents"]) for b in births):
        raise RLSIError("the saved births are damaged (expected a list of records of topic, batch, n_docs_seen, "
                        "documents, coherence)")
    return births


def add_born_topic(U, stats, birth, project):
    """The topics U (M x K CSR) with ``birth``'s seed as topic K; ``stats`` (TopicStatistics of the same M terms)
    grown to K + 1 topics in place: the new topic's ``S_kk = Σ v_k²`` and ``R[:, k] = Σ d v_k`` over the members'
    documents projected on the grown topics (``project(X, U) -> W``), no cross terms (the module docstring)."""
    U2 = sp.hstack([sp.csr_matrix(U), birth.seed], format="csr")
    v = project(birth.X, U2)[:, -1]
    stats.add_topics([[float(v @ v)]], np.asarray(birth.X.T @ v).reshape(-1, 1))
    return U2


def _truncated(v, k):
    """The positive part of v, its k largest entries kept, at unit ℓ2 norm (dense)."""
    v = np.maximum(np.asarray(v, dtype=np.float64), 0.0)
    if np.count_nonzero(v) > k:
        cut = np.argpartition(-v, k - 1)[:k]
        keep = np.zeros_like(v)
        keep[cut] = v[cut]
        v = keep
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def _cosine(a, b):
    m = min(len(a), len(b))
    return float(a[:m] @ b[:m])
