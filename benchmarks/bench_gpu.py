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
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

import gpu_corpus  # noqa: E402
import harness  # noqa: E402
import numpy as np  # noqa: E402

PAPER = (1_600_000, 7_000_000, 300, 500)  # docs, terms, tokens per document, K
MID = (400_000, 2_000_000, 300, 500)
CHECK = (50_000, 200_000, 150, 200)
SMOKE = {"paper": (2_000, 8_000, 30, 16), "mid": (1_500, 6_000, 30, 16), "check": (1_000, 4_000, 50, 15)}
#: Stages in order, with their caps in seconds.
STAGES = {"paper": 200, "paper-online": 55, "card-tests": 100, "check": 60, "options": 20, "online": 20, "mid": 120}
LIMIT = 40 * 10 ** 9  # the paper shape's memory target: the pool limit of the paper stages
CHECK_LAMBDA1 = 0.000679  # per 1000 documents: AvgComp 0.0086 on the check corpus (the paper's compactness)
LAMBDA2 = 1.0  # the paper's λ₂


# ----------------------------------------------------------------------------------------- clock, record
class Run:
    """The clock (``budget`` seconds in all, each stage its cap) and the record, written after each change."""

    def __init__(self, a, be_name):
        self.a, self.be_name = a, be_name
        self.t0 = time.perf_counter()
        self.rec = {"device": None, "facts": None, "stages": {}, "plan": dict(STAGES), "budget_s": a.budget}
        self.deadline = self.t0 + a.budget
        self.children = []  # subprocesses to end at a hard stop

    def left(self):
        return self.deadline - time.perf_counter()

    def stage(self, name):
        cap = min(self.a.caps.get(name, STAGES[name]), self.left())
        st = {"status": "running", "cap_s": round(cap, 1), "started_s": round(time.perf_counter() - self.t0, 1)}
        self.rec["stages"][name] = st
        st["_end"] = time.perf_counter() + cap
        self.write()
        harness.log(f"== {name} (cap {cap:.0f} s, {self.left():.0f} s left)")
        return st

    @staticmethod
    def time_left(st):
        return st["_end"] - time.perf_counter()

    def done(self, st, status="done"):
        st["status"] = status
        st["seconds"] = round(time.perf_counter() - self.t0 - st["started_s"], 1)
        self.write()

    def write(self):
        self.rec["seconds"] = round(time.perf_counter() - self.t0, 1)
        clean = json.loads(json.dumps(self.rec, default=str, indent=None), object_hook=lambda d: {
            k: v for k, v in d.items() if not k.startswith("_")})
        if self.a.json:
            tmp = Path(str(self.a.json) + ".tmp")
            tmp.write_text(json.dumps(clean, indent=1))
            os.replace(tmp, self.a.json)
        out = Path(self.a.out)  # replaced whole (a kill mid-write leaves the previous report), notes kept
        tmp = out.with_name(out.name + ".tmp")
        if out.exists():
            shutil.copyfile(out, tmp)
        harness.write_report(tmp, report(self.a, clean), marker=True)
        os.replace(tmp, out)
        if self.a.on_write is not None:
            self.a.on_write(clean)


def sync_time(be, fn):
    be.synchronize()
    t = time.perf_counter()
    out = fn()
    be.synchronize()
    return out, time.perf_counter() - t


class Memory:
    """CuPy's pool on a card (None on numpy): emptied, its limit, what is used and what it held at most."""

    def __init__(self, be):
        self.pool = be.xp.get_default_memory_pool() if be.is_cuda else None
        self.be = be

    def reset(self):
        if self.pool is not None:
            self.pool.free_all_blocks()

    def limit(self, size):
        if self.pool is not None:
            self.pool.set_limit(size=int(size))

    def read(self):
        if self.pool is None:
            return {}
        free, total = self.be.xp.cuda.runtime.memGetInfo()
        return {"used": int(self.pool.used_bytes()), "held": int(self.pool.total_bytes()),
                "card_used": int(total) - int(free)}


