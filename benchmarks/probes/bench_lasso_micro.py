"""Micro-variants of the lasso's coordinate-descent sweep at the dense end, against the library kernel.

Where a warm-started sweep's time goes (K = 200, solutions ~93 % non-zero, 1 thread):

* ``sweep K DENSITY [SCALE]`` — the library kernel (``lasso_cd_rows``, 3 sweeps from a near-optimal warm start)
  against plain re-implementations: branch-free soft threshold (``max(w - h, 0) + min(w + h, 0)``) and FMA
  contraction (``fastmath={"contract"}``), each checked against the library's result.
* ``f32 K DENSITY [SCALE]`` — a sweep in float32 arithmetic (S, g, u, r in float32) against the library on float32
  storage (float64 arithmetic), and the share of the U-step's possible decrease each reaches in 3 sweeps.
* ``axpy`` — the floor: only the gradient updates ``g += d * S[k]`` of one pass over the non-zeros, float64 and
  float32, with and without fastmath, g a view or a local array.

    PYTHONPATH=src python benchmarks/bench_lasso_micro.py sweep 200 0.6
    PYTHONPATH=src python benchmarks/bench_lasso_micro.py sweep 200 0.3 0.3
    PYTHONPATH=src python benchmarks/bench_lasso_micro.py axpy
    PYTHONPATH=src python benchmarks/bench_lasso_micro.py f32 200 0.6

Results: ``benchmarks/results/lasso_micro_s11.txt``. Not wired into the library: branch-free is 5-8 % faster at
density 0.93 and 5-10 % slower at 0.5; contraction gains nothing in the sweep; float32 arithmetic sweeps 1.23-1.28x
faster with the same decrease, but the library computes in float64 whatever the storage dtype (a design rule).
"""

import os
import sys

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from rlsi.kernels.lasso import lasso_cd_rows  # noqa: E402

def make(inv, branchless, fm=False):
    @njit(cache=False, fastmath={"contract"} if fm else False)
    def kern(R, S, U, half_lam, max_iter, tol, sinv):
        n, K = R.shape
        g = np.empty(K); u = np.empty(K); r = np.empty(K)
        tot = 0
        for i in range(n):
            for k in range(K):
                u[k] = U[i, k]; r[k] = R[i, k]; g[k] = 0.0
            for k in range(K):
                if u[k] != 0.0:
                    Sk = S[k]; uk = u[k]
                    for l in range(K):
                        g[l] += Sk[l] * uk
            for it in range(max_iter):
                tot += 1
                max_delta = 0.0; max_u = 0.0
                for k in range(K):
                    skk = S[k, k]
                    old = u[k]
                    w = r[k] - (g[k] - skk * old)
                    if branchless:
                        t = max(w - half_lam, 0.0) + min(w + half_lam, 0.0)
                        new = t * sinv[k] if inv else t / skk
                    else:
                        if w > half_lam:
                            new = (w - half_lam) * sinv[k] if inv else (w - half_lam) / skk
                        elif w < -half_lam:
                            new = (w + half_lam) * sinv[k] if inv else (w + half_lam) / skk
                        else:
                            new = 0.0
                    d = new - old
                    if d != 0.0:
                        u[k] = new
                        Sk = S[k]
                        for l in range(K):
                            g[l] += d * Sk[l]
                    max_delta = max(max_delta, abs(d))
                    max_u = max(max_u, abs(new))
                if max_delta <= tol * max_u:
                    break
            for k in range(K):
                U[i, k] = u[k]
        return tot
    return kern


def obj(R, S, U, lam):
    return float(np.einsum("ij,jk,ik->", U, S, U) - 2 * (R * U).sum() + 2 * lam * np.abs(U).sum())


def problem(argv):
    """``(S, R, U0, half_lam)`` of the probes: K x K Gram S, 20,000 rows of R perturbed by 2 % from those U0
    solves (to 1e-6), λ/2 scaled by ``SCALE``; argv = K DENSITY [SCALE]."""
    K = int(argv[0]); dens = float(argv[1]); scale = float(argv[2]) if len(argv) > 2 else 0.05
    n = 20000
    rng = np.random.default_rng(0)
    V = rng.random((K, 3000)) ** 3
    S = V @ V.T / 3000; S += 0.05 * np.eye(K) * np.trace(S) / K
    Utrue = rng.standard_normal((n, K)) * (rng.random((n, K)) < dens)
    R = Utrue @ S + 0.01 * rng.standard_normal((n, K))
    half = scale * 0.02 * np.abs(R).max()
    U0 = np.zeros((n, K)); lasso_cd_rows(R, S, U0, half, 30, 1e-6)
    print("K", K, "solution density %.3f" % (U0 != 0).mean())
    R2 = R * (1 + 0.02 * rng.standard_normal(R.shape))
    return S, R2, U0, half


def sweep(argv):
    S, R2, U0, half = problem(argv)
    sinv = 1.0 / np.diag(S)
    kerns = {f"inv={a} branchless={b} contract={c}": make(a, b, c) for a in (False,) for b in (False, True) for c in (False, True)}
    for k in kerns.values(): k(R2[:5], S, U0[:5].copy(), half, 3, 1e-4, sinv)
    for rep in range(2):
        Ua = U0.copy(); t = time.process_time(); sw = lasso_cd_rows(R2, S, Ua, half, 3, 1e-4); ta = time.process_time() - t
        print("library %.2f us/sweep" % (ta / sw.sum() * 1e6))
        for name, kern in kerns.items():
            Ub = U0.copy(); t = time.process_time(); tot = kern(R2, S, Ub, half, 3, 1e-4, sinv); tb = time.process_time() - t
            print("  %-28s %.2f us/sweep  (x%.2f)  max|dU| %.1e" % (name, tb / tot * 1e6, ta / sw.sum() / (tb / tot), np.abs(Ua - Ub).max()))


