"""Search at web scale: a BM25 + topic index of a matrix directory, built block by
block, saved, memory-mapped, and the top-10 latency of short queries in candidate and exact mode.

Steps, each in its own process (so that its peak memory is its own: ``VmHWM``):

1. (only without ``--model``) a quick topic model: ``BatchRLSI(--fit-k, max_iter=--fit-iters)`` on the
   memory-mapped matrix (or its first ``--fit-docs`` documents: every term column stays), saved with the
   directory's vectorizer (the lead passes a real model instead); its quality does not matter here, only
   K (the size of the topic vectors);
2. **build**: ``Searcher.from_matrix(matrix, model, dtype=float32)`` (BM25 on the raw counts of the
   directory + topic vectors folded in by the projection, the CLI's default for RLSI), then ``save``:
   wall time, peak RSS and peak private (anonymous) memory of the child, the index size on disk;
3. **query**: ``Searcher.load(index, mmap=True)``; ``--queries`` queries of 1-5 distinct terms drawn from
   the corpus vocabulary with probability proportional to document frequency (``--seed``); top-``--k``
   latency (wall clock of one ``search`` call, one query at a time, after ``--warmup`` unrecorded
   queries) in candidate mode (``--candidates`` N) for all queries and in exact mode (every document
   scored by both components) for the first ``--exact-queries``; the overlap of the two top-k lists;
   the resident memory of the search process (``VmRSS``, split into private ``RssAnon`` and file-backed
   ``RssFile`` pages of the memory-mapped index). Queries go through the text path when the directory
   has a vectorizer (``rlsi ingest``), else through ``search_vectors`` (a synthetic corpus).

Usage (the matrix from ``rlsi synth``; the lead's run uses ``--model`` with a fitted model)::

    PYTHONPATH=src python benchmarks/bench_search_scale.py --matrix /tmp/c100k --fit-k 500 --fit-iters 1 \\
        --workdir /tmp/search_work --out benchmarks/results/search_scale.md
    PYTHONPATH=src python benchmarks/bench_search_scale.py --matrix CORPUS_1600K --model MODEL_DIR \\
        --workdir /big/disk/work --out benchmarks/results/search_scale_1600k.md

Memory: the build holds the float32 CSC weights (8 bytes a posting) and the float32 topic vectors
(4K bytes a document) plus one block of rows; the matrix is memory-mapped. The search process maps the
index; its private memory is a few dense score rows of N floats.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

harness.use_src()


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _memory():
    """Resident memory now and the peak, GiB: VmRSS, RssAnon (private), RssFile (mapped files), VmHWM."""
    return {k: _status_kb(f) / 2**20 for k, f in (("rss", "VmRSS"), ("anon", "RssAnon"), ("file", "RssFile"),
                                                     ("peak", "VmHWM"))}


class _AnonPeak:
    """Peak of RssAnon (private memory), sampled every 20 ms on a thread."""

    def __init__(self):
        self.peak = 0.0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, _status_kb("RssAnon") / 2**20)
            time.sleep(0.02)

    def stop(self):
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, _status_kb("RssAnon") / 2**20)
        return self.peak


def _dir_bytes(path, prefix=""):
    return sum(p.stat().st_size for p in Path(path).iterdir() if p.is_file() and p.name.startswith(prefix))


# ------------------------------------------------------------------------------------------ children
def child_fit(a):

    from rlsi import io
    from rlsi.io.matrix import load_matrix
    from rlsi.models.batch import BatchRLSI

    anon = _AnonPeak()
    t0 = time.perf_counter()
    m = load_matrix(a.matrix)
    X = m.X if not a.fit_docs else m.X[: a.fit_docs]  # the first documents only: every term column stays
    model = BatchRLSI(a.fit_k, lambda1=0.05, lambda2=1.0, max_iter=a.fit_iters, random_state=a.seed)  # as recorded
    model.fit(X)
    comps = {"model": model}
    if m.vectorizer is not None:
        comps["vectorizer"] = m.vectorizer
    io.save(Path(a.workdir) / "model", **comps)
    return {"seconds": time.perf_counter() - t0, "peak_anon": anon.stop(), **_memory(),
            "nnz_u": int(model.components_.nnz), "k": a.fit_k, "iters": a.fit_iters, "docs": int(X.shape[0])}


def child_build(a):
    import numpy as np

    from rlsi import io
    from rlsi.io.matrix import load_matrix
    from rlsi.retrieval import DEFAULT_FOLDING, FOLDINGS, Searcher

    anon = _AnonPeak()
    t0 = time.perf_counter()
    matrix = load_matrix(a.matrix)
    t_load = time.perf_counter() - t0
    model = io.load(a.model_dir, mmap=True, only=["model"]).get("model")  # the matrix has the vectorizer
    folding = DEFAULT_FOLDING
    searcher = Searcher.from_matrix(matrix, model, alpha=a.alpha, dtype=np.float32, fold_lambda2=FOLDINGS[folding])
    t_build = time.perf_counter() - t0 - t_load
    index_dir = Path(a.workdir) / "index"
    searcher.save(index_dir)
    t_save = time.perf_counter() - t0 - t_load - t_build
    W = searcher.term_index_.weights_
    V = searcher.topic_index_.doc_vectors_ if searcher.topic_index_ is not None else None
    return {"n_docs": int(W.shape[0]), "n_terms": int(W.shape[1]), "nnz": int(W.nnz),
            "k": int(V.shape[1]) if V is not None else 0, "folding": folding,
            "model": type(model).__name__ if model is not None else None,
            "load_s": t_load, "build_s": t_build, "save_s": t_save, "peak_anon": anon.stop(), **_memory(),
            "index_bytes": _dir_bytes(index_dir, "index."), "dir_bytes": _dir_bytes(index_dir),
            "term_bytes": int(W.data.nbytes + W.indices.nbytes + W.indptr.nbytes),
            "topic_bytes": int(V.nbytes) if V is not None else 0}


def _queries(searcher, n, seed):
    """``n`` queries of 1-5 distinct terms, each term drawn with probability df / sum(df)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    df = np.diff(np.asarray(searcher.term_index_.weights_.indptr)).astype(np.float64)
    cdf = np.cumsum(df)
    cdf /= cdf[-1]
    out = []
    for _ in range(n):
        length = int(rng.integers(1, 6))
        terms = set()
        while len(terms) < min(length, int((df > 0).sum())):
            terms.add(min(int(np.searchsorted(cdf, rng.random(), side="right")), len(df) - 1))
        out.append(sorted(terms))
    return out, df


