"""RLSI on a GPU (rlsi.gpu): the device fit against the 16-core CPU fit, and the shapes of the GPU issue.

One run, at most ~8 minutes on a 16-core machine with one H100-class card, writes ``--out`` (markdown) and
``--json``:

1. **Check** (50k x 200k, K = 200, the batch benchmarks' synthetic corpus, λ₁ = 0.000679 per 1000 documents:
   the paper's density): the host problem (``BatchRLSI``'s, ``--threads`` numba threads) and the device
   problem (float32, and float64) from the same W₀ for ``--iters`` iterations; objective after each iteration,
   relative difference (target: 1e-4 after 5), seconds per iteration (mean of iterations 2..n) and its U-/V-step
   split on both.
2. **Options** at the check shape (device, float32): exact screening off, Φ by sparse x sparse or by a dense
   copy of U, dense topics, the array-operation kernel instead of the fused one: seconds per iteration and the
   objective (the same to rounding).
3. **Large shapes** 400k x 2M, K = 500 and 1.6M x 7M, K = 500 (the paper's), generated on the card
   (:func:`device_corpus`: planted topics, Zipfian terms, 300 tokens per document, tf-idf), λ₁ set for the
   paper's topic density (AvgComp 0.0044: the ``--density`` quantile of ``|R|`` at W₀ on a sample of terms),
   W₀ by ``init="docs"`` on the card: seconds per iteration, U-/V-step, GPU memory held (CuPy's pool, after the
   last iteration) against the memory plan. The CPU is not run at these shapes (its 2-core numbers are in
   benchmarks/results/scale_*.md; 16 cores would not fit the time).
4. **Online tracking** (ρ = 1, ξ = 10, mini-batches of ``--online-batch``) on the check corpus: documents per
   second on the CPU (``--online-docs`` documents) and on the device (the same documents, then the whole corpus).

Stages stop when ``--budget`` seconds are spent (the rest is reported as skipped). ``--smoke`` runs every stage
at tiny sizes with the device code path on numpy (``--device numpy``): what the suite and a machine without a
card can run; its numbers mean nothing.

    PYTHONPATH=src python benchmarks/bench_gpu.py --out benchmarks/results/gpu.md --json benchmarks/results/gpu.json
    PYTHONPATH=src python benchmarks/bench_gpu.py --smoke --out /tmp/gpu_smoke.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

import harness  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

FULL = {"check": (50_000, 200_000, 150, 200), "shapes": [(400_000, 2_000_000, 300, 500),
                                                        (1_600_000, 7_000_000, 300, 500)]}
SMOKE = {"check": (1_000, 4_000, 50, 15), "shapes": [(2_000, 8_000, 30, 20), (3_000, 12_000, 30, 20)]}
CHECK_LAMBDA1 = 0.000679  # per 1000 documents: AvgComp 0.0086 on the check corpus (the paper's compactness)
LAMBDA2 = 1.0  # the paper's λ₂: the web-scale shapes are measured at its settings


# ----------------------------------------------------------------------------------------- helpers
class Clock:
    def __init__(self, budget):
        self.t0 = time.perf_counter()
        self.budget = budget

    @property
    def spent(self):
        return time.perf_counter() - self.t0

    def left(self):
        return self.budget - self.spent


def sync_time(be, fn):
    be.synchronize()
    t = time.perf_counter()
    out = fn()
    be.synchronize()
    return out, time.perf_counter() - t


def device_corpus(be, n_docs, n_terms, tokens, *, n_topics=500, topic_vocab=4000, background=0.4, seed=0):
    """A tf-idf CSR (docs x terms) made on the backend: each document has two planted topics (a window of
    ``topic_vocab`` terms each, Zipfian inside) and a Zipfian background share; ``tokens`` per document
    (Poisson). Weighting of the TOIS paper: ``n(t, d)/|d| · log(N/df(t))``."""
    xp = be.xp
    rs = xp.random.RandomState(seed)
    N, M = int(n_docs), int(n_terms)
    lengths = xp.maximum(rs.poisson(tokens, N), 5).astype(xp.int64)
    T = int(lengths.sum())
    doc = xp.searchsorted(xp.cumsum(lengths), xp.arange(T, dtype=xp.int64), side="right")
    u = rs.random_sample(T)
    topic_of_doc = rs.randint(0, n_topics, size=(N, 2))
    which = (rs.random_sample(T) < 0.5).astype(xp.int64)
    topic = topic_of_doc[doc, which]
    del which
    offset = rs.randint(0, M, size=n_topics)
    perm = rs.permutation(M)
    in_topic = (xp.exp(u * np.log(topic_vocab + 1.0)) - 1.0).astype(xp.int64)
    in_bg = (xp.exp(u * np.log(M + 1.0)) - 1.0).astype(xp.int64)
    bg = rs.random_sample(T) < background
    term = xp.where(bg, in_bg, (offset[topic] + in_topic) % M)
    del u, bg, in_topic, in_bg, topic
    term = perm[xp.minimum(term, M - 1)]
    keys = xp.sort(doc * M + term)
    del doc, term
    first = xp.concatenate([xp.ones(1, dtype=bool), keys[1:] != keys[:-1]])
    starts = xp.flatnonzero(first)
    counts = xp.diff(xp.concatenate([starts, xp.asarray([T])])).astype(xp.float64)
    uk = keys[starts]
    del keys, first, starts
    rows, cols = uk // M, (uk % M).astype(xp.int32)
    del uk
    df = xp.bincount(cols, minlength=M)
    idf = xp.log(N / xp.maximum(df, 1).astype(xp.float64))
    data = counts / lengths[rows].astype(xp.float64) * idf[cols]
    keep = data > 0
    rows, cols, data = rows[keep], cols[keep], data[keep].astype(be.dtype)
    indptr = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(xp.bincount(rows, minlength=N))])
    return be.sparse.csr_matrix((data, cols, indptr.astype(xp.int32)), shape=(N, M))


def calibrate_lambda1(be, X, W, density, sample=20_000, seed=0):
    """λ₁ (effective) with about ``density`` of the topic weights non-zero: ``2 ×`` the ``1 − density``
    quantile of ``|r_mk|`` of R = D W on ``sample`` random terms (the lasso keeps weights where |r| > λ/2 when
    the topics are nearly orthogonal: a rough guide, the AvgComp reached is reported)."""
    xp = be.xp
    M = X.shape[1]
    terms = np.sort(np.random.default_rng(seed).choice(M, size=min(sample, M), replace=False))
    Dt = X.T.tocsr()[xp.asarray(terms)] if be.is_cuda else sp.csr_matrix(X).T.tocsr()[terms]
    R = xp.abs(xp.asarray(Dt @ W)).ravel()
    return 2.0 * float(xp.quantile(R.astype(xp.float64), 1.0 - density))


def run_problem(be, problem, iters, clock=None):
    """Iterate a problem (host or device); per iteration (u_step s, v_step s, objective, nnz)."""
    from rlsi.models.executor import get_executor
    ex = get_executor(None)
    rows = []
    for _ in range(iters):
        diag, tu = sync_time(be, lambda: problem.u_step(ex))
        _, tv = sync_time(be, lambda: problem.v_step(ex))
        rows.append({"u": tu, "v": tv, "objective": float(problem.objective()), "nnz": int(diag["nnz"])})
        if clock is not None and clock.left() < 0:
            break
    return rows


def per_iter(rows):
    later = rows[1:] or rows
    return {"iter_s": float(np.mean([r["u"] + r["v"] for r in later])), "u_s": float(np.mean([r["u"] for r in later])),
            "v_s": float(np.mean([r["v"] for r in later])), "first_s": rows[0]["u"] + rows[0]["v"]}


class HostBE:
    """The synchronize() of the host problem's timings."""

    name = "cpu"

    def synchronize(self):
        pass


