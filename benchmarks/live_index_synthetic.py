"""The steps of ``bench_live_index.py``'s 1.6M synthetic part, each run in its own child process: the topic
model, the live index in ten segments, the merge, adds and deletes, the rebuild, the peers."""

import json
import shutil
import time
from pathlib import Path

import numpy as np

import harness
from live_index_measure import _agreement, _bm25s, _fts5, _ids, _latency, _paired


# ----------------------------------------------------------------------------------- the 1.6M corpus
SEGMENT_DOCS = 160_000
BASE_DOCS = 1_600_000


def _matrix_df(X):
    df = np.zeros(X.shape[1], dtype=np.int64)
    for a in range(0, int(X.indptr[-1]), 1 << 24):
        df += np.bincount(np.asarray(X.indices[a:a + (1 << 24)]), minlength=X.shape[1])
    return df


def _vector_queries(df, n_docs, n, seed):
    """``n`` queries of 1-5 distinct terms drawn with probability df / sum(df) (as bench_search_scale.py),
    as (counts, tf-idf) 1-row CSR pairs with the generator's weighting log(N / df), and as term lists."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    cdf = np.cumsum(df.astype(np.float64))
    cdf /= cdf[-1]
    idf = np.log(n_docs / np.maximum(df, 1.0))
    M = len(df)
    out = []
    for _ in range(n):
        terms = set()
        length = int(rng.integers(1, 6))
        while len(terms) < length:
            terms.add(min(int(np.searchsorted(cdf, rng.random(), side="right")), M - 1))
        q = sorted(terms)
        out.append((sp.csr_matrix((np.ones(len(q)), q, [0, len(q)]), shape=(1, M)),
                    sp.csr_matrix((idf[q] / len(q), q, [0, len(q)]), shape=(1, M)), q))
    return out


def _live_queries(index, queries, warmup, candidates):
    lat, hits = _latency(lambda q: _ids(index.search_vectors(q[0], q[1], k=10, candidates=candidates)[0]),
                         queries, warmup)
    return lat, hits


def _memory():
    from bench_search_scale import _memory as memory

    return memory()


def child_fit(a):
    from bench_search_scale import _AnonPeak

    from rlsi import io
    from rlsi.io.matrix import load_matrix
    from rlsi.models import BatchRLSI

    anon = _AnonPeak()
    m = load_matrix(a.matrix, vectorizer=False)
    model, seconds = harness.timed(BatchRLSI(a.fit_k, max_iter=1, random_state=0).fit, m.X[: a.fit_docs])
    io.save(Path(a.workdir) / "model", model=model)
    return {"seconds": seconds, "peak_anon": anon.stop(), **_memory()}


def _setup(a):
    from rlsi import io
    from rlsi.io.matrix import load_matrix

    m = load_matrix(a.matrix, vectorizer=False)
    df = _matrix_df(m.X)
    queries = _vector_queries(df, m.X.shape[0], a.queries + a.warmup, 0)
    model = io.load(Path(a.workdir) / "model", mmap=True, only=["model"])["model"]
    return m, queries, model


def child_build(a):
    """The live index of the first 1.6M documents in ten segments, and its queries."""
    from bench_search_scale import _AnonPeak

    from rlsi.retrieval.live import LiveIndex

    m, queries, model = _setup(a)
    path = Path(a.workdir) / "live"
    shutil.rmtree(path, ignore_errors=True)
    anon = _AnonPeak()
    t = time.perf_counter()
    idx = LiveIndex.create(path, model, None, alpha=0.5, dtype=np.float32, merge_policy=False)
    idx.add_matrix(m, rows=(0, BASE_DOCS), segment_docs=SEGMENT_DOCS)
    build_s = time.perf_counter() - t
    out = {"build_s": build_s, "segments": idx.n_segments, "docs": len(idx), "peak_anon": anon.stop(), **_memory(),
           "bytes": sum(p.stat().st_size for p in path.iterdir())}
    out["latency"], hits = _live_queries(idx, queries, a.warmup, a.candidates)
    harness.write_json(Path(a.workdir) / "hits_ten.json", hits)
    idx.close()
    return out


def child_merge(a):
    from bench_search_scale import _AnonPeak

    from rlsi.retrieval.live import LiveIndex

    m, queries, model = _setup(a)
    anon = _AnonPeak()
    idx, open_s = harness.timed(LiveIndex.open, Path(a.workdir) / "live", merge_policy=False)
    ten = idx.snapshot()  # still searchable after the merge: the two are timed query by query in turn
    _, merge_s = harness.timed(idx.merge)
    out = {"open_s": open_s, "merge_s": merge_s, "segments": idx.n_segments, "peak_anon": anon.stop(), **_memory()}

    def run(snap):
        return lambda q: _ids(snap.search_vectors(q[0], q[1], k=10, candidates=a.candidates)[0])

    paired = _paired({"ten": run(ten), "merged": run(idx.snapshot())}, queries, a.warmup)
    out["latency_ten"], out["latency"] = paired["ten"][0], paired["merged"][0]
    out["agreement_ten_vs_merged"] = _agreement(paired["ten"][1], paired["merged"][1])
    idx.close()
    return out


def child_add(a):
    """1 % added in one commit, then 1 % deleted in one commit (bounded memory: the new rows only)."""
    from bench_search_scale import _AnonPeak

    from rlsi.retrieval.live import LiveIndex

    m, queries, model = _setup(a)
    anon = _AnonPeak()
    idx, open_s = harness.timed(LiveIndex.open, Path(a.workdir) / "live", merge_policy=False)
    n = m.X.shape[0]
    q = queries[0]
    idx.search_vectors(q[0], q[1], k=10, candidates=a.candidates)  # a serving index is warm: one query first
    add = lambda: (idx.add_matrix(m, rows=(BASE_DOCS, n), segment_docs=n), idx.commit())  # noqa: E731
    _, add_s = harness.timed(add)
    peak_add = anon.stop()
    width = len(str(n - 1))
    idx.delete(np.arange(BASE_DOCS, n).astype(f"U{width}"))  # the same documents added again: a second timing
    idx.commit()
    _, again_s = harness.timed(add)
    out = {"open_s": open_s, "added": n - BASE_DOCS, "add_s": add_s, "add_again_s": again_s, "peak_anon_add": peak_add}
    out["latency"], hits = _live_queries(idx, queries, a.warmup, a.candidates)
    harness.write_json(Path(a.workdir) / "hits_added.json", hits)
    gone = np.random.default_rng(1).choice(BASE_DOCS, size=n - BASE_DOCS, replace=False)
    anon = _AnonPeak()

    def delete():
        found = idx.delete(gone.astype(f"U{width}"))
        idx.commit()
        return found

    out["deleted"], out["delete_s"] = harness.timed(delete)
    out.update(peak_anon_delete=anon.stop(), segments=idx.n_segments, docs=len(idx), **_memory())
    idx.close()
    return out


def child_rebuild(a):
    """The rebuild: a static searcher of all 1,616,000 documents (Searcher.from_matrix, float32)."""
    from bench_search_scale import _AnonPeak

    from rlsi.retrieval import Searcher

    m, queries, model = _setup(a)
    anon = _AnonPeak()
    s, rebuild_s = harness.timed(Searcher.from_matrix, m, model, alpha=0.5, dtype=np.float32)
    out = {"rebuild_s": rebuild_s, "peak_anon": anon.stop(), **_memory()}
    out["latency"], hits = _latency(lambda q: _ids(s.search_vectors(q[0], q[1], k=10, candidates=a.candidates)[0]),
                                    queries, a.warmup)
    added = json.loads((Path(a.workdir) / "hits_added.json").read_text())
    out["agreement_added_vs_rebuild"] = _agreement(added, hits)
    return out


def child_peers(a):
    """The first ``--peer-docs`` documents: rlsi live (99 % + 1 %), SQLite FTS5, bm25s, same queries."""
    from rlsi.retrieval.live import LiveIndex
    from rlsi.retrieval.build import _row_slice

    m, queries, model = _setup(a)
    n = a.peer_docs
    base = n - n // 100
    C = _row_slice(m.count_matrix(), 0, n)
    ids = [str(i) for i in range(n)]
    path = Path(a.workdir) / "peer_live"
    shutil.rmtree(path, ignore_errors=True)
    idx = LiveIndex.create(path, model, None, alpha=0.5, dtype=np.float32, merge_policy=False)
    t = time.perf_counter()
    idx.add_matrix(m, rows=(0, base), segment_docs=base // 10 + 1)
    live_build = time.perf_counter() - t
    t = time.perf_counter()
    idx.add_matrix(m, rows=(base, n), segment_docs=n)
    live_add = time.perf_counter() - t
    idx.merge()
    lat, _ = _live_queries(idx, queries, a.warmup, a.candidates)
    idx.close()
    out = {"docs": n, "live": {"build_s": live_build, "add_s": live_add, "latency": lat}}
    harness.log("peers: token texts")
    texts = []
    for i in range(n):
        a0, a1 = C.indptr[i], C.indptr[i + 1]
        texts.append(" ".join(f"t{t}" for t, c in zip(C.indices[a0:a1], C.data[a0:a1]) for _ in range(int(c))))
    words = [[f"t{t}" for t in q[2]] for q in queries]
    out["fts5"] = _fts5(Path(a.workdir) / "peer_fts5.db", ids, texts, base, words, a.warmup, tokens=True)
    del texts
    vocab = {}
    token_ids = []
    for i in range(n):
        a0, a1 = C.indptr[i], C.indptr[i + 1]
        token_ids.append([vocab.setdefault(f"t{t}", len(vocab)) for t, c in zip(C.indices[a0:a1], C.data[a0:a1])
                          for _ in range(int(c))])
    out["bm25s"] = _bm25s(ids, token_ids, base, words, a.warmup, token_ids=(token_ids, vocab))
    return out
