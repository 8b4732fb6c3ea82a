"""Time to reach an objective with exact and inexact U-steps (``BatchRLSI(topic_sweeps=...)``), 1 thread,
CPU time, on the corpus of ``benchmarks/results/density_sweep.md`` (20,000 x 60,000, K = 100); the table
of ``benchmarks/results/density_sweep_sweeps.md``.

Usage::

    python benchmarks/bench_topic_sweeps.py LAMBDA1 CAPS ITERS > runs.jsonl   # CAPS: e.g. none,1,2,3
    python benchmarks/bench_topic_sweeps.py --table runs.jsonl [...]          # markdown table

Each fit runs ``ITERS`` outer iterations (tol = 0) and records, after every iteration, the process CPU
seconds since the fit started, the objective, the U-step's coordinate-descent sweeps and nnz(U). The
corpus is cached as in ``ab_batch.py`` (``$AB_CACHE``, default ``/tmp/rlsi_ab_X.npz``).
"""
import json
import os
import sys
import time
import warnings
from pathlib import Path

os.environ["NUMBA_NUM_THREADS"] = "1"
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(1, str(HERE))


def run(lam, caps, iters):
    from rlsi.models import skeleton
    from rlsi.models.batch import BatchRLSI

    warnings.simplefilter("ignore")
    from synthetic import ab_matrix

    X = ab_matrix()
    for kw in (dict(lambda1=0.01), dict(lambda1=1e-5)):  # compile / load every kernel outside the timing
        BatchRLSI(10, max_iter=3, random_state=0, **kw).fit(X[:400])
    original = skeleton.alternate
    for cap in caps:
        trace = []

        def alternate(problem, **kw):
            t0 = time.process_time()

            def callback(it, obj, diag):
                trace.append((time.process_time() - t0, obj, diag["sweeps"], diag["nnz"]))

            return original(problem, callback=callback, **kw)

        skeleton.alternate = alternate
        model = BatchRLSI(100, lambda1=lam, max_iter=iters, tol=0, topic_sweeps=cap, random_state=0)
        t = time.process_time()
        model.fit(X)
        print(json.dumps(dict(cap=cap, lam=lam, total=time.process_time() - t, trace=trace)), flush=True)
    skeleton.alternate = original


def table(paths):
    rows = ["| λ₁ (per 1000 docs) | U-step | final AvgComp | iteration 1 (s) | mean of iterations 2..n (s) | "
            "objective after 10 / after n | time to the exact run's objective after 5 / 10 / n iterations (s) |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for path in paths:
        runs = [json.loads(line) for line in open(path) if line.startswith("{")]
        ref = next(r for r in runs if r["cap"] is None)
        n = len(ref["trace"])
        goals = [ref["trace"][i][1] for i in (4, 9, n - 1)]
        for r in runs:
            tr = r["trace"]
            per = (tr[-1][0] - tr[0][0]) / (len(tr) - 1)
            hits = []
            for g in goals:
                hit = [t for t, o, _, _ in tr if o <= g]
                hits.append(f"{hit[0]:.1f}" if hit else f"not in {len(tr)}")
            name = "exact (None)" if r["cap"] is None else f"{r['cap']} sweep{'s' if r['cap'] > 1 else ''}"
            rows.append(f"| {r['lam']:g} | {name} | {tr[-1][3] / (60000 * 100):.3g} | {tr[0][0]:.2f} | {per:.3f} | "
                        f"{tr[9][1]:.2f} / {tr[-1][1]:.2f} | {' / '.join(hits)} |")
    print("\n".join(rows))


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
        sys.exit(print(__doc__))
    if sys.argv[1] == "--table":
        table(sys.argv[2:])
    else:
        caps = [None if c == "none" else int(c) for c in sys.argv[2].split(",")]
        run(float(sys.argv[1]), caps, int(sys.argv[3]))
