"""Calibration runs for the STC benchmark (issue 12): the classification protocol and the training length.

Three experiments on 20 Newsgroups (optionally a random subset; see ``--subset``), each printing one line
per setting and, with ``--out``, a markdown table:

* ``lda``: scikit-learn's LDA (K = 60) for several numbers of passes, its θ classified by several SVM
  protocols — does our protocol reach the paper's LDA + SVM number (61.4 %, Table 2) with more passes?
* ``stc``: batch STC for each ρ; the dictionary after 1, 3, 5, ... iterations is kept and the codes of
  train and test documents under it classified by the SVM protocol; test word-code sparsity too.
* ``ostc``: the same for online STC (``--batch-size``), the dictionary after 1, 2, ... epochs.
* ``medstc``: batch MedSTC; C (and ℓ = Δ) chosen on a hold-out third of the TRAINING documents, then refit
  on all training documents and scored on the test split.

    PYTHONPATH=src python benchmarks/bench_stc_calibrate.py lda --subset 3000,2000 --passes 3,10,30

The SVM protocols (``svm_protocols``): ``l2``: l2-normalised θ + LinearSVC, C by 3-fold CV on the
training codes over 1e-2..1e2 (the bench's protocol); ``l2-wide``: the same with C up to 1e4; ``std``:
standardised θ (mean 0, variance 1 per topic, fitted on the training codes) + LinearSVC, C by CV.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402
from sklearn.model_selection import GridSearchCV, train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import Normalizer, StandardScaler  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402

from bench_stc import DATA, PARAMS, load, subset  # noqa: E402
from rlsi.models.stc import MedSTC, OnlineSTC, SparseTopicalCoding  # noqa: E402

PROTOCOLS = {
    "l2": (Normalizer, [0.01, 0.1, 1.0, 10.0, 100.0]),
    "l2-wide": (Normalizer, [0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]),
    "std": (StandardScaler, [0.001, 0.01, 0.1, 1.0, 10.0]),
}


def svm_protocols(Ttr, ytr, Tte, yte, names):
    """{protocol: (test accuracy, chosen C)}; C by 3-fold CV on the training codes only."""
    out = {}
    for name in names:
        scaler, grid = PROTOCOLS[name]
        g = GridSearchCV(make_pipeline(scaler(), LinearSVC(max_iter=5000)), {"linearsvc__C": grid}, cv=3,
                         n_jobs=1).fit(Ttr, ytr)
        out[name] = (100 * g.score(Tte, yte), g.best_params_["linearsvc__C"])
    return out


class _Snapshots(SparseTopicalCoding):
    """Batch STC that keeps β after the iterations in ``keep``."""

    keep = ()

    def _step(self, X, beta, G, B, S, cols):
        new = super()._step(X, beta, G, B, S, cols)
        it = len(self.objective_)
        if it in self.keep:
            self.snapshots_[it] = new.copy()
        return new


class _EpochSnapshots(OnlineSTC):
    """Online STC that keeps β after the epochs in ``keep`` (``n_docs`` documents per epoch)."""

    keep, n_docs = (), 0

    def _update(self, X, y):
        super()._update(X, y)
        epoch, rest = divmod(self.n_docs_seen_, self.n_docs)
        if rest == 0 and epoch in self.keep:
            self.snapshots_[epoch] = np.array(self.components_)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["lda", "stc", "ostc", "medstc"])
    ap.add_argument("--batch-size", type=int, default=32, help="ostc: mini-batch size")
    ap.add_argument("--subset", default="", help="'ntrain,ntest' random documents (default: the full split)")
    ap.add_argument("--passes", default="3,10", help="lda: passes; stc/medstc: iterations to evaluate")
    ap.add_argument("--lda-method", choices=["batch", "online"], default="batch")
    ap.add_argument("--rhos", default="0.001", help="comma-separated ρ values")
    ap.add_argument("--Cs", default="0.1,1,10", help="medstc: C grid (hold-out on the training split)")
    ap.add_argument("--deltas", default="3600", help="medstc: ℓ grid")
    ap.add_argument("--protocols", default="l2,l2-wide,std")
    ap.add_argument("--max-sweeps", type=int, default=10)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    t = time.perf_counter()
    Xtr, ytr, Xte, yte = subset(*load(DATA), args.subset)
    print(f"data: train {Xtr.shape}, test {Xte.shape[0]}, {time.perf_counter() - t:.1f}s", flush=True)
    passes = [int(p) for p in args.passes.split(",")]
    protocols = args.protocols.split(",")
    lines = []
    if args.what == "lda":
        lines += ["| LDA passes | " + " | ".join(f"{p} acc (C)" for p in protocols) + " | fit (s) |",
                  "|---|" + "---|" * (len(protocols) + 1)]
        for p in passes:
            t0 = time.perf_counter()
            lda = LatentDirichletAllocation(60, learning_method=args.lda_method, batch_size=256, max_iter=p,
                                            random_state=0, n_jobs=1).fit(Xtr)
            fit_s = time.perf_counter() - t0
            res = svm_protocols(lda.transform(Xtr), ytr, lda.transform(Xte), yte, protocols)
            cells = " | ".join(f"{res[q][0]:.1f} ({res[q][1]:g})" for q in protocols)
            lines.append(f"| {p} ({args.lda_method}) | {cells} | {fit_s:.0f} |")
            print(lines[-1], flush=True)
    elif args.what in ("stc", "ostc"):
        lines += ["| ρ | iterations | " + " | ".join(f"{p} acc (C)" for p in protocols)
                  + " | test word-code sparsity | fit (s, all iterations) |", "|---|---|" + "---|" * (len(protocols) + 2)]
        for rho in (float(r) for r in args.rhos.split(",")):
            if args.what == "stc":
                m = _Snapshots(**dict(PARAMS, rho=rho), max_sweeps=args.max_sweeps, max_iter=max(passes),
                               fit_tol=0.0)
            else:  # the bench's online setting: τ0 = 1, τ = 10, epochs reshuffled
                m = _EpochSnapshots(**dict(PARAMS, rho=rho), max_sweeps=args.max_sweeps, n_epochs=max(passes),
                                    batch_size=args.batch_size, tau0=1.0)
                m.n_docs = Xtr.shape[0]
            m.keep, m.snapshots_ = tuple(passes), {}
            t0 = time.perf_counter()
            m.fit(Xtr)
            fit_s = time.perf_counter() - t0
            for p in passes:
                if m.snapshots_.get(p) is None:
                    continue
                m._set_components(m.snapshots_[p])
                res = svm_protocols(m.transform(Xtr), ytr, m.transform(Xte), yte, protocols)
                cells = " | ".join(f"{res[q][0]:.1f} ({res[q][1]:g})" for q in protocols)
                lines.append(f"| {rho:g} | {p} | {cells} | {m.word_code_sparsity(Xte):.3f} | {fit_s:.0f} |")
                print(lines[-1], flush=True)
    else:
        lines += ["| ρ | iterations | ℓ | C | hold-out acc (%) | chosen | test acc (%) |", "|---|---|---|---|---|---|---|"]
        Xa, Xb, ya, yb = train_test_split(Xtr, ytr, test_size=1 / 3, random_state=0, stratify=ytr)
        for rho in (float(r) for r in args.rhos.split(",")):
            for p in passes:
                grid = [(float(d), float(C)) for d in args.deltas.split(",") for C in args.Cs.split(",")]
                best = None
                for d, C in grid:
                    mk = dict(PARAMS, rho=rho, max_sweeps=args.max_sweeps, max_iter=p, fit_tol=0.0, C=C, delta=d)
                    if len(grid) == 1:  # nothing to choose: no hold-out fit
                        best = (float("nan"), mk)
                        break
                    acc = 100 * MedSTC(**mk).fit(Xa, ya).score(Xb, yb)
                    lines.append(f"| {rho:g} | {p} | {d:g} | {C:g} | {acc:.1f} | | |")
                    print(lines[-1], flush=True)
                    if best is None or acc > best[0]:
                        best = (acc, mk)
                t0 = time.perf_counter()
                acc = 100 * MedSTC(**best[1]).fit(Xtr, ytr).score(Xte, yte)
                lines.append(f"| {rho:g} | {p} | {best[1]['delta']:g} | {best[1]['C']:g} | {best[0]:.1f} | yes "
                             f"| {acc:.1f} ({time.perf_counter() - t0:.0f} s) |")
                print(lines[-1], flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
