"""The stages of ``bench_gpu.py``: the paper's shape on the card (batch, then OnlineRLSI at its vocabulary), the
card tests in a subprocess, the check against the host, the problem's options, online tracking, and the
child that compiles the host path's kernels."""

import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

import gpu_corpus
import harness
from gpu_run import CHECK_LAMBDA1, LAMBDA2, LIMIT, SMOKE, Memory, oom_types, sync_time

HERE = Path(__file__).resolve().parent


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
