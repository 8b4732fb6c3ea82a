"""Block (BLAS / lock-step) solvers for the U-step lasso against the coordinate-descent kernel, on real
U-steps of BatchRLSI at the dense end of the density sweep (issue 9); the numbers of
``benchmarks/results/block_lasso.md``. A prototype that lost: nothing here is used by the library.

Usage::

    python benchmarks/bench_block_lasso.py capture LAMBDA1 ITERS OUT.npz   # save the U-step of iteration ITERS
    python benchmarks/bench_block_lasso.py run OUT.npz [...]               # markdown table on stdout
    python benchmarks/bench_block_lasso.py hybrid OUT.npz [...]            # FISTA warm-up, then CD to tol

``capture`` fits ``BatchRLSI(100, lambda1=LAMBDA1, max_iter=ITERS, tol=0)`` on the corpus of ``ab_batch.py``
(``synthetic.make_corpus(20000, 60000, 150, n_topics=100, seed=0)``, cached in ``$AB_CACHE``) and records
every call of the lasso kernel; the last U-step (all term rows, warm start = the previous topics, the
fit's λ and tolerance) is saved as R (M x K), S (K x K), U0 (M x K), lam, tol.

Every saved U-step is the problem ``min_U Σ_i u_iᵀ S u_i − 2 r_iᵀ u_i + λ‖u_i‖₁`` (the kernel's scaling,
:func:`rlsi.kernels.lasso.lasso_rows`). Solvers, all warm-started from U0, one thread, CPU time:

* ``cd`` — the library kernel (``lasso_rows``: cyclic CD per row, gradient ``g = S u`` kept up to date,
  column ``S[k]`` touched only when ``u_k`` changes).
* ``block-cd`` — the same cyclic CD (bit-for-bit the same iterates up to the order of additions), rows in
  blocks of 256, coordinates in groups of 32: inside a group the gradient of the group's coordinates is
  updated by scalar code, the rest by one GEMM per group (``G += ΔU_J S_J``, BLAS): the K² work per sweep
  goes to BLAS, the scalar work drops to 32 per change.
* ``lanes-cd`` — the same cyclic CD on 8 rows in lock-step (coordinate k of 8 rows is one vector
  operation; hides the latency of the per-coordinate chain), bit-for-bit the same iterates.
* ``fista`` — proximal gradient with Nesterov momentum on blocks of 256 rows:
  ``U ← soft(Y − (Y S − R)/L, λ/(2L))``, ``L = λ_max(S)``; one BLAS GEMM plus one fused numba pass per
  iteration.

Targets: F3 = the objective of ``cd`` with 3 sweeps (the fit's default inexact U-step,
``topic_sweeps=3``) and F* = ``cd`` to the fit's tolerance (at most 100 sweeps). "Time to F" is the CPU
time of the cheapest run that reaches F (for ``fista``: the fewest iterations of a grid that do; F* is
reached within 0.1 % of the U-step's whole decrease F(U0) − F*; the row "cd, at most N sweeps" holds the
library kernel to that same looser target).
Times: best of 3 runs.
"""
import os
import sys
import time
import warnings
from pathlib import Path

os.environ["NUMBA_NUM_THREADS"] = "1"
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(1, str(HERE))

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

LANES = 8
CD_GRID = (4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 40, 60)
FISTA_GRID = (2, 4, 6, 8, 10, 12, 14, 16, 20, 25, 30, 40, 60, 80, 120)