def make_axpy(fm, dtype_is32=False):
    @njit(fastmath=fm)
    def f(S, U, G):
        n, K = U.shape
        for i in range(n):
            g = G[i]
            for k in range(K):
                d = U[i, k]
                if d != 0.0:
                    Sk = S[k]
                    for l in range(K):
                        g[l] += d * Sk[l]
        return 0
    return f

@njit
def f_local(S, U, G):
    # g kept in a local array allocated once (not a view of G)
    n, K = U.shape
    g = np.zeros(K)
    for i in range(n):
        for l in range(K):
            g[l] = 0.0
        for k in range(K):
            d = U[i, k]
            if d != 0.0:
                Sk = S[k]
                for l in range(K):
                    g[l] += d * Sk[l]
        for l in range(K):
            G[i, l] = g[l]
    return 0


def axpy():
    K, n = 200, 20000
    rng = np.random.default_rng(0)
    S = rng.random((K, K)); U = rng.standard_normal((n, K)) * (rng.random((n, K)) < 0.93)
    S32 = S.astype(np.float32); U32 = U.astype(np.float32)
    nz = np.count_nonzero(U)
    for name, f, args in [("plain", make_axpy(False), (S, U)), ("fastmath", make_axpy(True), (S, U)), ("local g", f_local, (S, U)),
                          ("plain f32", make_axpy(False), (S32, U32)), ("fastmath f32", make_axpy(True), (S32, U32))]:
        G = np.zeros((n, K), dtype=args[0].dtype)
        f(args[0], args[1][:5], G[:5])
        best = 1e9
        for r in range(3):
            t = time.process_time(); f(args[0], args[1], G); best = min(best, time.process_time() - t)
        print("%-14s %.2f ns per %d-element axpy, %.3f ns/element" % (name, best / nz * 1e9, K, best / nz / K * 1e9))


@njit(cache=False)
def kern32(R, S, U, half_lam, max_iter, tol):
    """``make(False, False)``'s sweep with every scalar and vector in float32 (a separate copy: with the
    float64 literals of the generic kernel numba would promote the arithmetic back to float64)."""
    n, K = R.shape
    g = np.empty(K, np.float32); u = np.empty(K, np.float32); r = np.empty(K, np.float32)
    h = np.float32(half_lam); zero = np.float32(0.0)
    tot = 0
    for i in range(n):
        for k in range(K):
            u[k] = U[i, k]; r[k] = R[i, k]; g[k] = zero
        for k in range(K):
            if u[k] != zero:
                Sk = S[k]; uk = u[k]
                for l in range(K):
                    g[l] += Sk[l] * uk
        for it in range(max_iter):
            tot += 1
            max_delta = zero; max_u = zero
            for k in range(K):
                skk = S[k, k]
                old = u[k]
                w = r[k] - (g[k] - skk * old)
                if w > h:
                    new = (w - h) / skk
                elif w < -h:
                    new = (w + h) / skk
                else:
                    new = zero
                d = new - old
                if d != zero:
                    u[k] = new
                    Sk = S[k]
                    for l in range(K):
                        g[l] += d * Sk[l]
                max_delta = max(max_delta, abs(d))
                max_u = max(max_u, abs(new))
            if max_delta <= tol * max_u:
                break
        for k in range(K):
            U[i, k] = u[k]
    return tot


def f32(argv):
    S, R2, U0, half = problem(argv)
    R32 = R2.astype(np.float32); S32 = S.astype(np.float32); U032 = U0.astype(np.float32)
    kern32(R32[:5], S32, U032[:5].copy(), half, 3, 1e-4)
    Ustar = U0.copy(); lasso_cd_rows(R2, S, Ustar, half, 200, 1e-10)
    fstar = obj(R2, S, Ustar, half)
    for rep in range(3):
        Ua = U032.copy(); t = time.process_time(); sw = lasso_cd_rows(R32, S, Ua, half, 3, 1e-4); ta = time.process_time() - t
        Ub = U032.copy(); t = time.process_time(); tot = kern32(R32, S32, Ub, half, 3, 1e-4); tb = time.process_time() - t
        print("library (f32 storage, f64 arithmetic) %.2f us/sweep   f32 arithmetic %.2f us/sweep  x%.2f" % (ta / sw.sum() * 1e6, tb / tot * 1e6, (ta / sw.sum()) / (tb / tot)))
    fa = obj(R2, S, Ua.astype(np.float64), half); fb = obj(R2, S, Ub.astype(np.float64), half); f0 = obj(R2, S, U032.astype(np.float64), half)
    print("decrease achieved of F(U0) - F*: f64-arith %.6f  f32-arith %.6f" % ((f0 - fa) / (f0 - fstar), (f0 - fb) / (f0 - fstar)))


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
        sys.exit(print(__doc__))
    if sys.argv[1:2] == ["axpy"]:
        axpy()
    elif sys.argv[1:2] == ["f32"]:
        f32(sys.argv[2:])
    elif sys.argv[1:2] == ["sweep"]:
        sweep(sys.argv[2:])
    else:
        sys.exit(__doc__)
