"""The memory models of ``bench_scale_ladder.py``'s peers: rough peak bytes of each on a corpus, and the largest
corpus of a given shape that fits in a budget by that model."""

GiB = 2**30
PEERS = ("nmf_mu", "minibatch_nmf", "svd", "lsi")
#: What a child holds before its fit (interpreter, numpy/scipy/scikit-learn/gensim, rlsi): added to the peers'
#: estimates (ours measure it: the baseline of rlsi.models.memory).
PROCESS = int(0.3 * GiB)


# ------------------------------------------------------------------------------------- memory models
def peer_memory(name, N, M, nnz, K, *, b=4, i=4, batch=1024, lsi_chunk=20000):
    """Rough peak bytes of a peer on X (N x M, nnz entries of b bytes, indices of i bytes), K topics: the
    input plus the largest arrays of the method (read from scikit-learn 1.9 / gensim 4.4):

    * nmf_mu: W (N x K) and H (K x M) with a numerator and a denominator of each, ``Wᵀ X`` and ``WᵀW H``
      (K x M), and W H on X's support (nnz values, twice);
    * minibatch_nmf: H, its running statistics A and B and their updates (K x M each, about 5), a batch's
      W and X;
    * svd: the randomized range finder's Q (N x (K+10)) and ``Xᵀ Q`` (M x (K+10)), float64, about three
      of each alive at once (QR / LU);
    * lsi: gensim's projection U (M x (K+100), float64: its default extra samples) while two are merged
      (about 4), plus a chunk as a dense-ish sparse block;

    plus :data:`PROCESS` for the process itself.
    """
    X = nnz * (b + i) + (N + 1) * i + PROCESS
    L = K + 10
    if name == "nmf_mu":
        return X + 4 * N * K * b + 6 * K * M * b + 2 * nnz * b
    if name == "minibatch_nmf":
        return X + 5 * K * M * b + 3 * batch * K * b + batch * M * 0
    if name == "svd":
        return X + 3 * (N + M) * L * 8
    if name == "lsi":
        return X + 4 * M * (K + 100) * 8 + 2 * lsi_chunk * (nnz // max(N, 1)) * 16
    raise ValueError(name)


def largest_size(name, K, budget, *, docs, terms, nnz, b=4, lsi_chunk=20000, batch=1024):
    """The largest corpus of the shape of ``docs`` x ``terms`` with ``nnz`` (M/N and nnz/N kept, as on the
    ladder) whose :func:`peer_memory` fits in ``budget`` bytes: ``(N, M, nnz, estimate)`` (indices int64
    beyond 2^31 entries, as scipy stores them)."""
    def need(n):
        m, z = round(n * terms / docs), round(n * nnz / docs)
        return peer_memory(name, n, m, z, K, b=b, i=4 if max(z, m) < 2**31 else 8, batch=batch,
                           lsi_chunk=lsi_chunk)

    lo, hi = 0, 1
    while need(hi) <= budget:
        lo, hi = hi, 2 * hi
        if hi > 2**40:  # pragma: no cover - a model that does not grow
            break
    while hi - lo > max(1, lo // 1000):
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if need(mid) <= budget else (lo, mid)
    return lo, round(lo * terms / docs), round(lo * nnz / docs), need(lo)
