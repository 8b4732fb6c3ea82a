"""Wall-clock A/B of GroupNMF between two source trees, at a chosen thread count (session 11's V-step change).

``GroupNMF(10, 3, max_iter=10, tol=0)`` on ``synthetic_classes.make_class_corpus(100_000, 60_000, 50, seed=0)``
(50 planted classes), best of 3 fits, after a small warm-up fit (compilation). Prints the wall time, the last
objective and the sum of the topics (the numbers of both trees should agree).

Usage (each call a fresh process; alternate the trees, the VM's wall clock moves by about 10 %)::

    python benchmarks/ab_group_nmf.py SRC_DIR THREADS     # SRC_DIR: a tree's src/ (e.g. `git worktree add`)
"""
import sys
import time
import warnings
from pathlib import Path

if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
    sys.exit(print(__doc__))
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
warnings.simplefilter("ignore")

import numba  # noqa: E402

from synthetic_classes import make_class_corpus  # noqa: E402

threads = int(sys.argv[2])
numba.set_num_threads(threads)
c = make_class_corpus(100_000, 60_000, 50, seed=0)
X, y = c.X, c.y
from rlsi.models.group import GroupNMF  # noqa: E402

GroupNMF(10, 3, max_iter=2, random_state=0).fit(X[:2000], y[:2000])
best = float("inf")
for _ in range(3):
    t = time.perf_counter()
    m = GroupNMF(10, 3, max_iter=10, tol=0, random_state=0, n_jobs=threads).fit(X, y)
    best = min(best, time.perf_counter() - t)
print(f"{sys.argv[1]} threads {threads}: best wall {best:.2f} s, objective {m.objective_[-1]:.6f}, "
      f"topics' sum {float(m.components_.sum()):.9g}")