def oom_types(be):
    return (MemoryError,) + ((be.xp.cuda.memory.OutOfMemoryError,) if be.is_cuda else ())


# ----------------------------------------------------------------------------------------- the paper stages
def calibrate(be, p, density, sample=20_000, seed=0):
    """λ₁ (effective) for about ``density`` non-zero topic weights: 2 x the ``1 − density`` quantile of ``|r|``
    of R = D W on ``sample`` terms of the problem's first term block (a guide: the AvgComp reached is
    reported)."""
    xp = be.xp
    _, _, Db = next(iter(p.D))
    rows = np.sort(np.random.default_rng(seed).choice(Db.shape[0], size=min(sample, Db.shape[0]), replace=False))
    R = xp.abs(xp.asarray(Db[xp.asarray(rows)] @ p.Wd)).ravel()
    return 2.0 * float(xp.quantile(R.astype(xp.float64), 1.0 - density))


def batch_stage(run, st, be, sizes, *, limit):
    """Generate the corpus on the card, then :func:`fit_stage` under ``limit`` (and once more without it after
    running out of memory, as time allows). Returns the corpus."""
    N, M, tok, K = sizes
    if "warm_s" not in run.rec:  # CuPy's kernels compiled on a small fit (a fresh machine: NVRTC, once each)
        run.rec["warm_s"] = st["warm_s"] = sync_time(be, lambda: warm_device(be, run.a))[1]
        run.write()
    Memory(be).reset()
    X, st["gen_s"] = sync_time(be, lambda: gpu_corpus.device_corpus(be, N, M, tok, n_topics=K, seed=1))
    st.update(docs=N, terms=M, nnz=int(X.nnz), k=K, limit=limit)
    run.write()
    fit_stage(run, st, be, X, K, limit)
    if st.get("memory_pass") is False and run.time_left(st) > 30:
        st["unlimited"] = {"_end": st["_end"], "docs": N, "terms": M, "nnz": st["nnz"], "k": K, "limit": None}
        fit_stage(run, st["unlimited"], be, X, K, None)
    return X


def warm_device(be, a):
    """A small fit of the paper stage's code on the card: generator, initialisation, problem, two iterations."""
    from rlsi import BatchRLSI
    from rlsi.gpu.batch import DeviceRLSIProblem
    from rlsi.gpu.placement import initial_doc_vectors

    N, M, tok, K = SMOKE["paper"]
    X = gpu_corpus.device_corpus(be, N, M, tok, n_topics=K, seed=2)
    W0 = initial_doc_vectors(be, BatchRLSI(K, lambda2=LAMBDA2, random_state=0), X)
    p = DeviceRLSIProblem(be, X, W0, lambda1=1.0, lambda2=LAMBDA2, topic_sweeps=a.sweeps)
    p.set_lambda1(calibrate(be, p, a.density))
    for _ in range(2):
        p.u_step()
        p.v_step()
        p.objective()


def fit_stage(run, st, be, X, K, limit):
    """W₀ on the card, the problem (its plan checked against ``limit``), λ₁, then :func:`iterate`; the pool
    limited to ``limit`` bytes throughout (None: no limit); out of memory is recorded as a failed target."""
    from rlsi import BatchRLSI
    from rlsi.gpu.batch import DeviceRLSIProblem
    from rlsi.gpu.placement import initial_doc_vectors
    from rlsi.gpu.memory import size

    a, mem = run.a, Memory(be)
    mem.reset()
    mem.limit(limit or 0)
    p = W0 = None
    try:
        W0, st["init_s"] = sync_time(be, lambda: initial_doc_vectors(be, BatchRLSI(K, lambda2=LAMBDA2,
                                                                                   random_state=0), X))
        p, st["setup_s"] = sync_time(be, lambda: DeviceRLSIProblem(be, X, W0, lambda1=1.0, lambda2=LAMBDA2,
                                                                    topic_sweeps=a.sweeps, budget=limit))
        W0 = None
        lam = calibrate(be, p, a.density)
        p.set_lambda1(lam)
        st.update(lambda1_effective=lam, lambda1_per_1000=lam * 1000.0 / X.shape[0], plan_bytes=p.plan.total,
                  plan=p.plan.describe(), setup_mem=mem.read())
        mem.reset()
        st["resident"] = mem.read()
        run.write()
        iterate(run, st, be, p, mem, X.shape[1] * K)
        st["memory_pass"] = True if limit is not None and be.is_cuda else None
    except oom_types(be) as exc:
        st["memory_pass"] = False
        st["oom"] = f"{type(exc).__name__}: {exc}"
        harness.log(f"out of memory under the {size(limit or 0)} limit: {exc}")
    finally:
        p = W0 = None
        mem.limit(0)
        mem.reset()
        run.write()