@njit(cache=True, nogil=True)
def block_cd(R, S, U, half_lam, max_iter, tol, m, B):
    """Cyclic CD with a delayed (GEMM) gradient update outside each group of m coordinates. U in place."""
    n, K = R.shape
    sweeps = np.zeros(n, dtype=np.int32)
    ng = (K + m - 1) // m
    Sg = [np.ascontiguousarray(S[g * m:min(K, (g + 1) * m)]) for g in range(ng)]
    gl = np.empty(m)
    for a in range(0, n, B):
        b = min(n, a + B)
        nb = b - a
        Ub = np.empty((nb, K))
        Rb = np.empty((nb, K))
        act = np.zeros(nb, dtype=np.bool_)
        for i in range(nb):
            nz = False
            big = False
            for k in range(K):
                Ub[i, k] = U[a + i, k]
                Rb[i, k] = R[a + i, k]
                if Ub[i, k] != 0.0:
                    nz = True
                if Rb[i, k] > half_lam or Rb[i, k] < -half_lam:
                    big = True
            act[i] = nz or big
        G = np.dot(Ub, S)
        maxd = np.zeros(nb)
        maxu = np.zeros(nb)
        for it in range(max_iter):
            alive = False
            for i in range(nb):
                maxd[i] = 0.0
                maxu[i] = 0.0
                if act[i]:
                    sweeps[a + i] = it + 1
                    alive = True
            if not alive:
                break
            for g in range(ng):
                j0 = g * m
                j1 = min(K, j0 + m)
                w = j1 - j0
                D = np.zeros((nb, w))
                touched = False
                for i in range(nb):
                    if not act[i]:
                        continue
                    for l in range(w):
                        gl[l] = G[i, j0 + l]
                    for k in range(j0, j1):
                        skk = S[k, k]
                        old = Ub[i, k]
                        new = 0.0
                        if skk > 0.0:
                            wv = Rb[i, k] - (gl[k - j0] - skk * old)
                            if wv > half_lam:
                                new = (wv - half_lam) / skk
                            elif wv < -half_lam:
                                new = (wv + half_lam) / skk
                        d = new - old
                        if d != 0.0:
                            Ub[i, k] = new
                            D[i, k - j0] = d
                            touched = True
                            for l in range(w):
                                gl[l] += d * S[k, j0 + l]
                            if abs(d) > maxd[i]:
                                maxd[i] = abs(d)
                        if abs(new) > maxu[i]:
                            maxu[i] = abs(new)
                if touched:
                    G += np.dot(D, Sg[g])
            for i in range(nb):
                if act[i] and maxd[i] <= tol * maxu[i]:
                    act[i] = False
        U[a:b] = Ub
    return sweeps


@njit(cache=True, nogil=True)
def lanes_cd(R, S, U, half_lam, max_iter, tol):
    """Cyclic CD on LANES rows in lock-step (rows optimal at zero skipped, as the kernel does). U in place."""
    n, K = R.shape
    sweeps = np.zeros(n, dtype=np.int32)
    rows = np.empty(n, dtype=np.int64)
    nr = 0
    for i in range(n):
        need = False
        for k in range(K):
            if U[i, k] != 0.0 or R[i, k] > half_lam or R[i, k] < -half_lam:
                need = True
        if need:
            rows[nr] = i
            nr += 1
    Ut = np.zeros((K, LANES))
    Rt = np.zeros((K, LANES))
    Gt = np.zeros((K, LANES))
    act = np.zeros(LANES, dtype=np.bool_)
    maxd = np.zeros(LANES)
    maxu = np.zeros(LANES)
    D = np.zeros(LANES)
    for a in range(0, nr, LANES):
        m = min(LANES, nr - a)
        for j in range(LANES):
            act[j] = j < m
            for k in range(K):
                Ut[k, j] = U[rows[a + j], k] if j < m else 0.0
                Rt[k, j] = R[rows[a + j], k] if j < m else 0.0
        Gt[:, :] = 0.0
        for k in range(K):
            for l in range(K):
                s = S[k, l]
                for j in range(LANES):
                    Gt[l, j] += s * Ut[k, j]
        for it in range(max_iter):
            for j in range(LANES):
                maxd[j] = 0.0
                maxu[j] = 0.0
                if act[j]:
                    sweeps[rows[a + j]] = it + 1
            for k in range(K):
                skk = S[k, k]
                anyd = False
                for j in range(LANES):
                    old = Ut[k, j]
                    new = 0.0
                    if skk > 0.0:
                        w = Rt[k, j] - (Gt[k, j] - skk * old)
                        if w > half_lam:
                            new = (w - half_lam) / skk
                        elif w < -half_lam:
                            new = (w + half_lam) / skk
                    if not act[j]:
                        new = old
                    d = new - old
                    D[j] = d
                    Ut[k, j] = new
                    if abs(d) > maxd[j]:
                        maxd[j] = abs(d)
                    if abs(new) > maxu[j]:
                        maxu[j] = abs(new)
                    if d != 0.0:
                        anyd = True
                if anyd:
                    for l in range(K):
                        s = S[k, l]
                        for j in range(LANES):
                            Gt[l, j] += D[j] * s
            alive = False
            for j in range(LANES):
                if act[j] and maxd[j] <= tol * maxu[j]:
                    act[j] = False
                alive = alive or act[j]
            if not alive:
                break
        for j in range(m):
            for k in range(K):
                U[rows[a + j], k] = Ut[k, j]
    return sweeps


