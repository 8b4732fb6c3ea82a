"""Cost and accuracy of ``rlsi.select``: the whole selection (both seeds' warm-started paths and the scores)
against one cold ``BatchRLSI`` fit at the largest K on the same documents, and the recommended K on synthetic
corpora with a known number of topics.

    PYTHONPATH=src python benchmarks/bench_select.py --docs 11314 --out benchmarks/results/select.md

Cost corpus: the first ``--docs`` documents of the 20 Newsgroups training split (``../shared/data``) through
``rlsi.text.TfidfVectorizer`` (English stop words, unit rows, ``min_df=2``); the grid ``--topics`` x
``--lambda1`` (the defaults of ``rlsi.select``), λ2 = 1, ``random_state=0``. The reference fit is
``BatchRLSI(K_max, lambda1=min(lambda1), lambda2=1, random_state=0)`` on all the documents (select fits on
80 % of them). Cross-check: ``rlsi.datasets.synthetic.make_corpus`` with ``n_topics`` = each ``--true-k``,
the grid 0.5, 0.75, 1, 1.25, 1.5, 2 × the true K.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

harness.use_src()


import rlsi  # noqa: E402
from rlsi.datasets.synthetic import make_corpus  # noqa: E402
from rlsi.text import TfidfVectorizer  # noqa: E402

GRID_FACTORS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
SYNTHETIC = dict(n_docs=3000, n_terms=3000, tokens_per_doc=80, topic_vocab=150, background_share=0.3,
                 max_doc_topics=2, norm="l2")


def newsgroups(n_docs):
    path = harness.shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz"
    with gzip.open(path, "rt") as f:
        texts = [d.get("text", "") for d in map(json.loads, f) if d["split"] == "train"][:n_docs]
    return TfidfVectorizer(stop_words="english", norm="l2", min_df=2).fit_transform(texts)


def cost(X, topics, lambdas):
    start, cpu = time.perf_counter(), time.process_time()
    ref = rlsi.BatchRLSI(max(topics), lambda1=min(lambdas), lambda2=1.0, random_state=0).fit(X)
    cold, cold_cpu = time.perf_counter() - start, time.process_time() - cpu
    harness.log(f"cold fit K={max(topics)}: {cold:.1f} s ({cold_cpu:.1f} s CPU), {ref.n_iter_} iterations")
    cpu = time.process_time()
    result = rlsi.select(X, topics=topics, lambda1=lambdas, random_state=0)
    select_cpu = time.process_time() - cpu
    harness.log(f"select: {result.seconds:.1f} s ({select_cpu:.1f} s CPU), {result.seconds / cold:.2f} x the cold fit "
                f"(load {harness.loadavg():.2f})")
    return (cold, cold_cpu), ref.n_iter_, (result, select_cpu)


def cross_check(true_ks, lambdas):
    rows = []
    for true_k in true_ks:
        X = make_corpus(n_topics=true_k, seed=1, **SYNTHETIC).X
        grid = sorted({int(round(true_k * f)) for f in GRID_FACTORS})
        result = rlsi.select(X, topics=grid, lambda1=lambdas, random_state=0)
        k = result.best_params["n_components"]
        row = result.rows[result.recommended]
        harness.log(f"true K {true_k}: recommended K {k} ({result.seconds:.1f} s)")
        rows.append([true_k, ", ".join(map(str, grid)), k, f"{100 * (k - true_k) / true_k:+.0f} %",
                     f"{row['completion']:.4f}", f"{row['stability']:.3f}", f"{result.seconds:.1f}"])
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=11314, help="first documents of the 20 Newsgroups training split (all: 11314)")
    ap.add_argument("--topics", default="10,20,50,100")
    ap.add_argument("--lambda1", default="0.1,0.05")
    ap.add_argument("--true-k", default="10,20,40")
    ap.add_argument("--out", help="Markdown result file")
    args = ap.parse_args(argv)
    facts = harness.machine_facts()
    topics = [int(v) for v in args.topics.split(",")]
    lambdas = [float(v) for v in args.lambda1.split(",")]
    X = newsgroups(args.docs)
    harness.log(f"20 Newsgroups train, first {X.shape[0]}: {X.shape[0]} x {X.shape[1]}")
    rlsi.BatchRLSI(5, lambda1=0.1, lambda2=1.0, max_iter=2, random_state=0).fit(X[:200])  # compile the kernels
    (cold, cold_cpu), cold_iter, (result, select_cpu) = cost(X, topics, lambdas)
    load_after = f"{harness.loadavg():.2f}"
    checks = cross_check([int(v) for v in args.true_k.split(",")], lambdas)
    path_seconds = sum(r["seconds"] for r in result.rows)
    lines = ["# Choosing K and λ1: the cost of the path and the recommendation on known K", "",
             f"Command: `{harness.command_line(__file__, argv)}`", "",
             harness.machine_line(facts), "",
             "## Cost", "",
             f"20 Newsgroups training split, its first {X.shape[0]} documents, {X.shape[0]} x {X.shape[1]} "
             f"(`rlsi.text.TfidfVectorizer(stop_words='english', norm='l2', min_df=2)`); "
             f"`rlsi.select(X, topics={topics}, lambda1={lambdas}, random_state=0)` (λ2 = 1, two seeds, "
             f"80 % of the documents for the fits) against one cold "
             f"`BatchRLSI({max(topics)}, lambda1={min(lambdas):g}, lambda2=1, random_state=0).fit(X)` on all "
             f"of them, one after the other in this process (kernels compiled before).", "",
             "| run | fits | seconds | × cold fit | CPU seconds | × cold fit (CPU) |", "|---|---:|---:|---:|---:|---:|",
             f"| cold fit, K = {max(topics)} ({cold_iter} iterations) | 1 | {cold:.1f} | 1.00 | {cold_cpu:.1f} | 1.00 |",
             f"| select: the two paths' fits | {2 * len(result.rows)} | {path_seconds:.1f} | "
             f"{path_seconds / cold:.2f} | | |",
             f"| select: everything (split, fits, scores) | {2 * len(result.rows)} | {result.seconds:.1f} | "
             f"{result.seconds / cold:.2f} | {select_cpu:.1f} | {select_cpu / cold_cpu:.2f} |", "",
             f"Load average after the selection: {load_after} (the machine is shared: wall clock moves with the "
             f"other jobs, CPU seconds less).", "",
             "The selection's table:", "", result.to_markdown(), "",
             "## Recommendation on synthetic corpora with a known number of topics", "",
             f"`make_corpus(n_topics=TRUE_K, seed=1, {', '.join(f'{k}={v!r}' for k, v in SYNTHETIC.items())})`, "
             f"`rlsi.select(X, topics=GRID, lambda1={lambdas}, random_state=0)`.", "",
             "| true K | grid | recommended K | off by | completion | stability | seconds |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    lines += ["| " + " | ".join(map(str, r)) + " |" for r in checks]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        harness.write_report(args.out, text, marker=True)


if __name__ == "__main__":
    main()
