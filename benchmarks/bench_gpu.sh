#!/usr/bin/env bash
# One device run of rlsi.gpu (about 8 minutes on one H100 and 16 cores), from the repository root:
#   bash benchmarks/bench_gpu.sh            (results in $OUT, or /tmp/gpuout without the device tool)
# 1. the card tests (tests/gpu/test_cuda.py: the CuPy path against the host path, fused vs array kernels,
#    a corpus already on the card), 2. the device script (benchmarks/bench_gpu.py) writing gpu.md / gpu.json.
# The image's CuPy (cupy-cuda13x there) is used; nothing is installed.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH}
o=${OUT:-/tmp/gpuout}; mkdir -p "$o"
(nvidia-smi; python3 -c "import cupy, numpy, scipy, numba; print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__, 'numba', numba.__version__)") > "$o/machine.txt" 2>&1
echo "== card tests $(date +%T)"
timeout "${TO_TESTS:-150}" python3 -m pytest tests/gpu/test_cuda.py -q -p no:cacheprovider -rs 2>&1 | tee "$o/test_cuda.log"
echo "== device script $(date +%T)"
timeout "${TO_BENCH:-400}" python3 benchmarks/bench_gpu.py --budget "${BUDGET:-330}" --out "$o/gpu.md" --json "$o/gpu.json" 2>&1 | tee "$o/bench.log"
echo "== end $(date +%T)"
