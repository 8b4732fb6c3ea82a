"""The methods ``bench_batch.py`` measures, each run in its own child process on the run's stored matrix:
BatchRLSI under the timers of ``batch_profile.py``, the paper's algorithm on sampled rows and documents
(extrapolated), scikit-learn NMF and gensim LDA."""

import json
import time
import warnings
from collections import defaultdict

import numpy as np
import scipy.sparse as sp

import harness
from batch_profile import SEARCH, flatten, instrument, parallel_seconds, replay
from harness import current_rss_gb, peak_rss_gb, timed
from synthetic import make_corpus


def load_inputs(workdir, dtype=None):
    """The run's matrix, cast to ``dtype`` (a sweep over dtypes stores it once, as float64)."""
    X = sp.load_npz(workdir / "X.npz").tocsr()
    return X if dtype is None else X.astype(dtype)


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