@njit(cache=True, nogil=True)
def fista(R, S, U, lam, L, n_iter, B):
    """FISTA on blocks of B rows: one GEMM (np.dot -> BLAS) and one fused prox/momentum pass per iteration."""
    n, K = R.shape
    t = lam / (2.0 * L)
    inv_L = 1.0 / L
    for a in range(0, n, B):
        b = min(n, a + B)
        nb = b - a
        X = U[a:b].copy()
        Y = X.copy()
        tk = 1.0
        for _ in range(n_iter):
            G = np.dot(Y, S)
            tn = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * tk * tk))
            beta = (tk - 1.0) / tn
            for i in range(nb):
                for k in range(K):
                    z = Y[i, k] - (G[i, k] - R[a + i, k]) * inv_L
                    xn = z - t if z > t else (z + t if z < -t else 0.0)
                    Y[i, k] = xn + beta * (xn - X[i, k])
                    X[i, k] = xn
            tk = tn
        U[a:b] = X


def objective(R, S, U, lam):
    return float(np.einsum("ij,ij->", U @ S, U) - 2.0 * np.einsum("ij,ij->", R, U) + lam * np.abs(U).sum())


def capture(lam, iters, out):
    from rlsi.models import penalties
    from rlsi.models.batch import BatchRLSI

    warnings.simplefilter("ignore")
    from synthetic import ab_matrix

    X = ab_matrix()
    calls = []
    original = penalties.lasso_rows

    def recording(R, S, U0, l1, **kw):
        R64 = np.array(R, dtype=np.float64)
        calls.append((R64, np.array(S, dtype=np.float64),
                      np.zeros_like(R64) if U0 is None else np.array(U0, dtype=np.float64), l1, kw.get("tol")))
        return original(R, S, U0, l1, **kw)

    penalties.lasso_rows = recording
    try:
        model = BatchRLSI(100, lambda1=lam, max_iter=iters, tol=0, random_state=0).fit(X)
    finally:
        penalties.lasso_rows = original
    last = [c for c in calls if np.array_equal(c[1], calls[-1][1])]  # the calls of the last U-step (same S)
    U = model.components_
    np.savez(out, R=np.concatenate([c[0] for c in last]), S=last[0][1], U0=np.concatenate([c[2] for c in last]),
             lam=last[0][3], tol=last[0][4], lambda1=lam, iteration=iters,
             avgcomp=U.nnz / (U.shape[0] * U.shape[1]))


def cpu(fn, reps=3):
    best = np.inf
    for _ in range(reps):
        t = time.process_time()
        res = fn()
        best = min(best, time.process_time() - t)
    return best, res


