"""The ceiling of the features and MedSTC against STC + SVM on 20 Newsgroups (issue 12, Table 2).

Two experiments on the bench's data (bydate split, rlsi's tokenizer, English stop words, ``min_df=2``;
:func:`bench_stc.load`), each printing one line per row and, with ``--out``, a markdown table:

* ``features``: how far a linear SVM gets on this vocabulary and split without STC — raw tf-idf and raw
  counts of the same terms, and K = 60 codes of scikit-learn's NMF (on tf-idf) and LDA (batch variational
  EM on counts). If LDA θ + SVM reached only ~45 %, the protocol (vocabulary, data, split) would be the
  cause of STC's gap; if it reaches ~65 %, STC's codes are.
* ``medstc``: a 2 x 2 that separates the codes from the classifier — the label-free codes of batch STC
  and batch MedSTC (the paper's λ, γ, ρ, ℓ), each classified by (i) the bench's SVM protocol
  (l2-normalised θ, C by 3-fold CV on the training codes) and (ii) MedSTC's own η step (the Crammer–Singer
  SVM of Eq. 16 at the model's C and ℓ, raw θ, no CV), plus MedSTC's ``predict``.

The SVM protocol everywhere is :func:`bench_stc.svm_on_codes` (features: l2-normalised rows, C by 3-fold
CV on the training split only). CPU seconds are ``time.process_time`` of this process.

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src \\
        python benchmarks/bench_stc_ceiling.py features --lda-passes 25 --out ceiling.md
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

from sklearn.decomposition import NMF, LatentDirichletAllocation  # noqa: E402
from sklearn.feature_extraction.text import TfidfTransformer  # noqa: E402

from bench_stc import DATA, PARAMS, load, svm_on_codes  # noqa: E402
from rlsi.models.stc import MedSTC, SparseTopicalCoding  # noqa: E402


class Rows:
    def __init__(self, argv, out):
        self.argv, self.out, self.rows = argv, out, []
        self.load0 = os.getloadavg()

    def add(self, name, acc, C, t0, c0, note=""):
        row = (name, 100 * acc, C, time.perf_counter() - t0, time.process_time() - c0, note)
        self.rows.append(row)
        print(f"{name:55s} acc={row[1]:5.1f}% C={C:g} wall={row[3]:7.1f}s cpu={row[4]:7.1f}s {note} "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
        self.write(False)

    def write(self, final, lines=()):
        cmd = " ".join(shlex.quote(a) for a in ["benchmarks/bench_stc_ceiling.py"] + list(self.argv))
        text = [f"Command: `{cmd}`", "", *lines,
                f"Numba threads {os.environ.get('NUMBA_NUM_THREADS', 'default')}, BLAS threads "
                f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default')}. Load average (1/5/15 min) at the start "
                f"{self.load0[0]:.1f}/{self.load0[1]:.1f}/{self.load0[2]:.1f}, now "
                "{:.1f}/{:.1f}/{:.1f}".format(*os.getloadavg())
                + ("." if final else " **(partial: still running)**."), "",
                "| features / classifier | test accuracy (%) | C | wall (s) | CPU (s) | note |",
                "|---|---|---|---|---|---|"]
        text += [f"| {n} | {a:.1f} | {c:g} | {w:.1f} | {p:.1f} | {note} |" for n, a, c, w, p, note in self.rows]
        if self.out:
            Path(self.out).write_text("\n".join(text) + "\n")
        return text


def features(Xtr, ytr, Xte, yte, args, rows):
    which = set(args.rows.split(","))
    tf = TfidfTransformer(sublinear_tf=False).fit(Xtr)
    Ttr, Tte = tf.transform(Xtr), tf.transform(Xte)
    if "tfidf" in which:
        t0, c0 = time.perf_counter(), time.process_time()
        acc, C = svm_on_codes(Ttr, ytr, Tte, yte)
        rows.add("tf-idf of the same vocabulary + SVM", acc, C, t0, c0, f"{Xtr.shape[1]} terms")
    if "counts" in which:
        t0, c0 = time.perf_counter(), time.process_time()
        acc, C = svm_on_codes(Xtr, ytr, Xte, yte)
        rows.add("raw counts of the same vocabulary + SVM", acc, C, t0, c0)
    if "nmf" in which:
        t0, c0 = time.perf_counter(), time.process_time()
        nmf = NMF(60, init="nndsvda", max_iter=args.nmf_iter, random_state=0).fit(Ttr)
        acc, C = svm_on_codes(nmf.transform(Ttr), ytr, nmf.transform(Tte), yte)
        rows.add("NMF (K = 60, on tf-idf) codes + SVM", acc, C, t0, c0, f"{nmf.n_iter_} iterations")
    if "lda" in which and args.lda_passes:
        t0, c0 = time.perf_counter(), time.process_time()
        lda = LatentDirichletAllocation(60, learning_method="batch", max_iter=args.lda_passes, random_state=0,
                                        n_jobs=1).fit(Xtr)
        acc, C = svm_on_codes(lda.transform(Xtr), ytr, lda.transform(Xte), yte)
        rows.add(f"LDA (K = 60, batch, {args.lda_passes} passes) θ + SVM", acc, C, t0, c0,
                 "paper's LDA (batch): 61.4")


def medstc(Xtr, ytr, Xte, yte, args, rows):
    common = dict(PARAMS, max_sweeps=10, max_iter=args.iters)
    for name, make in (("STC", lambda: SparseTopicalCoding(**common)),
                       ("MedSTC", lambda: MedSTC(C=args.C, delta=args.delta, **common))):
        if name == "STC" and args.skip_stc:
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        m = make().fit(Xtr, ytr) if name == "MedSTC" else make().fit(Xtr)
        Ttr, Tte = m.transform(Xtr), m.transform(Xte)
        if name == "MedSTC":
            # how far the hinge moved the training codes of the last coding pass (doc_codes_) from the
            # label-free codes of the same documents
            shift = np.linalg.norm(m.doc_codes_ - Ttr, axis=1)
            note = (f"hinge shift ‖θ_train − θ_label-free‖: median {np.median(shift):.3g}, 90th pct "
                    f"{np.percentile(shift, 90):.3g}; ‖θ_label-free‖ median {np.median(np.linalg.norm(Ttr, axis=1)):.3g}")
            rows.add("MedSTC: its own predict (η refit on label-free codes)", m.score(Xte, yte), args.C, t0, c0, note)
        acc, C = svm_on_codes(Ttr, ytr, Tte, yte)
        rows.add(f"{name} codes (label-free) + bench SVM (l2, CV)", acc, C, t0, c0)
        # MedSTC's η step on these codes: the Crammer–Singer SVM of Eq. 16 at C, ℓ (raw θ, no CV)
        clf = MedSTC(C=args.C, delta=args.delta, **common)
        clf.classes_ = np.unique(ytr)
        clf.n_components = Ttr.shape[1]
        codes = np.searchsorted(clf.classes_, ytr)
        eta = clf._svm(Ttr, codes)
        acc = float(np.mean(clf.classes_[np.argmax(Tte @ eta.T, axis=1)] == yte))
        rows.add(f"{name} codes (label-free) + MedSTC's η step (C = {args.C:g}, ℓ = {args.delta:g})", acc,
                 args.C, t0, c0)
        mean_norm = float(np.linalg.norm(Ttr, axis=1).mean())
        print(f"{name}: mean ‖θ‖ {mean_norm:.3f}, max θ median {np.median(Ttr.max(axis=1)):.3f}", flush=True)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser()
    ap.add_argument("experiment", choices=["features", "medstc"])
    ap.add_argument("--rows", default="tfidf,counts,nmf,lda", help="features: which rows")
    ap.add_argument("--lda-passes", type=int, default=25, help="batch LDA passes (0: skip LDA)")
    ap.add_argument("--nmf-iter", type=int, default=200)
    ap.add_argument("--iters", type=int, default=3, help="batch STC / MedSTC iterations (medstc)")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=3600.0)
    ap.add_argument("--skip-stc", action="store_true", help="medstc: the MedSTC rows only")
    ap.add_argument("--subset", default="", help="'ntrain,ntest' random documents (bench_stc_calibrate.subset)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    t = time.perf_counter()
    Xtr, ytr, Xte, yte = load(DATA)
    if args.subset:
        from bench_stc_calibrate import subset
        Xtr, ytr, Xte, yte = subset(Xtr, ytr, Xte, yte, args.subset)
    line = (f"Data: train {Xtr.shape[0]} x {Xtr.shape[1]} ({Xtr.nnz} nnz), test {Xte.shape[0]} documents "
            f"(bydate, title + body, no other headers; rlsi tokenizer, English stop words, min_df = 2), prepared "
            f"in {time.perf_counter() - t:.1f} s.")
    print(line, flush=True)
    rows = Rows(argv, args.out)
    (features if args.experiment == "features" else medstc)(Xtr, ytr, Xte, yte, args, rows)
    print("\n".join(rows.write(True, [line, ""])))


if __name__ == "__main__":
    main()
