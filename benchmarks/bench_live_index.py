"""The live index against a rebuild, SQLite FTS5 and bm25s: adding documents, deleting them, and querying
ten unmerged segments against one merged segment, on 20 Newsgroups and on the 1.6M synthetic corpus.

Targets (the live index's issue): adding 1 % of the corpus costs at most 1/20 of a rebuild; query p50 and
p95 with ten unmerged segments at most 1.5 x those of one merged segment; the top 10 identical to a rebuild.

**20 Newsgroups** (``--newsgroups``; ../shared/data/twenty_newsgroups, 18,846 posts, title + text):
a topic model (``BatchRLSI``, ``--k`` topics, fitted once, not timed) and its vectorizer; 99 % of the posts
are indexed in ten commits (ten segments, no merge), then the last 1 % is added in one commit. A rebuild is
a static :class:`~rlsi.retrieval.Searcher` of every post, and a live index of every post in one commit.
Queries: ``--queries`` queries of 2-4 words drawn from random posts (seed 0), top 10, one at a time after
``--warmup`` unrecorded ones, in exact mode (every document scored, the default of ``rlsi search``).
Peers on the same posts and queries: SQLite FTS5 (the standard library's ``sqlite3``; a file database,
its default durable commits; bm25() ranking, the query words OR-ed) adds incrementally; bm25s
(``method="lucene"``, English stop words) rebuilds — its idf is baked into its scores, so one more post
means a new index.

**1.6M synthetic** (``--matrix DIR``: ``rlsi synth --docs 1616000 --terms 7000000 --tokens 300 --topics 500
--dtype float32``; the first 1,600,000 documents are the corpus, the last 16,000 the 1 % added): each step
in a child process (its peak RSS its own): a quick topic model (``--fit-k`` topics, one iteration on the
first ``--fit-docs`` documents; only K matters here); the live index built from the matrix in ten
segments of 160,000 (float32 topic vectors); queries on the ten segments; 16,000 documents added, then
16,000 deleted, each in one commit; the merge into one segment and the queries again; the rebuild, a
static ``Searcher.from_matrix`` of all 1,616,000. Queries: 1-5 distinct terms drawn in proportion to
their document frequency (seed 0), vectorised (a synthetic corpus has no words), candidate mode (the term
model's 1,000 best reranked with topics, as ``bench_search_scale.py``). The peers run on the first
``--peer-docs`` documents with the same queries (at 1.6M, FTS5's build takes the better part of an hour
here and bm25s needs the corpus as Python token lists, about 20 GiB), next to the live index on those documents.

Usage::

    PYTHONPATH=src python benchmarks/bench_live_index.py --newsgroups --out benchmarks/results/live_index.md
    PYTHONPATH=src python benchmarks/bench_live_index.py --matrix /work/runs/live/m1616k --workdir /tmp/live \\
        --out benchmarks/results/live_index.md      # adds the 1.6M section to the same report
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

harness.use_src()

TARGET_ADD = 1 / 20
TARGET_LATENCY = 1.5


def _pcts(seconds):
    a = np.asarray(seconds) * 1000
    return {"p50": float(np.percentile(a, 50)), "p95": float(np.percentile(a, 95)), "mean": float(a.mean()), "n": len(a)}


def _latency(fn, queries, warmup):
    for q in queries[:warmup]:
        fn(q)
    times, results = [], []
    for q in queries:
        t = time.perf_counter()
        results.append(fn(q))
        times.append(time.perf_counter() - t)
    return _pcts(times), results


def _paired(fns, queries, warmup):
    """:func:`_latency` of several searches, query by query in turn (the order rotating), so that each sees
    the machine's load of the same moments: ``{name: (percentiles, results)}``."""
    names = list(fns)
    for q in queries[:warmup]:
        for n in names:
            fns[n](q)
    times = {n: [] for n in names}
    results = {n: [] for n in names}
    for i, q in enumerate(queries):
        for n in names[i % len(names):] + names[:i % len(names)]:
            t = time.perf_counter()
            results[n].append(fns[n](q))
            times[n].append(time.perf_counter() - t)
    return {n: (_pcts(times[n]), results[n]) for n in names}


def _agreement(a, b):
    """Share of queries whose top-10 id lists are identical, and of the top-10 sets' overlap."""
    same = np.mean([x == y for x, y in zip(a, b)])
    overlap = np.mean([len(set(x) & set(y)) / max(1, len(set(x) | set(y))) for x, y in zip(a, b)])
    return float(same), float(overlap)


