"""Benchmark of BatchRLSI against the paper's algorithm as printed and scikit-learn NMF (issue 2).

One run generates one synthetic Zipfian tf-idf corpus (``benchmarks/synthetic.py``), stores it in a work
directory, and measures every method in its own subprocess (``--only METHOD``) on that same matrix, so
that the peak resident memory reported for a method (``VmHWM`` of its process) is its own. The
parent collects the JSON each child writes and renders a markdown report (``--out``).

Methods
-------
rlsi    ``BatchRLSI.fit`` as a user calls it (``init="docs"``, λ₂ = 1, ℓ1 topics / ℓ2 documents). The
        functions of ``rlsi.models._steps`` and the kernels it calls are wrapped with timers (monkey-
        patching inside this process only; ``src/`` is not edited), which gives the time per outer
        iteration, the U-/V-step split and a per-phase profile from the very fit that is timed.
        Numba kernels are loaded/compiled by a tiny warm-up fit first (reported separately).
paper   ``rlsi.oracle.paper.update_u`` / ``update_v`` (plain numpy, dense D = terms x docs, Algorithm 2
        with a zero start per row, Algorithm 3). The dense problem does not fit in memory at the issue's
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

On a shared machine, wall-clock times vary between runs; every method's process wall/CPU time and the load
average are reported, and the minimum-over-repeats estimates (BatchRLSI: init, iteration 1 and a late
iteration replayed ``--replays`` times after the fit; NMF: fastest iteration) are given beside the means.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
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
sys.path.insert(0, str(HERE.parent / "src"))

from synthetic import describe, make_corpus  # noqa: E402

METHODS = ("rlsi", "paper", "nmf-mu", "nmf-cd", "lda")

# functions of rlsi.models._steps timed when present: (name, phase label). Nested phases are marked "↳"
# in the report; the U-step holds R, warm starts, lasso and CSR building, the V-step Φ and the ridge.
PHASE_FUNCTIONS = (
    ("csr_dense", "R: csr_dense kernel"),
    ("csr_rows_to_dense", "U warm start: CSR rows -> dense"),
    ("lasso_rows", "lasso CD (lasso_rows)"),
    ("dense_to_csr", "U blocks: dense -> CSR"),
    ("csr_csr_dense", "Phi: csr_csr_dense kernel"),
    ("ridge_inverse", "ridge: (G + λ₂I)⁻¹"),
    ("_ridge_factor", "ridge: Cholesky factor"),
    ("_ridge_solve", "ridge: cho_solve"),
    ("gram", "S = WᵀW (gram)"),
    ("objective", "objective"),
)
U_PARTS = ("R: r_rows call (D[a:b] + kernel)", "U warm start: CSR rows -> dense", "lasso CD (lasso_rows)",
           "U blocks: dense -> CSR", "U blocks: sp.vstack")
V_PARTS = ("Phi: csr_csr_dense kernel", "ridge: (G + λ₂I)⁻¹", "ridge: Cholesky factor", "ridge: cho_solve")
NOTES_MARKER = "<!-- notes: text below this line is kept when the report is regenerated -->"


# ----------------------------------------------------------------------------------------------- helpers
def _status_gb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 2**20  # kB -> GB
    return float("nan")


def peak_rss_gb():
    """Peak resident memory of this process: VmHWM. (``ru_maxrss`` is not used: on Linux it carries the
    parent's peak over fork + exec, so a child would report the generator's peak.)"""
    return _status_gb("VmHWM")


def current_rss_gb():
    return _status_gb("VmRSS")


def load_inputs(workdir):
    X = sp.load_npz(workdir / "X.npz").tocsr()
    return X


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))


def timed(fn, *a, **k):
    t = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t


# ------------------------------------------------------------------------------------ rlsi instrumentation
class Profile:
    """Accumulates seconds per phase, for the initialisation and for each outer iteration."""

    def __init__(self):
        self.phase = "warmup"
        self.init = defaultdict(float)
        self.iters = []
        self.cur = None
        self.t_iter = None

    def rec(self):
        if self.phase == "init":
            return self.init
        if self.phase == "replay":
            return self.replay_rec
        if self.phase != "fit":
            return defaultdict(float)  # warm-up: discarded
        if self.cur is None:
            self.cur = defaultdict(float)
            self.cur["_t0"] = time.perf_counter()
            self.iters.append(self.cur)
        return self.cur

    def add(self, key, dt, n=1):
        r = self.rec()
        r[key] += dt
        r["#" + key] += n

    def end_iteration(self):
        if self.phase == "fit" and self.cur is not None:
            self.cur["wall"] = time.perf_counter() - self.cur.pop("_t0")
        self.cur = None


def instrument(prof, capture):
    """Wrap the functions BatchRLSI.fit_transform reaches through module attributes with timers."""
    from rlsi.models import _steps, batch

    def wrap(name, key, post=None):
        fn = getattr(_steps, name, None)
        if fn is None:  # the steps evolve; time what exists
            return

        def w(*a, **k):
            prof.rec()  # open the iteration record before timing, so its wall clock covers this call
            t = time.perf_counter()
            out = fn(*a, **k)
            prof.add(key, time.perf_counter() - t)
            if post is not None:
                post(out, a, k)
            return out

        setattr(_steps, name, w)

    def lasso_post(out, a, k):
        sw = out[1]
        r = prof.rec()
        r["rows"] += len(sw)
        r["rows_skipped"] += int((sw == 0).sum())
        r["sweeps"] += int(sw.sum())
        r["rows_maxed"] += int((sw >= k.get("max_iter", 100)).sum())
        r["max_sweeps"] = max(r["max_sweeps"], int(sw.max(initial=0)))

    for name, key in PHASE_FUNCTIONS:
        wrap(name, key, lasso_post if name == "lasso_rows" else None)

    # r_rows closure: whole call = D[a:b] row slice + csr_dense kernel
    orig_brr = _steps.batch_r_rows

    def brr(D, W):
        f = orig_brr(D, W)

        def r_rows(a, b):
            t = time.perf_counter()
            out = f(a, b)
            prof.add("R: r_rows call (D[a:b] + kernel)", time.perf_counter() - t)
            return out

        return r_rows

    _steps.batch_r_rows = brr

    class SpProxy:  # scipy.sparse as seen by _steps, with csr_matrix / vstack timed
        def __getattr__(self, name):
            return getattr(sp, name)

        @staticmethod
        def csr_matrix(*a, **k):
            t = time.perf_counter()
            out = sp.csr_matrix(*a, **k)
            prof.add("U blocks: dense -> CSR", time.perf_counter() - t)
            return out

        @staticmethod
        def vstack(*a, **k):
            t = time.perf_counter()
            out = sp.vstack(*a, **k)
            prof.add("U blocks: sp.vstack", time.perf_counter() - t)
            return out

    _steps.sp = SpProxy()

    # step level (these are what batch.py calls through the _steps module)
    orig_ut, orig_uv, orig_obj = _steps.update_topics, _steps.update_doc_vectors, _steps.objective

    def update_topics(*a, **k):
        prof.rec()
        t = time.perf_counter()
        U, sweeps = orig_ut(*a, **k)
        prof.add("U-step (update_topics)", time.perf_counter() - t)
        r = prof.rec()
        r["nnzU"] = U.nnz
        if "U1" not in capture:
            capture["U1"] = U
        return U, sweeps

    def update_doc_vectors(*a, **k):
        prof.rec()
        t = time.perf_counter()
        out = orig_uv(*a, **k)
        prof.add("V-step (update_doc_vectors)", time.perf_counter() - t)
        return out

    def objective(*a, **k):
        out = orig_obj(*a, **k)
        prof.rec()["obj"] = out
        prof.end_iteration()
        return out

    _steps.update_topics, _steps.update_doc_vectors, _steps.objective = (
        update_topics, update_doc_vectors, objective)

    orig_init = batch.BatchRLSI._initial_state
    capture["orig_init"] = orig_init

    def initial_state(self, X, V_init):
        prof.phase = "init"
        t = time.perf_counter()
        W, U = orig_init(self, X, V_init)
        prof.init["wall"] = time.perf_counter() - t
        capture["W0"] = W
        prof.phase = "fit"
        return W, U

    batch.BatchRLSI._initial_state = initial_state


def replay(prof, capture, est, X, W_in, U_in, reps):
    """Re-run the initialisation and one outer iteration from a given state ``reps`` times, exactly as
    ``BatchRLSI.fit_transform`` calls the steps, and keep the minimum of each phase over the repeats: on a
    shared machine the minimum is the best estimate of the uncontended cost."""
    from rlsi.models import _steps

    N, M = X.shape
    D = X.T.tocsr()
    x_sqnorm = float(np.square(X.data, dtype=np.float64).sum())
    lam1 = est.lambda1_effective_
    best_it, best_init = {}, {}
    for _ in range(reps):
        prof.phase, prof.replay_rec = "replay", defaultdict(float)
        t = time.perf_counter()
        if U_in is None:  # iteration 1 is preceded by the initialisation
            capture["orig_init"](est, X, None)
            rec = dict(prof.replay_rec)
            rec["wall"] = time.perf_counter() - t
            best_init = {k: min(v, best_init.get(k, np.inf)) for k, v in rec.items()}
            prof.replay_rec = defaultdict(float)
            t = time.perf_counter()
        S = _steps.gram(W_in)
        U, _ = _steps.update_topics(_steps.batch_r_rows(D, W_in), S, U_in, n_terms=M, penalty=est.topic_penalty,
                                    lam=lam1, max_iter=est.inner_max_iter, tol=est.inner_tol)
        W, cross = _steps.update_doc_vectors(X, U, penalty=est.doc_penalty, lam=est.lambda2, W_prev=W_in,
                                             max_iter=est.inner_max_iter, tol=est.inner_tol, dtype=X.dtype)
        _steps.objective(x_sqnorm, cross, U, _steps.gram(W), W, topic_penalty=est.topic_penalty,
                         doc_penalty=est.doc_penalty, lambda1=lam1, lambda2=est.lambda2)
        rec = dict(prof.replay_rec)
        rec["wall"] = time.perf_counter() - t
        best_it = {k: min(v, best_it.get(k, np.inf)) for k, v in rec.items()}
    prof.phase = "done"
    return best_init, best_it


def micro_profile(X, U, W, K, reps=1):
    """Costs of the inline operations of the steps that have no function of their own to wrap, measured
    on the final state (same shapes and sparsity as inside the fit)."""
    from rlsi.models import _steps

    out = {}
    step = _steps.block_rows(K)
    M, N = U.shape[0], X.shape[0]
    D = X.T.tocsr()

    def t_of(fn):
        best = np.inf
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        return best

    Wd = np.ascontiguousarray(W, dtype=np.float64)
    Sig = np.linalg.inv((U.T @ U).toarray() + np.eye(K))
    out["D = X.T.tocsr() (once per fit)"] = t_of(lambda: X.T.tocsr())
    out["D[a:b] row slices, all blocks"] = t_of(lambda: [D[a:a + step] for a in range(0, M, step)])
    out["X[a:b] row slices, all blocks"] = t_of(lambda: [X[a:a + step] for a in range(0, N, step)])
    out["U[a:b].toarray(), all blocks"] = t_of(lambda: [U[a:a + step].toarray() for a in range(0, M, step)])
    out["G = (UᵀU).toarray()"] = t_of(lambda: (U.T @ U).toarray())
    out["ridge as one GEMM: W (N x K) @ Σ (K x K)"] = t_of(lambda: Wd @ Sig)
    out["einsum cross term over N x K"] = t_of(lambda: np.einsum("ij,ij->", W, W, dtype=np.float64))
    out["W.T @ W (numpy)"] = t_of(lambda: Wd.T @ Wd)
    out["_steps.gram(W)"] = t_of(lambda: _steps.gram(W))
    return out


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
    import numba

    from rlsi.models.batch import BatchRLSI

    X = load_inputs(wd)
    from threadpoolctl import threadpool_info

    res = {"rss_after_load_gb": current_rss_gb(), "numba_threads": numba.get_num_threads(),
           "blas_threads": sorted({i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"})}
    N, M = X.shape
    K = a.k
    # warm-up: loads numba's cached machine code (or compiles it) outside the timed fit
    small = make_corpus(400, 3000, 50, n_topics=10, seed=1, dtype=X.dtype).X
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        BatchRLSI(10, lambda1=a.lambda1, max_iter=2, random_state=0).fit(small)
    res["warmup_s"] = time.perf_counter() - t

    prof, capture = Profile(), {}
    instrument(prof, capture)
    est = BatchRLSI(K, lambda1=a.lambda1, lambda2=a.lambda2, max_iter=a.iters, tol=a.tol, random_state=a.seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.perf_counter()
        W = est.fit_transform(X)
        total = time.perf_counter() - t
    prof.phase = "done"
    res["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    U = est.topics_
    iters = [dict(r) for r in prof.iters]
    res.update(
        total_s=total, init=dict(prof.init), iters=iters, n_iter=est.n_iter_,
        setup_s=total - prof.init["wall"] - sum(r["wall"] for r in iters),
        lambda1=a.lambda1, lambda1_effective=est.lambda1_effective_, lambda2=a.lambda2, K=K, N=N, M=M,
        objective=est.objective_.tolist(), nnzU=int(U.nnz), density_U=U.nnz / (M * K),
        dead_topics=int(len(est.dead_topics())), converged=est.n_iter_ < a.iters,
        terms_per_topic=np.diff(est.components_.indptr).tolist(),
        rss_peak_gb=peak_rss_gb(),
    )
    topic_terms = np.load(wd / "topic_terms.npy")
    res["planted_recovery_top10"] = planted_recovery(U, topic_terms)
    res["micro"] = micro_profile(X, U, W, K, reps=a.replays)
    if a.replays > 0:
        res["replay_init"], res["replay_it1"] = replay(prof, capture, est, X, capture["W0"], None, a.replays)
        _, res["replay_late"] = replay(prof, capture, est, X, W, U, a.replays)
    # states for the paper child: V0 and U1 (first U-step, to check the sampled rows), final U and W
    np.save(wd / "W0.npy", capture["W0"])
    sp.save_npz(wd / "U1.npz", capture["U1"].tocsr(), compressed=False)
    np.save(wd / "W_final.npy", W)
    sp.save_npz(wd / "U_final.npz", U.tocsr(), compressed=False)
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

    X = load_inputs(wd)
    res = {"rss_after_load_gb": current_rss_gb(), "solver": solver}
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
def machine_facts():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        fam = {k.strip(): v.strip() for k, v in (l.split(":", 1) for l in out.splitlines() if ":" in l)}
        cpu += f" (family {fam.get('CPU family')}, model {fam.get('Model')}, L3 {fam.get('L3 cache')})"
    except Exception:  # noqa: BLE001
        pass
    mem = "?"
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GB"
    import numba
    import numpy
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    blas = "; ".join(f"{i.get('internal_api')} {i.get('version')} ({i.get('threading_layer')}, "
                     f"{i.get('num_threads')} threads, {i.get('architecture')})"
                     for i in threadpool_info() if i.get("user_api") == "blas")
    try:
        root = HERE.parent
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        paths = ["src/rlsi/models", "src/rlsi/kernels", "src/rlsi/oracle", "src/rlsi/_validation.py"]
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", *paths],
                               capture_output=True, text=True).stdout.split()
        code = head + (f" + uncommitted changes in {', '.join(sorted(set(dirty) - {'M', '??', 'A', 'D'}))}"
                       if dirty else " (no uncommitted changes in the code measured: models, kernels, oracle)")
    except Exception:  # noqa: BLE001
        code = "?"
    return {"code": code, "cpu": cpu, "cores": os.cpu_count(), "memory": mem, "blas": blas,
            "python": platform.python_version(), "numpy": numpy.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__, "numba": f"{numba.__version__} ({numba.get_num_threads()} threads)"}


def fmt(x, d=2):
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "—"
    return f"{x:.{d}f}"


def summarize_rlsi(r):
    it = r["iters"]
    n = len(it)
    walls = [x["wall"] for x in it]
    ustep = [x.get("U-step (update_topics)", 0.0) for x in it]
    vstep = [x.get("V-step (update_doc_vectors)", 0.0) for x in it]
    later = slice(1, None) if n > 1 else slice(0, None)
    return dict(n=n, total=r["total_s"], init=r["init"]["wall"], setup=r["setup_s"],
                avg_incl=r["total_s"] / n, avg_excl=(r["total_s"] - r["init"]["wall"] - r["setup_s"]) / n,
                first=walls[0], later=float(np.mean(walls[later])), u1=ustep[0], v1=vstep[0],
                u_later=float(np.mean(ustep[later])), v_later=float(np.mean(vstep[later])),
                u_mean=float(np.mean(ustep)), v_mean=float(np.mean(vstep)),
                robust=((r["replay_init"]["wall"] + r["replay_it1"]["wall"] + (n - 1) * r["replay_late"]["wall"]) / n
                        if r.get("replay_late") else None))


def nmf_robust(q):
    t = q.get("iteration_times_s")
    return min(t) if t else None


def render(args, facts, corpus_desc, res, command):
    L = []
    L.append("# Batch benchmark: BatchRLSI vs the paper's algorithm vs scikit-learn NMF\n")
    L.append("Generated by `benchmarks/bench_batch.py`. Command:\n")
    L.append(f"```\n{command}\n```\n")
    L.append(f"**Code.** rlsi at commit {facts.get('code')}.\n")
    L.append("**Machine.** " + f"CPU {facts['cpu']}, {facts['cores']} cores, {facts['memory']} RAM; "
             f"BLAS: {facts['blas']}; Python {facts['python']}, numpy {facts['numpy']}, scipy {facts['scipy']}, "
             f"scikit-learn {facts['scikit-learn']}, numba {facts['numba']}.\n")
    L.append(f"**Data.** `benchmarks/synthetic.py` (seed {args.seed}, {args.planted} planted topics): "
             f"{corpus_desc}. tf-idf `n(t,d)/|d|·log(N/df)`, {args.dtype}.\n")
    r = res.get("rlsi")
    s = summarize_rlsi(r) if r and "iters" in r else None
    if s:
        L.append(f"**BatchRLSI settings.** K = {args.k}, lambda1 = {r['lambda1']:g} per 1000 docs "
                 f"(`lambda1_scale=\"per_doc\"`, λ₁ = {r['lambda1_effective']:g} in Eq. 1), λ₂ = {r['lambda2']:g}, "
                 f"ℓ1 topics / ℓ2 documents, `init=\"docs\"`, max_iter = {args.iters}, tol = {args.tol:g}, "
                 f"inner_tol = {args.inner_tol:g}, numba threads = {r['numba_threads']}, BLAS threads = "
                 f"{r.get('blas_threads')}; "
                 f"{s['n']} outer iterations run ({'converged' if r['converged'] else 'stopped at max_iter'}). "
                 f"Warm-up (numba cache load) before the timed fit: {r['warmup_s']:.1f} s, not included.\n")
    L.append("## Time per outer iteration and peak memory\n")
    L.append("| method | per iteration (s) | contention-robust estimate (s) | U-step (s) | V-step (s) | "
             "first iteration (s) | init (s) | peak RSS (GB) | notes |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    if s:
        L.append(f"| **BatchRLSI**, whole-fit average incl. init | **{fmt(s['avg_incl'])}** | {fmt(s['robust'])} | "
                 f"{fmt(s['u_mean'])} | "
                 f"{fmt(s['v_mean'])} | {fmt(s['first'])} | {fmt(s['init'])} | {fmt(r['rss_peak_gb'])} | "
                 f"total fit {s['total']:.1f} s / {s['n']} iterations (setup {s['setup']:.2f} s incl.) |")
        L.append(f"| BatchRLSI, average excl. init and setup | {fmt(s['avg_excl'])} | | | | | | | |")
        late = r.get("replay_late", {})
        L.append(f"| BatchRLSI, iterations 2..n | {fmt(s['later'])} | {fmt(late.get('wall'))} | {fmt(s['u_later'])} | "
                 f"{fmt(s['v_later'])} | | | | robust: late iteration replayed {args.replays}×, minimum |")
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
             + ", ".join(f"{k}: {fmt(v.get('rss_after_load_gb'))} GB" for k, v in res.items()
                         if v and "rss_after_load_gb" in v) + " before fitting).\n")
    L.append("Process accounting (the machine is shared; a 1-minute load average above the core count means "
             "other processes competed for the cores during that measurement):\n")
    L.append("| method | process wall (s) | process CPU (s) | load average start → end |")
    L.append("|---|---:|---:|---|")
    for k, v in res.items():
        if v and "process" in v:
            q = v["process"]
            L.append(f"| {k} | {q['wall_s']:.1f} | {q['cpu_s']:.1f} | {q['loadavg_start']:.2f} → {q['loadavg_end']:.2f} |")
    L.append("")

    # ---- targets
    L.append("## Targets of issue 2\n")
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
        L.append("| iteration | objective | nnz(U) | rows solved | rows skipped (screen) | mean sweeps / solved row "
                 "| rows at inner_max_iter |")
        L.append("|---:|---:|---:|---:|---:|---:|---:|")
        for i, x in enumerate(r["iters"]):
            solved = x["rows"] - x["rows_skipped"]
            L.append(f"| {i + 1} | {x['obj']:.6g} | {int(x['nnzU'])} | {int(solved)} | "
                     f"{100 * x['rows_skipped'] / x['rows']:.1f} % | {x['sweeps'] / max(solved, 1):.2f} | "
                     f"{int(x['rows_maxed'])} |")
        L.append("")

        # ---- profile
        L.append("## Where BatchRLSI's time goes (seconds per phase)\n")
        L.append("Timers wrap the functions of `rlsi.models._steps` and the kernels inside the timed fit. "
                 "Nested: the U-step contains R, lasso, CSR building; the V-step contains Φ, ridge. The replay "
                 "columns re-run, after the fit, the initialisation + iteration 1 (from the same V₀) and one late "
                 "iteration (from the final U, V) several times and keep each phase's minimum: the best estimate "
                 "of the uncontended cost on a shared machine. S = WᵀW is computed twice per iteration (the "
                 "loop head and the objective), with the same W.\n")
        it = r["iters"]
        seen = set().union(*(x.keys() for x in it))
        keys = ["U-step (update_topics)", "R: r_rows call (D[a:b] + kernel)", "R: csr_dense kernel",
                "U warm start: CSR rows -> dense", "lasso CD (lasso_rows)", "U blocks: dense -> CSR",
                "U blocks: sp.vstack", "V-step (update_doc_vectors)", "Phi: csr_csr_dense kernel",
                "ridge: (G + λ₂I)⁻¹", "ridge: Cholesky factor", "ridge: cho_solve", "S = WᵀW (gram)",
                "objective", "wall"]
        keys = [k for k in keys if k in seen]
        ri, r1, rl = r.get("replay_init", {}), r.get("replay_it1", {}), r.get("replay_late", {})
        L.append(f"| phase | init | iteration 1 | iteration 2 | mean of 2..n | total over fit | share of fit | "
                 f"replay: init (min of {args.replays}) | replay: iteration 1 | replay: late iteration |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for key in keys:
            vals = [x.get(key, 0.0) for x in it]
            tot = sum(vals) + r["init"].get(key, 0.0)
            later = float(np.mean(vals[1:])) if len(vals) > 1 else float("nan")
            label = "**iteration wall**" if key == "wall" else key
            ind = "" if key in ("U-step (update_topics)", "V-step (update_doc_vectors)", "S = WᵀW (gram)",
                                "objective", "wall") else "&nbsp;&nbsp;↳ "
            L.append(f"| {ind}{label} | {fmt(r['init'].get(key), 3)} | {fmt(vals[0], 3)} | "
                     f"{fmt(vals[1] if len(vals) > 1 else None, 3)} | {fmt(later, 3)} | {fmt(tot, 2)} | "
                     f"{100 * tot / r['total_s']:.1f} % | {fmt(ri.get(key), 3)} | {fmt(r1.get(key), 3)} | "
                     f"{fmt(rl.get(key), 3)} |")
        # derived remainders
        u_rest = [x["U-step (update_topics)"] - sum(x.get(k, 0) for k in U_PARTS) for x in it]
        v_rest = [x["V-step (update_doc_vectors)"] - sum(x.get(k, 0) for k in V_PARTS) for x in it]
        for label, vals in (("U-step, untimed rest (inline code: slicing, eliminate_zeros, ...)", u_rest),
                            ("V-step, untimed rest (inline code: G = UᵀU, ridge GEMM Φ·Σ if inline, X[a:b], "
                             "einsum, W[a:b] =)", v_rest)):
            L.append(f"| &nbsp;&nbsp;↳ {label} | | {fmt(vals[0], 3)} | {fmt(vals[1] if len(vals) > 1 else None, 3)} "
                     f"| {fmt(float(np.mean(vals[1:])) if len(vals) > 1 else None, 3)} | {fmt(sum(vals), 2)} | "
                     f"{100 * sum(vals) / r['total_s']:.1f} % | | | |")
        L.append(f"| fit setup (check_matrix, D = Xᵀ CSR, ‖X‖²) | | | | | {fmt(r['setup_s'], 2)} | "
                 f"{100 * r['setup_s'] / r['total_s']:.1f} % | | | |")
        L.append("")
        L.append(f"Operations measured separately on the final state (minimum of {max(args.replays, 1)}, seconds):\n")
        L.append("| operation | s |")
        L.append("|---|---:|")
        for k, v in r["micro"].items():
            L.append(f"| {k} | {v:.3f} |")
        L.append("")
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
    p = argparse.ArgumentParser(description="BatchRLSI vs paper algorithm vs scikit-learn NMF (issue 2)")
    p.add_argument("--docs", type=int, default=50_000)
    p.add_argument("--terms", type=int, default=200_000)
    p.add_argument("--tokens", type=float, default=150)
    p.add_argument("--k", type=int, default=200)
    p.add_argument("--planted", type=int, default=None, help="planted topics (default: K)")
    p.add_argument("--iters", type=int, default=20, help="BatchRLSI max_iter")
    p.add_argument("--tol", type=float, default=1e-4, help="BatchRLSI tol (0: run all --iters)")
    p.add_argument("--lambda1", type=float, default=0.5, help="BatchRLSI lambda1 (per 1000 documents)")
    p.add_argument("--lambda2", type=float, default=1.0)
    p.add_argument("--inner-max-iter", type=int, default=100)
    p.add_argument("--inner-tol", type=float, default=1e-4)
    p.add_argument("--nmf-iters", type=int, default=5)
    p.add_argument("--replays", type=int, default=3,
                   help="BatchRLSI: repeats of the init + iteration 1 and of a late iteration after the fit, "
                        "minimum per phase (contention-robust profile); 0 to skip")
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
    p.add_argument("--blas-threads", type=int, default=None,
                   help="OPENBLAS/MKL/OMP_NUM_THREADS for every method (default: the library's own choice)")
    p.add_argument("--numba-threads", type=int, default=None, help="NUMBA_NUM_THREADS for BatchRLSI")
    p.add_argument("--wait-idle", type=float, default=0,
                   help="before each method, wait up to this many seconds for >= 75%% idle CPU (shared machines)")
    p.add_argument("--skip-paper", action="store_true")
    p.add_argument("--skip-nmf-cd", action="store_true")
    p.add_argument("--skip-lda", action="store_true")
    p.add_argument("--methods", default=None, help="comma-separated subset of " + ",".join(METHODS))
    p.add_argument("--out", default=None, help="markdown report to write (see --json)")
    p.add_argument("--workdir", default=None, help="where the matrix and states are kept (default: a temp dir)")
    p.add_argument("--only", choices=METHODS, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.planted is None:
        a.planted = a.k
    return a


def cpu_idle_share(seconds=3.0):
    """Share of idle CPU time over ``seconds`` (all cores), from /proc/stat."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return v[3] + v[4], sum(v)  # idle + iowait, total
    i0, t0 = snap()
    time.sleep(seconds)
    i1, t1 = snap()
    return (i1 - i0) / max(t1 - t0, 1)


