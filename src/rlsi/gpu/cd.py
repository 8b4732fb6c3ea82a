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

Kernels. ``kernel="xp"`` writes the in-block updates as array operations (about ten small operations per
coordinate: what runs on numpy, and on CuPy as separate launches); ``kernel="fused"`` (CuPy only, the default
there) runs the b in-block coordinates of a row in one CUDA thread, one launch per block and sweep
(:data:`FUSED_SOURCE`: the same arithmetic in the same order; rows are threads, so reads and writes of the
column-major blocks are coalesced). The card tests (tests/gpu/test_cuda.py) compare the two.

The fused kernel is compiled with ``--fmad=false`` (:data:`FUSED_OPTIONS`): NVRTC contracts ``a - (g - s*u)``
into fused multiply-adds by default, which rounds differently from the host build of the same source (gcc
with ``-ffp-contract=off``) and from the array-operation path (each product its own CuPy kernel), and the
device results are compared with the host's to the last bits in float64. The kernel is bound by memory
traffic, so the separate multiply costs little.

Memory (the plan's U-step solve, :mod:`rlsi.gpu.memory`): R and U of the n rows (U0 is used as U, without a
copy, when it is already column-major in the compute dtype), the running rows' copies Ra and Ua (none while
every row runs: they are R and U themselves) and one narrowed copy while rows stop, the (b x n) block of G,
and boolean masks.
"""

from __future__ import annotations

import re

import numpy as np

#: Topics per block: one GEMM per block and sweep; b(b−1)/2 rank-1 updates of n rows inside it.
BLOCK = 32
#: Kernels of the in-block updates (see the module docstring).
KERNELS = {"xp": "array operations (numpy or CuPy)", "fused": "one CUDA thread per row and block (CuPy)"}

#: The fused in-block kernel; ``T`` is float or double. U, R: column-major (na x K); Gt: (b x na) C order;
#: S: (K x K) C order; diag: float64 (K,).
FUSED_SOURCE = r"""
extern "C" __global__ void cd_block_T(const T* __restrict__ R, T* __restrict__ U, T* __restrict__ Gt,
        const T* __restrict__ S, const double* __restrict__ diag, const long long na, const int K,
        const int s, const int e, const T half, const int positive,
        T* __restrict__ max_delta, T* __restrict__ max_u, int* __restrict__ changes)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= na) return;
    T md = max_delta[i];
    T mu = max_u[i];
    int ch = changes[i];
    const int b = e - s;
    for (int j = 0; j < b; ++j) {
        const int k = s + j;
        const long long at = (long long)k * na + i;
        const T old = U[at];
        const T skk = (T)diag[k];
        T nw = (T)0;
        if (skk > (T)0) {
            const T w = R[at] - (Gt[(long long)j * na + i] - skk * old);
            if (w > half) nw = (w - half) / skk;
            else if (w < -half && !positive) nw = (w + half) / skk;
        }
        const T d = nw - old;
        if (d != (T)0) {
            U[at] = nw;
            ch += 1;
            const T* Sk = S + (long long)k * K + s;
            for (int l = j + 1; l < b; ++l) Gt[(long long)l * na + i] += d * Sk[l];
            const T ad = d < (T)0 ? -d : d;
            if (ad > md) md = ad;
        }
        const T an = nw < (T)0 ? -nw : nw;
        if (an > mu) mu = an;
    }
    max_delta[i] = md;
    max_u[i] = mu;
    changes[i] = ch;
}
"""
#: NVRTC options of the fused kernel (see the module docstring).
FUSED_OPTIONS = ("--fmad=false",)
_FUSED = {}


def fused_source(ctype):
    """:data:`FUSED_SOURCE` for ``ctype`` ("float" or "double"): the kernel ``cd_block_<ctype>``."""
    return re.sub(r"\bT\b", ctype, FUSED_SOURCE.replace("cd_block_T", f"cd_block_{ctype}"))


def fused_kernel(be):
    """The fused kernel for the backend's dtype: ``be.kernels["cd_block"]`` when the backend brings one (the
    tests run the kernel's C source compiled for the host through it), else a CuPy RawKernel of
    :func:`fused_source` with :data:`FUSED_OPTIONS` (made once per array module and dtype; CuPy compiles it
    at the first launch and caches the binary)."""
    if "cd_block" in be.kernels:
        return be.kernels["cd_block"]
    key = (be.xp, be.dtype.name)
    if key not in _FUSED:
        ctype = {"float32": "float", "float64": "double"}[be.dtype.name]
        _FUSED[key] = be.xp.RawKernel(fused_source(ctype), f"cd_block_{ctype}", options=FUSED_OPTIONS)
    return _FUSED[key]


THREADS = 256


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


def rows_f(xp, A, idx):
    """Rows ``idx`` of a 2-D device array as a column-major array, in one copy on CuPy (``take`` of the
    transpose's columns writes a row-major array, whose transpose is column-major; CuPy's take reads strided
    input in place). numpy's take would first copy a strided input whole, so numpy gathers the rows and
    converts them (two copies of the rows, none of the array)."""
    if xp is np:
        return np.asfortranarray(A[idx])
    return xp.asfortranarray(xp.take(A.T, idx, axis=1).T)


def gather_rows(be, A, idx):
    """Rows ``idx`` of a 2-D device array in the layout the backend's sparse x dense product reads without a
    copy (column-major for cuSPARSE, row-major for scipy), in one copy."""
    return rows_f(be.xp, A, idx) if be.layout == "F" else be.xp.take(A, idx, axis=0)


def solve_rows(be, R, S, U0, half_lam, *, max_iter, tol, positive=False, max_work=None, block=BLOCK, kernel=None,
               own_u0=False):
    """Solve every row of R (n x K, device) for the Gram matrix ``S`` (K x K, host float64).

    U0 : (n, K) device warm start, or None (zeros, as Algorithm 2); ``own_u0``: the solve may write into U0
    (it is then returned as U when it is column-major in the compute dtype: no copy). Returns ``(U, sweeps)``:
    U (n x K, the backend's dtype, column-major) and the sweeps of each row (int32 device array, 0 for rows
    optimal at their start). ``max_work``: each row's budget of multiply-adds (None: none). ``kernel``: a name
    of :data:`KERNELS` (None: "fused" on CuPy, "xp" on numpy).
    """
    xp = be.xp
    n, K = R.shape
    dt = be.dtype
    R = xp.asarray(R, dtype=dt)
    if U0 is None:
        U = xp.zeros((n, K), dtype=dt, order="F")
    elif own_u0 and U0.dtype == dt and U0.flags.f_contiguous:
        U = U0
    else:
        U = xp.array(U0, dtype=dt, order="F")
    sweeps = xp.zeros(n, dtype=xp.int32)
    if n == 0 or K == 0:
        return U, sweeps
    S = np.asarray(S, dtype=np.float64)
    Sd = xp.ascontiguousarray(xp.asarray(S, dtype=dt))
    diag = np.diag(S)
    half = float(half_lam)
    active = xp.flatnonzero(start_mask(be, R, U0, half, positive))
    work = xp.zeros(n, dtype=xp.float64) if max_work is not None and np.isfinite(max_work) else None
    kernel = kernel or ("fused" if be.is_cuda else "xp")
    if kernel not in KERNELS or (kernel == "fused" and not (be.is_cuda or "cd_block" in be.kernels)):
        raise ValueError(f"kernel={kernel!r}: choose 'xp', or 'fused' on CuPy")
    if kernel == "fused":
        fused = fused_kernel(be)
        diag_d = xp.ascontiguousarray(xp.asarray(diag, dtype=np.float64))
        half_t = dt.type(half)
    # the rows still running, column-major, narrowed when some stop: no gather and scatter of the whole block
    # per sweep; while every row runs they are R and U themselves
    na = int(active.shape[0])
    Ua = U if na == n else rows_f(xp, U, active)
    Ra = R if na == n and R.flags.f_contiguous else rows_f(xp, R, active)
    for _ in range(int(max_iter)):
        if na == 0:
            break
        max_delta = xp.zeros(na, dtype=dt)
        max_u = xp.zeros(na, dtype=dt)
        changes = xp.zeros(na, dtype=xp.int32) if work is not None or kernel == "fused" else None
        for s in range(0, K, block):
            e = min(K, s + block)
            Gt = Sd[s:e] @ Ua.T  # (b, na): row j is g_{s+j} of every row, with the current U
            if kernel == "fused":
                Gt = xp.ascontiguousarray(Gt)
                fused(((na + THREADS - 1) // THREADS,), (THREADS,),
                      (Ra, Ua, Gt, Sd, diag_d, np.int64(na), np.int32(K), np.int32(s), np.int32(e), half_t,
                       np.int32(bool(positive)), max_delta, max_u, changes))
                continue
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
        sweeps[active] += 1
        stop = max_delta <= tol * max_u
        if work is not None:
            work[active] += K * (1.0 + changes)
            stop |= work[active] >= max_work
        done = xp.flatnonzero(stop)
        if int(done.shape[0]):
            if Ua is not U:
                U[active[done]] = Ua[done]
            keep = xp.flatnonzero(~stop)
            active = active[keep]
            Ua = rows_f(xp, Ua, keep)
            Ra = rows_f(xp, Ra, keep)
            na = int(active.shape[0])
    if na and Ua is not U:
        U[active] = Ua
    return U, sweeps


def solve_penalty(be, pen, prepared, R, U0, lam, *, max_iter, tol, max_work=None, block=BLOCK, kernel=None,
                  own_u0=False):
    """Every row of R for a :class:`rlsi.models.penalties.Penalty` given its ``prepared`` matrix (host, from
    ``pen.prepare(S, lam)``): the closed form ``R Σ`` for "l2", coordinate descent otherwise. Returns
    ``(U, sweeps)`` as :func:`solve_rows` (sweeps None for the closed form)."""
    if pen.norm == "l2" and not pen.nonneg:
        return R @ be.asarray(prepared), None
    half = lam / 2.0 if pen.norm == "l1" else 0.0
    return solve_rows(be, R, prepared, U0, half, max_iter=max_iter, tol=tol, positive=pen.nonneg,
                      max_work=max_work, block=block, kernel=kernel, own_u0=own_u0)
