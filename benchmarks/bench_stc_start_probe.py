"""Probes of cheaper or supervised dictionary starts for the STC family on 20 Newsgroups (outside the paper;
benchmarks/results/stc_table2_s7.md). Same data, parameters (K = 60, ρ = 0.1, λ = γ = 0.01, ε = 1e-3, 10
sweeps, MM step) and SVM protocol as bench_stc.py; the start β⁰ is computed here and handed to the model.

    # online STC at batch size 32 from scikit-learn's online LDA (batch size:passes; total_samples = D)
    python benchmarks/bench_stc_start_probe.py online-lda 256:1 1024:1 256:2
    # ... from scikit-learn's batch LDA with fewer E-step iterations per document (passes:max_doc_update_iter;
    # dictionary_init="lda" is passes:100)
    python benchmarks/bench_stc_start_probe.py batch-lda 10:20 5:20
    # ... from scikit-learn's batch LDA on a random part of the training documents (n_docs:passes; the
    # online learner's "first documents")
    python benchmarks/bench_stc_start_probe.py subset-lda 4000:10 2000:10
    # MedSTC (batch, 3 iterations) and online MedSTC (batch size 32) from class-conditional LDA topics:
    # each class' 3 topics (topic k to class k mod 20, as dictionary_init="class") are a batch LDA with 3
    # topics on that class' training documents
    python benchmarks/bench_stc_start_probe.py class-lda batch 32 [--passes 10] [--iters 3] [--shared 20]

CPU seconds are time.process_time of this process (start + fit + predict).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402

from bench_stc import DATA, PARAMS, load, svm_on_codes  # noqa: E402
from rlsi.models.stc import MedSTC, OnlineMedSTC, OnlineSTC  # noqa: E402

COMMON = dict(PARAMS, max_sweeps=10)


def online_lda_beta(X, batch_size, passes, seed=0):
    lda = LatentDirichletAllocation(60, learning_method="online", batch_size=batch_size, max_iter=passes,
                                    total_samples=X.shape[0], random_state=seed, n_jobs=1).fit(X)
    return lda.components_ / lda.components_.sum(axis=1, keepdims=True)


def batch_lda_beta(X, passes, doc_iters, seed=0):
    lda = LatentDirichletAllocation(60, learning_method="batch", max_iter=passes, max_doc_update_iter=doc_iters,
                                    random_state=seed, n_jobs=1).fit(X)
    return lda.components_ / lda.components_.sum(axis=1, keepdims=True)


def subset_lda_beta(X, n_docs, passes, seed=0):
    rows = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:n_docs])
    return batch_lda_beta(X[rows], passes, 100, seed)


def class_lda_beta(X, y, K, passes, seed=0, shared=0):
    """Topics dealt to the classes as dictionary_init="class" (topic k to class k mod L among the first
    K − shared); each class' topics = a batch LDA on its documents; the last ``shared`` topics = a batch LDA
    on all documents (words common to all classes)."""
    labels = np.unique(y)
    B = np.zeros((K, X.shape[1]))
    Kc = K - shared
    if shared:
        B[Kc:] = LatentDirichletAllocation(shared, learning_method="batch", max_iter=passes, random_state=seed,
                                           n_jobs=1).fit(X).components_
    for ci, c in enumerate(labels):
        ks = np.arange(ci, Kc, len(labels))
        lda = LatentDirichletAllocation(len(ks), learning_method="batch", max_iter=passes, random_state=seed,
                                        n_jobs=1).fit(X[y == c])
        B[ks] = lda.components_
    return B / B.sum(axis=1, keepdims=True)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("probe", choices=["online-lda", "batch-lda", "subset-lda", "class-lda"])
    ap.add_argument("variants", nargs="+",
                    help="online-lda: batch_size:passes; batch-lda: passes:max_doc_update_iter; "
                         "subset-lda: n_docs:passes; class-lda: 'batch' or a batch size")
    ap.add_argument("--passes", type=int, default=10, help="class-lda: batch LDA passes per class")
    ap.add_argument("--iters", type=int, default=3, help="class-lda: batch MedSTC iterations")
    ap.add_argument("--shared", type=int, default=0,
                    help="class-lda: topics fitted on all documents (the rest dealt to the classes)")
    args = ap.parse_args(argv)
    Xtr, ytr, Xte, yte = load(DATA)
    print(f"load average at the start {os.getloadavg()[0]:.1f}", flush=True)
    for v in args.variants:
        c0 = time.process_time()
        if args.probe in ("online-lda", "batch-lda", "subset-lda"):
            a, b = (int(x) for x in v.split(":"))
            B = {"online-lda": online_lda_beta, "batch-lda": batch_lda_beta,
                 "subset-lda": subset_lda_beta}[args.probe](Xtr, a, b)
            c_init = time.process_time() - c0
            m = OnlineSTC(batch_size=32, n_epochs=1, **COMMON)
            m._init_beta = lambda *a, **k: B.copy()
            m.fit(Xtr)
            c_fit = time.process_time() - c0
            acc, C = svm_on_codes(m.transform(Xtr), ytr, m.transform(Xte), yte)
            note = f"SVM C = {C:g}"
        else:
            B = class_lda_beta(Xtr, ytr, COMMON["n_components"], args.passes, shared=args.shared)
            c_init = time.process_time() - c0
            m = (MedSTC(max_iter=args.iters, **COMMON) if v == "batch"
                 else OnlineMedSTC(batch_size=int(v), n_epochs=1, **COMMON))
            m._init_beta = lambda *a, **k: B.copy()
            m.fit(Xtr, ytr)
            c_fit = time.process_time() - c0
            acc = m.score(Xte, yte)
            note = f"refit SVM C = {m.refit_C_:g}"
        c_tot = time.process_time() - c0
        print(f"{args.probe} {v}: start {c_init:.1f} s CPU, + fit {c_fit:.1f} s, + predict {c_tot:.1f} s; "
              f"accuracy {100 * acc:.1f} % ({note}); test word-code sparsity {m.word_code_sparsity(Xte):.3f}; "
              f"load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
