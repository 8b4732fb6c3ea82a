"""Three re-arrangements of the lasso's coordinate descent against the library's row kernel, on the same
rows (the dense end: the U-step's lasso is 67 % of an iteration at AvgComp 0.59). All three give the
library's result bit for bit; the script checks that and reports CPU time at 1 thread.

* ``blocks``: B rows swept together, each row of S read once per coordinate for the B rows (cache reuse of S).
* ``deferred``: the gradient updates of 8 consecutive coordinates applied in one pass over g (8 rows of S
  read together, g written once), the block's own entries updated at once.
* ``lanes``: L rows in the SIMD lanes — the rows' R, U and g stored transposed (K x L), every coordinate
  updated for the L rows by branch-free selects, g updated by a rank-1 update of the K x L block.

    PYTHONPATH=src python benchmarks/bench_lasso_layouts.py            # K = 200, solution densities 0.75 / 0.15 / 0.02
    PYTHONPATH=src python benchmarks/bench_lasso_layouts.py --k 20

Answer (idle AMD Zen 4): no variant faster than the row kernel
at K = 200 except lanes of 32 rows on the densest rows (1.08x; 0.26-0.37x on sparser ones); blocks
0.82-0.91x, deferred 0.25-0.55x.
"""

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

from rlsi.kernels.lasso import lasso_rows, start_row  # noqa: E402


@njit(nogil=True)
def _soft(w, half_lam, skk, positive):
    if skk <= 0.0:
        return 0.0
    if w > half_lam:
        return (w - half_lam) / skk
    if w < -half_lam and not positive:
        return (w + half_lam) / skk
    return 0.0


@njit(nogil=True)
def _sweeps_blocks(R, S, U, G, half_lam, positive, max_iter, tol, active, sweeps):
    """B rows (U, R, G: B x K) swept together; a coordinate's S row serves every row that changed."""
    B, K = U.shape
    delta = np.zeros(B)
    maxd = np.zeros(B)
    maxu = np.zeros(B)
    for it in range(max_iter):
        n_active = 0
        for b in range(B):
            maxd[b] = 0.0
            maxu[b] = 0.0
            if active[b]:
                n_active += 1
                sweeps[b] = it + 1
        if n_active == 0:
            break
        for k in range(K):
            skk = S[k, k]
            changed = False
            for b in range(B):
                delta[b] = 0.0
                if not active[b]:
                    continue
                old = U[b, k]
                new = _soft(R[b, k] - (G[b, k] - skk * old), half_lam, skk, positive)
                d = new - old
                if d != 0.0:
                    U[b, k] = new
                    delta[b] = d
                    changed = True
                    maxd[b] = max(maxd[b], abs(d))
                maxu[b] = max(maxu[b], abs(new))
            if changed:
                Sk = S[k]
                for b in range(B):
                    d = delta[b]
                    if d != 0.0:
                        Gb = G[b]
                        for l in range(K):
                            Gb[l] += d * Sk[l]
        for b in range(B):
            if active[b] and maxd[b] <= tol * maxu[b]:
                active[b] = False


@njit(nogil=True)
def _flush8(S, g, kb, d, K):
    S0, S1, S2, S3 = S[kb], S[kb + 1], S[kb + 2], S[kb + 3]
    S4, S5, S6, S7 = S[kb + 4], S[kb + 5], S[kb + 6], S[kb + 7]
    for l in range(K):
        if kb <= l < kb + 8:
            continue
        t = g[l]
        t += d[0] * S0[l]
        t += d[1] * S1[l]
        t += d[2] * S2[l]
        t += d[3] * S3[l]
        t += d[4] * S4[l]
        t += d[5] * S5[l]
        t += d[6] * S6[l]
        t += d[7] * S7[l]
        g[l] = t


