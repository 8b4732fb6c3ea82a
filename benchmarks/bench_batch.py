"""Benchmark of BatchRLSI against the paper's algorithm as printed and scikit-learn NMF.

One run generates one synthetic Zipfian tf-idf corpus (``benchmarks/synthetic.py``), stores it in a work
directory, and measures every method in its own subprocess (``--only METHOD``) on that same matrix, so
that the peak resident memory reported for a method (``VmHWM`` of its process) is its own. The
parent collects the JSON each child writes and renders a markdown report (``--out``). The shared
machinery (memory, machine facts, children, timers, tables) is in ``benchmarks/harness.py``.

Methods
-------
rlsi    ``BatchRLSI.fit`` as a user calls it (``init="docs"``, λ₂ = 1, ℓ1 topics / ℓ2 documents). The
        functions the fit reaches through module attributes are wrapped with nested timers inside this
        process only (``src/`` is not edited): the driver's problem methods (U-step, V-step, objective),
        ``rlsi.models.steps``, the per-block tasks of ``rlsi.models.tasks``, the R providers of
        ``rlsi.models.screening``, the penalties, and the numba kernels of ``rlsi.kernels`` down to the
        jitted functions themselves, plus BLAS/LAPACK calls (the gram and the ridge GEMM in row chunks, Cholesky),
        ``sp.vstack``, ``eliminate_zeros`` and CSR row slicing. Every phase is shown with the untimed rest of
        its parent, so the table accounts for the whole iteration. From the same timers: the **serial share**
        of an iteration, its wall time outside numba parallel kernels and BLAS/LAPACK calls.
        Numba kernels are loaded/compiled by a tiny warm-up fit first (reported separately).
paper   ``rlsi.oracle.paper.update_u`` / ``update_v`` (plain numpy, dense D = terms x docs, Algorithm 2
        with a zero start per row, Algorithm 3). The dense problem does not fit in memory at the benchmark's
        size, so the U-step is timed on a random sample of term rows (M independent problems) and the
        V-step on a random sample of documents, and both are extrapolated linearly (the parts that do
        not scale, S = V Vᵀ and (UᵀU + λ₂I)⁻¹, are timed separately and added once). The inner
        stopping rule is BatchRLSI's (``inner_tol``), so both solve the same problems to the same
        accuracy; the sampled rows are checked against BatchRLSI's own first U-step.
nmf-mu, nmf-cd  ``sklearn.decomposition.NMF(solver=..., init="random", tol=0)``. Two fits, with
        ``max_iter=1`` and ``max_iter=--nmf-iters``; per iteration = the difference / (n - 1), which
        removes initialisation and the error evaluations sklearn does at the start and the end;
        ``fit time / max_iter`` is reported too, and the fastest of n iterations of sklearn's own update
        functions (a contention-robust estimate).
lda     gensim ``LdaMulticore`` (1 worker) on the raw counts, one pass (optionally on a sample of
        documents, scaled linearly); optional (needs gensim).

``--sweep-lambda1 a,b,c`` fits BatchRLSI once per λ₁ (and NMF(mu) once) on the same matrix and tabulates
time per iteration, AvgComp = nnz(U)/(M·K), dead topics, the ratio to NMF(mu) and the serial share;
``--threads N`` pins numba and BLAS to N threads in every child (the serial share is measured at 1).

On a shared machine, wall-clock times vary between runs; every method's process wall/CPU time and the load
average are reported, and the minimum-over-repeats estimates (BatchRLSI: a late iteration replayed
``--replays`` times from a snapshot of the fit's state; NMF: fastest iteration) are given beside the means.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
from harness import (accounting, current_rss_gb, fmt, md_table, peak_rss_gb, timed,  # noqa: E402
                     write_json)

harness.use_src()
from synthetic import describe, make_corpus  # noqa: E402

METHODS = ("rlsi", "paper", "nmf-mu", "nmf-cd", "lda")
SEP = " › "  # joins a phase path into one JSON key
# Leaf phases whose time is spent inside numba parallel kernels or BLAS/LAPACK: the rest of an iteration is
# its serial part. The python wrappers of the kernels (allocations, casts, cumsum) are outside.
PARALLEL = ("numba: _csr_dense_tiled", "numba: _csr_csr_dense_tiled", "numba: _count_row_nonzeros", "numba: _fill_csr",
            "numba: lasso_cd_rows", "BLAS: gram (row chunks)", "BLAS: ridge GEMM Φ·Σ (row chunks)",
            "LAPACK: cho_factor", "LAPACK: cho_solve", "numba: _row_sums",
            "numba: _nonzero_row_mask", "numba: _take_rows", "numba: _column_drift", "numba: _csr_row_norms",
            "numba: _row_dots", "numba: _row_absmax", "numba: _cast_into", "numba: _store_rounded",
            "numba: _csr_gram_parts", "numba: _sum_parts_sym")
# Numba kernels that are not parallel (no prange): counted as serial, shown apart (none at present).
SERIAL_KERNELS = ()
# the top-level phases of an iteration: the driver calls these three methods of the problem
U_STEP, V_STEP, OBJECTIVE = "U-step (problem.u_step)", "V-step (problem.v_step)", "objective (problem.objective)"
SEARCH = "λ₁ search (target_terms_per_topic)"  # before the fit's iterations; reported apart, not per iteration


def load_inputs(workdir, dtype=None):
    """The run's matrix, cast to ``dtype`` (a sweep over dtypes stores it once, as float64)."""
    X = sp.load_npz(workdir / "X.npz").tocsr()
    return X if dtype is None else X.astype(dtype)


# ------------------------------------------------------------------------------------ rlsi instrumentation
class _Proxy:
    """A module as seen by one of rlsi's modules, with some attributes replaced (timed)."""

    def __init__(self, module, **overrides):
        self._module = module
        self.__dict__.update(overrides)

    def __getattr__(self, name):
        return getattr(self._module, name)


