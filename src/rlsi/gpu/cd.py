"""Cyclic coordinate descent for many lasso rows at once, blocked over topics (the device U-step).

Every row ``u`` (length K) of a block solves ``min_u uᵀSu − 2rᵀu + λ‖u‖₁`` (TOIS Algorithm 2) with the same
``S``. The host kernel (:func:`rlsi.kernels.lasso.lasso_cd_row`) runs the coordinates of one row in order,
keeping ``g = S u``; here all rows advance together, one block of ``b`` topics at a time:

* the block's part of ``g`` for every row, ``G = S[blk, :] Uᵀ`` (b x n), is one GEMM with the current U;
* the b coordinates of the block are then updated in order, each over all n rows at once
  (``w = r_k − (g_k − s_kk u_k)``, soft threshold at λ/2, divide by ``s_kk``), and each change is passed on
  to the block's later coordinates by a rank-1 update of ``G``.

That is the host kernel's arithmetic in the host kernel's order — coordinate k of a row sees every earlier
coordinate's new value — so it has the same iterates and the same fixed point, up to rounding (``g`` is
re-formed by a GEMM per block instead of accumulated). A sweep costs K/b GEMMs of n x K x b and K small
vector updates over n rows, instead of n·K scalar loops.

The host kernel's per-row rules are kept: a row stops after the sweep whose largest change is
``<= tol · max|u|`` (its own sweep count; rows still running are gathered each sweep, the stopped ones are
not touched again), or when its budget of multiply-adds ``max_work`` is spent (a sweep counts ``K·(1 +
changes)``); a row whose warm start is zero and whose ``max|r_k| <= λ/2`` (only ``r_k > λ/2`` with
``positive``) is optimal at zero and never swept. Dead topics (``s_kk = 0``) get weight 0 and are never divided
by. The host kernel's support solves (exact solves on a stable support, taken only by uncapped solves with at
least ``NEWTON_MIN_SWEEPS`` sweeps) are not done here: such U-steps reach the same minimiser to ``tol`` by
plain sweeps, along different iterates.

Arithmetic is in the backend's dtype (float32 by default on a card; the host kernel computes in float64).
"""

from __future__ import annotations

import numpy as np

#: Topics per block: one GEMM per block and sweep; b(b−1)/2 rank-1 updates of n rows inside it.
BLOCK = 32


def start_mask(be, R, U0, half_lam, positive):
    """Rows that need coordinate descent: a non-zero warm start, or some ``|r_k| > λ/2`` (``r_k > λ/2`` with
    ``positive``). The others are optimal at zero (the KKT conditions hold there)."""
    xp = be.xp
    big = R > half_lam
    if not positive:
        big |= R < -half_lam
    need = xp.any(big, axis=1)
    if U0 is not None:
        need |= xp.any(U0 != 0, axis=1)
    return need


def solve_rows(be, R, S, U0, half_lam, *, max_iter, tol, positive=False, max_work=None, block=BLOCK):
    """Solve every row of R (n x K, device) for the Gram matrix ``S`` (K x K, host float64).

    U0 : (n, K) device warm start, or None (zeros, as Algorithm 2). Returns ``(U, sweeps)``: U (n x K, the
    backend's dtype, column-major) and the sweeps of each row (int32 device array, 0 for rows optimal at
    their start). ``max_work``: each row's budget of multiply-adds (None: none).
    """
    xp = be.xp
    n, K = R.shape
    dt = be.dtype
    R = xp.asarray(R, dtype=dt)
    U = xp.zeros((n, K), dtype=dt, order="F") if U0 is None else xp.array(U0, dtype=dt, order="F")
    sweeps = xp.zeros(n, dtype=xp.int32)
    if n == 0 or K == 0:
        return U, sweeps
    S = np.asarray(S, dtype=np.float64)
    Sd = xp.asarray(S, dtype=dt)
    diag = np.diag(S)
    half = float(half_lam)
    active = xp.flatnonzero(start_mask(be, R, U0, half, positive))
    work = xp.zeros(n, dtype=xp.float64) if max_work is not None and np.isfinite(max_work) else None
    for _ in range(int(max_iter)):
        na = int(active.shape[0])
        if na == 0:
            break
        Ua = xp.asfortranarray(U[active])
        Ra = xp.asfortranarray(R[active])
        max_delta = xp.zeros(na, dtype=dt)
        max_u = xp.zeros(na, dtype=dt)
        changes = xp.zeros(na, dtype=xp.int32) if work is not None else None
        for s in range(0, K, block):
            e = min(K, s + block)
            Gt = Sd[s:e] @ Ua.T  # (b, na): row j is g_{s+j} of every row, with the current U
            for j in range(e - s):
                k = s + j
                old = Ua[:, k]
                skk = float(diag[k])
                if skk <= 0.0:  # dead topic: weight 0, never divided by
                    new = xp.zeros_like(old)
                else:
                    w = Ra[:, k] - (Gt[j] - skk * old)
                    if positive:
                        new = xp.maximum(w - half, 0) / skk
                    else:
                        new = (xp.maximum(w - half, 0) + xp.minimum(w + half, 0)) / skk
                delta = new - old
                Ua[:, k] = new
                if j + 1 < e - s:  # the block's later coordinates see this change
                    Gt[j + 1:] += Sd[k, k + 1:e][:, None] * delta[None, :]
                xp.maximum(max_delta, xp.abs(delta), out=max_delta)
                xp.maximum(max_u, xp.abs(new), out=max_u)
                if changes is not None:
                    changes += delta != 0
        U[active] = Ua
        sweeps[active] += 1
        stop = max_delta <= tol * max_u
        if work is not None:
            work[active] += K * (1.0 + changes)
            stop |= work[active] >= max_work
        active = active[~stop]
    return U, sweeps


def solve_penalty(be, pen, prepared, R, U0, lam, *, max_iter, tol, max_work=None, block=BLOCK):
    """Every row of R for a :class:`rlsi.models.penalties.Penalty` given its ``prepared`` matrix (host, from
    ``pen.prepare(S, lam)``): the closed form ``R Σ`` for "l2", coordinate descent otherwise. Returns
    ``(U, sweeps)`` as :func:`solve_rows` (sweeps None for the closed form)."""
    if pen.norm == "l2" and not pen.nonneg:
        return R @ be.asarray(prepared), None
    half = lam / 2.0 if pen.norm == "l1" else 0.0
    return solve_rows(be, R, prepared, U0, half, max_iter=max_iter, tol=tol, positive=pen.nonneg,
                      max_work=max_work, block=block)