@njit(nogil=True)
def _sweeps_deferred(r, S, u, g, half_lam, positive, max_iter, tol, d):
    K = r.shape[0]
    n_sweeps = 0
    for it in range(max_iter):
        n_sweeps = it + 1
        max_delta = 0.0
        max_u = 0.0
        for kb in range(0, K, 8):
            ke = min(K, kb + 8)
            n_changed = 0
            for k in range(kb, ke):
                old = u[k]
                new = _soft(r[k] - (g[k] - S[k, k] * old), half_lam, S[k, k], positive)
                delta = new - old
                d[k - kb] = delta
                if delta != 0.0:
                    u[k] = new
                    n_changed += 1
                    Sk = S[k]
                    for l in range(kb, ke):
                        g[l] += delta * Sk[l]
                    max_delta = max(max_delta, abs(delta))
                max_u = max(max_u, abs(new))
            if n_changed == 0:
                continue
            if ke - kb == 8 and n_changed > 1:
                _flush8(S, g, kb, d, K)
            else:
                for k in range(kb, ke):
                    if d[k - kb] != 0.0:
                        Sk = S[k]
                        for l in range(K):
                            if l < kb or l >= ke:
                                g[l] += d[k - kb] * Sk[l]
        if max_delta <= tol * max_u:
            break
    return n_sweeps


@njit(nogil=True)
def _sweeps_lanes(R, S, U, G, half_lam, positive, max_iter, tol, n_lanes, sweeps):
    """R, U, G: K x L (row b of the block in lane b); flat indexing keeps the lane loops vectorisable."""
    K = S.shape[0]
    nl = U.shape[1]
    Gf, Uf, Rf = G.ravel(), U.ravel(), R.ravel()
    act = np.zeros(nl)
    act[:n_lanes] = 1.0
    D = np.zeros(nl)
    N = np.zeros(nl)
    maxd = np.zeros(nl)
    maxu = np.zeros(nl)
    for it in range(max_iter):
        for b in range(nl):
            maxd[b] = 0.0
            if act[b] != 0.0:
                sweeps[b] = it + 1
        for k in range(K):
            skk = S[k, k]
            o = k * nl
            for b in range(nl):
                old = Uf[o + b]
                w = Rf[o + b] - (Gf[o + b] - skk * old)
                a = (w - half_lam) / skk
                c = (w + half_lam) / skk
                new = a if w > half_lam else (c if (w < -half_lam and not positive) else 0.0)
                new = new if skk > 0.0 else 0.0
                N[b] = new if act[b] != 0.0 else old
            nz = 0
            for b in range(nl):
                dd = N[b] - Uf[o + b]
                D[b] = dd
                nz += dd != 0.0
            for b in range(nl):
                Uf[o + b] = N[b]
            for b in range(nl):
                maxd[b] = max(maxd[b], abs(D[b]))
            if nz > 0:
                for l in range(K):
                    s = S[k, l]
                    ol = l * nl
                    for b in range(nl):
                        Gf[ol + b] += D[b] * s
        maxu[:] = 0.0
        for k in range(K):
            for b in range(nl):
                maxu[b] = max(maxu[b], abs(Uf[k * nl + b]))
        n_act = 0
        for b in range(nl):
            if act[b] != 0.0 and maxd[b] <= tol * maxu[b]:
                act[b] = 0.0
            n_act += act[b] != 0.0
        if n_act == 0:
            break