def pool_bytes(be):
    if not be.is_cuda:
        return None
    return int(be.xp.get_default_memory_pool().total_bytes())


def reset_pool(be):
    if be.is_cuda:
        be.xp.get_default_memory_pool().free_all_blocks()


# ----------------------------------------------------------------------------------------- stages
def stage_check(a, be_name, sizes, rec, clock):
    from rlsi import BatchRLSI
    from rlsi.datasets.synthetic import make_corpus
    from rlsi.gpu.backend import resolve
    from rlsi.gpu.batch import DeviceRLSIProblem
    from rlsi.kernels.threads import compute_threads

    N, M, tok, K = sizes
    t = time.perf_counter()
    X = make_corpus(N, M, tok, n_topics=min(200, K * 2), seed=0, dtype=np.float32).X
    rec["check_corpus"] = {"docs": N, "terms": M, "nnz": int(X.nnz), "k": K, "seconds": time.perf_counter() - t}
    est = BatchRLSI(K, lambda1=CHECK_LAMBDA1 if not a.smoke else 0.05, lambda2=LAMBDA2, topic_sweeps=a.sweeps,
                    random_state=0, n_jobs=a.threads)
    lam = est.effective_lambda1(N)
    with compute_threads(a.threads):
        W0 = est._initial_doc_vectors(X, None)
        host = est._problem(X, W0.copy(), lam)
        cpu = run_problem(HostBE(), host, a.iters)
    rec["check_cpu"] = {"rows": cpu, **per_iter(cpu), "threads": a.threads}
    harness.log(f"check: CPU {per_iter(cpu)['iter_s']:.3f} s/iter, objective {cpu[-1]['objective']:.8g}")
    for name in (be_name, be_name.split(":")[0] + ":float64"):
        be = resolve(name)
        reset_pool(be)
        p, t_setup = sync_time(be, lambda: DeviceRLSIProblem(
            be, X, W0, lambda1=lam, lambda2=LAMBDA2, topic_sweeps=a.sweeps))
        dev = run_problem(be, p, a.iters)
        rel = [abs(d["objective"] - c["objective"]) / abs(c["objective"]) for d, c in zip(dev, cpu)]
        rec.setdefault("check_device", []).append({"device": name, "rows": dev, **per_iter(dev), "setup_s": t_setup,
                                                   "rel_diff": rel, "pool_bytes": pool_bytes(be),
                                                   "plan_bytes": p.plan.total})
        harness.log(f"check: {name} {per_iter(dev)['iter_s']:.4f} s/iter, rel. diff {rel[-1]:.2e}")
        del p
    return X, W0, lam


