"""Interleaved one-thread CPU-time A/B of BatchRLSI between two source trees (the table of
``benchmarks/results/density_sweep_ab.md``): whole-fit CPU seconds per iteration of ``BatchRLSI(100,
lambda1=LAM, max_iter=10)`` on the density sweep's corpus, or NMF(``mu``) per iteration.

Usage (each call a fresh process, so that both trees run the same way)::

    python benchmarks/ab_batch.py SRC_DIR LAM      # SRC_DIR: a tree's src/ (e.g. `git archive 457fdf8 src`)
    python benchmarks/ab_batch.py SRC_DIR nmf
    python benchmarks/ab_batch.py SRC_DIR LAM SWEEPS   # BatchRLSI(topic_sweeps=SWEEPS): an int or "none"

The corpus is ``synthetic.make_corpus(20000, 60000, 150, n_topics=100, seed=0)`` (the matrix of
``density_sweep.md``), cached as an npz in ``$AB_CACHE`` (default ``/tmp/rlsi_ab_X.npz``).
"""
import os
import sys
import time
import warnings
from pathlib import Path

os.environ["NUMBA_NUM_THREADS"] = "1"
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
    sys.exit(print(__doc__))
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

warnings.simplefilter("ignore")
from synthetic import ab_matrix  # noqa: E402

X = ab_matrix()
what = sys.argv[2]
if what == "nmf":
    from sklearn.decomposition import NMF

    t = time.process_time()
    NMF(100, solver="mu", max_iter=1, tol=0, init="nndsvda", random_state=0).fit(X)
    t1 = time.process_time() - t
    t = time.process_time()
    NMF(100, solver="mu", max_iter=5, tol=0, init="nndsvda", random_state=0).fit(X)
    t5 = time.process_time() - t
    print(f"nmf per-iter {(t5 - t1) / 4:.3f}")
else:
    from rlsi.models.batch import BatchRLSI

    BatchRLSI(10, lambda1=0.01, max_iter=2, random_state=0).fit(X[:400])  # compile outside the timing
    extra = {}
    if len(sys.argv) > 3:
        extra["topic_sweeps"] = None if sys.argv[3] == "none" else int(sys.argv[3])
    model = BatchRLSI(100, lambda1=float(what), max_iter=10, tol=1e-4, random_state=0, **extra)
    t = time.process_time()
    model.fit(X)
    print(f"{sys.argv[1]} lam={what} {extra} whole-fit per-iter {(time.process_time() - t) / model.n_iter_:.3f} "
          f"iterations {model.n_iter_} objective {model.objective_[-1]:.6g} "
          f"AvgComp {model.components_.nnz / (model.components_.shape[0] * model.components_.shape[1]):.4g}")
