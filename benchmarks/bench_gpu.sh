#!/usr/bin/env bash
# One device run of rlsi.gpu in at most 9 minutes, from the repository root (on the device tool:
# run(command="bash benchmarks/bench_gpu.sh", timeout_s=540)); results in $OUT (or /tmp/gpuout):
#   gpu.md, gpu.json  the device script's report and record, rewritten after every stage and iteration
#   bench.log         its progress;  test_cuda.log  the card tests' output;  machine.txt  nvidia-smi, versions
# benchmarks/bench_gpu.py runs its stages in order, each under its cap, 495 s in all (its docstring has the
# plan): the paper's shape first, under a 40 GB pool limit; OnlineRLSI at the paper's vocabulary; the card tests
# (tests/gpu/test_cuda.py); the check against the 16-core CPU; the options; online tracking; 400k x 2M. A hard
# stop at 520 s ends it wherever it is; what it measured is already on disk. The image's CuPy is used; nothing
# is installed. Copy $OUT/gpu.md to benchmarks/results/gpu.md (and gpu.json beside it).
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH}
o=${OUT:-/tmp/gpuout}; mkdir -p "$o"
(nvidia-smi; python3 -c "import cupy, numpy, scipy, numba; print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__, 'numba', numba.__version__)") > "$o/machine.txt" 2>&1
echo "== device script $(date +%T)"
timeout -k 5 "${HARD_STOP:-520}" python3 benchmarks/bench_gpu.py --budget "${BUDGET:-495}" \
    --out "$o/gpu.md" --json "$o/gpu.json" 2>&1 | tee "$o/bench.log"
echo "== end $(date +%T), exit code ${PIPESTATUS[0]} (124: the hard stop)"