def stage_options(a, be_name, X, W0, lam, rec, clock):
    from rlsi.gpu.backend import resolve
    from rlsi.gpu.batch import DeviceRLSIProblem

    be = resolve(be_name)
    kernel = "fused kernel" if be.is_cuda else "array kernel"
    variants = [(f"default (screening, sparse topics, Φ auto, {kernel})", {}),
                ("no screening", {"screen": False}), ("Φ sparse x sparse", {"topics": "sparse", "phi": "sparse"}),
                ("Φ with a dense copy of U", {"topics": "sparse", "phi": "dense"}), ("dense topics", {"topics": "dense"})]
    if be.is_cuda:
        variants.append(("array-operation kernel", {"kernel": "xp"}))
    out = []
    for label, opts in variants:
        if clock.left() < a.reserve:
            out.append({"variant": label, "skipped": "time"})
            continue
        p = DeviceRLSIProblem(be, X, W0, lambda1=lam, lambda2=LAMBDA2, topic_sweeps=a.sweeps, **opts)
        rows = run_problem(be, p, min(a.iters, 4))
        out.append({"variant": label, "options": opts, **per_iter(rows), "objective": rows[-1]["objective"]})
        harness.log(f"options: {label}: {per_iter(rows)['iter_s']:.4f} s/iter")
        del p
    rec["options"] = out


