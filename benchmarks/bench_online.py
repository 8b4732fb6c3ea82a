"""Online RLSI benchmark: throughput, memory, and retrieval quality against batch RLSI.

1. **Throughput and memory.** Documents per second of ``partial_fit`` over one pass of a stream, and the
   peak memory above the data, for :class:`rlsi.models.OnlineRLSI` against scikit-learn's
   ``MiniBatchNMF.partial_fit`` and ``LatentDirichletAllocation(learning_method="online").partial_fit``,
   with the same K and mini-batch size, on 20 Newsgroups (18,846 documents, shuffled: the file is sorted
   by newsgroup) and on a larger synthetic Zipfian stream (``benchmarks/synthetic.py``). RLSI and NMF read
   the TOIS tf-idf, LDA the raw counts of the same vocabulary. Every (method, data, setting) runs in its
   own subprocess, so that one method's memory cannot inflate another's: the worker loads the data, warms
   up on three mini-batches (numba compilation), records the resident set size (RSS, sampled every 2 ms
   with psutil) as the baseline, then times the pass. Memory is reported above that baseline: the peak,
   and the RSS after 25 %, 50 % and 100 % of the stream — flat means the learner does not grow with the
   number of documents. For RLSI the size of its state (U, S, R) is given as well.

   Threads. On this machine (2 vCPUs, shared) two settings of the runtime change the speed of every
   method several-fold: OpenBLAS's threads (slow on small products) and numba's OpenMP workers spinning
   between parallel regions. The main table uses ``OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=1`` for
   *every* method (it is each method's fastest setting here); a second table repeats 20 Newsgroups with
   the default environment.

2. **Quality.** Batch vs online RLSI in the retrieval protocol of :mod:`rlsi.experiments`
   (BM25 + topic matching, α grid, query-level 5-fold cross-validation and the paper's best-by-NDCG@1) on
   Cranfield, MED and CISI, as in Tables XVII–XIX. Skipped (and said so) if the evaluation modules are
   missing.

Usage::

    PYTHONPATH=src python benchmarks/bench_online.py --out benchmarks/results/online.md

``--quick`` runs a small version (for checking the script).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
from harness import RSSSampler, log, shared_data  # noqa: E402
CACHE = HERE / "out" / "online"
TUNED_ENV = {"OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_NUM_THREADS": "1"}
METHOD_LABELS = {"rlsi": "OnlineRLSI", "rlsi-track": "OnlineRLSI (ρ=1, ξ=10, λ₂=1)",
                 "rlsi-sparse": "OnlineRLSI (ξ=1, λ₂=1)", "nmf": "MiniBatchNMF",
                 "lda": "online LDA"}


# ---------------------------------------------------------------------------------------- data
def prepare(name, quick):
    """Cache ``X`` (tf-idf CSR) and ``C`` (counts CSR) of a data set in benchmarks/out; return the path."""
    harness.use_src()
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{name}{'-quick' if quick else ''}.npz"
    if path.exists():
        return path
    t0 = time.perf_counter()
    if name == "20ng":
        from rlsi.text import TfidfVectorizer, read_jsonl

        corpus = read_jsonl(shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz")
        texts = corpus.texts[::6] if quick else corpus.texts
        vec = TfidfVectorizer(min_df=2)
        X = vec.fit_transform(texts)
        C = vec.transform_counts(texts)
        order = np.random.default_rng(0).permutation(X.shape[0])  # the file is sorted by newsgroup
        X, C = X[order], C[order]
    elif name == "synthetic":
        from synthetic import make_corpus

        n = 20_000 if quick else 200_000
        corpus = make_corpus(n_docs=n, n_terms=50_000, tokens_per_doc=100, n_topics=100, topic_vocab=2_000,
                             seed=0)
        X, C = corpus.X, corpus.counts
    else:
        raise ValueError(name)
    np.savez(path, X_data=X.data, X_indices=X.indices, X_indptr=X.indptr, C_data=C.data.astype(np.float64),
             C_indices=C.indices, C_indptr=C.indptr, shape=np.asarray(X.shape))
    log(f"prepared {name}: {X.shape[0]} docs x {X.shape[1]} terms, {X.nnz} nnz ({time.perf_counter() - t0:.1f}s)")
    return path


def load(path):
    z = np.load(path)
    shape = tuple(z["shape"])
    X = sp.csr_matrix((z["X_data"], z["X_indices"], z["X_indptr"]), shape=shape)
    C = sp.csr_matrix((z["C_data"], z["C_indices"], z["C_indptr"]), shape=shape)
    return X, C


# ---------------------------------------------------------------------------------------- worker
def make_estimator(method, K, batch, n_total, lambda1):
    if method in ("rlsi", "rlsi-track", "rlsi-sparse"):
        from rlsi.models.online import OnlineRLSI

        # the paper's tracking; the paper's λ₂ in one iteration per batch (sparse topics); the defaults
        extra = {"rlsi-track": dict(rho=1.0, n_inner=10, lambda2=1.0),
                 "rlsi-sparse": dict(n_inner=1, lambda2=1.0)}.get(method, {})
        return OnlineRLSI(K, lambda1=lambda1, batch_size=batch, random_state=0, **extra)
    if method == "nmf":
        from sklearn.decomposition import MiniBatchNMF

        return MiniBatchNMF(K, batch_size=batch, random_state=0)
    if method == "lda":
        from sklearn.decomposition import LatentDirichletAllocation

        return LatentDirichletAllocation(K, learning_method="online", batch_size=batch, total_samples=n_total,
                                         random_state=0)
    raise ValueError(method)


def worker(args):
    harness.use_src()
    import gc
    import warnings

    warnings.simplefilter("ignore")
    X, C = load(args.data)
    data = C if args.method == "lda" else X
    N, B = data.shape[0], args.batch
    # warm-up on a throwaway estimator: numba compilation and first-call costs are not stream costs
    warm = make_estimator(args.method, args.k, B, N, args.lambda1)
    for a in range(0, min(N, 3 * B), B):
        warm.partial_fit(data[a:a + B])
    del warm
    gc.collect()
    est = make_estimator(args.method, args.k, B, N, args.lambda1)
    sampler = RSSSampler()
    base = sampler.now()
    sampler.start()
    marks = {int(math.ceil(N * q / 100 / B)) * B: q for q in (25, 50, 100)}
    at, state = {}, {}
    t0 = time.perf_counter()
    for a in range(0, N, B):
        est.partial_fit(data[a:a + B])
        done = min(N, a + B)
        if done in marks or (done == N and 100 not in at):
            q = marks.get(done, 100)
            at[q] = sampler.now() - base
            if hasattr(est, "stats_"):
                U, st = est.components_, est.stats_
                state[q] = (st.R.nbytes + st.S.nbytes + U.data.nbytes + U.indices.nbytes + U.indptr.nbytes)
    seconds = time.perf_counter() - t0
    sampler.stop()
    comp = est.components_
    nnz = comp.nnz if sp.issparse(comp) else int(np.count_nonzero(comp))
    out = {"method": args.method, "docs": N, "terms": data.shape[1], "k": args.k, "batch": B,
           "seconds": seconds, "docs_per_s": N / seconds, "peak_mb": (sampler.peak - base) / 2**20,
           "rss_mb": {str(q): v / 2**20 for q, v in at.items()},
           "state_mb": {str(q): v / 2**20 for q, v in state.items()},
           "density": nnz / (comp.shape[0] * comp.shape[1]),
           "dead": int(np.sum(np.abs(comp).sum(axis=1) == 0)) if not sp.issparse(comp) else
           int(np.sum(np.diff(comp.tocsr().indptr) == 0))}
    print(json.dumps(out))


def run_worker(method, data, k, batch, lambda1, env_name):
    env = (harness.child_env(TUNED_ENV) if env_name == "tuned" else harness.child_env(drop=TUNED_ENV))
    cmd = [sys.executable, str(Path(__file__).resolve()), "worker", "--method", method, "--data", str(data),
           "--k", str(k), "--batch", str(batch), "--lambda1", str(lambda1)]
    out = harness.run_child(cmd, env=env)
    if "error" in out:
        raise RuntimeError(f"worker {method} failed: {out['error']}")
    out["env"] = env_name
    return out


# ---------------------------------------------------------------------------------------- quality
def quality(quick, extra_online=False):
    """Batch vs online RLSI on the IR collections; returns Markdown lines (or a note if unavailable)."""
    harness.use_src()
    try:
        from rlsi.evaluation import load_collection
        from rlsi.experiments import (DEFAULT_CV_TUNE, DEFAULT_FIT_NORMALIZE, DEFAULT_FOLD_GRID,
                                      DEFAULT_STEMMER, Experiment, MethodSpec, cross_validate,
                                      make_methods, prepare_collection, select_best)
        from rlsi.evaluation.significance import paired_ttest
        from rlsi.text import TfidfVectorizer
    except ImportError as exc:
        return [f"Skipped: the evaluation modules are not available ({exc})."]
    from rlsi.models.online import OnlineRLSI

    k_grid = (10, 30) if quick else (10, 30, 50)
    l1_grid = (0.002, 0.01)
    metrics = ["map", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10"]
    # λ₂ = 1 as the batch learner of the protocol (the paper's tables)
    online_variants = {"oRLSI-1": dict(batch_size=50, n_inner=10, rho=0.0, n_passes=1, lambda2=1.0)}
    if extra_online:
        online_variants["oRLSI-3"] = dict(batch_size=100, n_inner=5, rho=0.0, n_passes=3, shuffle=True, lambda2=1.0)

    def online_factory(params):
        def make(n_components, lambda1, random_state=0):
            return OnlineRLSI(n_components, lambda1=lambda1, random_state=random_state, **params)
        return make

    lines = [f"Grid: K ∈ {list(k_grid)}, λ₁ ∈ {list(l1_grid)} (per 1000 documents), α ∈ 0, 0.05, …, 1; "
             f"folding-in by projection; documents L2-normalised for fitting (`fit_normalize="
             f"{DEFAULT_FIT_NORMALIZE!r}`), Snowball stemming — the settings of `bench_ranking.py`. "
             f"bRLSI: BatchRLSI, 100 iterations. oRLSI-1: one pass over the collection in its order, "
             f"{online_variants['oRLSI-1']} (the paper's single-pass setting, with its embedded iterations)"
             + (f"; oRLSI-3: {online_variants['oRLSI-3']} (three passes in random order)" if extra_online else "")
             + ". The `p` rows are two-sided paired t-tests against bRLSI.", ""]
    cols = ["MAP", "NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10"]
    for name in ("cranfield", "med", "cisi"):
        path = shared_data() / name
        if not path.is_dir():
            lines.append(f"{name}: data not found, skipped")
            continue
        t0 = time.perf_counter()
        prepared = prepare_collection(load_collection(path), TfidfVectorizer(stemmer=DEFAULT_STEMMER))
        exp = Experiment(prepared, metrics=metrics, fit_normalize=DEFAULT_FIT_NORMALIZE)
        batch_spec = make_methods(["rlsi"], k_grid=k_grid, lambda1_grid=l1_grid, fold_grid=DEFAULT_FOLD_GRID)[0]
        grids = {"bRLSI": exp.run_method(batch_spec)}
        for key, params in online_variants.items():
            spec = MethodSpec(key.lower(), f"BM25+{key}", online_factory(params),
                              [dict(p) for p in batch_spec.grid])
            grids[key] = exp.run_method(spec)
        base = exp.baseline()
        lines += [f"### {name} ({prepared.n_docs} documents, {prepared.n_queries} queries; "
                  f"{time.perf_counter() - t0:.0f}s)", ""]
        for proto in ("cv", "best"):
            sels = {k: (select_best(g, "ndcg@1") if proto == "best" else
                        cross_validate(g, n_folds=5, n_repeats=3, tune=DEFAULT_CV_TUNE, seed=0))
                    for k, g in grids.items()}
            title = ("5-fold cross-validation (3 repeats), tuned on mean(MAP, NDCG@10)" if proto == "cv"
                     else "paper protocol: best setting by NDCG@1 on the test queries")
            lines += [f"{title}:", "", "| method | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
            lines.append("| BM25 | " + " | ".join(f"{np.mean(base[m]):.4f}" for m in metrics) + " |")
            for key, sel in sels.items():
                lines.append(f"| BM25+{key} | " + " | ".join(
                    f"{np.mean(list(sel.per_query[m].values())):.4f}" for m in metrics) + " |")
            for key in online_variants:
                pv = []
                for m in metrics:
                    x, y = sels[key].per_query[m], sels["bRLSI"].per_query[m]
                    qs = sorted(x)
                    _, pval = paired_ttest([x[q] for q in qs], [y[q] for q in qs], alternative="two-sided")
                    pv.append(f"{pval:.3f}")
                lines.append(f"| p ({key} vs bRLSI) | " + " | ".join(pv) + " |")
            chosen = {k: s.chosen[0]["setting"] for k, s in sels.items()} if proto == "best" else None
            lines.append("")
            if chosen:
                lines.append("Chosen: " + "; ".join(
                    f"{k}: K={c['n_components']}, λ₁={c['lambda1']}, α={s.chosen[0]['alpha']}"
                    for (k, c), s in zip(chosen.items(), sels.values())))
                lines.append("")
        log(f"quality {name} done in {time.perf_counter() - t0:.0f}s")
    return lines


# ---------------------------------------------------------------------------------------- report
def table(rows):
    out = ["| data | method | K | η | docs/s | × NMF | peak RSS MiB | RSS MiB at 25/50/100 % | RLSI state MiB | "
           "density | dead |", "|---|---|---:|---:|---:|---:|---:|---|---|---:|---:|"]
    nmf = {(r["data"], r["k"], r["env"]): r["docs_per_s"] for r in rows if r["method"] == "nmf"}
    for r in rows:
        ref = nmf.get((r["data"], r["k"], r["env"]))
        ratio = f"{r['docs_per_s'] / ref:.1f}" if ref else "—"
        rss = " / ".join(f"{r['rss_mb'].get(q, float('nan')):.0f}" for q in ("25", "50", "100"))
        st = " / ".join(f"{r['state_mb'][q]:.1f}" for q in ("25", "50", "100")) if r["state_mb"] else "—"
        out.append(f"| {r['data']} ({r['docs']}×{r['terms']}) | {METHOD_LABELS[r['method']]} | {r['k']} | "
                   f"{r['batch']} | {r['docs_per_s']:,.0f} | {ratio} | {r['peak_mb']:.0f} | {rss} | {st} | "
                   f"{r['density']:.4f} | {r['dead']} |")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd")
    w = sub.add_parser("worker")
    w.add_argument("--method", required=True)
    w.add_argument("--data", required=True)
    w.add_argument("--k", type=int, required=True)
    w.add_argument("--batch", type=int, required=True)
    w.add_argument("--lambda1", type=float, required=True)
    p.add_argument("--out", default=str(HERE / "results" / "online.md"))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--lambda1", type=float, default=0.01, help="OnlineRLSI lambda1 (per 1000 documents)")
    p.add_argument("--no-quality", action="store_true")
    p.add_argument("--extra-online", action="store_true",
                   help="quality: also online RLSI with three shuffled passes (longer run)")
    args = p.parse_args()
    if args.cmd == "worker":
        return worker(args)
    t_start = time.perf_counter()
    load0 = os.getloadavg()
    facts = harness.machine_facts()
    command = harness.command_line(__file__)
    data = {name: prepare(name, args.quick) for name in ("20ng", "synthetic")}
    plan = []
    for k in (20, 50):
        plan += [("20ng", m, k, "tuned") for m in ("rlsi", "nmf", "lda")]
    plan.insert(1, ("20ng", "rlsi-track", 20, "tuned"))
    plan.insert(2, ("20ng", "rlsi-sparse", 20, "tuned"))
    plan.insert(6, ("20ng", "rlsi-sparse", 50, "tuned"))
    plan += [("synthetic", m, 20, "tuned") for m in ("rlsi", "nmf", "lda")]
    plan += [("20ng", m, 20, "default") for m in ("rlsi", "nmf", "lda")]
    rows = []
    for name, method, k, env in plan:
        r = run_worker(method, data[name], k, args.batch, args.lambda1, env)
        r["data"] = name
        rows.append(r)
        log(f"{name} {method} K={k} {env}: {r['docs_per_s']:,.0f} docs/s, peak {r['peak_mb']:.0f} MiB")
    load_start = os.getloadavg()
    q_lines = ["Skipped (--no-quality)."] if args.no_quality else quality(args.quick, args.extra_online)
    tuned = [r for r in rows if r["env"] == "tuned"]
    default = [r for r in rows if r["env"] == "default"]
    from rlsi.models.online import OnlineRLSI

    _d = OnlineRLSI()  # the defaults the table's header names

    text = [
        "# Online RLSI: throughput, memory, quality", "",
        f"Command: `{command}`", "",
        f"Machine: {facts['cpu']}, {facts['cores']} CPUs, BLAS {facts['blas']}, Python {facts['python']}, numpy "
        f"{facts['numpy']}, scikit-learn {facts['scikit-learn']}, numba {facts['numba']}; code {facts['code']}. "
        f"Total run time {time.perf_counter() - t_start:.0f}s. The machine is shared: 1-minute load average "
        f"{load0[0]:.1f} at the start, {load_start[0]:.1f} after the throughput runs, "
        f"{os.getloadavg()[0]:.1f} at the end (2 = both cores busy) — absolute docs/s vary with it, the "
        f"ratios of runs made minutes apart less so.", "",
        "## Throughput and memory (one pass, `partial_fit` per mini-batch)", "",
        f"Environment for every method: `{' '.join(f'{k}={v}' for k, v in TUNED_ENV.items())}` (see the script's "
        f"docstring). OnlineRLSI: λ₁ = {args.lambda1} per 1000 documents, its defaults otherwise (λ₂ = {_d.lambda2:g}, ρ = {_d.rho:g}, ξ = {_d.n_inner}) unless stated; "
        f"MiniBatchNMF and LDA with scikit-learn defaults. docs/s excludes vectorization and a 3-batch "
        f"warm-up. Memory is the process RSS above the baseline taken after loading the data and the "
        f"warm-up: peak during the pass, and after 25/50/100 % of the stream. RLSI state = U + S + R.", "",
        *table(tuned), "",
        "## Default environment (20 Newsgroups)", "",
        "Same runs without the two environment variables: threaded OpenBLAS and spinning OpenMP workers "
        "slow every method down on this machine.", "",
        *table(default), "",
        "## Retrieval quality: online vs batch RLSI (Tables XVII–XIX)", "",
        *q_lines, "",
    ]
    out = Path(args.out)
    harness.write_report(out, "\n".join(text))
    log(f"wrote {out} in {time.perf_counter() - t_start:.0f}s")


if __name__ == "__main__":
    main()
