"""Batch RLSI (TOIS §4, Algorithm 1): alternate the U-step and the V-step until the objective settles.

The per-block math is in :mod:`rlsi.models.tasks` (solve term rows; project documents), the steps that
map it over blocks in :mod:`rlsi.models.steps`, the decisions of the problem in
:mod:`rlsi.models.rlsi_policy`, the fit in :mod:`rlsi.models.skeleton` and :mod:`rlsi.models.driver`. This
module places the problem's blocks in this process (:class:`RLSIProblem`) and writes the estimator's hooks:
its checks, its start (W₀, λ₁) and its finish.

Regularization scale: see :mod:`rlsi.models.regularization` (``lambda1`` is per 1000 documents by
default, ``lambda1_scale="paper"`` reads it as the λ₁ of Eq. 1).

Initialization. Algorithm 1 starts from a random V₀. A random V₀ carries no signal, so the first
lasso sees R = D V₀ᵀ of pure noise: with a large λ₁ every topic dies at once, with a small one the
first U is dense and costs more than the rest of the fit. ``init="docs"`` (default) instead takes K
distinct random documents, scaled to unit norm, as the initial topics U₀ and sets V₀ to their
ridge projection (the V-step from U₀), so the first U-step already sees topic structure and stays
sparse. ``init="random"`` is the paper's V₀ ~ N(0, σ²) with σ chosen so that ‖V₀‖ matches the scale of
the ridge projection (σ = ‖D‖_F / √(NK)); it is there for reproduction and comparison.
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from .._params import ITERATIONS, Anything, Choice, Integer, Real
from .._validation import check_random_state
from ..errors import RLSIError
from ..gpu.backend import DEVICES, is_device
from ..io import register
from ..kernels.convert import csr_nbytes, csr_rows_to_dense, dense_to_csr
from . import steps
from .penalties import penalty as get_penalty
from .regularization import (DEFAULT_LAMBDA1, DEFAULT_LAMBDA2, DOCS_PER_UNIT, INITS, LAMBDA1_SCALES, DeadTopicsWarning, effective_lambda1,
                             warn_dead_topics)
from .rlsi_policy import REPRESENTATIONS, TOPIC_SWEEPS, TUNING, RLSIPolicy
from .screening import BatchR, ScreenedBatchR
from .seeding import check_doc_vectors, random_doc_vectors, seed_topics
from .skeleton import AlternatingFit
from .sparsity import lambda1_for_terms_per_topic
from .tasks import BlockScratch
from .squared import SquaredLossModel

__all__ = ["BatchRLSI", "RLSIProblem", "DeadTopicsWarning"]

log = logging.getLogger(__name__)


class RLSIProblem:
    """Batch RLSI on local blocks, as a problem for :func:`rlsi.models.driver.alternate`.

    State: X (N x M CSR), D = Xᵀ (M x N CSR), topics U (M x K, CSR or ndarray), document vectors W
    (N x K), S = WᵀW, G = UᵀU. ``u_step`` solves the term rows from ``R = D W`` block by block (skipping
    rows certified zero with ``tuning.screen``), ``v_step`` projects the documents and accumulates S and
    ``tr(Uᵀ D Vᵀ)``. Every decision (representation, dense copy, caps, objective, screening bounds) is the
    policy's (:mod:`rlsi.models.rlsi_policy`); this class places the blocks in this process.

    Representation. Sparse topics make ``Φ = X U`` a sparse × sparse product and keep memory at nnz(U);
    once most weights are non-zero the CSR bookkeeping costs more than it saves, and a dense U turns
    ``Φ`` and ``G`` into streaming/BLAS products. Both give the same solution: the solvers and the order of
    every sum are the same, except ``G = UᵀU`` (sparse product vs BLAS, equal to rounding).
    """

    def __init__(self, X, W, U, *, topic_penalty, doc_penalty, lambda1, lambda2, inner_max_iter, inner_tol,
                 representation="auto", topic_sweeps=None, D=None, tuning=TUNING):
        self.X = X
        # terms x documents: rows of R = D W are independent lasso problems. ``D``: Xᵀ as CSR when the caller
        # has it already (the λ₁ search's problems and the fit share one copy: GBs at web scale)
        self.D = X.T.tocsr() if D is None else D
        self._df = np.diff(self.D.indptr).astype(np.float64)  # document frequency of each term
        self.W, self.U = W, U
        self.S = steps.gram(W)
        self.G = None
        self.topic_penalty, self.doc_penalty = topic_penalty, doc_penalty
        self.lambda1, self.lambda2 = lambda1, lambda2
        self.inner_max_iter, self.inner_tol = inner_max_iter, inner_tol
        self.x_sqnorm = float(np.square(X.data, dtype=np.float64).sum())
        topic_norm = get_penalty(topic_penalty).norm
        self.policy = RLSIPolicy(representation, self.D.shape[0], W.shape[1], X.dtype.itemsize, topic_norm,
                                 inner_max_iter=inner_max_iter, inner_tol=inner_tol, topic_sweeps=topic_sweeps,
                                 tuning=tuning)
        self._plain_r_rows = BatchR(self.D)
        # reused dense row blocks (R, warm starts, Φ) for the whole fit: see tasks.BlockScratch
        self.scratch = BlockScratch()
        self.r_rows = (ScreenedBatchR(self.D, lambda1 / 2.0, scratch=self.scratch)
                       if self.screens(topic_norm, tuning) else self._plain_r_rows)
        self.block_entries = tuning.block_entries
        self.cross = 0.0

    # What the problem allocates, as functions of the sizes (the memory estimate sums these;
    # rlsi.models.memory): each sits next to the allocation it counts.

    @staticmethod
    def screens(topic_norm, tuning):
        """Whether the U-step's rows of R are screened (:class:`ScreenedBatchR`)."""
        return tuning.screen and topic_norm == "l1"

    @staticmethod
    def transposed_nbytes(n_terms, nnz, itemsize, index_bytes=None):
        """Bytes of ``D = Xᵀ`` as CSR (M x N; ``X.T.tocsr()`` keeps X's value and index types)."""
        return csr_nbytes(n_terms, nnz, itemsize, index_bytes)

    @staticmethod
    def setup_nbytes(nnz):
        """Bytes of the setup's temporary: the float64 squares of X's entries for ``‖X‖²``."""
        return 8 * int(nnz)

    @staticmethod
    def per_term_nbytes(n_terms, screened):
        """Bytes held per term row: the document frequencies (float64) and, screened, the provider's row
        norms and bounds (:meth:`ScreenedBatchR.nbytes_for`)."""
        return 8 * int(n_terms) + (ScreenedBatchR.nbytes_for(n_terms) if screened else 0)

    @staticmethod
    def statistics_nbytes(n_components):
        """Bytes of the K x K statistics: S and G and the prepared penalties of both steps (up to two
        float64 K x K arrays each)."""
        return 6 * 8 * int(n_components) ** 2

    @property
    def used(self):
        """The representation of each U-step."""
        return self.policy.used

    def u_step(self, executor):
        """U-step: solve the term rows of ``R = D W`` block by block; returns diagnostics (nnz, sweeps,
        rows screened, representation)."""
        dense = self.policy.begin_u_step()
        # with dense topics almost no row has a zero solution: screening would only cost its bookkeeping
        # (a copy of W, the drift of W); its bounds are voided and rebuilt if the topics get sparse again
        r_rows = self.r_rows
        if dense and isinstance(r_rows, ScreenedBatchR):
            r_rows.invalidate()
            r_rows = self._plain_r_rows
        r_rows.set_state(self.W, self.U)
        step = get_penalty(self.topic_penalty, param="topic_penalty").prepared(self.S, self.lambda1)
        self.U, sweeps = steps.update_topics(r_rows, step, self.U, self.policy.topic_settings(warm=self.U is not None),
                                             n_terms=self.D.shape[0], executor=executor, dense=dense,
                                             block_entries=self.block_entries)
        nnz = int(np.count_nonzero(self.U)) if dense else self.U.nnz
        diag = {"nnz": nnz, "sweeps": sweeps, "screened": r_rows.rows_skipped, "dense": dense}
        if self.policy.after_u_step(nnz):  # converted at once: the V-step runs on the new representation
            self.U = csr_rows_to_dense(self.U, 0, self.U.shape[0]) if self.policy.dense else dense_to_csr(self.U)
        return diag

    def v_step_topics(self):
        """The topics the V-step projects on: U itself, or the dense copy the policy asks for."""
        U = self.U
        if not sp.issparse(U) or not self.policy.v_dense_copy(self._df, np.diff(U.indptr), self.X.nnz):
            return U
        return csr_rows_to_dense(U, 0, U.shape[0])

    def v_step(self, executor):
        """V-step: project the documents on the new topics, accumulating ``S = WᵀW`` and ``tr(Uᵀ D Vᵀ)``."""
        U = self.v_step_topics()
        self.G = steps.topic_gram(U)
        W_old = self.W
        self.W, self.cross, self.S = steps.update_doc_vectors(
            self.X, U, penalty=self.doc_penalty, lam=self.lambda2, settings=self.policy.doc_settings(), W_prev=W_old,
            dtype=self.X.dtype, return_gram=True, executor=executor, G=self.G, scratch=self.scratch,
            block_entries=self.block_entries)
        if isinstance(self.r_rows, ScreenedBatchR):  # the drift of W for its bounds, while both W exist
            self.r_rows.advance(W_old, self.W)
        return {}

    def objective(self):
        """Eq. (1) of the current U and W (from the statistics of the V-step)."""
        return RLSIPolicy.objective(self.x_sqnorm, self.cross, self.G, self.S, self.lambda1,
                                    get_penalty(self.topic_penalty).value(self.U), self.lambda2,
                                    get_penalty(self.doc_penalty).value(self.W))

    def components(self, dtype):
        """The topics as ``components_`` (K x M CSR of ``dtype``), whatever the representation."""
        return topics_as_components(self.U, dtype)


