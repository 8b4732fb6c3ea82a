"""``BatchRLSI(device=...)``: the GPU as a placement of the RLSI problem in the one fit skeleton.

The skeleton (:class:`rlsi.models.skeleton.AlternatingFit`) runs every batch fit: validate, check X, build the
problem, alternate to the stop rule (:func:`rlsi.models.driver.alternate`), finish the fitted attributes. With a
``device`` BatchRLSI's two hooks call :func:`check_fit_input` and :func:`start` here, which build a
:class:`rlsi.gpu.batch.DeviceRLSIProblem` — the same problem (objective, initialisation, sweeps, screening)
with its arrays on the card — and the skeleton does the rest: the same parameter checks, the same
initialisation (``init="docs"`` / ``"random"`` / ``V_init``, on the host), the same stop rule and fitted
attributes (``components_`` as host CSR, ``objective_``, ``n_iter_``, ``lambda1_``, ``n_rows_screened_``). ``transform`` of a fitted model with a device
runs :func:`rlsi.gpu.batch.fold_in`.

The problem's settings are the estimator's, as on the host: ``topic_representation`` (the representation of U),
the tuning's ``screen`` (:meth:`rlsi.models.squared.SquaredLossModel.with_tuning`) and the solver parameters.
The estimator takes no other device options: the problem's ways of doing the work (Φ products, blocks,
kernels, the memory budget, streaming) are keyword arguments of :class:`rlsi.gpu.batch.DeviceRLSIProblem`,
which the device script and the tests pass to it directly.

Input: a scipy sparse matrix (moved to the card block by block, or streamed), or a CuPy sparse matrix already
on the card; then the initialisation runs on the card too (:func:`initial_doc_vectors`: the draws of
``random_state`` by :mod:`rlsi.models.seeding`, as on the host) and ``fit_transform`` returns W as a CuPy array.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_random_state
from ..models.penalties import penalty as get_penalty
from ..models.seeding import check_doc_vectors, random_doc_vectors, seed_topics
from .backend import resolve
from ..models.sparsity import bisect_rows, lambda1_for_terms_per_topic, sample_term_rows
from .batch import DeviceRLSIProblem, fold_in, gram_blocks, project
from .corpus import RowBlocks, on_card
from .memory import DOC_ROWS

def initial_doc_vectors(be, est, X, V_init=None):
    """``BatchRLSI._initial_doc_vectors`` for a corpus X on the card (CuPy CSR): the draws of
    ``est.random_state`` by :mod:`rlsi.models.seeding` (U₀: K documents scaled to unit norm, on the card) and
    its projection, on the card."""
    N, K = X.shape[0], est.n_components
    if V_init is not None:
        return be.asarray(check_doc_vectors(V_init, (N, K), be.dtype))
    rng = check_random_state(est.random_state)
    if est.init == "random":
        x_sqnorm = float(be.xp.square(X.data.astype(np.float64)).sum())
        return be.asarray(random_doc_vectors(rng, N, K, x_sqnorm, be.dtype))
    U0 = seed_topics(X, K, rng, be.dtype, xp=be.xp, sparse=be.sparse, indptr=np.asarray(be.to_host(X.indptr)))
    return project(be, RowBlocks(be, X, DOC_ROWS), U0, get_penalty(est.doc_penalty), est.lambda2,
                   max_iter=est.inner_max_iter, tol=est.inner_tol)


def lambda1_for_target(be, est, X, W0, problem_at):
    """``(λ₁, problem)`` for ``target_terms_per_topic``: :func:`rlsi.models.sparsity.lambda1_for_terms_per_topic`
    with device problems moving W between its bisections (on the host: sampled term rows of ``R = D W``, made
    on the card for a corpus there). The problem is the search's last one, to continue from (None with one
    round)."""
    rng = check_random_state(est.random_state)
    positive = get_penalty(est.topic_penalty).nonneg
    kw = dict(max_iter=est.inner_max_iter, tol=est.inner_tol)
    bisect = None
    if on_card(be, X):
        D = X.T.tocsr()
        rows = sample_term_rows(D.shape[0], rng)
        Ds = D[be.xp.asarray(rows)]

        def bisect(W):
            W = be.asarray(W)
            R = np.asarray(be.to_host(Ds @ W), dtype=np.float64)
            S = gram_blocks(be, W)
            return bisect_rows(R, S, est.target_terms_per_topic, scale=D.shape[0] / len(rows) / W.shape[1],
                               positive=positive, **kw)
    lam, problem = lambda1_for_terms_per_topic(
        X, W0, est.target_terms_per_topic, problem_factory=problem_at, rng=rng, positive=positive, bisect=bisect,
        return_problem=True, **kw)
    return lam, problem


def check_fit_input(est, X, V_init=None):
    """The skeleton's ``_check_fit_input`` on a device: a CuPy sparse matrix stays on the card (CSR), anything
    else is checked as on the host; the sizes as on the host."""
    be = resolve(est.device)
    if on_card(be, X):
        X = X.tocsr()
    else:
        X = est._check_X(X, reset=True)
    est._check_sizes(X.shape, V_init)
    return X


def start(est, X, V_init=None):
    """The skeleton's ``_start`` on a device: W₀ (the host path's initialisation, or :func:`initial_doc_vectors`
    for a corpus on the card), λ₁, and the :class:`rlsi.gpu.batch.DeviceRLSIProblem`."""
    be = resolve(est.device)
    N, M = X.shape
    est.n_features_in_ = M
    W0 = initial_doc_vectors(be, est, X, V_init) if on_card(be, X) else est._initial_doc_vectors(X, V_init)

    def problem_at(W, lam):
        return DeviceRLSIProblem(
            be, X, W, topic_penalty=est.topic_penalty, doc_penalty=est.doc_penalty, lambda1=lam,
            lambda2=est.lambda2, inner_max_iter=est.inner_max_iter, inner_tol=est.inner_tol,
            topic_sweeps=est.topic_sweeps, topics=est.topic_representation, tuning=est._tuning)

    problem = None
    if est.target_terms_per_topic is None:
        lam1 = est.effective_lambda1(N)
    else:  # the host path's search (rlsi.models.sparsity), its problems on the device
        lam1, problem = lambda1_for_target(be, est, X, W0, problem_at)
    if problem is None:
        problem = problem_at(W0, lam1)
    else:
        problem.set_lambda1(lam1)
    est._set_lambda1(lam1, N)
    est.device_plan_ = problem.plan
    return problem


def transform(est, X):
    """``est._fold_in(X)`` on ``est.device`` (ridge or lasso folding-in by document blocks)."""
    be = resolve(est.device)
    return fold_in(be, X, est.components_, penalty=est.doc_penalty, lam=est.lambda2,
                   max_iter=est.inner_max_iter, tol=est.inner_tol)