def child_query(a):
    import numpy as np
    import scipy.sparse as sp

    from rlsi.retrieval import Searcher

    t0 = time.perf_counter()
    searcher = Searcher.load(Path(a.workdir) / "index", mmap=True)
    load_s = time.perf_counter() - t0
    mem_loaded = _memory()
    n_docs = searcher.n_docs_
    qterms, df = _queries(searcher, a.queries + a.warmup, a.seed)
    vec = searcher.vectorizer
    if vec is not None:  # the text path, as `rlsi search` runs it
        names = vec.feature_names_
        texts = [" ".join(names[t] for t in q) for q in qterms]

        def run(i, candidates):
            return searcher.search(texts[i], k=a.k, candidates=candidates)
    else:  # a synthetic corpus: vectorised queries, tf-idf with the generator's weighting log(N / df)
        idf = np.log(n_docs / np.maximum(df, 1.0))
        M = len(df)
        counts, tfidf = [], []
        for q in qterms:
            c = sp.csr_matrix((np.ones(len(q)), q, [0, len(q)]), shape=(1, M))
            t = sp.csr_matrix((idf[q] / len(q), q, [0, len(q)]), shape=(1, M))
            counts.append(c)
            tfidf.append(t)

        def run(i, candidates):
            return searcher.search_vectors(counts[i], tfidf[i], k=a.k, candidates=candidates)[0]

    def timed(indices, candidates):
        lat, hits = [], []
        for i in indices:
            s = time.perf_counter()
            h = run(i, candidates)
            lat.append(time.perf_counter() - s)
            hits.append([x.doc_id for x in h])
        return lat, hits

    w = list(range(a.warmup))
    timed(w, a.candidates)  # numba compilation, first touches
    timed(w[:2], None)
    q_idx = list(range(a.warmup, a.warmup + a.queries))
    lat_c, hits_c = timed(q_idx, a.candidates)
    n_exact = min(a.exact_queries, a.queries)
    lat_e, hits_e = timed(q_idx[:n_exact], None)
    overlap = [len(set(x) & set(y)) / max(1, len(y)) for x, y in zip(hits_c, hits_e)]

    def stats(lat):
        v = np.asarray(lat) * 1000.0
        return {"n": len(v), "p50": float(np.percentile(v, 50)), "p95": float(np.percentile(v, 95)),
                "mean": float(v.mean()), "max": float(v.max())}

    lengths = np.array([len(q) for q in qterms[a.warmup:]])
    qdf = np.array([df[q].sum() for q in qterms[a.warmup:]])
    return {"load_s": load_s, "mem_loaded": mem_loaded, "mem_after": _memory(), "candidate": stats(lat_c),
            "exact": stats(lat_e), "overlap_at_k": float(np.mean(overlap)) if overlap else float("nan"),
            "text_path": vec is not None, "mean_terms": float(lengths.mean()),
            "postings_p50": float(np.median(qdf)), "postings_mean": float(qdf.mean())}


