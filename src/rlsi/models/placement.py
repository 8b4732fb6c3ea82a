"""Where a learner's work runs: placements, one typed contract, registered by name.

A placement is a value — ``"local"`` (this process: numba threads, the executor's blocks), a Dask placement
(documents partitioned over the workers of a cluster), a device placement (``"cuda"``, ``"cuda:float64"``,
``"numpy"``: the arrays on a card) — given to a learner as a parameter (``BatchRLSI(placement=...)``). The
learners never branch on it and never import the packages that provide it: :func:`get_placement` resolves a
name through this registry, importing the provider named in :data:`rlsi.registry.PLACEMENTS` on first use, and
every provider registers its placements with :func:`register_placement` when it is imported.

The contract (:class:`Placement`; a placement implements the parts for the learners it serves):

=====================================  =====================================================================
``check_input(X, check)``              X as the placement takes it: a matrix it already holds (a CuPy
                                       matrix on the card, a Dask ``WorkerMatrix``) as it is, anything
                                       else through ``check`` (the learner's own input check);
                                       ``check_stream_input`` the same for a stream
``open(X)`` / ``close(executor)``      the executor of one fit (threads, a cluster) and its release
``threads(n_jobs)``                    the thread context the fit runs in
``corpus(X, spec, executor)``          the documents placed for one batch RLSI fit: a :class:`PlacedCorpus`
``stream(model, spec)``                the statistics of one online RLSI stream: a :class:`PlacedStream`
``fold_in(X, topics, **solver)``      ``transform``: the documents' vectors with the topics frozen
``saved_as``                           the JSON value a saved model's ``placement`` parameter holds
=====================================  =====================================================================

A :class:`PlacedCorpus` offers the primitives of the one start of a fit (:mod:`rlsi.models.start`: the first
topics, the λ₁ search, the problem) and builds the :class:`PlacedProblem` the skeleton alternates. What a
placement must keep equal: it computes the same blocks with the same kernels as the local placement and
reduces them in a fixed order, so that its numbers are the local ones bit for bit where its blocks are the
same (one Dask worker, the numpy device in float64 up to its own products) and to rounding otherwise.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol, runtime_checkable

from ..errors import RLSIError
from ..registry import DEVICES, PLACEMENTS, import_provider

__all__ = ["DEVICES", "Placement", "PlacedCorpus", "PlacedProblem", "PlacedStream", "PlacementValue",
           "get_placement", "placement_names", "register_placement", "resolve_placement"]

#: name -> factory(name, **options) of the registered placements
_REGISTRY: dict = {}


def register_placement(name, factory):
    """Register ``factory(name, **options) -> Placement`` under ``name`` (and ``name:anything``, which the
    factory reads: ``"cuda:float64"``). Providers call it when they are imported."""
    _REGISTRY[name] = factory
    return factory


def placement_names():
    """The placement names a string may give (the registered ones, and the providers' not imported yet)."""
    return sorted(set(PLACEMENTS) | set(_REGISTRY) | {d for d in DEVICES if d != "cpu"})


def get_placement(value, **options):
    """The :class:`Placement` of ``value``: a placement object as it is, or a name (``"local"``, ``"dask"``,
    ``"cuda"``, ``"cuda:float64"``, ``"numpy"`` ...) built by its registered factory with ``options`` (the
    learner's own settings of it, e.g. ``executor=`` for the local placement)."""
    if value is None:
        value = "local"
    if not isinstance(value, str):
        if callable(getattr(value, "corpus", None)) or callable(getattr(value, "stream", None)):
            return value
        raise RLSIError(f"placement={value!r} is not a placement; give a name ({', '.join(placement_names())}) "
                        f"or a placement object (rlsi.models.placement.Placement)")
    key = value.partition(":")[0]
    if key not in _REGISTRY:
        try:
            import_provider(PLACEMENTS, key)
        except ImportError as exc:
            raise RLSIError(f"placement={value!r} needs a part of rlsi that cannot be imported here ({exc})") from None
    factory = _REGISTRY.get(key)
    if factory is None:
        raise RLSIError(f"placement={value!r} is not a placement; choose one of {', '.join(placement_names())} or "
                        f"give a placement object")
    return factory(value, **options)


def resolve_placement(placement, device, **options):
    """The placement of a learner with the parameters ``placement`` and ``device`` (``device`` is the spelling
    of a device placement: ``device="cuda"`` is ``placement="cuda"``; ``"cpu"`` the local one)."""
    if device not in (None, "cpu"):
        if placement is not None and placement != device:
            raise RLSIError(f"placement={placement!r} and device={device!r} name two places; give one of them "
                            f"(device={device!r} is placement={device!r})")
        placement = device
    return get_placement(placement, **options)


class PlacementValue:
    """The parameter constraint of ``placement``: None, a placement name or a placement object (the name is
    checked against the registry when the fit resolves it)."""

    def check(self, name, value):
        if value is None or (not isinstance(value, str) and (callable(getattr(value, "corpus", None))
                                                             or callable(getattr(value, "stream", None)))):
            return
        if not isinstance(value, str) or value.partition(":")[0] not in set(PLACEMENTS) | set(_REGISTRY):
            raise RLSIError(f"{name}={value!r} is not a placement; choose one of {', '.join(placement_names())} or "
                            f"give a placement object")


# ---------------------------------------------------------------------------------------------- the contract
@runtime_checkable
class PlacedProblem(Protocol):
    """One batch RLSI fit with its blocks placed: what :func:`rlsi.models.driver.alternate` and the start need.

    ``u_step`` / ``v_step`` return diagnostics (``nnz``, ``sweeps``, ``screened``, ``dense``); ``objective`` is
    Eq. (1) from the statistics (:meth:`rlsi.models.rlsi_policy.RLSIPolicy.objective`). ``W`` is the document
    vectors in the placement's own form (what its corpus reads back: a host array, a CuPy array, partitions);
    ``doc_vectors()`` the vectors as the fit returns them. ``set_lambda1`` continues the problem with another
    λ₁ (the λ₁ search's last problem). ``diagnostics()`` is what the fit reports: the representation of each
    U-step (``"used"``), the rows the screening skipped (``"rows_screened"``) and the placement's own fitted
    attributes (``"attributes"``: e.g. a Dask fit's ``bytes_moved_``). ``history()`` and
    ``after_iteration(iteration, objective, diagnostics)`` let a placement resume a fit (the objectives of the
    iterations done) and record each iteration (a checkpoint)."""

    W: Any

    def u_step(self, executor) -> dict: ...
    def v_step(self, executor) -> dict: ...
    def objective(self) -> float: ...
    def components(self, dtype): ...
    def doc_vectors(self): ...
    def set_lambda1(self, lam) -> None: ...
    def diagnostics(self) -> dict: ...


@runtime_checkable
class PlacedCorpus(Protocol):
    """The documents of one batch RLSI fit, placed; the primitives of :func:`rlsi.models.start.start`.

    ``shape`` (N, M) and ``dtype``; ``x_sqnorm()`` = ‖X‖²_F (float64); ``seed_topics(k, rng)``: k distinct
    random non-empty documents as unit-norm topics (:func:`rlsi.models.seeding.seed_topics`: the same draw on
    every placement); ``project(U, spec)``: the document vectors of the ridge (or ℓ1) projection on topics U,
    placed; ``place(W)``: host document vectors placed; ``search_rows(W, rows)``: the rows ``rows`` of
    ``R = D W`` (float64, host) and ``S = WᵀW`` for the λ₁ search; ``problem(W, lam, spec)``: the
    :class:`PlacedProblem` started at W with λ₁ = lam; ``resume(spec)``: ``(λ₁, problem)`` of a fit this
    placement checkpointed, or None."""

    shape: tuple
    dtype: Any

    def x_sqnorm(self) -> float: ...
    def seed_topics(self, k, rng): ...
    def project(self, U, spec): ...
    def place(self, W): ...
    def search_rows(self, W, rows): ...
    def problem(self, W, lam, spec) -> PlacedProblem: ...
    def resume(self, spec): ...


@runtime_checkable
class PlacedStream(Protocol):
    """The state of one online RLSI stream, placed: the statistics S and R (mergeable:
    :class:`rlsi.models.stats.TopicStatistics` on the host), the topics and what a mini-batch carries to the next;
    the mini-batch step of :meth:`rlsi.models.online.OnlineRLSI._learn` is written over it once.

    ``batches(X, spans)`` / ``batch(X)`` the mini-batches of ``fit`` and of a ``partial_fit`` in the stream's form
    (``host(batch)``: as host CSR); ``grow(M)``, ``set_topics(U₀)``, ``reseed(U, topics)``, ``has_topics``,
    ``n_docs``, ``weight``; ``begin(batch, decay, n_inner)`` opens a mini-batch (the re-scaled statistics, λ₁ as
    ``lam1``) with ``project(W_prev) -> W`` (the V-step, the batch's statistics), ``solve(max_iter)`` (the U-step)
    and ``close(W, want_w) -> (W, change)``. ``topics()`` the topics as host CSR (M x K) or None;
    ``statistics()`` the host statistics (copied from where they are when read); ``attributes()`` the
    placement's own fitted attributes; ``release()`` what the stream holds outside this process; ``key`` its
    placement's ``stream_key``."""

    key: str

    def batches(self, X, spans): ...
    def batch(self, X): ...
    def begin(self, batch, decay, n_inner): ...
    def topics(self): ...
    def statistics(self): ...
    def release(self) -> None: ...


class Placement:
    """Base of the placements: the defaults of the contract (see the module docstring)."""

    #: The registry name of this placement.
    name = "placement"

    @property
    def saved_as(self):
        """The ``placement`` parameter of a saved model (JSON): a name that works anywhere, or None (local)."""
        return None

    def check_input(self, X, check):
        return check(X)

    def check_stream_input(self, X, check):
        """X of a stream (``fit`` or ``partial_fit`` of online RLSI), as the stream reads it: mini-batches are
        host matrices."""
        return check(X)

    def open(self, X=None):
        from .executor import SerialExecutor

        return SerialExecutor()

    def close(self, executor):
        executor.close()

    def threads(self, n_jobs):
        from ..kernels.threads import compute_threads

        return compute_threads(n_jobs)

    def corpus(self, X, spec, executor):
        raise RLSIError(f"the {self.name} placement does not fit batch RLSI")

    #: Streams of this placement carry this key (a model re-opens its stream when the key changes).
    stream_key = "placement"

    def stream(self, spec, stats, topics=None, *, n_inner=1, first=None):
        """The stream of online RLSI from its host state (``stats``: TopicStatistics, ``topics``: M x K or None);
        ``first``: ``(n_terms, docs, nnz)`` of a new stream's mini-batches (for the placement's checks)."""
        raise RLSIError(f"the {self.name} placement does not stream online RLSI")

    def fold_in(self, X, topics, *, penalty, lam, max_iter, tol, n_jobs=None):
        """``transform``: the vectors (n x K, X's dtype) of the rows of X on the topics (M x K), frozen
        (:func:`rlsi.models.steps.fold_in`, in this process)."""
        from .steps import fold_in

        return fold_in(X, topics, penalty=penalty, lam=lam, max_iter=max_iter, tol=tol, dtype=X.dtype, n_jobs=n_jobs)

    def __rlsi_json__(self):
        return self.saved_as

    def __repr__(self):
        return f"{type(self).__name__}()"


def no_threads(n_jobs):
    """A placement's thread context when the work runs elsewhere (its tasks set their own threads)."""
    return contextlib.nullcontext()
