"""The steps ``bench_scale_ladder.py`` runs each in its own process (``bench_scale_ladder.py child STEP SPEC
RESULT``): generation, the λ₁ search, BatchRLSI per iteration, one online pass and the peers (with the progress a
peer stopped at its time cap reports)."""

import json
import os
import sys
import time
from pathlib import Path


# ------------------------------------------------------------------------------------------ children
def _finish(out):
    from rlsi.models.memory import peak_rss

    out["peak_rss"] = peak_rss()
    return out


def child_synth(s):
    import numpy as np

    from rlsi.datasets.synthetic import write_corpus

    info = write_corpus(s["matrix"], s["docs"], s["terms"], s["tokens"], n_topics=s["planted"], seed=s["seed"],
                        dtype=np.dtype(s["dtype"]), norm=None if s["norm"] == "none" else "l2")
    return _finish({"seconds": info["seconds"], "nnz": int(info["nnz"]), "n_tokens": int(info["n_tokens"])})


def _load(s):
    from rlsi.io.matrix import load_matrix

    return load_matrix(s["matrix"]).X


def _warm_up(dtype):
    """Load (or compile) the kernels on a tiny corpus first: their time and memory are not the fit's (the
    memory stays in the baseline of the estimate and in the peak, as for any process)."""
    import warnings

    import numpy as np

    from rlsi.datasets.synthetic import make_corpus
    from rlsi.models import BatchRLSI, OnlineRLSI

    small = make_corpus(300, 2000, 30, n_topics=5, seed=1, dtype=np.dtype(dtype)).X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        BatchRLSI(5, lambda1=0.001, max_iter=2, random_state=0).fit(small)
        OnlineRLSI(5, lambda1=0.001, batch_size=100, random_state=0).fit(small)


def _topic_stats(U, K, M):
    """(nnz, AvgComp, dead topics) of U (M x K, CSR or dense)."""
    import numpy as np
    import scipy.sparse as sp

    if sp.issparse(U):
        counts = np.bincount(U.indices, minlength=K)
    else:
        counts = np.count_nonzero(U, axis=0)
    nnz = int(counts.sum())
    return nnz, nnz / (K * M), int(np.count_nonzero(counts == 0))


def child_search(s):
    import warnings

    from rlsi.models import BatchRLSI

    X = _load(s)
    target = max(1, round(s["avgcomp"] * X.shape[1]))
    model = BatchRLSI(s["k"], target_terms_per_topic=target, lambda2=1.0, max_iter=1, tol=0.0, random_state=s["seed"])
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    from rlsi.quality import avg_compactness

    return _finish({"seconds": time.perf_counter() - t, "target_terms_per_topic": target,
                    "lambda1": float(model.lambda1_), "lambda1_effective": float(model.lambda1_effective_),
                    "avgcomp_after_1_iteration": avg_compactness(model.components_),
                    "dead_after_1_iteration": len(model.dead_topics())})


def child_batch(s):
    import warnings

    from rlsi.models import BatchRLSI, local
    from rlsi.models.memory import current_rss, estimate_for, peak_rss

    _warm_up(s["dtype"])
    base = current_rss()  # before X: load_matrix reads X through (its checks), and X is a component
    X = _load(s)
    N, M = X.shape
    K = s["k"]
    model = BatchRLSI(K, lambda1=s["lambda1"], lambda2=1.0, max_iter=s["iters"], tol=0.0, random_state=s["seed"])
    est = estimate_for(model, X, baseline=base)  # the topics predicted, as `rlsi fit --matrix` prints it
    iters, clock = [], {}
    u_step, v_step = local.RLSIProblem.u_step, local.RLSIProblem.v_step

    def timed_u(self, executor):
        t = time.perf_counter()
        clock.setdefault("first_u", t)
        diag = u_step(self, executor)
        u_s = time.perf_counter() - t
        nnz, avgcomp, dead = _topic_stats(self.U, K, M)
        iters.append({"u_s": u_s, "nnz_U": nnz, "avgcomp": avgcomp, "dead": dead,
                      "screened": int(diag.get("screened", 0)), "dense_topics": bool(diag.get("dense"))})
        return diag

    def timed_v(self, executor):
        t = time.perf_counter()
        out = v_step(self, executor)
        iters[-1].update(v_s=time.perf_counter() - t, rss=current_rss(), peak_rss_so_far=peak_rss())
        return out

    local.RLSIProblem.u_step, local.RLSIProblem.v_step = timed_u, timed_v
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    total = time.perf_counter() - t0
    return _finish({"seconds": total, "setup_s": clock.get("first_u", t0) - t0, "iterations": iters,
                    "estimate": est.peak, "estimate_phase": est.phase, "estimate_components": est.components,
                    "objective": [float(o) for o in model.objective_]})


def child_online(s):
    import warnings

    from rlsi.models import OnlineRLSI
    from rlsi.models.memory import current_rss, estimate_for
    from rlsi.quality import avg_compactness

    _warm_up(s["dtype"])
    base = current_rss()  # before X (see child_batch)
    X = _load(s)
    model = OnlineRLSI(s["k"], lambda1=s["lambda1"], lambda2=1.0, n_inner=1, batch_size=s["online_batch"],
                       random_state=s["seed"],
                       topic_sweeps=s.get("online_sweeps"))
    est = estimate_for(model, X, baseline=base, topic_density=s["avgcomp"])
    t, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    return _finish({"seconds": time.perf_counter() - t, "cpu_s": time.process_time() - cpu,
                    "n_batches": int(model.n_batches_),
                    "nnz_U": int(model.components_.nnz), "avgcomp": avg_compactness(model.components_),
                    "dead": len(model.dead_topics()), "estimate": est.peak, "estimate_components": est.components,
                    "topic_sweeps": s.get("online_sweeps")})


