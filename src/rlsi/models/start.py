"""The start of a batch RLSI fit, written once over the placements' primitives: W₀, λ₁ and the problem.

:func:`start` is what every placement's fit begins with (:class:`rlsi.models.placement.PlacedCorpus` gives the
primitives; :mod:`rlsi.models.local`, :mod:`rlsi.gpu.placement` and :mod:`rlsi.distributed.placement` implement
them)::

    a checkpointed fit of this placement?  → go on from it (its λ₁, its state)
    W₀ ← V_init, or the projection of the documents on topic_init, or the random start, or the projection of
         the documents on K seed documents (init="docs")
    λ₁ ← lambda1 scaled to the corpus, or the λ₁ search for target_terms_per_topic
    the problem at W₀ with λ₁ (or the search's last problem, continued with the λ₁ found), its topics U₀ ←
         topic_init when given (a warm start of the first U-step)

Initialization. Algorithm 1 starts from a random V₀. A random V₀ carries no signal, so the first lasso sees
R = D V₀ᵀ of pure noise: with a large λ₁ every topic dies at once, with a small one the first U is dense and
costs more than the rest of the fit. ``init="docs"`` (default) instead takes K distinct random documents,
scaled to unit norm, as the initial topics U₀ and sets V₀ to their ridge projection (the V-step from U₀), so
the first U-step already sees topic structure and stays sparse. ``init="random"`` is the paper's V₀ ~ N(0, σ²)
with σ chosen so that ‖V₀‖ matches the scale of the ridge projection (σ = ‖D‖_F / √(NK)); it is there for
reproduction and comparison. The draws are made on the host from ``random_state`` (one generator for the start,
another for the search), the same on every placement.

Warm start. ``fit(X, V_init=W, topic_init=U)`` goes on from another fit (a path over K and λ₁,
:mod:`rlsi.selection.path`): W₀ is the given document vectors and the problem's topics start at the given ones,
so the first U-step is warm — ``topic_sweeps`` coordinate-descent sweeps from them, as every later U-step,
instead of a solve from zero (a budget of 10 dense sweeps per term row at the cold start,
:func:`rlsi.models.rlsi_policy.cold_work`). Without ``V_init``, W₀ is the projection of the documents on the given topics. The
λ₁ search (``target_terms_per_topic``) runs from that W₀ and its last problem is continued: its topics, not the
given ones. Topics that start given are a placement's option (:meth:`warm_topics` of the problem; the local
placement has it).
"""

from __future__ import annotations

import logging

from ..errors import RLSIError
from .seeding import check_doc_vectors, random_doc_vectors
from .sparsity import bisect_rows, lambda1_for_terms_per_topic, sample_term_rows

__all__ = ["initial_doc_vectors", "search_lambda1", "start"]

log = logging.getLogger(__name__)


def initial_doc_vectors(spec, corpus, V_init=None, topics=None):
    """W₀ = V₀ᵀ (N x K), placed: ``V_init`` (n_samples x n_components) when given, else the projection on
    ``topics`` (M x K CSR: ``topic_init``'s) when given, else by ``spec.init`` (the module docstring)."""
    N, K = corpus.shape[0], spec.n_components
    if V_init is not None:
        return corpus.place(check_doc_vectors(V_init, (N, K), corpus.dtype))
    if topics is not None:
        return corpus.project(topics, spec)
    rng = spec.rng()
    if spec.init == "random":
        return corpus.place(random_doc_vectors(rng, N, K, corpus.x_sqnorm(), corpus.dtype))
    U0 = corpus.seed_topics(K, rng)  # M x K seed topics, then V₀ their projection
    if spec.seeds is not None:  # the seeded topics start on their seed words (rlsi.models.seeds)
        U0 = spec.seeds.first_topics(U0)
    return corpus.project(U0, spec)


def search_lambda1(spec, corpus, W0):
    """``(λ₁, problem)``: the effective λ₁ for ``spec.target_terms_per_topic`` terms per topic
    (:func:`rlsi.models.sparsity.lambda1_for_terms_per_topic`, its rows of R and S from the corpus) and the
    search's last problem to continue from (None with one round)."""
    rng = spec.rng()
    N, M = corpus.shape
    K, target = spec.n_components, spec.target_terms_per_topic
    positive = spec.topic_pen.nonneg

    def bisect(W):
        rows = sample_term_rows(M, rng)
        R, S = corpus.search_rows(W, rows)
        return bisect_rows(R, S, target, scale=M / len(rows) / K, positive=positive, max_iter=spec.inner_max_iter,
                           tol=spec.inner_tol)

    lam, problem = lambda1_for_terms_per_topic(
        None, W0, target, problem_factory=lambda W, lam_: corpus.problem(W, lam_, spec), rng=rng, positive=positive,
        max_iter=spec.inner_max_iter, tol=spec.inner_tol, bisect=bisect, return_problem=True,
        rounds=spec.tuning.search_rounds, settled=spec.tuning.search_settled)
    log.info("target_terms_per_topic=%d: λ₁ = %.6g (effective)", target, lam)
    return lam, problem


def start(spec, corpus, V_init=None, topics=None):
    """``(λ₁, problem)`` of a fit of ``spec`` on the placed ``corpus`` (the module docstring); λ₁ is the
    effective one (Eq. 1). ``topics``: the given first topics (M x K CSR float64, ``topic_init``), or None."""
    resumed = corpus.resume(spec)
    if resumed is not None:
        return resumed
    W0 = initial_doc_vectors(spec, corpus, V_init, topics)
    if spec.target_terms_per_topic is None:
        lam1 = spec.effective_lambda1(corpus.shape[0])
        problem = corpus.problem(W0, lam1, spec)
        if topics is not None:
            warm = getattr(problem, "warm_topics", None)
            if warm is None:
                raise RLSIError(f"topic_init is not available on this placement ({type(problem).__name__}); "
                                f"fit in this process (placement='local')")
            warm(topics)
        return lam1, problem
    # the fit continues from the search's last problem (rlsi.models.sparsity)
    lam1, problem = search_lambda1(spec, corpus, W0)
    if problem is None:
        return lam1, corpus.problem(W0, lam1, spec)
    problem.set_lambda1(lam1)
    return lam1, problem