def iterate(run, st, be, p, mem, MK):
    """Iterations until the stage's cap: per iteration the steps' seconds, memory and the objective."""
    st["rows"] = rows = []
    last = 0.0
    for it in range(run.a.shape_iters):
        if it and run.time_left(st) < 1.2 * last:
            st["stopped"] = "cap"
            break
        row = {}
        measure = it < run.a.mem_iters
        for name, step in (("u", p.u_step), ("v", p.v_step)):
            if measure:
                mem.reset()
            diag, row[name] = sync_time(be, step)
            if name == "u":
                row["nnz"] = int(diag["nnz"])
            if measure:
                row[f"mem_{name}"] = mem.read()
        row["objective"] = float(p.objective())
        row["avgcomp"] = row["nnz"] / MK
        row["plan_at_density"] = p.plan_at(row["avgcomp"]).total
        last = row["u"] + row["v"]
        rows.append(row)
        harness.log(f"  iteration {it + 1}: U {row['u']:.2f} s, V {row['v']:.2f} s, AvgComp {row['avgcomp']:.4f}")
        run.write()


def paper_online_stage(run, st, be, X, sizes):
    """OnlineRLSI's steps at the paper vocabulary under the limit (see the docstring)."""
    from rlsi import OnlineRLSI
    from rlsi.gpu.memory import check_online
    from rlsi.gpu.placement import DevicePlacement

    N, M, _, K = sizes
    a, mem = run.a, Memory(be)
    lam = run.rec["stages"].get("paper", {}).get("lambda1_per_1000") or 0.05
    n = min(N, a.online_batch * a.online_batches)
    host = be.to_host(X[:n]) if be.is_cuda else X[:n]
    mem.reset()
    mem.limit(LIMIT if be.is_cuda else 0)
    est = OnlineRLSI(K, lambda1=lam, lambda2=LAMBDA2, rho=1.0, n_inner=10, batch_size=a.online_batch,
                     topic_sweeps=a.sweeps, random_state=0, placement=DevicePlacement(be))
    bnnz = int(host.nnz * a.online_batch / max(n, 1)) + 1
    plan = check_online(be, M, K, bnnz, a.online_batch, budget=LIMIT, n_inner=10, topic_density=a.density)
    st.update(docs_available=n, terms=M, k=K, batch=a.online_batch, lambda1=lam, plan_bytes=plan.total,
              plan=plan.describe(), rows=[])
    try:
        last = 0.0
        for i, s in enumerate(range(0, n, a.online_batch)):
            if i and run.time_left(st) < 1.5 * last:
                st["stopped"] = "cap"
                break
            b = host[s:s + a.online_batch]
            mem.reset()
            _, last = sync_time(be, lambda: est.partial_fit(b))  # the batch compacted and moved, the step, W back
            live = int(np.count_nonzero(np.diff(est.components_.tocsc().indptr)))
            st["rows"].append({"s": last, "mem": mem.read(), "live_rows": live})
            run.write()
        st["memory_pass"] = True if be.is_cuda else None
    except oom_types(be) as exc:
        st["memory_pass"] = False
        st["oom"] = f"{type(exc).__name__}: {exc}"
    finally:
        est = None
        mem.limit(0)
        mem.reset()
    later = [r["s"] for r in st["rows"][1:]] or [r["s"] for r in st["rows"]]
    if later:
        st["docs_per_s"] = a.online_batch / float(np.mean(later))


