"""Wall time of a BatchRLSI fit per thread count, for one or more checkouts of rlsi on the same matrix.

Each (checkout, threads) pair runs in a child process with ``NUMBA_NUM_THREADS`` and the BLAS threads set
before import; the matrix is ``benchmarks/synthetic.py``'s corpus, generated once and shared through an
``.npz``. A tiny fit in each checkout first compiles (or loads) its numba kernels, so compile time is not in
the numbers. Meant for an otherwise idle many-core machine; on a shared one, wall times are noise::

    PYTHONPATH=src python benchmarks/bench_thread_scaling.py --threads 16,8,4,2,1 --lambda1 0.000679 \\
        --checkout new=src --checkout old=/path/to/old/src --json scaling.json

Prints, per checkout and thread count: fit wall time (and the process's user and system CPU seconds and
minor page faults during the fit), seconds per iteration (whole fit), speed-up over the checkout's 1-thread
(or fewest-thread) run, nnz(U).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import harness

CHILD = r"""
import json, resource, sys, time
import numpy as np, scipy.sparse as sp
from rlsi import BatchRLSI
z = np.load(sys.argv[1])
X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
k, lam, iters = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
BatchRLSI(k, lambda1=lam, max_iter=2, tol=0, topic_sweeps=3, random_state=0).fit(X[:2000])  # compile / load
r0, t = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
m = BatchRLSI(k, lambda1=lam, lambda2=1.0, max_iter=iters, tol=0, topic_sweeps=3, random_state=0).fit(X)
wall, r1 = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": wall, "per_iter_s": wall / iters, "nnz_U": int(m.components_.nnz)
                  if hasattr(m.components_, "nnz") else int(np.count_nonzero(m.components_)),
                  "user_s": r1.ru_utime - r0.ru_utime, "sys_s": r1.ru_stime - r0.ru_stime,
                  "minor_faults": r1.ru_minflt - r0.ru_minflt}))
"""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    harness.corpus_args(p)
    p.add_argument("--lambda1", type=float, default=0.000679, help="per 1000 documents")
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--threads", default="16,8,4,2,1")
    p.add_argument("--checkout", action="append", default=None,
                   help="NAME=SRC_DIR (repeatable; default: this checkout's src as 'this')")
    p.add_argument("--json", type=Path, default=None, help="write the results here (rewritten after each run)")
    a = p.parse_args(argv)
    here = Path(__file__).resolve().parent
    checkouts = [c.split("=", 1) for c in (a.checkout or [f"this={here.parent / 'src'}"])]
    threads = [int(t) for t in a.threads.split(",")]
    from synthetic import make_corpus

    corpus = make_corpus(a.docs, a.terms, a.tokens, n_topics=a.k, seed=0)
    X = corpus.X
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "X.npz"
        np_save(path, X)
        for t in threads:
            for name, src in checkouts:
                # this checkout's src first: harness.child_env puts the benchmark's own src before the rest
                env = harness.child_env(harness.thread_env(t))
                env["PYTHONPATH"] = os.pathsep.join([str(Path(src).resolve()), env["PYTHONPATH"]])
                out = harness.run_child([sys.executable, "-c", CHILD, str(path), str(a.k), repr(a.lambda1),
                                         str(a.iters)], env=env)
                if "error" in out:
                    raise SystemExit(f"{name} at {t} threads failed: {out['error']}")
                r = dict(out, checkout=name, threads=t)
                results.append(r)
                print(f"{name:>8s} {t:3d} threads: fit {r['wall_s']:7.2f} s (user {r['user_s']:.2f}, sys "
                      f"{r['sys_s']:.2f}, {r['minor_faults']} page faults), {r['per_iter_s']:6.3f} s/iter, "
                      f"nnz(U) {r['nnz_U']}", flush=True)
                if a.json:
                    a.json.write_text(json.dumps({"args": vars(a) | {"json": str(a.json)}, "nnz_X": int(X.nnz),
                                                  "results": results}, indent=1))
    for name, _ in checkouts:
        mine = sorted((r for r in results if r["checkout"] == name), key=lambda r: r["threads"])
        base = mine[0]
        print(name, " ".join(f"{r['threads']}:{base['wall_s'] / r['wall_s']:.2f}x" for r in mine),
              f"(speed-up over {base['threads']} thread(s))")


def np_save(path, X):
    import numpy as np

    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape))


if __name__ == "__main__":
    main()
