"""Online RLSI (TOIS §5, Algorithm 4) with re-scaling ρ, mini-batches η and embedded iterations ξ.

For each mini-batch ``X_t`` of η documents (rows), with topics ``U_{t-1}`` (terms x topics)::

    repeat ξ times (embedded iterations, §5.4.3):
        V_t  ← argmin ‖X_tᵀ − U V‖² + λ₂ Q(V)          (projection with the current U, Eq. 5)
        S_t  ← c_t · S_{t-1} + V_t V_tᵀ                   (re-scaled statistics, §5.4.1 and §5.4.2)
        R_t  ← c_t · R_{t-1} + X_tᵀ V_tᵀ
        U    ← argmin_U tr(Uᵀ U S_t) − 2 tr(Uᵀ R_t) + λ₁(t) P(U)   (Algorithm 2, warm-started from U)
    U_t ← U

The ξ repetitions *replace* the mini-batch's contribution to S and R (they do not add the batch ξ
times): after the step S and R hold each document once, with the vectors of the last repetition. The
lasso is the shared coordinate-descent row solver, warm-started from the previous U; memory is U, S
(K x K), R (M x K dense, float32 for float32 input unless ``stats_dtype`` says otherwise) and one
mini-batch — never the stream (:class:`rlsi.models.stats.TopicStatistics`).

Cost of an embedded iteration. The projection (``Φ = X_t U``: from the live rows of U as CSR when the
batch is large, :meth:`rlsi.models.active_rows.ActiveRows.projection_topics`), the batch's rows of R
(one fused kernel per block of terms, :meth:`rlsi.models.stats.PendingBatch.assign`) and the U-step on the rows that can be
non-zero (:class:`rlsi.models.active_rows.ActiveRows`: each row solved where it lies, ``UᵀU`` accumulated over the
non-zero weights) are the three kernels; their bookkeeping — which rows are live, each row's
``max_k |r_mk|``, ``UᵀU``, the topic change — is carried from one iteration and one mini-batch to the next
instead of being recomputed from the M x K arrays. With ξ > 1 and dense topics the ξ iterations run on a
compact copy of the rows they can touch (:class:`rlsi.models.active_rows.CompactBatch`: the batch's terms,
the live rows and the rows with ``max|r| > λ₁/2``, known when the batch opens), gathered once and scattered
back once — the same numbers as on the scattered rows of the M x K arrays, which a row (160 bytes at K = 20)
fetched from a different place for every use made cost more than its arithmetic; the ridge V-step then
runs on the block without the general V-step's per-block set-up. Nothing of a mini-batch costs M x K: the re-scaling is
lazy (R is kept as ``scale · R_stored`` and the U-step solved on the stored rows with ``(S/scale,
λ₁/scale)``, the same minimiser exactly; see :mod:`rlsi.models.stats`), and with ξ = 1 the batch's rows
of R are added to in place (no copy of them). Topics are a dense M x K array when that fits
(``RLSITuning.dense_max_bytes``), else CSR (7M terms x K = 500 would be 28 GB dense); both go through ActiveRows —
with CSR topics the rows solved are the new topics, since every other row is zero and stays zero. A term
absent from the mini-batch has no cheaper exact update: its row of R is only re-scaled, but S gains the
batch's ``WᵀW`` and λ₁ follows the weight, so its solution changes; only zero rows with
``max|r| <= λ₁/2`` are skipped (exactly optimal). Warm-started U-steps take at most ``topic_sweeps``
coordinate-descent sweeps per row (BatchRLSI's inexact U-step, see :func:`rlsi.models.rlsi_policy.topic_max_iter`);
``topic_sweeps=None`` solves each to ``inner_tol`` (the default caps them at 3, as BatchRLSI).

Time and re-scaling. The paper's t counts documents (η = 1). With mini-batches t still counts
documents: a batch of n documents takes t from t₀ to t₁ = t₀ + n and the old statistics are multiplied
by ``c = (t₀ / t₁)^ρ``. This is exactly the product of the per-document factors ``((j−1)/j)^ρ`` for
j = t₀+1..t₁ (the product telescopes), so the weight of the past does not depend on the batch size;
within a batch all documents have weight 1. At time t a document that arrived when the count reached
tᵢ has weight ``(tᵢ / t)^ρ``. ρ = 0 gives the basic algorithm (every document has weight 1 forever).

λ₁ over time (Eq. 7). The U-step at time t solves Eq. (7) with ``λ₁(t) = θ · n_t`` where ``n_t`` is the
*total weight of the documents in S_t and R_t* (``stats_.weight``):

* ρ = 0: ``n_t = t`` (documents seen, empty ones included), which is Eq. (7) ``λ₁ = θ t`` exactly;
* ρ > 0: ``n_t = Σᵢ (tᵢ/t)^ρ ≈ t / (1 + ρ)``: the statistics hold about t/(1+ρ) documents' worth of
  loss, and the penalty follows them. Keeping ``θ t`` with ρ > 0 would weigh the ℓ1 penalty (1 + ρ)
  times more than the data, i.e. topics would get sparser as ρ grows; with ``θ n_t`` the sparsity
  depends on λ₁ only, not on ρ.

``lambda1_scale`` has the meaning it has in :class:`rlsi.models.BatchRLSI`, so that one mini-batch
holding a whole corpus (ρ = 0) solves exactly the batch U-step:

* ``"per_doc"`` (default): θ = lambda1 / 1000 (``lambda1`` is the penalty per thousand documents),
  ``λ₁(t) = lambda1 · n_t / 1000`` — BatchRLSI uses ``lambda1 · N / 1000``;
* ``"paper"``: ``λ₁(t) = lambda1`` at every t (the λ₁ of Eq. 1 applied to the loss accumulated so far),
  i.e. θ = λ₁ / n_t as in Eq. (4) with N the documents seen; after one pass over N documents with ρ = 0
  this is the paper's θ t = λ₁. Early topics are then denser than late ones.

The λ₁ of the last U-step is ``lambda1_effective_``.

Initialisation (U₀, Algorithm 4 line 1). ``topic_init`` (topics of a previously fitted model, batch or
online, or a ``(K, M)`` array) is used as U₀ when given; S₀ = R₀ = 0 as in Algorithm 4, so the first
mini-batch re-fits the topics and the later ones refine them. Otherwise ``init="docs"`` (default) takes
K distinct non-empty documents of the first mini-batch, scaled to unit ℓ2 norm, as U₀ — the online
counterpart of BatchRLSI's ``init="docs"``: the first projection already sees topic structure and the
first U-step does not collapse to zero (a random U₀ gives V ≈ noise, and a large λ₁ then kills every
topic). When the first batch has fewer than K non-empty documents the remaining topics are random
Gaussian combinations of the non-empty ones (still distinct, still in the span of real documents).
``init="random"`` is the paper's random U₀ (Gaussian, unit-norm columns), for comparison. A batch with
no non-empty document does not initialise the topics; it only counts in t.

Growing vocabulary. ``partial_fit`` accepts a batch with *more* columns than seen so far: the new
columns are taken to be new terms appended at the end (as :class:`rlsi.text.stream.StreamingTfidf`
produces them). U and R grow by zero rows — the rows of U are independent lasso problems, so a new term
simply starts with no weight and acquires topic weights as its row of R fills — and ``n_features_in_``
becomes the new width. Fewer columns than ``n_features_in_`` is an error (columns are never removed).

Dead topics and new themes. A topic whose weights all become zero gets v_k = 0 for every later
document, so the statistics stop feeding it; with ρ > 0 its old statistics fade too. It can come back
only through the coupling of S (other topics moving). Symmetrically, Algorithm 4 cannot learn a theme
whose documents share no term with the current topics: they project to v = 0 and add nothing to S or R.
``reseed_dead=True`` (not in the paper; the remedy of Mairal et al. 2010, §3.4.3, the source of the
re-scaling) gives such capacity back: before a mini-batch, every dead topic is replaced by one of the
batch's documents that the live topics explain worst — only documents with less than 10% of ‖d‖²
explained qualify, i.e. a theme the model does not cover — scaled to unit norm, and its row/column of
S and column of R are zeroed (it starts without history). The tracker (:mod:`rlsi.tracking`) reports
a topic that comes back, either way, as a new life of the same index (``T7.2``).

Persistence. ``rlsi.io.save(path, model=online)`` stores the full online state — topics, S, R, t, the
total weight, the random generator — pickle-free; a loaded model continues the stream as one that never
stopped. The result is bit-identical when the model held its topics sparse at the save; a model that held
them dense (topics of many non-zeros) is loaded with sparse topics, its next products are summed in another
order, and the topics agree to rounding (differences below 1e-15 for entries of order 1).
"""