def instrument(prof, state):
    """Wrap what ``BatchRLSI.fit_transform`` reaches through module and class attributes with nested
    timers of ``prof`` (a :class:`harness.PhaseProfiler`); ``state`` receives the per-iteration records,
    the initial W, U after the first U-step and a snapshot of the problem before the last iteration."""
    import scipy.linalg as la

    from rlsi.kernels import lasso as klasso
    from rlsi.kernels import convert, products
    from rlsi.kernels import rows as krows
    from rlsi.models import local, penalties, screening, skeleton, start, steps, tasks

    P = prof.patch
    # numba kernels: the jitted functions, looked up as module globals by their python wrappers
    for name in ("_csr_dense_tiled", "_csr_csr_dense_tiled", "_take_rows", "_csr_gram_parts", "_sum_parts_sym"):
        P(products, name, "numba: " + name)
    for name in ("_count_row_nonzeros", "_fill_csr", "_take_rows"):  # (sparse_plan's _take_rows: products')
        P(convert, name, "numba: " + name)
    for name in ("_row_sums", "_row_dots", "_row_absmax", "_cast_into", "_store_rounded"):
        P(krows, name, "numba: " + name)
    P(steps, "_nonzero_row_mask", "numba: _nonzero_row_mask")
    P(klasso, "lasso_cd_rows", "numba: lasso_cd_rows")
    P(screening, "_column_drift", "numba: _column_drift")
    P(screening, "_csr_row_norms", "numba: _csr_row_norms")
    # the kernels' python wrappers, as tasks, providers, problems and penalties call them
    for name in ("csr_csr_dense", "csr_dense_rows", "csr_rows_to_dense", "dense_to_csr", "csr_take_dense",
                 "dense_rows_to_csr"):
        P(tasks, name)
    P(local, "csr_rows_to_dense", "csr_rows_to_dense (U to dense)")
    P(local, "dense_to_csr", "dense_to_csr (U to CSR)")
    P(screening, "csr_dense_rows")
    P(screening, "csr_dense_rows_max")
    P(screening, "csr_dense_take")

    def lasso_post(out, a, k):
        sw = out[1]
        r = prof.record
        r["rows"] += len(sw)
        r["rows_iterated"] += int((sw > 0).sum())  # the others were optimal at zero (skipped by the kernel)
        r["sweeps"] += int(sw.sum())
        r["rows_maxed"] += int((sw >= k.get("max_iter", 100)).sum())
        r["max_sweeps"] = max(r["max_sweeps"], int(sw.max(initial=0)))

    P(penalties, "lasso_rows", post=lasso_post)
    P(penalties, "ridge_inverse")
    penalties.la = _Proxy(la, cho_factor=prof.wrap(la.cho_factor, "LAPACK: cho_factor"),
                          cho_solve=prof.wrap(la.cho_solve, "LAPACK: cho_solve"))
    P(tasks, "gram_rows", "BLAS: gram (row chunks)")
    P(penalties, "matmul_rows", "BLAS: ridge GEMM Φ·Σ (row chunks)")
    P(tasks, "dot_sum", "dot_sum: cross term Σ Φ∘W")

    Penalty = penalties.Penalty
    orig_solve = Penalty.solve

    def solve(self, R, prepared, U0, lam, *, max_iter, tol, **kwargs):
        with prof.phase(f"penalty.solve ({self.name})"):
            return orig_solve(self, R, prepared, U0, lam, max_iter=max_iter, tol=tol, **kwargs)

    Penalty.solve = solve
    P(Penalty, "prepare", "penalty.prepare")
    P(Penalty, "value", "penalty.value")
    # inline scipy work of the steps and tasks
    steps.sp = _Proxy(sp, vstack=prof.wrap(sp.vstack, "sp.vstack (U blocks)"))
    P(sp.csr_matrix, "eliminate_zeros", "eliminate_zeros")
    P(sp.csr_matrix, "__getitem__", "CSR row slice X[a:b]")
    # tasks, steps, providers
    for name in ("topic_block", "topic_block_rows", "doc_block", "gram"):
        P(tasks, name)
    P(steps, "topic_gram", "topic_gram G = UᵀU")
    for name in ("update_topics", "update_doc_vectors"):
        P(steps, name)
    for cls in (screening.ScreenedBatchR, screening.BatchR):
        P(cls, "set_state", f"{cls.__name__}.set_state")
        P(cls, "__call__", f"R rows ({cls.__name__})")
    P(screening.ScreenedBatchR, "compact", "R rows, unscreened only (ScreenedBatchR.compact)")
    # the driver's problem
    Problem = local.RLSIProblem
    P(Problem, "u_step", U_STEP)
    P(Problem, "v_step", V_STEP)
    P(Problem, "v_step_topics", "V-step topics (U, or a dense copy)")
    P(Problem, "objective", OBJECTIVE)
    P(Problem, "__init__", "problem setup (D = Xᵀ, S, ‖X‖², screening)",
      post=lambda out, a, k: state.__setitem__("problem", a[0]))
    P(start, "initial_doc_vectors", "init (V₀)", post=lambda out, a, k: state.__setitem__("W0", out))
    P(start, "search_lambda1", SEARCH)

    orig_alternate = skeleton.alternate

    def alternate(problem, **kw):
        user_cb = kw.pop("callback", None)
        state["pre"] = prof.record  # init and problem setup
        prof.record = defaultdict(float)
        state["t_iter"] = time.perf_counter()

        def callback(it, obj, diag):
            t_cb = time.perf_counter()
            rec = prof.record
            state["iters"].append(dict(wall=t_cb - state["t_iter"], obj=obj, diag=dict(diag),
                                       nnzU=int(diag["nnz"]), record=rec))
            if it == 1:  # as CSR whatever the representation (dense topics above 5 % non-zero)
                state["U1"] = sp.csr_matrix(problem.U)
            if state.get("snapshot_at") == it:
                state["snapshot"] = clone_problem(problem)
            if user_cb is not None:
                user_cb(it, obj, diag)
            prof.record = defaultdict(float)
            state["t_iter"] = time.perf_counter()
            state["callback_s"] += state["t_iter"] - t_cb  # excluded from the timed fit

        return orig_alternate(problem, callback=callback, **kw)

    skeleton.alternate = alternate


def clone_problem(problem):
    """A copy of an RLSIProblem whose later steps do not change the original (arrays mutated in place by
    the screening provider are copied; the others are replaced by the steps, not mutated)."""
    p = copy.copy(problem)
    p.used = list(getattr(problem, "used", []))
    r = p.r_rows = copy.copy(problem.r_rows)
    for name in ("bound", "W"):
        if isinstance(getattr(r, name, None), np.ndarray):
            setattr(r, name, getattr(r, name).copy())
    if hasattr(r, "_skipped"):
        r._skipped = {}
    return p


def replay(prof, snapshot, reps):
    """Re-run the iteration after ``snapshot`` ``reps`` times with the serial executor, exactly as the
    driver calls it; keep each phase's minimum (on a shared machine the best estimate of the uncontended
    cost). Returns the record of the fastest repeat (its phases add up, unlike per-phase minima)."""
    from rlsi.models.executor import SerialExecutor

    best = None
    ex = SerialExecutor()
    for _ in range(reps):
        p = clone_problem(snapshot)
        prof.record = defaultdict(float)
        t = time.perf_counter()
        p.u_step(ex)
        p.v_step(ex)
        p.objective()
        wall = time.perf_counter() - t
        if best is None or wall < best["wall"]:
            best = {"wall": wall, "phases": flatten(prof.record)[0]}
    best["parallel_s"], best["serial_kernel_s"] = parallel_seconds(best["phases"])
    best["serial_share"] = 1.0 - best["parallel_s"] / best["wall"]
    return best


def flatten(record):
    """A profiler record as JSON: ``(phases, other)`` with phases ``"a › b"`` -> seconds and
    ``"# a › b"`` -> calls, and the other (string) keys as they are."""
    phases, other = {}, {}
    for k, v in record.items():
        if isinstance(k, tuple):
            phases[("# " + SEP.join(k[1:])) if k[0] == "#" else SEP.join(k)] = v
        else:
            other[k] = v
    return phases, other


def parallel_seconds(phases):
    """Seconds of a flattened record spent in parallel kernels / BLAS, and in the non-parallel kernel."""
    par = ser = 0.0
    for k, v in phases.items():
        if k.startswith("#"):
            continue
        leaf = k.split(SEP)[-1]
        if leaf in PARALLEL:
            par += v
        elif leaf in SERIAL_KERNELS:
            ser += v
    return par, ser


def planted_recovery(U, topic_terms, top=10, planted_top=30):
    """Mean, over non-dead learned topics, of the best share of the topic's top-``top`` terms (by |weight|)
    that are among the ``planted_top`` most probable terms of one planted topic."""
    Ut = U.T.tocsr()
    sets = [set(t[:planted_top].tolist()) for t in topic_terms]
    scores = []
    for k in range(Ut.shape[0]):
        lo, hi = Ut.indptr[k], Ut.indptr[k + 1]
        if hi == lo:
            continue
        idx = Ut.indices[lo:hi][np.argsort(-np.abs(Ut.data[lo:hi]))[:top]]
        s = set(idx.tolist())
        scores.append(max(len(s & p) for p in sets) / min(top, len(idx)))
    return float(np.mean(scores)) if scores else 0.0


