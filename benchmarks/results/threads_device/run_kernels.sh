# Device run of session 10 (issue 9): the kernels' thread scaling on a lent 16-core machine.
# Carried: .whl (snowballstemmer and PyStemmer wheels, the packages the device image lacks).
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=src:/tmp/site
timeout ${TO:-320} python3 benchmarks/bench_kernel_scaling.py --cache /tmp/kc --threads ${THREADS:-16,1,8,4,2} \
    --repeats ${REPEATS:-5} --out ${OUT:-/tmp/devout}/kernel_scaling.md