def stage_shape(a, be_name, sizes, rec, clock):
    from rlsi import BatchRLSI
    from rlsi.gpu.backend import resolve
    from rlsi.gpu.batch import DeviceRLSIProblem
    from rlsi.gpu.fit import initial_doc_vectors

    be = resolve(be_name)
    N, M, tok, K = sizes
    reset_pool(be)
    X, t_gen = sync_time(be, lambda: device_corpus(be, N, M, tok, n_topics=K, seed=1))
    reset_pool(be)  # the generator's temporaries: not the fit's memory
    nnz = int(X.nnz)
    est = BatchRLSI(K, lambda2=LAMBDA2, random_state=0)
    W0, t_init = sync_time(be, lambda: initial_doc_vectors(be, est, X))
    lam = calibrate_lambda1(be, X, W0, a.density)

    def build():
        return DeviceRLSIProblem(be, X, W0, lambda1=lam, lambda2=LAMBDA2, topic_sweeps=a.sweeps)
    p, t_setup = sync_time(be, build)
    W0 = None  # the problem holds its own copy
    rows = run_problem(be, p, a.shape_iters, clock)
    res = {"docs": N, "terms": M, "nnz": nnz, "k": K, "gen_s": t_gen, "init_s": t_init, "setup_s": t_setup,
           "lambda1_effective": lam, "lambda1_per_1000": lam * 1000.0 / N, "rows": rows, **per_iter(rows),
           "avgcomp": rows[-1]["nnz"] / (M * K), "pool_bytes": pool_bytes(be), "plan": p.plan.describe(),
           "plan_bytes": p.plan.total, "screened": p.total_skipped}
    harness.log(f"shape {N} x {M}: {res['iter_s']:.3f} s/iter, AvgComp {res['avgcomp']:.4f}")
    p = X = None
    reset_pool(be)
    return res


def stage_online(a, be_name, X, rec, clock):
    from rlsi import OnlineRLSI
    from rlsi.kernels.threads import compute_threads

    K = rec["check_corpus"]["k"]
    kw = dict(lambda1=0.05, lambda2=LAMBDA2, rho=1.0, n_inner=10, batch_size=a.online_batch, random_state=0)
    n = min(a.online_docs, X.shape[0])
    with compute_threads(a.threads):
        OnlineRLSI(K, n_jobs=a.threads, **kw).fit(X[: 2 * a.online_batch])  # warm-up (compiled kernels)
        cpu = OnlineRLSI(K, n_jobs=a.threads, **kw)
        t = time.perf_counter()
        cpu.fit(X[:n])
        t_cpu = time.perf_counter() - t
    out = {"k": K, "batch": a.online_batch, "cpu_docs": n, "cpu_docs_per_s": n / t_cpu, "threads": a.threads}
    dev = OnlineRLSI(K, device=be_name, **kw)
    dev.fit(X[: min(n, 2 * a.online_batch)])  # warm-up: kernels compiled, pool filled
    t = time.perf_counter()
    dev.fit(X[:n])
    out["device_docs_per_s"] = n / (time.perf_counter() - t)
    C1, C2 = cpu.components_, dev.components_
    out["topic_max_rel_diff"] = float(abs(C1 - C2).max() / max(abs(C1).max(), 1e-300))
    if clock.left() > a.reserve and X.shape[0] > n:
        t = time.perf_counter()
        dev.fit(X)
        out["device_all_docs"] = X.shape[0]
        out["device_all_docs_per_s"] = X.shape[0] / (time.perf_counter() - t)
    out["ratio"] = out["device_docs_per_s"] / out["cpu_docs_per_s"]
    harness.log(f"online: CPU {out['cpu_docs_per_s']:.0f} docs/s, device {out['device_docs_per_s']:.0f} docs/s")
    rec["online"] = out


