"""Relevance ranking with group models (SIGIR 2012 §7.3, Tables 12–13) on Cranfield, MED, CISI.

BM25 vs BM25 + RLSI / CRLSI / GRLSI and BM25 + NMF / CNMF / GNMF under the protocol of
:mod:`rlsi.experiments` (the one of ``benchmarks/results/ranking.md``): every grid setting fitted once,
Eq. 9 at every α, 5-fold query-level cross-validation with repeats (the headline) and the paper's best
setting by NDCG@1 on the test queries.

The collections have no classes: P classes are derived by k-means on the L2-normalised tf-idf rows
(``classes="kmeans:P"``, seed 0; :func:`rlsi.models.group_base.derive_classes`), the same partition for
every group model and setting. A query is scored against a document of class p on that class's topics
(the §7.3 heuristic, :class:`rlsi.retrieval.group_topic.ClassTopicMatcher`). K of a group model is the
number of topics of one class, Ks + Kc (GRLSI, GNMF: Ks = Kc = K/2; CRLSI, CNMF: Kc = K), so that a query
and a document are compared in a K-dimensional space as with RLSI's K.

Besides the stars against BM25, paired one-sided t-tests on the held-out per-query values compare
GRLSI with CRLSI and RLSI (and GNMF with CNMF and NMF): the paper's claims are GRLSI > CRLSI
significantly and GRLSI close to (slightly below) RLSI.

Usage::

    PYTHONPATH=src python benchmarks/bench_group_ranking.py --collections med --out benchmarks/results/group_ranking.md
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
import sys  # noqa: E402

sys.path.insert(0, str(HERE))
from harness import command_line, log, machine_facts, machine_line, shared_data, use_src, write_report  # noqa: E402

use_src()
from rlsi.evaluation import load_collection  # noqa: E402
from rlsi.evaluation.significance import paired_ttest  # noqa: E402
from rlsi.experiments import ProtocolConfig, prepare_collection, run_protocol  # noqa: E402

METHODS = ("rlsi", "crlsi", "grlsi", "nmf", "cnmf", "gnmf")
GROUP = ("crlsi", "grlsi", "cnmf", "gnmf")
METRICS = ("map", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10")
PAIRS = (("grlsi", "crlsi"), ("grlsi", "rlsi"), ("gnmf", "cnmf"), ("gnmf", "nmf"))
LABEL = {"rlsi": "RLSI", "crlsi": "CRLSI", "grlsi": "GRLSI", "nmf": "NMF", "cnmf": "CNMF", "gnmf": "GNMF"}


def _floats(text):
    return tuple(float(x) for x in text.split(",") if x.strip())


def pair_rows(report, protocol, pairs):
    """Rows ``| A vs B | metric: Δ, p(A>B), p(B>A) ... |`` from the per-query values of two selections."""
    sel = {s.method: s for s in report.selections[protocol]}
    rows = []
    for a, b in pairs:
        if a not in sel or b not in sel:
            continue
        cells = []
        for m in ("map", "ndcg@10", "ndcg@1"):
            qa, qb = sel[a].per_query[m], sel[b].per_query[m]
            qids = list(qa)
            x = np.array([qa[q] for q in qids])
            y = np.array([qb[q] for q in qids])
            p_gt = paired_ttest(x, y, alternative="greater")[1]
            p_lt = paired_ttest(x, y, alternative="less")[1]
            cells += [f"{x.mean() - y.mean():+.4f}", _p(p_gt), _p(p_lt)]
        rows.append(f"| {LABEL[a]} vs {LABEL[b]} | " + " | ".join(cells) + " |")
    return rows


def _p(p):
    return "nan" if not np.isfinite(p) else (f"{p:.3f}" if p >= 0.001 else f"{p:.0e}")


def chosen_summary(sel):
    seen = {}
    for c in sel.chosen:
        s = c["setting"]
        key = f"K={s['n_components']}" + (f" λ1={s['lambda1']:g}" if "lambda1" in s else "") + f" α={c['alpha']:g}"
        seen[key] = seen.get(key, 0) + 1
    items = sorted(seen.items(), key=lambda kv: -kv[1])
    return "; ".join(f"{k} ×{n}" if n > 1 else k for k, n in items[:3]) + (
        f"; … ({len(items)} distinct)" if len(items) > 3 else "")


def run_collection(name, args):
    t0 = time.perf_counter()
    coll = load_collection(shared_data() / name)
    prepared = prepare_collection(coll)
    from rlsi.models.group_base import derive_classes
    from sklearn.preprocessing import normalize

    sizes = np.bincount(derive_classes(normalize(prepared.doc_tfidf), f"kmeans:{args.classes}", random_state=0))
    extra = {m: {"n_classes": args.classes} for m in GROUP}
    if args.class_topics is not None:  # GRLSI / GNMF: Kc fixed, Ks = K − Kc
        for m in ("grlsi", "gnmf"):
            extra[m]["n_class_topics"] = args.class_topics
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = ProtocolConfig(protocols=("cv", "best"), k_grid=args.k_grid, lambda1_grid=args.lambda1_grid,
                                metrics=METRICS, n_folds=args.folds, n_repeats=args.repeats, seed=0, extra=extra,
                                progress=not args.quiet)
        rep = run_protocol(coll, list(args.methods), config, prepared=prepared)
    seconds = time.perf_counter() - t0
    log(f"{name}: {seconds:.0f} s")
    L = [f"## {name} ({prepared.n_docs} documents, {prepared.doc_tfidf.shape[1]} terms, {prepared.n_queries} "
         f"queries; {seconds:.0f} s)", "",
         f"Derived classes: k-means P = {args.classes}, sizes {sorted(sizes.tolist())}.", ""]
    for protocol in ("cv", "best"):
        L.append(rep.to_markdown([protocol], show_p=True))
        L.append("Chosen settings: " + " · ".join(f"{s.label}: {chosen_summary(s)}"
                                                  for s in rep.selections[protocol]))
        L.append("")
        L += [f"Pairwise, {protocol} protocol (one-sided paired t-tests on the per-query values; Δ = A − B):", "",
              "| A vs B | MAP Δ | p(A>B) | p(B>A) | NDCG@10 Δ | p(A>B) | p(B>A) | NDCG@1 Δ | p(A>B) | p(B>A) |",
              "|---|" + "---:|" * 9]
        L += pair_rows(rep, protocol, PAIRS)
        L.append("")
    fits = ", ".join(f"{LABEL.get(m, m)} {np.sum(g.fit_seconds):.0f} s" for m, g in rep.grids.items())
    dens = ", ".join(f"{LABEL.get(m, m)} {np.nanmean(g.density):.4f}" for m, g in rep.grids.items())
    L += [f"Fit + fold-in time per method (all settings): {fits}.", "",
          f"Mean topic density (AvgComp over the grid's fits): {dens}.", ""]
    return "\n".join(L), rep


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--collections", default="med")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--classes", type=int, default=8, help="P, the number of k-means classes (default 8)")
    ap.add_argument("--class-topics", type=int, default=None,
                    help="GRLSI/GNMF: Kc fixed to this and Ks = K − Kc (default: Ks = Kc = K/2)")
    ap.add_argument("--k-grid", default="10,30,50")
    ap.add_argument("--lambda1-grid", default="0.001,0.005,0.02")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    args.k_grid = tuple(int(x) for x in _floats(args.k_grid))
    args.lambda1_grid = _floats(args.lambda1_grid)
    t0 = time.perf_counter()
    facts = machine_facts()
    parts = [run_collection(c.strip(), args)[0] for c in args.collections.split(",") if c.strip()]
    head = ["# Relevance ranking with group models (§7.3)", "",
            f"Command (from the repository root): `{command_line(__file__, argv)}`  ",
            f"Run: {time.strftime('%Y-%m-%d %H:%M')} · total {(time.perf_counter() - t0) / 60:.1f} min", "",
            machine_line(facts), "",
            "Setup: the protocol of `ranking.md` (stemmed tf-idf, BM25 k1 = 1.2, b = 0.75, tf-idf models fitted on "
            "L2-normalised rows, min-max normalisation, α ∈ {0, 0.05, …, 1}; RLSI-family folded in by the "
            "projection), on a reduced grid: "
            f"K ∈ {list(args.k_grid)} for every method, λ₁ ∈ {list(args.lambda1_grid)} (per 1000 documents) for "
            f"RLSI, GRLSI and CRLSI. {args.folds}-fold query-level CV with {args.repeats} repeats, tuned on "
            "mean(MAP, NDCG@10). K of a group model = the topics of one class (GRLSI/GNMF "
            + ("Ks = Kc = K/2" if args.class_topics is None else f"Kc = {args.class_topics}, Ks = K − Kc")
            + f", CRLSI/CNMF Kc = K); classes: k-means (P = {args.classes}, seed 0) on the L2-normalised tf-idf rows; "
            "a query is scored against each document on the document's class topics (§7.3). Stars: one-sided "
            "paired t-test against BM25, p < 0.05.", ""]
    text = "\n".join(head + parts) + "\n"
    if args.out:
        write_report(args.out, text, marker=True)
        log(f"wrote {args.out}")
    else:
        print(text)


if __name__ == "__main__":
    main()