def _ids(hits):
    return [h.doc_id for h in hits]


# ----------------------------------------------------------------------------------------- 20 Newsgroups
def _newsgroups(a):
    from rlsi.models import BatchRLSI
    from rlsi.retrieval import Searcher
    from rlsi.retrieval.live import LiveIndex
    from rlsi.text import TfidfVectorizer, read_corpus

    corpus = read_corpus(harness.shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz")
    ids, texts = corpus.ids, corpus.texts
    n = len(ids)
    n_new = max(1, n // 100)
    base = n - n_new
    harness.log(f"20 Newsgroups: {n} posts; fitting the topic model (K={a.k})")
    vec = TfidfVectorizer()
    X = vec.fit_transform(texts)
    model = BatchRLSI(a.k, max_iter=a.fit_iters, random_state=0).fit(X)
    rng = np.random.default_rng(0)
    tok = vec.build_tokenizer()
    queries = []
    while len(queries) < a.queries:
        words = [w for w in tok(texts[int(rng.integers(n))]) if w in vec.vocabulary_]
        if len(words) >= 4:
            queries.append(" ".join(rng.choice(words, size=int(rng.integers(2, 5)), replace=False)))
    work = Path(a.workdir) / "newsgroups"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    res = {"docs": n, "added": n_new, "k": a.k, "queries": len(queries), "load_start": harness.loadavg()}

    # live: 99 % in ten commits, then 1 %
    idx = LiveIndex.create(work / "live", model, vec, alpha=0.5, merge_policy=False)
    t = time.perf_counter()
    for part in np.array_split(np.arange(base), 10):
        idx.add([texts[i] for i in part], [ids[i] for i in part])
        idx.commit()
    res["live_build_s"] = time.perf_counter() - t
    harness.log(f"live index of {base} posts in 10 segments: {res['live_build_s']:.1f} s")
    snaps = {"ten": idx.snapshot()}  # snapshots stay searchable whatever the writer does next
    t = time.perf_counter()
    idx.add(texts[base:], ids[base:])
    idx.commit()
    res["live_add_s"] = time.perf_counter() - t
    res["live_segments_after_add"] = idx.n_segments
    snaps["eleven"] = idx.snapshot()
    t = time.perf_counter()
    idx.delete(ids[base:])
    idx.commit()
    res["live_delete_s"] = time.perf_counter() - t
    idx.add(texts[base:], ids[base:])
    idx.commit()
    t = time.perf_counter()
    idx.merge()
    res["live_merge_s"] = time.perf_counter() - t
    snaps["merged"] = idx.snapshot()
    paired = _paired({k: (lambda q, s=snap: _ids(s.search(q, k=10))) for k, snap in snaps.items()}, queries,
                     a.warmup)
    res["latency"] = {k: v[0] for k, v in paired.items()}
    eleven_hits, one_hits = paired["eleven"][1], paired["merged"][1]
    harness.log(f"queries: p50 ten {res['latency']['ten']['p50']:.1f} ms, merged {res['latency']['merged']['p50']:.1f}")
    idx.close()

    # rebuilds: a static searcher, and a live index in one commit
    static, res["static_rebuild_s"] = harness.timed(lambda: Searcher(model, vec, alpha=0.5).index(texts, ids))
    static_lat, static_hits = _latency(lambda q: _ids(static.search(q, k=10)), queries, a.warmup)
    res["latency"]["static"] = static_lat

    def live_rebuild():
        one_shot = LiveIndex.create(work / "rebuild", model, vec, alpha=0.5, merge_policy=False)
        one_shot.add(texts, ids)
        one_shot.commit()
        return one_shot

    rebuilt, res["live_rebuild_s"] = harness.timed(live_rebuild)
    rebuilt_hits = [_ids(rebuilt.search(q, k=10)) for q in queries]
    rebuilt.close()
    terms_only = LiveIndex.create(work / "terms", None, vec, merge_policy=False)  # BM25 alone, as the peers rank
    terms_only.add(texts, ids)
    terms_only.commit()
    res["latency"]["terms_only"], _ = _latency(lambda q: _ids(terms_only.search(q, k=10)), queries, a.warmup)
    terms_only.close()
    res["agreement"] = {"eleven_vs_rebuild": _agreement(eleven_hits, rebuilt_hits),
                        "merged_vs_rebuild": _agreement(one_hits, rebuilt_hits),
                        "merged_vs_static": _agreement(one_hits, static_hits)}
    harness.log(f"rebuilds: static {res['static_rebuild_s']:.1f} s, live {res['live_rebuild_s']:.1f} s")
    res["fts5"] = _fts5(work / "fts5.db", ids, texts, base, queries, a.warmup)
    res["bm25s"] = _bm25s(ids, texts, base, queries, a.warmup)
    res["load_end"] = harness.loadavg()
    return res


def _fts5(path, ids, texts, base, queries, warmup, tokens=False):
    """SQLite FTS5 in a file database: the base in one transaction, then the 1 % in another; bm25() top 10."""
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, body)")
    t = time.perf_counter()
    with db:
        db.executemany("INSERT INTO docs(id, body) VALUES (?, ?)", zip(ids[:base], texts[:base]))
    build = time.perf_counter() - t
    t = time.perf_counter()
    with db:
        db.executemany("INSERT INTO docs(id, body) VALUES (?, ?)", zip(ids[base:], texts[base:]))
    add = time.perf_counter() - t
    sql = "SELECT id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 10"

    def match(q):
        words = q if tokens else ['"' + w.replace('"', "") + '"' for w in q.split()]
        return [r[0] for r in db.execute(sql, (" OR ".join(words),))]

    lat, _ = _latency(match, queries, warmup)
    db.close()
    return {"build_s": build, "add_s": add, "latency": lat, "bytes": path.stat().st_size}


def _bm25s(ids, texts, base, queries, warmup, token_ids=None):
    """bm25s: an index of the base, and the rebuild with the 1 % (its only way to add); top 10."""
    import bm25s

    def build(m):
        retriever = bm25s.BM25(method="lucene")
        if token_ids is None:
            retriever.index(bm25s.tokenize(texts[:m], stopwords="en", show_progress=False), show_progress=False)
        else:
            retriever.index(bm25s.tokenization.Tokenized(ids=token_ids[0][:m], vocab=token_ids[1]),
                            show_progress=False)
        return retriever

    _, build_s = harness.timed(build, base)
    retriever, rebuild_s = harness.timed(build, len(texts) if token_ids is None else len(token_ids[0]))

    def search(q):
        # words for a pre-tokenized index (bm25s maps them with its vocabulary; a Tokenized query would have
        # its whole vocabulary inverted on every call)
        qt = bm25s.tokenize([q], stopwords="en", show_progress=False) if token_ids is None else [list(q)]
        docs, _ = retriever.retrieve(qt, k=10, show_progress=False)
        return list(docs[0])

    lat, _ = _latency(search, queries, warmup)
    return {"build_s": build_s, "rebuild_s": rebuild_s, "latency": lat}


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


CHILDREN = {"newsgroups": _newsgroups, "fit": child_fit, "build": child_build, "merge": child_merge, "add": child_add,
            "rebuild": child_rebuild, "peers": child_peers}


def _synthetic(a, argv, previous=None):
    """The 1.6M steps in child processes; a step in ``--skip`` keeps its result of the previous run."""
    env = harness.child_env(harness.thread_env(1))
    common = [f"--matrix={a.matrix}", f"--workdir={a.workdir}", f"--queries={a.queries}", f"--warmup={a.warmup}",
              f"--fit-k={a.fit_k}", f"--fit-docs={a.fit_docs}", f"--candidates={a.candidates}",
              f"--peer-docs={a.peer_docs}"]
    Path(a.workdir).mkdir(parents=True, exist_ok=True)
    res = {"load_start": harness.loadavg(), "k": a.fit_k}
    for step in ("fit", "build", "merge", "add", "rebuild", "peers"):
        if step in a.skip:
            if previous and step in previous:
                res[step] = previous[step]
            continue
        harness.log(f"{step} ...")
        t = time.perf_counter()
        res[step] = harness.run_child([sys.executable, __file__, "--child", step, *common], env=env)
        res[step]["load_end"] = harness.loadavg()
        harness.log(f"{step}: {time.perf_counter() - t:.1f} s {json.dumps(res[step])[:300]}")
        if "error" in res[step]:
            break
    return res


# ---------------------------------------------------------------------------------------------- report
def _ratio_note(value, target, better="below"):
    if value is None:
        return "—"
    ok = value <= target
    return f"{value:.3f} ({'meets' if ok else f'misses by {value / target:.2f}x'} ≤ {target:g})"


def _news_section(r):
    f = harness.fmt
    L = [f"## 20 Newsgroups ({r['docs']} posts, {r['added']} added = 1 %, K = {r['k']})", "",
         f"Load average {r['load_start']:.2f} at the start, {r['load_end']:.2f} at the end; one process, 1 "
         f"BLAS/numba thread.", ""]
    add_ratio = r["live_add_s"] / r["static_rebuild_s"]
    rows = [["rlsi live index (ten commits of 1/10)", f(r["live_build_s"], 1), f(r["live_add_s"], 3),
             f((r["added"]) / r["live_add_s"], 0), f(r["static_rebuild_s"], 1) + " (static) / " +
             f(r["live_rebuild_s"], 1) + " (live, one commit)", _ratio_note(add_ratio, TARGET_ADD)],
            ["SQLite FTS5 (file, durable commits)", f(r["fts5"]["build_s"], 1), f(r["fts5"]["add_s"], 3),
             f(r["added"] / r["fts5"]["add_s"], 0), "—", f(r["fts5"]["add_s"] / r["fts5"]["build_s"], 3)],
            ["bm25s (rebuild to add)", f(r["bm25s"]["build_s"], 1), f(r["bm25s"]["rebuild_s"], 1),
             f(r["added"] / r["bm25s"]["rebuild_s"], 0), f(r["bm25s"]["rebuild_s"], 1), "1 (a rebuild)"]]
    L += harness.md_table(["index", "build of 99 % s", "add 1 % s", "added docs/s", "rebuild s",
                           "add 1 % / rebuild"], rows)
    lat = r["latency"]
    merged = lat["merged"]
    qrows = []
    for name, key in (("rlsi live, ten unmerged segments", "ten"), ("rlsi live, eleven segments (after the add)",
                                                                  "eleven"),
                      ("rlsi live, merged into one", "merged"), ("rlsi static Searcher (rebuild)", "static"),
                      ("rlsi live, one segment, BM25 only (no model)", "terms_only")):
        if key in lat:
            qrows.append([name, f(lat[key]["p50"], 2), f(lat[key]["p95"], 2),
                          f(lat[key]["p50"] / merged["p50"], 2), f(lat[key]["p95"] / merged["p95"], 2)])
    for name, key in (("SQLite FTS5 (bm25(), words OR-ed)", "fts5"), ("bm25s", "bm25s")):
        qrows.append([name, f(r[key]["latency"]["p50"], 2), f(r[key]["latency"]["p95"], 2), "—", "—"])
    L += ["", f"Queries: {r['queries']} of 2-4 words, top 10, exact mode (BM25 + topics over every document). The "
               "live index's three states are snapshots of one process, timed query by query in turn (each sees the "
               "same moments of the machine's load); the merged one holds the 1 % more.", ""]
    L += harness.md_table(["index", "p50 ms", "p95 ms", "p50 / merged", "p95 / merged"], qrows)
    ten = max(lat["ten"]["p50"] / merged["p50"], lat["ten"]["p95"] / merged["p95"])
    ag = r["agreement"]
    L += ["", f"Ten unmerged segments against one merged: worst of p50/p95 ratios {_ratio_note(ten, TARGET_LATENCY)}.",
          f"Top-10 identical to a rebuild (same ids, same order): after the add {ag['eleven_vs_rebuild'][0]:.3f} "
          f"of the queries, merged {ag['merged_vs_rebuild'][0]:.3f}; merged against the static Searcher "
          f"{ag['merged_vs_static'][0]:.3f} (set overlap {ag['merged_vs_static'][1]:.3f}). Delete of the 1 %: "
          f"{f(r['live_delete_s'], 3)} s; merge of the eleven segments into one: {f(r['live_merge_s'], 1)} s.",
          "FTS5 tokenizes by its own rules (no stop words removed) and ranks by BM25 only; bm25s removes English "
          "stop words as rlsi does. The rlsi figures include the topic folding of every added post, and each rlsi "
          "query folds itself into K topics and scores every post's topic vector (exact mode); the BM25-only row "
          "is the like-for-like figure against the peers."]
    return L


def _synth_section(r):
    f = harness.fmt
    L = ["## 1.6M synthetic corpus (1,600,000 documents + 16,000 added = 1 %, 7M terms)", "",
         f"Load average {r['load_start']:.2f} at the start. Each step in its own process, 1 BLAS/numba thread; "
         f"peak RSS includes the mapped index pages (page cache), peak private memory is RssAnon."]
    fit = r.get("fit", {})
    if fit and "error" not in fit:
        L += ["", f"Topic model: BatchRLSI, K = {r.get('k', '?')}, one iteration on the first documents "
                  f"({f(fit['seconds'], 1)} s; only K matters here: every document holds a K-vector). Topic vectors "
                  f"float32; folding by the model's own transform (TOIS §7, the default of rlsi search)."]
    b, m, ad, rb = (r.get(k, {}) for k in ("build", "merge", "add", "rebuild"))
    if "error" in b or not b:
        return L + ["", f"build failed: {b.get('error', 'not run')[:300]}"]
    rows = [["build: 1.6M in ten segments", f(b["build_s"], 1), f(b["peak"], 2), f(b["peak_anon"], 2),
             f(b["load_end"], 2)]]
    if m and "error" not in m:
        rows.append(["open the ten segments (every file's CRC-32 and structure checked)", f(m["open_s"], 1), "—",
                     "—", "—"])
        rows.append(["merge of the ten into one", f(m["merge_s"], 1), f(m["peak"], 2), f(m["peak_anon"], 2),
                     f(m["load_end"], 2)])
    if ad and "error" not in ad:
        rows.append([f"add {ad['added']} (1 %), one commit (then again)", f(ad["add_s"], 2) + " / " +
                     f(ad["add_again_s"], 2), "—", f(ad["peak_anon_add"], 2), f(ad["load_end"], 2)])
        rows.append([f"delete {ad['deleted']} (1 %), one commit", f(ad["delete_s"], 2), f(ad["peak"], 2),
                     f(ad["peak_anon_delete"], 2), f(ad["load_end"], 2)])
    if rb and "error" not in rb:
        rows.append(["rebuild: static Searcher.from_matrix of 1,616,000", f(rb["rebuild_s"], 1), f(rb["peak"], 2),
                     f(rb["peak_anon"], 2), f(rb["load_end"], 2)])
    L += [""] + harness.md_table(["step", "seconds", "peak RSS GiB", "peak private GiB", "load at end"], rows)
    if ad and rb and "error" not in ad and "error" not in rb:
        worst = max(ad["add_s"], ad["add_again_s"])
        L += ["", f"Adding 1 % against a rebuild (the slower of the two adds, the index opened and one query "
                  f"answered first, as a serving index is): {_ratio_note(worst / rb['rebuild_s'], TARGET_ADD)}; "
                  f"{ad['added'] / worst:.0f} documents a second. Index on disk: {b['bytes'] / 2**30:.2f} GiB."]
    qrows = [["live, ten segments (right after the build)", f(b["latency"]["p50"], 1), f(b["latency"]["p95"], 1)]]
    if m and "error" not in m:
        qrows.append(["live, ten segments (paired with the merged, query by query)", f(m["latency_ten"]["p50"], 1),
                      f(m["latency_ten"]["p95"], 1)])
        qrows.append(["live, merged into one (paired)", f(m["latency"]["p50"], 1), f(m["latency"]["p95"], 1)])
    if ad and "error" not in ad:
        qrows.append(["live after the add (two segments)", f(ad["latency"]["p50"], 1), f(ad["latency"]["p95"], 1)])
    if rb and "error" not in rb:
        qrows.append(["static rebuild", f(rb["latency"]["p50"], 1), f(rb["latency"]["p95"], 1)])
    L += ["", "Queries: candidate mode, N = 1,000, top 10, vectorised (1-5 terms drawn by document frequency).", ""]
    L += harness.md_table(["index", "p50 ms", "p95 ms"], qrows)
    if m and "error" not in m:
        ten = max(m["latency_ten"]["p50"] / m["latency"]["p50"], m["latency_ten"]["p95"] / m["latency"]["p95"])
        L += ["", f"Ten unmerged against one merged, worst of p50/p95: {_ratio_note(ten, TARGET_LATENCY)}; top-10 "
                  f"identical between them: {m['agreement_ten_vs_merged'][0]:.3f} of the queries."]
    if rb and "error" not in rb:
        L += [f"Top-10 after the add against the static rebuild: identical for "
              f"{rb['agreement_added_vs_rebuild'][0]:.3f} of the queries (set overlap "
              f"{rb['agreement_added_vs_rebuild'][1]:.3f}); the static index stores float32 BM25 weights, the live "
              f"one computes them in float64 at query time, so near-ties can order differently."]
    p = r.get("peers")
    if p and "error" not in p:
        pr = [["rlsi live", f(p["live"]["build_s"], 1), f(p["live"]["add_s"], 2), f(p["live"]["latency"]["p50"], 1),
               f(p["live"]["latency"]["p95"], 1)],
              ["SQLite FTS5", f(p["fts5"]["build_s"], 1), f(p["fts5"]["add_s"], 2), f(p["fts5"]["latency"]["p50"], 1),
               f(p["fts5"]["latency"]["p95"], 1)],
              ["bm25s (rebuild to add)", f(p["bm25s"]["build_s"], 1), f(p["bm25s"]["rebuild_s"], 1),
               f(p["bm25s"]["latency"]["p50"], 1), f(p["bm25s"]["latency"]["p95"], 1)]]
        L += ["", f"Peers on the first {p['docs']} documents (99 % built, 1 % added; same queries; FTS5 and bm25s get "
                  f"the documents as words 't<term id>' repeated by their counts):", ""]
        L += harness.md_table(["index", "build of 99 % s", "add 1 % s", "p50 ms", "p95 ms"], pr)
    elif p:
        L += ["", f"peers failed: {p['error'][:300]}"]
    return L


def _report(a, facts, results):
    L = ["# The live index: adds, deletes and queries against a rebuild, SQLite FTS5 and bm25s", "",
         "Commands: " + "; ".join(f"`{c}`" for c in results.get("commands", [])), "", harness.machine_line(facts),
         "The machine's 2 cores are shared with other jobs (several agents run on it): wall-clock figures carry "
         "their load; the load average is given beside each part.", ""]
    if "newsgroups" in results:
        L += _news_section(results["newsgroups"]) + [""]
    if "synthetic" in results:
        L += _synth_section(results["synthetic"]) + [""]
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--newsgroups", action="store_true", help="run the 20 Newsgroups part")
    p.add_argument("--matrix", help="run the 1.6M part on this matrix directory (1,616,000 documents)")
    p.add_argument("--workdir", default="/tmp/rlsi_live_bench")
    p.add_argument("--out", default="benchmarks/results/live_index.md")
    p.add_argument("--k", type=int, default=100, help="topics of the 20 Newsgroups model")
    p.add_argument("--fit-iters", type=int, default=10)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--fit-k", type=int, default=100)
    p.add_argument("--fit-docs", type=int, default=20_000)
    p.add_argument("--candidates", type=int, default=1000)
    p.add_argument("--peer-docs", type=int, default=160_000)
    p.add_argument("--skip", nargs="*", default=[], help="1.6M steps to skip (fit build merge add rebuild peers)")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        out = CHILDREN[a.child](a)
        print(json.dumps(out, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))
        return 0
    out = Path(a.out)
    jpath = out.with_suffix(".json")
    results = json.loads(jpath.read_text()) if jpath.exists() else {}
    facts = harness.machine_facts()
    command = harness.command_line(__file__, argv)
    if a.newsgroups:
        harness.log("20 Newsgroups ...")
        child = [f"--workdir={a.workdir}", f"--k={a.k}", f"--fit-iters={a.fit_iters}", f"--queries={a.queries}",
                 f"--warmup={a.warmup}"]
        results["newsgroups"] = harness.run_child([sys.executable, __file__, "--child", "newsgroups", *child],
                                                  env=harness.child_env(harness.thread_env(1)))
        if "error" in results["newsgroups"]:
            raise SystemExit(f"20 Newsgroups failed: {results['newsgroups']['error'][-2000:]}")
        results["newsgroups"]["command"] = command
    if a.matrix:
        results["synthetic"] = _synthetic(a, argv, results.get("synthetic"))
        results["synthetic"]["command"] = command
    results["commands"] = list(dict.fromkeys(results[k]["command"] for k in ("newsgroups", "synthetic") if k in results))
    results["machine"] = facts
    harness.write_json(jpath, results)
    harness.write_report(out, _report(a, facts, results), marker=True)
    harness.log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