from __future__ import annotations

import json
import logging

import numpy as np
import scipy.sparse as sp

from .._params import BATCH_SIZE, N_INNER, PASSES, Anything, Boolean, Choice, Integer, Real
from .._progress import progress_bar
from .._validation import check_matrix, check_random_state
from ..errors import RLSIError
from ..gpu.backend import DEVICES, is_device
from ..io import register
from ..kernels.threads import compute_threads
from ..kernels.convert import csr_rows_to_dense, dense_to_csr
from ..kernels.products import csr_csr_dense
from . import steps
from .regularization import DEFAULT_LAMBDA1, DEFAULT_LAMBDA2, INITS, LAMBDA1_SCALES, effective_lambda1
from .base import check_fitted
from .host_statistics import HostStatistics
from .rlsi_policy import TOPIC_SWEEPS, topic_max_iter
from .seeding import given_topics, pick_seed_documents, unit_topics
from .penalties import SolverSettings
from .penalties import penalty as get_penalty
from .squared import SquaredLossModel
from .active_rows import ActiveRows, CompactBatch
from .minibatch import LocalProjection, batch_rows
from .stats import TopicStatistics

log = logging.getLogger(__name__)

_BIT_GENERATORS = {"PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"}
# a document seeds a dead topic only if the live topics explain less than 10% of ‖d‖² (a new theme)
RESEED_MIN_UNEXPLAINED = 0.9