# ----------------------------------------------------------------------------------------- the other stages
def card_tests_stage(run, st):
    """tests/gpu/test_cuda.py in a subprocess, outcomes as they come (the log keeps them on a timeout)."""
    cmd = [sys.executable, "-m", "pytest", str(HERE.parent / run.a.card_tests), "-v",
           "-p", "no:cacheprovider", "-p", "no:randomly", "-rs"]
    # beside the report on a card ($OUT); a smoke run's log is no result: it goes to the temporary folder
    log = (Path(tempfile.gettempdir()) / "rlsi_gpu_smoke_test_cuda.log" if run.a.smoke
           else Path(run.a.out).with_name("test_cuda.log"))
    st.update(command=" ".join(cmd[2:]), outcomes={})
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                cwd=HERE.parent, env=harness.child_env({"PYTHONUNBUFFERED": "1"}))
        run.children.append(proc)
        cap = threading.Timer(max(1.0, run.time_left(st)), proc.kill)  # also when a test hangs silently
        cap.start()
        try:
            for line in iter(proc.stdout.readline, ""):
                f.write(line)
                f.flush()
                for outcome in ("PASSED", "FAILED", "SKIPPED", "ERROR"):
                    if "::" in line and f" {outcome}" in line:
                        st["outcomes"][line.split(" ")[0].split("::")[-1]] = outcome
                        run.write()
        finally:
            proc.wait()
            cap.cancel()
    if proc.returncode is not None and proc.returncode < 0:
        st["stopped"] = "cap"
    st["returncode"] = proc.returncode
    st["log"] = str(log)


def check_stage(run, st, be_name, sizes):
    from rlsi import BatchRLSI
    from rlsi.datasets.synthetic import make_corpus
    from rlsi.gpu.backend import resolve
    from rlsi.gpu.batch import DeviceRLSIProblem
    from rlsi.kernels.threads import compute_threads
    from rlsi.models.solver import initial_doc_vectors, local_problem

    a = run.a
    N, M, tok, K = sizes
    X = make_corpus(N, M, tok, n_topics=min(200, K * 2), seed=0, dtype=np.float32).X
    st.update(docs=N, terms=M, nnz=int(X.nnz), k=K)
    est = BatchRLSI(K, lambda1=CHECK_LAMBDA1 if not a.smoke else 0.05, lambda2=LAMBDA2, topic_sweeps=a.sweeps,
                    random_state=0, n_jobs=a.threads)
    lam = est.effective_lambda1(N)
    with compute_threads(a.threads):
        W0 = initial_doc_vectors(X, est)
        cpu = run_problem(None, local_problem(X, W0.copy(), lam, est), a.iters)
    st["cpu"] = {"rows": cpu, **per_iter(cpu), "threads": a.threads}
    run.write()
    st["device"] = []
    for name in (be_name, be_name.split(":")[0] + ":float64"):
        if run.time_left(st) < 5:
            st["stopped"] = "cap"
            break
        be = resolve(name) if run.backend is None else run.backend
        p, t_setup = sync_time(be, lambda: DeviceRLSIProblem(be, X, W0, lambda1=lam, lambda2=LAMBDA2,
                                                             topic_sweeps=a.sweeps))
        dev = run_problem(be, p, a.iters)
        rel = [abs(d["objective"] - c["objective"]) / abs(c["objective"]) for d, c in zip(dev, cpu)]
        st["device"].append({"device": name, "rows": dev, **per_iter(dev), "setup_s": t_setup, "rel_diff": rel})
        run.write()
    return X, W0, lam


