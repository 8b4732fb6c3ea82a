"""Benchmark of the Dask learner (issue 10): time per iteration with 1 and 2 workers against the local
BatchRLSI in the same run, bytes moved per iteration, and a scaling model for the paper's web corpus.

Everything runs in this one process: the synthetic corpus (``benchmarks/synthetic.py``), a warm-up fit
(numba cache), the local ``BatchRLSI`` fit, then ``DaskRLSI`` on an in-process LocalCluster of 1 and of 2
workers (one thread each; numba threads per task = cores / workers), then the local fit again (the
machine is shared: the two local runs bracket the Dask runs). For every fit the U-step and V-step of each
iteration are timed (wrappers around the problem's methods, this process only). The Dask fits report
``bytes_moved_`` (Dask's count of bytes sent between workers plus what the client sends and gathers).

The scaling model (written into the report) takes the measured core-seconds per unit of work and the
measured traffic per iteration and extrapolates them to N = 1,562,807 documents, M = 7,014,881 terms,
K = 500 on 16 machines; its assumptions are parameters (``--paper-terms-per-doc`` ...), printed with it.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from synthetic import describe, make_corpus  # noqa: E402


def timed_steps(cls):
    """Wrap ``cls.u_step`` / ``cls.v_step`` to record their wall times into ``cls._times``."""
    cls._times = []
    for name in ("u_step", "v_step"):
        orig = getattr(cls, name)

        def wrapper(self, executor, _orig=orig, _name=name):
            t = time.perf_counter()
            out = _orig(self, executor)
            cls._times.append((_name, time.perf_counter() - t))
            return out

        setattr(cls, name, wrapper)


def split(times):
    u = [t for n, t in times if n == "u_step"]
    v = [t for n, t in times if n == "v_step"]
    return np.array(u), np.array(v)


def run_local(X, params):
    from rlsi.models import BatchRLSI
    from rlsi.models.batch import RLSIProblem

    RLSIProblem._times = []
    t = time.perf_counter()
    model = BatchRLSI(**params).fit(X)
    total = time.perf_counter() - t
    u, v = split(RLSIProblem._times)
    return model, total, u, v


def run_dask(X, params, n_workers):
    from rlsi.distributed import DaskRLSI, open_cluster
    from rlsi.distributed.learner import DistributedProblem

    handle = open_cluster(n_workers=n_workers, memory_limit="6GiB")
    try:
        DistributedProblem._times = []
        t = time.perf_counter()
        model = DaskRLSI(**params, client=handle.client).fit(X)
        total = time.perf_counter() - t
    finally:
        handle.close()
    u, v = split(DistributedProblem._times)
    return model, total, u, v


def r_rows_present(X, bounds):
    """Term rows each partition holds (what its share of R sends)."""
    return [int(np.count_nonzero(np.bincount(X[a:b].indices, minlength=X.shape[1]))) for a, b in bounds]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=50_000)
    p.add_argument("--terms", type=int, default=200_000)
    p.add_argument("--tokens", type=int, default=150)
    p.add_argument("--k", type=int, default=200)
    p.add_argument("--lambda1", type=float, default=0.01)
    p.add_argument("--iters", type=int, default=8)
    p.add_argument("--paper-terms-per-doc", type=float, default=300.0,
                   help="distinct terms per web document assumed for the scaling model")
    p.add_argument("--paper-u-density", type=float, default=0.01,
                   help="share of non-zero entries of U assumed for the scaling model")
    p.add_argument("--paper-cores", type=int, default=8, help="cores per machine in the scaling model")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")

    from rlsi.distributed.learner import DistributedProblem
    from rlsi.models import BatchRLSI
    from rlsi.models.batch import RLSIProblem

    timed_steps(RLSIProblem)
    timed_steps(DistributedProblem)
    corpus = make_corpus(args.docs, args.terms, args.tokens, seed=0)
    X = corpus.X
    params = dict(n_components=args.k, lambda1=args.lambda1, max_iter=args.iters, tol=0.0, random_state=0)
    t = time.perf_counter()
    BatchRLSI(**dict(params, n_components=5, max_iter=2)).fit(X[:2000])
    warm = time.perf_counter() - t
    load0 = os.getloadavg()[0]
    runs = {}
    runs["local (before)"] = run_local(X, params)
    for n in (1, 2):
        runs[f"dask, {n} worker{'s' if n > 1 else ''}"] = run_dask(X, params, n)
    runs["local (after)"] = run_local(X, params)
    load1 = os.getloadavg()[0]

    ref = runs["local (before)"][0]
    rows = []
    for name, (model, total, u, v) in runs.items():
        per = (u + v)[1:]  # iterations 2..n: the first includes the initial W (and the partitions)
        moved = getattr(model, "bytes_moved_", None)
        diff = abs(model.components_ - ref.components_).max() / abs(ref.components_).max()
        rows.append(dict(name=name, total=total, first=u[0] + v[0], per=per.mean(), best=per.min(),
                         u=u[1:].mean(), v=v[1:].mean(), moved=moved, diff=diff,
                         obj=abs(model.objective_[-1] / ref.objective_[-1] - 1)))
    local_per = min(r["per"] for r in rows if r["name"].startswith("local"))
    bounds2 = runs["dask, 2 workers"][0].partitions_
    present = r_rows_present(X, bounds2)
    N, M = X.shape
    K = args.k
    U_nnz = ref.components_.nnz

    # ------------------------------------------------------------------ scaling model
    cores_here = os.cpu_count() or 2
    core_s = local_per * cores_here  # core-seconds per iteration here (both cores busy in the kernels)
    nnzK_here = X.nnz * K
    PN, PM, PK, machines = 1_562_807, 7_014_881, 500, 16
    p_nnz = PN * args.paper_terms_per_doc
    p_core_s = core_s * (p_nnz * PK) / nnzK_here
    p_compute = p_core_s / (machines * args.paper_cores)
    docs_per = PN / machines
    # terms a partition holds: measured share here scaled by Heaps-like growth is unknown; bound it by
    # min(M, nnz of the partition) and take the measured share of this corpus's vocabulary as the estimate
    share_here = np.mean(present) / M
    rows_per_part = min(PM, docs_per * args.paper_terms_per_doc) * share_here
    r_share_bytes = rows_per_part * (PK * 8 + 8)
    levels = int(np.ceil(np.log2(machines)))
    # a binary tree: at each level half of the machines send their (growing) union; the last level's sum
    # goes to the term blocks' solvers. Per link, serially: the union grows towards PM rows.
    tree_bytes = sum(min(PM, rows_per_part * 2 ** lev) * (PK * 8 + 8) for lev in range(levels))
    u_bytes = PM * PK * args.paper_u_density * 12
    bcast_bytes = u_bytes * np.ceil(np.log2(machines + 1))  # U to the 16 partitions and the client (tree)
    total_bytes = machines * r_share_bytes + (machines + 1) * u_bytes
    net = {}
    for gbps in (1, 10):
        bw = gbps * 1e9 / 8
        net[gbps] = (tree_bytes + bcast_bytes) / bw

    cmd = "PYTHONPATH=src python benchmarks/bench_distributed.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    import dask
    import numba

    lines = [
        "# Distributed benchmark: DaskRLSI (1 and 2 workers) against the local BatchRLSI",
        "",
        "Generated by `benchmarks/bench_distributed.py`. Command:",
        "",
        "```",
        cmd,
        "```",
        "",
        f"**Machine.** {platform.processor() or platform.machine()}, {cores_here} cores **shared with other "
        f"agents' jobs** (1-minute load average {load0:.1f} at the start, {load1:.1f} at the end: above the "
        f"core count means other processes competed for the cores). Python {platform.python_version()}, "
        f"dask {dask.__version__}, numba {numba.__version__} ({numba.config.NUMBA_NUM_THREADS} threads).",
        "",
        f"**Data.** `benchmarks/synthetic.py` (seed 0): {describe(corpus)}. float64 tf-idf.",
        "",
        f"**Settings.** K = {K}, lambda1 = {args.lambda1} per 1000 docs, λ₂ = 1, ℓ1 topics / ℓ2 documents, "
        f"init=docs, {args.iters} iterations (tol = 0), random_state = 0. Warm-up (numba cache) {warm:.1f} s, "
        f"not included. Dask: in-process LocalCluster (`processes=False`), 1 thread per worker, numba threads "
        f"per task = {cores_here} / workers; partitions = one per worker, made of whole document blocks.",
        "",
        "## Time per iteration and bytes moved",
        "",
        "| run | per iteration, 2..n (s) | fastest iteration (s) | U-step (s) | V-step (s) | first iteration (s) "
        "| whole fit (s) | vs local | bytes moved per iteration (2..n) | first iteration bytes | "
        "max rel. diff of U vs local |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        moved = r["moved"]
        mv = "—" if moved is None else f"{np.mean(moved[1:]) / 1e6:.1f} MB"
        mv0 = "—" if moved is None else f"{moved[0] / 1e6:.1f} MB"
        lines.append(f"| {r['name']} | {r['per']:.2f} | {r['best']:.2f} | {r['u']:.2f} | {r['v']:.2f} | "
                     f"{r['first']:.2f} | {r['total']:.1f} | {r['per'] / local_per:.2f}× | {mv} | {mv0} | "
                     f"{r['diff']:.1e} |")
    lines += [
        "",
        f"\"vs local\" divides by the faster of the two local runs ({local_per:.2f} s). Both learners "
        f"skip the term rows certified zero by the exact screening (rows skipped in the whole fit: local "
        f"{ref.n_rows_screened_:,}, Dask 2 workers {runs['dask, 2 workers'][0].n_rows_screened_:,}); the "
        f"topics are the same (last column).",
        "",
        f"Traffic of the 2-worker fit, by design: the R shares hold the term rows each partition has "
        f"({present[0]:,} and {present[1]:,} of {M:,} terms: {share_here:.0%} on average), "
        f"{K} × 8 bytes each, i.e. {sum(present) * (K * 8 + 8) / 1e6:.0f} MB if every share crossed "
        f"the network (Dask runs a share's sum where one of the shares already is, so about half of this "
        f"moves); U (nnz {U_nnz:,}, {U_nnz * 12 / 1e6:.1f} MB as CSR) goes to each partition and to the "
        f"client; K × K matrices ({K * K * 8 / 1e6:.2f} MB) and scalars. The first iteration also carries "
        f"the rows of X into the partitions (X: {(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 1e6:.0f} MB). "
        f"With 1 worker nothing crosses between workers: the bytes are U and the statistics the client "
        f"gathers.",
        "",
        "## Scaling model: the paper's web corpus (1,562,807 docs × 7,014,881 terms, K = 500, 16 machines)",
        "",
        f"Measured here: {local_per:.2f} s per iteration on {cores_here} cores = {core_s:.2f} core-seconds for "
        f"nnz(D)·K = {nnzK_here:.3g} (R = D W, Φ = X U and the lasso rows, which all grow with nnz·K at a "
        f"fixed sparsity of U). Assumptions (parameters of the script): {args.paper_terms_per_doc:g} distinct "
        f"terms per web document (nnz(D) = {p_nnz:.3g}), U density {args.paper_u_density:g} "
        f"(nnz(U) = {PM * PK * args.paper_u_density:.3g}), {args.paper_cores} cores per machine, a partition "
        f"holding the same share of the vocabulary as measured here ({share_here:.0%}).",
        "",
        f"* **Compute**: {core_s:.2f} × {p_nnz * PK:.3g} / {nnzK_here:.3g} = {p_core_s:,.0f} core-seconds per "
        f"iteration, over {machines} × {args.paper_cores} cores: **{p_compute:,.0f} s**.",
        f"* **Traffic per iteration**: each partition's R share ≈ {rows_per_part:,.0f} rows × {PK} × 8 B = "
        f"{r_share_bytes / 1e9:.1f} GB (16 of them: {machines * r_share_bytes / 1e9:.0f} GB in all); U as "
        f"CSR {u_bytes / 1e9:.2f} GB to 16 partitions and the client; K × K = {PK * PK * 8 / 1e6:.0f} MB "
        f"matrices (negligible). Total ≈ {total_bytes / 1e9:.0f} GB. Along the critical path of a binary "
        f"reduction tree ({levels} levels, the partial sums growing towards all {PM:,} rows) one link "
        f"carries ≈ {tree_bytes / 1e9:.0f} GB, and the U broadcast (tree, {int(np.ceil(np.log2(machines + 1)))}"
        f" rounds) {bcast_bytes / 1e9:.1f} GB.",
        f"* **Network time per iteration**: 1 Gb/s: **{net[1]:,.0f} s** ({net[1] / 60:.0f} min); "
        f"10 Gb/s: **{net[10]:,.0f} s** ({net[10] / 60:.1f} min).",
        f"* **Per iteration in all** (compute + network, not overlapped): 1 Gb/s ≈ "
        f"{(p_compute + net[1]) / 60:.0f} min, 10 Gb/s ≈ {(p_compute + net[10]) / 60:.1f} min, against the "
        f"paper's **1.5 h** per iteration on its 16-machine MapReduce system (SCOPE). Its Map-1 emits one "
        f"K-vector per non-zero of D (nnz(D)·K·8 B = {p_nnz * PK * 8 / 1e12:.1f} TB shuffled per iteration) where "
        f"the Dask learner sends one per (partition, term) pair.",
        "",
        "The model is linear in its assumptions: twice the terms per document doubles the compute; the "
        "vocabulary share of a partition drives the R traffic (bounded by 16 × M × K × 8 B = "
        f"{machines * PM * PK * 8 / 1e9:.0f} GB per iteration if every partition held every term). The "
        "network term dominates at 1 Gb/s; it is the R shares, which the term-block layout cannot avoid "
        "(the patent's MPI arrangement moves the same partial sums in an all-reduce).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