def topics_as_components(U, dtype):
    """Topics U (M x K, CSR or ndarray) as ``components_`` (K x M CSR of ``dtype``)."""
    if isinstance(U, np.ndarray):
        return dense_to_csr(np.ascontiguousarray(U.T, dtype=dtype))
    return U.T.tocsr().astype(dtype)


def _use_lambda1(problem, lam1):
    """Continue ``problem`` (the λ₁ search's last one) with λ₁ = ``lam1``. Its state stays valid: U and W are
    any point of the alternation, and the screening's bounds bound ``|r̂_mk|``, which does not depend on λ₁
    (only the threshold λ₁/2 they are compared with does). The fit's diagnostics count from here."""
    problem.lambda1 = lam1
    for r_rows in {id(problem.r_rows): problem.r_rows, id(problem._plain_r_rows): problem._plain_r_rows}.values():
        if hasattr(r_rows, "half_lam"):
            r_rows.half_lam = lam1 / 2.0
        if hasattr(r_rows, "finish"):
            r_rows.finish()
        r_rows.total_skipped = 0
    problem.used.clear()


@register("BatchRLSI")
class BatchRLSI(AlternatingFit, SquaredLossModel):
    """Batch Regularized Latent Semantic Indexing.

    Minimises ``‖D − U V‖²_F + λ₁ P(U) + λ₂ Q(V)`` over topics U (n_features x n_components, sparse)
    and document vectors V by alternating minimisation (TOIS Algorithm 1).

    Parameters
    ----------
    n_components : int, default 20 — number of topics K.
    lambda1 : float, default 0.01 — topic regularization (see ``lambda1_scale``); larger is sparser.
    lambda2 : float, default 1e-3 — document regularization λ₂ (the paper's tables use λ₁ = 0.5, λ₂ = 1:
        sparse topics to read, document vectors too small for a classifier; see ``DEFAULT_LAMBDA2``).
    topic_penalty, doc_penalty : str, default "l1", "l2" — P and Q, from
        :data:`rlsi.models.penalties.PENALTIES` ("l1", "l2", "nonneg_l1", "nonneg_l2"; §8.2.1).
    lambda1_scale : {"per_doc", "paper"}, default "per_doc" — see :mod:`rlsi.models.regularization`.
    topic_representation : {"auto", "sparse", "dense"}, default "auto" — how the U-step holds the topics
        during the fit (``components_`` is CSR either way; same solution): "auto" switches to a dense
        M x K array once more than 5 % of the weights are non-zero (see :class:`RLSIProblem`).
    target_terms_per_topic : None or int — ask for sparsity instead of λ₁: λ₁ is searched so that topics
        keep about this many non-zero terms (ℓ1 topics only; :mod:`rlsi.models.sparsity`), ``lambda1`` is
        then ignored and the λ₁ found is reported as ``lambda1_`` (in ``lambda1_scale`` units). The fit
        continues from the search's last iterate (its W and U; the search's six iterations are not
        repeated): ``max_iter``, ``objective_`` and ``n_iter_`` count the iterations after the search.
    init : {"docs", "random"}, default "docs" — see the module docstring.
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
    executor : None, "serial", "threads" or an executor object — where the per-block tasks run
        (:mod:`rlsi.models.executor`); every executor gives the same result.
    verbose : int — 1 shows a progress bar with the objective.
    device : {"cpu", "cuda", "cuda:float64", ...}, default "cpu" — where the steps run: "cpu" is the host
        path; "cuda" runs them on the CUDA card with CuPy (``pip install "rlsi[gpu]"``; float32), with the same
        objective, initialisation, stop rule and attributes (:mod:`rlsi.gpu`, docs/gpu.md).

    Attributes
    ----------
    components_ : scipy.sparse CSR (n_components, n_features) — topics, one per row (Uᵀ).
    objective_ : ndarray (n_iter_,) — Eq. (1) after each outer iteration.
    lambda1_effective_ : float — the λ₁ actually used in Eq. (1).
    lambda1_ : float — the λ₁ used, in the units of ``lambda1_scale`` (= ``lambda1`` unless
        ``target_terms_per_topic`` chose it).
    n_rows_screened_ : int — term-row solves skipped by the exact screening of the U-step (diagnostic).
    topic_representation_ : {"sparse", "dense"} — the representation of the last U-step.
    n_iter_ : int; n_features_in_ : int.

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
        "device": Choice(DEVICES),
    }
    _state_scalars = SquaredLossModel._state_scalars + ("lambda1_", "topic_representation_")

    def __init__(self, n_components=20, *, lambda1=DEFAULT_LAMBDA1, lambda2=DEFAULT_LAMBDA2, topic_penalty="l1",
                 doc_penalty="l2", lambda1_scale="per_doc", target_terms_per_topic=None,
                 topic_representation="auto", init="docs",
                 max_iter=100, tol=1e-4, inner_max_iter=100, inner_tol=1e-4, topic_sweeps=TOPIC_SWEEPS,
                 random_state=None, n_jobs=None, executor=None, verbose=0, device="cpu"):
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
        self.device = device

    def effective_lambda1(self, n_docs):
        """The λ₁ of Eq. (1) used for a corpus of ``n_docs`` documents."""
        return effective_lambda1(self.lambda1, self.lambda1_scale, n_docs)

    # ------------------------------------------------------------------ the problem and its finish (skeleton: AlternatingFit)
    def _check_fit_input(self, X, y, V_init=None):
        if is_device(self.device):  # the device placement checks its input (a CuPy matrix stays on the card)
            from ..gpu.fit import check_fit_input
            return check_fit_input(self, X, V_init), y
        X = self._check_X(X, reset=True)
        self._check_sizes(X.shape, V_init)
        return X, y

    def _start(self, X, y, executor, V_init=None):
        """W₀, λ₁ (searched for ``target_terms_per_topic``) and the problem; ``V_init`` (n_samples x
        n_components) overrides ``init`` with a given V₀ᵀ. With a ``device``: the same problem placed on the
        card (:func:`rlsi.gpu.fit.start`)."""
        if is_device(self.device):
            from ..gpu.fit import start
            return start(self, X, V_init)
        N, M = X.shape
        self.n_features_in_ = M
        W = self._initial_doc_vectors(X, V_init)
        D = X.T.tocsr()  # one transposed copy for the λ₁ search and the fit
        target = self.target_terms_per_topic
        if target is None:
            lam1 = self.effective_lambda1(N)
            problem = self._problem(X, W, lam1, D)
        else:  # the fit continues from the search's last problem (sparsity module)
            lam1, problem = self._lambda1_for_target(X, W, target, D)
            if problem is None:
                problem = self._problem(X, W, lam1, D)
            else:
                _use_lambda1(problem, lam1)
        self._set_lambda1(lam1, N)
        # W₀ lives on only as the problem's W, freed by the first V-step (no third N x K array)
        return problem

    def _set_lambda1(self, lam1, n_docs):
        self.lambda1_effective_ = lam1
        self.lambda1_ = lam1 if self.lambda1_scale == "paper" else lam1 * DOCS_PER_UNIT / n_docs

    def _finish(self, problem, trace, X):
        if hasattr(problem.r_rows, "finish"):
            problem.r_rows.finish()
        self._set_components(problem.components(X.dtype))
        self._finish_representation(problem.used)
        self.objective_ = np.asarray(trace.objectives)
        self.n_rows_screened_ = int(problem.r_rows.total_skipped)
        self.n_iter_ = trace.n_iter
        warn_dead_topics(self, X.shape[0])

    def _finish_representation(self, used):
        self.topic_representation_ = used[-1] if used else "sparse"
        if len(set(used)) > 1:
            log.info("topics were sparse for %d and dense for %d iterations", used.count("sparse"),
                     used.count("dense"))

    def _fit_output(self, problem, X):
        return problem.W

    def _check_sizes(self, shape, V_init):
        """K must fit the vocabulary, and the documents when they seed the topics (``init="docs"``); a
        sparsity target needs ℓ1 topics and fits the vocabulary."""
        N, M = shape
        K = self.n_components
        if K > M:
            raise RLSIError(f"n_components={K} is larger than the vocabulary ({M} terms)")
        if V_init is None and self.init == "docs" and K > N:
            raise RLSIError(f"n_components={K} is larger than the number of documents ({N})")
        target = self.target_terms_per_topic
        if target is not None and get_penalty(self.topic_penalty).norm != "l1":
            raise RLSIError(f"target_terms_per_topic needs l1 topics; topic_penalty={self.topic_penalty!r} "
                            f"gives dense topics")
        if target is not None and target > M:
            raise RLSIError(f"target_terms_per_topic={target} is larger than the vocabulary ({M} terms)")

    def _problem(self, X, W, lam1, D=None):
        return RLSIProblem(X, W, None, topic_penalty=self.topic_penalty, doc_penalty=self.doc_penalty,
                           lambda1=lam1, lambda2=self.lambda2, inner_max_iter=self.inner_max_iter,
                           inner_tol=self.inner_tol, representation=self.topic_representation,
                           topic_sweeps=self.topic_sweeps, D=D, tuning=self._tuning)

    def _lambda1_for_target(self, X, W, target, D=None):
        """``(λ₁, problem)``: the effective λ₁ for ``target`` terms per topic and the search's last problem
        (None with one round) to continue from."""
        lam, problem = lambda1_for_terms_per_topic(
            X, W, target, problem_factory=lambda W_, lam_: self._problem(X, W_, lam_, D),
            rng=check_random_state(self.random_state), positive=get_penalty(self.topic_penalty).nonneg,
            max_iter=self.inner_max_iter, tol=self.inner_tol, D=D, return_problem=True)
        log.info("target_terms_per_topic=%d: λ₁ = %.6g (effective)", target, lam)
        return lam, problem

    def _initial_doc_vectors(self, X, V_init):
        """W₀ = V₀ᵀ as described in the module docstring (:mod:`rlsi.models.seeding`)."""
        N, K = X.shape[0], self.n_components
        if V_init is not None:
            return check_doc_vectors(V_init, (N, K), X.dtype)
        rng = check_random_state(self.random_state)
        if self.init == "random":
            return random_doc_vectors(rng, N, K, np.square(X.data, dtype=np.float64).sum(), X.dtype)
        U0 = seed_topics(X, K, rng)  # M x K
        # U₀ only seeds V₀; it is not a warm start for the lasso (a different problem): that starts at zero.
        W, _ = steps.update_doc_vectors(X, U0, penalty=self.doc_penalty, lam=self.lambda2,
                                        settings=self._inner_settings(), dtype=X.dtype,
                                        block_entries=self._tuning.block_entries)
        return W