def options_stage(run, st, be, X, W0, lam):
    from rlsi.gpu.batch import DeviceRLSIProblem

    variants = [("default (screening, CSR topics, Φ by dense column blocks)", {}), ("no screening", {"screen": False}),
                ("Φ with a dense copy of U", {"topics": "sparse", "phi": "dense"}), ("dense topics", {"topics": "dense"}),
                ("Φ by SpGEMM (unplanned buffers)", {"topics": "sparse", "phi": "sparse"})]
    if be.is_cuda:
        variants.append(("array-operation kernel", {"kernel": "xp"}))
    st["variants"] = []
    for label, opts in variants:
        if run.time_left(st) < 2:
            st["variants"].append({"variant": label, "skipped": "cap"})
            continue
        p = DeviceRLSIProblem(be, X, W0, lambda1=lam, lambda2=LAMBDA2, topic_sweeps=run.a.sweeps, **opts)
        rows = run_problem(be, p, min(run.a.iters, 3))
        st["variants"].append({"variant": label, **per_iter(rows), "objective": rows[-1]["objective"]})
        run.write()


def online_stage(run, st, be_name, X, K):
    from rlsi import OnlineRLSI
    from rlsi.kernels.threads import compute_threads

    a = run.a
    kw = dict(lambda1=0.05, lambda2=LAMBDA2, rho=1.0, n_inner=10, batch_size=a.online_batch, random_state=0)
    n = min(a.online_docs, X.shape[0])
    with compute_threads(a.threads):
        cpu = OnlineRLSI(K, n_jobs=a.threads, **kw)
        _, t_cpu = harness.timed(cpu.fit, X[:n])
    st.update(k=K, batch=a.online_batch, docs=n, cpu_docs_per_s=n / t_cpu, threads=a.threads)
    dev = OnlineRLSI(K, device=be_name, **kw)
    dev.fit(X[: min(n, 2 * a.online_batch)])  # warm-up: kernels compiled, pool filled
    _, t_dev = harness.timed(dev.fit, X[:n])
    C1, C2 = cpu.components_, dev.components_
    st.update(device_docs_per_s=n / t_dev, ratio=t_cpu / t_dev,
              topic_max_rel_diff=float(abs(C1 - C2).max() / max(abs(C1).max(), 1e-300)))


def run_problem(be, problem, iters):
    """Iterate a problem (host with ``be`` None, or device); per iteration (u s, v s, objective, nnz)."""
    from rlsi.models.executor import get_executor
    ex = get_executor(None)
    sync = be if be is not None else type("Host", (), {"synchronize": staticmethod(lambda: None)})
    rows = []
    for _ in range(iters):
        diag, tu = sync_time(sync, lambda: problem.u_step(ex))
        _, tv = sync_time(sync, lambda: problem.v_step(ex))
        rows.append({"u": tu, "v": tv, "objective": float(problem.objective()), "nnz": int(diag["nnz"])})
    return rows


def per_iter(rows):
    later = rows[1:] or rows
    return {"iter_s": float(np.mean([r["u"] + r["v"] for r in later])), "u_s": float(np.mean([r["u"] for r in later])),
            "v_s": float(np.mean([r["v"] for r in later])), "first_s": rows[0]["u"] + rows[0]["v"]}


def warm_host_kernels():
    """Compile the host path's kernels into numba's cache (the child process the script starts)."""
    from rlsi import BatchRLSI, OnlineRLSI
    from rlsi.datasets.synthetic import make_corpus
    for dtype in (np.float32, np.float64):
        X = make_corpus(300, 900, 40, n_topics=8, topic_vocab=100, seed=1, dtype=dtype).X
        m = BatchRLSI(6, lambda1=0.05, inner_max_iter=8, max_iter=2, tol=0.0, random_state=0).fit(X)
        m.transform(X[:10])
        BatchRLSI(6, inner_max_iter=8, max_iter=2, tol=0.0, random_state=0, target_terms_per_topic=20).fit(X)
        OnlineRLSI(6, lambda1=0.05, rho=1.0, n_inner=2, batch_size=100, reseed_dead=True, random_state=0).fit(X)


