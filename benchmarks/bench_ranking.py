"""Relevance-ranking benchmark: the TOIS comparison on Cranfield, MED and CISI.

For each collection (``../shared/data/NAME``):

* **Table VIII analogue** — BM25 vs BM25 + the four RLSI variants (Uℓ1-Vℓ2, Uℓ2-Vℓ1, Uℓ1-Vℓ1, Uℓ2-Vℓ2);
* **Table XIII analogue** — BM25 vs BM25 + LSI / PLSI / LDA / NMF / RLSI;

each under both protocols of :mod:`rlsi.experiments`: query-level 5-fold cross-validation (the
headline; α, K, λ₁ and the folding-in tuned on training folds by mean(MAP, NDCG@10), 3 repeats) and the
paper's best setting by NDCG@1 on the test queries. Stars: one-sided paired t-test against BM25,
p < 0.05; p-values are printed. Every model is fitted once per grid setting and shared by the
protocols, the α grid, the folds and the ablations below.

Also: RLSI against the best baseline topic model (paired tests on the held-out per-query values), the
score-normalisation ablation (re-evaluating the cached topic scores: no refit), the folding-in ablation
(a sub-grid), the topic sparsity of the chosen RLSI models, and the term-mismatch example of §8.4.2
(relevant documents sharing no term with the query ranked in the top 10 thanks to the topic score).
``--ablations`` adds the two ablations that need refits (stemming, row normalisation before fitting)
on a reduced grid.

Usage::

    PYTHONPATH=src python benchmarks/bench_ranking.py --out benchmarks/results/ranking.md

``--grid extended`` uses the extended grids (K up to 300 for every method, λ₁ down to 1e-5 for
RLSI; :data:`rlsi.experiments.GRID_PRESETS`) for RLSI and the baselines, and K ∈ {10, 50, 300} for the
other RLSI variants; it is far slower (the RLSI fits at K = 300 take minutes each on 2 cores). Each
collection's section says which method's chosen setting is still on an edge of its grid.

The Markdown report keeps any text below the notes marker when it is regenerated.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from rlsi.evaluation import load_collection  # noqa: E402
from rlsi.experiments import (DEFAULT_ALPHAS, DEFAULT_CV_TUNE, DEFAULT_FIT_NORMALIZE,  # noqa: E402
                               DEFAULT_FOLD_GRID, DEFAULT_STEMMER, GRID_PRESETS, Experiment, cross_validate,
                               make_methods, prepare_collection, select_best)
from rlsi.experiments import PAPER_K_GRID as DEFAULT_K_GRID  # noqa: E402  (the benchmark's grid: --grid paper)
from rlsi.experiments import PAPER_LAMBDA1_GRID as DEFAULT_LAMBDA1_GRID  # noqa: E402
from rlsi.evaluation.significance import paired_ttest, randomization_test  # noqa: E402
from rlsi.retrieval.combine import DEFAULT_TERM_NORM, DEFAULT_TOPIC_NORM, NORMALIZERS  # noqa: E402
from rlsi.text import TfidfVectorizer  # noqa: E402

sys.path.insert(0, str(HERE))
from harness import log, shared_data, write_report  # noqa: E402

COLLECTIONS = ("cranfield", "med", "cisi")
METRICS = ("map", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10")
VARIANTS = ("rlsi", "rlsi-l2l1", "rlsi-l1l1", "rlsi-l2l2")
SPARSE = "rlsi-sparse"
BASELINES = ("lsi", "plsi", "lda", "nmf")
LABELS = {"rlsi": "RLSI (Ul1-Vl2)", "rlsi-l2l1": "RLSI (Ul2-Vl1)", "rlsi-l1l1": "RLSI (Ul1-Vl1)",
          "rlsi-l2l2": "RLSI (Ul2-Vl2)", "rlsi-sparse": "RLSI, sparse (λ1 ≥ 0.01)", "lsi": "LSI", "plsi": "PLSI", "lda": "LDA", "nmf": "NMF"}
# A reduced grid for the three other variants keeps the run short.
VARIANT_K_GRID = (10, 30, 50)
VARIANT_LAMBDA1_GRID = (0.002, 0.01)
# The RLSI models are fitted once and folded in both ways: the headline uses the default folding
# (DEFAULT_FOLD_GRID, the projection), the ablation compares it with the model's own ridge.
ALL_FOLDS = (None, math.inf)


# ---------------------------------------------------------------------------------------- helpers
def means(per_query):
    return {m: float(np.mean(list(v.values()))) for m, v in per_query.items()}


def ptest(a, b, test="ttest", alternative="greater"):
    qids = list(a)
    x = np.array([a[q] for q in qids])
    y = np.array([b[q] for q in qids])
    if test == "ttest":
        return paired_ttest(x, y, alternative=alternative)[1]
    return randomization_test(x, y, alternative=alternative, n_resamples=20000)[1]


def subgrid(grid, pred):
    idx = [i for i, s in enumerate(grid.settings) if pred(s)]
    return dataclasses.replace(grid, settings=[grid.settings[i] for i in idx], values=grid.values[idx],
                               fit_seconds=[grid.fit_seconds[i] for i in idx],
                               density=[grid.density[i] for i in idx] if grid.density else [],
                               topic_scores={j: grid.topic_scores[i] for j, i in enumerate(idx)
                                             if i in grid.topic_scores})


def fmt_p(p):
    return f"{p:.3f}" if p >= 0.001 else f"{p:.0e}"


def fold_name(f):
    return "model" if f is None else ("proj" if math.isinf(f) else f"{f:g}")


def setting_text(c):
    s = c["setting"]
    parts = [f"K={s['n_components']}"]
    if "lambda1" in s:
        parts.append(f"λ1={s['lambda1']:g}")
    if "fold_lambda2" in s:
        parts.append(f"fold={fold_name(s['fold_lambda2'])}")
    parts.append(f"α={c['alpha']:g}")
    return " ".join(parts)


def chosen_text(chosen):
    counts = {}
    for c in chosen:
        key = setting_text(c)
        counts[key] = counts.get(key, 0) + 1
    items = sorted(counts.items(), key=lambda kv: -kv[1])
    shown = "; ".join(k if n == 1 else f"{k} ×{n}" for k, n in items[:3])
    return shown + (f"; … ({len(items)} distinct)" if len(items) > 3 else "")


def table(rows, baseline_row, with_p=True):
    """Markdown table: rows = [(label, per_query, chosen or None)], stars vs the baseline row."""
    head = "| Method | " + " | ".join(m.upper() if m == "map" else m.replace("ndcg", "NDCG") for m in METRICS) + " |"
    lines = [head, "|---|" + "---:|" * len(METRICS)]
    all_means = [means(r[1]) for r in rows]
    best = {m: max(x[m] for x in all_means) for m in METRICS}
    for (label, pq, _), mm in zip(rows, all_means):
        cells = []
        for m in METRICS:
            text = f"{mm[m]:.4f}"
            if pq is not baseline_row[1]:
                p = ptest(pq[m], baseline_row[1][m])
                text += (" *" if p < 0.05 else "") + (f" <sub>p={fmt_p(p)}</sub>" if with_p else "")
            if math.isclose(mm[m], best[m], abs_tol=1e-12):
                text = f"**{text}**"
            cells.append(text)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- one collection
def run_collection(name, args):
    t0 = time.perf_counter()
    coll = load_collection(shared_data() / name)
    prepared = prepare_collection(coll, TfidfVectorizer(stemmer=DEFAULT_STEMMER))
    exp = Experiment(prepared, alphas=DEFAULT_ALPHAS, metrics=list(METRICS), fit_normalize=DEFAULT_FIT_NORMALIZE,
                     keep_scores=True, progress=not args.quiet)
    base_vals = exp.baseline()
    baseline = {m: dict(zip(prepared.query_ids, map(float, base_vals[m]))) for m in METRICS}
    grids = {}
    methods = [m for m in (*VARIANTS, *BASELINES) if m in args.methods]
    for method in methods:
        main = method in ("rlsi", *BASELINES)
        spec = make_methods([method], k_grid=DEFAULT_K_GRID if main else VARIANT_K_GRID,
                            lambda1_grid=DEFAULT_LAMBDA1_GRID if main else VARIANT_LAMBDA1_GRID,
                            fold_grid=ALL_FOLDS)[0]
        t = time.perf_counter()
        grids[method] = exp.run_method(spec)
        log(f"{name} {method}: {len(spec.grid)} settings in {time.perf_counter() - t:.0f}s")
    res = {"name": name, "prepared": prepared, "exp": exp, "baseline": baseline, "grids": grids, "sel": {},
           "n_queries": prepared.n_queries, "n_docs": prepared.n_docs,
           "n_terms": int(prepared.doc_tfidf.shape[1])}
    res["rlsi_all_folds"] = grids.get("rlsi")
    if "rlsi" in grids:  # headline: the default folding only (what `rlsi evaluate` does)
        grids["rlsi"] = subgrid(grids["rlsi"], lambda s: any(_same_fold(s["fold_lambda2"], f)
                                                           for f in DEFAULT_FOLD_GRID))
        sparse = subgrid(grids["rlsi"], lambda s: s["lambda1"] >= 0.01)
        if len(sparse.settings):  # the sparse-topics row needs λ1 ≥ 0.01 in the grid (--lambda1-grid may omit it)
            res["sel"]["rlsi-sparse"] = {
                "cv": cross_validate(sparse, n_folds=args.folds, n_repeats=args.repeats, tune=DEFAULT_CV_TUNE,
                                     seed=0),
                "best": select_best(sparse, "ndcg@1")}
    for method, g in grids.items():
        res["sel"][method] = {
            "cv": cross_validate(g, n_folds=args.folds, n_repeats=args.repeats, tune=DEFAULT_CV_TUNE, seed=0),
            "best": select_best(g, "ndcg@1")}
    res["ablation_norm"] = norm_ablation(exp, grids, args)
    res["ablation_fold"] = fold_ablation(res["rlsi_all_folds"], args)
    res["mismatch"] = term_mismatch(prepared, exp, grids.get("rlsi"), res["sel"].get("rlsi"), coll)
    res["sparsity"] = sparsity(grids.get("rlsi"), res["sel"].get("rlsi"))
    res["seconds"] = time.perf_counter() - t0
    for g in [*grids.values(), res["rlsi_all_folds"]]:
        if g is not None:
            g.topic_scores.clear()  # free memory
    return res


def _same_fold(a, b):
    return (a is None and b is None) or (a is not None and b is not None and a == b)


def norm_ablation(exp, grids, args):
    """CV MAP / NDCG@10 of each method under each (topic, term) normalisation, from cached scores."""
    out = {}
    saved = (exp.topic_norm, exp.term_norm)
    for norm in NORMALIZERS:
        exp.topic_norm = exp.term_norm = norm
        for method in ("lsi", "rlsi"):
            g = grids.get(method)
            if g is None:
                continue
            values = np.asarray([exp.evaluate_alphas(g.topic_scores[s].astype(np.float64))
                                 for s in range(len(g.settings))])
            g2 = dataclasses.replace(g, values=values)
            m = cross_validate(g2, n_folds=args.folds, n_repeats=args.repeats, seed=0).means()
            out[(norm, method)] = (m["map"], m["ndcg@10"])
    exp.topic_norm, exp.term_norm = saved
    return out


def fold_ablation(g, args):
    if g is None or "fold_lambda2" not in g.settings[0]:
        return {}
    out = {}
    folds = []
    for s in g.settings:
        if not any((f is None and s["fold_lambda2"] is None) or (f is not None and s["fold_lambda2"] == f)
                   for f in folds):
            folds.append(s["fold_lambda2"])
    for f in folds:
        sub = subgrid(g, lambda s, f=f: (s["fold_lambda2"] is None) if f is None else (s["fold_lambda2"] == f))
        m = cross_validate(sub, n_folds=args.folds, n_repeats=args.repeats, seed=0).means()
        out[fold_name(f)] = (m["map"], m["ndcg@10"])
    m = cross_validate(g, n_folds=args.folds, n_repeats=args.repeats, seed=0).means()
    out["tuned on folds"] = (m["map"], m["ndcg@10"])
    return out


def _most_chosen(sel):
    counts = {}
    for c in sel.chosen:
        key = json.dumps(c["setting"], sort_keys=True, default=str) + f"|{c['alpha']}"
        counts.setdefault(key, [0, c])[0] += 1
    return max(counts.values(), key=lambda x: x[0])[1]


def term_mismatch(prepared, exp, grid, sels, coll):
    """Relevant documents with term score 0 ranked in the top 10 of BM25+RLSI (most chosen CV setting)."""
    if grid is None:
        return None
    c = _most_chosen(sels["cv"])
    s = grid.settings.index(c["setting"])
    alpha = c["alpha"]
    from rlsi.retrieval.combine import normalize_scores

    T = grid.topic_scores[s].astype(np.float64)
    B = exp.term_scores
    S = alpha * normalize_scores(T, exp.topic_norm) + (1 - alpha) * normalize_scores(B, exp.term_norm)
    ids = np.asarray(prepared.doc_ids)
    perm = np.argsort(ids, kind="stable")[::-1]  # trec_eval tie order
    rows, zero_term = [], []
    n_queries_with = 0
    for i, q in enumerate(prepared.query_ids):
        order = perm[np.argsort(-S[i, perm], kind="stable")]
        border = perm[np.argsort(-B[i, perm], kind="stable")]
        rank = np.empty(len(ids), int)
        rank[order] = np.arange(1, len(ids) + 1)
        brank = np.empty(len(ids), int)
        brank[border] = np.arange(1, len(ids) + 1)
        found = False
        for j in np.flatnonzero((prepared.grades[i] > 0) & (B[i] == 0)):
            row = {"query": q, "text": prepared.query_texts[i], "doc": ids[j], "rank": int(rank[j]),
                   "bm25_rank": int(brank[j]), "topic": float(T[i, j]), "grade": int(prepared.grades[i, j]),
                   "doc_text": coll.corpus.texts[j]}
            zero_term.append(row)
            if rank[j] <= 10:
                found = True
                rows.append(row)
        n_queries_with += found
    zero_term.sort(key=lambda x: x["rank"])
    return {"setting": c, "rows": rows, "n_queries": n_queries_with, "n_total": prepared.n_queries,
            "zero_term": zero_term}


def sparsity(grid, sels):
    """Average topic compactness (share of non-zero term weights) of the RLSI models chosen under CV."""
    if grid is None:
        return None
    out, seen = [], set()
    for c in sels["cv"].chosen:
        key = (c["setting"]["n_components"], c["setting"]["lambda1"])
        if key in seen:
            continue
        seen.add(key)
        out.append({"K": key[0], "lambda1": key[1], "avgcomp": grid.density[grid.settings.index(c["setting"])]})
    by_lambda = {}
    for s, d in zip(grid.settings, grid.density):
        by_lambda.setdefault(s["lambda1"], []).append(d)
    return {"chosen": out, "by_lambda": {k: float(np.mean(v)) for k, v in sorted(by_lambda.items())}}


# ---------------------------------------------------------------------------------------- ablations with refits
def refit_ablations(name, args):
    """CV MAP/NDCG@10 of LSI and RLSI with/without stemming and row normalisation (reduced grid)."""
    coll = load_collection(shared_data() / name)
    out = {}
    for stem in (None, "english"):
        prepared = prepare_collection(coll, TfidfVectorizer(stemmer=stem))
        prepared.name = name
        for fit_norm in (None, "l2"):
            exp = Experiment(prepared, metrics=list(METRICS), fit_normalize=fit_norm)
            base = {m: float(v.mean()) for m, v in exp.baseline().items()}
            for method in ("lsi", "rlsi"):
                spec = make_methods([method], k_grid=(10, 30, 50), lambda1_grid=DEFAULT_LAMBDA1_GRID,
                                    fold_grid=DEFAULT_FOLD_GRID)[0]
                g = exp.run_method(spec)
                m = cross_validate(g, n_folds=args.folds, n_repeats=args.repeats, seed=0).means()
                out[(stem or "none", fit_norm or "none", method)] = (m["map"], m["ndcg@10"])
            out[(stem or "none", fit_norm or "none", "bm25")] = (base["map"], base["ndcg@10"])
            log(f"ablation {name} stem={stem} fit_normalize={fit_norm} done")
    return out


# ---------------------------------------------------------------------------------------- report
def report(results, ablations, args, seconds):
    L = []
    cmd = "PYTHONPATH=src python benchmarks/" + " ".join(shlex.quote(a) for a in [Path(sys.argv[0]).name, *sys.argv[1:]])
    title = ", ".join(r["name"] for r in results) or "no collection"
    grid = "" if args.grid == "default" else f" ({args.grid} grids)"
    L += [f"# Relevance ranking: BM25 + topic models on {title}{grid}", "",
          f"Command (from the repository root): `{cmd}`  ",
          f"Run: {time.strftime('%Y-%m-%d %H:%M')} · {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores · Python {platform.python_version()} · total {seconds / 60:.1f} min", "",
          "## Setup", "",
          f"* Text: title + text, English stop words (Glasgow list), Snowball English stemming "
          f"(`stemmer={DEFAULT_STEMMER!r}`), the TOIS tf-idf `n(t,d)/|d| · log(N/df)` for the topic models, raw "
          f"counts for BM25, PLSI and LDA.",
          "* Term model: BM25 with the paper's k1 = 1.2, b = 0.75 (not tuned).",
          f"* Topic score: cosine of folded-in query and document vectors (§7). Eq. 9 on per-query "
          f"normalised scores: topic `{DEFAULT_TOPIC_NORM}`, term `{DEFAULT_TERM_NORM}`; α ∈ {{0, 0.05, …, 1}}.",
          f"* tf-idf models (RLSI variants, LSI, NMF) are fitted on L2-normalised document rows "
          f"(`fit_normalize={DEFAULT_FIT_NORMALIZE!r}`); folding-in is unchanged (see the ablations).",
          f"* Grids: K ∈ {list(DEFAULT_K_GRID)} and λ₁ ∈ {list(DEFAULT_LAMBDA1_GRID)} for RLSI (Uℓ1-Vℓ2), "
          f"folded in by the projection Uᵀq (`RidgeFolding`, the default; the model's own ridge with λ₂ = 1 "
          f"in the folding ablation); K ∈ {list(VARIANT_K_GRID)} and λ₁ ∈ {list(VARIANT_LAMBDA1_GRID)} for "
          f"the three other RLSI variants, with the folding-in (model's own / projection) tuned like K and λ₁; "
          f"λ₁ on BatchRLSI's per-1000-documents scale, λ₂ = 1; K ∈ {list(DEFAULT_K_GRID)} for the baselines. "
          f"LDA: scikit-learn batch VB, 50 passes; PLSI: EM, 100 iterations; NMF: scikit-learn, NNDSVDa; "
          f"LSI: ARPACK SVD. Random state 0 everywhere.",
          f"* **CV protocol (headline)**: {args.folds}-fold query-level cross-validation, {args.repeats} repeats "
          f"(per-query score = mean of its held-out scores); on the training folds the (K, λ₁, folding, α) "
          f"with the best mean of MAP and NDCG@10 is chosen. **Best protocol (paper)**: the (setting, α) with "
          f"the best mean NDCG@1 on the test queries themselves — optimistic, for comparison with the paper.",
          "* Stars: one-sided paired t-test against BM25, p < 0.05 (p-values in small print). Bold: best in "
          "column. Metrics: trec_eval definitions over the full ranking; NDCG with linear gains (Cranfield is "
          "graded 1–4, MED and CISI binary); queries with at least one relevant document "
          f"({', '.join(str(r['name']) + ': ' + str(r['n_queries']) for r in results)}).", ""]
    # summary
    L += ["## Summary (CV protocol)", "",
          "| Collection | BM25 MAP | +RLSI MAP | best baseline (MAP) | BM25 NDCG@10 | +RLSI NDCG@10 | best baseline (NDCG@10) |",
          "|---|---:|---:|---|---:|---:|---|"]
    avg = {"bm25": [], "rlsi": [], "best": [], "bm25n": [], "rlsin": [], "bestn": []}
    for r in results:
        if "rlsi" not in r["sel"]:
            continue
        b = means(r["baseline"])
        x = r["sel"]["rlsi"]["cv"].means()
        bl = {m: r["sel"][m]["cv"].means() for m in BASELINES if m in r["sel"]}
        if not bl:
            continue
        bm = max(bl, key=lambda m: bl[m]["map"])
        bn = max(bl, key=lambda m: bl[m]["ndcg@10"])
        L.append(f"| {r['name']} | {b['map']:.4f} | {x['map']:.4f} | {LABELS[bm]} {bl[bm]['map']:.4f} | "
                 f"{b['ndcg@10']:.4f} | {x['ndcg@10']:.4f} | {LABELS[bn]} {bl[bn]['ndcg@10']:.4f} |")
        avg["bm25"].append(b["map"]); avg["rlsi"].append(x["map"]); avg["best"].append(bl[bm]["map"])
        avg["bm25n"].append(b["ndcg@10"]); avg["rlsin"].append(x["ndcg@10"]); avg["bestn"].append(bl[bn]["ndcg@10"])
    if avg["rlsi"]:
        f = lambda k: f"{np.mean(avg[k]):.4f}"  # noqa: E731
        L.append(f"| **mean** | {f('bm25')} | {f('rlsi')} | {f('best')} | {f('bm25n')} | {f('rlsin')} | {f('bestn')} |")
    L.append("")
    # RLSI vs each baseline
    L += ["RLSI against each baseline topic model (CV held-out per-query values; one-sided paired t-test "
          "RLSI > baseline, and the reverse):", "",
          "| Collection | Baseline | MAP Δ (RLSI − base) | p (RLSI>base) | p (base>RLSI) | NDCG@10 Δ | p (RLSI>base) | p (base>RLSI) |",
          "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        if "rlsi" not in r["sel"]:
            continue
        x = r["sel"]["rlsi"]["cv"].per_query
        for m in BASELINES:
            if m not in r["sel"]:
                continue
            y = r["sel"][m]["cv"].per_query
            cells = []
            for metric in ("map", "ndcg@10"):
                d = means(x)[metric] - means(y)[metric]
                cells += [f"{d:+.4f}", fmt_p(ptest(x[metric], y[metric])), fmt_p(ptest(y[metric], x[metric]))]
            L.append(f"| {r['name']} | {LABELS[m]} | " + " | ".join(cells) + " |")
    L.append("")
    # per collection tables
    for r in results:
        L += [f"## {r['name']} ({r['n_docs']} documents, {r['n_terms']} terms, {r['n_queries']} queries; "
              f"{r['seconds']:.0f} s)", ""]
        base_row = ("BM25", r["baseline"], None)
        for title, methods in (("Table VIII analogue — RLSI variants", VARIANTS),
                               ("Table XIII analogue — topic models", (*BASELINES, "rlsi", SPARSE))):
            present = [m for m in methods if m in r["sel"]]
            if not present:
                continue
            for protocol, ptitle in (("cv", "cross-validated"), ("best", "best setting by NDCG@1 on the test queries")):
                rows = [base_row] + [(f"BM25+{LABELS[m]}", r["sel"][m][protocol].per_query,
                                      r["sel"][m][protocol].chosen) for m in present]
                L += [f"**{title}, {ptitle}**", "", table(rows, base_row), ""]
                L += ["Chosen settings: " + " · ".join(f"{LABELS[m]}: {chosen_text(r['sel'][m][protocol].chosen)}"
                                                       for m in present), ""]
        L += [edge_line(r), ""]
        if r.get("sparsity"):
            sp_ = r["sparsity"]
            L += ["Topic compactness (share of non-zero term weights, AvgComp of §8.2.1) of the RLSI (Uℓ1-Vℓ2) "
                  "models chosen under CV: " + ", ".join(f"K={s['K']} λ1={s['lambda1']:g}: {s['avgcomp']:.3f}"
                                                          for s in sp_["chosen"]) +
                  "; mean over K by λ1: " + ", ".join(f"{k:g} → {v:.3f}" for k, v in sp_["by_lambda"].items()) + ".",
                  ""]
    # ablations
    L += ["## Design choices: evidence", "",
          "### Score normalisation before Eq. 9 (CV MAP / NDCG@10, same cached topic scores)", "",
          "| Collection | Method | " + " | ".join(NORMALIZERS) + " |", "|---|---|" + "---:|" * len(NORMALIZERS)]
    for r in results:
        ab = r["ablation_norm"]
        for method in ("lsi", "rlsi"):
            if (next(iter(NORMALIZERS)), method) not in ab:
                continue
            L.append(f"| {r['name']} | {LABELS[method]} | " +
                     " | ".join(f"{ab[(n, method)][0]:.4f} / {ab[(n, method)][1]:.4f}" for n in NORMALIZERS) + " |")
    L += ["", "### RLSI folding-in (CV MAP / NDCG@10; K, λ₁ and α tuned on folds within each sub-grid)", ""]
    folds = []
    for r in results:
        for k in r["ablation_fold"]:
            if k not in folds:
                folds.append(k)
    if folds:
        L += ["| Collection | " + " | ".join(folds) + " |", "|---|" + "---:|" * len(folds)]
        for r in results:
            ab = r["ablation_fold"]
            L.append(f"| {r['name']} | " + " | ".join(f"{ab[k][0]:.4f} / {ab[k][1]:.4f}" if k in ab else "–"
                                                      for k in folds) + " |")
    if ablations:
        L += [""] + ablation_table(ablations)
    # term mismatch
    L += ["", "## Term mismatch (§8.4.2)", "",
          "Relevant documents that share **no term** with the query (BM25 score 0) yet are ranked in the top 10 "
          "by BM25+RLSI, with the setting most often chosen under CV. `BM25 rank` is the rank under BM25 alone "
          "(all such documents are tied at score 0 there).", ""]
    for r in results:
        mm = r.get("mismatch")
        if not mm:
            continue
        zt = mm["zero_term"]
        L += [f"**{r['name']}** — {setting_text(mm['setting'])}: {mm['n_queries']} of {mm['n_total']} queries "
              f"have such a document in their top 10 ({len(mm['rows'])} documents). Relevant documents sharing no "
              f"term with their query: {len(zt)}; ranked in the top 10 / 20 / 50 by BM25+RLSI: "
              f"{sum(x['rank'] <= 10 for x in zt)} / {sum(x['rank'] <= 20 for x in zt)} / "
              f"{sum(x['rank'] <= 50 for x in zt)} (under BM25 alone they are tied at score 0, after every document "
              f"that shares a term).", ""]
        shown = mm["rows"] if mm["rows"] else zt[:3]
        if shown:
            if not mm["rows"]:
                L += ["None reaches the top 10; the best-ranked ones:", ""]
            L += ["| Query | Query text | Document | Document text | grade | rank | BM25 rank | s_topic |",
                  "|---|---|---|---|---:|---:|---:|---:|"]
            for row in sorted(shown, key=lambda x: (x["rank"], -x["topic"]))[: args.mismatch_rows]:
                qt = _short(row["text"], 70)
                dt = _short(row["doc_text"], 90)
                L.append(f"| {row['query']} | {qt} | {row['doc']} | {dt} | {row['grade']} | {row['rank']} | "
                         f"{row['bm25_rank']} | {row['topic']:.3f} |")
            L.append("")
    return "\n".join(L) + "\n"


def edge_line(r):
    """One line: which method's chosen setting (either protocol) is on an edge of its grid."""
    items = []
    for m in (*VARIANTS, *BASELINES):
        for protocol in ("cv", "best"):
            sel = r["sel"].get(m, {}).get(protocol)
            for w in (sel.edges if sel is not None else []):
                items.append(f"{protocol}: {LABELS[m]} {w['message'].split(': ', 1)[1]}")
    if not items:
        return "**Grid edges**: no method's chosen setting is on an edge of its grid (either protocol)."
    return "**Grid edges** — chosen settings still on an edge of the grid: " + "; ".join(items) + "."


