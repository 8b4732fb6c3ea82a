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

Cost of an embedded iteration: see :mod:`rlsi.models.host_stream` (the stream in this process: the row
state carried between mini-batches, the compact block of ξ > 1, the lazy re-scaling); topics are a dense M x K
array when that fits (``RLSITuning.dense_max_bytes``), else CSR (7M terms x K = 500 would be 28 GB dense). A
term absent from the mini-batch has no cheaper exact update: its row of R is only re-scaled, but S gains the
batch's ``WᵀW`` and λ₁ follows the weight, so its solution changes; only zero rows with ``max|r| <= λ₁/2`` are
skipped (exactly optimal). Warm-started U-steps take at most ``topic_sweeps`` coordinate-descent sweeps per row
(BatchRLSI's inexact U-step, see :func:`rlsi.models.rlsi_policy.topic_max_iter`); ``topic_sweeps=None`` solves
each to ``inner_tol`` (the default caps them at 3, as BatchRLSI).

Where the stream lives is the model's placement (:mod:`rlsi.models.placement`): the statistics and topics in
this process (:class:`rlsi.models.host_stream.HostStream`), the projections of each mini-batch on a Dask cluster
(:class:`rlsi.distributed.DaskOnlineRLSI`) or everything on a card (``device="cuda"``,
:class:`rlsi.gpu.online.DeviceStream`). The mini-batch step below (:meth:`OnlineRLSI._learn`) and its
bookkeeping are the same on all of them; ``fit`` and ``partial_fit`` are the streaming skeleton's
(:class:`rlsi.models.streaming.StreamingFit`).

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
a topic that comes back, either way, as a new life of the same index (``T7.2``). ``birth`` (off by default)
adds topics instead: when a mini-batch leaves documents whose residuals are large and coherent, and the next
one agrees, a topic seeded from them joins with the next free id, up to ``max_components``
(:mod:`rlsi.models.birth`: the tests, and why they do not fire on noise); ``components_`` grows by rows,
``births_`` records each birth with the stream positions of the documents that caused it.

Persistence. ``rlsi.io.save(path, model=online)`` stores the full online state — topics, S, R, t, the
total weight, the random generator — pickle-free; a loaded model continues the stream as one that never
stopped. The result is bit-identical when the model held its topics sparse at the save; a model that held
them dense (topics of many non-zeros) is loaded with sparse topics, its next products are summed in another
order, and the topics agree to rounding (differences below 1e-15 for entries of order 1).
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from .._params import BATCH_SIZE, N_INNER, PASSES, Anything, Boolean, Choice, Integer, Real
from .._validation import check_matrix, check_random_state, generator_from_state, generator_state
from ..errors import RLSIError
from ..io import register
from . import steps
from .base import check_fitted
from .birth import BirthValue, BirthWatch, check_births, reseed_dead_topics, resolve_birth
from .regularization import DEFAULT_LAMBDA1, DEFAULT_LAMBDA2, INITS, LAMBDA1_SCALES, effective_lambda1
from .rlsi_policy import TOPIC_SWEEPS, topic_max_iter
from .seeding import given_topics, pick_seed_documents, unit_topics
from .seeds import DEFAULT_SEED_STRENGTH, SeedStrength, SeedTermsValue, saved_seeds, seeds_of
from .spec import RLSISpec
from .squared import SquaredLossModel
from .stats import TopicStatistics
from .streaming import StreamingFit, StreamStatistics

log = logging.getLogger(__name__)

# a document seeds a dead topic only if the live topics explain less than 10% of ‖d‖² (a new theme)
RESEED_MIN_UNEXPLAINED = 0.9


@register("OnlineRLSI")
class OnlineRLSI(StreamingFit, SquaredLossModel):
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
        module docstring; off by default: Algorithm 4 as published); a dead seeded topic starts again on its
        seed words instead.
    birth : None, bool, a :class:`rlsi.models.birth.TopicBirth` or a dict of its fields, default None — add a
        topic when a theme no topic covers arrives (None/False: off, Algorithm 4 as published; True: the
        default tests of :class:`~rlsi.models.birth.TopicBirth`).
    max_components : None or int — the most topics births may reach (None: ``2 * n_components``).
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
    placement : None, a name or a placement object — where the stream lives (:mod:`rlsi.models.placement`): None
        or "local" this process; "cuda", "cuda:float64", "numpy" a device (:mod:`rlsi.gpu.online`); "dask" the
        projections of each mini-batch on a LocalCluster (:class:`rlsi.distributed.DaskOnlineRLSI` for a given
        cluster). A stream may change placement between two ``partial_fit`` calls: it goes on from its
        statistics and topics.
    device : {"cpu", "cuda", "cuda:float64", ...}, default "cpu" — the spelling of a device placement
        (``device="cuda"`` is ``placement="cuda"``).
    tuning : None, an :class:`rlsi.models.rlsi_policy.RLSITuning` or a dict of its fields — the numbers behind
        the stream's decisions (dense or CSR topics, the compact block; :meth:`with_tuning`).
    seed_terms, seed_strength : seed words, as :class:`rlsi.models.BatchRLSI` (:mod:`rlsi.models.seeds`); term
        strings are looked up in the ``feature_names`` of the ``fit`` or first ``partial_fit``; streams in this
        process or with projections on a Dask cluster (not on a device).

    Attributes
    ----------
    components_ : CSR (n_components, n_features) float64 — the current topics Uᵀ.
    stats_ : TopicStatistics — S, R, documents seen and their total weight (on a device: copied when read, at
        most once per mini-batch).
    n_docs_seen_ : int — t, documents processed (repeats over passes count again).
    n_batches_ : int — mini-batch steps done (also ``n_iter_``).
    lambda1_effective_ : float — λ₁ of the last U-step.
    u_change_ : float — ‖U_t − U_{t−1}‖_F of the last mini-batch.
    topics_initialized_ : bool — False until a batch with a non-empty document has been seen.
    n_reseeded_ : int — dead topics re-seeded so far (``reseed_dead``).
    n_features_in_ : int — current vocabulary size.
    seed_terms_, topic_names_ : the seed groups' column ids and the topics' labels (with ``seed_terms``).
    n_components_ : int — topics now (``n_components`` plus the topics born).
    births_ : list of dicts — each birth: ``topic`` (its index), ``batch`` (the mini-batch, from 0), ``n_docs_seen``,
        ``documents`` (stream positions of the documents that caused it: t before their mini-batch + row) and
        ``coherence`` (the test's value, :mod:`rlsi.models.birth`).
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
        "birth": BirthValue(),
        "max_components": Integer(low=1, none=True),
        "topic_init": Anything(),  # checked by seeding.given_topics when the stream starts
        "topic_sweeps": Integer(low=1, none=True),
        "stats_dtype": Choice((None, "float64", "float32")),
        "random_state": Anything(),
        "seed_terms": SeedTermsValue(),
        "seed_strength": SeedStrength(),
    }
    _state_scalars = ("n_iter_", "n_features_in_", "lambda1_effective_", "n_batches_", "n_docs_seen_",
                      "u_change_", "topics_initialized_", "rng_state_", "n_reseeded_", "seed_terms_", "topic_names_",
                      "n_components_")
    _state_arrays = ("components_",)
    stats_ = StreamStatistics()  # the placed stream's statistics, as host TopicStatistics

    def __init__(self, n_components=20, *, lambda1=DEFAULT_LAMBDA1, lambda2=DEFAULT_LAMBDA2, topic_penalty="l1",
                 doc_penalty="l2", lambda1_scale="per_doc", rho=0.0, batch_size=256, n_inner=5,
                 n_passes=1, shuffle=False, init="docs", topic_init=None, reseed_dead=False, birth=None,
                 max_components=None, inner_max_iter=100, inner_tol=1e-4, topic_sweeps=TOPIC_SWEEPS, stats_dtype=None,
                 random_state=None, n_jobs=None, verbose=0, placement=None, device="cpu", tuning=None,
                 seed_terms=None, seed_strength=DEFAULT_SEED_STRENGTH):
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
        self.birth = birth
        self.max_components = max_components
        self.inner_max_iter = inner_max_iter
        self.inner_tol = inner_tol
        self.topic_sweeps = topic_sweeps
        self.stats_dtype = stats_dtype
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.placement = placement
        self.device = device
        self.tuning = tuning
        self.seed_terms = seed_terms
        self.seed_strength = seed_strength

    # ------------------------------------------------------------------ parameters
    def lambda1_at(self, weight):
        """λ₁ of the U-step when the statistics hold documents of total weight ``weight``."""
        return effective_lambda1(self.lambda1, self.lambda1_scale, weight)

    def decay_at(self, t0, n):
        """Re-scaling factor ``(t0 / (t0 + n))^ρ`` applied to the old statistics before a batch of n."""
        return 1.0 if self.rho == 0 or t0 == 0 else (t0 / (t0 + n)) ** float(self.rho)

    def partial_fit_transform(self, X, y=None, **kwargs):
        """Like :meth:`partial_fit` (``feature_names`` on the first call: the seed words' vocabulary); returns the
        batch's document vectors W (n_samples x n_components) — the projections stored in the statistics, made
        with the topics before this step's last U-update (Algorithm 4's v_t)."""
        W = self._partial(X, y, kwargs)
        return W.astype(X.dtype, copy=False)

    # ------------------------------------------------------------------ the streaming skeleton's hooks
    def _stream_total(self, X):
        return X.shape[0] * self.n_passes

    def _stream_threads(self):
        return self._placement().threads(self.n_jobs)

    def _stream_started(self):
        return StreamStatistics.present(self)

    def _check_stream_input(self, X, y, feature_names=None):
        self._feature_names = feature_names  # the seed words' vocabulary, read when the stream starts
        return self._placement().check_stream_input(X, lambda X_: self._check_X(X_, reset=True)), y

    def _check_partial_input(self, X, y, new, feature_names=None):
        self._feature_names = feature_names
        X = self._placement().check_stream_input(X, check_matrix)
        if not new and X.shape[1] < self.n_features_in_:
            raise RLSIError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                            f"{self.n_features_in_} features as input (new terms may be appended as new columns, "
                            "but columns are never removed)")
        return X, y

    def _start_stream(self, X, y, partial=False):
        """A new stream: the state reset, and the placement's stream opened (which checks, on a device, that the
        statistics and a mini-batch of X fit: X whole for ``partial_fit``, a ``batch_size`` share of it for
        ``fit``)."""
        self._reset(X.dtype)
        seeds_of(self, X.shape[1], self.__dict__.pop("_feature_names", None))
        N = X.shape[0]
        docs = N if partial else min(self.batch_size, N)
        nnz = X.nnz if partial else int(X.nnz * min(1.0, self.batch_size / max(N, 1))) + 1
        self._open_stream(first=(X.shape[1], docs, nnz))

    def _mini_batches(self, X, y):
        N = X.shape[0]
        stream = self._stream
        for _ in range(self.n_passes):
            order = self._rng.permutation(N) if self.shuffle else None
            spans = [(a, min(N, a + self.batch_size)) if order is None else
                     np.sort(order[a:a + self.batch_size]) for a in range(0, N, self.batch_size)]
            for s, batch in zip(spans, stream.batches(X, spans)):
                yield batch, None, (s[1] - s[0]) if isinstance(s, tuple) else len(s)

    def _partial_batch(self, X):
        return self._the_stream().batch(X)

    def _close_stream(self):
        """After ``fit`` (also one that failed): what the placement started for the fit is released (a Dask
        cluster), the stream's state kept on the host."""
        stream = self.__dict__.get("_stream")
        if stream is not None and stream.release_after_fit:
            self._stats_host, self._topics_host = stream.statistics(), stream.topics()
            stream.release()
            del self._stream

    # ------------------------------------------------------------------ the stream
    def _open_stream(self, first=None):
        """Open the placement's stream from the model's host state (new, loaded, or from another placement);
        ``first``: ``(n_terms, docs, nnz)`` of a new stream's mini-batches, for the placement's checks."""
        stats = self.__dict__.pop("_stats_host")
        topics = self.__dict__.pop("_topics_host", None)
        spec = RLSISpec.of(self, seeds=saved_seeds(self), n_components=self.n_components_)
        self._stream = self._placement().stream(spec, stats, topics, n_inner=self.n_inner, first=first)
        if spec.seeds is not None and not getattr(self._stream, "takes_seeds", False):
            self._stream.release()
            del self._stream
            raise RLSIError(f"seed_terms is not available on the {self._placement().name} placement's streams")
        return self._stream

    def _the_stream(self):
        """The stream on the model's placement: the one open, or one opened from the state it left (a loaded
        model, or a stream that was on another placement)."""
        stream = self.__dict__.get("_stream")
        key = self._placement().stream_key
        if stream is not None and stream.key == key:
            return stream
        if stream is not None:  # another placement: go on from its statistics and topics
            self._stats_host, self._topics_host = stream.statistics(), stream.topics()
            stream.release()
            del self._stream
        elif "_topics_host" not in self.__dict__:  # a loaded model: its topics are components_
            self._topics_host = self.components_.T.tocsr() if self.topics_initialized_ else None
        return self._open_stream()

    def _learn(self, batch, y, fitting):
        """One mini-batch of Algorithm 4 (the module docstring) on the placed stream; returns W (float64, n x K;
        None in ``fit``, which does not return the vectors)."""
        stream = self._the_stream()
        warm = self.topics_initialized_  # U-steps done before: every U-step of this batch is warm-started
        X = stream.host(batch)
        n, M = X.shape
        stream.grow(M)
        self.n_features_in_ = max(self.n_features_in_, M)
        t0 = stream.n_docs
        if not stream.has_topics:
            U0 = self._initial_topics(X)
            seeds = saved_seeds(self)
            if U0 is not None and seeds is not None and self._init_comp is None:
                U0 = seeds.first_topics(U0)  # the seeded topics start on their words
            if U0 is not None:
                stream.set_topics(U0)
                self.topics_initialized_ = True
        elif self.reseed_dead:
            U, topics = self._reseed(X, stream.topics())
            stream.reseed(U, topics)
        step = stream.begin(batch, self.decay_at(t0, n), self.n_inner)
        W = None
        if step.has_topics:
            for it in range(self.n_inner):
                W = step.project(W)
                step.solve(self._topic_sweeps(warm or it > 0))
        W, change = step.close(W, want_w=not fitting)
        if step.has_topics:
            self.u_change_ = change
        if self.birth not in (None, False) and stream.has_topics:
            self._watch_births(stream, X, t0)
        self.lambda1_effective_ = step.lam1
        self.n_batches_ += 1
        self.n_docs_seen_ = stream.n_docs
        return W

    # ------------------------------------------------------------------ internals
    def _reset(self, dtype=np.float64):
        """Start a new stream; ``dtype``: that of its first X (the statistics' dtype when ``stats_dtype`` is
        None)."""
        stream = self.__dict__.pop("_stream", None)
        if stream is not None:
            stream.release()
        for key in ("stats_", "components_", "n_iter_", "lambda1_effective_", "u_change_", "_watch"):
            if hasattr(self, key):
                delattr(self, key)
        self.__dict__.pop("_topics_host", None)
        self._rng = check_random_state(self.random_state)
        self.n_features_in_ = 0
        K = self.n_components
        self.stats_ = TopicStatistics(K, 0, self._stats_dtype(dtype))
        self._topics_host = None
        self.n_batches_ = 0
        self.n_docs_seen_ = 0
        self.topics_initialized_ = False
        self.lambda1_effective_ = 0.0
        self.u_change_ = 0.0
        self.n_reseeded_ = 0
        self.n_components_ = K
        self.births_ = []
        if self.birth not in (None, False) and self._max_components() < K:
            raise RLSIError(f"max_components={self.max_components} is less than n_components={K}")
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
        """Bytes a mini-batch step allocates for a mini-batch of ``n_docs`` documents besides its statistics: the
        float64 copy of X's values (none for float64 X: its rows are views) and W (float64)."""
        return (8 * int(nnz) if int(itemsize) != 8 else 0) + steps.doc_vectors_nbytes(n_docs, n_components, 8)

    def _project(self, X, U):
        """The V-step of the model on topics U (float64 W, n x K)."""
        return steps.update_doc_vectors(X, U, penalty=self.doc_penalty, lam=self.lambda2,
                                        settings=self._inner_settings(), dtype=np.float64)[0]

    def _max_components(self):
        return 2 * self.n_components if self.max_components is None else self.max_components

    def _watch_births(self, stream, X, t0):
        """After a mini-batch's step: a topic born of it joins the stream (``birth``; :mod:`rlsi.models.birth`)."""
        if "_watch" not in self.__dict__:
            self._watch = BirthWatch(resolve_birth(self.birth), self._project)
        born = self._watch.step(stream, X, t0) if self.n_components_ < self._max_components() else None
        if born is not None:
            self.n_components_ += 1
            self.births_.append(dict(born, batch=self.n_batches_))
            if getattr(self, "topic_names_", None) is not None:
                self.topic_names_ = self.topic_names_ + [None]  # a born topic has its id and no name

    def _reseed(self, X, U):
        """Re-seed dead topics (see ``reseed_dead``): ``(U, topics)``, the topics (M x K CSR) with the re-seeded
        ones replaced and the indices of those (empty: none). A dead seeded topic starts again on its seed words
        (:meth:`rlsi.models.seeds.SeedTerms.restart`: it keeps its name and waits for its theme); the others take
        the batch's worst-explained documents."""
        seeds = saved_seeds(self)
        waiting = np.zeros(0, dtype=np.int64)
        if seeds is not None:
            alive = np.bincount(U.indices, minlength=U.shape[1])[:len(seeds.groups)]
            waiting = np.flatnonzero(alive == 0)
            if len(waiting):
                U = seeds.restart(U, waiting)
        U, ks, cand = reseed_dead_topics(X, U, self._project, RESEED_MIN_UNEXPLAINED)
        if len(waiting):
            log.debug("dead seeded topics %s start again on their seed words", waiting.tolist())
        if len(ks):
            log.debug("re-seeded dead topics %s from documents %s of the batch", ks.tolist(), cand.tolist())
        ks = np.concatenate([waiting, ks])
        self.n_reseeded_ += len(ks)
        return U, ks

    def _publish(self):
        """Expose the current topics as ``components_`` (K x M) and the placement's own attributes."""
        K, M = self.n_components_, self.n_features_in_
        stream = self.__dict__.get("_stream")
        U = stream.topics() if stream is not None else self.__dict__.get("_topics_host")
        if U is None:
            self._set_components(sp.csr_matrix((K, M), dtype=np.float64))
        else:
            self._set_components(sp.csr_matrix(U).T.tocsr())
        self.n_iter_ = self.n_batches_
        self.rng_state_ = generator_state(self._rng)
        if stream is not None:
            for name, value in stream.attributes().items():
                setattr(self, name, value)

    # ------------------------------------------------------------------ persistence (rlsi.io)
    def __getstate__(self):
        """A pickled model keeps its stream's state on the host (a stream may hold a cluster or a card)."""
        state = self.__dict__.copy()
        stream = state.pop("_stream", None)
        if stream is not None:
            state["_stats_host"], state["_topics_host"] = stream.statistics(), stream.topics()
        return state

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
        meta["births"] = self.births_
        arrays.update({f"stats_{k}": v for k, v in stats_arrays.items()})
        if init_arr is not None:
            arrays["topic_init"] = init_arr
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = super()._from_state(meta, arrays)
        est.n_components_ = int(getattr(est, "n_components_", est.n_components))
        est.births_ = check_births(meta.get("births", []))
        if meta.get("has_topic_init"):
            est.topic_init = arrays["topic_init"]
        est.stats_ = TopicStatistics._from_state(meta["stats"], {"S": arrays["stats_S"], "R": arrays["stats_R"]})
        if est.stats_.n_terms != est.n_features_in_ or est.stats_.n_components != est.n_components_:
            raise RLSIError(f"statistics of {est.stats_.n_terms} terms x {est.stats_.n_components} topics do "
                             f"not match the model ({est.n_features_in_} x {est.n_components_})")
        est._set_components(sp.csr_matrix(est.components_, dtype=np.float64, copy=True))
        est._topics_host = est.components_.T.tocsr() if est.topics_initialized_ else None
        est._rng = generator_from_state(est.rng_state_)
        est._init_comp = None if est.topic_init is None else given_topics(est.topic_init)
        return est

    @classmethod
    def _params_from_state(cls, params):
        params = super()._params_from_state(params)
        if isinstance(params.get("birth"), dict):
            params["birth"] = resolve_birth(params["birth"])
        return params


__all__ = ["OnlineRLSI"]
