"""Wall time of a BatchRLSI fit per thread count, for one or more checkouts of rlsi on the same matrix (issue 9).

Each (checkout, threads) pair runs in a child process with ``NUMBA_NUM_THREADS`` and the BLAS threads set
before import; the matrix is ``benchmarks/synthetic.py``'s corpus, generated once and shared through an
``.npz``. A tiny fit in each checkout first compiles (or loads) its numba kernels, so compile time is not in
the numbers. Meant for an otherwise idle many-core machine; on a shared one, wall times are noise::

    PYTHONPATH=src python benchmarks/bench_thread_scaling.py --threads 16,8,4,2,1 --lambda1 0.000679 \\
        --checkout new=src --checkout old=/path/to/old/src --json scaling.json

Prints, per checkout and thread count: fit wall time, seconds per iteration (whole fit), speed-up over the
checkout's 1-thread (or fewest-thread) run, nnz(U).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
import numpy as np, scipy.sparse as sp
from rlsi import BatchRLSI
z = np.load(sys.argv[1])
X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
k, lam, iters = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
BatchRLSI(k, lambda1=lam, max_iter=2, tol=0, topic_sweeps=3, random_state=0).fit(X[:2000])  # compile / load
t = time.perf_counter()
m = BatchRLSI(k, lambda1=lam, max_iter=iters, tol=0, topic_sweeps=3, random_state=0).fit(X)
wall = time.perf_counter() - t
print(json.dumps({"wall_s": wall, "per_iter_s": wall / iters, "nnz_U": int(m.components_.nnz)
                  if hasattr(m.components_, "nnz") else int(np.count_nonzero(m.components_))}))
"""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=50_000)
    p.add_argument("--terms", type=int, default=200_000)
    p.add_argument("--tokens", type=int, default=150)
    p.add_argument("--k", type=int, default=200)
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
    sys.path.insert(0, str(here))
    from synthetic import make_corpus

    corpus = make_corpus(a.docs, a.terms, a.tokens, n_topics=a.k, seed=0)
    X = corpus.X
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "X.npz"
        np_save(path, X)
        for t in threads:
            for name, src in checkouts:
                env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(src).resolve())] +
                                                                   os.environ.get("PYTHONPATH", "").split(os.pathsep)))
                for v in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
                    env[v] = str(t)
                out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(a.k), repr(a.lambda1), str(a.iters)],
                                     env=env, capture_output=True, text=True)
                if out.returncode:
                    print(out.stderr[-2000:], file=sys.stderr)
                    raise SystemExit(f"{name} at {t} threads failed")
                r = dict(json.loads(out.stdout.strip().splitlines()[-1]), checkout=name, threads=t)
                results.append(r)
                print(f"{name:>8s} {t:3d} threads: fit {r['wall_s']:7.2f} s, {r['per_iter_s']:6.3f} s/iter, "
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
