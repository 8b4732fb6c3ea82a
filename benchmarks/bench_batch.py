"""Benchmark of BatchRLSI against the paper's algorithm as printed and scikit-learn NMF.

One run generates one synthetic Zipfian tf-idf corpus (``benchmarks/synthetic.py``), stores it in a work
directory, and measures every method in its own subprocess (``--only METHOD``) on that same matrix, so
that the peak resident memory reported for a method (``VmHWM`` of its process) is its own. The
parent collects the JSON each child writes and renders a markdown report (``--out``). The shared
machinery (memory, machine facts, children, timers, tables) is in ``benchmarks/harness.py``; the
methods' children in ``batch_methods.py``, BatchRLSI's timers in ``batch_profile.py``, the report in
``batch_report.py``.

Methods
-------
rlsi    ``BatchRLSI.fit`` as a user calls it (``init="docs"``, λ₂ = 1, ℓ1 topics / ℓ2 documents). The
        functions the fit reaches through module attributes are wrapped with nested timers inside this
        process only (``src/`` is not edited): the driver's problem methods (U-step, V-step, objective),
        ``rlsi.models.steps``, the per-block tasks of ``rlsi.models.tasks``, the R providers of
        ``rlsi.models.screening``, the penalties, and the numba kernels of ``rlsi.kernels`` down to the
        jitted functions themselves, plus BLAS/LAPACK calls (the gram and the ridge GEMM in row chunks, Cholesky),
        ``sp.vstack``, ``eliminate_zeros`` and CSR row slicing. Every phase is shown with the untimed rest of
        its parent, so the table accounts for the whole iteration. From the same timers: the **serial share**
        of an iteration, its wall time outside numba parallel kernels and BLAS/LAPACK calls.
        Numba kernels are loaded/compiled by a tiny warm-up fit first (reported separately).
paper   ``rlsi.oracle.paper.update_u`` / ``update_v`` (plain numpy, dense D = terms x docs, Algorithm 2
        with a zero start per row, Algorithm 3). The dense problem does not fit in memory at the benchmark's
        size, so the U-step is timed on a random sample of term rows (M independent problems) and the
        V-step on a random sample of documents, and both are extrapolated linearly (the parts that do
        not scale, S = V Vᵀ and (UᵀU + λ₂I)⁻¹, are timed separately and added once). The inner
        stopping rule is BatchRLSI's (``inner_tol``), so both solve the same problems to the same
        accuracy; the sampled rows are checked against BatchRLSI's own first U-step.
nmf-mu, nmf-cd  ``sklearn.decomposition.NMF(solver=..., init="random", tol=0)``. Two fits, with
        ``max_iter=1`` and ``max_iter=--nmf-iters``; per iteration = the difference / (n - 1), which
        removes initialisation and the error evaluations sklearn does at the start and the end;
        ``fit time / max_iter`` is reported too, and the fastest of n iterations of sklearn's own update
        functions (a contention-robust estimate).
lda     gensim ``LdaMulticore`` (1 worker) on the raw counts, one pass (optionally on a sample of
        documents, scaled linearly); optional (needs gensim).

``--sweep-lambda1 a,b,c`` fits BatchRLSI once per λ₁ (and NMF(mu) once) on the same matrix and tabulates
time per iteration, AvgComp = nnz(U)/(M·K), dead topics, the ratio to NMF(mu) and the serial share;
``--threads N`` pins numba and BLAS to N threads in every child (the serial share is measured at 1).

On a shared machine, wall-clock times vary between runs; every method's process wall/CPU time and the load
average are reported, and the minimum-over-repeats estimates (BatchRLSI: a late iteration replayed
``--replays`` times from a snapshot of the fit's state; NMF: fastest iteration) are given beside the means.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
from harness import accounting, peak_rss_gb, write_json  # noqa: E402

harness.use_src()
from synthetic import describe, make_corpus  # noqa: E402

from batch_methods import run_lda, run_nmf, run_paper, run_rlsi  # noqa: E402
from batch_report import plot_sweep, render, render_sweep  # noqa: E402

METHODS = ("rlsi", "paper", "nmf-mu", "nmf-cd", "lda")


# ------------------------------------------------------------------------------------------------- main
def parse(argv=None):
    p = argparse.ArgumentParser(description="BatchRLSI vs paper algorithm vs scikit-learn NMF")
    p.add_argument("--docs", type=int, default=50_000)
    p.add_argument("--terms", type=int, default=200_000)
    p.add_argument("--tokens", type=float, default=150)
    p.add_argument("--k", type=int, default=200)
    p.add_argument("--planted", type=int, default=None, help="planted topics (default: K)")
    p.add_argument("--iters", type=int, default=20, help="BatchRLSI max_iter")
    p.add_argument("--tol", type=float, default=1e-4, help="BatchRLSI tol (0: run all --iters)")
    p.add_argument("--lambda1", type=float, default=0.5, help="BatchRLSI lambda1 (per 1000 documents)")
    p.add_argument("--sweep-lambda1", default=None,
                   help="comma-separated λ1 values: fit BatchRLSI for each (and NMF mu once) and tabulate time per "
                        "iteration, AvgComp, dead topics, ratio to NMF(mu) and serial share")
    p.add_argument("--sweep-avgcomp", default=None,
                   help="comma-separated AvgComp targets: fit BatchRLSI(target_terms_per_topic=round(AvgComp·M)) "
                        "for each (λ₁ searched by the library, search time reported apart) and NMF(mu) once")
    p.add_argument("--sweep-dtypes", default=None,
                   help="with --sweep-avgcomp/--sweep-lambda1: comma-separated dtypes (e.g. float64,float32), every "
                        "fit and NMF once per dtype on the same matrix (stored once, cast by each child)")
    p.add_argument("--topic-sweeps", default="default",
                   help="BatchRLSI topic_sweeps: 'default' (the library's), 'none' (exact U-steps) or an int")
    p.add_argument("--png", default=None, help="sweep: plot of time per iteration against AvgComp (both methods, "
                                               "every dtype) to this PNG")
    p.add_argument("--lambda2", type=float, default=1.0)
    p.add_argument("--inner-max-iter", type=int, default=100)
    p.add_argument("--inner-tol", type=float, default=1e-4)
    p.add_argument("--nmf-iters", type=int, default=5)
    p.add_argument("--replays", type=int, default=3,
                   help="BatchRLSI: repeats of the last iteration from a snapshot after the fit, fastest kept "
                        "(contention-robust profile); 0 to skip")
    p.add_argument("--paper-terms", type=int, default=2000, help="term rows sampled for the paper U-step")
    p.add_argument("--paper-terms-random", type=int, default=500,
                   help="term rows sampled for the paper U-step from a random V0")
    p.add_argument("--paper-docs", type=int, default=1000, help="documents sampled for the paper V-step")
    p.add_argument("--lda-workers", type=int, default=1)
    p.add_argument("--lda-docs", type=int, default=None,
                   help="time the LDA pass on this many random documents and extrapolate linearly (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                   help="dtype of the tf-idf matrix given to BatchRLSI and NMF (the paper's algorithm is float64)")
    p.add_argument("--json", action="store_true", help="also write the raw numbers as JSON beside --out")
    p.add_argument("--threads", type=int, default=None,
                   help="numba and BLAS threads for every method (1: the serial share)")
    p.add_argument("--blas-threads", type=int, default=None,
                   help="OPENBLAS/MKL/OMP_NUM_THREADS for every method (default: --threads or the library's)")
    p.add_argument("--numba-threads", type=int, default=None,
                   help="NUMBA_NUM_THREADS for BatchRLSI (default: --threads or numba's)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="what every timer of the children reads: wall clock, or the process's CPU time "
                        "(time.process_time; with --threads 1 the work's own time, whatever else runs on the "
                        "machine's cores)")
    p.add_argument("--wait-idle", type=float, default=0,
                   help="before each method, wait up to this many seconds for >= 75%% idle CPU (shared machines)")
    p.add_argument("--skip-paper", action="store_true")
    p.add_argument("--skip-nmf-cd", action="store_true")
    p.add_argument("--skip-lda", action="store_true")
    p.add_argument("--methods", default=None, help="comma-separated subset of " + ",".join(METHODS))
    p.add_argument("--out", default=None, help="markdown report to write (see --json)")
    p.add_argument("--workdir", default=None, help="where the matrix and states are kept (default: a temp dir)")
    p.add_argument("--only", choices=METHODS, help=argparse.SUPPRESS)
    p.add_argument("--tag", default="", help=argparse.SUPPRESS)  # result-file suffix of a sweep child
    p.add_argument("--terms-per-topic", type=int, default=None, help=argparse.SUPPRESS)  # a sweep child's target
    p.add_argument("--child-dtype", default=None, help=argparse.SUPPRESS)  # a sweep child's dtype
    a = p.parse_args(argv)
    if a.planted is None:
        a.planted = a.k
    return a


def child(a):
    if a.clock == "cpu":  # every timer here and in harness reads time.perf_counter at call time
        time.perf_counter = time.process_time
    wd = Path(a.workdir)
    res = {}
    with accounting(res):
        try:
            if a.only == "rlsi":
                res.update(run_rlsi(a, wd))
            elif a.only == "paper":
                res.update(run_paper(a, wd))
            elif a.only.startswith("nmf"):
                res.update(run_nmf(a, wd, a.only.split("-")[1]))
            else:
                res.update(run_lda(a, wd))
        except MemoryError as exc:
            res.update(error=f"MemoryError: {exc}", rss_peak_gb=peak_rss_gb())
    write_json(wd / f"{a.only}{a.tag}.json", res)


def plan(a):
    """``[(result key, method, extra child args)]`` of this run."""
    if a.sweep_avgcomp or a.sweep_lambda1:
        dtypes = a.sweep_dtypes.split(",") if a.sweep_dtypes else [None]
        out = []
        for dt in dtypes:
            cast = ["--child-dtype", dt] if dt else []
            name = f" {dt}" if dt else ""
            if a.sweep_avgcomp:
                for i, x in enumerate(float(v) for v in a.sweep_avgcomp.split(",") if v.strip()):
                    out.append((f"rlsi{name} AvgComp={x:g}", "rlsi",
                                ["--terms-per-topic", str(max(1, round(x * a.terms))), "--tag", f"_{dt}_{i}", *cast]))
            else:
                for i, lam in enumerate(float(v) for v in a.sweep_lambda1.split(",") if v.strip()):
                    out.append((f"rlsi{name} λ1={lam:g}", "rlsi", ["--lambda1", repr(lam), "--tag", f"_{dt}_{i}", *cast]))
            out.append((f"nmf-mu{name}", "nmf-mu", ["--tag", f"_{dt}", *cast]))
        return out
    methods = list(METHODS) if a.methods is None else a.methods.split(",")
    for flag, m in ((a.skip_paper, "paper"), (a.skip_nmf_cd, "nmf-cd"), (a.skip_lda, "lda")):
        if flag and m in methods:
            methods.remove(m)
    if "paper" in methods and "rlsi" not in methods:
        sys.exit("the paper method reuses BatchRLSI's states: include rlsi")
    return [(m, m, []) for m in methods]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parse(argv)
    if a.only:
        return child(a)
    command = harness.command_line(__file__, argv)
    tmp = None
    if a.workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="rlsi-bench-")
        a.workdir = tmp.name
    wd = Path(a.workdir)
    wd.mkdir(parents=True, exist_ok=True)
    env = harness.child_env(harness.thread_env(a.threads, blas=a.blas_threads, numba=a.numba_threads))
    facts = harness.machine_facts()
    print(f"machine: {facts}", flush=True)
    c = make_corpus(a.docs, a.terms, a.tokens, n_topics=a.planted, seed=a.seed, dtype=np.dtype(a.dtype))
    desc = describe(c)
    print(f"corpus: {desc}", flush=True)
    # a sweep over dtypes stores the matrix once in float64; each child casts it
    sp.save_npz(wd / "X.npz", c.X.astype(np.float64) if a.sweep_dtypes else c.X, compressed=False)
    sp.save_npz(wd / "counts.npz", c.counts, compressed=False)
    np.save(wd / "topic_terms.npy", c.topic_terms)
    del c
    res = {}
    for key, m, extra in plan(a):
        t = time.perf_counter()
        if a.wait_idle > 0:
            print(f"--- idle CPU share before {key}: {harness.wait_idle(a.wait_idle):.0%}", flush=True)
        print(f"--- {key} ...", flush=True)
        cmd = [sys.executable, str(Path(__file__).resolve()), *argv, *extra, "--only", m, "--workdir", str(wd),
               "--planted", str(a.planted)]
        tag = extra[extra.index("--tag") + 1] if "--tag" in extra else ""
        res[key] = harness.run_child(cmd, env=env, result=wd / f"{m}{tag}.json")
        if key == "rlsi" and "error" not in res[key]:
            write_json(wd / "rlsi.json", res[key])
        print(f"--- {key} done in {time.perf_counter() - t:.1f} s: "
              + json.dumps({k: v for k, v in res[key].items() if not isinstance(v, (list, dict))}), flush=True)
    sweep = a.sweep_lambda1 or a.sweep_avgcomp
    report = (render_sweep if sweep else render)(a, facts, desc, res, command)
    if sweep and a.png:
        threads = a.threads or "all"
        plot_sweep(res, a, a.png, f"{'CPU' if a.clock == 'cpu' else 'wall-clock'} seconds per iteration "
                                  f"({threads} thread{'s' if str(threads) != '1' else ''})")
    print(report)
    if a.out:
        harness.write_report(a.out, report)
        if a.json:
            write_json(Path(a.out).with_suffix(".json"), {"command": command, "machine": facts, "corpus": desc,
                                                          "results": res})
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
