"""Issue 13's online target: one OnlineRLSI pass over a corpus against BatchRLSI iterations on the same
matrix, in CPU seconds at one thread (numba, BLAS and OpenMP limited to 1), in one process run after run.

The cores of the development machine are shared with other work, so wall-clock times say little; process
CPU time at one thread is comparable between the runs of one command (other processes still slow it down
through the caches and the memory bandwidth). For each run:

* ``batch``: ``BatchRLSI(K, lambda1=λ₁, max_iter=--batch-iters, tol=0)``: CPU seconds of every U-step and
  V-step (timers around ``RLSIProblem.u_step`` / ``v_step``) and of the setup before the first U-step;
* ``online``: ``OnlineRLSI(K, lambda1=λ₁, batch_size=--batch, topic_sweeps=S)`` one pass, for each ``S`` of
  ``--sweeps`` (``none``: every U-step solved to ``inner_tol``, the default; a number: warm-started
  U-steps capped at that many sweeps per row, as BatchRLSI's default of 3): CPU seconds of the pass and of
  its phases (U-steps on the live rows, V-steps, statistics), term rows solved and sweeps, nnz(U), AvgComp.

The ratio reported is the online pass over the mean batch iteration (U-step + V-step, the iterations
after the first; the target is ≤ 3).

    PYTHONPATH=src python benchmarks/bench_online_pass.py --matrix /work/runs/ladder/w100k/matrix --k 500 \\
        --lambda1 0.000261292 --batch 10000 --sweeps none 3 --out benchmarks/results/online_pass.md
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

harness.use_src()


def run_batch(X, K, lam, iters):
    from rlsi.models import BatchRLSI, local

    clock, steps = {}, []
    u_step, v_step = local.RLSIProblem.u_step, local.RLSIProblem.v_step

    def timed_u(self, executor):
        t = time.process_time()
        clock.setdefault("first_u", t)
        out = u_step(self, executor)
        steps.append({"u_s": time.process_time() - t})
        return out

    def timed_v(self, executor):
        t = time.process_time()
        out = v_step(self, executor)
        steps[-1]["v_s"] = time.process_time() - t
        return out

    local.RLSIProblem.u_step, local.RLSIProblem.v_step = timed_u, timed_v
    try:
        t0 = time.process_time()
        model = BatchRLSI(K, lambda1=lam, lambda2=1.0, max_iter=iters, tol=0.0, random_state=0).fit(X)
        total = time.process_time() - t0
    finally:
        local.RLSIProblem.u_step, local.RLSIProblem.v_step = u_step, v_step
    return {"cpu_s": total, "setup_s": clock["first_u"] - t0, "iterations": steps,
            "nnz_U": int(model.components_.nnz)}


def run_online(X, K, lam, batch_size, sweeps):
    from rlsi.models import OnlineRLSI, active_rows, stats, steps
    from rlsi.quality import avg_compactness

    phases = {"U-steps (live rows)": 0.0, "V-steps": 0.0, "statistics (assign)": 0.0}
    counts = {"rows_solved": 0, "sweeps": 0}
    originals = (active_rows.ActiveRows.solve, steps.update_doc_vectors, stats.PendingBatch.assign)

    def timed(fn, key):
        def inner(*a, **k):
            t = time.process_time()
            out = fn(*a, **k)
            phases[key] += time.process_time() - t
            return out
        return inner

    def solve(self, *a, **k):
        r0, s0 = self.rows_solved, self.sweeps
        out = timed(originals[0], "U-steps (live rows)")(self, *a, **k)
        counts["rows_solved"] += self.rows_solved - r0
        counts["sweeps"] += self.sweeps - s0
        return out

    active_rows.ActiveRows.solve = solve
    steps.update_doc_vectors = timed(originals[1], "V-steps")
    stats.PendingBatch.assign = timed(originals[2], "statistics (assign)")
    try:
        t0 = time.process_time()
        model = OnlineRLSI(K, lambda1=lam, lambda2=1.0, n_inner=1, batch_size=batch_size, topic_sweeps=sweeps,
                           random_state=0).fit(X)  # the paper's λ₂, one iteration per batch (as recorded)
        total = time.process_time() - t0
    finally:
        active_rows.ActiveRows.solve, steps.update_doc_vectors, stats.PendingBatch.assign = originals
    return {"cpu_s": total, "phases": phases, **counts, "n_batches": int(model.n_batches_),
            "nnz_U": int(model.components_.nnz), "avgcomp": avg_compactness(model.components_),
            "dead": len(model.dead_topics())}


def report(a, argv, facts, res):
    b = res["batch"]
    later = b["iterations"][1:] or b["iterations"]
    per_iter = sum(it["u_s"] + it["v_s"] for it in later) / len(later)
    L = ["# One online RLSI pass against batch RLSI iterations", "",
         f"    {harness.command_line(__file__, argv)}", "",
         f"Matrix `{a.matrix}`: {res['shape'][0]} x {res['shape'][1]}, nnz {res['nnz']:,}, {res['dtype']}; K = {a.k}, "
         f"λ₁ = {a.lambda1} per 1000 documents. **CPU seconds at one thread** (process time; NUMBA_NUM_THREADS, "
         f"OMP/OPENBLAS threads 1), runs one after another in one process. The 2 cores were shared with other "
         f"agents' work (load average at the start {facts['loadavg']}, at the end {res['load_end']}), which slows "
         f"CPU time too (caches, memory bandwidth): compare rows of this run only. Code: {facts['code']}.", "",
         "| run | CPU s | ratio to a batch iteration | detail |", "|---|---:|---:|---|"]
    its = "; ".join(f"it {i + 1}: U {it['u_s']:.1f} + V {it['v_s']:.1f}" for i, it in enumerate(b["iterations"]))
    L.append(f"| BatchRLSI, {len(b['iterations'])} iterations | {b['cpu_s']:.1f} | — | setup {b['setup_s']:.1f} s; "
             f"{its}; mean iteration after the first {per_iter:.1f} s; nnz(U) {b['nnz_U']:,} |")
    for name, o in res["online"].items():
        ph = ", ".join(f"{k} {v:.1f}" for k, v in o["phases"].items())
        L.append(f"| OnlineRLSI one pass, topic_sweeps={name}, {o['n_batches']} mini-batches of {a.batch} | "
                 f"{o['cpu_s']:.1f} | {o['cpu_s'] / per_iter:.2f} | {ph}; rows solved {o['rows_solved']:,}, sweeps "
                 f"{o['sweeps']:,}; nnz(U) {o['nnz_U']:,}, AvgComp {o['avgcomp']:.5f}, {o['dead']} dead |")
    return "\n".join(L) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matrix", type=Path, required=True, help="a matrix directory (rlsi synth / rlsi ingest)")
    p.add_argument("--k", type=int, default=500)
    p.add_argument("--lambda1", type=float, required=True, help="per 1000 documents")
    p.add_argument("--batch", type=int, default=10000, help="online mini-batch size")
    p.add_argument("--batch-iters", type=int, default=2)
    p.add_argument("--sweeps", nargs="+", default=["none", "3"])
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")
    import numba
    import scipy.sparse as sp
    from threadpoolctl import threadpool_limits

    from rlsi.io.matrix import load_matrix
    from rlsi.models import BatchRLSI, OnlineRLSI

    numba.set_num_threads(1)
    facts = harness.machine_facts()
    X = sp.csr_matrix(load_matrix(a.matrix).X)
    res = {"shape": list(X.shape), "nnz": int(X.nnz), "dtype": str(X.dtype), "online": {}}
    with threadpool_limits(1):
        small = X[:400]  # compile / load the kernels outside the timings
        BatchRLSI(5, lambda1=0.001, max_iter=2, random_state=0).fit(small)
        OnlineRLSI(5, lambda1=0.001, batch_size=100, random_state=0).fit(small)
        OnlineRLSI(5, lambda1=0.001, batch_size=100, n_inner=2, topic_sweeps=3, random_state=0).fit(small)
        harness.log("batch ...")
        res["batch"] = run_batch(X, a.k, a.lambda1, a.batch_iters)
        harness.log(f"batch: {res['batch']}")
        for s in a.sweeps:
            harness.log(f"online topic_sweeps={s} ...")
            res["online"][s] = run_online(X, a.k, a.lambda1, a.batch, None if s == "none" else int(s))
            harness.log(f"online: {res['online'][s]}")
    res["load_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    text = report(a, argv, facts, res)
    print(text)
    if a.out:
        a.out.write_text(text)
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