# ----------------------------------------------------------------------------------------- report
def gb(x):
    return "—" if x is None else f"{x / 1e9:.2f} GB"


def report(a, rec):
    """The markdown of the record (written after every change, so a run cut short keeps what it measured)."""
    f = harness.fmt
    L = ["# RLSI on a GPU (rlsi.gpu)", "", "    " + harness.command_line(__file__, a.argv), ""]
    if a.smoke:
        L += ["**Smoke run**: tiny sizes, the device code path on numpy (or the stand-in for CuPy); the numbers "
              "mean nothing.", ""]
    if rec.get("facts"):
        L += [harness.machine_line(rec["facts"]), ""]
    L += [f"**Device.** {rec.get('device')}.", "",
          f"Stages and caps (s): {', '.join(f'{k} {v}' for k, v in rec['plan'].items())}; budget "
          f"{rec['budget_s']:.0f} s, {rec.get('seconds', 0):.0f} s spent.", ""]
    rows = [[k, v.get("status", "?"), f(v.get("seconds"), 0), f(v.get("cap_s"), 0), v.get("error", v.get("oom", ""))]
            for k, v in rec["stages"].items()]
    L += harness.md_table(["stage", "status", "s", "cap s", "note"], rows, "lllll") + [""]
    for name, lines in SECTIONS.items():
        st = rec["stages"].get(name)
        L += lines(a, st) if st else []
    return "\n".join(L)


def paper_lines(a, st):
    if "nnz" not in st:
        return []
    return batch_lines("paper", st) + (batch_lines("paper again, without the pool limit", st["unlimited"])
                                       if "unlimited" in st else [])


def online_paper_lines(a, st):
    if "plan_bytes" not in st:
        return []
    f = harness.fmt
    L = [f"## paper-online: OnlineRLSI at {st['terms']:,} terms, K = {st['k']}, ρ = 1, ξ = 10", "",
         f"Mini-batches of {st['batch']} documents of the paper corpus, λ₁ = {st['lambda1']:.4g} per 1000 documents, "
         f"topic_sweeps = {a.sweeps}, pool limit 40 GB: memory {pass_word(st.get('memory_pass'))}. Plan: "
         f"{st['plan']}.", ""]
    rows = [[i + 1, f(r["s"], 2), gb(r["mem"].get("held")), gb(r["mem"].get("used")), r["live_rows"]]
            for i, r in enumerate(st["rows"])]
    L += harness.md_table(["mini-batch", "s", "pool peak", "pool used after", "live rows"], rows) + [""]
    return L + ([f"{st['docs_per_s']:,.0f} documents per second (mini-batches 2 on).", ""] if "docs_per_s" in st
                else [])


def card_lines(a, st):
    if "outcomes" not in st:
        return []
    counts = {o: list(st["outcomes"].values()).count(o) for o in ("PASSED", "FAILED", "SKIPPED", "ERROR")}
    return ["## card-tests: tests/gpu/test_cuda.py on the card", "",
            ", ".join(f"{v} {k.lower()}" for k, v in counts.items())
            + f" (exit code {st.get('returncode')}; log {st.get('log')}).", ""] + [
        f"- {t}: {o}" for t, o in st["outcomes"].items()] + [""]


def check_lines(a, st):
    if "cpu" not in st:
        return []
    f, c = harness.fmt, st["cpu"]
    head = (f"## check: the device fit against the CPU fit ({st['docs']} x {st['terms']}, nnz {st['nnz']:,}, "
            f"K = {st['k']})")
    rows = [["CPU (host problem)", f(c["iter_s"], 4), f(c["u_s"], 4), f(c["v_s"], 4), f(c["rows"][-1]["objective"], 8),
             "—", "—"]]
    rows += [[d["device"], f(d["iter_s"], 4), f(d["u_s"], 4), f(d["v_s"], 4), f(d["rows"][-1]["objective"], 8),
              f"{d['rel_diff'][-1]:.2e}", f"{c['iter_s'] / d['iter_s']:.1f}x"] for d in st.get("device", [])]
    return [head, "", f"The same W₀, {a.iters} iterations; CPU {c['threads']} threads; seconds per iteration: mean "
                      f"of iterations 2 on.", ""] + harness.md_table(
        ["fit", "s / iter", "U-step", "V-step", "objective", "rel. diff to CPU", "speed-up"], rows) + [""]


