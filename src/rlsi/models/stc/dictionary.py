"""The released code's dictionary solver: projected L-BFGS steps on the simplex (``dictionary_step="lbfgs"``).

With the word codes S fixed, batch STC's dictionary problem (10) is ``min_β ℓ(S, β)`` over topics on the
simplex, ℓ the log-Poisson loss ``Σ_dn s_dnᵀβ_n + ε − w_dn log(s_dnᵀβ_n + ε)`` (convex in β). The released
STC/MedSTC code (Jun Zhu's C++; read for comparison, not copied) takes, every EM iteration, up to 20 steps
of L-BFGS (memory 5) on β as one vector, each followed by the projection of every topic on
``{β ≥ 10⁻³⁰, Σ_n β_n = 1}``, and stops early when the loss changes by less than 1e-4 relatively. This
module takes the same steps in a well-defined form: the L-BFGS direction (two-loop recursion over the last
5 pairs) is projected, ``β' = Π(β + t d)``, and t is halved until ``ℓ(β') ≤ ℓ(β) + 10⁻⁴ ⟨∇ℓ, β' − β⟩``
(Armijo along the projection arc), so ℓ never increases; a pair with ``sᵀy ≤ 0`` is dropped, and when
no length descends (the direction points out of the simplex) the memory is cleared and the step retried. Without pairs (the first step) the direction is
the gradient scaled so that its largest entry moves by the largest β entry.

Each evaluation of ℓ and its gradient is a pass over the stored word codes (nnz x K): the solver needs
``keep_word_codes=True``. The gradient is summed term by term over the entries of X ordered by term, so it
is the same numbers on any thread count.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from . import simplex

#: the released code's limits: steps per EM iteration, relative change of the loss, floor of β
LBFGS_MAX_STEPS = 20
LBFGS_TOL = 1e-4
LBFGS_FLOOR = 1e-30
LBFGS_MEMORY = 5


@njit(parallel=True, cache=True)
def loss_and_gradient(term_ptr, order, data, betaT, S, eps, G):
    """ℓ(S, β) and its gradient ``G`` (M x K, a term's K partials together; written in place).

    ``order`` lists the stored entries of X (positions in ``data`` and rows of S) grouped by term,
    ``term_ptr`` (M + 1) delimits the groups: each term's partials and loss are summed in entry order, the
    loss over terms in term order, so the numbers do not depend on the threads."""
    M, K = betaT.shape
    per_term = np.zeros(M)
    for n in prange(M):
        row = betaT[n]
        for k in range(K):
            G[n, k] = 0.0
        acc = 0.0
        for q in range(term_ptr[n], term_ptr[n + 1]):
            p = order[q]
            r = eps
            for k in range(K):
                r += S[p, k] * row[k]
            acc += r - data[p] * math.log(r)
            ratio = 1.0 - data[p] / r
            for k in range(K):
                G[n, k] += ratio * S[p, k]
        per_term[n] = acc
    total = 0.0
    for n in range(M):
        total += per_term[n]
    return total


@njit(cache=True, nogil=True)
def _project_floor_row(v, floor, out):
    """Projection of ``v`` on ``{x ≥ floor, Σ x = 1}``: ``floor + Π_{(1 − n floor)-simplex}(v − floor)``."""
    n = v.shape[0]
    z = 1.0 - n * floor
    tmp = np.empty(n)
    for i in range(n):
        tmp[i] = (v[i] - floor) / z
    simplex.project_simplex_row(tmp, out)
    for i in range(n):
        out[i] = floor + z * out[i]


@njit(parallel=True, cache=True)
def project_floor_rows(B, floor):
    """Every row of B (K x M) projected on ``{x ≥ floor, Σ x = 1}`` (a new array)."""
    out = np.empty_like(B)
    for k in prange(B.shape[0]):
        _project_floor_row(B[k], floor, out[k])
    return out


def _dot(a, b):
    """``aᵀb`` of two flat vectors without BLAS: a mini-batch's vectors are small, and a multithreaded BLAS
    call on them waits for its threads (20 times slower on a loaded 2-core machine)."""
    return float(np.multiply(a, b).sum())


def term_order(X):
    """``(term_ptr, order)`` of :func:`loss_and_gradient` for the CSR X (stable: document order per term)."""
    order = np.argsort(X.indices, kind="stable").astype(np.int64)
    term_ptr = np.zeros(X.shape[1] + 1, dtype=np.int64)
    np.cumsum(np.bincount(X.indices, minlength=X.shape[1]), out=term_ptr[1:])
    return term_ptr, order


def project_mass_rows(B, floor, mass=None):
    """Every row k of B (K x M) projected on ``{x ≥ floor·m_k, Σ x = m_k}`` (``mass`` m, K; all 1 when None):
    ``m_k Π(B_k / m_k)`` with Π of :func:`project_floor_rows` (a new array)."""
    if mass is None:
        return project_floor_rows(B, floor)
    m = np.maximum(np.asarray(mass, dtype=np.float64), np.finfo(np.float64).tiny)[:, None]  # a massless row stays ~0
    return np.ascontiguousarray(m * project_floor_rows(np.ascontiguousarray(B / m), floor))


def lbfgs_dictionary(X, beta, S, eps, *, max_steps=LBFGS_MAX_STEPS, tol=LBFGS_TOL, floor=LBFGS_FLOOR,
                     memory=LBFGS_MEMORY, order=None, mass=None):
    """Up to ``max_steps`` projected L-BFGS steps on ℓ(S, ·) from β (K x M); returns ``(β', losses)``.

    ``losses``: ℓ at the start and after each accepted step (non-increasing). Stops when a step changes ℓ
    by less than ``tol`` relatively, or when no step length in 30 halvings decreases it.

    ``mass`` (K, positive; default all 1): the rows live on ``{x ≥ floor·m_k, Σ x = m_k}`` instead of the
    simplex — the columns of X are then a part of the vocabulary (a mini-batch's terms) and m_k the mass
    topic k gives them, which the step keeps (the online learners' ``"lbfgs"`` step, online.py)."""
    term_ptr, order = term_order(X) if order is None else order
    data = X.data
    K, M = beta.shape
    x = np.ascontiguousarray(project_mass_rows(np.ascontiguousarray(beta, dtype=np.float64), floor, mass).T)  # M x K
    g = np.empty_like(x)
    f = loss_and_gradient(term_ptr, order, data, x, S, eps, g)
    losses = [f]
    pairs = []
    g_new = np.empty_like(x)
    for _ in range(max_steps):
        # two-loop recursion on the flattened variables
        q = g.ravel().copy()
        alphas = []
        for s_, y_, rho_ in reversed(pairs):
            a = rho_ * _dot(s_, q)
            q -= a * y_
            alphas.append(a)
        if pairs:
            s_, y_, _ = pairs[-1]
            q *= _dot(s_, y_) / _dot(y_, y_)
        else:
            q *= float(np.abs(x).max()) / max(float(np.abs(g).max()), 1e-300)
        for (s_, y_, rho_), a in zip(pairs, reversed(alphas)):
            b = rho_ * _dot(y_, q)
            q += (a - b) * s_
        d = -q.reshape(x.shape)
        t = 1.0
        accepted = False
        for _ in range(30):
            trial = np.ascontiguousarray(project_mass_rows(np.ascontiguousarray((x + t * d).T), floor, mass).T)
            f_new = loss_and_gradient(term_ptr, order, data, trial, S, eps, g_new)
            if f_new <= f + 1e-4 * float(np.sum(g * (trial - x))):
                accepted = True
                break
            t *= 0.5
        if not accepted:
            if not pairs:
                break
            pairs.clear()  # the projected quasi-Newton arc did not descend: restart from the gradient
            continue
        s_vec = (trial - x).ravel()
        y_vec = (g_new - g).ravel()
        sy = _dot(s_vec, y_vec)
        if sy > 0.0:
            pairs.append((s_vec, y_vec, 1.0 / sy))
            if len(pairs) > memory:
                pairs.pop(0)
        change = abs(f - f_new) / max(abs(f_new), 1e-300)
        x, f = trial, f_new
        g, g_new = g_new, g
        losses.append(f)
        if change < tol:
            break
    return np.ascontiguousarray(x.T), losses
