"""The memory estimate printed before a batch fit against the measured peak.

Each case fits ``BatchRLSI`` on a matrix directory (``rlsi synth`` / ``rlsi ingest``, memory-mapped) in its
own process: the kernels are compiled first (their memory is the baseline, not the fit's), then the
estimate is taken three ways — predicted topics (:func:`rlsi.models.memory.predict_topics`, what ``rlsi fit
--matrix`` prints), the 0.05 density bound, and the fit's own AvgComp after the fact as a bound (what the
scale ladder printed) — and the fit runs; the peak is the child's ``VmHWM`` (never a time).

Usage::

    PYTHONPATH=src python benchmarks/bench_memory_estimate.py run --matrix DIR --k 200 --lambda1 0.00026 \\
        --iters 2 --json OUT.json          # appends one record
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
    from rlsi.models import BatchRLSI
    from rlsi.models.memory import current_rss, estimate_for, peak_rss, predict_topics

    dtype = load_matrix(spec["matrix"]).X.dtype
    small = make_corpus(300, 2000, 30, n_topics=5, seed=1, dtype=dtype).X  # compile every kernel first
    BatchRLSI(5, max_iter=2, random_state=0).fit(small)
    est_small = estimate_for(BatchRLSI(5, lambda1=0.001, random_state=0), small)  # compile the prediction's too
    del small, est_small
    baseline = current_rss()
    X = load_matrix(spec["matrix"]).X
    kw = dict(lambda2=1.0, max_iter=spec["iters"], tol=0.0, random_state=0)  # the paper's λ₂, as recorded
    if spec.get("target"):
        model = BatchRLSI(spec["k"], target_terms_per_topic=spec["target"], **kw)
    else:
        model = BatchRLSI(spec["k"], lambda1=spec["lambda1"], **kw)
    t = time.process_time()
    predicted = estimate_for(model, X, baseline=baseline)
    predict_cpu = time.process_time() - t
    bound = estimate_for(model, X, baseline=baseline, topic_density=0.05)
    # what the fit did (read, not changed): the peak after each step, the V-step's work share and copy of U
    from rlsi.models import batch

    steps, shares = [{"step": "before the fit", "rss": current_rss(), "peak": peak_rss()}], []
    originals = {n: getattr(batch.RLSIProblem, n) for n in ("u_step", "v_step", "v_step_topics")}

    def wrap(name):
        def run(self, *args):
            out = originals[name](self, *args)
            if name == "v_step_topics":
                U = self.U
                if hasattr(U, "indptr"):
                    work = float(np.dot(self._df, np.diff(U.indptr))) / (self.X.nnz * U.shape[1])
                    shares.append({"work_share": work, "copy": not hasattr(out, "indptr")})
            else:
                steps.append({"step": name, "rss": current_rss(), "peak": peak_rss()})
            return out
        return run

    for n in originals:
        setattr(batch.RLSIProblem, n, wrap(n))
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    fit_s = time.perf_counter() - t
    for n, f in originals.items():
        setattr(batch.RLSIProblem, n, f)
    peak = peak_rss()
    avgcomp = model.components_.nnz / float(np.prod(model.components_.shape))
    after = estimate_for(model, X, baseline=baseline, topic_density=avgcomp)
    return {"baseline": baseline, "peak": peak, "estimate": predicted.peak, "phase": predicted.phase,
            "components": predicted.components, "estimate_bound": bound.peak, "estimate_avgcomp": after.peak,
            "predict_cpu_s": predict_cpu, "steps": steps, "v_step_topics": shares,
            "predicted": vars(predict_topics(X, model.n_components, lambda1=model.lambda1_effective_,
                                             random_state=0)), "fit_s": fit_s, "avgcomp": avgcomp, "lambda1": float(model.lambda1_),
            "topic_representation": model.topic_representation_, "shape": list(X.shape), "nnz": int(X.nnz),
            "dtype": str(X.dtype)}


def cmd_run(a):
    spec = {"matrix": str(a.matrix), "k": a.k, "lambda1": a.lambda1, "target": a.target, "iters": a.iters}
    env = harness.child_env(harness.thread_env(a.threads))
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
    harness.log(f"estimate {e / 2**30:.2f} GB, peak {p / 2**30:.2f} GB ({100 * (e - p) / p:+.1f} %); "
                f"bound {100 * (rec['estimate_bound'] - p) / p:+.1f} %")
    return 0


def cmd_report(a):
    records = json.loads(a.json.read_text())
    gb = 2**30
    L = ["# The memory estimate of a batch fit against the measured peak", "",
         "Commands (each appended one record to the JSON):", ""]
    L += [f"    {c}" for c in dict.fromkeys(r["command"] for r in records)]
    L += ["", f"    {harness.command_line(__file__)}", ""]
    L += [harness.machine_line(records[-1]["machine"]), ""]
    rows = []
    for r in records:
        p = r["peak"]
        pct = lambda e: f"{100 * (e - p) / p:+.1f} %"  # noqa: E731
        N, M = r["shape"]
        asked = f"{r['spec']['target']} terms/topic" if r["spec"].get("target") else f"λ1 {r['spec']['lambda1']:g}"
        rows.append([f"{N} x {M}", r["nnz"], r["dtype"], r["spec"]["k"], asked, f"{r['avgcomp']:.4f}",
                     r["spec"]["iters"], f"{p / gb:.2f}", f"{r['estimate'] / gb:.2f} ({pct(r['estimate'])})",
                     f"{r['estimate_bound'] / gb:.2f} ({pct(r['estimate_bound'])})",
                     f"{r['estimate_avgcomp'] / gb:.2f} ({pct(r['estimate_avgcomp'])})", f"{r['predict_cpu_s']:.1f}",
                     f"{r['baseline'] / gb:.2f}"])
    L += [*harness.md_table(["N x M", "nnz(X)", "dtype", "K", "asked", "AvgComp", "iters", "peak RSS GB",
                            "estimate GB (predicted)", "estimate GB (0.05 bound)", "estimate GB (AvgComp as bound)",
                            "prediction CPU s", "baseline GB"], rows), ""]
    L += ["Peak RSS: the child's `VmHWM` (the baseline, the process after compiling the kernels, included in "
          "both). The prediction runs the first U-step on 20,000 sampled documents (`predict_topics`); its CPU "
          "time is in the table. The cores were shared with other work (several agents on this machine): "
          "memory is not affected by that, times are."]
    harness.write_report(a.md, "\n".join(L), marker=True)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--matrix", type=Path, required=True)
    r.add_argument("--k", type=int, default=200)
    r.add_argument("--lambda1", type=float, default=0.001, help="per 1000 documents")
    r.add_argument("--target", type=int, default=None, help="target_terms_per_topic instead of --lambda1")
    r.add_argument("--iters", type=int, default=2)
    r.add_argument("--threads", type=int, default=2)
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
