"""The markdown report of ``bench_live_index.py``: the 20 Newsgroups and the 1.6M sections against their
targets."""

import harness

TARGET_ADD = 1 / 20
TARGET_LATENCY = 1.5


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


def report(a, facts, results):
    L = ["# The live index: adds, deletes and queries against a rebuild, SQLite FTS5 and bm25s", "",
         "Commands: " + "; ".join(f"`{c}`" for c in results.get("commands", [])), "", harness.machine_line(facts),
         "The machine's 2 cores are shared with other jobs (several agents run on it): wall-clock figures carry "
         "their load; the load average is given beside each part.", ""]
    if "newsgroups" in results:
        L += _news_section(results["newsgroups"]) + [""]
    if "synthetic" in results:
        L += _synth_section(results["synthetic"]) + [""]
    return "\n".join(L)
