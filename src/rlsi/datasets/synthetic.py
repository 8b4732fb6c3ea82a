"""Synthetic topic-structured Zipfian corpora, in memory (:func:`make_corpus`) or streamed to a matrix
directory (:func:`write_corpus`, ``rlsi synth``) — the same matrix for the same seed.

Model (all sampling vectorised and seeded):

* Vocabulary of ``n_terms`` term ids. Term ids are a random permutation of frequency ranks, as in a
  real vocabulary sorted alphabetically.
* Background: a Zipf law ``p(rank r) ∝ 1 / (r + 1)^background_exponent`` over the whole vocabulary.
* ``n_topics`` planted topics. Topic t owns a slice of ``topic_vocab`` terms: a window, at a random
  offset, of a second random ordering of the vocabulary, so that slices of different topics overlap
  (a term belongs to ``n_topics * topic_vocab / n_terms`` topics on average). Inside its slice a topic
  is Zipfian with ``topic_exponent``, over its own random ordering of the slice. Topic popularity is
  itself Zipfian (``topic_popularity_exponent``), so there are big and small topics.
* Document d: length ``|d| ~ Poisson(Gamma(shape=2, mean=tokens_per_doc))`` (at least ``min_tokens``),
  a share ``background_share`` of its tokens from the background, the rest from 1..``max_doc_topics``
  topics with Dirichlet(1) weights.
* Weighting of the TOIS paper (§8.1): ``tf-idf(t, d) = n(t, d) / |d| · log(N / df(t))`` (natural log),
  optionally each row scaled to unit length (``norm="l2"``, as :class:`rlsi.text.TfidfVectorizer`).
  Terms that never occur keep their (empty) column, so the matrix is exactly ``n_docs x n_terms``;
  a term occurring in every document has idf 0 and its entries are removed.

Streaming. The per-document quantities (length, topics, topic weights: a few numbers each) are drawn
first; the tokens — the bulk — are then drawn chunk by chunk of documents. Each chunk starts its uniform
draws where the all-at-once generator (:mod:`rlsi.oracle.synthetic`, the generator as first written)
would be at that token: a ``PCG64`` generator jumps there with ``advance`` (one 64-bit draw per uniform
double). So the chunks never hold more than about ``chunk_tokens`` tokens, and the matrix is the one the
all-at-once generator gives for the seed, whatever the chunk size (tested). The total number of
background tokens decides where the later draws start, so the uniforms are drawn twice (a cheap first
pass that only counts). tf-idf needs the document frequencies of the whole corpus: :func:`write_corpus`
keeps the counts in a scratch file and weights them in a second pass over it; the matrix directory
stores the raw counts too, aligned with X (for BM25).

Memory of :func:`write_corpus`: O(N + M + n_topics * topic_vocab) plus one chunk, never the tokens.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._progress import progress_bar
from .._validation import check_choice, check_number
from ..errors import RLSIError

__all__ = ["SyntheticCorpus", "make_corpus", "write_corpus", "describe", "NORMS"]

log = logging.getLogger(__name__)

NORMS = {None: "the paper's weights", "l2": "unit rows"}
#: Tokens drawn per chunk (a chunk costs about 80 bytes per token while it is drawn).
CHUNK_TOKENS = 1 << 22


@dataclass
class SyntheticCorpus:
    """``X``: tf-idf CSR (N x M); ``counts``: raw term counts CSR (N x M, int32); ``doc_topics``: planted
    topics of each document (N x max_doc_topics, -1 = none); ``topic_terms``: the slice of each topic
    (n_topics x topic_vocab term ids, most probable first)."""

    X: sp.csr_matrix
    counts: sp.csr_matrix
    doc_topics: np.ndarray
    topic_terms: np.ndarray
    seconds: float


def _zipf_cdf(n, exponent):
    p = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** exponent
    c = np.cumsum(p)
    c /= c[-1]
    return c


# ------------------------------------------------------------------------------------------ random streams
def _state_after(state, n_draws):
    """The PCG64 state ``n_draws`` 64-bit draws after ``state``. The buffered 32-bit half (used by bounded
    integer draws) is not touched by uniform doubles, so it is carried over (``advance`` would drop it)."""
    bitgen = np.random.PCG64()
    bitgen.state = state
    bitgen.advance(int(n_draws))
    after = bitgen.state
    after["has_uint32"], after["uinteger"] = state["has_uint32"], state["uinteger"]
    return after


def _generator(state):
    bitgen = np.random.PCG64()
    bitgen.state = state
    return np.random.Generator(bitgen)


class _Plan:
    """Everything drawn before the tokens, and where each stream of token draws starts."""

    def __init__(self, n_docs, n_terms, tokens_per_doc, *, n_topics, topic_vocab, background_share,
                 max_doc_topics, background_exponent, topic_exponent, topic_popularity_exponent, min_tokens,
                 seed, chunk_tokens):
        N, M, T = int(n_docs), int(n_terms), int(n_topics)
        V = min(int(topic_vocab), M)
        rng = np.random.default_rng(seed)  # the order of the draws is the oracle's, call for call
        lengths = rng.poisson(rng.gamma(2.0, tokens_per_doc / 2.0, size=N))
        self.lengths = np.maximum(lengths, min_tokens).astype(np.int64)
        self.starts = np.zeros(N + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=self.starts[1:])
        self.n_tokens = int(self.starts[-1])
        pop = _zipf_cdf(T, topic_popularity_exponent)
        topic_rank_to_id = rng.permutation(T)
        self.n_dt = rng.integers(1, max_doc_topics + 1, size=N)
        doc_topics = topic_rank_to_id[np.searchsorted(pop, rng.random((N, max_doc_topics)))]
        slot = np.arange(max_doc_topics)[None, :]
        self.doc_topics = np.where(slot < self.n_dt[:, None], doc_topics, -1)
        w = rng.exponential(size=(N, max_doc_topics)) * (slot < self.n_dt[:, None])  # Dirichlet(1) on used slots
        self.cw = np.cumsum(w, axis=1)
        self.cw /= self.cw[:, -1:]
        del w, doc_topics

        # chunks of whole documents, about chunk_tokens tokens each
        cuts = np.searchsorted(self.starts, np.arange(0, self.n_tokens, max(1, int(chunk_tokens))), side="right") - 1
        self.bounds = np.unique(np.concatenate([cuts, [N]])).astype(np.int64)
        if self.bounds[0] != 0:
            self.bounds = np.concatenate([[0], self.bounds])

        self.share = float(background_share)
        self.s_u = rng.bit_generator.state  # the uniform of every token, then ...
        self.bg_before = np.zeros(len(self.bounds), dtype=np.int64)  # background tokens before each chunk
        for c in range(len(self.bounds) - 1):
            self.bg_before[c + 1] = self.bg_before[c] + int(np.count_nonzero(self._uniforms(c) < self.share))
        nb = int(self.bg_before[-1])
        rng = _generator(_state_after(self.s_u, self.n_tokens))
        self.bg_perm = rng.permutation(M)  # ... the background's ordering of the vocabulary ...
        self.s_bg = rng.bit_generator.state  # ... a uniform per background token ...
        rng = _generator(_state_after(self.s_bg, nb))
        slice_order = rng.permutation(M)  # ... the topics' slices ...
        offsets = rng.integers(0, M, size=T)
        local = np.argsort(rng.random((T, V)), axis=1)
        self.topic_terms = slice_order[(offsets[:, None] + local) % M]
        del slice_order, local
        self.s_tk = rng.bit_generator.state  # ... and a uniform per topic token.
        self.bg_cdf = _zipf_cdf(M, background_exponent)
        self.topic_cdf = _zipf_cdf(V, topic_exponent)
        self.N, self.M = N, M

    @property
    def n_chunks(self):
        return len(self.bounds) - 1

    def _uniforms(self, c):
        t0, t1 = self.starts[self.bounds[c]], self.starts[self.bounds[c + 1]]
        return _generator(_state_after(self.s_u, t0)).random(int(t1 - t0))

    def chunk_counts(self, c):
        """Term counts of the documents of chunk ``c``: CSR int32 (n_chunk_docs x M), sorted indices."""
        d0, d1 = int(self.bounds[c]), int(self.bounds[c + 1])
        t0 = int(self.starts[d0])
        u = self._uniforms(c)
        doc_of = np.repeat(np.arange(d0, d1, dtype=np.int64), self.lengths[d0:d1])
        is_bg = u < self.share
        terms = np.empty(len(u), dtype=np.int64)
        nb = int(np.count_nonzero(is_bg))
        b0 = int(self.bg_before[c])
        r = _generator(_state_after(self.s_bg, b0)).random(nb)
        terms[is_bg] = self.bg_perm[np.searchsorted(self.bg_cdf, r)]
        tk = ~is_bg
        d_tk = doc_of[tk]
        u_tk = (u[tk] - self.share) / (1.0 - self.share)  # uniform again on [0, 1)
        s = (self.cw[d_tk] < u_tk[:, None]).sum(axis=1)
        s = np.minimum(s, self.n_dt[d_tk] - 1)
        topic = self.doc_topics[d_tk, s]
        r = _generator(_state_after(self.s_tk, t0 - b0)).random(len(d_tk))
        terms[tk] = self.topic_terms[topic, np.searchsorted(self.topic_cdf, r)]
        del u, is_bg, tk, u_tk, s, topic, r
        # counts: documents in order, terms sorted inside each document
        key = (doc_of - d0) * self.M + terms
        del doc_of, terms
        key.sort()
        flag = np.empty(len(key), dtype=bool)
        if len(key):
            flag[0] = True
        np.not_equal(key[1:], key[:-1], out=flag[1:])
        starts = np.flatnonzero(flag)
        uniq = key[starts]
        cnt = np.diff(np.append(starts, len(key))).astype(np.int32)
        rows = uniq // self.M
        cols = uniq - rows * self.M
        indptr = np.zeros(d1 - d0 + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=d1 - d0), out=indptr[1:])
        itype = np.int32 if self.M < 2**31 else np.int64
        counts = sp.csr_matrix((cnt, cols.astype(itype), indptr), shape=(d1 - d0, self.M))
        counts.has_sorted_indices = True
        return counts


def _tfidf(indptr, indices, cnt, lengths, idf, norm, dtype):
    """Weighted rows ``n(t,d)/|d| · idf(t)`` (float64, then ``dtype``), optionally unit rows; no stored zeros."""
    n = len(indptr) - 1
    rows = np.repeat(np.arange(n), np.diff(indptr))
    data = cnt / lengths[rows] * idf[indices]
    if norm == "l2":
        norms = np.sqrt(np.bincount(rows, weights=data * data, minlength=n))[rows]
        data = np.divide(data, norms, out=np.zeros_like(data), where=norms > 0)
    X = sp.csr_matrix((data.astype(dtype), indices, indptr), shape=(n, len(idf)))
    X.has_sorted_indices = True
    X.eliminate_zeros()
    return X


def _idf(df, n_docs):
    idf = np.zeros(len(df))
    nz = df > 0
    idf[nz] = np.log(n_docs / df[nz])
    return idf


def _checked(n_docs, n_terms, tokens_per_doc, n_topics, topic_vocab, background_share, max_doc_topics,
             background_exponent, topic_exponent, topic_popularity_exponent, min_tokens, dtype, norm, seed):
    for name, value in (("n_docs", n_docs), ("n_terms", n_terms), ("n_topics", n_topics),
                        ("topic_vocab", topic_vocab), ("max_doc_topics", max_doc_topics)):
        check_number(name, value, low=1, integer=True)
    check_number("min_tokens", min_tokens, low=0, integer=True)
    check_number("tokens_per_doc", tokens_per_doc, low=0.0, low_inclusive=False)
    check_number("background_share", background_share, low=0.0, high=1.0, high_inclusive=False)
    for name, value in (("background_exponent", background_exponent), ("topic_exponent", topic_exponent),
                        ("topic_popularity_exponent", topic_popularity_exponent)):
        check_number(name, value, low=0.0)
    check_number("seed", seed, low=0, integer=True)
    check_choice("norm", norm, NORMS)
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        dtype = None
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise RLSIError(f"dtype={dtype!r} is not supported; use float32 or float64")
    return dtype


#: Largest mean document length: a document is drawn within one chunk of tokens.
MAX_TOKENS_PER_DOC = 1_000_000
#: Bytes of the plan's arrays per document and planted topic slot, per term, per topic-slice entry.
_PLAN_BYTES = (48, 32, 48, 32)


def plan_bytes(n_docs, n_terms, n_topics, topic_vocab, max_doc_topics) -> int:
    """Memory of the per-document, per-term and per-topic draws (the O(N + M + T·V) part, without a chunk)."""
    per_doc, per_slot, per_term, per_slice = _PLAN_BYTES
    return (int(n_docs) * (per_doc + per_slot * int(max_doc_topics)) + int(n_terms) * per_term
            + int(n_topics) * min(int(topic_vocab), int(n_terms)) * per_slice)


def _check_feasible(n_docs, n_terms, tokens_per_doc, model):
    """Refuse, before any draw, sizes whose arrays do not fit in the memory available (one line)."""
    from ..models.memory import available_memory, format_bytes

    if tokens_per_doc > MAX_TOKENS_PER_DOC:
        raise RLSIError(f"tokens_per_doc={tokens_per_doc:g}: at most {MAX_TOKENS_PER_DOC:,} tokens a document "
                        f"(each document is drawn whole)")
    need = plan_bytes(n_docs, n_terms, model["n_topics"], model["topic_vocab"], model["max_doc_topics"])
    avail = available_memory()
    limit = avail if avail is not None else 2**48
    if need > limit:
        raise RLSIError(f"{n_docs:,} documents, {n_terms:,} terms and {model['n_topics']:,} topics of "
                        f"{model['topic_vocab']:,} terms need {format_bytes(need)} for their draws, more than the "
                        f"{format_bytes(limit)} of memory {'available' if avail is not None else 'rlsi allows'}; "
                        f"generate a smaller corpus")


def _check_disk(path, n_docs, n_terms, tokens_per_doc, min_tokens, dtype):
    """Refuse a matrix directory that cannot fit on the disk of ``path`` (estimated from the token count)."""
    import os
    import shutil

    from ..models.memory import format_bytes

    tokens = int(n_docs) * max(float(tokens_per_doc), float(min_tokens))
    nnz = min(tokens, int(n_docs) * int(n_terms))
    need = int(nnz * (np.dtype(dtype).itemsize + 4 + 4 + 8))  # X data + indices + counts; scratch counts
    anchor = os.path.abspath(path)
    while not os.path.isdir(anchor) and os.path.dirname(anchor) != anchor:
        anchor = os.path.dirname(anchor)
    try:
        free = shutil.disk_usage(anchor).free
    except OSError:
        return
    if need > free:
        raise RLSIError(f"the corpus needs up to {format_bytes(need)} on disk ({nnz:,.0f} stored entries), more "
                        f"than the {format_bytes(free)} free at {anchor}; generate a smaller corpus")


def _planned(n_docs, n_terms, tokens_per_doc, dtype, norm, seed, chunk_tokens, model):
    """The checked fit dtype and the token plan shared by :func:`make_corpus` and :func:`write_corpus`."""
    dtype = _checked(n_docs, n_terms, tokens_per_doc, dtype=dtype, norm=norm, seed=seed, **model)
    _check_feasible(n_docs, n_terms, tokens_per_doc, model)
    return dtype, _Plan(n_docs, n_terms, tokens_per_doc, seed=seed, chunk_tokens=chunk_tokens, **model)


def make_corpus(n_docs=50_000, n_terms=200_000, tokens_per_doc=150, *, n_topics=200, topic_vocab=4_000,
                background_share=0.4, max_doc_topics=3, background_exponent=1.0, topic_exponent=1.1,
                topic_popularity_exponent=0.5, min_tokens=5, dtype=np.float64, norm=None, seed=0,
                chunk_tokens=CHUNK_TOKENS):
    """Generate the corpus in memory; returns a :class:`SyntheticCorpus` (see the module docstring).

    The tokens are drawn chunk by chunk (``chunk_tokens``), so the peak is the matrix plus one chunk."""
    t0 = time.perf_counter()
    model = dict(n_topics=n_topics, topic_vocab=topic_vocab, background_share=background_share,
                 max_doc_topics=max_doc_topics, background_exponent=background_exponent,
                 topic_exponent=topic_exponent, topic_popularity_exponent=topic_popularity_exponent,
                 min_tokens=min_tokens)
    dtype, plan = _planned(n_docs, n_terms, tokens_per_doc, dtype, norm, seed, chunk_tokens, model)
    counts = sp.vstack([plan.chunk_counts(c) for c in range(plan.n_chunks)], format="csr") if plan.n_chunks \
        else sp.csr_matrix((plan.N, plan.M), dtype=np.int32)
    counts.has_sorted_indices = True
    idf = _idf(np.bincount(counts.indices, minlength=plan.M), plan.N)
    X = _tfidf(counts.indptr, counts.indices, counts.data, plan.lengths, idf, norm, dtype)
    return SyntheticCorpus(X=X, counts=counts, doc_topics=plan.doc_topics, topic_terms=plan.topic_terms,
                           seconds=time.perf_counter() - t0)


def write_corpus(path, n_docs, n_terms, tokens_per_doc, *, n_topics=200, topic_vocab=4_000,
                 background_share=0.4, max_doc_topics=3, background_exponent=1.0, topic_exponent=1.1,
                 topic_popularity_exponent=0.5, min_tokens=5, dtype=np.float64, norm=None, seed=0,
                 chunk_tokens=CHUNK_TOKENS, verbose=0):
    """Generate the corpus chunk by chunk into the matrix directory ``path`` (:mod:`rlsi.io.matrix`).

    Same matrix as :func:`make_corpus` for the same arguments; memory stays at O(N + M) plus one chunk
    (the counts wait in a scratch file inside the folder being written until the document frequencies
    are known). ``verbose`` shows progress bars (documents/s). Returns a dict: ``n_docs``, ``n_terms``,
    ``nnz``, ``n_tokens``, ``seconds``, ``path``.
    """
    from ..io.matrix import MatrixWriter

    t_start = time.perf_counter()
    model = dict(n_topics=n_topics, topic_vocab=topic_vocab, background_share=background_share,
                 max_doc_topics=max_doc_topics, background_exponent=background_exponent,
                 topic_exponent=topic_exponent, topic_popularity_exponent=topic_popularity_exponent,
                 min_tokens=min_tokens)
    _checked(n_docs, n_terms, tokens_per_doc, dtype=dtype, norm=norm, seed=seed, **model)
    _check_disk(path, n_docs, n_terms, tokens_per_doc, min_tokens, dtype)
    dtype, plan = _planned(n_docs, n_terms, tokens_per_doc, dtype, norm, seed, chunk_tokens, model)
    N, M = plan.N, plan.M
    source = {"generator": "rlsi.datasets.synthetic", "n_docs": N, "n_terms": M,
              "tokens_per_doc": float(tokens_per_doc), "seed": int(seed), **model}
    meta = {"weighting": "tfidf", "norm": norm, "source": source}
    with MatrixWriter(path, n_cols=M, dtype=dtype, max_nnz=plan.n_tokens, meta=meta) as writer:
        itype = np.int32 if M < 2**31 else np.int64
        s_ind, s_cnt = writer.scratch("indices", itype), writer.scratch("counts", np.int32)
        df = np.zeros(M, dtype=np.int64)
        indptr = np.zeros(N + 1, dtype=np.int64)
        bar = progress_bar(N, "generating", verbose=verbose, unit="doc")
        for c in range(plan.n_chunks):
            counts = plan.chunk_counts(c)
            d0, d1 = plan.bounds[c], plan.bounds[c + 1]
            indptr[d0 + 1: d1 + 1] = counts.indptr[1:] + indptr[d0]
            df += np.bincount(counts.indices, minlength=M)
            s_ind.append(counts.indices)
            s_cnt.append(counts.data)
            if bar is not None:
                bar.update(int(d1 - d0))
        if bar is not None:
            bar.close()
        t_gen = time.perf_counter() - t_start
        idf = _idf(df, N)
        del df
        s_ind.close()
        s_cnt.close()
        indices = np.load(s_ind.path, mmap_mode="r")
        cnt = np.load(s_cnt.path, mmap_mode="r")
        bar = progress_bar(N, "weighting", verbose=verbose, unit="doc")
        for c in range(plan.n_chunks):
            d0, d1 = int(plan.bounds[c]), int(plan.bounds[c + 1])
            p0, p1 = int(indptr[d0]), int(indptr[d1])
            block_ptr, block_ind, block_cnt = indptr[d0:d1 + 1] - p0, np.array(indices[p0:p1]), np.array(cnt[p0:p1])
            X = _tfidf(block_ptr, block_ind, block_cnt, plan.lengths[d0:d1], idf, norm, dtype)
            # the raw counts too (stored aligned with X), for BM25 (rlsi.retrieval.Searcher.from_matrix)
            counts = sp.csr_matrix((block_cnt, block_ind, block_ptr), shape=X.shape)
            counts.has_sorted_indices = True
            writer.append(X, doc_lengths=plan.lengths[d0:d1], counts=counts)
            if bar is not None:
                bar.update(d1 - d0)
        if bar is not None:
            bar.close()
        del indices, cnt
        writer.extra["doc_topics"] = plan.doc_topics.astype(np.int32)
        writer.extra["topic_terms"] = plan.topic_terms.astype(itype)
        nnz = writer.nnz
    seconds = time.perf_counter() - t_start
    log.info("synthetic corpus: %d docs x %d terms, %d tokens, nnz %d, %.1f s (tokens %.1f s, weighting "
             "and writing %.1f s)", N, M, plan.n_tokens, nnz, seconds, t_gen, seconds - t_gen)
    return {"path": str(path), "n_docs": N, "n_terms": M, "nnz": int(nnz), "n_tokens": plan.n_tokens,
            "seconds": seconds}


def describe(c: SyntheticCorpus) -> str:
    """One line of statistics of a generated corpus."""
    X = c.X
    N, M = X.shape
    df = np.bincount(X.indices, minlength=M)
    tokens = int(c.counts.data.sum())
    return (f"{N} docs x {M} terms, {tokens / N:.1f} tokens/doc, nnz={X.nnz} ({X.nnz / N:.1f}/doc, "
            f"density {X.nnz / (N * M):.2e}), terms occurring: {(df > 0).sum()} "
            f"(df>=2: {(df >= 2).sum()}), max df {df.max()}, generated in {c.seconds:.1f} s")
