"""The topic explorer's size and build time (:func:`rlsi.explore`) at K = 500 topics, 30 terms a topic,
against pyLDAvis (``prepare`` + ``prepared_data_to_html``) on the same probabilistic topics.

Cases, each built ``--repeat`` times (median wall and CPU seconds of the build alone; data made first):

* ``signed``: RLSI-shaped topics — K x M sparse, ``--nnz`` non-zeros a topic (one in five negative),
  ``--docs`` documents with about 10 non-zero topic weights each, a sparse tf-idf-like X
  (``--doc-terms`` a row) and titles and texts; built with the documents and without them. pyLDAvis cannot
  draw it (it asks every topic row to sum to 1);
* ``probabilities``: LDA-shaped topics — Dirichlet rows over M terms (dense), Dirichlet document
  mixtures, X word counts: rlsi and pyLDAvis on the same arrays (pyLDAvis in a child process of
  ``--peer-python``, an interpreter with pyLDAvis and pandas installed; left out when absent);
* ``MED``: batch RLSI with ``--med-k`` topics fitted on the 1,033 MEDLINE abstracts shipped with rlsi,
  explored with its corpus (the fit is not timed).

Term names are random words (4-10 letters), all topics' terms mostly distinct: the largest page for
these sizes. Usage::

    PYTHONPATH=src python benchmarks/bench_explore.py --peer-python /tmp/ldavis-venv/bin/python \\
        --md benchmarks/results/explore.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import command_line, log, machine_facts, machine_line, md_table, use_src, write_report  # noqa: E402

use_src()

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

PEER = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
import pyLDAvis
z = np.load(sys.argv[1], allow_pickle=False)
vocab = [str(v) for v in z["vocab"]]
t0, c0 = time.perf_counter(), time.process_time()
vis = pyLDAvis.prepare(z["phi"], z["theta"], z["lengths"], vocab, z["tf"], R=int(sys.argv[2]), n_jobs=1,
                       sort_topics=False)
html = pyLDAvis.prepared_data_to_html(vis)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"wall": wall, "cpu": cpu, "bytes": len(html.encode()), "cdn": html.count("https://"),
                  "version": pyLDAvis.__version__}))
"""


def words(n, rng):
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(4, 11, size=n)
    out, seen = [], set()
    for L in lengths:
        w = "".join(rng.choice(letters, size=L))
        while w in seen:
            w += "x"
        seen.add(w)
        out.append(w)
    return np.array(out, dtype=object)


def documents(n, rng):
    vocab = words(2000, rng)
    return [{"id": f"doc{i}", "title": " ".join(rng.choice(vocab, size=rng.integers(4, 9))),
             "text": " ".join(rng.choice(vocab, size=50))} for i in range(n)]


def sparse_X(n_docs, M, per_doc, rng, counts=False):
    rows = np.repeat(np.arange(n_docs), per_doc)
    cols = rng.integers(0, M, size=n_docs * per_doc)
    vals = rng.integers(1, 4, size=rows.size).astype(float) if counts else rng.random(rows.size)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n_docs, M))
    X.sum_duplicates()
    return X


class Topics:
    """A fitted model as the explorer reads it: topics, and (the benchmark's data) no folding-in."""

    def __init__(self, components):
        self.components_ = components


def signed_case(args, rng):
    K, M = args.k, args.terms
    rows = np.repeat(np.arange(K), args.nnz)
    cols = np.concatenate([rng.choice(M, size=args.nnz, replace=False) for _ in range(K)])
    vals = rng.gamma(1.0, 1.0, size=rows.size) * np.where(rng.random(rows.size) < 0.8, 1.0, -1.0)
    C = sp.csr_matrix((vals, (rows, cols)), shape=(K, M))
    V = sp.random(args.docs, K, density=10 / K, random_state=int(rng.integers(1 << 30)), format="csr")
    V.data -= 0.2
    return C, V.toarray(), sparse_X(args.docs, M, args.doc_terms, rng), words(M, rng), documents(args.docs, rng)


def probabilistic_case(args, rng):
    K, M = args.k, args.prob_terms
    phi = rng.dirichlet(np.full(M, 0.02), size=K)
    theta = rng.dirichlet(np.full(K, 0.05), size=args.docs)
    X = sparse_X(args.docs, M, args.doc_terms, rng, counts=True)
    return phi, theta, X, words(M, rng), documents(args.docs, rng)


def build(args, components, names, **kw):
    """(median wall s, median CPU s, bytes) of ``--repeat`` builds of the page."""
    from rlsi.explorer import explore

    walls, cpus, size = [], [], None
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        page = explore(Topics(components), feature_names=names, n_terms=args.n_terms, **kw)
        size = page.size
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), size


