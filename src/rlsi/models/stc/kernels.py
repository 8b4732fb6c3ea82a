"""Numba kernels of sparse topical coding: per-document hierarchical sparse coding and its loss.

STC (Zhang, Zhu & Zhang, "Sparse online topic models", §3) reconstructs the count ``w_dn`` of term n in
document d by ``s_dnᵀ β_n + ε`` under a **log-Poisson** loss, with non-negative word codes ``s_dn`` (K)
tied to a non-negative document code ``θ_d`` (K). For one document (Eq. 7)::

    f_d = Σ_n [s_nᵀβ_n + ε − w_n log(s_nᵀβ_n + ε)] + (λ/2)‖θ‖² + (γ/2) Σ_n ‖s_n − θ‖² + ρ Σ_n ‖s_n‖₁

(``prior="laplace"``: ``λ‖θ‖₁`` in place of ``(λ/2)‖θ‖²``). We write ``λ/2`` where Eq. (4) prints ``λ``:
Eq. (8), the printed θ-update, is the exact minimiser of the ``λ/2`` form, and the printed update is what
the paper's algorithm runs. The tests check every update below against a scalar optimiser.

Why not the squared-loss core (:mod:`rlsi.kernels.lasso`): the log-Poisson loss has no Gram-matrix form,
so a coordinate's minimiser is not a soft-threshold of a linear statistic but the larger root of a
quadratic (below); the non-negativity and the simplex rows are shared ideas, not shared code.

Word code update (§3.3). With ``μ = Σ_{j≠k} s_n^j β_jn + ε`` the 1-D problem in ``x = s_n^k ≥ 0``::

    g(x) = β_kn x − w_n log(μ + β_kn x) + (q/2) x² + (ρ − h) x

has ``g'(x)(μ + β_kn x) = q β_kn x² + (q μ + β_kn η) x + μ η − w_n β_kn`` with ``η = β_kn + ρ − h``; g is
convex on its domain and the quadratic is negative at the pole ``x = −μ/β_kn``, so its larger root ν is
the unconstrained minimiser and ``s_n^k = max(0, ν)``. STC: ``q = γ, h = γθ^k`` (the printed equation).
Collapsed STC (§4.2.1, θ marginalised under the normal prior): the coupling is
``(γ/2) Σ_n s_n² − b' (Σ_n s_n)²`` per topic with ``b' = γ² / (2(λ + γ|I_d|))``, so ``q = γ − 2b'`` and
``h = 2b' Σ_{m≠n} s_m^k``. (The printed CSTC quadratic lacks the ``q μ x`` term and flips the sign of b;
we use the derivation, which the tests check against a scalar optimiser.) The root is computed in the
cancellation-free form ``−2c / (b + √disc)`` when ``b ≥ 0``, which also covers ``β_kn = 0``.

Document code update: Eq. (8) ``θ^k = γ Σ_n s_n^k / (λ + γ|I_d|)``, or Eq. (9) with the Laplace prior
``θ^k = max(0, s̄^k − λ/(γ|I_d|))``. MedSTC (§4.2.2) adds ``c · max_y [Δ(y_d, y) + (η_y − η_{y_d})ᵀθ]``;
θ then solves a small strongly convex problem, solved to a duality gap by accelerated projected gradient
ascent on its dual (μ on the L-simplex, ``θ(μ) = max(0, m − (c/A) Σ_y μ_y v_y)``, :func:`_theta_hinge`).

Dictionary statistics: besides the gradient, the coding pass accumulates ``B = Σ_d s_dn w_dn/(s_dnᵀβ_n + ε)``
(with ``A = G + B`` the code mass) for the majorise–minimise dictionary step
(:func:`rlsi.models.stc.simplex.mm_rows`; the simplex projections are there too).

Memory: word codes live in a per-thread workspace of the longest document, one document at a time; the
dictionary gradient is accumulated as the document is finished (per-thread buffers, summed at the end),
so the corpus' word codes (nnz x K, footnote 10's 250 GB) are never held unless the caller passes an
array for them (``S``: warm starts of batch STC).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np
from numba import njit, prange

from .simplex import project_simplex_row

NORMAL, LAPLACE = 0, 1
PRIORS_BY_NAME = {"normal": NORMAL, "laplace": LAPLACE}
#: cold starts of the word codes (θ = 0): w/K spread over the topics (capped), or 1/K (the released code's)
START_SCALED, START_UNIFORM = 0, 1
STARTS_BY_NAME = {"scaled": START_SCALED, "uniform": START_UNIFORM}


# The coding kernels take their settings as named tuples, typed by numba by their fields (callers pass float,
# int and bool as core.py does: other field types are other compiled signatures), and the CSR as ``X =
# (indptr, indices, data)``. Coding: the objective (eps, lam, gamma, rho, prior), the solver (collapsed,
# max_sweeps, tol on θ's relative change, start) and the word codes (warm: S is a warm start; keep: the codes
# are kept in S). Hinge: MedSTC's θ-update (code_document). Runs: the statistics and runs of code_corpus.
Coding = namedtuple("Coding", "eps lam gamma rho prior collapsed max_sweeps tol start warm keep")
Hinge = namedtuple("Hinge", "eta y delta c n_iter linear")
Runs = namedtuple("Runs", "want_grad col_map n_cols n_chunks n_buf")


@njit(cache=True, nogil=True)
def _reconstructions(s, n, idx, betaT, out):
    """``out[i] = s_iᵀ β_{idx[i]}`` for the first n words, summed afresh."""
    for i in range(n):
        acc, m = 0.0, idx[i]
        for k in range(s.shape[1]):
            acc += s[i, k] * betaT[m, k]
        out[i] = acc


@njit(cache=True, nogil=True)
def _column_sums(s, n, out):
    """``out[k] = Σ_{i<n} s[i, k]``, summed afresh."""
    out[:] = 0.0
    for i in range(n):
        for k in range(s.shape[1]):
            out[k] += s[i, k]


@njit(cache=True, nogil=True)
def larger_root(a, b, c):
    """Larger root of ``a x² + b x + c`` (a ≥ 0; a real root is assumed), without cancellation."""
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        disc = 0.0
    sq = math.sqrt(disc)
    if b >= 0.0:
        den = b + sq
        if den == 0.0:
            return 0.0
        return -2.0 * c / den
    return (-b + sq) / (2.0 * a)


@njit(cache=True, nogil=True)
def word_code_update(w, beta_kn, mu, q, h, rho):
    """``argmin_{x≥0} β x − w log(μ + β x) + (q/2)x² + (ρ − h)x`` (see the module docstring)."""
    eta = beta_kn + rho - h
    nu = larger_root(q * beta_kn, q * mu + beta_kn * eta, mu * eta - w * beta_kn)
    return nu if nu > 0.0 else 0.0


@njit(cache=True, nogil=True)
def _hinge_primal(theta, mu, m, A, c, eta, yd, g, delta):
    """θ(μ) = max(0, m − (c/A) Σ_y μ_y v_y) with v_y = η_y − η_{y_d}, and the scores
    ``g_y = Δ·1(y≠y_d) + v_yᵀθ(μ)`` (the dual gradient over c); returns the duality gap over c,
    ``max_y g_y − μᵀg`` (≥ 0 on the simplex)."""
    L, K = eta.shape
    for k in range(K):
        acc = 0.0
        for y in range(L):
            acc += mu[y] * (eta[y, k] - eta[yd, k])
        t = m[k] - (c / A) * acc
        theta[k] = t if t > 0.0 else 0.0
    gmax = -math.inf
    mg = 0.0
    for y in range(L):
        v = delta if y != yd else 0.0
        for k in range(K):
            v += (eta[y, k] - eta[yd, k]) * theta[k]
        g[y] = v
        if v > gmax:
            gmax = v
        mg += mu[y] * v
    return gmax - mg


@njit(cache=True, nogil=True)
def _theta_hinge(theta, m, A, c, eta, yd, delta, n_iter, mu=None):
    """θ = argmin_{θ≥0} (A/2)‖θ − m‖² + c max_y [Δ·1(y≠y_d) + (η_y − η_{y_d})ᵀθ].

    Accelerated projected gradient ascent (FISTA) on the dual: μ on the L-simplex, θ(μ) as in
    :func:`_hinge_primal`, dual gradient ``c g(μ)``, Lipschitz constant ≤ c²‖V‖²_F / A (V the rows v_y).
    It stops when the duality gap ``c (max_y g_y − μᵀg)`` — an upper bound on F(θ) − F(θ*), hence on
    (A/2)‖θ − θ*‖² — is below ``(A/2)(1e-4 (1 + max m))²`` (or at the rounding level of Δ), or after
    ``n_iter`` iterations; returns the iterations made. ``mu`` (L,), in
    and out, warm-starts the dual (the coding sweeps of one document call this with slowly moving m);
    None starts at the label's vertex (θ = m).

    Why accelerated and gap-stopped: at MedSTC's scales (Δ = 3600, η ≈ Δ × the SVM's weights) the plain
    projected ascent with this step needed thousands of iterations; stopped at 50, it left θ with a hinge
    objective hundreds of times the optimum and about half of the optimal shift
    (tests/models/stc/test_stc_kernels.py::test_hinge_document_code_converges_at_medstc_scale)."""
    L, K = eta.shape
    if mu is None:
        mu = np.zeros(L)
        mu[yd] = 1.0
    vnorm = 0.0
    for y in range(L):
        s = 0.0
        for k in range(K):
            d = eta[y, k] - eta[yd, k]
            s += d * d
        vnorm += s
    g = np.empty(L)
    if vnorm == 0.0 or c == 0.0:
        mu[:] = 0.0
        mu[yd] = 1.0
        _hinge_primal(theta, mu, m, A, c, eta, yd, g, delta)
        return 0
    mmax = 0.0
    for k in range(K):
        if m[k] > mmax:
            mmax = m[k]
    # θ to 1e-4 (1 + max m) — ten times finer than the coding's stopping rule — or the gap to the rounding
    # level of scores of size Δ, whichever is looser; or θ(μ) still (to 1e-6 (1 + max m)) for 3 iterations,
    # since the dual iterate can stay far from optimal in gap while θ(μ) has converged
    tol_gap = max(0.5 * A * (1e-4 * (1.0 + mmax)) ** 2 / c, 1e-11 * (1.0 + delta))
    tol_still = 1e-6 * (1.0 + mmax)
    still = 0
    old = np.empty(K)
    tx = np.empty(K)       # θ at the extrapolated point (θ itself stays θ(μ))
    step = A / (c * c * vnorm)
    x = mu.copy()          # extrapolated point
    prev = mu.copy()
    z = np.empty(L)
    tk = 1.0
    gap = _hinge_primal(theta, mu, m, A, c, eta, yd, g, delta)
    for it in range(n_iter):
        if gap <= tol_gap:
            return it
        _hinge_primal(tx, x, m, A, c, eta, yd, g, delta)
        for y in range(L):
            z[y] = x[y] + step * c * g[y]
        prev[:] = mu
        project_simplex_row(z, mu)
        # gradient restart (O'Donoghue & Candès): drop the momentum when the step goes against the gradient
        dot = 0.0
        for y in range(L):
            dot += g[y] * (mu[y] - prev[y])
        if dot < 0.0:
            tk = 1.0
            x[:] = mu
        else:
            tn = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * tk * tk))
            w = (tk - 1.0) / tn
            for y in range(L):
                x[y] = mu[y] + w * (mu[y] - prev[y])
            tk = tn
        old[:] = theta
        gap = _hinge_primal(theta, mu, m, A, c, eta, yd, g, delta)
        change = 0.0
        for k in range(K):
            change = max(change, abs(theta[k] - old[k]))
        still = still + 1 if change <= tol_still else 0
        if still >= 3:
            return it + 1
    return n_iter


@njit(cache=True, nogil=True)
def code_document(idx, w, betaT, theta, s, recon, cfg, hinge, yd):
    """Code one document in place under ``cfg`` and ``hinge`` (fields named below); returns the sweeps made.

    idx (n,) term ids, w (n,) counts, betaT (M, K) = βᵀ, theta (K,), s (n, K) word codes (a warm start when
    ``warm``), recon (n,) output ``s_nᵀβ_n``. ``eta`` (L, K) with L > 0 and ``yd >= 0`` turns on the MedSTC
    hinge for the θ-update (weight ``c``, loss ``delta``): solved exactly (:func:`_theta_hinge`), or with
    ``linear`` linearised at the loss-augmented label ŷ of the label-free code after the first sweep,
    ``θ = max(0, m + (c/A)(η_{y_d} − η_ŷ))`` (the released MedSTC code's update; see medstc.py). ``start``: the
    word codes' cold start (below). θ and ``recon`` are computed afresh from the codes after every sweep.
    """
    eps, lam, gamma, rho, eta, delta, c = cfg.eps, cfg.lam, cfg.gamma, cfg.rho, hinge.eta, hinge.delta, hinge.c
    n = idx.shape[0]
    K = theta.shape[0]
    if n == 0:
        theta[:] = 0.0
        return 0
    # start: warm codes, else θ, else (``start == START_SCALED``) the codes that reconstruct w/K on every
    # topic, v = w / (K Σ_k β_kn), capped at √(w/γ) — a code at the minimiser with θ = 0 is at most that
    # (γx ≤ w/x from its stationarity condition), and without the cap a term whose β column is tiny starts
    # at ~1e27 (β_kn = 1e-30) — or (``START_UNIFORM``) 1/K on every topic (the released code's start).
    # The document's problem is convex in (s, θ): the start changes the sweeps taken, not the minimiser.
    if not cfg.warm:
        tsum = 0.0
        for k in range(K):
            tsum += theta[k]
        cap = math.sqrt(1.0 / gamma) if gamma > 0.0 else math.inf
        for i in range(n):
            row = betaT[idx[i]]
            if tsum > 0.0:
                for k in range(K):
                    s[i, k] = theta[k]
            elif cfg.start == START_UNIFORM:
                for k in range(K):
                    s[i, k] = 1.0 / K
            else:
                bsum = 0.0
                for k in range(K):
                    bsum += row[k]
                v = w[i] / (K * bsum) if bsum > 0.0 else 0.0
                v = min(v, cap * math.sqrt(w[i]))
                for k in range(K):
                    s[i, k] = v
    _reconstructions(s, n, idx, betaT, recon)
    colsum = np.zeros(K)
    _column_sums(s, n, colsum)
    bprime = gamma * gamma / (2.0 * (lam + gamma * n))
    supervised = eta.shape[0] > 0 and yd >= 0
    m = np.empty(K)
    # the hinge's dual variables, kept over the sweeps of this document (a warm start: m moves little)
    mu_dual = np.zeros(eta.shape[0])
    if supervised:
        mu_dual[yd] = 1.0
    yhat = -1
    sweeps = 0
    for sweep in range(cfg.max_sweeps):
        sweeps += 1
        for i in range(n):
            row = betaT[idx[i]]
            wi = w[i]
            for k in range(K):
                old = s[i, k]
                bk = row[k]
                mu = recon[i] - old * bk + eps
                if mu < eps:
                    mu = eps
                if cfg.collapsed:
                    x = word_code_update(wi, bk, mu, gamma - 2.0 * bprime, 2.0 * bprime * (colsum[k] - old), rho)
                else:
                    x = word_code_update(wi, bk, mu, gamma, gamma * theta[k], rho)
                if x != old:
                    s[i, k] = x
                    recon[i] += (x - old) * bk
                    colsum[k] += x - old
        # exact sums for θ and the next sweep: the running ones lose the small codes when a large one falls
        # to zero (a code of 1e13 leaves colsum with an error of ~1e-3, one of 1e27 with ~1e11)
        _column_sums(s, n, colsum)
        _reconstructions(s, n, idx, betaT, recon)
        # document code (Eq. 8 / Eq. 9 / the MedSTC hinge); the relative change of θ decides convergence
        change = 0.0
        scale = 0.0
        if cfg.prior == NORMAL:
            A = lam + gamma * n
            for k in range(K):
                m[k] = gamma * colsum[k] / A
        else:
            A = gamma * n
            for k in range(K):
                t = (gamma * colsum[k] - lam) / A
                m[k] = t
        old_theta = theta.copy()
        if supervised and hinge.linear:
            if yhat < 0:  # loss-augmented prediction on the label-free code, fixed for this document
                best = -math.inf
                for yy in range(eta.shape[0]):
                    sc = delta if yy != yd else 0.0
                    for k in range(K):
                        sc += (eta[yy, k] - eta[yd, k]) * (m[k] if m[k] > 0.0 else 0.0)
                    if sc > best:
                        best = sc
                        yhat = yy
            for k in range(K):
                t = m[k] + (c / A) * (eta[yd, k] - eta[yhat, k])
                theta[k] = t if t > 0.0 else 0.0
        elif supervised:
            _theta_hinge(theta, m, A, c, eta, yd, delta, hinge.n_iter, mu_dual)
        else:
            for k in range(K):
                theta[k] = m[k] if m[k] > 0.0 else 0.0
        for k in range(K):
            change = max(change, abs(theta[k] - old_theta[k]))
            scale = max(scale, abs(theta[k]))
        if change <= cfg.tol * scale:
            break
    return sweeps  # recon holds the exact reconstructions (recomputed after the last sweep)


@njit(cache=True, nogil=True)
def document_objective(w, s, recon, theta, cfg):
    """f_d of the module docstring (log-Poisson without the ``log w!`` constant) under ``cfg``."""
    eps, lam, gamma, rho = cfg.eps, cfg.lam, cfg.gamma, cfg.rho
    n, K = s.shape
    f = 0.0
    for i in range(n):
        r = recon[i] + eps
        f += r - w[i] * math.log(r)
        for k in range(K):
            d = s[i, k] - theta[k]
            f += 0.5 * gamma * d * d + rho * s[i, k]
    for k in range(K):
        f += 0.5 * lam * theta[k] * theta[k] if cfg.prior == NORMAL else lam * theta[k]
    return f


@njit(cache=True, nogil=True)
def _touch_columns(lo, hi, X, col_map, stamp, marks, cols, Gt, Bt):
    """The gradient columns of documents ``lo..hi-1`` into ``cols`` (each once: ``marks[t] == stamp`` once
    seen), their rows of ``Gt`` and ``Bt`` (n_cols x K) zeroed; returns how many."""
    K = Gt.shape[1]
    n = 0
    for p in range(X[0][lo], X[0][hi]):
        t = col_map[X[1][p]]
        if marks[t] != stamp:
            marks[t] = stamp
            cols[n] = t
            n += 1
            for k in range(K):
                Gt[t, k] = 0.0
                Bt[t, k] = 0.0
    return n


@njit(cache=True, nogil=True)
def _code_chunk(lo, hi, X, betaT, theta, S, cfg, hinge, runs, out):
    """Code the documents ``lo..hi-1`` (see :func:`code_corpus`) into ``out = (f, sweeps, zeros, Gt, Bt)``;
    with ``runs.want_grad`` add their dictionary statistics to Gt and Bt (n_cols x K: a term's K statistics
    are contiguous). The word codes go to S, or (not ``cfg.keep``) to a workspace of the run's longest document."""
    indptr, indices, data = X
    f, sweeps, zeros, Gt, Bt = out
    K = betaT.shape[1]
    maxlen = 0
    for d in range(lo, hi):
        maxlen = max(maxlen, indptr[d + 1] - indptr[d])
    work = np.empty((maxlen, K))
    recon = np.empty(maxlen)
    for d in range(lo, hi):
        a, b = indptr[d], indptr[d + 1]
        n = b - a
        idx = indices[a:b]
        w = data[a:b]
        s = S[a:b] if cfg.keep else work[:n]
        yd = hinge.y[d] if hinge.y.shape[0] > 0 else -1
        sweeps[d] = code_document(idx, w, betaT, theta[d], s, recon[:n], cfg, hinge, yd)
        f[d] = document_objective(w, s, recon[:n], theta[d], cfg)
        nz = 0
        for i in range(n):
            for k in range(K):
                if s[i, k] == 0.0:
                    nz += 1
        zeros[d] = nz
        if runs.want_grad:
            for i in range(n):
                ratio = w[i] / (recon[i] + cfg.eps)
                t = runs.col_map[idx[i]]
                for k in range(K):
                    Gt[t, k] += s[i, k] * (1.0 - ratio)
                    Bt[t, k] += s[i, k] * ratio


@njit(parallel=True, cache=True)
def code_corpus(X, betaT, theta, S, cfg, hinge, runs):
    """Code every document of the CSR ``X = (indptr, indices, data)`` (documents in parallel chunks) under
    ``cfg`` (:class:`Coding`) and ``hinge`` (:class:`Hinge`); θ (D, K) updated in place.

    S (nnz, K): when ``cfg.keep`` the word codes are kept there (aligned with ``data``; a warm start if
    ``cfg.warm``); otherwise each thread codes into its own workspace and nothing of size nnz x K exists.
    ``runs`` (:class:`Runs`): ``col_map`` (M,) maps a term to its column of the gradient (``n_cols``
    columns: the terms of this batch, so a mini-batch's gradient is K x |batch vocabulary|, not K x M).
    Returns ``(G, B, f, sweeps, zeros)``: G (K, n_cols) = Σ_d ∂ℓ/∂β = A − B (empty unless ``want_grad``)
    and B (K, n_cols) = Σ_d s_dnk w_dn / (s_dnᵀβ_n + ε), A = Σ_d s_dnk being the code mass (the statistics
    of the multiplicative dictionary step, :func:`mm_rows`); the per-document objectives f (D,), sweeps (D,)
    and the number of zero word-code entries per document (D,).

    ``runs.n_chunks``: contiguous runs of documents. With ``want_grad`` each run sums its statistics in a
    buffer of its own, over the columns of its documents only (zeroed and added back column by column), and
    the buffers are added to G and B in run order, ``n_buf`` runs at a time (``n_buf`` buffers of n_cols x K
    live at once). So G and B are the same numbers for any ``n_buf``: the caller fixes ``n_chunks``
    independently of the threads and sets ``n_buf`` to the threads.
    """
    D = X[0].shape[0] - 1
    M, K = betaT.shape
    want_grad, n_chunks, n_buf = runs.want_grad, runs.n_chunks, runs.n_buf
    width = runs.n_cols if want_grad else 0
    # without the gradient every run goes at once (its buffers have no columns)
    step = max(1, min(n_buf, n_chunks)) if want_grad else n_chunks
    Gs = np.empty((step, width, K))
    Bs = np.empty((step, width, K))
    marks = np.full((step, width), -1, dtype=np.int64)
    touched = np.empty((step, width), dtype=np.int64)
    n_touched = np.zeros(step, dtype=np.int64)
    Gt = np.zeros((width, K))
    Bt = np.zeros((width, K))
    f = np.zeros(D)
    sweeps = np.zeros(D, dtype=np.int64)
    zeros = np.zeros(D, dtype=np.int64)
    for w0 in range(0, n_chunks, step):
        nw = min(step, n_chunks - w0)
        for j in prange(nw):
            ch = w0 + j
            lo = (D * ch) // n_chunks
            hi = (D * (ch + 1)) // n_chunks
            if want_grad:
                n_touched[j] = _touch_columns(lo, hi, X, runs.col_map, ch, marks[j], touched[j], Gs[j], Bs[j])
            _code_chunk(lo, hi, X, betaT, theta, S, cfg, hinge, runs, (f, sweeps, zeros, Gs[j], Bs[j]))
        if want_grad:
            for j in range(nw):  # runs in order; a run's columns are distinct, so they go in parallel
                for q in prange(n_touched[j]):
                    t = touched[j, q]
                    for k in range(K):
                        Gt[t, k] += Gs[j, t, k]
                        Bt[t, k] += Bs[j, t, k]
    return np.ascontiguousarray(Gt.T), np.ascontiguousarray(Bt.T), f, sweeps, zeros


@njit(parallel=True, cache=True)
def poisson_loss(X, betaT, S, eps):
    """ℓ(S, β) = Σ_dn [s_dnᵀβ_n + ε − w log(s_dnᵀβ_n + ε)] for word codes S aligned with the data of the CSR
    ``X = (indptr, indices, data)``."""
    indptr, indices, data = X
    D = indptr.shape[0] - 1
    K = betaT.shape[1]
    out = np.zeros(D)
    for d in prange(D):
        acc = 0.0
        for p in range(indptr[d], indptr[d + 1]):
            row = betaT[indices[p]]
            r = eps
            for k in range(K):
                r += S[p, k] * row[k]
            acc += r - data[p] * math.log(r)
        out[d] = acc
    return out.sum()


def n_threads():
    return numba.get_num_threads()
