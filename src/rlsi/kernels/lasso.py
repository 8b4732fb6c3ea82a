"""Coordinate-descent lasso on Gram (covariance) statistics, in numba.

Every ℓ1 sub-problem of RLSI has the same form. For one row ``r`` (length K) of ``R = D Vᵀ`` and the
Gram matrix ``S = V Vᵀ`` (K x K), the term-topic row ``u`` solves (TOIS paper Eq. 2, Algorithm 2)::

    min_u  ‖d̄ - Vᵀu‖²  + λ ‖u‖₁   ==   min_u  uᵀ S u - 2 rᵀ u + λ ‖u‖₁   (+ const)

and the paper's coordinate update is ``u_k = soft(r_k - Σ_{l≠k} s_kl u_l, λ/2) / s_kk``.

The same kernel solves the document side when documents carry the ℓ1 penalty (``S = UᵀU``, ``r = φ_n``)
and the online U-update (``S = S_t``, ``R = R_t``). With ``positive=True`` it solves the non-negative
lasso (``u ≥ 0``; the coordinate update clips at zero): NMF-like models and sparse codes use it, and with
``λ = 0`` and ``S + λ₂I`` in place of S it is non-negative ridge regression.

Speed: the paper recomputes ``Σ_{l≠k} s_kl u_l`` for every coordinate (K² per sweep). We keep
``g = S u`` and touch column ``S[:, k]`` only when ``u_k`` changes, so a sweep costs ``K·(1 + changes)``
— with sparse topics tens of times less — and reaches the same minimiser (the problem is strictly
convex whenever ``S`` is positive definite). Uncapped solves (``max_iter >= NEWTON_MIN_SWEEPS``, e.g.
the cold first U-step) add exact solves on the current support once it stops changing (see
:func:`lasso_cd_row`), where plain sweeps crawl on correlated topics. Rows are independent and solved in
parallel; each row's result does not depend on the number of threads.

Dead topics: ``s_kk = 0`` means topic k explains nothing; the coordinate is set to 0 and never divided
by. Arithmetic is in float64 whatever the storage dtype, so float32 storage loses no solver accuracy.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange



#: Support solves (see :func:`lasso_cd_row`) only when a row may take at least this many sweeps: the capped,
#: warm-started U-steps of a fit (``topic_sweeps``, a few sweeps) stay plain coordinate descent.
NEWTON_MIN_SWEEPS = 10
#: Cost of one multiply-add of the support solve's Cholesky loops in units of one multiply-add of a sweep's
#: gradient update (measured at K = 200, support 136, 1 thread: 360 µs for a³/3 = 0.84M against 6.4 µs per
#: sweep of 27k): what the cost rule of the support solves (:func:`_cd_row`) compares.
SOLVE_WEIGHT = 2.0


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _support_solve(r, S, u, half_lam, idx, M, z):
    """``z[:a] = S_AA⁻¹ (r_A − λ/2 s_A)`` for the support A of u (its indices into ``idx[:a]``, signs s),
    by Cholesky ``S_AA = LLᵀ`` in the workspace M (row-oriented: each inner loop is a contiguous dot
    product, whose sums may be reassociated to vectorise: z is a step the caller checks, never the answer
    itself); returns a, or −1 when S_AA is numerically singular."""
    K = u.shape[0]
    a = 0
    for k in range(K):
        if u[k] != 0.0:
            idx[a] = k
            a += 1
    for i in range(a):
        Si = S[idx[i]]
        Mi = M[i]
        for j in range(i + 1):
            Mi[j] = Si[idx[j]]
        z[i] = r[idx[i]] - (half_lam if u[idx[i]] > 0.0 else -half_lam)
    for j in range(a):
        Mj = M[j]
        d = Mj[j]
        for p in range(j):
            d -= Mj[p] * Mj[p]
        if not d > 1e-12 * S[idx[j], idx[j]]:  # (also NaN) S_AA numerically singular: leave it to CD
            return -1
        d = np.sqrt(d)
        Mj[j] = d
        for i in range(j + 1, a):
            Mi = M[i]
            v = Mi[j]
            for p in range(j):
                v -= Mi[p] * Mj[p]
            Mi[j] = v / d
    for i in range(a):  # L y = b
        Mi = M[i]
        v = z[i]
        for p in range(i):
            v -= Mi[p] * z[p]
        z[i] = v / Mi[i]
    for i in range(a - 1, -1, -1):  # Lᵀ x = y, by columns of Lᵀ = rows of L (contiguous)
        Mi = M[i]
        v = z[i] / Mi[i]
        z[i] = v
        for p in range(i):
            z[p] -= Mi[p] * v
    return a


@njit(cache=True, nogil=True)
def _objective(r, u, g, half_lam):
    """``uᵀSu − 2rᵀu + λ‖u‖₁`` from ``g = S u``."""
    f = 0.0
    for k in range(u.shape[0]):
        f += u[k] * (g[k] - 2.0 * r[k]) + 2.0 * half_lam * abs(u[k])
    return f


@njit(cache=True, nogil=True)
def _move(S, u, g, k, new):
    """``u[k] = new``, keeping ``g = S u``."""
    delta = new - u[k]
    if delta != 0.0:
        u[k] = new
        Sk = S[k]
        for l in range(g.shape[0]):
            g[l] += delta * Sk[l]


@njit(cache=True, nogil=True)
def _support_step(r, S, u, g, half_lam, positive, idx, M, z, u_old, g_old):
    """One step of the lasso's smooth problem on the current support and signs of ``u``.

    On the orthant of u's signs, with support A, the objective is the quadratic
    ``u_Aᵀ S_AA u_A − 2 (r_A − λ/2 s_A)ᵀ u_A``, minimised at ``z = S_AA⁻¹ (r_A − λ/2 s_A)``. If z keeps
    every sign it is the lasso solution when the zero coordinates satisfy their optimality conditions
    (which the next sweep checks). The step taken is z, or else z with its sign-changed coordinates set to
    zero, whichever first lowers the objective (checked: the solve's sums are reassociated and a sign
    change leaves the orthant), else the segment from u
    towards z up to the first sign change (feature-sign search: a convex quadratic along a segment
    towards its minimiser only decreases). So the step never increases the objective. ``g = S u`` is
    kept; u_old, g_old: (K,) workspaces.
    """
    a = _support_solve(r, S, u, half_lam, idx, M, z)
    if a <= 0:
        return
    t = 1.0
    stop = -1
    for i in range(a):
        ui = u[idx[i]]
        if (ui > 0.0 and z[i] <= 0.0) or (ui < 0.0 and z[i] >= 0.0):
            ti = ui / (ui - z[i])
            if ti < t:
                t = ti
                stop = i
    f_old = _objective(r, u, g, half_lam)
    u_old[:] = u
    g_old[:] = g
    # z itself (signs changed where it says so, when positive allows), then z with the sign-changed
    # coordinates set to zero: one of them usually settles the support in one solve
    for trial in range(2 if stop >= 0 else 1):
        for i in range(a):
            k = idx[i]
            keep = (z[i] > 0.0) == (u_old[k] > 0.0) and z[i] != 0.0
            _move(S, u, g, k, z[i] if keep or (trial == 0 and not (positive and z[i] < 0.0)) else 0.0)
        if _objective(r, u, g, half_lam) <= f_old:
            return
        u[:] = u_old
        g[:] = g_old
    if stop < 0:  # a full step that does not decrease the objective: rounding; leave it to CD
        return
    for i in range(a):
        k = idx[i]
        _move(S, u, g, k, 0.0 if i == stop else u[k] + t * (z[i] - u[k]))


@njit(cache=True, nogil=True)
def lasso_cd_row(r, S, u, g, half_lam, max_iter, tol, positive=False, max_work=np.inf):
    """Solve one lasso row in place by cyclic coordinate descent with covariance updates.

    Parameters
    ----------
    r : (K,) float64 — the row of R.
    S : (K, K) float64 — Gram matrix, symmetric positive semi-definite.
    u : (K,) float64 — warm start on entry, solution on exit.
    g : (K,) float64 — workspace; must equal ``S @ u`` on entry, equals it on exit.
    half_lam : float — λ/2 (the soft threshold).
    max_iter : int — maximum number of full sweeps.
    tol : float — stop when the largest coordinate change of a sweep is ``<= tol * max|u|``.
    positive : bool — constrain ``u ≥ 0`` (the minimiser of the 1-D problem over [0, ∞)).

    Support solves. Coordinate descent finds the support and signs of the solution in a few sweeps but
    then converges on it only linearly, slowly when the topics are correlated: from a zero start with
    dense solutions (most weights non-zero) 44 % of the rows hit 100 sweeps without meeting ``tol``.
    With ``max_iter >= NEWTON_MIN_SWEEPS``, two consecutive
    sweeps that changed no coordinate's sign or zero pattern are followed by :func:`_support_step` (a
    solve of the smooth problem on that support; a step that never increases the objective), and the
    sweeps go on from there: the stopping rule and the minimiser are those of plain coordinate descent,
    reached in a few sweeps (there: 14–18 instead of 77, none capped).

    Cost rule. A support solve costs about ``SOLVE_WEIGHT · a³/3`` (a: support size) against ``K·(1 + changes)``
    per sweep; it is taken only when the sweeps it can save — the fewer of those left under ``max_iter`` (and
    ``max_work``) and of those the sweeps' own linear rate predicts to reach ``tol`` — would cost more. With
    dense rows (a ≈ K) a solve is worth tens of sweeps, and a row about to stop does not pay for one.

    max_work : float — a budget of multiply-adds (sweeps count ``K·(1 + changes)``, support solves their
        cost above): the row stops after the sweep that exceeds it, as if capped (inf: no budget). The cold
        first U-step of a fit uses it (see :func:`rlsi.models.rlsi_policy.cold_work`), so that rows with dense
        solutions stop after about as much work as a few dense sweeps while sparse rows are solved exactly.

    Returns the number of sweeps done.
    """
    K = r.shape[0]
    return _cd_row(r, S, u, g, half_lam, max_iter, tol, positive, np.empty(K, dtype=np.int64),
                   np.empty((K, K)), np.empty((3, K)), max_work)


# inline="always" (here and on start_row): both run once per row inside the parallel row loops, and a call
# passes each array argument with a reference-count update (about 10 % of an online U-step at K = 20)
@njit(cache=True, nogil=True, inline="always")
def _cd_row(r, S, u, g, half_lam, max_iter, tol, positive, idx, M, work, max_work=np.inf):
    """:func:`lasso_cd_row` with its support-solve workspaces given (idx (K,) int64, M (K, K), work (3, K))."""
    K = r.shape[0]
    n_sweeps = 0
    newton = max_iter >= NEWTON_MIN_SWEEPS
    pattern = True
    done = 0.0  # multiply-adds spent (sweeps and support solves), against max_work
    prev_delta = np.inf
    for it in range(max_iter):
        n_sweeps = it + 1
        max_delta = 0.0
        max_u = 0.0
        changes = 0
        support = 0
        stable = not pattern  # the previous sweep kept the zero/sign pattern
        pattern = False  # does this sweep change a coordinate's sign or zero pattern?
        for k in range(K):
            skk = S[k, k]
            old = u[k]
            if skk <= 0.0:
                new = 0.0
            else:
                w = r[k] - (g[k] - skk * old)
                if w > half_lam:
                    new = (w - half_lam) / skk
                elif w < -half_lam and not positive:
                    new = (w + half_lam) / skk
                else:
                    new = 0.0
            delta = new - old
            if delta != 0.0:
                u[k] = new
                changes += 1
                Sk = S[k]  # S is symmetric: row k is column k, and contiguous
                for l in range(K):
                    g[l] += delta * Sk[l]
                ad = abs(delta)
                if ad > max_delta:
                    max_delta = ad
                if (old > 0.0) != (new > 0.0) or (old < 0.0) != (new < 0.0):
                    pattern = True
            if new != 0.0:
                support += 1
            an = abs(new)
            if an > max_u:
                max_u = an
        sweep_cost = K * (1.0 + changes)
        done += sweep_cost
        if max_delta <= tol * max_u or done >= max_work:
            break
        if newton and stable and not pattern and it + 1 < max_iter:
            # the cost rule: sweeps this solve may save (left under the caps, and predicted by the linear
            # rate of the last two sweeps) against the solve's own cost
            a = float(support)
            solve_cost = SOLVE_WEIGHT * a * a * a / 3.0 + a * (a + 1.0) / 2.0 + 2.0 * K * (a + 1.0)
            left = min(float(max_iter - it - 1), (max_work - done) / sweep_cost)
            rate = max_delta / prev_delta
            if 0.0 < rate < 1.0 and tol * max_u > 0.0:
                left = min(left, np.log(tol * max_u / max_delta) / np.log(rate))
            if left * sweep_cost > solve_cost:
                _support_step(r, S, u, g, half_lam, positive, idx, M, work[0], work[1], work[2])
                done += solve_cost
        prev_delta = max_delta
    return n_sweeps


def lasso_cd_rows(R, S, U, half_lam, max_iter, tol, positive=False, U0=None, max_work=np.inf):
    """Solve ``len(R)`` independent lasso rows in parallel into ``U`` (rows x K).

    The warm start is read from ``U0`` (rows x K, any float dtype) when given, else from ``U`` itself;
    ``U0`` with no rows (shape (0, K)) is the zero start. Reading it here, row by row in the parallel
    loop, spares the caller a serial copy of the warm start into the output.
    ``R``, ``U`` and ``U0`` may be float32 or float64; work is done in float64. A row whose warm start is
    zero and whose ``max |r_k| <= λ/2`` is already optimal (the KKT conditions hold at 0) and is skipped
    (written as zeros), which is what makes rare terms cheap (with ``positive`` only ``r_k > λ/2`` can move
    a coordinate). Rows are processed in chunks so that each chunk allocates its scratch vectors once.
    ``max_work``: each row's budget of multiply-adds (see :func:`lasso_cd_row`).
    Returns the number of sweeps per row (int32; 0 for skipped rows).
    """
    return _lasso_cd_rows(R, S, U, U if U0 is None else U0, half_lam, max_iter, tol, positive, float(max_work))


@njit(cache=True, nogil=True, inline="always")
def start_row(r, S, u, g, half_lam, positive):
    """Prepare one row for :func:`lasso_cd_row`: False when the warm start ``u`` is zero and
    ``max|r_k| <= λ/2`` (only ``r_k > λ/2`` with ``positive``) — the KKT conditions hold at zero, the row is
    optimal and nothing needs computing (what makes rare terms cheap); else ``g = S u`` over the non-zero
    weights of u, and True."""
    K = r.shape[0]
    nonzero = False
    big = False
    for k in range(K):
        if u[k] != 0.0:
            nonzero = True
        if r[k] > half_lam or (r[k] < -half_lam and not positive):
            big = True
    if not nonzero and not big:
        return False
    for k in range(K):
        g[k] = 0.0
    if nonzero:
        for k in range(K):
            if u[k] != 0.0:
                Sk = S[k]
                for l in range(K):
                    g[l] += Sk[l] * u[k]
    return True


@njit(cache=True, parallel=True)
def _lasso_cd_rows(R, S, U, Uin, half_lam, max_iter, tol, positive, max_work):
    n, K = R.shape
    sweeps = np.zeros(n, dtype=np.int32)
    zero_start = Uin.shape[0] == 0
    chunk = 64
    n_chunks = (n + chunk - 1) // chunk
    for c in prange(n_chunks):
        u = np.empty(K, dtype=np.float64)
        r = np.empty(K, dtype=np.float64)
        g = np.empty(K, dtype=np.float64)
        idx = np.empty(K, dtype=np.int64)  # support-solve workspaces (used by uncapped solves only)
        M = np.empty((K, K), dtype=np.float64)
        work = np.empty((3, K), dtype=np.float64)
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            for k in range(K):
                u[k] = 0.0 if zero_start else Uin[i, k]
                r[k] = R[i, k]
            if not start_row(r, S, u, g, half_lam, positive):
                for k in range(K):
                    U[i, k] = 0.0
                continue
            sweeps[i] = _cd_row(r, S, u, g, half_lam, max_iter, tol, positive, idx, M, work, max_work)
            for k in range(K):
                U[i, k] = u[k]
    return sweeps


def lasso_rows(R, S, U_init, lam, *, max_iter=100, tol=1e-6, positive=False, out=None, overwrite_init=False,
               max_work=None):
    """Solve ``min_u uᵀSu - 2 rᵀu + lam‖u‖₁`` (subject to ``u ≥ 0`` if ``positive``) for every row r of R.

    R : (n, K) float32/float64; S : (K, K); U_init : (n, K) warm start or None (zeros, as Algorithm 2);
    a warm start with negative entries is valid for ``positive`` (the first sweep clips them).
    out : optional C-contiguous (n, K) array of R's dtype that receives the solution (the warm start is
        read by the parallel kernel, never copied into it first), so callers can solve straight into their
        own storage.
    overwrite_init : the caller gives up U_init (a fresh C-contiguous array of R's dtype): it is solved in
        place instead of copied.
    max_work : None, or each row's budget of multiply-adds (see :func:`lasso_cd_row`; None: no budget).
    Returns (U, sweeps) with U of R's dtype, shape (n, K).
    """
    R = np.ascontiguousarray(R)
    S = np.ascontiguousarray(S, dtype=np.float64)
    half = 0.5 * float(lam)
    if U_init is None:
        U0 = np.zeros((0, R.shape[1]), dtype=R.dtype)
    else:
        # C order, so that a strided or Fortran-ordered warm start (a column slice, a solve's transpose)
        # costs one copy here instead of a numba compilation of its own for every such layout
        U0 = np.ascontiguousarray(U_init)
        if U0.shape != R.shape:
            raise ValueError(f"U_init has shape {U0.shape}, expected {R.shape}")
    if out is not None:
        U = out
    elif (U_init is not None and overwrite_init and isinstance(U_init, np.ndarray) and U_init.dtype == R.dtype
          and U_init.flags.c_contiguous and U_init.flags.writeable):
        U = U_init
    else:
        U = np.empty_like(R)
    sweeps = lasso_cd_rows(R, S, U, half, int(max_iter), float(tol), bool(positive), U0,
                           np.inf if max_work is None else float(max_work))
    return U, sweeps
