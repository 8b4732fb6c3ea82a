# Device run of session 10 (issue 9), from the repository root on the lent 16-core machine:
#   TO=95 TO2=110 bash benchmarks/results/threads_device_s10/run_scaling.sh
# Carried paths: .whl (snowballstemmer and PyStemmer wheels: the device image lacks them; see the device
# tool's README for `pip download`) and .variants/tpw2/src (a copy of src with TILES_PER_WORKER = 2, made
# by sed, for the last step). Results go to $OUT/r.tgz (the device returns at most 8 files).
# A next device session: the same first loop on the current code answers whether blas_rows gives the
# 16-thread fit what OPENBLAS_THREAD_TIMEOUT=4 gave (README.md here, section 3).
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/site
o=${OUT:-/tmp/devout}/r; mkdir -p $o
D=${D:-50000}; M=${M:-200000}
(lscpu; free -g; nproc; python3 -c "import numba,numpy,scipy,sklearn;print(numba.__version__,numpy.__version__,scipy.__version__,sklearn.__version__)") > $o/machine.txt 2>&1
for t in ${THREADS:-16 1 8 4 2}; do echo "== $t $(date +%T)"; PYTHONPATH=src:/tmp/site timeout ${TO:-150} python3 benchmarks/bench_batch.py --docs $D --terms $M --tokens 150 --k 200 --iters 5 --sweep-lambda1 0.000679 --topic-sweeps 3 --threads $t --clock wall --replays 0 --nmf-iters 2 --out $o/threads_$t.md --json 2>&1 | tee $o/log_$t.txt | grep -E "nmf-mu:|^\| float64 \| —" ; done
echo "== tiles $(date +%T)"; PYTHONPATH=src:/tmp/site timeout ${TO2:-200} python3 benchmarks/bench_thread_scaling.py --docs $D --terms $M --k 200 --threads 16,2 --lambda1 0.000679 --checkout tpw4=src --checkout tpw2=.variants/tpw2/src --json $o/tiles.json 2>&1 | tail -6
echo "== end $(date +%T)"; tar czf ${OUT:-/tmp/devout}/r.tgz -C ${OUT:-/tmp/devout} r