# ----------------------------------------------------------------------------------------- report
def device_facts(be_name):
    from rlsi.gpu.backend import resolve
    be = resolve(be_name)
    line = be.describe()
    if be.is_cuda:
        try:
            line += "; " + subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                                           "--format=csv,noheader"], capture_output=True, text=True,
                                          timeout=20).stdout.strip()
        except Exception:  # noqa: BLE001 -- the line is informative only
            pass
    return line


def report(a, rec):
    from rlsi.gpu.memory import size
    f = harness.fmt
    L = ["# RLSI on a GPU (rlsi.gpu)", "", "    " + harness.command_line(__file__, a.argv), ""]
    if a.smoke:
        L += ["**Smoke run**: tiny sizes, the device code path on numpy; the numbers mean nothing.", ""]
    if rec["facts"]:
        L += [harness.machine_line(rec["facts"]), ""]
    L += [f"**Device.** {rec['device']}.", ""]
    c = rec.get("check_corpus")
    if c:
        L += ["## 1. Check: the device fit against the CPU fit", "",
              f"{c['docs']} x {c['terms']} (nnz {c['nnz']:,}), K = {c['k']}, float32 X, λ₁ = "
              f"{CHECK_LAMBDA1 if not a.smoke else 0.05} per 1000 documents, topic_sweeps = {a.sweeps}, the same W₀; "
              f"CPU: {rec['check_cpu']['threads']} threads. Seconds per iteration: mean of iterations 2..{a.iters}.",
              ""]
        rows = [["CPU (host problem)", f(rec["check_cpu"]["iter_s"], 4), f(rec["check_cpu"]["u_s"], 4),
                 f(rec["check_cpu"]["v_s"], 4), f(rec["check_cpu"]["rows"][-1]["objective"], 8), "—", "—"]]
        for d in rec.get("check_device", []):
            rows.append([d["device"], f(d["iter_s"], 4), f(d["u_s"], 4), f(d["v_s"], 4), f(d["rows"][-1]["objective"], 8),
                         f"{d['rel_diff'][-1]:.2e}", f"{rec['check_cpu']['iter_s'] / d['iter_s']:.1f}x"])
        L += harness.md_table(["fit", "s / iter", "U-step", "V-step", f"objective after {a.iters}",
                                "rel. diff to CPU", "speed-up"], rows) + [""]
    if rec.get("options"):
        L += ["## 2. Sparse-aware options (device, check corpus)", ""]
        rows = [[o["variant"], "skipped (time)" if "skipped" in o else f(o["iter_s"], 4),
                 "" if "skipped" in o else f(o["u_s"], 4), "" if "skipped" in o else f(o["v_s"], 4),
                 "" if "skipped" in o else f(o["objective"], 8)] for o in rec["options"]]
        L += harness.md_table(["variant", "s / iter", "U-step", "V-step", "objective"], rows) + [""]
    if rec.get("shapes"):
        L += ["## 3. Large shapes (device only)", "",
              f"Corpora generated on the card ({'numpy' if a.smoke else 'CuPy'}: `device_corpus`), λ₁ for AvgComp "
              f"≈ {a.density} (the paper's density), W₀ by init='docs' on the card, {a.shape_iters} iterations.", ""]
        rows = []
        for s in rec["shapes"]:
            if "skipped" in s:
                rows.append([f"{s['docs']} x {s['terms']}", "", s["k"], "skipped: " + s["skipped"], "", "", "", "", ""])
                continue
            mem = "—" if s["pool_bytes"] is None else size(s["pool_bytes"])
            rows.append([f"{s['docs']} x {s['terms']}", f"{s['nnz']:,}", s["k"], f(s["iter_s"], 3), f(s["u_s"], 3),
                         f(s["v_s"], 3), f(s["first_s"], 2), f"{s['avgcomp']:.4f}", f"{mem} (plan {size(s['plan_bytes'])})"])
        L += harness.md_table(["corpus", "nnz", "K", "s / iter", "U-step", "V-step", "first iter. s", "AvgComp",
                                "GPU memory"], rows) + [""]
    o = rec.get("online")
    if o:
        L += ["## 4. Online tracking (ρ = 1, ξ = 10)", "",
              f"Check corpus, K = {o['k']}, mini-batches of {o['batch']}; the first {o['cpu_docs']} documents on "
              f"both (CPU {o['threads']} threads); topics after them differ by {o['topic_max_rel_diff']:.2e} "
              f"(max, relative to the largest weight).", ""]
        rows = [["CPU", f"{o['cpu_docs_per_s']:,.0f}", "1.0x"], ["device", f"{o['device_docs_per_s']:,.0f}", f"{o['ratio']:.1f}x"]]
        if "device_all_docs_per_s" in o:
            rows.append([f"device, all {o['device_all_docs']} documents", f"{o['device_all_docs_per_s']:,.0f}", ""])
        L += harness.md_table(["", "documents / s", "ratio"], rows) + [""]
    if rec.get("skipped"):
        L += ["Skipped for time: " + ", ".join(rec["skipped"]) + ".", ""]
    L += [f"Total {rec['seconds']:.0f} s.", ""]
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--smoke", action="store_true", help="tiny sizes on the numpy device path")
    p.add_argument("--device", default=None, help="device of the fits (default: cuda, numpy with --smoke)")
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--shape-iters", type=int, default=3)
    p.add_argument("--sweeps", type=int, default=3, help="topic_sweeps")
    p.add_argument("--density", type=float, default=0.0044)
    p.add_argument("--online-batch", type=int, default=1000)
    p.add_argument("--online-docs", type=int, default=10_000)
    p.add_argument("--stages", default="check,options,shapes,online")
    p.add_argument("--budget", type=float, default=450.0, help="seconds for all stages")
    p.add_argument("--reserve", type=float, default=60.0, help="seconds kept for the report")
    p.add_argument("--no-facts", action="store_true", help="skip the machine facts (a few seconds; tests)")
    p.add_argument("--out", type=Path, default=HERE / "results" / "gpu.md")
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    a.argv = sys.argv[1:] if argv is None else list(argv)
    if a.smoke:
        a.threads = min(a.threads, 2)
        a.online_batch, a.online_docs = min(a.online_batch, 250), min(a.online_docs, 750)
    be_name = a.device or ("numpy" if a.smoke else "cuda")
    sizes = SMOKE if a.smoke else FULL
    stages = set(a.stages.split(","))
    clock = Clock(a.budget)
    rec = {"facts": None if a.no_facts else harness.machine_facts(), "device": device_facts(be_name), "skipped": []}
    X = None
    if "check" in stages or "options" in stages or "online" in stages:
        X, W0, lam = stage_check(a, be_name, sizes["check"], rec, clock)
        if "options" in stages:
            stage_options(a, be_name, X, W0, lam, rec, clock)
    if "shapes" in stages:
        rec["shapes"] = []
        for s in sizes["shapes"]:
            if clock.left() < a.reserve + 30:
                rec["shapes"].append({"docs": s[0], "terms": s[1], "k": s[3], "skipped": "time"})
                continue
            try:
                rec["shapes"].append(stage_shape(a, be_name, s, rec, clock))
            except Exception as exc:  # noqa: BLE001 -- e.g. out of memory: reported, the run goes on
                rec["shapes"].append({"docs": s[0], "terms": s[1], "k": s[3], "skipped": f"{type(exc).__name__}: {exc}"})
                harness.log(f"shape {s}: {exc}")
    if "online" in stages:
        if clock.left() > a.reserve:
            stage_online(a, be_name, X, rec, clock)
        else:
            rec["skipped"].append("online")
    rec["seconds"] = clock.spent
    text = report(a, rec)
    harness.write_report(a.out, text, marker=True)
    if a.json:
        a.json.write_text(json.dumps(rec, indent=1, default=str))
    harness.log(f"wrote {a.out} ({clock.spent:.0f} s)")
    return rec


if __name__ == "__main__":
    main()
