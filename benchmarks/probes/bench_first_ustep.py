"""Where the first (cold) U-step of a batch fit spends its time, and what a safe first-step screening would
save (#13), on a memory-mapped matrix directory (``rlsi synth`` / ``rlsi ingest``), at 1 thread CPU time.

    PYTHONPATH=src python benchmarks/bench_first_ustep.py --matrix /work/runs/scale/m400k --k 500 \\
        --lambda1 8.1047e-5 --sample 200000 > out.jsonl

1. W₀ as ``BatchRLSI(K, lambda1=λ₁, random_state=seed)`` makes it (``init="docs"``).
2. The R-free bound of the first U-step: ``|R_tk| = |Σ_d D_td W_dk| <= (1 + γ_t) Σ_d |D_td| max_k |W_dk|``
   (one O(nnz) pass; γ_t the rounding factor of the product, :func:`rlsi.models.screening.rounding_factor`);
   a row whose bound is <= λ₁/2 has the zero solution (the lasso's KKT conditions at 0). Counted: rows and
   entries of D it removes, against the rows whose computed ``max_k |R_tk|`` is <= λ₁/2 (what the U-step skips
   anyway once R is computed), and rows it would remove wrongly (must be 0).
3. The lasso of a random sample of term rows (those not optimal at zero) from zero: exact (100 sweeps,
   ``inner_tol``), capped at 3 and 10 sweeps, and with the cold step's work budget (``RLSITuning.cold_dense_sweeps·K²``).
"""

import argparse
import json
import os
import sys
import time

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

from rlsi.io.matrix import load_matrix  # noqa: E402
from rlsi.kernels.lasso import lasso_rows  # noqa: E402
from rlsi.kernels.products import csr_dense_take  # noqa: E402
from rlsi.models import steps  # noqa: E402
from rlsi.models.batch import BatchRLSI  # noqa: E402
from rlsi.models.solver import initial_doc_vectors  # noqa: E402
from rlsi.models.rlsi_policy import TUNING, rounding_factor  # noqa: E402

COLD_DENSE_SWEEPS = TUNING.cold_dense_sweeps


def emit(rec):
    print(json.dumps(rec), flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matrix", required=True)
    p.add_argument("--k", type=int, default=500)
    p.add_argument("--lambda1", type=float, required=True, help="per 1000 documents")
    p.add_argument("--sample", type=int, default=200000, help="term rows sampled for the lasso comparison")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    X = load_matrix(a.matrix, vectorizer=False).X
    N, M = X.shape
    model = BatchRLSI(a.k, lambda1=a.lambda1, random_state=a.seed)
    model.n_features_in_ = M
    t = time.process_time()
    W = initial_doc_vectors(X, model)
    t_init = time.process_time() - t
    lam = model.effective_lambda1(N)
    half = lam / 2
    D = X.T.tocsr()
    df = np.diff(D.indptr)
    t = time.process_time()
    wmax = np.abs(W).max(axis=1).astype(np.float64)
    absD = D.copy()
    absD.data = np.abs(absD.data)
    bound = (absD.astype(np.float64) @ wmax) * (1.0 + rounding_factor(df, W.dtype))
    t_bound = time.process_time() - t
    del absD
    cut = bound <= half * (1.0 - 1e-6)
    t = time.process_time()
    rowmax = np.empty(M)
    for s in range(0, M, 20000):
        _, rowmax[s:s + 20000] = csr_dense_take(D, np.arange(s, min(M, s + 20000), dtype=np.int64), W, dtype=W.dtype)
    t_r = time.process_time() - t
    zero = rowmax <= half
    emit(dict(part="bound", N=N, M=M, nnz=int(X.nnz), K=a.k, lambda1=a.lambda1, half_lambda=half, init_cpu_s=t_init,
              bound_cpu_s=t_bound, R_all_rows_cpu_s=t_r, rows_bound_removes=int(cut.sum()),
              nnz_bound_removes=int(df[cut].sum()), rows_zero_at_kkt=int(zero.sum()), nnz_zero_at_kkt=int(df[zero].sum()),
              wrongly_removed=int((cut & ~zero).sum())))
    S = steps.gram(W)
    rows = np.sort(np.random.default_rng(a.seed).choice(M, min(M, a.sample), replace=False)).astype(np.int64)
    rows = rows[~zero[rows]]
    R, _ = csr_dense_take(D, rows, W, dtype=W.dtype)
    lasso_rows(R[:10], S, None, lam, max_iter=100, tol=1e-4)  # compile
    K = a.k
    for label, mi, mw in [("exact (100 sweeps, tol 1e-4)", 100, None), ("cap 3", 3, None), ("cap 10", 10, None),
                          (f"budget {COLD_DENSE_SWEEPS} K^2", 100, COLD_DENSE_SWEEPS * K * K)]:
        t = time.process_time()
        U, sw = lasso_rows(R, S, None, lam, max_iter=mi, tol=1e-4, max_work=mw)
        dt = time.process_time() - t
        U64 = U.astype(np.float64)
        obj = float(np.sum((U64 @ S) * U64) - 2 * np.sum(R * U64) + lam * np.abs(U64).sum())
        nz = np.count_nonzero(U, axis=1)
        emit(dict(part="lasso", rows=len(rows), label=label, cpu_s=dt, mean_sweeps=float(sw.mean()),
                  p90_sweeps=float(np.percentile(sw, 90)), at_cap=int((sw == mi).sum()), mean_nnz=float(nz.mean()),
                  max_nnz=int(nz.max()), objective=obj))


if __name__ == "__main__":
    main(sys.argv[1:])
