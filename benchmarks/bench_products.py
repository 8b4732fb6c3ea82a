"""Kernel timings of one BatchRLSI iteration's products at 1 thread (CPU time): ``R = D W`` (the U-step's
rows, :func:`rlsi.kernels.products.csr_dense_take`), ``Φ = X U`` (the V-step's sparse product,
:func:`~rlsi.kernels.products.csr_csr_dense`) and ``G = UᵀU`` (:func:`rlsi.models.steps.topic_gram`).

The inputs are those of a fit: the ``benchmarks/synthetic.py`` corpus, and U, W after ``--fit-iters``
iterations of ``BatchRLSI(K, lambda1=λ₁)`` per λ₁, cached in ``--cache`` (made once, by whichever rlsi is
imported). Timing the same cache with two versions of the library (``PYTHONPATH=<old>/src`` and
``PYTHONPATH=src``, runs alternated) compares the kernels on identical inputs::

    PYTHONPATH=src python benchmarks/bench_products.py --cache /tmp/prod_cache --lambda1 0.000679,0.000238 \\
        --label after --json products.json
    python benchmarks/bench_products.py --report --json products.json

``--gram N`` instead times ``S = WᵀW`` (K x K, float64) of a random float32 W (N x K): the whole float64 copy
and one dsyrk (the library before the blocked gram), :func:`rlsi.models.tasks.gram`
(:func:`rlsi.kernels.blas_rows.gram_rows`: up to 32 parts, each summed over float64 sub-blocks by syrk) at
several sub-block sizes, 4M-entry blocks with a GEMM, and a numba kernel (float64 partial grams of row
ranges, no BLAS); CPU time at 1 thread and the extra memory each allocates (tracemalloc: numpy's
allocations)::

    PYTHONPATH=src python benchmarks/bench_products.py --gram 200000 --k 500 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for _v in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ[_v] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=50_000)
    p.add_argument("--terms", type=int, default=200_000)
    p.add_argument("--tokens", type=float, default=150)
    p.add_argument("--k", type=int, default=200)
    p.add_argument("--lambda1", default="0.000679", help="comma-separated λ₁ per 1000 documents")
    p.add_argument("--fit-iters", type=int, default=4)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--cache", type=Path, required=False)
    p.add_argument("--label", default="")
    p.add_argument("--json", type=Path)
    p.add_argument("--report", action="store_true")
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                   help="X, U and W cast to this dtype before timing (the cache holds float64)")
    p.add_argument("--gram", type=int, default=None, help="time S = WᵀW of a random float32 N x K W (N given)")
    return p.parse_args(argv)


def _inputs(a, lam):
    import numpy as np
    import scipy.sparse as sp

    a.cache.mkdir(parents=True, exist_ok=True)
    xp = a.cache / "X.npz"
    if not xp.exists():
        from synthetic import make_corpus

        sp.save_npz(xp, make_corpus(a.docs, a.terms, a.tokens, n_topics=200, seed=0).X.tocsr(), compressed=False)
    X = sp.load_npz(xp).tocsr()
    up, wp = a.cache / f"U_{lam:g}.npz", a.cache / f"W_{lam:g}.npy"
    if not up.exists():
        from rlsi.models import BatchRLSI

        m = BatchRLSI(a.k, lambda1=lam, lambda2=1.0, max_iter=a.fit_iters, tol=0.0, random_state=0)
        np.save(wp, m.fit_transform(X))
        sp.save_npz(up, m.components_.T.tocsr(), compressed=False)
    return X, sp.load_npz(up).tocsr(), np.load(wp)


def run(a):
    import numpy as np

    from rlsi.kernels import products as P
    from rlsi.models import steps

    recs = []
    for lam in [float(x) for x in a.lambda1.split(",")]:
        X, U, W = _inputs(a, lam)
        X, U, W = X.astype(a.dtype), U.astype(a.dtype), W.astype(a.dtype)
        D = X.T.tocsr()
        rows = np.arange(D.shape[0], dtype=np.int64)
        # light rows: fewer entries than W has chunks (the kernel's unchunked path), heavy: the others
        n_chunks = -(-W.shape[0] // P._chunk_rows(W, True))
        light = np.flatnonzero(np.diff(D.indptr) < n_chunks).astype(np.int64)
        heavy = np.flatnonzero(np.diff(D.indptr) >= n_chunks).astype(np.int64)
        plan = P.sparse_plan(U, X.dtype, True)
        # the batch U-step computes R block by block (tasks.block_rows(K) term rows per call)
        from rlsi.models.tasks import block_rows, blocks

        spans = [np.arange(a, b, dtype=np.int64) for a, b in blocks(D.shape[0], block_rows(W.shape[1]))]
        cases = {"R = D W (all term rows)": lambda: P.csr_dense_take(D, rows, W),
                 f"R = D W (the U-step's {len(spans)} blocks)": lambda: [P.csr_dense_take(D, r, W) for r in spans],
                 "R = D W (light rows)": lambda: P.csr_dense_take(D, light, W),
                 "R = D W (heavy rows)": lambda: P.csr_dense_take(D, heavy, W),
                 "Φ = X U": lambda: P.csr_csr_dense(X, U, plan=plan),
                 "G = UᵀU": lambda: steps.topic_gram(U)}
        rec = {"label": a.label, "dtype": a.dtype, "lambda1": lam, "avgcomp": U.nnz / (U.shape[0] * U.shape[1]), "times": {}}
        for name, f in cases.items():
            f()  # compile / load
            ts = []
            for _ in range(a.repeats):
                t = time.process_time()
                f()
                ts.append(time.process_time() - t)
            rec["times"][name] = ts
            print(f"{a.label} {a.dtype} λ1={lam:g} {name}: min {min(ts):.3f} median {np.median(ts):.3f} s", flush=True)
        recs.append(rec)
    return recs


def report(recs):
    import numpy as np

    lines = ["| label | dtype | λ₁ | AvgComp | product | runs | min CPU s | median CPU s |",
             "|---|---|---:|---:|---|---:|---:|---:|"]
    for r in recs:
        for name, ts in r["times"].items():
            lines.append(f"| {r['label']} | {r.get('dtype', 'float64')} | {r['lambda1']:g} | {r['avgcomp']:.4f} | {name} | {len(ts)} | "
                         f"{min(ts):.3f} | {np.median(ts):.3f} |")
    return "\n".join(lines)


def _numba_gram():
    from numba import njit, prange
    import numpy as np

    @njit(parallel=True)
    def parts_of(W, bounds, parts):
        K = W.shape[1]
        for c in prange(bounds.shape[0] - 1):
            G = parts[c]
            G[:, :] = 0.0
            for i in range(bounds[c], bounds[c + 1]):
                for k in range(K):
                    a = np.float64(W[i, k])
                    for l in range(k, K):
                        G[k, l] += a * np.float64(W[i, l])

    def gram(W, n_parts=8):
        N, K = W.shape
        bounds = np.linspace(0, N, n_parts + 1).astype(np.int64)
        parts = np.empty((n_parts, K, K))
        parts_of(W, bounds, parts)
        G = parts.sum(axis=0)
        return np.triu(G) + np.triu(G, 1).T

    return gram


def run_gram(a):
    import tracemalloc

    import numpy as np
    from scipy.linalg.blas import dgemm, dsyrk

    from rlsi.models import tasks

    N, K = a.gram, a.k
    W = np.random.default_rng(0).standard_normal((N, K)).astype(np.float32)

    def whole():  # the library before: one float64 copy of W, one dsyrk
        W64 = np.ascontiguousarray(W, dtype=np.float64)
        up = dsyrk(1.0, W64.T, trans=0, lower=0)
        return np.triu(up) + np.triu(up, 1).T

    def gemm_blocks(rows):
        def f():
            buf, G = np.empty((min(rows, N), K)), np.zeros((K, K), order="F")
            for s in range(0, N, rows):
                blk = tasks.cast_into(W[s:s + rows], buf[:min(N, s + rows) - s])
                G = dgemm(1.0, blk.T, blk.T, beta=1.0, c=G, trans_b=1, overwrite_c=1)
            return G
        return f

    numba_gram = _numba_gram()
    cases = {"whole float64 copy + dsyrk (before)": whole}
    from rlsi.kernels import blas_rows

    def library(sub_rows):  # tasks.gram = blas_rows.gram_rows, its float64 sub-blocks of sub_rows rows
        def f():
            old, blas_rows.GRAM_SUB_ROWS = blas_rows.GRAM_SUB_ROWS, sub_rows
            try:
                return tasks.gram(W)
            finally:
                blas_rows.GRAM_SUB_ROWS = old
        return f

    for rows in (512, blas_rows.GRAM_SUB_ROWS, 8192):
        cases[f"tasks.gram (blas_rows), sub-blocks of {rows} rows (syrk)"] = library(rows)
    cases["blocks of 8388 rows (dgemm)"] = gemm_blocks(8388)  # 4M entries at K = 500: the blocks of before
    cases["numba kernel (8 row ranges, float64 sums)"] = lambda: numba_gram(W)
    ref = W.astype(np.float64).T @ W.astype(np.float64)
    lines = [f"S = WᵀW of a random float32 W, N = {N}, K = {K} (W: {W.nbytes / 2**20:.0f} MiB); CPU time at 1 "
             f"thread (numba and BLAS), best and median of {a.repeats}; extra memory: tracemalloc peak of one call.",
             "", "| method | min CPU s | median CPU s | extra memory (MiB) | max rel. error vs W64ᵀW64 |",
             "|---|---:|---:|---:|---:|"]
    for name, f in cases.items():
        S = f()  # compile / load
        err = float(np.abs(S - ref).max() / np.abs(ref).max())
        ts = []
        for _ in range(a.repeats):
            t = time.process_time()
            f()
            ts.append(time.process_time() - t)
        tracemalloc.start()
        f()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        lines.append(f"| {name} | {min(ts):.3f} | {np.median(ts):.3f} | {peak / 2**20:.1f} | {err:.1e} |")
        print(lines[-1], flush=True)
    print("\n".join(lines))


def main():
    a = _parse()
    if a.gram:
        run_gram(a)
        return
    if a.report:
        print(report(json.loads(a.json.read_text())))
        return
    recs = run(a)
    if a.json:
        old = json.loads(a.json.read_text()) if a.json.exists() else []
        a.json.write_text(json.dumps(old + recs, indent=1))


if __name__ == "__main__":
    main()
