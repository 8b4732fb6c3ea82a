"""RLSI as a scikit-learn transformer before a linear classifier, against TruncatedSVD at the same K.

``make_pipeline(TfidfVectorizer(), MODEL, LogisticRegression(max_iter=1000))`` on 20 Newsgroups (the
bydate train split to fit, the test split to score), for MODEL = ``TruncatedSVD(K)`` and the rlsi
learners with their default parameters, all in the same run on the same tf-idf matrix. The corpus file is
sorted by newsgroup; scikit-learn's ``fetch_20newsgroups`` shuffles, so OnlineRLSI (which reads X in its
order) is measured on both orders. ``--pairs L1:L2,...`` adds BatchRLSI and OnlineRLSI rows at other
(λ1, λ2) pairs (the paper's 0.05:1 among them). Reports test accuracy, the fit time of the topic model, the
mean |w| of the training documents' topic vectors, the share of non-zero topic weights, and the ratios to
TruncatedSVD.

``--ranking L2,L2,...`` adds what λ2 does to relevance ranking: BM25 + RLSI on MED, Cranfield and CISI
under the cross-validation protocol of ``rlsi evaluate`` (:func:`rlsi.experiments.run_protocol`: K and
λ1 tuned on training folds of queries, topics folded in by projection), once per λ2 value.

Usage::

    PYTHONPATH=src python benchmarks/bench_pipeline.py --k 30 --pairs 0.05:1,0.01:1,0.05:1e-3 \
        --ranking 1,1e-3 --out benchmarks/results/pipeline.md
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import command_line, machine_facts, md_table, shared_data, use_src, write_report  # noqa: E402

use_src()

import numpy as np  # noqa: E402
from sklearn.decomposition import TruncatedSVD  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from rlsi import BatchRLSI, OnlineRLSI  # noqa: E402


def load_20ng(path, limit=None):
    split = {"train": ([], []), "test": ([], [])}
    with gzip.open(path, "rt") as f:
        for line in f:
            doc = json.loads(line)
            texts, labels = split[doc["split"]]
            texts.append(doc.get("text", ""))
            labels.append(doc["label"])
    if limit:
        split = {k: (t[::max(1, len(t) // limit)][:limit], y[::max(1, len(y) // limit)][:limit])
                 for k, (t, y) in split.items()}  # every n-th document: all groups (the file is sorted by group)
    return split


def models(k, pairs, seed):
    """(name, model, order): order "file" (sorted by newsgroup) or "shuffled" (as fetch_20newsgroups)."""
    yield "TruncatedSVD", TruncatedSVD(k, random_state=seed), "file"
    yield "BatchRLSI (defaults)", BatchRLSI(k, random_state=seed), "file"
    yield "OnlineRLSI (defaults), shuffled documents", OnlineRLSI(k, random_state=seed), "shuffled"
    yield "OnlineRLSI (defaults), file order", OnlineRLSI(k, random_state=seed), "file"
    for lam1, lam2 in pairs:
        yield f"BatchRLSI lambda1={lam1:g} lambda2={lam2:g}", BatchRLSI(k, lambda1=lam1, lambda2=lam2,
                                                                         random_state=seed), "file"
        yield (f"OnlineRLSI lambda1={lam1:g} lambda2={lam2:g}, shuffled documents",
               OnlineRLSI(k, lambda1=lam1, lambda2=lam2, random_state=seed), "shuffled")


def ranking(lambda2s, collections, k_grid):
    """Rows (collection, λ2, BM25 and BM25+RLSI MAP / NDCG@10 under CV, chosen settings, seconds)."""
    from rlsi.evaluation import load_collection
    from rlsi.experiments import ProtocolConfig, run_protocol

    rows = []
    for name in collections:
        coll = load_collection(shared_data() / name)
        for lam2 in lambda2s:
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rep = run_protocol(coll, ["rlsi"], ProtocolConfig(protocols=("cv",), k_grid=tuple(k_grid),
                                                                  extra={"rlsi": {"lambda2": lam2}}))
            seconds = time.perf_counter() - start
            base, rlsi = rep.rows("cv")
            rows.append([name, f"{lam2:g}", f"{base['means']['map']:.4f}", f"{rlsi['means']['map']:.4f}",
                         f"{base['means']['ndcg@10']:.4f}", f"{rlsi['means']['ndcg@10']:.4f}",
                         f"{seconds:.0f}"])
            print(f"{name} lambda2={lam2:g}: {rows[-1]}", file=sys.stderr)
    header = ["collection", "λ2", "BM25 MAP", "BM25+RLSI MAP", "BM25 NDCG@10", "BM25+RLSI NDCG@10",
              "seconds (all fits)"]
    return "\n".join(md_table(header, rows))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz"))
    ap.add_argument("--k", type=int, default=30)
    ap.add_argument("--pairs", default="", help="λ1:λ2 pairs for extra BatchRLSI / OnlineRLSI rows, comma-separated")
    ap.add_argument("--limit", type=int, default=None, help="N documents of each split, evenly spaced (quick runs)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ranking", default="", help="λ2 values for the ranking comparison (none: skip it)")
    ap.add_argument("--collections", default="med,cranfield,cisi")
    ap.add_argument("--k-grid", default="10,30,50", help="K grid of the ranking comparison")
    ap.add_argument("--out", default=None, help="Markdown report")
    args = ap.parse_args(argv)
    pairs = [tuple(float(v) for v in x.split(":")) for x in args.pairs.split(",") if x.strip()]

    data = load_20ng(args.data, args.limit)
    (train, y_train), (test, y_test) = data["train"], data["test"]
    vec = TfidfVectorizer()
    X_train = vec.fit_transform(train)
    X_test = vec.transform(test)
    y_train = np.asarray(y_train)
    perm = np.random.default_rng(args.seed).permutation(X_train.shape[0])
    print(f"20 Newsgroups: {X_train.shape[0]} train, {X_test.shape[0]} test documents, "
          f"{X_train.shape[1]} terms", file=sys.stderr)
    rows, base = [], None
    for name, model, order in models(args.k, pairs, args.seed):
        Xo, yo = (X_train[perm], y_train[perm]) if order == "shuffled" else (X_train, y_train)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            W_train = model.fit_transform(Xo)
        fit_s = time.perf_counter() - start
        W_test = model.transform(X_test)
        clf = LogisticRegression(max_iter=1000).fit(W_train, yo)
        acc = clf.score(W_test, y_test)
        if base is None:
            base = (acc, fit_s)
        comp = model.components_
        density = comp.nnz / (comp.shape[0] * comp.shape[1]) if hasattr(comp, "nnz") else 1.0
        rows.append([name, f"{100 * acc:.1f}", f"{100 * (acc - base[0]):+.1f}", f"{fit_s:.1f}",
                     f"{fit_s / base[1]:.1f}", f"{np.abs(W_train).mean():.3g}", f"{100 * density:.2f}"])
        print(f"{name}: accuracy {100 * acc:.1f} %, fit {fit_s:.1f} s", file=sys.stderr)
    header = ["model (K=%d)" % args.k, "test accuracy %", "vs TruncatedSVD (points)", "fit s",
              "fit time / TruncatedSVD", "mean \\|w\\| (train)", "non-zero topic weights %"]
    table = "\n".join(md_table(header, rows))
    print(table)
    rank = ""
    if args.ranking:
        rank = ranking([float(x) for x in args.ranking.split(",")], args.collections.split(","),
                       [int(k) for k in args.k_grid.split(",")])
        print(rank)
        rank = ("\n\n## Ranking: BM25 + RLSI, 5-fold cross-validation over queries\n\n"
                f"K in {{{args.k_grid}}} and λ1 in the default grid tuned on training folds (mean of MAP and "
                "NDCG@10), α tuned, topics folded in by projection; stemmed tf-idf.\n\n" + rank)
    if args.out:
        body = (f"# Pipeline: TfidfVectorizer → topic model (K={args.k}) → LogisticRegression\n\n"
                f"20 Newsgroups bydate: {X_train.shape[0]} training, {X_test.shape[0]} test documents, "
                f"{X_train.shape[1]} terms (scikit-learn's TfidfVectorizer defaults); "
                f"LogisticRegression(max_iter=1000); seed {args.seed}.\n\nCommand: `{command_line(__file__)}`\n\n"
                f"{table}{rank}\n\nMachine: " + "; ".join(f"{k}: {v}" for k, v in machine_facts().items()) + "\n")
        write_report(args.out, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