def peer(args, phi, theta, X, names):
    if not args.peer_python:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        lengths = np.asarray(X.sum(axis=1)).ravel()
        np.savez(path, phi=phi, theta=theta, lengths=lengths, tf=np.asarray(X.sum(axis=0)).ravel(),
                 vocab=names.astype(str))
        out = subprocess.run([args.peer_python, "-c", PEER, path, str(args.n_terms)], capture_output=True, text=True)
    if out.returncode != 0:
        log(f"pyLDAvis failed: {out.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def med_case(args):
    from rlsi import BatchRLSI, TfidfVectorizer
    from rlsi.datasets import load_demo_corpus
    from rlsi.explorer import explore

    corpus = load_demo_corpus()
    vec = TfidfVectorizer(stemmer="english", min_df=2)
    X = vec.fit_transform(corpus.texts)
    model = BatchRLSI(args.med_k, lambda1=0.1, lambda2=1.0, max_iter=30, random_state=0).fit(X)
    walls, cpus = [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        page = explore(model, vectorizer=vec, X=X, docs=corpus)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), page.size, X.shape


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--k", type=int, default=500, help="topics (default 500)")
    p.add_argument("--terms", type=int, default=50_000, help="vocabulary of the signed case (default 50000)")
    p.add_argument("--prob-terms", type=int, default=20_000, help="vocabulary of the probabilistic case (20000)")
    p.add_argument("--nnz", type=int, default=300, help="non-zero weights a signed topic (default 300)")
    p.add_argument("--docs", type=int, default=20_000, help="documents (default 20000)")
    p.add_argument("--doc-terms", type=int, default=120, help="non-zero terms a document (default 120)")
    p.add_argument("--n-terms", type=int, default=30, help="terms a topic on the page (default 30)")
    p.add_argument("--med-k", type=int, default=100, help="topics of the MED model (default 100)")
    p.add_argument("--repeat", type=int, default=3, help="builds per case; the median is reported (default 3)")
    p.add_argument("--peer-python", default=None, help="a Python with pyLDAvis (and pandas) for the peer")
    p.add_argument("--md", default=None, help="write the markdown report here")
    args = p.parse_args(argv)
    facts = machine_facts()
    rng = np.random.default_rng(0)
    rows = []

    def row(case, docs, wall, cpu, size, load, note=""):
        budget = "yes" if size <= 1_500_000 and wall <= 5.0 else "no"
        rows.append([case, docs, f"{wall:.2f}", f"{cpu:.2f}", f"{size / 1e6:.2f}", budget, f"{load:.2f}", note])

    log(f"signed case: K={args.k}, M={args.terms}, {args.nnz} non-zeros a topic, {args.docs} documents")
    C, V, X, names, docs = signed_case(args, rng)
    load = os.getloadavg()[0]
    wall, cpu, size = build(args, C, names, X=X, doc_topics=V, docs=docs)
    row(f"signed (RLSI-shaped), K={args.k}, M={args.terms:,}, with documents", f"{args.docs:,}", wall, cpu, size, load)
    load = os.getloadavg()[0]
    wall, cpu, size = build(args, C, names)
    row(f"signed (RLSI-shaped), K={args.k}, M={args.terms:,}, topics only", "—", wall, cpu, size, load)

    log(f"probabilistic case: K={args.k}, M={args.prob_terms}")
    phi, theta, Xc, pnames, pdocs = probabilistic_case(args, rng)
    load = os.getloadavg()[0]
    wall, cpu, size = build(args, phi, pnames, X=Xc, doc_topics=theta, docs=pdocs)
    row(f"probabilities (LDA-shaped), K={args.k}, M={args.prob_terms:,}, with documents", f"{args.docs:,}",
        wall, cpu, size, load)
    rlsi_prob = (wall, cpu, size)
    load = os.getloadavg()[0]
    log("pyLDAvis on the same arrays" if args.peer_python else "no --peer-python: pyLDAvis left out")
    other = peer(args, phi, theta, Xc, pnames)
    if other:
        rows.append([f"pyLDAvis {other['version']} on the same arrays", f"{args.docs:,}", f"{other['wall']:.2f}",
                     f"{other['cpu']:.2f}", f"{other['bytes'] / 1e6:.2f}", "—", f"{load:.2f}",
                     f"+ d3 and LDAvis scripts from {other['cdn']} https:// references"])

    log(f"MED, BatchRLSI K={args.med_k}")
    load = os.getloadavg()[0]
    wall, cpu, size, shape = med_case(args)
    row(f"MED abstracts, BatchRLSI K={args.med_k}, M={shape[1]:,}, with the corpus", f"{shape[0]:,}", wall, cpu,
        size, load)

    header = ["case", "documents", "build wall s", "build CPU s", "MB", "≤ 1.5 MB and ≤ 5 s", "load", "note"]
    lines = [f"# The topic explorer at K = {args.k}: size and build time", "", "Command:", "",
             "    " + command_line(__file__, argv), "", machine_line(facts), ""]
    lines += md_table(header, rows, "lrrrrrrl")
    lines += ["", f"Each build is `rlsi.explore` (the data, then the HTML) with {args.n_terms} terms a topic, "
              f"the median of {args.repeat}; the data are made before the clock starts. "
              "'load' is the 1-minute load average before the case (the machine's 2 cores are shared with "
              "other work)."]
    if other:
        lines += ["", f"Against pyLDAvis on the same {args.k} probabilistic topics: rlsi builds its page "
                      f"{other['wall'] / rlsi_prob[0]:.1f}x faster (wall) and writes "
                      f"{other['bytes'] / rlsi_prob[2]:.1f}x fewer bytes; pyLDAvis's file also loads d3 and its "
                      f"own script from CDNs at every opening, and cannot show signed topics."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.md:
        write_report(args.md, text)


if __name__ == "__main__":
    main()