def options_lines(a, st):
    f = harness.fmt
    rows = [[o["variant"], "skipped" if "skipped" in o else f(o["iter_s"], 4), f(o.get("u_s"), 4),
             f(o.get("v_s"), 4), f(o.get("objective"), 8)] for o in st.get("variants", [])]
    return (["## options: the device problem's ways of working (check corpus)", ""]
            + harness.md_table(["variant", "s / iter", "U-step", "V-step", "objective"], rows) + [""]) if rows else []


def online_lines(a, st):
    if "ratio" not in st:
        return []
    return [f"## online: tracking (ρ = 1, ξ = 10), check corpus, K = {st['k']}, mini-batches of {st['batch']}", "",
            f"{st['docs']} documents: CPU ({st['threads']} threads) {st['cpu_docs_per_s']:,.0f} documents/s, device "
            f"{st['device_docs_per_s']:,.0f} documents/s ({st['ratio']:.1f}x); topics apart by "
            f"{st['topic_max_rel_diff']:.2e} (max, relative to the largest weight).", ""]


def mid_lines(a, st):
    return batch_lines("mid", st) if "nnz" in st else []


#: The report's sections, in order, by stage.
SECTIONS = {"paper": paper_lines, "paper-online": online_paper_lines, "card-tests": card_lines, "check": check_lines,
            "options": options_lines, "online": online_lines, "mid": mid_lines}


def pass_word(ok):
    return {True: "**pass**", False: "**fail** (out of memory)", None: "not measured (no card)"}[ok]


def batch_lines(name, st):
    f = harness.fmt
    L = [f"## {name}: {st['docs']:,} x {st['terms']:,}, nnz {st['nnz']:,}, K = {st['k']} (device only)", ""]
    L += [(f"CuPy's kernels compiled on a small fit first: {f(st['warm_s'], 1)} s. " if "warm_s" in st else "") +
          (f"Corpus made on the card in {f(st.get('gen_s'), 1)} s; " if "gen_s" in st else "") +
          f"W₀ (init='docs' on the card) "
          f"{f(st.get('init_s'), 1)} s; set-up {f(st.get('setup_s'), 1)} s. λ₁ = "
          f"{f(st.get('lambda1_per_1000'), 5)} per 1000 documents (for AvgComp ≈ 0.0044). Pool limit: "
          f"{gb(st.get('limit')) if st.get('limit') else 'none'}; memory {pass_word(st.get('memory_pass'))}."]
    if "plan" in st:
        L += [f"Memory plan (at the assumed density): {st['plan']}. Pool after set-up, emptied: "
              f"{gb(st.get('resident', {}).get('used'))} used."]
    L += [""]
    rows = []
    for i, r in enumerate(st.get("rows", [])):
        mu, mv = r.get("mem_u", {}), r.get("mem_v", {})
        rows.append([i + 1, f(r["u"], 2), f(r["v"], 2), f"{r['avgcomp']:.4f}", f(r["objective"], 6),
                     gb(mu.get("held")), gb(mv.get("held")), gb(mv.get("used") or mu.get("used")),
                     gb(r["plan_at_density"])])
    if rows:
        L += harness.md_table(["iteration", "U-step s", "V-step s", "AvgComp", "objective", "pool peak U-step",
                               "pool peak V-step", "pool used after", "plan at this AvgComp"], rows)
        L += ["", "Pool peaks: CuPy's pool emptied before the step, ``total_bytes()`` after it (first "
              "iterations only; later ones keep the pool for their timings).", ""]
    return L


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
