"""Group RLSI and Group NMF as printed (Wang et al., SIGIR 2012), in plain numpy, paper orientation.

``Ds[p]`` is the terms x documents matrix of class p (M x Np, dense); U0 is M x Ks, Up is M x Kc,
Vp = [Hp; Wp] is (Ks + Kc) x Np. Algorithm 1 with Algorithms 2–4: ``Up ← 0`` before the first iteration
(line 2), each lasso row started from ``ū_m ← 0`` (Algorithms 2–3, line 4) and solved by the coordinate
update of the paper (the TOIS oracle's :func:`rlsi.oracle.paper._lasso_cd_paper`), Vp by the closed form of
Algorithm 4. Algorithm 5 (GNMF) with the same zero-denominator rule as the fast code (eps of float32).
"""

from __future__ import annotations

import numpy as np

from .paper import _lasso_cd_paper


def _lasso_rows(S, R, lam, max_iter, tol):
    return np.array([_lasso_cd_paper(S, r, lam, max_iter, tol) for r in R]).reshape(R.shape)


def update_u0(Ds, Us, Vs, Ks, lam1, max_iter=1000, tol=1e-12):
    """Algorithm 2: S0 = Σ HpHpᵀ, R0 = Σ DpHpᵀ − Σ UpWpHpᵀ, one lasso per term row."""
    S0 = sum(V[:Ks] @ V[:Ks].T for V in Vs)
    R0 = sum(D @ V[:Ks].T for D, V in zip(Ds, Vs)) - sum(U @ V[Ks:] @ V[:Ks].T for U, V in zip(Us, Vs))
    return _lasso_rows(S0, R0, lam1, max_iter, tol)


def update_up(D, U0, V, Ks, lam1, max_iter=1000, tol=1e-12):
    """Algorithm 3: Sp = WpWpᵀ, Rp = DpWpᵀ − U0HpWpᵀ."""
    H, W = V[:Ks], V[Ks:]
    return _lasso_rows(W @ W.T, D @ W.T - U0 @ H @ W.T, lam1, max_iter, tol)


def update_vp(D, U0, Up, lam2):
    """Algorithm 4: Vp = (ŨpᵀŨp + λ₂I)⁻¹ ŨpᵀDp."""
    U = np.hstack([U0, Up])
    return np.linalg.inv(U.T @ U + lam2 * np.eye(U.shape[1])) @ (U.T @ D)


def grlsi_objective(Ds, U0, Us, Vs, lam1_shared, lam1_class, lam2):
    """Eq. (3) evaluated directly (``lam1_class``: one value per class)."""
    total = lam1_shared * np.abs(U0).sum()
    for p, (D, U, V) in enumerate(zip(Ds, Us, Vs)):
        total += np.square(D - np.hstack([U0, U]) @ V).sum() + lam1_class[p] * np.abs(U).sum()
        total += lam2 * np.square(V).sum()
    return float(total)


def group_rlsi(Ds, V0s, Ks, lam1_shared, lam1_class, lam2, n_iter, max_iter=1000, tol=1e-12):
    """Algorithm 1 from given V0s. Returns (U0, [Up], [Vp], objectives per iteration)."""
    Ds = [np.asarray(D, dtype=np.float64) for D in Ds]
    Vs = [np.asarray(V, dtype=np.float64) for V in V0s]
    M = Ds[0].shape[0]
    Us = [np.zeros((M, V.shape[0] - Ks)) for V in Vs]
    U0 = np.zeros((M, Ks))
    objectives = []
    for _ in range(n_iter):
        U0 = update_u0(Ds, Us, Vs, Ks, lam1_shared, max_iter, tol)
        for p in range(len(Ds)):
            Us[p] = update_up(Ds[p], U0, Vs[p], Ks, lam1_class[p], max_iter, tol)
            Vs[p] = update_vp(Ds[p], U0, Us[p], lam2)
        objectives.append(grlsi_objective(Ds, U0, Us, Vs, lam1_shared, lam1_class, lam2))
    return U0, Us, Vs, objectives


def _mult(A, num, den):
    den = np.where(den == 0, np.finfo(np.float32).eps, den)
    return A * num / den


def group_nmf(Ds, U0, Us, Vs, n_iter):
    """Algorithm 5 from given factors (Vs: (Ks + Kc) x Np). Returns (U0, Us, Vs, objectives)."""
    Ks = U0.shape[1]
    U0, Us, Vs = U0.copy(), [U.copy() for U in Us], [V.copy() for V in Vs]
    objectives = []
    for _ in range(n_iter):
        num = sum(D @ V[:Ks].T for D, V in zip(Ds, Vs))
        den = sum(U0 @ V[:Ks] @ V[:Ks].T + U @ V[Ks:] @ V[:Ks].T for U, V in zip(Us, Vs))
        U0 = _mult(U0, num, den)
        for p, D in enumerate(Ds):
            H, W = Vs[p][:Ks], Vs[p][Ks:]
            Us[p] = _mult(Us[p], D @ W.T, Us[p] @ W @ W.T + U0 @ H @ W.T)
            U = np.hstack([U0, Us[p]])
            Vs[p] = _mult(Vs[p], U.T @ D, U.T @ U @ Vs[p])
        objectives.append(float(sum(np.square(D - np.hstack([U0, U]) @ V).sum()
                                    for D, U, V in zip(Ds, Us, Vs))))
    return U0, Us, Vs, objectives
