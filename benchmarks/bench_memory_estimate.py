"""The memory estimate of a fit against its measured peak: batch and online, float32 and float64, at the
estimators' defaults (λ1 = 0.01 per 1000 documents, λ2 = 1e-3, run until they converge) and at λ2 = 1.

Each case fits on a matrix directory (``rlsi synth`` / ``rlsi ingest``, memory-mapped) in its own process:
the kernels are compiled first (their memory is the baseline, not the fit's), then the estimates of
:mod:`rlsi.models.memory_check` are taken — the floor (no topics), the bound (topics at the density bound or
dense) and the prediction (topics predicted on a sample: the estimate that decides between the two, and the
online fit's one estimate) — with the CPU time of the prediction, and the fit runs; the peak is the child's
``VmHWM`` (never a time). The estimate errs on the safe side when it is above the peak or within a few
percent below it.

Usage::

    PYTHONPATH=src python benchmarks/bench_memory_estimate.py run --matrix DIR --k 200 --lambda1 0.01 \
        --lambda2 1e-3 --json OUT.json                      # appends one record (batch, run to convergence)
    PYTHONPATH=src python benchmarks/bench_memory_estimate.py run --matrix DIR --k 200 --online 2000 ...
    PYTHONPATH=src python benchmarks/bench_memory_estimate.py report --json OUT.json --md OUT.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402


def child(spec):
    import warnings

    import numpy as np

    from rlsi.datasets.synthetic import make_corpus
    from rlsi.io.matrix import load_matrix
    from rlsi.models import BatchRLSI, OnlineRLSI
    from rlsi.models.memory import current_rss, estimate_for, peak_rss
    from rlsi.models.memory_check import bound_estimate, floor_estimate

    dtype = load_matrix(spec["matrix"]).X.dtype
    small = make_corpus(300, 2000, 30, n_topics=5, seed=1, dtype=dtype).X  # compile every kernel first
    BatchRLSI(5, max_iter=2, random_state=0).fit(small)
    OnlineRLSI(5, batch_size=100, random_state=0).fit(small)
    estimate_for(BatchRLSI(5, lambda1=0.001, random_state=0), small)  # the prediction's kernels too
    del small
    baseline = current_rss()
    X = load_matrix(spec["matrix"]).X
    kw = dict(lambda1=spec["lambda1"], lambda2=spec["lambda2"], random_state=0)
    if spec.get("online"):
        model = OnlineRLSI(spec["k"], batch_size=spec["online"], **kw)
    else:
        model = BatchRLSI(spec["k"], **kw, **({"max_iter": spec["iters"]} if spec.get("iters") else {}))
    t = time.process_time()
    estimate = estimate_for(model, X, baseline=baseline)
    predict_cpu = time.process_time() - t
    floor = bound = None
    if not spec.get("online"):
        floor = floor_estimate(model, X, baseline).peak
        bound = bound_estimate(model, X, baseline).peak
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    fit_s = time.perf_counter() - t
    comp = model.components_
    density = comp.nnz / float(np.prod(comp.shape)) if hasattr(comp, "nnz") else float(np.mean(comp != 0))
    return {"baseline": baseline, "peak": peak_rss(), "estimate": estimate.peak, "phase": estimate.phase,
            "components": estimate.components, "floor": floor, "bound": bound, "predict_cpu_s": predict_cpu,
            "fit_s": fit_s, "n_iter": int(getattr(model, "n_iter_", 0) or getattr(model, "n_batches_", 0)),
            "density": density, "shape": list(X.shape), "nnz": int(X.nnz), "dtype": str(X.dtype)}


def cmd_run(a):
    spec = {"matrix": str(a.matrix), "k": a.k, "lambda1": a.lambda1, "lambda2": a.lambda2, "iters": a.iters,
            "online": a.online}
    env = harness.child_env(harness.thread_env(numba=a.threads, blas=1))  # the test's threads (test_memory.py)
    proc = subprocess.run([sys.executable, __file__, "child", json.dumps(spec)], env=env, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    rec = json.loads(proc.stdout.strip().splitlines()[-1])
    rec.update(spec=spec, command=harness.command_line(__file__), threads=a.threads, machine=harness.machine_facts())
    records = json.loads(a.json.read_text()) if a.json.exists() else []
    records.append(rec)
    harness.write_json(a.json, records)
    e, p = rec["estimate"], rec["peak"]
    harness.log(f"estimate {e / 2**30:.2f} GB, peak {p / 2**30:.2f} GB ({100 * (e - p) / p:+.1f} %)")
    return 0


def cmd_report(a):
    records = json.loads(a.json.read_text())
    gb = 2**30
    L = ["# The memory estimate of a fit against the measured peak", "",
         "Commands (each appended one record to the JSON):", ""]
    L += [f"    {c}" for c in dict.fromkeys(r["command"] for r in records)]
    L += ["", f"    {harness.command_line(__file__)}", ""]
    L += [harness.machine_line(records[-1]["machine"]), ""]
    rows, errors = [], []
    for r in records:
        p = r["peak"]
        pct = lambda e: f"{100 * (e - p) / p:+.1f} %"  # noqa: E731
        N, M = r["shape"]
        sp = r["spec"]
        fit = f"online, batches of {sp['online']}" if sp.get("online") else "batch"
        iters = f"{r['n_iter']}" + ("" if sp.get("online") or sp.get("iters") else " (converged)")
        errors.append(100 * (r["estimate"] - p) / p)
        gbs = lambda e: "" if e is None else f"{e / gb:.2f} ({pct(e)})"  # noqa: E731
        rows.append([f"{N} x {M}", r["nnz"], r["dtype"], sp["k"], fit, f"{sp['lambda1']:g}, {sp['lambda2']:g}",
                     f"{r['density']:.4f}", iters, f"{p / gb:.2f}", gbs(r["estimate"]), gbs(r["floor"]),
                     gbs(r["bound"]), f"{r['predict_cpu_s']:.1f}", f"{r['baseline'] / gb:.2f}"])
    L += [*harness.md_table(["N x M", "nnz(X)", "dtype", "K", "fit", "λ1, λ2", "topic density", "iterations",
                            "peak RSS GiB", "estimate GiB", "floor GiB", "bound GiB", "estimate CPU s",
                            "baseline GiB"], rows), ""]
    L += [f"The estimate against the peak: {min(errors):+.1f} % to {max(errors):+.1f} % over these "
          f"{len(records)} fits. Peak RSS: the child's `VmHWM` (GiB: 2^30 bytes; the baseline, the process after "
          "compiling the kernels, included in it and in every estimate). The estimate is the prediction of "
          "`rlsi.models.memory.estimate_for` (topics predicted on a sample of 20,000 documents, alternated as "
          "many times as the fit; one mini-batch for an online fit), with the allocator slack; the floor and "
          "the bound are what `rlsi.models.memory_check` decides with first (the floor below the peak, the "
          "bound above it). The cores were shared with other work: memory is not affected by that, times are."]
    harness.write_report(a.md, "\n".join(L), marker=True)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--matrix", type=Path, required=True)
    r.add_argument("--k", type=int, default=200)
    r.add_argument("--lambda1", type=float, default=0.01, help="per 1000 documents (default: the estimators')")
    r.add_argument("--lambda2", type=float, default=1e-3, help="default: the estimators'")
    r.add_argument("--iters", type=int, default=None, help="batch iterations (default: the model's, to convergence)")
    r.add_argument("--online", type=int, default=None, metavar="BATCH", help="an online fit in mini-batches of BATCH")
    r.add_argument("--threads", type=int, default=2, help="numba threads (BLAS: 1)")
    r.add_argument("--json", type=Path, required=True)
    q = sub.add_parser("report")
    q.add_argument("--json", type=Path, required=True)
    q.add_argument("--md", type=Path, required=True)
    c = sub.add_parser("child")
    c.add_argument("spec")
    a = ap.parse_args(argv)
    if a.cmd == "child":
        print(json.dumps(child(json.loads(a.spec))))
        return 0
    return {"run": cmd_run, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
