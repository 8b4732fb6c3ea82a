"""Benchmark of Group RLSI / Group NMF against RLSI / NMF on 20 Newsgroups.

Sections (each optional):

efficiency  time per outer iteration at equal total K: GRLSI (Ks, Kc) vs BatchRLSI(K) and GNMF vs NMF,
            for (Ks, Kc) = (10, 5), (20, 10), (50, 25), (100, 50) with the 20 newsgroups as classes
            (K = Ks + 20 Kc = 110, 220, 550, 1100). "NMF (mu)" is this package's multiplicative updates
            with one class (GroupNMF(0, K), identical to scikit-learn's mu, see tests/models/test_group.py),
            "sklearn NMF mu" is ``sklearn.decomposition.NMF(solver="mu", init="random", tol=0)``.
            Per-iteration time = (fit with --iters iterations − fit with 1 iteration) / (--iters − 1), which
            removes initialisation and set-up from every method alike.
topics      a GRLSI and a GNMF fit with (Ks, Kc) = (10, 5) for --topic-iters iterations on the training split:
            example shared and class topics and AvgComp per group.
classify    20NG test documents: GRLSI's predict (smallest reconstruction error, §4.3) vs a linear SVM on
            BatchRLSI(110) document vectors of the training split (the same K and λ).
synthetic   a corpus with planted classes (benchmarks/synthetic_classes.py, default 200,000 documents, 100
            classes): time per iteration and peak memory of RLSI(K) vs GRLSI(Ks, Kc) at K = Ks + P·Kc (and
            NMF vs GNMF), each method in its own child process (peak RSS = its own VmHWM).

Timing: CPU time (``time.process_time``) with numba and BLAS pinned to ``BENCH_THREADS`` threads (default
1; set before numba is imported), as the project's benchmarks on the shared 2-core machine do.
``--lambda1`` (default 0.01 per 1000 documents) is the λ₁ of RLSI and of both topic groups of GRLSI in
the efficiency and synthetic sections: at the models' default 0.05 half of GRLSI's 1,100 topics on 20
Newsgroups were empty (549 vs RLSI's 233), so the speed-up partly counted dead topics.

Usage: PYTHONPATH=src python benchmarks/bench_group.py --out benchmarks/results/group.md
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
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
sys.path.insert(0, str(HERE))
THREADS = os.environ.get("BENCH_THREADS", "1")
for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, THREADS)  # before numba / numpy load their thread pools

from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from rlsi.models import BatchRLSI  # noqa: E402
from rlsi.models.group import GroupNMF, GroupRLSI  # noqa: E402
from rlsi.text import TfidfVectorizer  # noqa: E402

DATA = (HERE / ".." / ".." / "shared" / "data" / "twenty_newsgroups").resolve()
POINTS = [(10, 5), (20, 10), (50, 25), (100, 50)]


def load(split_filter=None):
    docs, labels, splits = [], [], []
    with gzip.open(DATA / "corpus.jsonl.gz", "rt") as fh:
        for line in fh:
            d = json.loads(line)
            docs.append((d.get("title") or "") + " " + d["text"])
            labels.append(d["label"])
            splits.append(d.get("split", "train"))
    return docs, np.array(labels), np.array(splits)


class _IterationClock(logging.Handler):
    """Times of the driver's per-iteration debug records (rlsi.models.driver logs one per iteration)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.stamps = []

    def emit(self, record):
        if "iteration" in record.msg:
            self.stamps.append(time.process_time())