def run_rlsi(a, wd):
    from rlsi.models.batch import BatchRLSI

    X = load_inputs(wd, a.child_dtype)
    res = {"rss_after_load_gb": current_rss_gb(), **harness.thread_info()}
    N, M = X.shape
    K = a.k
    # warm-up: loads numba's cached machine code (or compiles it) outside the timed fit, on every path the
    # fit can take (screened sparse topics, the switch to dense topics, the λ₁ search)
    small = make_corpus(400, 3000, 50, n_topics=10, seed=1, dtype=X.dtype).X
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw in (dict(lambda1=a.lambda1), dict(lambda1=0.3), dict(lambda1=1e-5), dict(target_terms_per_topic=50)):
            BatchRLSI(10, max_iter=3, random_state=0, **kw).fit(small)
    res["warmup_s"] = time.perf_counter() - t

    prof = harness.PhaseProfiler()
    state = {"iters": [], "callback_s": 0.0, "snapshot_at": a.iters - 1 if a.replays > 0 else None}
    instrument(prof, state)
    sweeps = {} if a.topic_sweeps == "default" else {
        "topic_sweeps": None if a.topic_sweeps == "none" else int(a.topic_sweeps)}
    est = BatchRLSI(K, lambda1=a.lambda1, lambda2=a.lambda2, max_iter=a.iters, tol=a.tol, random_state=a.seed,
                    inner_max_iter=a.inner_max_iter, inner_tol=a.inner_tol,
                    target_terms_per_topic=a.terms_per_topic, **sweeps)
    prof.record = defaultdict(float)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.perf_counter()
        W = est.fit_transform(X)
        total = time.perf_counter() - t - state["callback_s"]
    res["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    pre = flatten(state["pre"])[0]
    search_s = pre.get(SEARCH, 0.0)
    total -= search_s  # the λ₁ search of target_terms_per_topic is reported apart (search_s)
    iters = []
    for x in state["iters"]:
        phases, other = flatten(x.pop("record"))
        par, ser = parallel_seconds(phases)
        iters.append({**x, **other, "phases": phases, "parallel_s": par, "serial_kernel_s": ser,
                      "serial_share": 1.0 - par / x["wall"]})
    Ut = est.components_
    U = Ut.T.tocsr()
    init_s = pre.get("init (V₀)", 0.0)
    setup_s = pre.get("problem setup (D = Xᵀ, S, ‖X‖², screening)", 0.0)
    res.update(
        total_s=total, pre=pre, init_s=init_s, setup_s=setup_s, iters=iters, n_iter=est.n_iter_,
        fit_rest_s=total - init_s - setup_s - sum(x["wall"] for x in iters),
        lambda1=float(est.lambda1_), lambda1_effective=est.lambda1_effective_, lambda2=a.lambda2, K=K, N=N, M=M,
        search_s=search_s, terms_per_topic_target=a.terms_per_topic, topic_sweeps=est.topic_sweeps,
        objective=est.objective_.tolist(), nnzU=int(Ut.nnz), density_U=Ut.nnz / (M * K),
        dead_topics=int(len(est.dead_topics())), converged=est.n_iter_ < a.iters,
        terms_per_topic=np.diff(Ut.indptr).tolist(), n_rows_screened=int(est.n_rows_screened_),
        rss_peak_gb=peak_rss_gb(), dtype=str(X.dtype),
    )
    topic_terms = np.load(wd / "topic_terms.npy")
    if topic_terms.size:
        res["planted_recovery_top10"] = planted_recovery(U, topic_terms)
    if a.replays > 0 and "snapshot" in state:
        res["replay_late"] = replay(prof, state["snapshot"], a.replays)
    if a.tag:  # a sweep run: the paper child does not follow
        return res
    # states for the paper child: V0 and U1 (first U-step, to check the sampled rows), final U and W
    np.save(wd / "W0.npy", state["W0"])
    sp.save_npz(wd / "U1.npz", state["U1"].tocsr(), compressed=False)
    np.save(wd / "W_final.npy", W)
    sp.save_npz(wd / "U_final.npz", U, compressed=False)
    return res


# ------------------------------------------------------------------------------------------- the paper
def run_paper(a, wd):
    from rlsi.oracle import paper

    X = load_inputs(wd)
    rl = json.loads((wd / "rlsi.json").read_text())
    lam1, lam2 = rl["lambda1_effective"], rl["lambda2"]
    N, M = X.shape
    K = a.k
    rng = np.random.default_rng(a.seed + 1)
    res = {"rss_after_load_gb": current_rss_gb(), "lambda1_effective": lam1}
    W0 = np.load(wd / "W0.npy").astype(np.float64)
    Wf = np.load(wd / "W_final.npy").astype(np.float64)
    U1 = sp.load_npz(wd / "U1.npz").tocsr()
    Uf = sp.load_npz(wd / "U_final.npz").tocsr()
    inner = dict(max_iter=a.inner_max_iter, tol=a.inner_tol)

    # ---- U-step: M independent rows -> time a random sample of rows, extrapolate linearly in M
    m = min(a.paper_terms, M)
    terms = np.sort(rng.choice(M, size=m, replace=False))
    Dsub = np.ascontiguousarray(X[:, terms].T.toarray(), dtype=np.float64)  # m x N, dense as printed
    res["u_sample_rows"] = m

    def u_step(V, label, rows=None):
        D = Dsub if rows is None else Dsub[:rows]
        mm = D.shape[0]
        V = np.ascontiguousarray(V)
        _, t_S = timed(lambda: V @ V.T)  # fixed part (does not scale with M)
        U, t = timed(paper.update_u, D, V, lam1, "l1", **inner)
        est = t_S + (t - t_S) * M / mm
        res[label] = dict(sample_rows=mm, sample_s=t, S_s=t_S, extrapolated_s=est,
                          density=float((U != 0).mean()))
        return U

    Up = u_step(W0.T, "u_step_V0")
    ref = U1[terms].toarray()
    scale = max(np.abs(ref).max(), 1e-300)
    res["u_check_max_abs_diff_rel"] = float(np.abs(Up - ref).max() / scale)
    res["u_check_support_agree"] = float(((Up != 0) == (ref != 0)).mean())
    u_step(Wf.T, "u_step_Vfinal")
    sigma = np.sqrt(float(np.square(X.data, dtype=np.float64).sum()) / (N * K))
    Vr = rng.standard_normal((K, N)) * sigma
    u_step(Vr, "u_step_random_V0", rows=min(m, a.paper_terms_random))
    Vr = Dsub = None  # free the dense sample before the V-step's

    # ---- V-step: N independent columns -> time a random sample of documents, extrapolate linearly in N
    n = min(a.paper_docs, N)
    docs = np.sort(rng.choice(N, size=n, replace=False))
    D2 = np.ascontiguousarray(X[docs].T.toarray(), dtype=np.float64)  # M x n
    Ud = Uf.toarray().astype(np.float64)
    _, t_fix = timed(lambda: np.linalg.inv(Ud.T @ Ud + lam2 * np.eye(K)))
    Vp, t = timed(paper.update_v, D2, Ud, lam2, "l2", **inner)
    res["v_step"] = dict(sample_docs=n, sample_s=t, fixed_s=t_fix, extrapolated_s=t_fix + (t - t_fix) * N / n)
    ref = Wf[docs].T
    res["v_check_max_abs_diff_rel"] = float(np.abs(Vp - ref).max() / max(np.abs(ref).max(), 1e-300))
    res["dense_full_problem_gb"] = (M * N + 2 * M * K + 2 * K * N) * 8 / 2**30
    res["rss_peak_gb"] = peak_rss_gb()
    return res


# ----------------------------------------------------------------------------------------------- NMF, LDA
def run_nmf(a, wd, solver):
    from sklearn.decomposition import NMF
    from sklearn.exceptions import ConvergenceWarning

    X = load_inputs(wd, a.child_dtype)
    res = {"rss_after_load_gb": current_rss_gb(), "solver": solver, "dtype": str(X.dtype)}
    n = a.nmf_iters
    times = {}
    for it in (1, n):
        model = NMF(n_components=a.k, solver=solver, init="random", max_iter=it, tol=0, random_state=a.seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t = time.perf_counter()
            model.fit_transform(X)
            times[it] = time.perf_counter() - t
        res[f"n_iter_{it}"] = int(model.n_iter_)
        res[f"reconstruction_err_{it}"] = float(model.reconstruction_err_)
    res.update(max_iter=n, fit1_s=times[1], fitn_s=times[n], per_iter_divide_s=times[n] / n,
               per_iter_s=(times[n] - times[1]) / (n - 1) if n > 1 else times[1])
    try:
        res["iteration_times_s"] = nmf_iteration_times(X, a.k, solver, n, a.seed)
    except Exception as exc:  # noqa: BLE001 -- private sklearn API; the fits above stay valid
        res["iteration_times_error"] = f"{type(exc).__name__}: {exc}"
    res["rss_peak_gb"] = peak_rss_gb()
    return res


def nmf_iteration_times(X, k, solver, n, seed):
    """Wall time of each of ``n`` iterations of scikit-learn's own NMF update functions (the loop body of
    ``_fit_multiplicative_update`` with tol=0 / one ``_fit_coordinate_descent`` iteration), from the same
    random initialisation as ``NMF(init="random")``. Private API, so only used for this diagnostic."""
    from sklearn.decomposition import _nmf

    W, H = _nmf._initialize_nmf(X, k, init="random", random_state=seed)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        if solver == "mu":
            W, *_ = _nmf._multiplicative_update_w(X, W, H, 2.0, 0.0, 0.0, 1.0)
            H = _nmf._multiplicative_update_h(X, W, H, 2.0, 0.0, 0.0, 1.0)
        else:
            W, H, _ = _nmf._fit_coordinate_descent(X, W, H, tol=0.0, max_iter=1, random_state=seed)
        out.append(time.perf_counter() - t)
    return out


def run_lda(a, wd):
    try:
        from gensim.models import LdaMulticore
    except ImportError:
        return {"skipped": "gensim is not installed (pip install gensim)"}
    import gensim

    C = sp.load_npz(wd / "counts.npz").tocsr()
    n_all = C.shape[0]
    if a.lda_docs and a.lda_docs < n_all:  # a pass is linear in the number of documents
        C = C[np.sort(np.random.default_rng(a.seed).choice(n_all, size=a.lda_docs, replace=False))]
    res = {"gensim": gensim.__version__, "docs": C.shape[0], "docs_all": n_all}
    corpus = [list(zip(C.indices[C.indptr[i]:C.indptr[i + 1]].tolist(),
                       C.data[C.indptr[i]:C.indptr[i + 1]].tolist())) for i in range(C.shape[0])]
    id2word = {i: str(i) for i in range(C.shape[1])}
    res["rss_after_load_gb"] = current_rss_gb()
    t = time.perf_counter()
    LdaMulticore(corpus, num_topics=a.k, id2word=id2word, passes=1, workers=a.lda_workers,
                 chunksize=2000, random_state=a.seed)
    t = time.perf_counter() - t
    res.update(sample_pass_s=t, per_pass_s=t * n_all / C.shape[0], workers=a.lda_workers, rss_peak_gb=peak_rss_gb())
    return res


# --------------------------------------------------------------------------------------------- reporting
def _mean_phases(iters):
    """Mean over iterations of their phase dicts (a phase missing from an iteration counts 0)."""
    keys = {k for x in iters for k in x["phases"]}
    return {k: float(np.mean([x["phases"].get(k, 0.0) for x in iters])) for k in keys}


def summarize_rlsi(r):
    it = r["iters"]
    n = len(it)
    walls = [x["wall"] for x in it]
    ustep = [x["phases"].get(U_STEP, 0.0) for x in it]
    vstep = [x["phases"].get(V_STEP, 0.0) for x in it]
    later = slice(1, None) if n > 1 else slice(0, None)
    late = r.get("replay_late")
    return dict(n=n, total=r["total_s"], init=r["init_s"], setup=r["setup_s"],
                avg_incl=r["total_s"] / n, avg_excl=(r["total_s"] - r["init_s"] - r["setup_s"]) / n,
                first=walls[0], later=float(np.mean(walls[later])), u1=ustep[0], v1=vstep[0],
                u_later=float(np.mean(ustep[later])), v_later=float(np.mean(vstep[later])),
                u_mean=float(np.mean(ustep)), v_mean=float(np.mean(vstep)),
                serial_later=float(np.mean([x["serial_share"] for x in it[later]])),
                serial_kernel_later=float(np.mean([x["serial_kernel_s"] / x["wall"] for x in it[later]])),
                robust=((r["init_s"] + r["setup_s"] + walls[0] + (n - 1) * late["wall"]) / n if late else None))


def nmf_robust(q):
    t = q.get("iteration_times_s")
    return min(t) if t else None


def phase_rows(columns, share_of=None):
    """Rows of a phase table: every timed phase (tree order, nested ones marked ↳), after each phase
    with children the untimed rest of it, the driver's rest and the iteration wall.

    columns : list of ``(phases, wall)`` with phases a flattened record and wall the iteration's wall
        (or None for columns that are not an iteration). ``share_of`` : index of the column whose
        wall the last column's percentages refer to.
    """
    tree, kids = harness.phase_tree([{tuple(k.split(SEP)): v for k, v in ph.items() if not k.startswith("#")}
                                     for ph, _ in columns])
    key = SEP.join

    def val(ph, path):
        return ph.get(key(path), 0.0)

    def cell(ph, path):  # None (blank) where the phase did not run in that column
        return ph.get(key(path))

    def calls(ph, path):
        return ph.get("# " + key(path))

    rows = []

    def add(label, depth, values, ncalls=None, bold=False):
        lead = "&nbsp;&nbsp;" * depth + ("↳ " if depth else "")
        cells = [fmt(v, 3) if v is not None else "" for v in values]
        share = ""
        if share_of is not None and values[share_of] is not None and columns[share_of][1]:
            share = f"{100 * values[share_of] / columns[share_of][1]:.1f} %"
        label = f"**{label}**" if bold else label
        rows.append([lead + label, *cells, "" if ncalls is None else fmt(ncalls, 1), share])

    def visit(path):
        depth = len(path) - 1
        leaf = path[-1]
        tag = " (parallel)" if leaf in PARALLEL else (" (serial kernel)" if leaf in SERIAL_KERNELS else "")
        add(leaf + tag, depth, [cell(ph, path) for ph, _ in columns],
            calls(columns[share_of][0], path) if share_of is not None else None)
        if kids[path]:
            for c in kids[path]:
                visit(c)
            add(f"untimed rest of {leaf}", depth + 1,
                [None if cell(ph, path) is None else val(ph, path) - sum(val(ph, c) for c in kids[path])
                 for ph, _ in columns])

    for top in kids[()]:
        visit(top)
    add("driver rest (loop, log, diagnostics)", 0,
        [None if w is None else w - sum(val(ph, t) for t in kids[()]) for ph, w in columns])
    add("iteration wall", 0, [w for _, w in columns], bold=True)
    return rows


def profile_section(r, args):
    it = r["iters"]
    later = it[1:] if len(it) > 1 else it
    L = ["## Where BatchRLSI's time goes (seconds per phase)\n",
         "Nested timers wrap the functions the fit reaches (inside the benchmark process; `src/` unchanged): "
         "the driver's problem methods, `rlsi.models.steps`, the tasks of `rlsi.models.tasks`, the R providers "
         "of `rlsi.models.screening`, the penalties, the numba kernels of `rlsi.kernels` down to the jitted "
         "functions (marked *parallel*), BLAS/LAPACK calls, `sp.vstack`, `eliminate_zeros` and CSR row "
         "slicing. Each phase with timed children is followed by its *untimed rest* (inline code between the "
         "timers: allocations, casts, masks, small numpy), so every column adds up to the iteration wall. "
         "Calls are per iteration (mean of 2..n). The replay column re-runs the last iteration from a "
         "snapshot of the fit's state and keeps the fastest repeat. Timer overhead is a few µs per call.\n"]
    cols = [(r["pre"], None), (it[0]["phases"], it[0]["wall"]),
            (_mean_phases(later), float(np.mean([x["wall"] for x in later])))]
    header = ["phase", "init + setup", "iteration 1", "mean of 2..n"]
    late = r.get("replay_late")
    if late:
        cols.append((late["phases"], late["wall"]))
        header.append(f"replay: late iteration (fastest of {args.replays})")
    L += md_table(header + ["calls / iteration", "share of iteration (2..n)"], phase_rows(cols, share_of=2))
    L.append("")
    s = summarize_rlsi(r)
    L.append(f"Fit accounting: total {r['total_s']:.2f} s = problem setup {r['setup_s']:.2f} + init "
             f"{r['init_s']:.2f} + {len(it)} iterations {sum(x['wall'] for x in it):.2f} + rest "
             f"{r['fit_rest_s']:.2f} (validation, `components_`, dead-topic check).\n")
    L.append(f"**Serial share**: the share of an iteration's wall time outside numba parallel kernels "
             f"and BLAS/LAPACK calls ({', '.join(PARALLEL)}), here with numba threads = {r['numba_threads']}, "
             f"BLAS threads = {r.get('blas_threads')}: **{100 * s['serial_later']:.1f} %** (mean of iterations "
             f"2..n; iteration 1: {100 * it[0]['serial_share']:.1f} %"
             + (f"; replay: {100 * late['serial_share']:.1f} %" if late else "")
             + "). It includes the python wrappers of the kernels"
             + (f" and the non-parallel numba kernels {', '.join(SERIAL_KERNELS)} "
                f"({100 * s['serial_kernel_later']:.2f} % of the iteration)" if SERIAL_KERNELS else "") + ". "
             "Measured at 1 thread (`--threads 1`) it is the serial fraction of Amdahl's law.\n")
    return L


def _nmf_for(res, r):
    """The NMF(mu) result measured on the same dtype as the BatchRLSI result ``r``."""
    for key, q in res.items():
        if key.startswith("nmf-mu") and q and q.get("dtype", r.get("dtype")) == r.get("dtype"):
            return q
    return {}


def _mean_sweeps(r):
    """Coordinate-descent sweeps per solved term row, mean of iterations 2..n (1 if a single one)."""
    it = r["iters"][1:] or r["iters"]
    vals = [x.get("sweeps", 0) / max(x.get("rows_iterated", 0), 1) for x in it]
    return float(np.mean(vals)) if vals else 0.0


def sweep_rows(res):
    """One dict per BatchRLSI fit of a sweep (with its NMF of the same dtype), in run order."""
    out = []
    for key, r in res.items():
        if not key.startswith("rlsi") or "iters" not in r:
            continue
        s = summarize_rlsi(r)
        nmf = _nmf_for(res, r).get("per_iter_s")
        tpt = np.asarray(r["terms_per_topic"])
        target = r.get("terms_per_topic_target")
        out.append(dict(key=key, dtype=r.get("dtype"), target=None if target is None else target / r["M"],
                        density=r["density_U"], median_terms=float(np.median(tpt)), lambda1=r["lambda1"],
                        dead=r["dead_topics"], n=s["n"], avg=s["avg_incl"], later=s["later"], u=s["u_later"],
                        v=s["v_later"], nmf=nmf, ratio=s["avg_incl"] / nmf if nmf else None,
                        serial=s["serial_later"], sweeps=_mean_sweeps(r), search=r.get("search_s", 0.0),
                        rss=r["rss_peak_gb"], topic_sweeps=r.get("topic_sweeps")))
    return out


def sweep_section(res, args):
    """Sweep over λ₁ or AvgComp targets: one row per BatchRLSI fit, NMF(mu) once per dtype on the same matrix."""
    L = ["## Density sweep: speed and serial share at every density\n",
         f"BatchRLSI (`--iters {args.iters}`, tol {args.tol:g}, topic_sweeps = {args.topic_sweeps}) per density and "
         f"NMF(`mu`) once per dtype, same matrix, numba and BLAS threads: {args.threads or 'library default'}. "
         "With `--sweep-avgcomp` each fit asks for `target_terms_per_topic = round(AvgComp·M)` and the library "
         "searches λ₁ (its time, 'λ₁ search', is not in the per-iteration numbers). Per iteration: whole-fit "
         "average (init and first iteration included; this is the ratio's numerator) and the mean of iterations "
         "2..n. AvgComp = nnz(U)/(M·K) of the final topics. Sweeps: coordinate-descent sweeps per term row the lasso "
         "iterated on in a U-step (rows optimal at zero are skipped; mean of iterations 2..n). Serial share: time outside numba parallel kernels and BLAS/LAPACK, "
         "mean of iterations 2..n. "
         + ("**Clock: CPU time of the process** (`--clock cpu`, `time.process_time`) for every timing of this file, "
            "NMF's included: the cores were shared with other work, which inflates wall-clock times but not the "
            "CPU time of a 1-thread run.\n" if args.clock == "cpu" else "Clock: wall.\n")]
    rows = []
    for x in sweep_rows(res):
        rows.append([x["dtype"], "—" if x["target"] is None else f"{x['target']:g}", f"{x['density']:.3g}",
                     f"{x['median_terms']:.0f}", f"{x['lambda1']:.3g}", x["dead"], x["n"], fmt(x["avg"], 3),
                     fmt(x["later"], 3), fmt(x["u"], 3), fmt(x["v"], 3), fmt(x["sweeps"], 1),
                     fmt(x["nmf"], 3) if x["nmf"] else "—", fmt(x["ratio"]) if x["ratio"] else "—",
                     f"{100 * x['serial']:.1f} %", fmt(x["search"], 1), fmt(x["rss"])])
    L += md_table(["dtype", "target AvgComp", "AvgComp", "median terms / topic", "λ₁ (per 1000 docs)", "dead topics",
                   "iterations", "s / iteration (whole fit)", "s / iteration (2..n)", "U-step (2..n)",
                   "V-step (2..n)", "sweeps / row", "NMF(mu) s / iteration", "ratio to NMF(mu)", "serial share",
                   "λ₁ search (s)", "peak RSS (GiB)"], rows)
    L.append("")
    for key, mu in res.items():
        if not key.startswith("nmf-mu"):
            continue
        nmf = (mu or {}).get("per_iter_s")
        if nmf:
            L.append(f"{key}: {nmf:.3f} s per iteration ((fit(max_iter={mu['max_iter']}) − fit(max_iter=1)) / "
                     f"{mu['max_iter'] - 1}); fastest single iteration {fmt(nmf_robust(mu), 3)} s; peak RSS "
                     f"{fmt(mu['rss_peak_gb'])} GiB.\n")
        elif mu:
            L.append(f"{key}: {mu.get('error', 'no result')}.\n")
    return L


def plot_sweep(res, args, path, ylabel="CPU seconds per iteration (1 thread)"):
    """PNG: seconds per iteration (whole fit) against AvgComp, BatchRLSI and NMF(mu), one line per dtype."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sweep_rows(res)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    styles = {"float64": "-", "float32": "--"}
    for dt in dict.fromkeys(x["dtype"] for x in rows):
        xs = [x for x in rows if x["dtype"] == dt]
        ls = styles.get(dt, ":")
        ax.plot([x["density"] for x in xs], [x["avg"] for x in xs], "o" + ls, color="C0", label=f"BatchRLSI, {dt}")
        if xs[0]["nmf"]:
            ax.plot([x["density"] for x in xs], [x["nmf"] for x in xs], "s" + ls, color="C3",
                    label=f"NMF(mu), {dt}")
    ax.set_xscale("log")
    ax.set_xlabel("topic density AvgComp = nnz(U) / (M·K)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.set_title(f"BatchRLSI vs scikit-learn NMF(mu): {args.docs:,} docs × {args.terms:,} terms, K = {args.k}",
                 fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def render_sweep(args, facts, corpus_desc, res, command):
    L = ["# Batch benchmark: λ₁ sweep of BatchRLSI against scikit-learn NMF(mu)\n",
         "Generated by `benchmarks/bench_batch.py`. Command:\n", f"```\n{command}\n```\n",
         f"**Code.** rlsi at commit {facts.get('code')}.\n", harness.machine_line(facts) + "\n",
         f"**Data.** `benchmarks/synthetic.py` (seed {args.seed}, {args.planted} planted topics): "
         f"{corpus_desc}. tf-idf `n(t,d)/|d|·log(N/df)`, "
         f"{args.sweep_dtypes or args.dtype}. K = {args.k}.\n"]
    L += sweep_section(res, args)
    L += process_table(res)
    if args.clock == "cpu":
        L.append("With `--clock cpu` the children's timers read CPU time, so the 'process wall' column above is "
                 "CPU time too (the parent's progress lines give the wall clock).\n")
    for key, r in res.items():
        if key.startswith("rlsi") and "iters" in r:
            L.append(f"### Phases: {key} (λ₁ = {r['lambda1']:.3g})\n")
            L += profile_section(r, args)[2:]
    return "\n".join(L) + "\n"


def process_table(res):
    L = ["Process accounting (the machine is shared; a 1-minute load average above the core count means "
         "other processes competed for the cores during that measurement):\n"]
    L += md_table(["method", "process wall (s)", "process CPU (s)", "load average start → end"],
                  [[k, f"{v['process']['wall_s']:.1f}", f"{v['process']['cpu_s']:.1f}",
                    f"{v['process']['loadavg_start']:.2f} → {v['process']['loadavg_end']:.2f}"]
                   for k, v in res.items() if v and "process" in v], "lrrl")
    L.append("")
    return L


def render(args, facts, corpus_desc, res, command):
    L = []
    L.append("# Batch benchmark: BatchRLSI vs the paper's algorithm vs scikit-learn NMF\n")
    L.append("Generated by `benchmarks/bench_batch.py`. Command:\n")
    L.append(f"```\n{command}\n```\n")
    L.append(f"**Code.** rlsi at commit {facts.get('code')}.\n")
    L.append(harness.machine_line(facts) + "\n")
    L.append(f"**Data.** `benchmarks/synthetic.py` (seed {args.seed}, {args.planted} planted topics): "
             f"{corpus_desc}. tf-idf `n(t,d)/|d|·log(N/df)`, {args.dtype}.\n")
    r = res.get("rlsi")
    s = summarize_rlsi(r) if r and "iters" in r else None
    if s:
        L.append(f"**BatchRLSI settings.** K = {args.k}, lambda1 = {r['lambda1']:g} per 1000 docs "
                 f"(`lambda1_scale=\"per_doc\"`, λ₁ = {r['lambda1_effective']:g} in Eq. 1), λ₂ = {r['lambda2']:g}, "
                 f"ℓ1 topics / ℓ2 documents, `init=\"docs\"`, max_iter = {args.iters}, tol = {args.tol:g}, "
                 f"inner_tol = {args.inner_tol:g}, numba threads = {r['numba_threads']}, BLAS threads = "
                 f"{r.get('blas_threads')} (`--threads {args.threads or 'not given'}`); "
                 f"{s['n']} outer iterations run ({'converged' if r['converged'] else 'stopped at max_iter'}). "
                 f"Warm-up (numba cache load) before the timed fit: {r['warmup_s']:.1f} s, not included.\n")
    L.append("## Time per outer iteration and peak memory\n")
    L.append("| method | per iteration (s) | contention-robust estimate (s) | U-step (s) | V-step (s) | "
             "first iteration (s) | init (s) | peak RSS (GiB) | notes |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    if s:
        L.append(f"| **BatchRLSI**, whole-fit average incl. init | **{fmt(s['avg_incl'])}** | {fmt(s['robust'])} | "
                 f"{fmt(s['u_mean'])} | "
                 f"{fmt(s['v_mean'])} | {fmt(s['first'])} | {fmt(s['init'])} | {fmt(r['rss_peak_gb'])} | "
                 f"total fit {s['total']:.1f} s / {s['n']} iterations (setup {s['setup']:.2f} s incl.); serial "
                 f"share of iterations 2..n: {100 * s['serial_later']:.1f} % |")
        L.append(f"| BatchRLSI, average excl. init and setup | {fmt(s['avg_excl'])} | | | | | | | |")
        late = r.get("replay_late", {})
        L.append(f"| BatchRLSI, iterations 2..n | {fmt(s['later'])} | {fmt(late.get('wall'))} | {fmt(s['u_later'])} | "
                 f"{fmt(s['v_later'])} | | | | robust: late iteration replayed {args.replays}×, fastest |")
    p = res.get("paper")
    paper_avg = paper_steady = paper_first_printed = None
    if p and "v_step" in p:
        v = p["v_step"]["extrapolated_s"]
        u0, uf, ur = (p[k]["extrapolated_s"] for k in ("u_step_V0", "u_step_Vfinal", "u_step_random_V0"))
        paper_steady = uf + v
        paper_first_matched = u0 + v
        paper_first_printed = ur + v
        n = s["n"] if s else 1
        paper_avg = (paper_first_matched + (n - 1) * paper_steady) / n
        L.append(f"| paper algorithm (Alg. 1–3 as printed, plain numpy, dense), same iterates as BatchRLSI: "
                 f"whole-fit average | {fmt(paper_avg, 1)} | | {fmt(uf, 1)} (at final V) | {fmt(v, 1)} | "
                 f"{fmt(paper_first_matched, 1)} (from BatchRLSI's V₀) | | {fmt(p['dense_full_problem_gb'], 0)} "
                 f"needed (measured {fmt(p['rss_peak_gb'])} on the samples) | **extrapolated**: U-step timed on "
                 f"{p['u_sample_rows']} random term rows × M/{p['u_sample_rows']}, V-step on "
                 f"{p['v_step']['sample_docs']} random docs × N/{p['v_step']['sample_docs']} |")
        L.append(f"| paper algorithm, first iteration from a random V₀ (as printed) | {fmt(paper_first_printed, 1)} | | "
                 f"{fmt(ur, 1)} | {fmt(v, 1)} | | | | extrapolated from {p['u_step_random_V0']['sample_rows']} rows; "
                 f"density of U {p['u_step_random_V0']['density']:.2g} |")
    for key, name in (("nmf-mu", "scikit-learn NMF, solver mu"), ("nmf-cd", "scikit-learn NMF, solver cd")):
        q = res.get(key)
        if q and "per_iter_s" in q:
            L.append(f"| {name} | {fmt(q['per_iter_s'])} | {fmt(nmf_robust(q))} | | | | "
                     f"{fmt(q['fit1_s'] - q['per_iter_s'])} | "
                     f"{fmt(q['rss_peak_gb'])} | (fit(max_iter={q['max_iter']}) − fit(max_iter=1)) / "
                     f"{q['max_iter'] - 1}; fit/max_iter = {fmt(q['per_iter_divide_s'])}; robust: fastest of "
                     f"{len(q.get('iteration_times_s') or [])} iterations of sklearn's update functions |")
    q = res.get("lda")
    if q and "per_pass_s" in q:
        L.append(f"| gensim {q['gensim']} LdaMulticore ({q['workers']} worker), per pass | {fmt(q['per_pass_s'])} "
                 f"| | | | | | {fmt(q['rss_peak_gb'])} | raw counts, chunksize 2000, 1 pass"
                 + (f"; timed on {q['docs']} random documents ({q['sample_pass_s']:.1f} s) × {q['docs_all']}/{q['docs']}"
                    if q.get("docs", 0) < q.get("docs_all", 0) else "") + " |")
    elif q:
        L.append(f"| gensim LdaMulticore | — | | | | | | | {q.get('skipped', q.get('error'))} |")
    L.append("")
    L.append("Peak RSS is the high-water mark (`VmHWM`) of the method's own process, which includes the loaded corpus and "
             "the interpreter (about "
             + ", ".join(f"{k}: {fmt(v.get('rss_after_load_gb'))} GiB" for k, v in res.items()
                         if v and "rss_after_load_gb" in v) + " before fitting).\n")
    L += process_table(res)

    # ---- targets
    L.append("## Targets\n")
    mu = res.get("nmf-mu")
    if s and mu and "per_iter_s" in mu:
        ratio = s["avg_incl"] / mu["per_iter_s"]
        ok = ratio <= 1 / 3
        L.append(f"- BatchRLSI per iteration (whole-fit average, first iteration and init included) / NMF(mu) "
                 f"per iteration = {s['avg_incl']:.2f} / {mu['per_iter_s']:.2f} = **{ratio:.2f}** "
                 f"(target ≤ 0.33): **{'met' if ok else 'NOT met'}**"
                 + ("" if ok else f" — BatchRLSI is {ratio * 3:.2f}× too slow for the target "
                    f"(needs {mu['per_iter_s'] / 3:.2f} s per iteration)") + ".")
        L.append(f"  Against NMF's `fit/max_iter` ({mu['per_iter_divide_s']:.2f} s): {s['avg_incl'] / mu['per_iter_divide_s']:.2f}.")
        if s["robust"] and nmf_robust(mu):
            rr = s["robust"] / nmf_robust(mu)
            L.append(f"  Contention-robust estimates (minima over repeats, see the table): {s['robust']:.2f} / "
                     f"{nmf_robust(mu):.2f} = **{rr:.2f}**: **{'met' if rr <= 1 / 3 else 'NOT met'}**"
                     + ("" if rr <= 1 / 3 else f" ({rr * 3:.2f}× too slow)") + ".")
    if s and paper_avg:
        sp_ = paper_avg / s["avg_incl"]
        ok = sp_ >= 10
        L.append(f"- Paper algorithm / BatchRLSI per iteration (same iterates, whole-fit averages) = "
                 f"{paper_avg:.1f} / {s['avg_incl']:.2f} = **{sp_:.0f}×** (target ≥ 10×): "
                 f"**{'met' if ok else 'NOT met'}**" + ("" if ok else f", short by {10 / sp_:.1f}×") + ". "
                 f"Steady state: {paper_steady:.1f} s vs {s['later']:.2f} s = {paper_steady / s['later']:.0f}×; "
                 f"first iteration of the paper from a random V₀ as printed: {paper_first_printed:.1f} s.")
    L.append("")

    # ---- fit quality
    if r and "objective" in r:
        obj = r["objective"]
        L.append("## BatchRLSI fit\n")
        tpt = np.asarray(r["terms_per_topic"])
        L.append(f"- objective: {obj[0]:.6g} after iteration 1 → {obj[-1]:.6g} after iteration {len(obj)} "
                 f"({100 * (obj[0] - obj[-1]) / obj[0]:.2f} % decrease; monotone: "
                 f"{all(b <= a_ * (1 + 1e-12) for a_, b in zip(obj, obj[1:]))})")
        L.append(f"- nnz(U)/(M·K) = {r['density_U']:.4f} ({r['nnzU']} non-zeros); dead topics: {r['dead_topics']} of "
                 f"{r['K']}; terms per topic: median {np.median(tpt):.0f}, min {tpt.min()}, max {tpt.max()}")
        L.append(f"- planted-topic recovery: on average {100 * r['planted_recovery_top10']:.0f} % of a learned "
                 f"topic's 10 top terms are among the 30 most probable terms of one planted topic")
        if p and "u_check_max_abs_diff_rel" in p:
            L.append(f"- the paper's U-step on the sampled rows (from BatchRLSI's V₀) agrees with BatchRLSI's first "
                     f"U-step: max |ΔU| / max |U| = {p['u_check_max_abs_diff_rel']:.1e}, same support on "
                     f"{100 * p['u_check_support_agree']:.2f} % of entries; the paper's V-step on the sampled "
                     f"documents agrees with BatchRLSI's final V to {p['v_check_max_abs_diff_rel']:.1e} (relative)")
        if r.get("warnings"):
            L.append("- warnings: " + "; ".join(r["warnings"]))
        L.append("")
        rows = []
        for i, x in enumerate(r["iters"]):
            skipped = x["diag"].get("screened", 0)
            solved = x.get("rows", 0) - skipped
            rows.append([i + 1, f"{x['obj']:.6g}", int(x["nnzU"]), int(solved),
                         f"{100 * skipped / max(x.get('rows', 0), 1):.1f} %", fmt(x.get("sweeps", 0) / max(solved, 1)),
                         int(x.get("rows_maxed", 0)), fmt(x["wall"], 3), f"{100 * x['serial_share']:.1f} %"])
        L += md_table(["iteration", "objective", "nnz(U)", "rows solved", "rows skipped (screen)",
                       "mean sweeps / solved row", "rows at inner_max_iter", "wall (s)", "serial share"], rows,
                      "r" * 9)
        L.append("")
        L += profile_section(r, args)

    if p and "u_step_V0" in p:
        L.append("## Paper algorithm: measured samples\n")
        L.append("| step | sample | sample time (s) | fixed part (s) | extrapolated full size (s) | density of result |")
        L.append("|---|---|---:|---:|---:|---:|")
        for key, name in (("u_step_V0", "U-step at BatchRLSI's V₀"), ("u_step_Vfinal", "U-step at the final V"),
                          ("u_step_random_V0", "U-step at a random V₀")):
            q = p[key]
            L.append(f"| {name} | {q['sample_rows']} of {res['rlsi']['M']} term rows | {q['sample_s']:.2f} | "
                     f"{q['S_s']:.2f} (S = VVᵀ) | {q['extrapolated_s']:.1f} | {q['density']:.2g} |")
        q = p["v_step"]
        L.append(f"| V-step at the final U | {q['sample_docs']} of {res['rlsi']['N']} documents | {q['sample_s']:.2f} | "
                 f"{q['fixed_s']:.2f} ((UᵀU+λ₂I)⁻¹) | {q['extrapolated_s']:.1f} | |")
        L.append("")
    return "\n".join(L) + "\n"


# ------------------------------------------------------------------------------------------------- main
def parse(argv=None):
    p = argparse.ArgumentParser(description="BatchRLSI vs paper algorithm vs scikit-learn NMF")
    p.add_argument("--docs", type=int, default=50_000)
    p.add_argument("--terms", type=int, default=200_000)
    p.add_argument("--tokens", type=float, default=150)
    p.add_argument("--k", type=int, default=200)
    p.add_argument("--planted", type=int, default=None, help="planted topics (default: K)")
    p.add_argument("--iters", type=int, default=20, help="BatchRLSI max_iter")
    p.add_argument("--tol", type=float, default=1e-4, help="BatchRLSI tol (0: run all --iters)")
    p.add_argument("--lambda1", type=float, default=0.5, help="BatchRLSI lambda1 (per 1000 documents)")
    p.add_argument("--sweep-lambda1", default=None,
                   help="comma-separated λ1 values: fit BatchRLSI for each (and NMF mu once) and tabulate time per "
                        "iteration, AvgComp, dead topics, ratio to NMF(mu) and serial share")
    p.add_argument("--sweep-avgcomp", default=None,
                   help="comma-separated AvgComp targets: fit BatchRLSI(target_terms_per_topic=round(AvgComp·M)) "
                        "for each (λ₁ searched by the library, search time reported apart) and NMF(mu) once")
    p.add_argument("--sweep-dtypes", default=None,
                   help="with --sweep-avgcomp/--sweep-lambda1: comma-separated dtypes (e.g. float64,float32), every "
                        "fit and NMF once per dtype on the same matrix (stored once, cast by each child)")
    p.add_argument("--topic-sweeps", default="default",
                   help="BatchRLSI topic_sweeps: 'default' (the library's), 'none' (exact U-steps) or an int")
    p.add_argument("--png", default=None, help="sweep: plot of time per iteration against AvgComp (both methods, "
                                               "every dtype) to this PNG")
    p.add_argument("--lambda2", type=float, default=1.0)
    p.add_argument("--inner-max-iter", type=int, default=100)
    p.add_argument("--inner-tol", type=float, default=1e-4)
    p.add_argument("--nmf-iters", type=int, default=5)
    p.add_argument("--replays", type=int, default=3,
                   help="BatchRLSI: repeats of the last iteration from a snapshot after the fit, fastest kept "
                        "(contention-robust profile); 0 to skip")
    p.add_argument("--paper-terms", type=int, default=2000, help="term rows sampled for the paper U-step")
    p.add_argument("--paper-terms-random", type=int, default=500,
                   help="term rows sampled for the paper U-step from a random V0")
    p.add_argument("--paper-docs", type=int, default=1000, help="documents sampled for the paper V-step")
    p.add_argument("--lda-workers", type=int, default=1)
    p.add_argument("--lda-docs", type=int, default=None,
                   help="time the LDA pass on this many random documents and extrapolate linearly (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                   help="dtype of the tf-idf matrix given to BatchRLSI and NMF (the paper's algorithm is float64)")
    p.add_argument("--json", action="store_true", help="also write the raw numbers as JSON beside --out")
    p.add_argument("--threads", type=int, default=None,
                   help="numba and BLAS threads for every method (1: the serial share)")
    p.add_argument("--blas-threads", type=int, default=None,
                   help="OPENBLAS/MKL/OMP_NUM_THREADS for every method (default: --threads or the library's)")
    p.add_argument("--numba-threads", type=int, default=None,
                   help="NUMBA_NUM_THREADS for BatchRLSI (default: --threads or numba's)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="what every timer of the children reads: wall clock, or the process's CPU time "
                        "(time.process_time; with --threads 1 the work's own time, whatever else runs on the "
                        "machine's cores)")
    p.add_argument("--wait-idle", type=float, default=0,
                   help="before each method, wait up to this many seconds for >= 75%% idle CPU (shared machines)")
    p.add_argument("--skip-paper", action="store_true")
    p.add_argument("--skip-nmf-cd", action="store_true")
    p.add_argument("--skip-lda", action="store_true")
    p.add_argument("--methods", default=None, help="comma-separated subset of " + ",".join(METHODS))
    p.add_argument("--out", default=None, help="markdown report to write (see --json)")
    p.add_argument("--workdir", default=None, help="where the matrix and states are kept (default: a temp dir)")
    p.add_argument("--only", choices=METHODS, help=argparse.SUPPRESS)
    p.add_argument("--tag", default="", help=argparse.SUPPRESS)  # result-file suffix of a sweep child
    p.add_argument("--terms-per-topic", type=int, default=None, help=argparse.SUPPRESS)  # a sweep child's target
    p.add_argument("--child-dtype", default=None, help=argparse.SUPPRESS)  # a sweep child's dtype
    a = p.parse_args(argv)
    if a.planted is None:
        a.planted = a.k
    return a


def child(a):
    if a.clock == "cpu":  # every timer here and in harness reads time.perf_counter at call time
        time.perf_counter = time.process_time
    wd = Path(a.workdir)
    res = {}
    with accounting(res):
        try:
            if a.only == "rlsi":
                res.update(run_rlsi(a, wd))
            elif a.only == "paper":
                res.update(run_paper(a, wd))
            elif a.only.startswith("nmf"):
                res.update(run_nmf(a, wd, a.only.split("-")[1]))
            else:
                res.update(run_lda(a, wd))
        except MemoryError as exc:
            res.update(error=f"MemoryError: {exc}", rss_peak_gb=peak_rss_gb())
    write_json(wd / f"{a.only}{a.tag}.json", res)


def plan(a):
    """``[(result key, method, extra child args)]`` of this run."""
    if a.sweep_avgcomp or a.sweep_lambda1:
        dtypes = a.sweep_dtypes.split(",") if a.sweep_dtypes else [None]
        out = []
        for dt in dtypes:
            cast = ["--child-dtype", dt] if dt else []
            name = f" {dt}" if dt else ""
            if a.sweep_avgcomp:
                for i, x in enumerate(float(v) for v in a.sweep_avgcomp.split(",") if v.strip()):
                    out.append((f"rlsi{name} AvgComp={x:g}", "rlsi",
                                ["--terms-per-topic", str(max(1, round(x * a.terms))), "--tag", f"_{dt}_{i}", *cast]))
            else:
                for i, lam in enumerate(float(v) for v in a.sweep_lambda1.split(",") if v.strip()):
                    out.append((f"rlsi{name} λ1={lam:g}", "rlsi", ["--lambda1", repr(lam), "--tag", f"_{dt}_{i}", *cast]))
            out.append((f"nmf-mu{name}", "nmf-mu", ["--tag", f"_{dt}", *cast]))
        return out
    methods = list(METHODS) if a.methods is None else a.methods.split(",")
    for flag, m in ((a.skip_paper, "paper"), (a.skip_nmf_cd, "nmf-cd"), (a.skip_lda, "lda")):
        if flag and m in methods:
            methods.remove(m)
    if "paper" in methods and "rlsi" not in methods:
        sys.exit("the paper method reuses BatchRLSI's states: include rlsi")
    return [(m, m, []) for m in methods]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parse(argv)
    if a.only:
        return child(a)
    command = harness.command_line(__file__, argv)
    tmp = None
    if a.workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="rlsi-bench-")
        a.workdir = tmp.name
    wd = Path(a.workdir)
    wd.mkdir(parents=True, exist_ok=True)
    env = harness.child_env(harness.thread_env(a.threads, blas=a.blas_threads, numba=a.numba_threads))
    facts = harness.machine_facts()
    print(f"machine: {facts}", flush=True)
    c = make_corpus(a.docs, a.terms, a.tokens, n_topics=a.planted, seed=a.seed, dtype=np.dtype(a.dtype))
    desc = describe(c)
    print(f"corpus: {desc}", flush=True)
    # a sweep over dtypes stores the matrix once in float64; each child casts it
    sp.save_npz(wd / "X.npz", c.X.astype(np.float64) if a.sweep_dtypes else c.X, compressed=False)
    sp.save_npz(wd / "counts.npz", c.counts, compressed=False)
    np.save(wd / "topic_terms.npy", c.topic_terms)
    del c
    res = {}
    for key, m, extra in plan(a):
        t = time.perf_counter()
        if a.wait_idle > 0:
            print(f"--- idle CPU share before {key}: {harness.wait_idle(a.wait_idle):.0%}", flush=True)
        print(f"--- {key} ...", flush=True)
        cmd = [sys.executable, str(Path(__file__).resolve()), *argv, *extra, "--only", m, "--workdir", str(wd),
               "--planted", str(a.planted)]
        tag = extra[extra.index("--tag") + 1] if "--tag" in extra else ""
        res[key] = harness.run_child(cmd, env=env, result=wd / f"{m}{tag}.json")
        if key == "rlsi" and "error" not in res[key]:
            write_json(wd / "rlsi.json", res[key])
        print(f"--- {key} done in {time.perf_counter() - t:.1f} s: "
              + json.dumps({k: v for k, v in res[key].items() if not isinstance(v, (list, dict))}), flush=True)
    sweep = a.sweep_lambda1 or a.sweep_avgcomp
    report = (render_sweep if sweep else render)(a, facts, desc, res, command)
    if sweep and a.png:
        threads = a.threads or "all"
        plot_sweep(res, a, a.png, f"{'CPU' if a.clock == 'cpu' else 'wall-clock'} seconds per iteration "
                                  f"({threads} thread{'s' if str(threads) != '1' else ''})")
    print(report)
    if a.out:
        harness.write_report(a.out, report)
        if a.json:
            write_json(Path(a.out).with_suffix(".json"), {"command": command, "machine": facts, "corpus": desc,
                                                          "results": res})
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