def wait_idle(max_wait, share=0.75):
    """Wait up to ``max_wait`` seconds for the machine to be mostly idle; returns the last idle share."""
    t = time.perf_counter()
    idle = cpu_idle_share()
    while idle < share and time.perf_counter() - t < max_wait:
        idle = cpu_idle_share()
    return idle


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def child(a):
    wd = Path(a.workdir)
    load0, t0, c0 = loadavg(), time.perf_counter(), os.times()
    try:
        if a.only == "rlsi":
            res = run_rlsi(a, wd)
        elif a.only == "paper":
            res = run_paper(a, wd)
        elif a.only.startswith("nmf"):
            res = run_nmf(a, wd, a.only.split("-")[1])
        else:
            res = run_lda(a, wd)
    except MemoryError as exc:
        res = {"error": f"MemoryError: {exc}", "rss_peak_gb": peak_rss_gb()}
    c1 = os.times()
    res["process"] = {"wall_s": time.perf_counter() - t0, "cpu_s": c1.user + c1.system - c0.user - c0.system,
                      "loadavg_start": load0, "loadavg_end": loadavg()}
    write_json(wd / f"{a.only}.json", res)


def main(argv=None):
    a = parse(argv)
    if a.only:
        return child(a)
    command = "PYTHONPATH=src python benchmarks/bench_batch.py " + " ".join(
        shlex.quote(x) for x in (sys.argv[1:] if argv is None else argv))
    methods = list(METHODS) if a.methods is None else a.methods.split(",")
    if a.skip_paper and "paper" in methods:
        methods.remove("paper")
    if a.skip_nmf_cd and "nmf-cd" in methods:
        methods.remove("nmf-cd")
    if a.skip_lda and "lda" in methods:
        methods.remove("lda")
    if "paper" in methods and "rlsi" not in methods:
        sys.exit("the paper method reuses BatchRLSI's states: include rlsi")
    tmp = None
    if a.workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="rlsi-bench-")
        a.workdir = tmp.name
    wd = Path(a.workdir)
    wd.mkdir(parents=True, exist_ok=True)
    facts = machine_facts()
    print(f"machine: {facts}", flush=True)
    c = make_corpus(a.docs, a.terms, a.tokens, n_topics=a.planted, seed=a.seed, dtype=np.dtype(a.dtype))
    desc = describe(c)
    print(f"corpus: {desc}", flush=True)
    sp.save_npz(wd / "X.npz", c.X, compressed=False)
    sp.save_npz(wd / "counts.npz", c.counts, compressed=False)
    np.save(wd / "topic_terms.npy", c.topic_terms)
    del c
    res = {}
    child_args = [x for x in (sys.argv[1:] if argv is None else argv)]
    for m in methods:
        t = time.perf_counter()
        if a.wait_idle > 0:
            idle = wait_idle(a.wait_idle)
            print(f"--- idle CPU share before {m}: {idle:.0%}", flush=True)
        print(f"--- {m} ...", flush=True)
        cmd = [sys.executable, str(Path(__file__).resolve()), *child_args, "--only", m, "--workdir", str(wd),
               "--planted", str(a.planted)]
        env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
        if a.blas_threads:
            for v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
                env[v] = str(a.blas_threads)
        if a.numba_threads:
            env["NUMBA_NUM_THREADS"] = str(a.numba_threads)
        proc = subprocess.run(cmd, env=env)
        f = wd / f"{m}.json"
        if proc.returncode != 0 or not f.exists():
            res[m] = {"error": f"exit code {proc.returncode}"}
        else:
            res[m] = json.loads(f.read_text())
            f.unlink()
        if m == "rlsi" and "error" not in res[m]:
            write_json(wd / "rlsi.json", res[m])
        print(f"--- {m} done in {time.perf_counter() - t:.1f} s: "
              + json.dumps({k: v for k, v in res[m].items() if not isinstance(v, (list, dict))}), flush=True)
    report = render(a, facts, desc, res, command)
    print(report)
    if a.out:
        out = Path(a.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        notes = ""
        if out.exists():
            old = out.read_text()
            if NOTES_MARKER in old:
                notes = old[old.index(NOTES_MARKER):]
        out.write_text(report + ("\n" + notes if notes else ""))
        if a.json:
            write_json(out.with_suffix(".json"), {"command": command, "machine": facts, "corpus": desc,
                                                  "results": res})
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
