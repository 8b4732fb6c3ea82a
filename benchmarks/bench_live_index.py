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
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

harness.use_src()

from live_index_measure import child_newsgroups  # noqa: E402
from live_index_report import report  # noqa: E402
from live_index_synthetic import (child_add, child_build, child_fit, child_merge, child_peers,  # noqa: E402
                                  child_rebuild)

CHILDREN = {"newsgroups": child_newsgroups, "fit": child_fit, "build": child_build, "merge": child_merge,
            "add": child_add, "rebuild": child_rebuild, "peers": child_peers}


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
    harness.write_report(out, report(a, facts, results), marker=True)
    harness.log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
