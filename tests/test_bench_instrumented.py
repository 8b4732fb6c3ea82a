"""The benchmark scripts that time the learners' internals from outside — bench_iteration_phases.py wraps the
problem's steps, the screening providers, the tasks and the penalties' solve; bench_kernel_scaling.py swaps
the products' tiling for its variants — run tiny here, so that a change of what they wrap fails a test
instead of the next benchmark run (bench_batch.py's profile: tests/test_bench_batch.py). No timing is
asserted: only that the runs finish and the wrapped phases were reached."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from rlsi.datasets.synthetic import make_corpus
from rlsi.io.matrix import save_matrix
from rlsi.models import BatchRLSI

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(*args):
    proc = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_iteration_phases_reach_every_wrapped_phase(tmp_path):
    save_matrix(tmp_path / "matrix", make_corpus(300, 1000, 30, n_topics=5, seed=0).X)
    out = tmp_path / "phases.json"
    _run(BENCH / "bench_iteration_phases.py", "--matrix", tmp_path / "matrix", "--k", 4, "--lambda1", 0.5,
         "--iters", 2, "--threads", 1, "--json", out)
    (rec,) = json.loads(out.read_text())
    assert len(rec["iterations"]) == 2
    for it in rec["iterations"]:
        leaves = {path.rsplit("/", 1)[-1] for path in it}
        assert {"U-step", "V-step", "lasso", "ridge solve", "R rows", "G = UᵀU", "S = WᵀW"} <= leaves, leaves


def test_kernel_scaling_runs_every_variant(tmp_path):
    lam = 0.5  # the cache of bench_products.py: X, and U, W of a short fit at λ1
    X = make_corpus(400, 1200, 30, n_topics=5, seed=0).X.tocsr()
    model = BatchRLSI(4, lambda1=lam, max_iter=2, tol=0.0, random_state=0)
    W = model.fit_transform(X)
    sp.save_npz(tmp_path / "X.npz", X)
    sp.save_npz(tmp_path / f"U_{lam:g}.npz", model.components_.T.tocsr())
    np.save(tmp_path / f"W_{lam:g}.npy", W)
    out = tmp_path / "scaling.md"
    _run(BENCH / "bench_kernel_scaling.py", "--cache", tmp_path, "--k", 4, "--lambda1", lam, "--threads", 1,
         "--repeats", 1, "--out", out)
    text = out.read_text()
    for row in ("R = D W, tiles/worker 2", "Φ = X U, tiles ≤ 1/8 of a thread's rows", "Φ = X U, tiles of 256 rows",
                "S = WᵀW, one call on the whole W", "V-step (update_doc_vectors"):
        assert f"| {row}" in text, text
