"""Why batch STC's document codes classify poorly on 20 Newsgroups (issue 12): the coding or the dictionary?

One experiment, ``dictionary``: the same STC coding (the paper's λ = γ = 0.01, ρ = 0.1, ε = 1e-3; 10 sweeps)
under several dictionaries β, each row giving the linear-SVM accuracy of the codes (:func:`bench_stc.svm_on_codes`:
l2-normalised θ, C by 3-fold CV on the training codes), the STC objective (4) of the training documents
under that β (Σ_d f_d, codes solved with β fixed), and what the codes and topics look like:

* STC's own β after 1, 3, ``--iters`` batch iterations (our default fit: MM step, β⁰ from documents);
* scikit-learn's batch LDA topics (K = 60, ``--lda-passes`` passes), normalised — no STC training at all;
* STC iterations started from LDA's topics (1 and 3 iterations of the same fit).

If LDA's topics, coded by STC at the paper's setting, classify far better than STC's learned topics while
their STC objective is higher, then the coding is sound and the objective (4) at the paper's (λ, γ, ρ, ε)
prefers dictionaries whose codes classify poorly — the gap is not an optimisation defect.

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src \\
        python benchmarks/bench_stc_diagnose.py --subset 3000,2000 --out diag_subset.md
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402

from bench_stc import DATA, PARAMS, load, svm_on_codes  # noqa: E402
from rlsi.models.stc import SparseTopicalCoding  # noqa: E402


class _Snapshots(SparseTopicalCoding):
    """Batch STC that starts from ``start`` (when given) and keeps β after every iteration."""

    start = None

    def _init_beta(self, n_features, X=None, y=None):
        return super()._init_beta(n_features, X, y) if self.start is None else np.array(self.start)

    def _step(self, X, beta, G, B, S, cols):
        new = super()._step(X, beta, G, B, S, cols)
        self.snapshots_[len(self.objective_)] = new.copy()
        return new


def fit_snapshots(Xtr, iters, start=None):
    m = _Snapshots(**PARAMS, max_sweeps=10, max_iter=iters, fit_tol=0.0)
    m.start, m.snapshots_ = start, {}
    return m.fit(Xtr)


def describe(m, beta, Xtr, ytr, Xte, yte):
    """Accuracy, objective (4) on the training documents, code and topic statistics under β."""
    m._set_components(beta)
    theta = np.zeros((Xtr.shape[0], m.n_components))
    f = m._code(Xtr, np.asarray(beta, dtype=np.float64), theta, want_grad=False)[2]
    Tte = m.transform(Xte)
    acc, C = svm_on_codes(theta, ytr, Tte, yte)
    thr = m.rho * m.eps  # a count-1 word is coded on topic k only if β_kn exceeds about ρε
    share = theta.max(axis=1) / np.maximum(theta.sum(axis=1), 1e-300)
    return {"acc": 100 * acc, "C": C, "obj": float(f.sum()),
            "active": float(np.median((theta > 0).sum(axis=1))), "share": float(np.median(share)),
            "terms": float(np.median((beta > thr).sum(axis=1))), "cover": float(np.mean((beta > thr).any(axis=0))),
            "sparsity": m.word_code_sparsity(Xte)}


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser()
    ap.add_argument("--subset", default="", help="'ntrain,ntest' random documents (bench_stc_calibrate.subset)")
    ap.add_argument("--iters", type=int, default=10, help="batch STC iterations (rows at 1, 3 and this)")
    ap.add_argument("--lda-passes", type=int, default=10)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    load0 = os.getloadavg()
    Xtr, ytr, Xte, yte = load(DATA)
    if args.subset:
        from bench_stc_calibrate import subset
        Xtr, ytr, Xte, yte = subset(Xtr, ytr, Xte, yte, args.subset)
    print(f"data: train {Xtr.shape} ({Xtr.nnz} nnz), test {Xte.shape[0]}", flush=True)
    rows = []

    def add(name, m, beta, cpu):
        r = describe(m, beta, Xtr, ytr, Xte, yte)
        rows.append((name, r, cpu))
        print(f"{name:45s} acc {r['acc']:.1f} (C={r['C']:g}) objective {r['obj']:.4g} active topics/doc "
              f"{r['active']:.0f} top-topic share {r['share']:.2f} terms/topic {r['terms']:.0f} covered "
              f"{r['cover']:.2f} word-code sparsity {r['sparsity']:.3f} fit cpu {cpu:.0f}s", flush=True)

    c0 = time.process_time()
    stc = fit_snapshots(Xtr, args.iters)
    cpu = time.process_time() - c0
    for it in sorted({1, 3, args.iters}):
        add(f"STC's β, {it} iteration(s) (β⁰ from documents)", stc, stc.snapshots_[it], cpu)
    c0 = time.process_time()
    lda = LatentDirichletAllocation(stc.n_components, learning_method="batch", max_iter=args.lda_passes,
                                    random_state=0, n_jobs=1).fit(Xtr)
    lda_beta = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    cpu = time.process_time() - c0
    acc, C = svm_on_codes(lda.transform(Xtr), ytr, lda.transform(Xte), yte)
    print(f"LDA θ + SVM: {100 * acc:.1f} (C={C:g})", flush=True)
    add(f"LDA's β ({args.lda_passes} batch passes), no STC step", stc, lda_beta, cpu)
    c0 = time.process_time()
    warm = fit_snapshots(Xtr, 3, start=lda_beta)
    cpu = time.process_time() - c0
    for it in (1, 3):
        add(f"STC's β, {it} iteration(s) from LDA's β", warm, warm.snapshots_[it], cpu)
    cmd = " ".join(shlex.quote(a) for a in ["benchmarks/bench_stc_diagnose.py"] + argv)
    lines = [f"Command: `{cmd}`", "",
             f"Data: train {Xtr.shape[0]} x {Xtr.shape[1]}, test {Xte.shape[0]}. STC coding at λ = γ = 0.01, "
             f"ρ = 0.1, ε = 1e-3, 10 sweeps. LDA θ + the same SVM: {100 * acc:.1f} % (C = {C:g}). Load average "
             f"at the start {load0[0]:.1f}, at the end {os.getloadavg()[0]:.1f}; one numba/BLAS thread.", "",
             "| dictionary β | accuracy of STC codes (%) | objective (4), training docs | active topics / doc "
             "(median) | top topic's share of θ | terms / topic with β > ρε | terms covered | test word-code "
             "sparsity | fit CPU (s) |", "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {n} | {r['acc']:.1f} (C = {r['C']:g}) | {r['obj']:,.0f} | {r['active']:.0f} | {r['share']:.2f} | "
              f"{r['terms']:.0f} | {r['cover']:.2f} | {r['sparsity']:.3f} | {cpu:.0f} |" for n, r, cpu in rows]
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
