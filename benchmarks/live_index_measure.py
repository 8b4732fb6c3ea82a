"""What ``bench_live_index.py`` measures with: query latencies (alone and paired query by query), the agreement of
two result lists; the 20 Newsgroups part; SQLite FTS5 and bm25s on the same documents and queries."""

import shutil
import sqlite3
import time
from pathlib import Path

import numpy as np

import harness


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
def child_newsgroups(a):
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
