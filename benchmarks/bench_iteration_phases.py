"""Phases of one BatchRLSI iteration: where the time of the V-step and of the U-step's non-lasso work goes.

Runs ``BatchRLSI(K, lambda1=λ₁, max_iter=--iters, tol=0, random_state=--seed)`` — the fit of
``bench_scale_ladder.py run`` — on a memory-mapped matrix directory, with timers patched around the functions
an iteration calls (nested: a phase's time includes its children's; "rest" is the untimed remainder).
CPU time (``time.process_time``) and wall time of every phase, per iteration, at ``--threads`` threads
(numba, BLAS): at 1 thread CPU time is the work, unaffected by the other processes of a shared machine.

Phases (names as in the report):

* U-step: ``set_state`` (screening bounds, column norms of W), ``compact`` (per block: ``need`` = the rows
  screening cannot skip, ``R rows`` = their rows of ``R = D W``), ``warm start`` (previous topic rows gathered
  dense), ``lasso``, ``to CSR``, ``stack`` (the blocks as one CSR U), ``switch`` (representation change).
* V-step: ``v_step_topics`` (sparse/dense choice), ``G = UᵀU``, ``prepare`` (ridge inverse),
  ``Φ = X U``, ``ridge solve``, ``cross`` (Σ Φ∘W), ``S = WᵀW`` (per-block Gram), ``advance`` (W drift).
* objective.

Usage::

    PYTHONPATH=src python benchmarks/bench_iteration_phases.py --matrix /work/runs/ladder/w100k/matrix \\
        --k 500 --lambda1 0.000261292 --iters 2 --threads 1 --label after --json phases_100k.json
    PYTHONPATH=src python benchmarks/bench_iteration_phases.py --report --json phases_100k.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path


def _parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--matrix", type=Path, help="matrix directory (rlsi synth / rlsi ingest)")
    p.add_argument("--k", type=int, default=500)
    p.add_argument("--lambda1", type=float, help="λ₁ per 1000 documents")
    p.add_argument("--iters", type=int, default=2)
    p.add_argument("--threads", type=int, default=1, help="numba and BLAS threads (set before import)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--label", default="", help="a name for this run in the report (e.g. before / after)")
    p.add_argument("--json", type=Path, default=None, help="append the phase records to this JSON file")
    p.add_argument("--save", type=Path, default=None,
                   help="save the fitted topics (U.npz, M x K CSR) and W (W.npy) here, for kernel benchmarks")
    p.add_argument("--partial", type=Path, default=None,
                   help="rewrite the iterations measured so far to this JSON file after every V-step")
    p.add_argument("--report", action="store_true", help="only print the tables of the runs in --json")
    a = p.parse_args(argv)
    if not a.report and (a.matrix is None or a.lambda1 is None):
        p.error("--matrix and --lambda1 are required to run (or --report with --json)")
    return a


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None:  # threads before numba / BLAS load
    for var in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ[var] = str(ARGS.threads)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

harness.use_src()


class Clock:
    """Nested timers recording (CPU s, wall s, calls) per phase path; single-threaded use."""

    def __init__(self):
        self.stack = []
        self.record = defaultdict(lambda: [0.0, 0.0, 0])

    @contextmanager
    def phase(self, name):
        self.stack.append(name)
        path = tuple(self.stack)
        c, w = time.process_time(), time.perf_counter()
        try:
            yield
        finally:
            r = self.record[path]
            r[0] += time.process_time() - c
            r[1] += time.perf_counter() - w
            r[2] += 1
            self.stack.pop()

    def patch(self, owner, attr, name, pick=None):
        """Time ``owner.attr`` as phase ``name`` (or ``pick(args, kwargs)`` -> name)."""
        fn = getattr(owner, attr)

        def timed(*a, **k):
            with self.phase(pick(a, k) if pick else name):
                return fn(*a, **k)
        setattr(owner, attr, timed)


def instrument(clock):
    from rlsi.models import local, penalties, screening, steps, tasks

    P = local.RLSIProblem
    clock.patch(P, "u_step", "U-step")
    clock.patch(P, "v_step", "V-step")
    clock.patch(P, "objective", "objective")
    clock.patch(P, "v_step_topics", "v_step_topics")
    clock.patch(local, "csr_rows_to_dense", "switch")
    clock.patch(local, "dense_to_csr", "switch")
    S = screening.ScreenedBatchR
    clock.patch(S, "set_state", "set_state")
    clock.patch(S, "advance", "advance")
    clock.patch(S, "compact", "compact")
    clock.patch(S, "_need", "need")
    clock.patch(screening, "csr_dense_take", "R rows")
    clock.patch(screening, "csr_dense_rows_max", "R rows")
    clock.patch(screening.BatchR, "__call__", "R rows")
    clock.patch(tasks, "csr_take_dense", "warm start")
    clock.patch(tasks, "csr_rows_to_dense", "warm start")
    clock.patch(tasks, "dense_rows_to_csr", "to CSR")
    clock.patch(tasks, "dense_to_csr", "to CSR")
    clock.patch(tasks, "stack_csr_rows", "stack")
    clock.patch(tasks, "csr_csr_dense", "Φ = X U")
    clock.patch(tasks, "csr_dense_rows", "Φ = X U")
    clock.patch(tasks, "dot_sum", "cross")
    clock.patch(tasks, "gram", "S = WᵀW")
    clock.patch(steps, "topic_gram", "G = UᵀU")
    clock.patch(penalties.Penalty, "prepare", "prepare")
    clock.patch(penalties.PreparedPenalty, "solve", None,  # a[0]: the prepared penalty of the step
                pick=lambda a, k: "ridge solve" if a[0].penalty.norm == "l2" else "lasso")


def run(args):
    import warnings

    import numpy as np

    from rlsi.io.matrix import load_matrix
    from rlsi.models import BatchRLSI, local

    harness.log(f"threads {args.threads}; loading {args.matrix}")
    X = load_matrix(args.matrix, vectorizer=False).X
    N, M = X.shape
    # compile / load the kernels on a small corpus first (their time is not the fit's)
    from rlsi.datasets.synthetic import make_corpus

    small = make_corpus(300, 2000, 30, n_topics=5, seed=1, dtype=X.dtype).X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        BatchRLSI(5, lambda1=0.001, max_iter=2, random_state=0).fit(small)
    clock = Clock()
    instrument(clock)
    iters = []
    u_step = local.RLSIProblem.u_step

    def per_iteration(self, executor):  # a fresh record per iteration; setup before the first U-step
        iters.append(clock.record)
        clock.record = defaultdict(lambda: [0.0, 0.0, 0])
        return u_step(self, executor)
    local.RLSIProblem.u_step = per_iteration
    v_step = local.RLSIProblem.v_step

    def dump_after(self, executor):  # what a run cut short by a time limit still leaves
        out = v_step(self, executor)
        if args.partial:
            done = iters[1:] + [clock.record]
            args.partial.write_text(json.dumps({"label": args.label, "N": N, "M": M, "K": args.k, "iterations": [
                {"/".join(p): v for p, v in r.items()} for r in done]}, indent=1))
        return out
    local.RLSIProblem.v_step = dump_after
    model = BatchRLSI(args.k, lambda1=args.lambda1, lambda2=1.0, max_iter=args.iters, tol=0.0,
                      random_state=args.seed)  # λ₂ of the paper, as the recorded results
    c, w = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        W = model.fit_transform(X)
    total = (time.process_time() - c, time.perf_counter() - w)
    iters.append(clock.record)
    setup, iters = iters[0], iters[1:]
    U = model.components_
    if args.save:
        import scipy.sparse as sp

        args.save.mkdir(parents=True, exist_ok=True)
        sp.save_npz(args.save / "U.npz", U.T.tocsr(), compressed=False)
        np.save(args.save / "W.npy", W)
    out = {"label": args.label, "matrix": str(args.matrix), "N": N, "M": M, "nnz": int(X.nnz), "K": args.k,
           "lambda1": args.lambda1, "threads": args.threads, "dtype": str(X.dtype), "total_cpu_s": total[0],
           "total_wall_s": total[1], "nnz_U": int(U.nnz), "avgcomp": U.nnz / (args.k * M),
           "objective": [float(o) for o in model.objective_],
           "machine": harness.machine_line(harness.machine_facts()),
           "setup": {"/".join(p): v for p, v in setup.items()},
           "iterations": [{"/".join(p): v for p, v in r.items()} for r in iters]}
    return out


def report(rec):
    """Markdown: per iteration, every phase with CPU s, wall s, calls and its share of the iteration."""
    lines = [f"### {rec['label'] or 'run'}: {rec['N']} x {rec['M']}, nnz {rec['nnz']}, K = {rec['K']}, "
             f"{rec['dtype']}, {rec['threads']} thread(s)", "",
             f"λ1 {rec['lambda1']} per 1000 docs; nnz(U) {rec['nnz_U']}, AvgComp {rec['avgcomp']:.5f}; "
             f"objective {rec['objective']}; fit total {rec['total_cpu_s']:.1f} s CPU, "
             f"{rec['total_wall_s']:.1f} s wall", ""]
    for i, it in enumerate(rec["iterations"], 1):
        top = sum(v[0] for p, v in it.items() if "/" not in p)
        lines += [f"Iteration {i} (CPU {top:.2f} s):", "", "| phase | CPU s | wall s | calls | share |",
                  "|---|---:|---:|---:|---:|"]
        kids = defaultdict(list)  # a parent's children in first-finished order; parents before children
        for p in it:
            kids[p.rsplit("/", 1)[0] if "/" in p else ""].append(p)

        def visit(p):
            nonlocal lines
            cpu, wall, n = it[p]
            depth = p.count("/")
            name = "&nbsp;&nbsp;" * depth + p.rsplit("/", 1)[-1]
            lines.append(f"| {name} | {cpu:.2f} | {wall:.2f} | {n} | {cpu / top:.1%} |")
            for c in kids.get(p, []):
                visit(c)
            if p in kids:
                rest = cpu - sum(it[c][0] for c in kids[p])
                lines.append(f"| {'&nbsp;&nbsp;' * (depth + 1)}(rest) | {rest:.2f} |  |  | {rest / top:.1%} |")
        for p in kids[""]:
            visit(p)
        lines.append("")
    return "\n".join(lines)


def main():
    if ARGS.report:  # re-render saved runs
        for rec in json.loads(ARGS.json.read_text()):
            print(report(rec))
        return
    rec = run(ARGS)
    text = report(rec)
    print(text)
    if ARGS.json:
        old = json.loads(ARGS.json.read_text()) if ARGS.json.exists() else []
        old.append(rec)
        ARGS.json.parent.mkdir(parents=True, exist_ok=True)
        ARGS.json.write_text(json.dumps(old, indent=1))


if __name__ == "__main__":
    main()
