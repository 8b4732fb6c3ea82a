"""Benchmark: the STC coding kernel's speed (``transform``) at the printed and the released settings.

4,000 training documents of 20 Newsgroups coded under a random-document dictionary
(``_document_beta``, seed 0), ``n_jobs=2``, best of 3 after a warm-up; prints seconds and Σθ per setting.
Run it on two checkouts to compare kernels (e.g. a commit and its parent):

    PYTHONPATH=src python benchmarks/bench_stc_coding.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_stc import DATA, load  # noqa: E402

from rlsi.models.stc import SparseTopicalCoding  # noqa: E402


def main():
    X = load(DATA)[0][:4000]
    for name, par in (("printed", dict(lam=0.01, gamma=0.01, rho=0.1)),
                      ("released", dict(lam=0.2, gamma=0.2, rho=0.01))):
        m = SparseTopicalCoding(60, max_iter=1, n_jobs=2, **par).fit(X[:50])
        m._set_components(m._document_beta(X.shape[1], X))
        m.transform(X[:20])
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            theta = m.transform(X)
            best = min(best, time.perf_counter() - t)
        print(f"{name}: {par} best of 3 {best:.2f} s, sum of theta {theta.sum():.6g}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
        sys.exit(print(__doc__))
    main()
