"""Ask for sparsity instead of guessing λ₁: find the λ₁ that gives a number of terms per topic.

The number of non-zero weights of the ℓ1 U-step falls monotonically (in practice) as λ₁ grows, and for
fixed document vectors W it is a sum over independent term rows. So for a given W the λ₁ that gives
``target`` terms per topic is found by bisection (on a log scale) on the lasso of a random sample of term
rows, scaled to all M rows. W itself depends on λ₁, so :func:`lambda1_for_terms_per_topic` alternates:
bisect for the current W, run a few RLSI iterations with that λ₁ to move W, and bisect again, until two
rounds agree within :data:`SETTLED` (at most :data:`MAX_ROUNDS`). At the default λ₂ = 1e-3 the document
vectors keep growing over the first dozen iterations: a fixed three rounds left the fit with 2–4 times the
terms asked (20 Newsgroups, K = 30: 68 for 30, 1,320 for 300), the settled search 28 and 305
(``benchmarks/results/terms_per_topic.md``). The result is the effective λ₁ of Eq. (1); the final
fit then has about ``target`` terms per topic (the tests hold it to within 20 %).

The fit continues from the search (``return_problem=True``): the last bisection ran at the W of the last
round's problem, so that problem, with its λ₁ set to the one found, is where the fit starts — the
search's iterations (rounds of three) are not thrown away to restart from W₀. Every iteration
of it minimised Eq. (1) for *some* λ₁; from the switch on the alternation decreases Eq. (1) with the λ₁
found, to a stationary point of that problem, as a fit started from W₀ would (another start, so another
point of the non-convex problem, with the same sparsity).
"""

from __future__ import annotations

import logging
import math

import numpy as np

from ..kernels.lasso import lasso_rows
from ..kernels.products import csr_dense_rows_f64
from . import steps

log = logging.getLogger(__name__)

#: Term rows whose lasso is solved for each bisection step (all rows of smaller vocabularies).
SAMPLE_ROWS = 4000
BISECTION_STEPS = 30
#: Rounds of the search end when λ₁ moved by less than this factor since the previous round (20 Newsgroups,
#: K = 30: with 1.02 requests of 30 and 300 terms give 28–30 and 270–305 at λ₂ = 1 and 1e-3; 1.1 stopped
#: while W was still moving, 227 for 300 at λ₂ = 1) ...
SETTLED = 1.02
#: ... or after this many bisections (with :data:`ITERS_PER_ROUND` RLSI iterations between two).
MAX_ROUNDS = 12
ITERS_PER_ROUND = 3


def rows_of_R(D, rows, W):
    """Rows ``rows`` of ``R = D W`` in float64 (the bisection's lasso rows), reading a float32 W as it is."""
    Ds = D[rows]
    return csr_dense_rows_f64(Ds, 0, Ds.shape[0], W)


def sample_term_rows(n_terms, rng, sample_rows=SAMPLE_ROWS):
    """The term rows whose lasso the bisection solves: all of them, or a sorted random sample."""
    if n_terms <= sample_rows:
        return np.arange(n_terms)
    return np.sort(rng.choice(n_terms, size=sample_rows, replace=False))


def bisect_lambda1(D, W, target, *, rng, positive=False, sample_rows=SAMPLE_ROWS, max_iter=100, tol=1e-4):
    """The λ₁ whose U-step (for fixed W) gives about ``target`` terms per topic (log-scale bisection)."""
    M, K = D.shape[0], W.shape[1]
    rows = sample_term_rows(M, rng, sample_rows)
    return bisect_rows(rows_of_R(D, rows, W), steps.gram(W), target, scale=M / len(rows) / K,
                       positive=positive, max_iter=max_iter, tol=tol)


def bisect_rows(R, S, target, *, scale, positive=False, max_iter=100, tol=1e-4):
    """The bisection of :func:`bisect_lambda1` on given rows ``R`` (n x K) of ``D W`` and ``S = WᵀW``;
    ``scale`` turns the non-zeros of those rows into terms per topic (``M / n / K``)."""

    def count(lam):
        U, _ = lasso_rows(R, S, None, lam, max_iter=max_iter, tol=tol, positive=positive)
        return np.count_nonzero(U) * scale

    hi = 2.0 * float(np.abs(R).max(initial=0.0)) + 1e-300  # every row zero above this (KKT at 0)
    lo = hi * 1e-9
    if count(lo) <= target:  # even an almost unregularised fit is sparser than asked: take it
        return lo
    for _ in range(BISECTION_STEPS):
        mid = math.sqrt(lo * hi)
        if count(mid) > target:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1.01:
            break
    return math.sqrt(lo * hi)


def lambda1_for_terms_per_topic(X, W0, target, *, problem_factory, rng, rounds=MAX_ROUNDS,
                                iters_per_round=ITERS_PER_ROUND, settled=SETTLED, positive=False, max_iter=100,
                                tol=1e-4, bisect=None, D=None, return_problem=False):
    """Effective λ₁ giving about ``target`` terms per topic for the corpus X (documents x terms).

    W0 : initial document vectors (N x K). problem_factory(W, lam) : an alternating problem (see
    :mod:`rlsi.models.driver`) started from W with λ₁ = lam, used to move W between bisections.
    D : None, or Xᵀ as CSR (terms x documents) when the caller holds it already.
    bisect : None, or a callable ``W -> λ₁`` that replaces :func:`bisect_lambda1` on X (a learner whose W
    and X live elsewhere, e.g. :mod:`rlsi.distributed`; X is then not read).
    rounds : the most bisections; the search stops earlier when one lands within a factor ``settled`` of
    the previous one.
    return_problem : also return the last round's problem, after its iterations (its W is the one the
    returned λ₁ was bisected at; its λ₁ is the previous round's), or None with ``rounds=1``: ``(λ₁, problem)``.
    """
    if bisect is None:
        D = X.T.tocsr() if D is None else D

        def bisect(W_):
            return bisect_lambda1(D, W_, target, rng=rng, positive=positive, max_iter=max_iter, tol=tol)

    W = W0
    lam, problem = None, None
    for r in range(rounds):
        previous, lam = lam, bisect(W)
        log.debug("terms-per-topic search, round %d: λ₁ = %.6g", r + 1, lam)
        if previous is not None and max(lam, previous) <= settled * min(lam, previous):
            break
        if r + 1 < rounds:
            problem = None  # the previous round's, before this round builds its own (its W, its U)
            problem = problem_factory(W, lam)
            for _ in range(iters_per_round):
                problem.u_step(None)
                problem.v_step(None)
            W = problem.W
    return (lam, problem) if return_problem else lam