def run(paths):
    from rlsi.kernels.lasso import lasso_rows

    print("| λ₁ / 1000 docs (AvgComp of the fit) | density of U0 / of the solution | solver | time to F3 (s) | "
          "time to F* (s) | F* − F3 | notes |")
    print("|---|---|---|---:|---:|---:|---|")
    for path in paths:
        d = np.load(path)
        R, S, U0, lam, tol = d["R"], np.ascontiguousarray(d["S"]), d["U0"], float(d["lam"]), float(d["tol"])
        h = 0.5 * lam
        L = float(np.linalg.eigvalsh(S)[-1])
        for f in (lambda: block_cd(R[:64], S, U0[:64].copy(), h, 2, tol, 32, 256),  # compile
                  lambda: lanes_cd(R[:64], S, U0[:64].copy(), h, 2, tol),
                  lambda: fista(R[:64], S, U0[:64].copy(), lam, L, 2, 256)):
            f()
        t3, (U3, _) = cpu(lambda: lasso_rows(R, S, U0, lam, max_iter=3, tol=tol))
        ts, (Us, sw) = cpu(lambda: lasso_rows(R, S, U0, lam, max_iter=100, tol=tol))
        F0, F3, Fs = objective(R, S, U0, lam), objective(R, S, U3, lam), objective(R, S, Us, lam)
        slack = 1e-3 * (F0 - Fs)  # F* is reached within 0.1 % of the whole decrease of the U-step
        head = f"{d['lambda1']:g} ({float(d['avgcomp']):.2f})"
        dens = f"{(U0 != 0).mean():.2f} / {(Us != 0).mean():.2f}"
        print(f"| {head} | {dens} | cd (library) | {t3:.3f} | {ts:.3f} | {Fs - F3:.3g} | "
              f"{sw.mean():.1f} sweeps / row to tol; cond(S) = {L / np.linalg.eigvalsh(S)[0]:.0f} |")
        for n_sweeps in CD_GRID:  # the fewest sweeps that reach F* within the slack (what fista is held to)
            U, _ = lasso_rows(R, S, U0, lam, max_iter=n_sweeps, tol=tol)
            if objective(R, S, U, lam) <= Fs + slack:
                tk = cpu(lambda n=n_sweeps: lasso_rows(R, S, U0, lam, max_iter=n, tol=tol))[0]
                print(f"| | | cd, at most {n_sweeps} sweeps | | {tk:.3f} | | the fewest sweeps within 0.1 % of "
                      f"F(U0) − F* (F* itself: previous row) |")
                break

        def in_place(fn, *args):
            U = U0.copy()
            out = fn(R, S, U, *args)
            return U, out

        b3, (Ub3, _) = cpu(lambda: in_place(block_cd, h, 3, tol, 32, 256))
        bs, (Ubs, _) = cpu(lambda: in_place(block_cd, h, 100, tol, 32, 256))
        same = max(np.abs(Ub3 - U3).max(), np.abs(Ubs - Us).max())
        print(f"| | | block-cd (GEMM refresh) | {b3:.3f} | {bs:.3f} | | same iterates as cd: max diff {same:.0e} |")
        l3, (Ul3, _) = cpu(lambda: in_place(lanes_cd, h, 3, tol))
        ls, (Uls, _) = cpu(lambda: in_place(lanes_cd, h, 100, tol))
        same = max(np.abs(Ul3 - U3).max(), np.abs(Uls - Us).max())
        print(f"| | | lanes-cd (8 rows lock-step) | {l3:.3f} | {ls:.3f} | | same iterates as cd: max diff {same:.0e} |")
        hits = {}
        for n_iter in FISTA_GRID:
            U = U0.copy()
            fista(R, S, U, lam, L, n_iter, 256)
            F = objective(R, S, U, lam)
            for name, goal in (("F3", F3), ("F*", Fs + slack)):
                if name not in hits and F <= goal:
                    hits[name] = n_iter
            if len(hits) == 2:
                break
        times = {name: cpu(lambda n=n: in_place(fista, lam, L, n, 256))[0] for name, n in hits.items()}
        cells = [f"{times[k]:.3f}" if k in hits else f"not in {FISTA_GRID[-1]} it." for k in ("F3", "F*")]
        print(f"| | | fista (BLAS GEMM) | {cells[0]} | {cells[1]} | | iterations: "
              f"{hits.get('F3', '–')} to F3, {hits.get('F*', '–')} to F* |", flush=True)


def hybrid(paths):
    """FISTA for k iterations, then the library CD to its tolerance (same stopping rule, so the same
    solution to solver tolerance): does a BLAS warm-up shorten CD's tail?"""
    from rlsi.kernels.lasso import lasso_rows

    for path in paths:
        d = np.load(path)
        R, S, U0, lam, tol = d["R"], np.ascontiguousarray(d["S"]), d["U0"], float(d["lam"]), float(d["tol"])
        L = float(np.linalg.eigvalsh(S)[-1])
        fista(R[:64], S, U0[:64].copy(), lam, L, 2, 256)
        t = time.process_time()
        Uc, sc = lasso_rows(R, S, U0, lam, max_iter=100, tol=tol)
        tc = time.process_time() - t
        print(f"{path}: cd to tol {tc:.3f} s, {sc.mean():.1f} sweeps / row, F = {objective(R, S, Uc, lam):.6f}")
        for k in (10, 20, 30, 40):
            t = time.process_time()
            U = U0.copy()
            fista(R, S, U, lam, L, k, 256)
            U, s = lasso_rows(R, S, U, lam, max_iter=100, tol=tol, overwrite_init=True)
            th = time.process_time() - t
            print(f"  fista {k} + cd to tol: {th:.3f} s ({tc / th:.2f}x), {s.mean():.1f} sweeps / row, "
                  f"F = {objective(R, S, U, lam):.6f}, max |U - U_cd| = {np.abs(U - Uc).max():.1e}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
        sys.exit(print(__doc__))
    if sys.argv[1] == "capture":
        capture(float(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "hybrid":
        hybrid(sys.argv[2:])
    else:
        run(sys.argv[2:])
