"""RLSI on a GPU (rlsi.gpu): the paper's shape on the card first, then the card tests and the comparisons with the
16-core CPU, each stage under its own time cap; results written after every stage and every iteration.

One run fits one device call of at most 9 minutes (``bash benchmarks/bench_gpu.sh``: a 520 s hard stop, 495 s
of stages). Stages, in order (``--stages``), with their caps in seconds (:data:`STAGES`):

1. **paper** (200): first a small fit on the card (CuPy compiles its kernels there, not in the timed steps),
   then 1.6M x 7M, K = 500, float32 — the TOIS paper's web-scale shape — generated on the card
   (``gpu_corpus.device_corpus``; on numpy it would take about 6 minutes of one core), W₀ by ``init="docs"``
   on the card, λ₁ for the paper's AvgComp 0.0044, under a **40 GB pool limit** (``MemoryPool.set_limit``):
   the fit's memory target is pass or fail. The pool is emptied after set-up and before each of the first
   ``--mem-iters`` iterations' steps; ``used_bytes()`` after each step (what stays) and ``total_bytes()``
   (the step's peak, as the pool held it) are reported against the memory plan at the density reached.
   Out of memory under the limit is recorded (fail) and the fit is run again without the limit for its
   timings, as time allows.
2. **paper-online** (55): OnlineRLSI's steps at the same 7M-term vocabulary, K = 500, ρ = 1, ξ = 10,
   mini-batches of 1,000 of the corpus's documents, under the 40 GB limit: seconds and memory per mini-batch
   (each one ``partial_fit``: the batch compacted and copied to the card, the step, its vectors back).
3. **card-tests** (100): ``tests/gpu/test_cuda.py`` in a subprocess (the CuPy path against the host path),
   each test's outcome as it finishes.
4. **check** (60): 50k x 200k, K = 200: the host problem (``--threads`` numba threads) and the device problem
   in float32 and float64 from the same W₀, ``--iters`` iterations: objective, relative difference (target
   1e-4), seconds per iteration, U-/V-step.
5. **options** (20), 6. **online** (20): the problem's ways of working at the check shape; online tracking
   (ρ = 1, ξ = 10) documents per second on the CPU and the card.
7. **mid** (rest): 400k x 2M, K = 500, as the paper stage without the limit.

A background process compiles the host path's numba kernels (into numba's cache) while the card runs the paper
stage, so that the card tests and the CPU fits load them. ``--smoke`` runs every stage at tiny sizes with the
device code path on numpy (``--device numpy``): what the suite runs; its numbers mean nothing.

    bash benchmarks/bench_gpu.sh                       # on the card; results in $OUT
    PYTHONPATH=src python benchmarks/bench_gpu.py --smoke --out /tmp/gpu_smoke.md
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

import gpu_corpus  # noqa: E402
import harness  # noqa: E402

from gpu_run import CHECK, LIMIT, MID, PAPER, SMOKE, STAGES, Memory, Run  # noqa: E402
from gpu_stages import (batch_stage, card_tests_stage, check_stage, online_stage, options_stage,  # noqa: E402
                        paper_online_stage, warm_host_kernels)


# ----------------------------------------------------------------------------------------- main
def main(argv=None, backend=None, on_write=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--smoke", action="store_true", help="tiny sizes on the numpy device path")
    p.add_argument("--device", default=None, help="device of the fits (default: cuda, numpy with --smoke)")
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--shape-iters", type=int, default=8, help="iterations of the paper and mid shapes, at most")
    p.add_argument("--mem-iters", type=int, default=2, help="iterations whose steps start from an empty pool")
    p.add_argument("--sweeps", type=int, default=3, help="topic_sweeps")
    p.add_argument("--density", type=float, default=0.0044)
    p.add_argument("--online-batch", type=int, default=1000)
    p.add_argument("--online-docs", type=int, default=10_000)
    p.add_argument("--online-batches", type=int, default=40, help="mini-batches of the paper-online stage, at most")
    p.add_argument("--card-tests", default="tests/gpu/test_cuda.py", help="the card-tests stage's test file")
    p.add_argument("--stages", default=",".join(STAGES))
    p.add_argument("--budget", type=float, default=495.0, help="seconds for all stages")
    p.add_argument("--cap", action="append", default=[], metavar="STAGE=SECONDS", help="a stage's cap")
    p.add_argument("--no-facts", action="store_true", help="skip the machine facts (a few seconds; tests)")
    p.add_argument("--no-warm", action="store_true", help="no background compilation of the host kernels")
    p.add_argument("--out", type=Path, default=HERE / "results" / "gpu.md")
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    a.argv = sys.argv[1:] if argv is None else list(argv)
    a.caps = {k: float(v) for k, v in (c.split("=") for c in a.cap)}
    a.on_write = on_write
    if a.smoke:
        a.threads = min(a.threads, 2)
        a.online_batch, a.online_docs = min(a.online_batch, 250), min(a.online_docs, 750)
        a.online_batches = min(a.online_batches, 3)
    be_name = a.device or ("numpy" if a.smoke else "cuda")
    stages = [s for s in STAGES if s in a.stages.split(",")]
    run = Run(a, be_name)
    run.backend = backend
    warm = None
    if not a.no_warm and {"card-tests", "check", "online"} & set(stages):
        warm = subprocess.Popen([sys.executable, __file__, "--warm-host-kernels"], env=harness.child_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run.children.append(warm)
    from rlsi.gpu.backend import resolve
    be = backend or resolve(be_name)
    run.rec["device"] = device_facts(be)
    try:
        run.rec["facts"] = None if a.no_facts else harness.machine_facts()
    except Exception as exc:  # noqa: BLE001 -- informative only: the run goes on
        run.rec["facts_error"] = f"{type(exc).__name__}: {exc}"
    run.rec["stage_order"] = stages
    run.write()

    def hard_stop(signum, frame):  # bench_gpu.sh's timeout: record where the run was, end the children, end
        for child in run.children:
            if child.poll() is None:
                child.kill()
        for st in run.rec["stages"].values():
            if st.get("status") == "running":
                st["status"] = "stopped by the hard stop"
        run.write()
        sys.exit(124)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, hard_stop) if main_thread else None
    sizes = SMOKE if a.smoke else {"paper": PAPER, "mid": MID, "check": CHECK}
    X_paper = X = W0 = lam = None
    for name in stages:
        if run.left() < 3:
            run.rec["stages"][name] = {"status": "skipped: no time left"}
            run.write()
            continue
        if name in ("card-tests", "check", "online") and warm is not None:
            try:
                warm.wait(timeout=max(1.0, min(60.0, run.left() - 60)))
            except subprocess.TimeoutExpired:
                pass
        st = run.stage(name)
        try:
            if name == "paper":
                X_paper = batch_stage(run, st, be, sizes["paper"], limit=LIMIT if be.is_cuda else None)
            elif name == "paper-online":
                if X_paper is None:
                    X_paper = gpu_corpus.device_corpus(be, *sizes["paper"][:3], n_topics=sizes["paper"][3], seed=1)
                paper_online_stage(run, st, be, X_paper, sizes["paper"])
                X_paper = None
            elif name == "card-tests":
                X_paper = None
                Memory(be).reset()
                card_tests_stage(run, st)
            elif name == "check":
                X, W0, lam = check_stage(run, st, be_name, sizes["check"])
            elif name == "options" and X is not None:
                options_stage(run, st, be, X, W0, lam)
            elif name == "online" and X is not None:
                online_stage(run, st, be_name, X, sizes["check"][3])
            elif name == "mid":
                batch_stage(run, st, be, sizes["mid"], limit=None)
            run.done(st, "done (stopped at cap)" if st.get("stopped") else "done")
        except Exception as exc:  # noqa: BLE001 -- recorded; the next stage runs
            st["error"] = f"{type(exc).__name__}: {exc}"
            harness.log(f"{name}: {st['error']}")
            run.done(st, "failed")
            Memory(be).reset()
    if warm is not None and warm.poll() is None:
        warm.kill()
    if main_thread:
        signal.signal(signal.SIGTERM, previous)
    run.write()
    harness.log(f"wrote {a.out} ({time.perf_counter() - run.t0:.0f} s)")
    return run.rec


def device_facts(be):
    line = be.describe()
    if be.is_cuda and hasattr(be.xp, "__version__") and "fake" not in be.xp.__version__:
        try:
            line += "; " + subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                                           "--format=csv,noheader"], capture_output=True, text=True,
                                          timeout=20).stdout.strip()
        except Exception:  # noqa: BLE001 -- the line is informative only
            pass
    return line


if __name__ == "__main__":
    if sys.argv[1:] == ["--warm-host-kernels"]:
        warm_host_kernels()
    else:
        main()
