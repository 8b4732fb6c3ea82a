"""Benchmark: batch STC's three dictionary steps on 20 Newsgroups at the released settings.

The majorise–minimise step (``"mm"``), the paper's projected gradient (``"projected"``, Eq. 12 with an
Armijo search on the stored word codes) and the released code's projected L-BFGS (``"lbfgs"``), each
from the same start (random documents, ``random_state=0``) with the word codes kept (warm starts), for
``--iters`` iterations. Per iteration: the objective of Eq. (4) after the coding pass and the cumulative
wall and CPU seconds; at the end a linear SVM on θ (l2-normalised, C by 3-fold CV on the training codes,
``bench_stc.svm_on_codes``). "Equal time" is read off the curves: the objective each solver has reached by
the time the fastest finished its iterations.

    python benchmarks/bench_stc_solvers.py --iters 3 --out /tmp/solvers.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_stc import DATA, load, subset, svm_on_codes  # noqa: E402

from rlsi.models.stc import SparseTopicalCoding  # noqa: E402
from rlsi.models.stc.settings import stc_params  # noqa: E402


class _Timed(SparseTopicalCoding):
    """Batch STC that records (wall, CPU) seconds after every dictionary step."""

    def _after_step(self, X, theta, it, **extras):
        self.times_.append((time.perf_counter() - self.t0_[0], time.process_time() - self.t0_[1]))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--steps", default="mm,projected,lbfgs")
    ap.add_argument("--init", default="documents", choices=["documents", "uniform", "lda"])
    ap.add_argument("--subset", default="")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    Xtr, ytr, Xte, yte = subset(*load(DATA), args.subset)
    cmd = "python benchmarks/bench_stc_solvers.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [f"Command: `{cmd}`", "",
             f"20 Newsgroups train {Xtr.shape[0]} x {Xtr.shape[1]}, test {Xte.shape[0]}; released settings "
             f"(lam = gamma = 0.2, rho = 0.01, 21 sweeps, tol 1e-4), keep_word_codes, β⁰ {args.init}; numba threads "
             f"{os.environ.get('NUMBA_NUM_THREADS', 'default')}; load average at the start "
             f"{os.getloadavg()[0]:.1f}.", "",
             "| step | iteration | objective | wall (s) | CPU (s) |", "|---|---|---|---|---|"]
    finals = []
    for step in args.steps.split(","):
        m = _Timed(**stc_params("released", SparseTopicalCoding, dictionary_step=step, max_iter=args.iters,
                                dictionary_init=args.init, fit_tol=0.0))
        m.times_, m.t0_ = [], (time.perf_counter(), time.process_time())
        m.fit(Xtr)
        for i, (obj, (w, c)) in enumerate(zip(m.objective_, m.times_)):
            lines.append(f"| {step} | {i + 1} | {obj:.6g} | {w:.0f} | {c:.0f} |")
            print(lines[-1], flush=True)
        acc, C = svm_on_codes(m.transform(Xtr), ytr, m.transform(Xte), yte)
        finals.append(f"| {step} | {100 * acc:.1f} | {m.times_[-1][0]:.0f} / {m.times_[-1][1]:.0f} | {C:g} |")
        print(finals[-1], flush=True)
        if args.out:
            Path(args.out).write_text("\n".join(lines + ["", "| step | accuracy (%) | fit wall / CPU (s) | SVM C |",
                                                         "|---|---|---|---|"] + finals) + "\n")
    lines += ["", "| step | accuracy (%) | fit wall / CPU (s) | SVM C |", "|---|---|---|---|"] + finals
    lines.append(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