@njit(parallel=True)
def solve(R, S, U, Uin, half_lam, max_iter, tol, positive, variant, B):
    """The library's row loop (warm start, start_row's skip of rows optimal at zero), the rows' sweeps by
    ``variant`` (0 blocks of B rows, 1 deferred, 2 lanes of B rows)."""
    n, K = R.shape
    sweeps = np.zeros(n, dtype=np.int32)
    chunk = 64
    for c in prange((n + chunk - 1) // chunk):
        u, r, g, d = np.empty(K), np.empty(K), np.empty(K), np.zeros(8)
        Rb, Ub, Gb = np.zeros((B, K)), np.zeros((B, K)), np.zeros((B, K))
        Rt, Ut, Gt = np.zeros((K, B)), np.zeros((K, B)), np.zeros((K, B))
        active = np.zeros(B, dtype=np.bool_)
        sw = np.zeros(B, dtype=np.int32)
        idx = np.empty(B, dtype=np.int64)
        nb = 0
        end = min(n, (c + 1) * chunk)
        for i in range(c * chunk, end):
            for k in range(K):
                u[k] = Uin[i, k]
                r[k] = R[i, k]
            if not start_row(r, S, u, g, half_lam, positive):
                U[i, :] = 0.0
            elif variant == 1:
                sweeps[i] = _sweeps_deferred(r, S, u, g, half_lam, positive, max_iter, tol, d)
                U[i, :] = u
            else:
                Rb[nb], Ub[nb], Gb[nb] = r, u, g
                idx[nb] = i
                nb += 1
            if nb > 0 and (nb == B or i == end - 1):
                Rb[nb:], Ub[nb:], Gb[nb:] = 0.0, 0.0, 0.0
                if variant == 0:
                    active[:] = False
                    active[:nb] = True
                    _sweeps_blocks(Rb, S, Ub, Gb, half_lam, positive, max_iter, tol, active, sw)
                else:
                    Rt[:, :], Ut[:, :], Gt[:, :] = Rb.T, Ub.T, Gb.T
                    _sweeps_lanes(Rt, S, Ut, Gt, half_lam, positive, max_iter, tol, nb, sw)
                    Ub[:, :] = Ut.T
                for b in range(nb):
                    sweeps[idx[b]] = sw[b]
                    U[idx[b], :] = Ub[b]
                nb = 0
    return sweeps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=200)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--cases", default="0.6:0.1,0.2:0.3,0.05:1.0", help="planted density:λ pairs")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    numba.set_num_threads(1)
    rng = np.random.default_rng(0)
    K, n = a.k, a.rows
    V = np.abs(rng.standard_normal((5000, K))) + 0.1 * rng.standard_normal((5000, K))
    S = V.T @ V / 5000  # correlated topics, as the Gram of non-negative-ish document vectors
    for case in a.cases.split(","):
        dens, lam = (float(x) for x in case.split(":"))
        U_true = rng.standard_normal((n, K)) * (rng.random((n, K)) < dens)
        R = U_true @ S + 0.05 * rng.standard_normal((n, K))
        U0, _ = lasso_rows(R, S, None, lam, max_iter=100, tol=1e-6)
        Uw = U0 + 0.01 * rng.standard_normal(U0.shape) * (U0 != 0)  # a warm start near the solution
        ref, ref_sweeps = lasso_rows(R, S, Uw, lam, max_iter=3, tol=1e-4)

        def best(f):
            f()
            ts = []
            for _ in range(a.repeats):
                t = time.process_time()
                f()
                ts.append(time.process_time() - t)
            return min(ts)

        t0 = best(lambda: lasso_rows(R, S, Uw, lam, max_iter=3, tol=1e-4))
        print(f"K={K} solution density {(U0 != 0).mean():.3f}: library row kernel {t0:.3f} s", flush=True)
        for name, variant, B in [("blocks", 0, 8), ("deferred", 1, 8), ("lanes", 2, 8), ("lanes", 2, 16),
                                 ("lanes", 2, 32)]:
            U = np.empty_like(R)
            t = best(lambda: solve(R, S, U, Uw, 0.5 * lam, 3, 1e-4, False, variant, B))
            sw = solve(R, S, U, Uw, 0.5 * lam, 3, 1e-4, False, variant, B)
            same = np.array_equal(U, ref) and np.array_equal(sw, ref_sweeps)
            print(f"  {name:8s} B={B:2d}: {t:.3f} s ({t0 / t:.2f}x of the library), bit-identical {same}", flush=True)


if __name__ == "__main__":
    main()
