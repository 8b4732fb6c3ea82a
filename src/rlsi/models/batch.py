"""Batch RLSI (TOIS §4, Algorithm 1): alternate the U-step and the V-step until the objective settles.

The per-block math is in :mod:`rlsi.models.tasks` (solve term rows; project documents), the steps that
map it over blocks in :mod:`rlsi.models.steps`, the decisions of the problem in
:mod:`rlsi.models.rlsi_policy`, the start (W₀, λ₁, the problem) in :mod:`rlsi.models.start`, where the blocks
live in the placements (:mod:`rlsi.models.placement`; :mod:`rlsi.models.local` in this process), and the fit in
:mod:`rlsi.models.skeleton` and :mod:`rlsi.models.driver`. This module writes the estimator: its parameters,
its checks and its finish; :func:`regularized_lsi` is the same fit as a function (scikit-learn's
``non_negative_factorization`` beside ``NMF``).

Regularization scale: see :mod:`rlsi.models.regularization` (``lambda1`` is per 1000 documents by
default, ``lambda1_scale="paper"`` reads it as the λ₁ of Eq. 1).
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from .._params import ITERATIONS, Anything, Choice, Integer, Real
from ..errors import RLSIError
from ..io import register
from .local import LocalCorpus
from .penalties import penalty as get_penalty
from .regularization import (DEFAULT_LAMBDA1, DEFAULT_LAMBDA2, DOCS_PER_UNIT, INITS, LAMBDA1_SCALES, DeadTopicsWarning,
                             effective_lambda1, warn_dead_topics)
from .rlsi_policy import REPRESENTATIONS, TOPIC_SWEEPS
from .seeding import given_topics
from .seeds import DEFAULT_SEED_STRENGTH, SeedStrength, SeedTermsValue, seeds_of
from .skeleton import AlternatingFit
from .spec import RLSISpec
from .squared import SquaredLossModel
from .driver import alternate
from .solver import fit_result
from .start import initial_doc_vectors, start

__all__ = ["BatchRLSI", "DeadTopicsWarning", "regularized_lsi"]

log = logging.getLogger(__name__)


@register("BatchRLSI")
class BatchRLSI(AlternatingFit, SquaredLossModel):
    """Batch Regularized Latent Semantic Indexing.

    Minimises ``‖D − U V‖²_F + λ₁ P(U) + λ₂ Q(V)`` over topics U (n_features x n_components, sparse)
    and document vectors V by alternating minimisation (TOIS Algorithm 1).

    Parameters
    ----------
    n_components : int, default 20 — number of topics K.
    lambda1 : float, default 0.01 — topic regularization (see ``lambda1_scale``); larger is sparser.
    lambda2 : float, default 1e-3 — document regularization λ₂. The defaults make features for a classifier
        (``FEATURES`` of :mod:`rlsi.models.regularization`); topics to read take ``**READING``: λ₁ = 0.05,
        λ₂ = 1, the defaults of the command line.
    topic_penalty, doc_penalty : str, default "l1", "l2" — P and Q, from
        :data:`rlsi.models.penalties.PENALTIES` ("l1", "l2", "nonneg_l1", "nonneg_l2"; §8.2.1).
    lambda1_scale : {"per_doc", "paper"}, default "per_doc" — see :mod:`rlsi.models.regularization`.
    topic_representation : {"auto", "sparse", "dense"}, default "auto" — how the U-step holds the topics
        during the fit (``components_`` is CSR either way; same solution): "auto" switches to a dense
        M x K array once more than 5 % of the weights are non-zero (see :class:`rlsi.models.local.RLSIProblem`).
    target_terms_per_topic : None or int — ask for sparsity instead of λ₁: λ₁ is searched so that topics
        keep about this many non-zero terms (ℓ1 topics only; :mod:`rlsi.models.sparsity`), ``lambda1`` is
        then ignored and the λ₁ found is reported as ``lambda1_`` (in ``lambda1_scale`` units). The fit
        continues from the search's last iterate (its W and U; the search's six iterations are not
        repeated): ``max_iter``, ``objective_`` and ``n_iter_`` count the iterations after the search.
    init : {"docs", "random"}, default "docs" — see :mod:`rlsi.models.start`.
    max_iter : int, default 100 — outer iterations (the paper runs 100).
    tol : float, default 1e-4 — stop when the objective decreases by less than ``tol`` (relative).
    inner_max_iter, inner_tol : coordinate-descent sweeps per row and its stopping rule.
    topic_sweeps : None or int, default 3 — coordinate-descent sweeps per term row in each U-step after the
        first, warm-started from the previous topics (an inexact U-step that still decreases Eq. 1 at every
        iteration; see :func:`topic_max_iter`; the first U-step, from zero, runs to ``inner_tol`` within a work
        budget of about ten dense sweeps per term row, :func:`cold_work`); None solves every U-step to ``inner_tol`` (at most
        ``inner_max_iter`` sweeps), as Algorithm 2, and reproduces the paper's iterates. Both converge to the
        same solutions on the oracle problems of the tests; the default's iterations are cheaper where topics
        are dense (13-16 % less CPU time to the same objective).
    random_state : None, int or Generator — makes fits reproducible (also with several threads).
    n_jobs : None or int — numba threads (None: numba's default, all cores).
    executor : None, "serial", "threads" or an executor object — where the per-block tasks of the local
        placement run (:mod:`rlsi.models.executor`); every executor gives the same result.
    verbose : int — 1 shows a progress bar with the objective.
    placement : None, a name or a placement object — where the fit runs (:mod:`rlsi.models.placement`): None or
        "local" this process; "cuda", "cuda:float64" a CUDA card with CuPy (``pip install "rlsi[gpu]"``; float32
        by default; :mod:`rlsi.gpu`, docs/gpu.md), "numpy" the device code path on the host (tests); "dask" a
        LocalCluster, or :class:`rlsi.distributed.DaskPlacement` for a given cluster. Every placement gives the
        same objective, initialisation, stop rule and attributes; a saved model keeps a device placement's name
        and no cluster.
    device : {"cpu", "cuda", "cuda:float64", ...}, default "cpu" — the spelling of a device placement
        (``device="cuda"`` is ``placement="cuda"``); "cpu" leaves ``placement`` to say where.
    tuning : None, an :class:`rlsi.models.rlsi_policy.RLSITuning` or a dict of its fields — the numbers behind
        the fit's decisions (None: the measured defaults); for tests and studies (:meth:`with_tuning`).
    seed_terms : None, a list of term lists or a mapping name → terms — seed words (guided topics,
        :mod:`rlsi.models.seeds`): topic i is seeded by group i (it starts on its words, and their ℓ1 penalty in it
        is lighter); a mapping's names label the topics (``topic_names_``). Terms are strings, looked up in
        ``fit(X, feature_names=...)`` (the vectorizer's ``get_feature_names_out()``), or column ids. ℓ1 topics only;
        the local and device placements.
    seed_strength : float in [0, 1), default 0.5 — the seeded pairs' λ₁ is multiplied by ``1 − seed_strength``.

    ``fit(X, V_init=None, topic_init=None, feature_names=None)`` (and ``fit_transform``) start from another fit:
    ``V_init`` (n_samples x n_components) the initial document vectors, ``topic_init`` (a fitted model or
    (n_components x n_features) topics) the initial topics, so that the first U-step is warm instead of solved
    from zero (:mod:`rlsi.models.start`; how :func:`rlsi.select` walks its path); without either, ``init`` starts.

    Attributes
    ----------
    components_ : scipy.sparse CSR (n_components, n_features) — topics, one per row (Uᵀ).
    objective_ : ndarray (n_iter_,) — Eq. (1) after each outer iteration.
    lambda1_effective_ : float — the λ₁ actually used in Eq. (1).
    lambda1_ : float — the λ₁ used, in the units of ``lambda1_scale`` (= ``lambda1`` unless
        ``target_terms_per_topic`` chose it).
    n_rows_screened_ : int — term-row solves skipped by the exact screening of the U-step (diagnostic).
    Placements add their own: ``device_plan_`` (a device's memory plan), and a Dask fit's (see
    :class:`rlsi.distributed.DaskRLSI`).
    topic_representation_ : {"sparse", "dense"} — the representation of the last U-step.
    n_iter_ : int; n_features_in_ : int.
    seed_terms_ : list of lists of int — the seed groups' column ids (with ``seed_terms``).
    topic_names_ : list of (str or None) — the topics' labels, one per topic (with ``seed_terms``: a mapping's
        names, None for an unnamed topic).

    Examples
    --------
    >>> from rlsi import BatchRLSI
    >>> model = BatchRLSI(n_components=50, lambda1=0.05, random_state=0).fit(X)   # doctest: +SKIP
    >>> W = model.transform(X_new)          # (n_new, 50) ridge projections          # doctest: +SKIP
    """

    _parameter_constraints = {
        "lambda1_scale": Choice(LAMBDA1_SCALES),
        "init": Choice(INITS),
        "max_iter": ITERATIONS,
        "tol": Real(low=0.0),
        "target_terms_per_topic": Integer(low=1, none=True),
        "topic_representation": Choice(REPRESENTATIONS),
        "topic_sweeps": Integer(low=1, none=True),
        "random_state": Anything(),  # checked by check_random_state where it is used
        "executor": Anything(),  # checked by get_executor
        "seed_terms": SeedTermsValue(),
        "seed_strength": SeedStrength(),
    }
    _state_scalars = SquaredLossModel._state_scalars + ("lambda1_", "topic_representation_", "seed_terms_",
                                                        "topic_names_")

    def __init__(self, n_components=20, *, lambda1=DEFAULT_LAMBDA1, lambda2=DEFAULT_LAMBDA2, topic_penalty="l1",
                 doc_penalty="l2", lambda1_scale="per_doc", target_terms_per_topic=None,
                 topic_representation="auto", init="docs",
                 max_iter=100, tol=1e-4, inner_max_iter=100, inner_tol=1e-4, topic_sweeps=TOPIC_SWEEPS,
                 random_state=None, n_jobs=None, executor=None, verbose=0, placement=None, device="cpu",
                 tuning=None, seed_terms=None, seed_strength=DEFAULT_SEED_STRENGTH):
        self.n_components = n_components
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.topic_penalty = topic_penalty
        self.doc_penalty = doc_penalty
        self.lambda1_scale = lambda1_scale
        self.target_terms_per_topic = target_terms_per_topic
        self.topic_representation = topic_representation
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.inner_max_iter = inner_max_iter
        self.inner_tol = inner_tol
        self.topic_sweeps = topic_sweeps
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.executor = executor
        self.verbose = verbose
        self.placement = placement
        self.device = device
        self.tuning = tuning
        self.seed_terms = seed_terms
        self.seed_strength = seed_strength

    def effective_lambda1(self, n_docs):
        """The λ₁ of Eq. (1) used for a corpus of ``n_docs`` documents."""
        return effective_lambda1(self.lambda1, self.lambda1_scale, n_docs)

    # ------------------------------------------------------------------ the skeleton's hooks (AlternatingFit)
    def _check_fit_input(self, X, y, V_init=None, topic_init=None, feature_names=None):
        """X as the placement takes it (a matrix it holds already, or checked as every model's X), and the
        sizes; ``feature_names``: the terms of X's columns, for term strings in ``seed_terms``."""
        X = self._placement().check_input(X, lambda X_: self._check_X(X_, reset=True))
        self._check_sizes(X.shape, V_init, topic_init)
        return X, y

    def _open_executor(self, X):
        return self._placement().open(X)

    def _close_executor(self, executor):
        self._placement().close(executor)

    def _fit_threads(self):
        return self._placement().threads(self.n_jobs)

    def _start(self, X, y, executor, V_init=None, topic_init=None, feature_names=None):
        """The documents placed, then the one start (:func:`rlsi.models.start.start`: W₀, λ₁ searched for
        ``target_terms_per_topic``, the problem); ``V_init`` (n_samples x n_components) overrides ``init`` with
        a given V₀ᵀ; ``topic_init`` (a fitted model or (n_components x n_features) topics) starts the first
        U-step from those topics (a warm start; :mod:`rlsi.models.start`); ``feature_names``: see
        :meth:`_check_fit_input`."""
        spec = RLSISpec.of(self, seeds=seeds_of(self, X.shape[1], feature_names, self._placement()))
        self.n_features_in_ = X.shape[1]
        topics = None if topic_init is None else given_topics(topic_init).T.tocsr()
        lam1, problem = start(spec, self._placement().corpus(X, spec, executor), V_init, topics)
        self.lambda1_effective_ = lam1
        self.lambda1_ = spec.user_lambda1(lam1, X.shape[0])
        return problem

    def _finish(self, problem, trace, X):
        result = fit_result(problem, trace, X.dtype)
        self._set_components(result["components"])
        self._finish_representation(result["topic_representations"])
        self.objective_ = result["objective"]
        self.n_rows_screened_ = result["rows_screened"]
        self.n_iter_ = len(self.objective_)
        for name, value in result["attributes"].items():  # the placement's own (bytes moved, a memory plan)
            setattr(self, name, value)
        warn_dead_topics(self, X.shape[0])

    def _finish_representation(self, used):
        self.topic_representation_ = used[-1] if used else "sparse"
        if len(set(used)) > 1:
            log.info("topics were sparse for %d and dense for %d iterations", used.count("sparse"),
                     used.count("dense"))

    def _fit_output(self, problem, X):
        return problem.doc_vectors()

    def _check_sizes(self, shape, V_init, topic_init=None):
        """K must fit the vocabulary, and the documents when they seed the topics (``init="docs"``); given
        topics must be K x M; a sparsity target needs ℓ1 topics and fits the vocabulary."""
        N, M = shape
        K = self.n_components
        if K > M:
            raise RLSIError(f"n_components={K} is larger than the vocabulary ({M} terms)")
        if topic_init is not None and given_topics(topic_init).shape != (K, M):
            raise RLSIError(f"topic_init has shape {given_topics(topic_init).shape}, expected "
                            f"(n_components, n_features)={(K, M)}")
        if V_init is None and topic_init is None and self.init == "docs" and K > N:
            raise RLSIError(f"n_components={K} is larger than the number of documents ({N})")
        target = self.target_terms_per_topic
        if target is not None and get_penalty(self.topic_penalty).norm != "l1":
            raise RLSIError(f"target_terms_per_topic needs l1 topics; topic_penalty={self.topic_penalty!r} "
                            f"gives dense topics")
        if target is not None and target > M:
            raise RLSIError(f"target_terms_per_topic={target} is larger than the vocabulary ({M} terms)")

    def lambda1_ceiling(self, X):
        """The ``lambda1`` (on this model's ``lambda1_scale``) at and above which the first U-step of ``fit(X)``
        leaves every topic empty: a term row of U stays zero while ‖2 R_m‖_∞ ≤ λ₁ (the lasso's optimality
        condition at zero), R = D W₀ with the fit's initial document vectors W₀. Below it some topics start
        alive (the value ``rlsi fit`` names when every topic ended empty)."""
        X = sp.csr_matrix(X, dtype=np.float64)
        W = np.asarray(initial_doc_vectors(RLSISpec.of(self), LocalCorpus(X)), dtype=np.float64)
        ceiling = 2.0 * float(np.abs(X.T @ W).max(initial=0.0))
        return ceiling if self.lambda1_scale == "paper" else ceiling * DOCS_PER_UNIT / max(X.shape[0], 1)


def regularized_lsi(X, n_components=20, *, V_init=None, topic_init=None, feature_names=None, **params):
    """Minimise ``‖D − U V‖²_F + λ₁ P(U) + λ₂ Q(V)`` (TOIS Eq. 1; D = Xᵀ) by alternating minimisation.

    X : (n_samples x n_features) sparse or dense; n_components : K; V_init : a given V₀ᵀ (n_samples x K);
    topic_init : given first topics (a fitted model or K x n_features; the first U-step starts from them);
    params : those of :class:`rlsi.models.BatchRLSI` (``lambda1``, ``lambda2``, ``topic_penalty``,
    ``doc_penalty``, ``lambda1_scale``, ``target_terms_per_topic``, ``topic_representation``, ``init``,
    ``max_iter``, ``tol``, ``inner_max_iter``, ``inner_tol``, ``topic_sweeps``, ``random_state``, ``n_jobs``,
    ``executor``, ``placement``, ``device``, ``tuning``, ``verbose``, ``seed_terms``, ``seed_strength``), with the
    same defaults and checks; feature_names : the terms of X's columns (for term strings in ``seed_terms``).

    Returns ``(U, V, info)``: U (n_features x n_components, CSR) the topics, V (n_components x n_samples) the
    document vectors, so that ``Xᵀ ≈ U V`` as in the paper (V is ``W.T`` of the (n_samples x K) vectors the
    estimator's ``fit_transform`` returns: a view), and ``info``: ``objective`` (Eq. 1 after each iteration),
    ``n_iter``, ``converged``, ``lambda1`` (the effective λ₁ of Eq. 1), ``lambda1_`` (in ``lambda1_scale``
    units), ``topic_representations``, ``rows_screened`` and the placement's ``attributes``. The same numbers as
    ``BatchRLSI(n_components, **params).fit_transform(X)``.

    >>> from rlsi import regularized_lsi
    >>> U, V, info = regularized_lsi(X, 50, lambda1=0.05, random_state=0)   # doctest: +SKIP
    """
    est = BatchRLSI(n_components, **params)  # the parameters, their checks and defaults are the estimator's
    est._validate_params()
    placement = est._placement()
    X = placement.check_input(X, lambda X_: est._check_X(X_, reset=True))
    est._check_sizes(X.shape, V_init, topic_init)
    spec = RLSISpec.of(est, seeds=seeds_of(est, X.shape[1], feature_names, placement))
    topics = None if topic_init is None else given_topics(topic_init).T.tocsr()
    executor = placement.open(X)
    try:
        with placement.threads(est.n_jobs):
            lam1, problem = start(spec, placement.corpus(X, spec, executor), V_init, topics)
            own = getattr(problem, "alternate_options", None)
            trace = alternate(problem, max_iter=est.max_iter, tol=est.tol, executor=executor, name="regularized_lsi",
                              verbose=est.verbose, **(own() if callable(own) else {}))
            result = fit_result(problem, trace, X.dtype)
            W = problem.doc_vectors()
    finally:
        placement.close(executor)
    info = {"objective": result["objective"], "n_iter": len(result["objective"]), "converged": result["converged"],
            "lambda1": lam1, "lambda1_": spec.user_lambda1(lam1, X.shape[0]),
            "topic_representations": result["topic_representations"], "rows_screened": result["rows_screened"],
            "attributes": result["attributes"]}
    return result["components"].T.tocsr(), W.T, info
