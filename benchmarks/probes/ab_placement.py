"""Interleaved A/B of two source trees at the density sweep's paper point and the online tracking point: the
check that moving where the work runs (placements, the one start, the streaming skeleton) costs no speed.

Usage (from the repository root)::

    python benchmarks/probes/ab_placement.py OLD_SRC NEW_SRC [REPEATS]

Each measurement is a fresh process on one tree (numba, BLAS and OpenMP at one thread; CPU seconds of the
calling process, which a shared machine disturbs less than the wall clock), the trees taken in turns REPEATS
times (default 3). Cases, on ``make_corpus`` data (small sizes: the ratio is what is read):

* ``batch``: BatchRLSI(100) on 10,000 x 40,000 (150 tokens per document), ``target_terms_per_topic`` at the
  paper's density (AvgComp 0.0068 of docs/performance.md: 272 terms), 5 iterations, the λ₁ search included;
* ``online``: OnlineRLSI(20) at the tracking setting (mini-batches of 256, ρ = 1, ξ = 10, one pass) on
  6,000 x 20,000 (100 tokens per document).

Prints each run and, per case, the median CPU seconds of each tree and their ratio (new / old).
"""

import os
import statistics
import subprocess
import sys

CHILD = r"""
import os, sys, time, warnings
sys.path.insert(0, sys.argv[1])
warnings.simplefilter("ignore")
from rlsi.datasets.synthetic import make_corpus
case = sys.argv[2]
if case == "batch":
    from rlsi.models import BatchRLSI
    X = make_corpus(10000, 40000, 150, n_topics=100, seed=0).X.tocsr()
    BatchRLSI(5, lambda1=0.01, max_iter=2, random_state=0).fit(X[:300])  # compile outside the timing
    model = BatchRLSI(100, target_terms_per_topic=272, max_iter=5, tol=0, random_state=0)
    t = time.process_time(); model.fit(X); dt = time.process_time() - t
    extra = f"objective {model.objective_[-1]:.10g}"
else:
    from rlsi.models import OnlineRLSI
    X = make_corpus(6000, 20000, 100, n_topics=20, seed=1).X.tocsr()
    OnlineRLSI(5, batch_size=64, random_state=0).fit(X[:300])
    model = OnlineRLSI(20, batch_size=256, rho=1.0, n_inner=10, random_state=0)
    t = time.process_time(); model.fit(X); dt = time.process_time() - t
    extra = f"nnz {model.components_.nnz}"
print(f"{dt:.3f} {extra}")
"""


def run(src, case):
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONPATH=src)
    out = subprocess.run([sys.executable, "-c", CHILD, src, case], capture_output=True, text=True, env=env,
                         check=True).stdout.split()
    return float(out[0]), " ".join(out[1:])


def main():
    old, new = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    for case in ("batch", "online"):
        times = {old: [], new: []}
        for r in range(repeats):
            for src in ((old, new) if r % 2 == 0 else (new, old)):
                dt, extra = run(src, case)
                times[src].append(dt)
                print(f"{case} {src}: {dt:.3f} s CPU ({extra})", flush=True)
        a, b = statistics.median(times[old]), statistics.median(times[new])
        print(f"{case}: old {a:.3f} s, new {b:.3f} s, new/old {b / a:.3f}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
        sys.exit(print(__doc__))
    main()
