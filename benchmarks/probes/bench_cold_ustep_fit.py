"""A whole batch fit at 1 thread CPU time, to compare cold first U-steps (#9's dense end) on the proxy corpus
``make_corpus(20000, 80000, 150, n_topics=200, seed=0)`` (float64 tf-idf), and scikit-learn NMF(``mu``) on it.

    PYTHONPATH=src python benchmarks/bench_cold_ustep_fit.py --lambda1 1e-5 [--inner-max-iter N] [--nmf]

One JSON line: CPU seconds of ``BatchRLSI(200, lambda1=λ₁, max_iter=10, tol=0, random_state=0).fit(X)``
(initialisation included), AvgComp, the objective after every iteration; with ``--nmf`` also NMF(``mu``)'s
seconds per iteration as bench_batch.py measures it ((fit(max_iter=5) − fit(max_iter=1)) / 4).
``--inner-max-iter`` caps the cold first U-step in sweeps (the comparison of the report).
"""

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from synthetic import make_corpus  # noqa: E402

from rlsi.models.batch import BatchRLSI  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lambda1", type=float, required=True)
    p.add_argument("--inner-max-iter", type=int, default=100)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--nmf", action="store_true")
    p.add_argument("--cache", default="/tmp/rlsi_proxy_20k_80k.npz")
    a = p.parse_args(argv)
    cache = Path(a.cache)
    if not cache.exists():
        sp.save_npz(cache, make_corpus(20000, 80000, 150, n_topics=200, seed=0).X.tocsr(), compressed=False)
    X = sp.load_npz(cache).tocsr()
    rec = {"lambda1": a.lambda1, "inner_max_iter": a.inner_max_iter}
    m = BatchRLSI(200, lambda1=a.lambda1, random_state=0, max_iter=a.iters, tol=0, inner_max_iter=a.inner_max_iter)
    t = time.process_time()
    m.fit(X)
    rec.update(cpu_s=time.process_time() - t, avgcomp=m.components_.nnz / np.prod(m.components_.shape),
               objective=[float(o) for o in m.objective_])
    if a.nmf:
        from sklearn.decomposition import NMF
        times = {}
        for it in (1, 5):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.process_time()
                NMF(200, solver="mu", init="random", max_iter=it, tol=0, random_state=0).fit(X)
                times[it] = time.process_time() - t
        rec["nmf_mu_s_per_iter"] = (times[5] - times[1]) / 4
    print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
