"""``BatchRLSI(target_terms_per_topic=T)`` (#9): CPU time of the whole fit (λ₁ search included) with the code
under ``--src`` — compare a checkout before and after the fit started continuing from the search's state.

Each run is a child process with 1 numba/BLAS thread, timed by its CPU time (``time.process_time``; the
cores are shared with other work, which inflates wall clock but not the CPU time of a 1-thread run). The
matrix is ``make_corpus(50000, 200000, 150, n_topics=200, seed=0)`` (bench_batch.py's), cached as an npz.

Usage::

    PYTHONPATH=src python benchmarks/bench_lambda1_search.py run --src /tmp/before/src --label before \\
        --target 1500 --json OUT.json
    PYTHONPATH=src python benchmarks/bench_lambda1_search.py run --src src --label after --target 1500 --json OUT.json
    PYTHONPATH=src python benchmarks/bench_lambda1_search.py report --json OUT.json --md OUT.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import harness  # noqa: E402

CACHE = Path("/tmp/rlsi_bench_lambda1_50k.npz")


def child(spec):
    sys.path.insert(0, spec["src"])
    import time
    import warnings

    import numpy as np
    import scipy.sparse as sp

    from rlsi.datasets.synthetic import make_corpus
    from rlsi.models import BatchRLSI, batch, local

    assert Path(batch.__file__).resolve().is_relative_to(Path(spec["src"]).resolve()), batch.__file__
    if not CACHE.exists():
        sp.save_npz(CACHE, make_corpus(50000, 200000, 150, n_topics=200, seed=0).X.tocsr())
    X = sp.load_npz(CACHE).tocsr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        BatchRLSI(5, target_terms_per_topic=20, max_iter=2, random_state=0).fit(X[:500])  # compile first
    steps = []
    original = local.RLSIProblem.u_step

    def counted(self, executor):
        steps.append(1)
        return original(self, executor)

    local.RLSIProblem.u_step = counted
    model = BatchRLSI(spec["k"], target_terms_per_topic=spec["target"], max_iter=spec["max_iter"], tol=spec["tol"],
                      random_state=0)
    t = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    cpu = time.process_time() - t
    nnz_rows = np.diff(model.components_.indptr)
    return {"cpu_s": cpu, "n_iter": int(model.n_iter_), "u_steps": len(steps), "objective": float(model.objective_[-1]),
            "terms_per_topic": float(model.components_.nnz / spec["k"]), "median_terms": float(np.median(nnz_rows)),
            "lambda1": float(model.lambda1_), "dead": int(np.sum(nnz_rows == 0))}


def cmd_run(a):
    spec = {"src": str(Path(a.src).resolve()), "k": a.k, "target": a.target, "max_iter": a.max_iter, "tol": a.tol}
    env = harness.child_env(harness.thread_env(1))
    env["PYTHONPATH"] = spec["src"]
    proc = subprocess.run([sys.executable, __file__, "child", json.dumps(spec)], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    rec = json.loads(proc.stdout.strip().splitlines()[-1])
    rec.update(spec=spec, label=a.label, command=harness.command_line(__file__), machine=harness.machine_facts())
    records = json.loads(a.json.read_text()) if a.json.exists() else []
    records.append(rec)
    harness.write_json(a.json, records)
    harness.log(f"{a.label}: {rec['cpu_s']:.1f} CPU s, {rec['u_steps']} U-steps, objective {rec['objective']:.6g}, "
                f"{rec['terms_per_topic']:.0f} terms/topic")
    return 0


def cmd_report(a):
    records = json.loads(a.json.read_text())
    L = ["# λ₁ from a target number of terms per topic: the whole fit, before and after (#9)", "",
         "Commands (each appended one record to the JSON):", ""]
    L += [f"    {c}" for c in dict.fromkeys(r["command"] for r in records)]
    L += ["", f"    {harness.command_line(__file__)}", "", harness.machine_line(records[-1]["machine"]), ""]
    rows = [[r["label"], r["spec"]["k"], r["spec"]["target"], f"{r['spec']['tol']:g}", r["spec"]["max_iter"],
             f"{r['cpu_s']:.1f}", r["u_steps"], r["n_iter"], f"{r['objective']:.6g}", f"{r['terms_per_topic']:.0f}",
             f"{r['median_terms']:.0f}", f"{r['lambda1']:.4g}", r["dead"]] for r in records]
    L += [*harness.md_table(["code", "K", "target terms/topic", "tol", "max_iter", "CPU s (search + fit)",
                            "U-steps (search + fit)", "n_iter_", "final objective", "terms/topic", "median",
                            "λ₁ (per 1000 docs)", "dead"], rows), ""]
    L += ["CPU time of the child process (1 numba/BLAS thread, `time.process_time`), compilation excluded; the "
          "cores were shared with other work (several agents on this machine), which inflates wall clock, not "
          "this. 'before': the fit restarted from W₀ after the search; 'after': it continues from the search's "
          "last problem (its W and U, the λ₁ found)."]
    harness.write_report(a.md, "\n".join(L), marker=True)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--src", required=True)
    r.add_argument("--label", required=True)
    r.add_argument("--k", type=int, default=200)
    r.add_argument("--target", type=int, default=1500)
    r.add_argument("--max-iter", type=int, default=100)
    r.add_argument("--tol", type=float, default=1e-4)
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