CHILDREN = {"fit": child_fit, "build": child_build, "query": child_query}


def _run(step, argv, env):
    harness.log(f"{step} ...")
    t = time.perf_counter()
    res = harness.run_child([sys.executable, __file__, "--child", step, *argv], env=env)
    if "error" in res:
        harness.log(f"{step} failed: {res['error'][-2000:]}")
        raise SystemExit(1)
    harness.log(f"{step} done in {time.perf_counter() - t:.1f}s")
    return res


def _report(a, argv, facts, res):
    f = harness.fmt
    b, q = res["build"], res["query"]
    gb = 2**30
    L = ["# Search at web scale: BM25 + topic index of a matrix directory", "",
         f"Command: `{harness.command_line(__file__, argv)}`", "", harness.machine_line(facts), "",
         "The machine's 2 cores were shared with other jobs (load average above); every child ran with 1 "
         "numba/BLAS thread. Latencies are wall clock, so they include waiting for a core.", ""]
    if "fit" in res:
        r = res["fit"]
        L += [f"Topic model: none given, so a quick `BatchRLSI({r['k']}, max_iter={r['iters']})` "
              f"was fitted on the first {r['docs']} documents of the matrix ({f(r['seconds'], 1)} s, peak RSS {f(r['peak'], 2)} GiB, nnz(U) "
              f"{r['nnz_u']}). Its quality is not the point: the index holds K = {r['k']} topic vectors per "
              "document whatever the model.", ""]
    else:
        L += [f"Topic model: `{a.model}` ({b['model']}).", ""]
    L += ["## Index build (`Searcher.from_matrix`, float32, then `save`)", ""]
    L += harness.md_table(
        ["documents", "terms", "postings (nnz)", "K", "folding", "build s", "save s", "peak RSS GiB",
         "peak private GiB", "index on disk GiB"],
        [[b["n_docs"], b["n_terms"], b["nnz"], b["k"], b["folding"], f(b["build_s"], 1), f(b["save_s"], 1),
          f(b["peak"], 2), f(b["peak_anon"], 2), f(b["index_bytes"] / gb, 2)]])
    L += ["", f"Term index {f(b['term_bytes'] / gb, 2)} GiB (CSC float32 weights + int32 row indices), topic "
          f"vectors {f(b['topic_bytes'] / gb, 2)} GiB; the whole saved directory (with the model and "
          f"vectorizer) {f(b['dir_bytes'] / gb, 2)} GiB. Peak RSS counts the pages of the memory-mapped matrix "
          "the build read (page cache); peak private memory is `RssAnon`, sampled every 20 ms.", "",
          "## Queries (top-{}, one at a time, {} path)".format(a.k, "text" if q["text_path"] else "vector"), "",
          f"{q['candidate']['n']} queries of 1-5 distinct terms (mean {f(q['mean_terms'], 2)}), drawn with "
          f"probability proportional to document frequency (seed {a.seed}): median "
          f"{f(q['postings_p50'], 0)} postings per query (mean {f(q['postings_mean'], 0)}). "
          f"{a.warmup} warm-up queries first (not counted). The index was loaded with `mmap=True` in "
          f"{f(q['load_s'], 1)} s (the loader checks every array once, so the pages are then in the page cache: "
          "warm-cache latencies).", ""]
    rows = []
    for name, key in ((f"candidate (N = {a.candidates})", "candidate"), ("exact (all documents)", "exact")):
        s = q[key]
        rows.append([name, s["n"], f(s["p50"], 1), f(s["p95"], 1), f(s["mean"], 1), f(s["max"], 1)])
    L += harness.md_table(["mode", "queries", "p50 ms", "p95 ms", "mean ms", "max ms"], rows)
    m0, m1 = q["mem_loaded"], q["mem_after"]
    L += ["", f"Top-{a.k} overlap of candidate and exact mode over the exact-mode queries: "
          f"{f(q['overlap_at_k'], 3)} (1 = the same documents).", "",
          f"Resident memory of the search process: after loading {f(m0['rss'], 2)} GiB (private "
          f"{f(m0['anon'], 2)} GiB, mapped index pages {f(m0['file'], 2)} GiB); after the queries "
          f"{f(m1['rss'], 2)} GiB (private {f(m1['anon'], 2)} GiB, mapped {f(m1['file'], 2)} GiB). The mapped "
          "pages are page cache shared with the OS (reclaimable), not private memory.", ""]
    harness.write_report(a.out, "\n".join(L) + "\n", marker=True)
    harness.log(f"wrote {a.out}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--matrix", required=True, help="matrix directory (rlsi synth / rlsi ingest, with counts)")
    p.add_argument("--model", default=None, help="model directory fitted on the matrix (else a quick fit)")
    p.add_argument("--fit-k", type=int, default=500, help="topics of the quick model (without --model)")
    p.add_argument("--fit-iters", type=int, default=1, help="iterations of the quick model")
    p.add_argument("--fit-docs", type=int, default=0,
                   help="fit the quick model on the first FIT_DOCS documents only (0: all)")
    p.add_argument("--workdir", required=True, help="folder for the model and the index (needs the index size)")
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--exact-queries", type=int, default=50, help="queries also run in exact mode")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--candidates", type=int, default=1000)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--alpha", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="numba/BLAS threads of the build and query children")
    p.add_argument("--out", default="benchmarks/results/search_scale.md")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--model-dir", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        print(json.dumps(CHILDREN[a.child](a), default=float))
        return 0
    argv = sys.argv[1:] if argv is None else argv
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    facts = harness.machine_facts()
    common = [f"--matrix={a.matrix}", f"--workdir={work}", f"--seed={a.seed}", f"--alpha={a.alpha}"]
    res = {}
    model_dir = a.model
    if model_dir is None:
        env = harness.child_env(harness.thread_env(2))
        res["fit"] = _run("fit", common + [f"--fit-k={a.fit_k}", f"--fit-iters={a.fit_iters}",
                                           f"--fit-docs={a.fit_docs}"], env)
        model_dir = str(work / "model")
    env = harness.child_env(harness.thread_env(a.threads))
    res["build"] = _run("build", common + [f"--model-dir={model_dir}"], env)
    res["query"] = _run("query", common + [f"--queries={a.queries}", f"--exact-queries={a.exact_queries}",
                                           f"--warmup={a.warmup}", f"--candidates={a.candidates}", f"--k={a.k}"],
                        env)
    harness.write_json(work / "search_scale.json", res)
    _report(a, argv, facts, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
