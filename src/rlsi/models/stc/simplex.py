"""Numba kernels of the STC dictionary on the probability simplex: the Euclidean projection of a row and the
majorise–minimise step of a row.

A topic of STC (β_k, a row of the K x M dictionary) lies on the probability simplex. The gradient step of
:class:`rlsi.models.stc.core.STCBase` projects its rows on it (:func:`project_simplex_rows`, sort-based,
O(M log M)); the default dictionary step minimises, row by row, the majorising surrogate
``Σ_n A_n b_n − T_n log b_n`` of the log-Poisson loss over the simplex (:func:`mm_rows`, ``T = β ⊙ B`` with the
coding pass's statistics A and B: :mod:`rlsi.models.stc.kernels`), so every step decreases the loss without
a step size. :mod:`rlsi.models.stc.dictionary` builds the floored projection on :func:`project_simplex_row`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

__all__ = ["mm_row", "mm_rows", "project_simplex_row", "project_simplex_rows"]


@njit(cache=True, nogil=True)
def project_simplex_row(v, out):
    """Euclidean projection of ``v`` on the probability simplex (sort-based, O(n log n)) into ``out``.

    The threshold τ solves Σ_i max(v_i − τ, 0) = 1. When the positive entries already sum to ≥ 1, τ ≥ 0
    and the non-positive entries cannot be in the support, so only the positive ones are sorted (the
    topics are sparse, so this is most of the time a small sort); otherwise all entries are sorted.
    """
    n = v.shape[0]
    pos = 0.0
    npos = 0
    for i in range(n):
        if v[i] > 0.0:
            pos += v[i]
            npos += 1
    if pos >= 1.0:
        cand = np.empty(npos)
        j = 0
        for i in range(n):
            if v[i] > 0.0:
                cand[j] = v[i]
                j += 1
    else:
        cand = v.copy()
    u = np.sort(cand)[::-1]
    css = 0.0
    tau = 0.0
    for i in range(u.shape[0]):
        css += u[i]
        t = (css - 1.0) / (i + 1)
        if u[i] - t > 0.0:
            tau = t
    for i in range(n):
        x = v[i] - tau
        out[i] = x if x > 0.0 else 0.0


@njit(parallel=True, cache=True)
def project_simplex_rows(B):
    """Project every row of ``B`` (K x M) on the simplex, in place, rows in parallel."""
    out = np.empty_like(B)
    for k in prange(B.shape[0]):
        project_simplex_row(B[k], out[k])
    return out


@njit(cache=True, nogil=True)
def mm_row(beta, A, B, out):
    """Minimiser of the surrogate ``Σ_n A_n b_n − T_n log b_n`` over the simplex, T = β ⊙ B, into ``out``.

    KKT: ``b_n = T_n / (A_n + ν)`` with ν the root of ``Σ_n T_n/(A_n + ν) = 1`` on ``ν > −min_{T_n>0} A_n``
    (the sum falls from +∞ to 0 there); found by Newton steps safeguarded by bisection, in the distance
    ``u = ν + min A`` to the pole (no cancellation when Σ T is far below min A). A row with T = 0
    (no code mass on any of its terms) is copied unchanged. Returns ν (0 for a copied row).
    """
    n = beta.shape[0]
    amin = math.inf
    tsum = 0.0
    for i in range(n):
        t = beta[i] * B[i]
        if t > 0.0:
            tsum += t
            amin = min(amin, A[i])
    if tsum <= 0.0:
        out[:] = beta
        return 0.0
    # solve in u = ν + min A (the distance to the pole, 0 < u ≤ Σ T): with D_n = A_n − min A ≥ 0 the sum is
    # Σ T_n/(D_n + u), which falls from +∞ at u = 0 to ≤ 1 at u = Σ T. Written in ν, the bracket
    # [−min A, −min A + Σ T] collapses in rounding when Σ T is below the resolution of min A (a topic
    # with code mass 1e-20 on a term and responsibilities of 1e-37), and the next division is by zero.
    lo = 0.0
    hi = tsum
    u = hi
    for _ in range(200):
        f = 0.0
        fp = 0.0
        for i in range(n):
            t = beta[i] * B[i]
            if t > 0.0:
                d = (A[i] - amin) + u
                q = t / d
                f += q
                fp -= q / d
        if f > 1.0:
            lo = u
        else:
            hi = u
        if abs(f - 1.0) <= 1e-13 or hi - lo <= 1e-15 * hi:
            break
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break  # the bracket is at the rounding level
        step = u - (f - 1.0) / fp if fp < 0.0 else mid
        u = step if lo < step < hi else mid
    if not u > 0.0:
        u = hi
    total = 0.0
    for i in range(n):
        t = beta[i] * B[i]
        out[i] = t / ((A[i] - amin) + u) if t > 0.0 else 0.0
        total += out[i]
    for i in range(n):
        out[i] /= total  # exact unit sum (the root is found to ~1e-13)
    return u - amin


@njit(parallel=True, cache=True)
def mm_rows(beta, A, B):
    """:func:`mm_row` for every row of β (K x n), rows in parallel; a new array."""
    out = np.empty_like(beta)
    for k in prange(beta.shape[0]):
        mm_row(beta[k], A[k], B[k], out[k])
    return out
