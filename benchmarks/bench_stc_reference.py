"""Benchmark: rlsi's MedSTC against the released MedSTC code on the same vocabulary and start.

rlsi side: MedSTC at the released preset (``stc_params("released", MedSTC)``: λ = γ = 0.2 in rlsi's ½
convention = the released 0.1, ρ = 0.01, C = 0.5, ℓ = 3600, β⁰ = 1/M, 21 sweeps, tol 1e-4, L-BFGS
dictionary, kept word codes, linearised hinge) for ``--iters`` iterations on 20 Newsgroups. Per iteration:
the coding objective Σ_d f_d (the released code's first ``lhood.dat`` column: with these constants the two
conventions give the same number), the hinge part C Σ hinge + ½‖η‖², wall and CPU seconds. Accuracy on
the test split twice: with the joint η (the released prediction rule: label-free test codes scored by the
last SVM of the fit) and with η refit on the label-free training codes (rlsi's default,
``refit_classifier=True``, C by 3-fold CV).

Released side (optional, ``--released-dir``): the released code is built and run outside the project (see
docs/stc.md for the steps); its ``lhood.dat`` (coding objective, total, change, log-loss per iteration) and
the accuracy it printed are read and shown beside rlsi's. ``--write-released-data DIR`` writes the vocabulary
as the released reader expects it ("length label term:count ...", labels 0..19, empty documents dropped).

    python benchmarks/bench_stc_reference.py --iters 6 --released-dir /tmp/medstc/run_med/s60_c0_f1_s1
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

from bench_stc import DATA, load, subset  # noqa: E402

from rlsi.models.stc import MedSTC  # noqa: E402
from rlsi.models.stc.settings import stc_params  # noqa: E402


class _Traced(MedSTC):
    """MedSTC that records, per iteration, Σ f_d, the hinge part and (wall, CPU) seconds."""

    def _extra_objective(self, X, theta, codes):
        extra = super()._extra_objective(X, theta, codes)
        self.trace_.append([extra, time.perf_counter() - self.t0_[0], time.process_time() - self.t0_[1]])
        return extra


def write_released_data(Xtr, ytr, Xte, yte, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    classes = {c: i for i, c in enumerate(sorted(set(ytr)))}
    for name, X, y in (("train", Xtr, ytr), ("test", Xte, yte)):
        with open(out / f"ng_{name}.txt", "w") as f:
            for d in range(X.shape[0]):
                a, b = X.indptr[d], X.indptr[d + 1]
                if b > a:
                    pairs = " ".join(f"{t}:{int(c)}" for t, c in zip(X.indices[a:b], X.data[a:b]))
                    f.write(f"{b - a} {classes[y[d]]} {pairs}\n")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=6)
    ap.add_argument("--init", default="uniform", choices=["uniform", "documents"])
    ap.add_argument("--step", default="lbfgs", choices=["lbfgs", "mm", "projected"])
    ap.add_argument("--hinge", default="linearized", choices=["linearized", "exact"])
    ap.add_argument("--subset", default="")
    ap.add_argument("--released-dir", default=None)
    ap.add_argument("--released-accuracy", type=float, default=None, help="the accuracy the released run printed")
    ap.add_argument("--write-released-data", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    Xtr, ytr, Xte, yte = subset(*load(DATA), args.subset)
    if args.write_released_data:
        write_released_data(Xtr, ytr, Xte, yte, args.write_released_data)
        return
    cmd = "python benchmarks/bench_stc_reference.py " + " ".join(argv if argv is not None else sys.argv[1:])
    m = _Traced(**stc_params("released", MedSTC, max_iter=args.iters, fit_tol=0.0, dictionary_init=args.init,
                             dictionary_step=args.step, hinge=args.hinge, refit_classifier=False))
    m.trace_, m.t0_ = [], (time.perf_counter(), time.process_time())
    m.fit(Xtr, ytr)
    joint = m.score(Xte, yte)
    m.refit_classifier = True
    m._refit(Xtr, np.searchsorted(m.classes_, ytr))
    refit = m.score(Xte, yte)
    released = []
    if args.released_dir and (Path(args.released_dir) / "lhood.dat").exists():
        released = [line.split() for line in (Path(args.released_dir) / "lhood.dat").read_text().splitlines()]
    lines = [f"Command: `{cmd}`", "",
             f"20 Newsgroups train {Xtr.shape[0]} x {Xtr.shape[1]}, test {Xte.shape[0]}; rlsi MedSTC "
             f"{', '.join(f'{k}={v}' for k, v in m.get_params().items() if k in ('lam', 'gamma', 'rho', 'C', 'delta', 'dictionary_init', 'dictionary_step', 'hinge', 'max_sweeps', 'tol'))}; "
             f"numba threads {os.environ.get('NUMBA_NUM_THREADS', 'default')}; load average at the end "
             f"{os.getloadavg()[0]:.1f} (shared machine).", "",
             "| iteration | rlsi Σ f_d | rlsi hinge part | rlsi wall / CPU (s) | released Σ f_d | released total |",
             "|---|---|---|---|---|---|"]
    for i, (obj, (extra, w, c)) in enumerate(zip(m.objective_, m.trace_)):
        rel = released[i] if i < len(released) else ["", ""]
        lines.append(f"| {i + 1} | {obj - extra:.7g} | {extra:.4g} | {w:.0f} / {c:.0f} | {rel[0][:12]} | "
                     f"{rel[1][:12]} |")
    lines += ["", f"rlsi test accuracy: joint η (the released prediction rule) {100 * joint:.1f} %, η refit on the "
              f"label-free training codes (C = {m.refit_C_:g}) {100 * refit:.1f} %"
              + (f"; released code {args.released_accuracy:.1f} %" if args.released_accuracy else "") + "."]
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
