"""``BatchRLSI(device=...)``: the estimator's skeleton with the device problem in place of the host one.

:func:`fit_batch` is what :meth:`rlsi.BatchRLSI.fit_transform` runs when ``device`` is not "cpu": the same
parameter checks, the same initialisation (``init="docs"`` / ``"random"`` / ``V_init``, on the host), the
same driver (:func:`rlsi.models.driver.alternate`: stop rule, progress, ConvergenceWarning), the same fitted
attributes (``components_`` as host CSR, ``objective_``, ``n_iter_``, ``lambda1_``, ...), with
:class:`rlsi.gpu.batch.DeviceRLSIProblem` doing the steps. ``transform`` of a fitted model with a device
runs :func:`rlsi.gpu.batch.fold_in`.

Input: a scipy sparse matrix (moved to the card block by block, or streamed), or a CuPy sparse matrix already
on the card; then the initialisation runs on the card too (:func:`initial_doc_vectors`: the same draws of
``random_state``) and ``fit_transform`` returns W as a CuPy array.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_random_state
from ..errors import RLSIError
from ..kernels.lasso import compute_threads
from ..models.penalties import penalty as get_penalty
from ..models.driver import alternate
from ..models.regularization import DOCS_PER_UNIT, warn_dead_topics
from .backend import resolve
from .batch import DeviceRLSIProblem, fold_in, project
from .corpus import RowBlocks, on_card

#: Keyword options of the device problem a caller may set on an estimator as ``est.device_options`` (a dict;
#: not a constructor parameter): screen, topics, phi, budget, stream, term_rows, doc_rows, block, kernel.
OPTIONS = ("screen", "topics", "phi", "budget", "stream", "term_rows", "doc_rows", "block", "kernel")


def device_options(est):
    opts = dict(getattr(est, "device_options", None) or {})
    unknown = sorted(set(opts) - set(OPTIONS))
    if unknown:
        raise RLSIError(f"device_options {unknown} are not options of the device problem; choose from {OPTIONS}")
    return opts


def initial_doc_vectors(be, est, X, V_init=None):
    """``BatchRLSI._initial_doc_vectors`` for a corpus X on the card (CuPy CSR): the same draws of
    ``est.random_state``, the same U₀ (K documents scaled to unit norm) and its projection, on the card."""
    xp = be.xp
    N, M = X.shape
    K = est.n_components
    if V_init is not None:
        V = np.asarray(V_init, dtype=be.dtype)
        if V.shape != (N, K) or not np.all(np.isfinite(V)):
            raise RLSIError(f"V_init must be a finite array of shape (n_samples, n_components)={(N, K)}")
        return be.asarray(V)
    rng = check_random_state(est.random_state)
    if est.init == "random":
        sigma = np.sqrt(float(xp.square(X.data.astype(np.float64)).sum()) / (N * K))
        return be.asarray(rng.standard_normal((N, K)) * sigma)
    nonempty = np.flatnonzero(np.diff(np.asarray(be.to_host(X.indptr))) > 0)
    if len(nonempty) < K:
        raise RLSIError(f"n_components={K} needs at least {K} documents with non-zero weights; X has "
                        f"{len(nonempty)} of {N}")
    picks = np.sort(rng.choice(nonempty, size=K, replace=False))
    U0 = X[xp.asarray(picks)].T.tocsr()
    norms = xp.sqrt(xp.asarray(U0.multiply(U0).sum(axis=0)).ravel())
    U0 = (U0 @ be.sparse.diags(1.0 / norms)).tocsr().astype(be.dtype)
    return project(be, RowBlocks(be, X, DOC_ROWS_INIT), U0, get_penalty(est.doc_penalty), est.lambda2,
                   max_iter=est.inner_max_iter, tol=est.inner_tol)


DOC_ROWS_INIT = 1 << 17


def fit_batch(est, X, V_init=None):
    """``est.fit_transform(X, V_init=V_init)`` on ``est.device``; returns W (n_samples x K): host, of X's
    dtype, for host X; a CuPy array for X on the card."""
    est._validate_params()
    be = resolve(est.device)
    card = on_card(be, X)
    if card:
        X = X.tocsr()
    else:
        X = est._check_X(X, reset=True)
    est._check_sizes(X, V_init)
    if est.target_terms_per_topic is not None:
        raise RLSIError("target_terms_per_topic is not available with a device yet; fit with device='cpu' "
                        "and reuse its lambda1_")
    N, M = X.shape
    lam1 = est.effective_lambda1(N)
    est.n_features_in_ = M
    if card:
        W0 = initial_doc_vectors(be, est, X, V_init)
    else:
        with compute_threads(est.n_jobs):
            W0 = est._initial_doc_vectors(X, V_init)
    problem = DeviceRLSIProblem(
        be, X, W0, topic_penalty=est.topic_penalty, doc_penalty=est.doc_penalty, lambda1=lam1,
        lambda2=est.lambda2, inner_max_iter=est.inner_max_iter, inner_tol=est.inner_tol,
        topic_sweeps=est.topic_sweeps, **device_options(est))
    del W0
    est.lambda1_effective_ = lam1
    est.lambda1_ = lam1 if est.lambda1_scale == "paper" else lam1 * DOCS_PER_UNIT / N
    trace = alternate(problem, max_iter=est.max_iter, tol=est.tol, name=type(est).__name__, verbose=est.verbose)
    dtype = be.dtype if card else X.dtype
    est._set_components(problem.components(dtype))
    est.topic_representation_ = problem.used[-1] if problem.used else "sparse"
    est.objective_ = np.asarray(trace.objectives)
    est.n_rows_screened_ = int(problem.total_skipped)
    est.n_iter_ = trace.n_iter
    est.device_plan_ = problem.plan
    warn_dead_topics(est, N)
    return problem.W if card else problem.doc_vectors(X.dtype)


def transform(est, X):
    """``est._fold_in(X)`` on ``est.device`` (ridge or lasso folding-in by document blocks)."""
    be = resolve(est.device)
    return fold_in(be, X, est.components_, penalty=est.doc_penalty, lam=est.lambda2,
                   max_iter=est.inner_max_iter, tol=est.inner_tol)