def ablation_table(ablations):
    L = ["### Stemming and row normalisation before fitting (CV MAP / NDCG@10, K ∈ {10, 30, 50})", "",
         "| Collection | stemming | fit rows | BM25 | BM25+LSI | BM25+RLSI |", "|---|---|---|---:|---:|---:|"]
    for name, ab in ablations.items():
        for stem in ("none", "english"):
            for fn in ("none", "l2"):
                cells = [f"{ab[(stem, fn, m)][0]:.4f} / {ab[(stem, fn, m)][1]:.4f}" for m in ("bm25", "lsi", "rlsi")]
                L.append(f"| {name} | {stem} | {fn} | " + " | ".join(cells) + " |")
    return L + [""]


def _short(text, n):
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= n else text[: n - 1] + "…"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--collections", default=",".join(COLLECTIONS))
    ap.add_argument("--methods", default=",".join((*VARIANTS, *BASELINES)))
    ap.add_argument("--grid", choices=sorted(GRID_PRESETS), default="paper",
                    help="named K / λ1 grids of RLSI and the baselines (paper: K 10..50, the results' grid; "
                         "default: rlsi evaluate's; extended: K up to 300, λ1 down to 1e-5)")
    ap.add_argument("--k-grid", default=None, help="override K grid (smoke tests only)")
    ap.add_argument("--lambda1-grid", default=None, help="override the RLSI λ1 grid (smoke tests only)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ablations", action="store_true", help="also run the refit ablations (stemming, row norm)")
    ap.add_argument("--ablations-only", action="store_true", help="run only the refit ablations")
    ap.add_argument("--mismatch-rows", type=int, default=8)
    ap.add_argument("--out", default=None, help="Markdown report (default: print)")
    ap.add_argument("--json", default=None, help="also write the per-query results as JSON")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    global DEFAULT_K_GRID, VARIANT_K_GRID, DEFAULT_LAMBDA1_GRID, VARIANT_LAMBDA1_GRID
    if args.grid != "paper":
        DEFAULT_K_GRID = tuple(GRID_PRESETS[args.grid]["k_grid"])
        DEFAULT_LAMBDA1_GRID = tuple(GRID_PRESETS[args.grid]["lambda1_grid"])
        VARIANT_K_GRID = (min(DEFAULT_K_GRID), 50, max(DEFAULT_K_GRID))
    if args.k_grid:
        DEFAULT_K_GRID = VARIANT_K_GRID = tuple(int(x) for x in args.k_grid.split(","))
    if args.lambda1_grid:
        DEFAULT_LAMBDA1_GRID = VARIANT_LAMBDA1_GRID = tuple(float(x) for x in args.lambda1_grid.split(","))
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    names = [c.strip() for c in args.collections.split(",") if c.strip()]
    results = [] if args.ablations_only else [run_collection(name, args) for name in names]
    ablations = {}
    if args.ablations or args.ablations_only:
        for name in names:
            ablations[name] = refit_ablations(name, args)
    seconds = time.perf_counter() - t0
    if args.ablations_only:
        cmd = "PYTHONPATH=src python benchmarks/" + " ".join(shlex.quote(a) for a in [Path(sys.argv[0]).name, *sys.argv[1:]])
        text = "\n".join([
            "# Relevance ranking: refit ablations", "",
            f"Command (from the repository root): `{cmd}`  ",
            f"Run: {time.strftime('%Y-%m-%d %H:%M')} · {os.cpu_count()} cores · total {seconds / 60:.1f} min", "",
            "Same protocol as `ranking.md` (CV, 5 folds, tuned by mean(MAP, NDCG@10), minmax normalisation, "
            "RLSI λ1 grid and projection folding as there) on a reduced K grid, with and without Snowball "
            "stemming, and with and without L2 row normalisation of the tf-idf matrix before fitting.", "",
            *ablation_table(ablations)]) + "\n"
    else:
        text = report(results, ablations, args, seconds)
    if args.json:
        data = {r["name"]: {"baseline": r["baseline"],
                            "methods": {m: {p: {"per_query": s.per_query, "chosen": s.chosen}
                                            for p, s in sel.items()} for m, sel in r["sel"].items()}}
                for r in results}
        Path(args.json).write_text(json.dumps(data, default=lambda o: "inf" if o == math.inf else str(o)))
    if args.out:
        out = Path(args.out)
        write_report(out, text, marker=True)
        log(f"wrote {out} ({seconds / 60:.1f} min)")
    else:
        print(text)


if __name__ == "__main__":
    main()