def timed(make, X, y, iters):
    """(CPU s per iteration = mean of iterations 2..iters, objective, CPU s of iteration 1 incl. initialisation).

    rlsi models: one fit, iterations timed by the driver's log records. scikit-learn: fits with 1 and
    ``iters`` iterations, per iteration = the difference / (iters − 1) (init and final error removed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = make(iters)
        if hasattr(m, "get_topics"):
            clock = _IterationClock()
            logger = logging.getLogger("rlsi.models.driver")
            logger.addHandler(clock)
            logger.setLevel(logging.DEBUG)
            try:
                t0 = time.process_time()
                m.fit(X, y) if y is not None else m.fit(X)
            finally:
                logger.removeHandler(clock)
            st = clock.stamps
            return float(np.mean(np.diff(st))), float(m.objective_[-1]), st[0] - t0
        t0 = time.process_time()
        make(1).fit(X)
        t1 = time.process_time()
        m.fit(X)
        t2 = time.process_time()
    return ((t2 - t1) - (t1 - t0)) / (iters - 1), float(m.reconstruction_err_ ** 2), t1 - t0


def efficiency(X, y, iters, points, lines, lambda1):
    from sklearn.decomposition import NMF as SkNMF

    lines += ["## 1. Time per iteration at equal total K (20 Newsgroups training split, 20 classes)", "",
              f"{iters} outer iterations per fit (not to convergence: the time per iteration of these methods "
              f"does not depend much on the iteration after the first; objectives are after {iters} iterations). "
              f"λ₁ = {lambda1} per 1000 documents for RLSI and for both topic groups of GRLSI. CPU seconds "
              f"(process_time) at {THREADS} thread(s). "
              f"s/it = mean over iterations 2..{iters} (iteration 1 includes the initialisation and, for RLSI, the "
              f"densest first U-step; it is listed separately below).",
              "", "| Ks | Kc | K | RLSI s/it | GRLSI s/it | RLSI/GRLSI | NMF(mu) s/it | GNMF s/it | NMF/GNMF | "
              "sklearn NMF mu s/it | nnz RLSI / GRLSI | dead RLSI / GRLSI |", "|" + "---|" * 12]
    rows = []
    for ks, kc in points:
        K = ks + 20 * kc
        common = dict(tol=0, random_state=0)
        r = {}
        models = {}

        def mk_rlsi(n):
            models["rlsi"] = BatchRLSI(K, lambda1=lambda1, lambda2=1.0, max_iter=n, **common)  # GRLSI's λ₂
            return models["rlsi"]

        def mk_grlsi(n):
            models["grlsi"] = GroupRLSI(ks, kc, lambda1=lambda1, max_iter=n, **common)
            return models["grlsi"]

        r["rlsi"] = timed(mk_rlsi, X, None, iters)
        r["grlsi"] = timed(mk_grlsi, X, y, iters)
        ones = np.zeros(X.shape[0], dtype=int)
        r["nmf"] = timed(lambda n: GroupNMF(0, K, max_iter=n, **common), X, ones, iters)
        r["gnmf"] = timed(lambda n: GroupNMF(ks, kc, max_iter=n, **common), X, y, iters)
        r["sk"] = timed(lambda n: SkNMF(K, solver="mu", init="random", max_iter=n, tol=0, random_state=0),
                        X, None, iters)
        nnz = f"{models['rlsi'].components_.nnz} / {models['grlsi'].components_.nnz}"
        dead = f"{len(models['rlsi'].dead_topics())} / {len(models['grlsi'].dead_topics())}"
        line = (f"| {ks} | {kc} | {K} | {r['rlsi'][0]:.2f} | {r['grlsi'][0]:.2f} | "
                f"{r['rlsi'][0] / r['grlsi'][0]:.1f}x | {r['nmf'][0]:.2f} | {r['gnmf'][0]:.2f} | "
                f"{r['nmf'][0] / r['gnmf'][0]:.1f}x | {r['sk'][0]:.2f} | {nnz} | {dead} |")
        print(line, flush=True)
        lines.append(line)
        rows.append((K, r))
    lines += ["", "Objectives after the last iteration (RLSI Eq. 1 vs GRLSI Eq. 3; NMF vs GNMF squared loss) and "
              "the first iteration's time (s, incl. initialisation; sklearn: the 1-iteration fit):", "",
              "| K | RLSI | GRLSI | NMF(mu) | GNMF | sklearn mu | it-1 RLSI | it-1 GRLSI | it-1 NMF | it-1 GNMF "
              "| sk 1-it fit |",
              "|" + "---|" * 11]
    for K, r in rows:
        lines.append(f"| {K} | {r['rlsi'][1]:.1f} | {r['grlsi'][1]:.1f} | {r['nmf'][1]:.1f} | {r['gnmf'][1]:.1f} | "
                     f"{r['sk'][1]:.1f} | "
                     + " | ".join(f"{r[k][2]:.2f}" for k in ("rlsi", "grlsi", "nmf", "gnmf", "sk"))
                     + " |")
    lines.append("")


def sparsity(X, y, iters, values, lines):
    """GRLSI at K = 1100 with smaller λ₁ for the class topics: how the speed-up depends on dead topics."""
    lines += ["## 1b. GRLSI (100, 50) with a smaller λ₁ for the class topics", "",
              "| Ks | Kc | K | lambda1_class | GRLSI s/it | it-1 s | objective | nnz | dead |", "|" + "---|" * 9]
    for lc in values:
        ms = {}

        def mk(n):
            ms["m"] = GroupRLSI(100, 50, lambda1_class=lc, max_iter=n, tol=0, random_state=0)
            return ms["m"]

        t, obj, t1 = timed(mk, X, y, iters)
        m = ms["m"]
        lines.append(f"| 100 | 50 | 1100 | {lc} | {t:.2f} | {t1:.2f} | {obj:.1f} | {m.components_.nnz} | "
                     f"{len(m.dead_topics())} |")
        print(lines[-1], flush=True)
    lines.append("")


def topics(X, y, names, iters, lines):
    from rlsi.quality.topics import top_terms

    lines += ["## 2. Example topics and AvgComp per group (Ks, Kc) = (10, 5), "
              f"{iters} iterations", ""]
    fitted = {}
    for label, model in (("GRLSI", GroupRLSI(10, 5, max_iter=iters, random_state=0)),
                         ("GNMF", GroupNMF(10, 5, max_iter=iters, random_state=0))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y)
        fitted[label] = model
        summary = model.group_summary()
        comps = [s["avg_compactness"] for g, s in summary.items() if g != "shared"]
        lines += [f"### {label}", "", f"AvgComp shared: {summary['shared']['avg_compactness']:.4f}; class groups: "
                  f"mean {np.mean(comps):.4f}, min {np.min(comps):.4f}, max {np.max(comps):.4f}", ""]
        lines.append("| group | topic | top terms |")
        lines.append("|---|---|---|")
        shown = ["shared", "class:comp.graphics", "class:rec.sport.hockey", "class:sci.med", "class:talk.politics.guns"]
        for g in shown:
            if g not in model.topic_groups:
                continue
            for k, terms in enumerate(top_terms(model.get_topics(g), names, n=8)[:3]):
                lines.append(f"| {g} | {k} | {' '.join(terms)} |")
        lines.append("")
    return fitted


def classify(X, y, Xt, yt, grlsi, lines):
    from sklearn.svm import LinearSVC

    acc_g = float(np.mean(grlsi.predict(Xt) == yt))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = BatchRLSI(110, lambda2=grlsi.lambda2, max_iter=grlsi.n_iter_, random_state=0)
        W = r.fit_transform(X)
        svm = LinearSVC(C=1.0).fit(W, y)
    acc_svm = float(np.mean(svm.predict(r.transform(Xt)) == yt))
    lines += ["## 3. Classification of the 20NG test split", "",
              "| method | accuracy |", "|---|---|",
              f"| GRLSI(10, 5) predict (smallest reconstruction error) | {acc_g:.4f} |",
              f"| LinearSVC on BatchRLSI(110) document vectors | {acc_svm:.4f} |", ""]
    print(lines[-3], lines[-2], sep="\n", flush=True)


# ------------------------------------------------------------------------------ synthetic planted classes
SYN_LABELS = {"rlsi": "RLSI", "grlsi": "GRLSI", "nmf": "NMF (mu, one class)", "gnmf": "GNMF"}


def synthetic_child(args):
    """One method on the saved synthetic corpus; writes its JSON result (times, memory) to args.out."""
    import scipy.sparse as sp

    from harness import current_rss_gb, peak_rss_gb

    z = np.load(args.syn_corpus)
    X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    y = z["y"]
    with warnings.catch_warnings():  # compile the numba kernels before anything is timed
        warnings.simplefilter("ignore")
        small = slice(0, 400)
        BatchRLSI(5, max_iter=2).fit(X[small])
        GroupRLSI(2, 1, max_iter=2).fit(X[small], y[small] % 2)
        GroupNMF(2, 1, max_iter=2).fit(X[small], y[small] % 2)
    ks, kc = (int(v) for v in args.syn_points.split(","))
    P = len(np.unique(y))
    K = ks + P * kc
    rss0, peak0 = current_rss_gb(), peak_rss_gb()
    common = dict(max_iter=args.syn_iters, tol=0, random_state=0)
    method = args.child
    if method == "rlsi":
        model, fit_y = BatchRLSI(K, lambda1=args.lambda1, lambda2=1.0, **common), None  # GRLSI's λ₂
    elif method == "grlsi":
        model, fit_y = GroupRLSI(ks, kc, lambda1=args.lambda1, **common), y
    elif method == "nmf":
        model, fit_y = GroupNMF(0, K, **common), np.zeros(len(y), dtype=np.int64)
    else:
        model, fit_y = GroupNMF(ks, kc, **common), y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per_it, obj, first = timed(lambda n: model, X, fit_y, args.syn_iters)
    comp = model.components_
    nnz = int(comp.nnz) if hasattr(comp, "nnz") else int(np.count_nonzero(comp))
    out = {"method": method, "K": K, "s_per_it": per_it, "first_s": first, "objective": obj, "nnz": nnz,
           "dead": len(model.dead_topics()) if hasattr(model, "dead_topics") else None,
           "rss_corpus_gb": rss0, "peak_before_gb": peak0, "peak_gb": peak_rss_gb()}
    Path(args.out).write_text(json.dumps(out))


def synthetic(args, lines):
    """Planted-class corpus: generated once, saved, then each method in a child process at 1 thread."""
    import tempfile

    from harness import child_env, run_child, thread_env
    from synthetic_classes import describe, make_class_corpus

    corpus = make_class_corpus(args.syn_docs, args.syn_terms, args.syn_classes, seed=0)
    desc = describe(corpus)
    print(desc, flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench_group_"))
    path = tmp / "corpus.npz"
    X = corpus.X
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape), y=corpus.y)
    del corpus, X
    ks, kc = (int(v) for v in args.syn_points.split(","))
    P = args.syn_classes
    K = ks + P * kc
    lines += [f"## Synthetic corpus with {P} planted classes", "",
              f"Corpus (`benchmarks/synthetic_classes.py`, seed 0): {desc}. Each class has 5 planted topics over its "
              "own 400-term block, 20 planted topics are shared. "
              f"GRLSI (Ks, Kc) = ({ks}, {kc}) against RLSI with the same total K = Ks + P·Kc = {K}; GNMF against "
              f"the same multiplicative updates with one class (NMF). λ₁ = {args.lambda1} per 1000 documents for "
              f"RLSI and both groups of GRLSI. {args.syn_iters} iterations per fit; s/it = mean CPU seconds "
              f"(process_time, numba and BLAS at 1 thread) of iterations 2..{args.syn_iters}; iteration 1 "
              "(with initialisation) separately. Each method runs in its own process: peak RSS is that process's "
              "VmHWM (the corpus alone, loaded, is the 'corpus RSS'). The 2 cores were shared with other agents.",
              "", "| method | K | CPU s/it | it-1 CPU s | objective | nnz topics | dead topics | corpus RSS GiB | "
              "peak RSS GiB |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    res = {}
    for method in [m.strip() for m in args.syn_methods.split(",") if m.strip()]:
        out = tmp / f"{method}.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", method, "--syn-corpus", str(path),
               "--syn-points", args.syn_points, "--syn-iters", str(args.syn_iters), "--lambda1", str(args.lambda1),
               "--out", str(out)]
        t0 = time.perf_counter()
        r = run_child(cmd, env=child_env(thread_env(1)), result=out)
        print(method, f"{time.perf_counter() - t0:.0f} s wall", r, flush=True)
        if "error" in r:
            lines.append(f"| {SYN_LABELS[method]} | {K} | failed: {r['error'][:200]} |||||||")
            continue
        res[method] = r
        lines.append(f"| {SYN_LABELS[method]} | {r['K']} | {r['s_per_it']:.2f} | {r['first_s']:.2f} | "
                     f"{r['objective']:.1f} | {r['nnz']} | {r['dead'] if r['dead'] is not None else '–'} | "
                     f"{r['rss_corpus_gb']:.2f} | {r['peak_gb']:.2f} |")
    lines.append("")
    for a, b in (("rlsi", "grlsi"), ("nmf", "gnmf")):
        if a in res and b in res:
            lines.append(f"* {SYN_LABELS[a]} / {SYN_LABELS[b]} CPU time per iteration: "
                         f"**{res[a]['s_per_it'] / res[b]['s_per_it']:.1f}x** (P = {P}); first iteration "
                         f"{res[a]['first_s'] / res[b]['first_s']:.1f}x; peak RSS above the corpus "
                         f"{res[a]['peak_gb'] - res[a]['rss_corpus_gb']:.2f} vs "
                         f"{res[b]['peak_gb'] - res[b]['rss_corpus_gb']:.2f} GiB.")
    lines.append("")
    path.unlink()
    tmp.rmdir()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--topic-iters", type=int, default=15)
    ap.add_argument("--points", default="all", help="'all' or how many of the (Ks, Kc) points, from the smallest")
    ap.add_argument("--sections", default="efficiency,topics,classify",
                    help="comma-separated: efficiency, sparsity, topics, classify")
    ap.add_argument("--lambda1", type=float, default=0.01,
                    help="λ1 (per 1000 documents) of RLSI and GRLSI in the efficiency and synthetic sections")
    ap.add_argument("--syn-docs", type=int, default=200_000)
    ap.add_argument("--syn-terms", type=int, default=60_000)
    ap.add_argument("--syn-classes", type=int, default=100)
    ap.add_argument("--syn-points", default="10,3", help="Ks,Kc of the synthetic section (K = Ks + P Kc)")
    ap.add_argument("--syn-iters", type=int, default=3)
    ap.add_argument("--syn-methods", default="grlsi,rlsi,gnmf,nmf")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--syn-corpus", help=argparse.SUPPRESS)
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="BLAS threads for every method (default 1: on a shared, oversubscribed machine "
                         "multi-threaded OpenBLAS spins; numba kernels keep all cores)")
    args = ap.parse_args(argv)
    if args.child:
        return synthetic_child(args)
    from threadpoolctl import threadpool_limits

    threadpool_limits(args.blas_threads, user_api="blas")
    sections = set(args.sections.split(","))
    if sections == {"synthetic"}:
        lines = ["# Group RLSI on a synthetic corpus with planted classes", "",
                 "Command: `PYTHONPATH=src python benchmarks/bench_group.py "
                 + " ".join(map(shlex.quote, argv or sys.argv[1:])) + "`", ""]
        synthetic(args, lines)
        text = "\n".join(lines) + "\n"
        if args.out:
            args.out.write_text(text)
        print(text)
        return
    docs, labels, splits = load()
    train, test = splits == "train", splits == "test"
    vec = TfidfVectorizer(min_df=5, max_df=0.5)
    t0 = time.perf_counter()
    X = vec.fit_transform([d for d, s in zip(docs, train) if s])
    Xt = vec.transform([d for d, s in zip(docs, test) if s])
    y, yt = labels[train], labels[test]
    names = list(vec.get_feature_names_out())
    load_s = os.getloadavg()
    lines = ["# Group RLSI / Group NMF benchmark", "",
             "Command: `PYTHONPATH=src python benchmarks/bench_group.py "
             + " ".join(map(shlex.quote, argv or sys.argv[1:]))
             + "`", "",
             f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, **shared with other "
             f"agents** (load average at start {load_s[0]:.1f}); wall-clock times vary between runs. Python "
             f"{platform.python_version()}. BLAS limited to {args.blas_threads} thread(s) for every method "
             f"(threadpoolctl; on this oversubscribed machine 2-thread OpenBLAS made a 24400 x 30 Gram 100x "
             f"slower than 1 thread), numba kernels on {THREADS} thread(s) (BENCH_THREADS); CPU time.", "",
             f"Data: 20 Newsgroups training split, {X.shape[0]} documents x {X.shape[1]} terms (rlsi "
             f"TfidfVectorizer, English stop words, min_df=5, max_df=0.5; {X.nnz} non-zeros; vectorised in "
             f"{time.perf_counter() - t0:.1f} s), classes = the 20 newsgroups; test split {Xt.shape[0]} documents. "
             f"Defaults of every model (λ₂ = 1, init='docs'), λ₁ = {args.lambda1} per 1000 documents in the "
             f"efficiency section and the models' default 0.05 elsewhere.", ""]
    points = POINTS if args.points == "all" else POINTS[:int(args.points)]
    with warnings.catch_warnings():  # load the numba kernels before anything is timed
        warnings.simplefilter("ignore")
        small = slice(0, 400)
        BatchRLSI(5, max_iter=2).fit(X[small])
        GroupRLSI(2, 1, max_iter=2).fit(X[small], y[small])
        GroupNMF(2, 1, max_iter=2).fit(X[small], y[small])
    if "efficiency" in sections:
        efficiency(X, y, args.iters, points, lines, args.lambda1)
    if "sparsity" in sections:
        sparsity(X, y, args.iters, [0.01, 0.005], lines)
    if "synthetic" in sections:
        synthetic(args, lines)
    fitted = None
    if "topics" in sections or "classify" in sections:
        fitted = topics(X, y, names, args.topic_iters, lines)
    if "classify" in sections:
        classify(X, y, Xt, yt, fitted["GRLSI"], lines)
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
