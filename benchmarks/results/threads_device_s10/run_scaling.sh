export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/site
o=${OUT:-/tmp/devout}/r; mkdir -p $o
D=${D:-50000}; M=${M:-200000}
(lscpu; free -g; nproc; python3 -c "import numba,numpy,scipy,sklearn;print(numba.__version__,numpy.__version__,scipy.__version__,sklearn.__version__)") > $o/machine.txt 2>&1
for t in ${THREADS:-16 1 8 4 2}; do echo "== $t $(date +%T)"; PYTHONPATH=src:/tmp/site timeout ${TO:-150} python3 benchmarks/bench_batch.py --docs $D --terms $M --tokens 150 --k 200 --iters 5 --sweep-lambda1 0.000679 --topic-sweeps 3 --threads $t --clock wall --replays 0 --nmf-iters 2 --out $o/threads_$t.md --json 2>&1 | tee $o/log_$t.txt | grep -E "nmf-mu:|^\| float64 \| —" ; done
echo "== tiles $(date +%T)"; PYTHONPATH=src:/tmp/site timeout ${TO2:-200} python3 benchmarks/bench_thread_scaling.py --docs $D --terms $M --k 200 --threads 16,2 --lambda1 0.000679 --checkout tpw4=src --checkout tpw2=.variants/tpw2/src --json $o/tiles.json 2>&1 | tail -6
echo "== end $(date +%T)"; tar czf ${OUT:-/tmp/devout}/r.tgz -C ${OUT:-/tmp/devout} r