_DONE = {}


def _progress(s, **fields):
    """Record what a peer has done so far in ``s["progress"]`` (read by the driver when it stops the child
    at the time cap, so that "did not finish in T" says how far it got)."""
    _DONE.update(fields)
    path = s.get("progress")
    if path:
        tmp = path + ".tmp"
        Path(tmp).write_text(json.dumps(_DONE, default=float))
        os.replace(tmp, path)


def _watch(s, start, period=2.0):
    """A daemon thread noting every ``period`` s where the main thread is (the innermost frames)."""
    import threading

    main = threading.main_thread().ident

    def run():
        while True:
            time.sleep(period)
            frame, names = sys._current_frames().get(main), []
            while frame is not None:
                names.append(f"{Path(frame.f_code.co_filename).stem}.{frame.f_code.co_name}")
                frame = frame.f_back
            _progress(s, seconds=time.perf_counter() - start, **{"in": " < ".join(names[:4])})

    threading.Thread(target=run, daemon=True).start()


class _CountedCorpus:
    """gensim's ``Sparse2Corpus`` of X, counting the documents handed out (progress every chunk)."""

    def __init__(self, X, s, start):
        from gensim.matutils import Sparse2Corpus

        self.corpus, self.s, self.start, self.n = Sparse2Corpus(X, documents_columns=False), s, start, 0

    def __len__(self):
        return len(self.corpus)

    def __iter__(self):
        chunk = self.s["lsi_chunk"]
        for doc in self.corpus:
            self.n += 1
            if self.n % chunk == 0:
                _progress(self.s, docs_seen=self.n, of=len(self.corpus),
                          docs_seen_at_s=time.perf_counter() - self.start,
                          what=f"documents handed to LsiModel (chunks of {chunk}; a chunk is processed after "
                               f"it is handed out)")
            yield doc


def child_peer(s):
    import warnings

    import numpy as np

    X = _load(s)
    K, name = s["k"], s["peer"]
    out = {}
    _watch(s, time.perf_counter())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "nmf_mu":
            from sklearn.decomposition import NMF

            times = []
            for it in (1, 2):
                t = time.perf_counter()
                NMF(K, solver="mu", init="random", max_iter=it, tol=0.0, random_state=s["seed"]).fit(X)
                times.append(time.perf_counter() - t)
                _progress(s, **{f"fit_max_iter_{it}_s": times[-1]})
            out = {"seconds": times[1], "per_iteration_s": times[1] - times[0], "fit_1_iteration_s": times[0],
                   "what": "NMF(solver='mu', init='random'): fit(max_iter=2) − fit(max_iter=1)"}
        elif name == "minibatch_nmf":
            from sklearn.decomposition import MiniBatchNMF

            t = time.perf_counter()
            MiniBatchNMF(K, init="random", max_iter=1, batch_size=s["nmf_batch"], tol=0.0,
                         max_no_improvement=None, random_state=s["seed"]).fit(X)
            out = {"seconds": time.perf_counter() - t, "per_iteration_s": time.perf_counter() - t,
                   "what": f"MiniBatchNMF(init='random', batch_size={s['nmf_batch']}): one pass"}
        elif name == "svd":
            from sklearn.decomposition import TruncatedSVD

            import scipy.linalg

            n_iter, lu, t = s["svd_iters"], scipy.linalg.lu, time.perf_counter()
            calls = []

            def counted_lu(*args, **kwargs):  # the power iterations' normalizer (n_iter > 2): 2 per iteration
                out = lu(*args, **kwargs)
                calls.append(time.perf_counter() - t)
                _progress(s, power_iterations_done=len(calls) // 2, power_iteration_times=calls[1::2])
                return out

            scipy.linalg.lu = counted_lu  # read at call time by sklearn.utils.extmath (linalg.lu)
            TruncatedSVD(K, algorithm="randomized", n_iter=n_iter, random_state=s["seed"]).fit(X)
            sec = time.perf_counter() - t
            # randomized_svd: n_iter power iterations (X Q and Xᵀ Q each, LU-normalized), then one more X Q,
            # its QR, B = Qᵀ X and the SVD of B (K+10 x M): the whole fit is timed, not the iterations alone
            out = {"seconds": sec, "per_iteration_s": sec / max(1, n_iter), "n_iter": n_iter,
                   "power_iteration_times": calls[1::2],
                   "what": f"TruncatedSVD(randomized, n_iter={n_iter}, n_oversamples=10): whole fit; per "
                           f"iteration = whole fit ÷ n_iter (an upper bound: the fit also projects and "
                           f"factors once more)"}
        elif name == "lsi":
            from gensim.models import LsiModel
            from gensim.utils import FakeDict

            t = time.perf_counter()
            corpus = _CountedCorpus(X, s, t)
            # FakeDict: M term ids without a dict of M entries (and without a pass to build one)
            LsiModel(corpus, num_topics=K, id2word=FakeDict(X.shape[1]), chunksize=s["lsi_chunk"], onepass=True,
                     power_iters=2, dtype=np.float64)
            sec = time.perf_counter() - t
            out = {"seconds": sec, "per_iteration_s": sec, "chunksize": s["lsi_chunk"],
                   "what": f"gensim LsiModel(onepass, chunksize={s['lsi_chunk']}, power_iters=2, "
                           f"extra_samples=100, float64): one pass"}
    return _finish(out)


CHILDREN = {"synth": child_synth, "search": child_search, "batch": child_batch, "online": child_online,
            "peer": child_peer}
