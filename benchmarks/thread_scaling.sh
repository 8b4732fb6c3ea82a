#!/usr/bin/env bash
# Thread scaling of BatchRLSI against scikit-learn NMF(mu): the 50,000 × 200,000, K = 200 corpus of
# the density sweep at three topic densities (AvgComp ≈ 0.00018, 0.0068 = the paper's, 0.094), 5 iterations,
# wall clock on an otherwise idle machine, at each thread count given (numba and BLAS threads alike).
#
#   benchmarks/thread_scaling.sh OUTDIR [THREADS ...]      (default threads: 16 4 1)
#
# Each thread count writes OUTDIR/threads_T.md and .json (bench_batch.py's sweep report).
set -euo pipefail
out=${1:?usage: thread_scaling.sh OUTDIR [THREADS ...]}
shift
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(16 4 1)
py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
for t in "${threads[@]}"; do
    echo "== threads $t  $(date -u +%T)"
    PYTHONPATH="$here/src" "$py" "$here/benchmarks/bench_batch.py" --docs 50000 --terms 200000 --tokens 150 \
        --k 200 --iters 5 --sweep-lambda1 0.0107,0.000679,7.86e-05 --topic-sweeps 3 --threads "$t" \
        --clock wall --replays 0 --nmf-iters 3 --out "$out/threads_$t.md" --json
done
