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

        m = BatchRLSI(a.k, lambda1=lam, max_iter=a.fit_iters, tol=0.0, random_state=0)
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
        D = X.T.tocsr()
        rows = np.arange(D.shape[0], dtype=np.int64)
        plan = P.sparse_plan(U, X.dtype, True)
        cases = {"R = D W (all term rows)": lambda: P.csr_dense_take(D, rows, W),
                 "Φ = X U": lambda: P.csr_csr_dense(X, U, plan=plan),
                 "G = UᵀU": lambda: steps.topic_gram(U)}
        rec = {"label": a.label, "lambda1": lam, "avgcomp": U.nnz / (U.shape[0] * U.shape[1]), "times": {}}
        for name, f in cases.items():
            f()  # compile / load
            ts = []
            for _ in range(a.repeats):
                t = time.process_time()
                f()
                ts.append(time.process_time() - t)
            rec["times"][name] = ts
            print(f"{a.label} λ1={lam:g} {name}: min {min(ts):.3f} median {np.median(ts):.3f} s", flush=True)
        recs.append(rec)
    return recs


def report(recs):
    import numpy as np

    lines = ["| label | λ₁ | AvgComp | product | runs | min CPU s | median CPU s |", "|---|---:|---:|---|---:|---:|---:|"]
    for r in recs:
        for name, ts in r["times"].items():
            lines.append(f"| {r['label']} | {r['lambda1']:g} | {r['avgcomp']:.4f} | {name} | {len(ts)} | "
                         f"{min(ts):.3f} | {np.median(ts):.3f} |")
    return "\n".join(lines)


def main():
    a = _parse()
    if a.report:
        print(report(json.loads(a.json.read_text())))
        return
    recs = run(a)
    if a.json:
        old = json.loads(a.json.read_text()) if a.json.exists() else []
        a.json.write_text(json.dumps(old + recs, indent=1))


if __name__ == "__main__":
    main()
