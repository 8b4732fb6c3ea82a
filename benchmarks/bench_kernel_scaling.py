"""Wall time of one BatchRLSI iteration's parallel kernels per thread count, with variants.

Which kernel stops scaling on a many-core machine, and whether a variant scales better: each thread count
runs in a child process with numba and BLAS pinned to it; the inputs are ``bench_products.py``'s cache (the
``benchmarks/synthetic.py`` corpus, U and W after a few iterations at one λ₁), made once. Wall clock, best
and median of ``--repeats``; every variant's result is compared with the library's own call (max |diff|)::

    PYTHONPATH=src python benchmarks/bench_kernel_scaling.py --cache /tmp/prod_cache --threads 16,8,4,2,1 \\
        --out kernel_scaling.md

Kernels, as a fit calls them:
- ``R = D W``: :func:`rlsi.kernels.products.csr_dense_take` over the U-step's blocks of term rows, with
  ``TILES_PER_WORKER`` = 4 (the library's), 2 and 8.
- ``Φ = X U``: :func:`~rlsi.kernels.products.csr_csr_dense` over the V-step's blocks of documents, with
  the library's tiles (two per thread at most) and smaller ones.
- ``S = WᵀW`` of the V-step: per document block (the library's row chunks on single-threaded BLAS,
  :mod:`rlsi.kernels.blas_rows`), on the whole W at once, and as before that module: one threaded dsyrk per
  block, with all threads and capped at 8 (threadpoolctl). (The 16-core results in
  ``results/threads_device`` time the threaded dsyrk under the names of the library's gram.)
- the whole V-step (:func:`rlsi.models.steps.update_doc_vectors` with the gram) for the total.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import os
pinned = {v: os.environ.get(v) for v in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")}
import bench_products as BP  # it pins every thread count to 1 on import: undone before numba and scipy load
os.environ.update({v: x for v, x in pinned.items() if x is not None})
from rlsi.kernels import products as P
from rlsi.models import steps, tasks
from threadpoolctl import ThreadpoolController
CTL = ThreadpoolController()  # made once: a fresh one inspects every loaded library (~1 s)
a = BP._parse(["--cache", sys.argv[2], "--k", sys.argv[3]])
lam, repeats, T = float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
X, U, W = BP._inputs(a, lam)
D = X.T.tocsr()
K = W.shape[1]
u_spans = [np.arange(p, q, dtype=np.int64) for p, q in tasks.blocks(D.shape[0], tasks.block_rows(K))]
d_spans = tasks.blocks(X.shape[0], tasks.block_rows(K))
plan = P.sparse_plan(U, X.dtype, True)
Wblocks = [np.ascontiguousarray(W[p:q]) for p, q in d_spans]
# output blocks allocated once, as the fit's BlockScratch does (fresh ones add page faults to every call)
r_out = [np.empty((len(r), K)) for r in u_spans]
phi_out = [np.empty((q - p, K)) for p, q in d_spans]

def r_blocks(tpw):
    def f():
        old, P.TILES_PER_WORKER = P.TILES_PER_WORKER, tpw
        try:
            return [P.csr_dense_take(D, r, W, out=o)[0] for r, o in zip(u_spans, r_out)]
        finally:
            P.TILES_PER_WORKER = old
    return f

def phi(per_thread):
    def tile(n_rows, row_bytes, tile_bytes):  # P._tile's signature: tile_bytes from the plan's ProductBlocks
        if per_thread < 0:
            return -per_thread
        return int(max(8, min(tile_bytes // max(1, row_bytes), -(-n_rows // (per_thread * T)))))
    def f():
        old = P._tile
        P._tile = old if per_thread is None else tile
        try:
            return [P.csr_csr_dense(X, U, a=p, b=q, plan=plan, out=o) for (p, q), o in zip(d_spans, phi_out)]
        finally:
            P._tile = old
    return f

def gram_blocks():
    return sum(tasks.gram(b) for b in Wblocks)

def dsyrk_blocks(cap=None):
    # the gram as the library took it before kernels.blas_rows: one threaded dsyrk per block
    from scipy.linalg.blas import dsyrk

    def one(b):
        up = dsyrk(1.0, b.T, trans=0, lower=0)
        return np.triu(up) + np.triu(up, 1).T

    def f():
        with CTL.limit(limits=min(cap or T, T), user_api="blas"):  # a limit sets, it does not cap
            return sum(one(b) for b in Wblocks)
    return f

cases = {
    "R = D W, U-step blocks, tiles/worker 4 (library)": r_blocks(4),
    "R = D W, tiles/worker 2": r_blocks(2),
    "R = D W, tiles/worker 8": r_blocks(8),
    "R = D W, tiles/worker 1": r_blocks(1),
    "R = D W, tiles/worker 3": r_blocks(3),
    "R = D W, tiles/worker 4 (again)": r_blocks(4),
    "Φ = X U, V-step blocks (library tiles)": phi(None),
    "Φ = X U, tiles ≤ 1/8 of a thread's rows": phi(8),
    "Φ = X U, tiles of 256 rows": phi(-256),
    "S = WᵀW, per block (library: kernels.blas_rows)": gram_blocks,
    "S = WᵀW, one call on the whole W (blas_rows)": lambda: tasks.gram(W),
    "S = WᵀW, threaded dsyrk per block (before)": dsyrk_blocks(),
    "S = WᵀW, threaded dsyrk per block, BLAS ≤ 8 threads": dsyrk_blocks(8),
    "V-step (update_doc_vectors, l2, with gram)": lambda: steps.update_doc_vectors(
        X, U, penalty="l2", lam=0.5, return_gram=True),
}
ref, out, ts = {}, {}, {name: [] for name in cases}
for name, f in cases.items():  # compile / load, and the reference of each kernel
    r = f()
    first = np.concatenate(r) if isinstance(r, list) else (r[2] if isinstance(r, tuple) else r).copy()
    key = name.split(",")[0]
    out[name] = {"max_abs_diff": float(np.abs(first - ref[key]).max()) if key in ref else 0.0}
    ref.setdefault(key, first)
names = list(cases)
for i in range(repeats):  # interleaved, in a rotating order: no case profits from its place
    for name in names[i % len(names):] + names[:i % len(names)]:
        f = cases[name]
        t = time.perf_counter()
        f()
        ts[name].append(time.perf_counter() - t)
for name in cases:
    out[name].update(min=min(ts[name]), median=float(np.median(ts[name])))
print(json.dumps(out))
"""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cache", type=Path, required=True, help="bench_products.py's cache folder")
    p.add_argument("--k", type=int, default=200)
    p.add_argument("--lambda1", type=float, default=0.000679)
    p.add_argument("--threads", default="16,8,4,2,1")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", type=Path, default=None, help="markdown report (and .json beside it)")
    a = p.parse_args(argv)
    here = Path(__file__).resolve().parent
    threads = [int(t) for t in a.threads.split(",")]
    res = {}
    for t in threads:
        env = harness.child_env(harness.thread_env(t))
        r = harness.run_child([sys.executable, "-c", CHILD, str(here), str(a.cache), str(a.k), repr(a.lambda1),
                               str(a.repeats), str(t)], env=env)
        if "error" in r:
            raise SystemExit(f"{t} threads failed: {r['error']}")
        res[t] = r
        print(f"{t} threads: " + "; ".join(f"{n}: {v['median']:.3f}" for n, v in r.items()), flush=True)
    base = min(threads)
    names = list(res[threads[0]])
    lines = [f"Kernel wall times (median of {a.repeats}, seconds) per thread count; speed-up over {base} "
             f"thread(s) in brackets. Cache {a.cache}, K = {a.k}, λ₁ = {a.lambda1:g}. \n\n`{harness.command_line(__file__, argv)}`\n\n{harness.machine_line(harness.machine_facts())}",
             "", "| kernel | " + " | ".join(f"{t} threads" for t in threads) + " | max abs diff |",
             "|---|" + "---:|" * len(threads) + "---:|"]
    for n in names:
        cells = [f"{res[t][n]['median']:.4f} ({res[base][n]['median'] / res[t][n]['median']:.1f}×)" for t in threads]
        diff = max(res[t][n]["max_abs_diff"] for t in threads)
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {diff:.1e} |")
    text = "\n".join(lines)
    print(text)
    if a.out:
        a.out.write_text(text + "\n")
        harness.write_json(a.out.with_suffix(".json"), {"threads": res, "machine": harness.machine_facts()})


if __name__ == "__main__":
    main()
