"""Online RLSI at the paper's tracking setting (ρ = 1, ξ = 10 embedded iterations) against scikit-learn's
MiniBatchNMF, one pass over 20 Newsgroups in mini-batches of 256, both at one thread (numba and BLAS) or
both at `--threads` (then wall-clock time by default).

Reported in documents per second of **process CPU time**, which other processes on a shared machine
disturb far less than wall-clock time (the question is whether OnlineRLSI at this setting is at least as fast
as MiniBatchNMF per document). Each ``--sweeps`` value is one OnlineRLSI (``topic_sweeps``: coordinate-
descent sweeps per term row of each warm-started U-step; ``none`` = every U-step solved to ``inner_tol``,
the published algorithm), run in turns with MiniBatchNMF ``--repeat`` times (the best time of each is
kept). Quality, so that a faster setting is not a worse model: the relative reconstruction error of the
whole corpus with the final topics (``‖X − W Uᵀ‖² / ‖X‖²``, W folded in by each model's ``transform``),
terms per topic, and how well the topics match those of the exact U-steps (same data order, same initial
topics): the mean over the exact topics of the best cosine similarity to a topic of the setting (1: the same
topics in any order; the streams' paths diverge, so topic indices are not compared). A control row runs
the exact U-steps with a tighter ``inner_tol``: how much a change at the solver's tolerance alone moves the
topics of a stream.

    PYTHONPATH=src python benchmarks/bench_online_tracking.py [--k 20] [--batch 256] [--sweeps none 1 2 3 5]
        [--repeat 2] [--out benchmarks/results/online_tracking.md]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

harness.use_src()


def rel_error(X, W, H, x2):
    """``‖X − W H‖²_F / ‖X‖²_F`` without forming W H (X: N x M sparse, W: N x K, H: K x M)."""
    import numpy as np
    import scipy.sparse as sp

    H = H.toarray() if sp.issparse(H) else np.asarray(H)
    cross = float(np.einsum("ij,ij->", np.asarray(X @ H.T), W))
    quad = float(np.einsum("ij,ij->", W.T @ W, H @ H.T))
    return (x2 - 2.0 * cross + quad) / x2


def topic_match(U, U_ref):
    """Mean over the non-zero rows of ``U_ref`` (K x M) of the best cosine similarity to a row of ``U``."""
    import numpy as np

    def unit(A):
        n = np.linalg.norm(A, axis=1, keepdims=True)
        return A / np.where(n > 0, n, 1.0)

    live = np.linalg.norm(U_ref, axis=1) > 0  # a dead reference topic has nothing to match
    return float((unit(U_ref[live]) @ unit(U).T).max(axis=1).mean())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--inner", type=int, default=10, help="embedded iterations ξ (default 10)")
    ap.add_argument("--rho", type=float, default=1.0)
    ap.add_argument("--sweeps", nargs="+", default=["none", "1", "2", "3", "5"],
                    help="topic_sweeps values to measure ('none': exact U-steps)")
    ap.add_argument("--control-tol", type=float, default=1e-6,
                    help="also run exact U-steps with this inner_tol: how far a tiny change moves the topics")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each setting (best CPU time kept)")
    ap.add_argument("--out", default=None, help="also write a markdown report here")
    ap.add_argument("--threads", type=int, default=1,
                    help="numba and BLAS threads of both methods (default 1: CPU time is then the measure)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default=None,
                    help="process CPU time or wall-clock time (default: cpu at 1 thread, wall above)")
    a = ap.parse_args(argv)
    clock = a.clock or ("cpu" if a.threads == 1 else "wall")
    now = time.process_time if clock == "cpu" else time.perf_counter
    warnings.simplefilter("ignore")
    import numba
    import numpy as np
    from sklearn.decomposition import MiniBatchNMF
    from threadpoolctl import threadpool_limits

    from rlsi import OnlineRLSI
    from rlsi.text import TfidfVectorizer

    facts = harness.machine_facts()
    data = harness.shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz"
    with gzip.open(data, "rt") as f:
        texts = [json.loads(line)["text"] for line in f]
    X = TfidfVectorizer(stemmer="english", min_df=2).fit_transform(texts)
    x2 = float(X.multiply(X).sum())
    n = X.shape[0]
    sweeps = [None if s.lower() == "none" else int(s) for s in a.sweeps]
    settings = [(s, dict(topic_sweeps=s)) for s in sweeps]
    if a.control_tol and None in sweeps:
        settings.append(("control", dict(topic_sweeps=None, inner_tol=a.control_tol)))
    numba.set_num_threads(min(a.threads, numba.config.NUMBA_NUM_THREADS))
    best, models = {}, {}
    with threadpool_limits(a.threads):
        OnlineRLSI(a.k, batch_size=a.batch, n_inner=2).fit(X[:600])  # compile / load the kernels
        for _ in range(a.repeat):
            for s, extra in settings:
                t = now()
                model = OnlineRLSI(a.k, lambda2=1.0, rho=a.rho, n_inner=a.inner, batch_size=a.batch, random_state=0,
                                   **extra).fit(X)
                best[s] = min(best.get(s, np.inf), now() - t)
                models[s] = model
            t = now()
            nmf = MiniBatchNMF(a.k, batch_size=a.batch, max_iter=1, random_state=0).fit(X)
            best["nmf"] = min(best.get("nmf", np.inf), now() - t)
        ref = models.get(None)
        rows = []
        for s, extra in settings:
            m = models[s]
            U = m.components_.toarray()
            dist = topic_match(U, ref.components_.toarray()) if ref is not None else float("nan")
            name = ", ".join(f"{k}={v}" for k, v in extra.items())
            rows.append((f"OnlineRLSI {name}", n / best[s], best["nmf"] / best[s],
                         rel_error(X, m.transform(X), m.components_, x2), m.components_.nnz / a.k, dist))
        rows.append(("MiniBatchNMF (one pass)", n / best["nmf"], 1.0,
                     rel_error(X, nmf.transform(X), nmf.components_, x2), float(np.count_nonzero(nmf.components_))
                     / a.k, float("nan")))

    cmd = "PYTHONPATH=src python benchmarks/bench_online_tracking.py " + " ".join(argv or sys.argv[1:])
    lines = ["# Online RLSI at the tracking setting vs MiniBatchNMF", "", f"    {cmd.strip()}", "",
             f"20 Newsgroups {X.shape[0]} x {X.shape[1]} (nnz {X.nnz:,}), K = {a.k}, mini-batches of {a.batch}, "
             f"ρ = {a.rho}, ξ = {a.inner}, one pass. Threads: numba {numba.get_num_threads()}, BLAS {a.threads}, "
             f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; documents per second of "
             f"{'process CPU' if clock == 'cpu' else 'wall-clock'} time, best of {a.repeat} runs taken in turns. {harness.load_note(facts)} "
             f"Code: {facts['code']}.", "",
             f"| method | docs / {'CPU' if clock == 'cpu' else 'wall'} s | ratio to MiniBatchNMF | rel. reconstruction error | terms per topic "
             "| topic match to exact U-steps |", "|---|---:|---:|---:|---:|---:|"]
    for name, dps, ratio, err, tpt, dist in rows:
        lines.append(f"| {name} | {dps:,.0f} | {ratio:.2f} | {err:.4f} | {tpt:.0f} | "
                     f"{'' if dist != dist else f'{dist:.3f}'} |")
    report = "\n".join(lines) + "\n"
    print(report)
    if a.out:
        Path(a.out).write_text(report)


if __name__ == "__main__":
    main()
