"""Wall time of one online U-step solve (``rlsi.models.active_rows._solve_dense_rows``) per number of G parts.

2,700 term rows of 7,000, K = 20 (the size of an online solve of 20 Newsgroups at ξ = 10, batches of 256),
synthetic S, R and warm start; best of 5 rounds of 60 solves. It found that 32 parts dealt
in 64-row chunks left one of 2 threads with 27 chunks and the other 16 (the fix: ``_part_chunk``).

    PYTHONPATH=src python benchmarks/bench_online_solve_parts.py 2      # numba threads
    PYTHONPATH=src python benchmarks/bench_online_solve_parts.py 1
"""
import sys
import time

import numba
import numpy as np

from rlsi.models.active_rows import _solve_dense_rows


def main(threads):
    numba.set_num_threads(threads)
    rng = np.random.default_rng(0)
    K, M, n = 20, 7000, 2700
    V = rng.random((K, 400))
    S = V @ V.T / 400 + 0.1 * np.eye(K)
    U0 = rng.standard_normal((M, K)) * (rng.random((M, K)) < 0.08)
    R = U0 @ S + 0.01 * rng.standard_normal((M, K))
    rows = np.sort(rng.choice(M, n, replace=False))

    def run(P, reps=300):
        best = np.inf
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(reps // 5):
                U = U0.copy()
                live = np.zeros(M, bool)
                parts = np.zeros((P, K, K))
                _solve_dense_rows(R, S, U, rows, 0.05, 100, 1e-4, False, live, parts, np.zeros(P, np.int64), False,
                                  np.zeros(P))
            best = min(best, (time.perf_counter() - t) / (reps // 5))
        return best

    run(8, 10)
    for P in (8, 16, 32):
        print(f"threads {threads}, {P} parts: {run(P) * 1e6:.1f} us per solve")


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
        sys.exit(print(__doc__))
    main(int(sys.argv[1]) if len(sys.argv) > 1 else numba.config.NUMBA_NUM_THREADS)