@register("OnlineRLSI")
class OnlineRLSI(SquaredLossModel):
    """Online Regularized Latent Semantic Indexing (TOIS Algorithm 4 with §5.4's improvements).

    See the module docstring for the algorithm, the λ₁ scale over time, the initialisation, the growing
    vocabulary and persistence.

    Parameters
    ----------
    n_components : int, default 20 — K.
    lambda1 : float, default 0.01 — topic regularization (see ``lambda1_scale``); larger is sparser.
    lambda2 : float, default 1e-3 — document regularization λ₂ (as BatchRLSI).
    topic_penalty, doc_penalty : {"l1", "l2"}, default "l1", "l2".
    lambda1_scale : {"per_doc", "paper"}, default "per_doc".
    rho : float >= 0, default 0.0 — re-scaling exponent ρ (0: no forgetting; the paper tracks with ρ = 1).
    batch_size : int, default 256 — mini-batch size η used by ``fit`` (``partial_fit`` takes the batch
        it is given).
    n_inner : int, default 5 — embedded iterations ξ per mini-batch (the paper tracks with ξ = 10; before a
        classifier one pass over shuffled 20 Newsgroups gives 53.9 % at ξ = 1, 59.9 % at ξ = 5, batch 59.3 %).
    n_passes : int, default 1 — passes over X in ``fit``.
    shuffle : bool, default False — ``fit`` visits documents in a random order (each pass); the default
        keeps the order of X, which is the stream's order (e.g. time).
    init : {"docs", "random"}, default "docs" — U₀ when ``topic_init`` is None.
    topic_init : None, a fitted RLSI model, or (K, M) array/sparse — U₀ from previous topics.
    reseed_dead : bool, default False — re-seed all-zero topics from unexplained documents (see the
        module docstring; off by default: Algorithm 4 as published).
    inner_max_iter, inner_tol : coordinate-descent sweeps per row and stopping rule.
    topic_sweeps : None or int, default 3 — coordinate-descent sweeps per term row in every warm-started
        U-step (all but the first U-step of the stream, which is solved to ``inner_tol``), as
        :class:`rlsi.models.BatchRLSI`'s parameter of that name (:func:`rlsi.models.rlsi_policy.topic_max_iter`);
        None solves every U-step to ``inner_tol`` (at most ``inner_max_iter`` sweeps): Algorithm 4's exact
        U-steps. At the default λ's one pass over shuffled 20 Newsgroups (K = 30) takes 6.0 CPU s capped
        against 7.6 exact, 59.9 % against 59.7 % before a classifier (``benchmarks/probes/
        probe_online_defaults.py``); at ρ = 1, ξ = 10, λ₂ = 1 warm rows converge in about 2 sweeps anyway.
    stats_dtype : None, "float64" or "float32", default None — dtype of the statistics R (M x K); None: that
        of the first X of the stream (``fit``'s X). float32 halves the largest array of an online fit with a
        large vocabulary (7M terms x K = 500: 14 GB instead of 28 GB); each mini-batch's rows of R are then
        summed in float64 and rounded once when stored, so the rounding is one float32 rounding per row
        touched per mini-batch, relative 6e-8 each (measured drift against float64: tests/models/
        test_online.py and the README's "Memory of an online fit"). S (K x K) stays float64.
    random_state : None, int or Generator.
    n_jobs : None or int — numba threads.
    verbose : int — 1 shows a progress bar in ``fit`` (documents per second).
    device : {"cpu", "cuda", "cuda:float64", ...}, default "cpu" — where the steps run (:mod:`rlsi.gpu.online`).

    Attributes
    ----------
    components_ : CSR (n_components, n_features) float64 — the current topics Uᵀ.
    stats_ : TopicStatistics — S, R, documents seen and their total weight (on a device: copied when read).
    n_docs_seen_ : int — t, documents processed (repeats over passes count again).
    n_batches_ : int — mini-batch steps done (also ``n_iter_``).
    lambda1_effective_ : float — λ₁ of the last U-step.
    u_change_ : float — ‖U_t − U_{t−1}‖_F of the last mini-batch.
    topics_initialized_ : bool — False until a batch with a non-empty document has been seen.
    n_reseeded_ : int — dead topics re-seeded so far (``reseed_dead``).
    n_features_in_ : int — current vocabulary size.
    """

    _parameter_constraints = {
        "lambda1_scale": Choice(LAMBDA1_SCALES),
        "init": Choice(INITS),
        "rho": Real(low=0.0),
        "batch_size": BATCH_SIZE,
        "n_inner": N_INNER,
        "n_passes": PASSES,
        "shuffle": Boolean(),
        "reseed_dead": Boolean(),
        "topic_init": Anything(),  # checked by seeding.given_topics when the stream starts
        "topic_sweeps": Integer(low=1, none=True),
        "stats_dtype": Choice((None, "float64", "float32")),
        "random_state": Anything(),
        "device": Choice(DEVICES),
    }
    _state_scalars = ("n_iter_", "n_features_in_", "lambda1_effective_", "n_batches_", "n_docs_seen_",
                      "u_change_", "topics_initialized_", "rng_state_", "n_reseeded_")
    _state_arrays = ("components_",)
    stats_ = HostStatistics()  # after a device step: copied from the card when read
    #: Whether :meth:`_projection` projects the batches in this process (a compact block of the rows a batch
    #: touches, ξ > 1, projects it here too).
    _projects_here = True

    def __init__(self, n_components=20, *, lambda1=DEFAULT_LAMBDA1, lambda2=DEFAULT_LAMBDA2, topic_penalty="l1",
                 doc_penalty="l2", lambda1_scale="per_doc", rho=0.0, batch_size=256, n_inner=5,
                 n_passes=1, shuffle=False, init="docs", topic_init=None, reseed_dead=False,
                 inner_max_iter=100, inner_tol=1e-4, topic_sweeps=TOPIC_SWEEPS, stats_dtype=None,
                 random_state=None, n_jobs=None, verbose=0, device="cpu"):
        self.n_components = n_components
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.topic_penalty = topic_penalty
        self.doc_penalty = doc_penalty
        self.lambda1_scale = lambda1_scale
        self.rho = rho
        self.batch_size = batch_size
        self.n_inner = n_inner
        self.n_passes = n_passes
        self.shuffle = shuffle
        self.init = init
        self.topic_init = topic_init
        self.reseed_dead = reseed_dead
        self.inner_max_iter = inner_max_iter
        self.inner_tol = inner_tol
        self.topic_sweeps = topic_sweeps
        self.stats_dtype = stats_dtype
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device

    # ------------------------------------------------------------------ parameters
    def lambda1_at(self, weight):
        """λ₁ of the U-step when the statistics hold documents of total weight ``weight``."""
        return effective_lambda1(self.lambda1, self.lambda1_scale, weight)

    def decay_at(self, t0, n):
        """Re-scaling factor ``(t0 / (t0 + n))^ρ`` applied to the old statistics before a batch of n."""
        return 1.0 if self.rho == 0 or t0 == 0 else (t0 / (t0 + n)) ** float(self.rho)

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None):
        """Reset and learn from X (n_samples x n_features) in mini-batches of ``batch_size``, ``n_passes``
        times (in X's order unless ``shuffle``). Returns self."""
        if is_device(self.device):  # the same stream of mini-batches on the device
            from ..gpu.online import fit_online
            return fit_online(self, X)
        self._validate_params()
        X = self._check_X(X, reset=True)
        self._reset(X.dtype)
        N = X.shape[0]
        bar = progress_bar(N * self.n_passes, "OnlineRLSI", verbose=self.verbose, unit="doc", unit_scale=True,
                           smoothing=0.1)
        try:
            with compute_threads(self.n_jobs):
                for _ in range(self.n_passes):
                    order = self._rng.permutation(N) if self.shuffle else None
                    for a in range(0, N, self.batch_size):
                        b = min(N, a + self.batch_size)
                        self._step(batch_rows(X, a, b) if order is None else batch_rows(X, np.sort(order[a:b])))
                        if bar is not None:
                            bar.update(b - a)
        finally:
            if bar is not None:
                bar.close()
        self._publish()
        return self

    def partial_fit(self, X, y=None):
        """One online step (ξ embedded iterations) on the mini-batch X. Returns self."""
        self.partial_fit_transform(X)
        return self

    def partial_fit_transform(self, X, y=None):
        """Like :meth:`partial_fit`; returns the batch's document vectors W (n_samples x n_components)
        — the projections stored in the statistics, made with the topics before this step's last
        U-update (Algorithm 4's v_t)."""
        if is_device(self.device):
            from ..gpu.online import partial_fit_transform
            return partial_fit_transform(self, X)
        X = self._check_partial_input(X)
        with compute_threads(self.n_jobs):
            W = self._step(X)
        self._publish()
        return W.astype(X.dtype, copy=False)

    # ------------------------------------------------------------------ internals
    def _check_partial_input(self, X, on_new_stream=lambda X: None):
        """X of a ``partial_fit``; the first starts the stream (after ``on_new_stream(X)``, a placement's checks)."""
        if not HostStatistics.present(self):  # (statistics on a card are not copied for this)
            self._validate_params()
            X = check_matrix(X)
            on_new_stream(X)
            self._reset(X.dtype)
            self.n_features_in_ = X.shape[1]
        else:
            X = check_matrix(X)
        if X.shape[1] < self.n_features_in_:
            raise RLSIError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                            f"{self.n_features_in_} features as input (new terms may be appended as new columns, "
                            "but columns are never removed)")
        return X

    def _reset(self, dtype=np.float64):
        """Start a new stream; ``dtype``: that of its first X (the statistics' dtype when ``stats_dtype`` is
        None)."""
        for key in ("stats_", "components_", "n_iter_", "lambda1_effective_", "u_change_"):
            if hasattr(self, key):
                delattr(self, key)
        self._rng = check_random_state(self.random_state)
        self._U = None
        self._row_cache = None  # the RowCache of the last mini-batch (row maxima of R, live rows, G)
        self.n_features_in_ = 0
        K = self.n_components
        self.stats_ = TopicStatistics(K, 0, self._stats_dtype(dtype))
        self.n_batches_ = 0
        self.n_docs_seen_ = 0
        self.topics_initialized_ = False
        self.lambda1_effective_ = 0.0
        self.u_change_ = 0.0
        self.n_reseeded_ = 0
        self._init_comp = None if self.topic_init is None else given_topics(self.topic_init)
        if self._init_comp is not None and self._init_comp.shape[0] != K:
            raise RLSIError(f"topic_init has {self._init_comp.shape[0]} topics but n_components={K}")

    def _stats_dtype(self, dtype):
        """The dtype of R: ``stats_dtype``, or float32 for float32 input and float64 otherwise."""
        if self.stats_dtype is not None:
            return np.dtype(self.stats_dtype)
        return np.dtype(np.float32) if np.dtype(dtype) == np.float32 else np.dtype(np.float64)

    def _topic_sweeps(self, warm):
        """``max_iter`` of a U-step: capped at ``topic_sweeps`` when warm-started (see the parameter)."""
        return topic_max_iter(self.inner_max_iter, self.topic_sweeps, warm=warm)

    def _grow(self, M):
        """Make U and R span M terms (new terms get zero rows)."""
        old = self.stats_.n_terms
        if M <= old:
            return
        self.stats_.grow(M - old)
        self._row_cache = None
        if isinstance(self._U, np.ndarray):
            self._U = np.concatenate([self._U, np.zeros((M - old, self.n_components))])
        elif self._U is not None:
            U = self._U
            indptr = np.concatenate([U.indptr, np.full(M - old, U.indptr[-1], dtype=U.indptr.dtype)])
            self._U = sp.csr_matrix((U.data, U.indices, indptr), shape=(M, self.n_components))
        self.n_features_in_ = M

    def _initial_topics(self, X):
        """U₀ (M x K CSR) for the first batch with a non-empty document, or None (see module docstring)."""
        M, K = X.shape[1], self.n_components
        if self._init_comp is not None:
            comp = self._init_comp
            if comp.shape[1] > M:
                raise RLSIError(f"topic_init has {comp.shape[1]} terms but the stream's first batch has "
                                f"{M}; use the vectorizer of the initial model (new terms are appended)")
            U0 = comp.T.tocsr()
            return sp.csr_matrix((U0.data, U0.indices, np.concatenate(
                [U0.indptr, np.full(M - comp.shape[1], U0.indptr[-1], dtype=U0.indptr.dtype)])),
                shape=(M, K))
        rng = self._rng
        if self.init == "random":
            U0 = rng.standard_normal((M, K)) / np.sqrt(M)
            return sp.csr_matrix(U0)
        nonempty = np.flatnonzero(np.diff(X.indptr) > 0)
        if len(nonempty) == 0:
            return None
        if len(nonempty) >= K:
            U0 = unit_topics(X[pick_seed_documents(nonempty, K, X.shape[0], rng)])
        else:  # fewer documents than topics: the others are random mixtures of them
            base = X[nonempty]
            mix = rng.standard_normal((K - len(nonempty), len(nonempty)))
            U0 = unit_topics(sp.vstack([base, sp.csr_matrix(mix) @ base], format="csr"))
        U0.eliminate_zeros()
        return U0

    @staticmethod
    def batch_nbytes(n_docs, nnz, itemsize, n_components):
        """Bytes :meth:`_step` allocates for a mini-batch of ``n_docs`` documents besides its statistics: the
        float64 copy of X's values (none for float64 X: its rows are views) and W (float64)."""
        return (8 * int(nnz) if int(itemsize) != 8 else 0) + steps.doc_vectors_nbytes(n_docs, n_components, 8)

    def _open_batch(self, X):
        """What every mini-batch step does first: float64 X, vocabulary grown to X's width, topics
        initialised from the first non-empty batch (or dead ones re-seeded). Returns (X, n, M, t0)."""
        X = X.astype(np.float64, copy=False)
        n, M = X.shape
        self._grow(M)
        t0 = self.stats_.n_docs
        if self._U is None:
            U0 = self._initial_topics(X)
            if U0 is not None:
                self._U = U0
                self.topics_initialized_ = True
        elif self.reseed_dead:
            self._U = self._reseed(X, self._csr_topics())
        return X, n, M, t0

    def _projection(self, X):
        """Where this mini-batch's documents are projected on the topics (:class:`LocalProjection`: here)."""
        return LocalProjection(self, X)

    def _step(self, X):
        """One mini-batch of Algorithm 4; returns W (float64). X: CSR with >= n_features_in_ columns."""
        warm = self.topics_initialized_  # U-steps done before: every U-step of this batch is warm-started
        X, n, M, t0 = self._open_batch(X)
        stats = self.stats_
        # re-scales lazily (O(K²), not M x K); with ξ = 1 the batch's rows of R are added to in place
        pending = stats.begin_batch(X, self.decay_at(t0, n), repeat=self.n_inner > 1 and self._U is not None)
        lam1 = self.lambda1_at(stats.weight + n)
        W = np.zeros((n, self.n_components))
        if self._U is None:  # nothing to learn from yet: only count the documents
            pending.assign(W)
        else:
            U = self._working_topics()
            dense = isinstance(U, np.ndarray)
            # ℓ1 topics (dense or CSR): only the rows that can be non-zero are solved (ActiveRows)
            active = get_penalty(self.topic_penalty).norm == "l1"
            rows = blk = None
            if active:  # the row maxima and live rows of the previous mini-batch, when U is the same
                cache = self._row_cache if self._row_cache is not None and self._row_cache.U is U else None
                # ξ > 1 on dense topics: the iterations run on a contiguous copy of the rows they touch (which
                # projects the batch here: only for a local projection)
                compact = self._tuning.online_compact and dense and self.n_inner > 1 and self._projects_here
                rows = ActiveRows(stats, U, lam1, cache=cache, track_change=dense and not compact,
                                  single_solve=self.n_inner == 1)
                if compact:
                    blk = CompactBatch.open(rows, U, X, pending)
                    if blk is None:  # too large a block: the scattered rows, whose change is tracked by rows
                        rows.track_change(U)
            self._row_cache = None
            if blk is not None:  # U is updated in place
                W = self._iterate_compact(blk, warm)
            else:
                W, U = self._iterate(X, U, pending, rows, lam1, warm)
            self._U = U
            if active:
                self._row_cache = rows.cache_for(U)
        self.lambda1_effective_ = lam1
        self.n_batches_ += 1
        self.n_docs_seen_ = stats.n_docs
        return W

    def _iterate_compact(self, blk, warm):
        """The ξ embedded iterations on a :class:`rlsi.models.active_rows.CompactBatch` (U updated in place when
        it closes); sets ``u_change_``, returns the last W."""
        W = None
        for it in range(self.n_inner):
            W = blk.doc_vectors(self.doc_penalty, self.lambda2, W, max_iter=self.inner_max_iter, tol=self.inner_tol)
            blk.assign(W)
            blk.solve(self.topic_penalty, max_iter=self._topic_sweeps(warm or it > 0), tol=self.inner_tol)
        self.u_change_ = blk.close()
        return W

    def _iterate(self, X, U, pending, rows, lam1, warm):
        """The ξ embedded iterations on the M x K arrays (``rows``: the ActiveRows of ℓ1 topics, else None);
        sets ``u_change_``, returns ``(W, U)``. The projection of the batch is :meth:`_projection`'s."""
        stats, M = self.stats_, X.shape[1]
        dense = isinstance(U, np.ndarray)
        U_before = None if rows is not None and dense else U  # dense: the solved rows' old values are kept by rows
        project = self._projection(X)
        W = None
        for it in range(self.n_inner):
            # with tracked live rows, G = UᵀU needs no scan of the whole M x K array
            G = rows.gram(U) if rows is not None else steps.topic_gram(U)
            W = project(U, rows, G, W, pending)
            sweeps_cap = self._topic_sweeps(warm or it > 0)
            if rows is not None:
                U = rows.solve(U, pending.cols, self.topic_penalty, max_iter=sweeps_cap, tol=self.inner_tol,
                               col_max=pending.rowmax)
            else:  # the stored rows of R with (S/scale, λ/scale): the same minimiser (stats.py)
                S, lam = stats.scaled_problem(lam1)
                U, _ = steps.update_topics(
                    stats.stored_rows, get_penalty(self.topic_penalty).prepared(S, lam), U,
                    SolverSettings(sweeps_cap, self.inner_tol), n_terms=M, dense=dense)
        if rows is not None and dense:
            self.u_change_ = rows.change(U)
        else:
            self.u_change_ = steps.topic_change(U, U_before)
        return project.vectors(W), U

    def _working_topics(self):
        """U for the steps of a mini-batch: a dense M x K array when it fits (``tuning.dense_max_bytes``; the
        statistics R are M x K already), so that the ξ embedded U-steps solve rows in place instead of
        converting every block between CSR and dense; the same numbers either way."""
        U = self._U
        if sp.issparse(U) and U.shape[0] * U.shape[1] * 8 <= self._tuning.dense_max_bytes:
            return csr_rows_to_dense(sp.csr_matrix(U), 0, U.shape[0], dtype=np.float64)
        return U

    def _csr_topics(self):
        """The current topics U (M x K) as CSR."""
        U = self._U
        if isinstance(U, np.ndarray):
            return dense_to_csr(U)
        return U

    def _reseed(self, X, U):
        """Re-seed dead topics with the batch's worst-explained documents (see ``reseed_dead``)."""
        K = self.n_components
        dead = np.flatnonzero(np.bincount(U.indices, minlength=K) == 0)
        if len(dead) == 0 or X.nnz == 0:
            return U
        W, _ = steps.update_doc_vectors(X, U, penalty=self.doc_penalty, lam=self.lambda2,
                                         settings=self._inner_settings(), dtype=np.float64)
        Phi = csr_csr_dense(X, U, dtype=np.float64)
        G = (U.T @ U).toarray()
        x2 = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        resid = x2 - 2.0 * np.einsum("ij,ij->i", Phi, W) + np.einsum("ij,ij->i", W @ G, W)
        rel = np.divide(resid, x2, out=np.zeros_like(resid), where=x2 > 0)
        cand = np.flatnonzero(rel >= RESEED_MIN_UNEXPLAINED)
        if len(cand) == 0:
            return U
        cand = cand[np.argsort(-resid[cand], kind="stable")][: len(dead)]
        ks = dead[: len(cand)]
        seeds = X[cand].multiply(1.0 / np.sqrt(x2[cand])[:, None]).tocsr()   # one unit-norm doc per topic
        place = sp.csr_matrix((np.ones(len(ks)), (ks, np.arange(len(ks)))), shape=(K, len(ks)))
        U = (U + (place @ seeds).T).tocsr()
        U.eliminate_zeros()
        self.stats_.reset_topics(ks)
        self._row_cache = None
        self.n_reseeded_ += len(ks)
        log.debug("re-seeded dead topics %s from documents %s of the batch", ks.tolist(), cand.tolist())
        return U

    def _publish(self):
        """Expose the current topics as ``components_`` (K x M)."""
        K, M = self.n_components, self.n_features_in_
        if self._U is None:
            self._set_components(sp.csr_matrix((K, M), dtype=np.float64))
        else:
            self._set_components(self._csr_topics().T.tocsr())
        self.n_iter_ = self.n_batches_
        self.rng_state_ = json.dumps(self._rng.bit_generator.state)

    # ------------------------------------------------------------------ persistence (rlsi.io)
    def _to_state(self):
        check_fitted(self)
        saved_init = self.topic_init
        init_arr = None if saved_init is None else given_topics(saved_init)
        try:
            self.topic_init = None  # stored as an array below, not as a JSON parameter
            meta, arrays = super()._to_state()
        finally:
            self.topic_init = saved_init
        meta["params"]["topic_init"] = None
        stats_meta, stats_arrays = self.stats_._to_state()
        meta["stats"] = stats_meta
        meta["has_topic_init"] = init_arr is not None
        arrays.update({f"stats_{k}": v for k, v in stats_arrays.items()})
        if init_arr is not None:
            arrays["topic_init"] = init_arr
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = super()._from_state(meta, arrays)
        if meta.get("has_topic_init"):
            est.topic_init = arrays["topic_init"]
        est.stats_ = TopicStatistics._from_state(meta["stats"], {"S": arrays["stats_S"], "R": arrays["stats_R"]})
        if est.stats_.n_terms != est.n_features_in_ or est.stats_.n_components != est.n_components:
            raise RLSIError(f"statistics of {est.stats_.n_terms} terms x {est.stats_.n_components} topics do "
                             f"not match the model ({est.n_features_in_} x {est.n_components})")
        est._set_components(sp.csr_matrix(est.components_, dtype=np.float64, copy=True))
        est._U = est.components_.T.tocsr() if est.topics_initialized_ else None
        est._row_cache = None
        try:
            state = json.loads(est.rng_state_)
            name = state["bit_generator"]
        except (TypeError, ValueError, KeyError):
            raise RLSIError("the saved random generator state is damaged") from None
        if name not in _BIT_GENERATORS:  # a name from the file: never look it up freely in np.random
            raise RLSIError(f"the saved random generator {name!r} is not one of {sorted(_BIT_GENERATORS)}")
        bitgen = getattr(np.random, name)()
        bitgen.state = state
        est._rng = np.random.Generator(bitgen)
        est._init_comp = None if est.topic_init is None else given_topics(est.topic_init)
        return est


__all__ = ["OnlineRLSI"]
