"""What an RLSI fit is asked to do, as one frozen value: :class:`RLSISpec`.

The estimators' parameters are read once, when a fit starts (:meth:`RLSISpec.of`), into a value every part of
the fit reads instead of the estimator: the start (:mod:`rlsi.models.start`), the placements' problems and
streams (:mod:`rlsi.models.local`, :mod:`rlsi.gpu`, :mod:`rlsi.distributed`) and the public solver
(:func:`rlsi.models.solver.regularized_lsi`). So a placement never reaches into an estimator, and a problem is
built from one argument instead of a dozen.

``lambda1`` is the user's value (``lambda1_scale`` units); :meth:`RLSISpec.effective_lambda1` is the λ₁ of
Eq. (1) for a number of documents. The λ₁ reaches the solvers only through ``penalty.prepared(S, λ₁)``
(:class:`rlsi.models.penalties.PreparedPenalty`), the one place a per-topic or per-(term, topic) weight would
enter.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from .._validation import check_random_state
from .penalties import SolverSettings
from .penalties import penalty as get_penalty
from .regularization import DEFAULT_LAMBDA1, DEFAULT_LAMBDA2, DOCS_PER_UNIT, effective_lambda1
from .rlsi_policy import TOPIC_SWEEPS, TUNING, RLSITuning, resolve_tuning

__all__ = ["RLSISpec"]


@dataclass(frozen=True, eq=False)
class RLSISpec:
    """The parameters of one RLSI fit (see the module docstring; the fields are the estimators' parameters of
    the same names, ``tuning`` resolved to an :class:`rlsi.models.rlsi_policy.RLSITuning`; ``seeds`` the seed words
    resolved against the fit's vocabulary)."""

    n_components: int
    lambda1: float = DEFAULT_LAMBDA1
    lambda2: float = DEFAULT_LAMBDA2
    topic_penalty: str = "l1"
    doc_penalty: str = "l2"
    lambda1_scale: str = "per_doc"
    init: str = "docs"
    inner_max_iter: int = 100
    inner_tol: float = 1e-4
    topic_sweeps: int | None = TOPIC_SWEEPS
    target_terms_per_topic: int | None = None
    topic_representation: str = "auto"
    random_state: object = None
    n_jobs: int | None = None
    tuning: RLSITuning = field(default=TUNING)
    #: the resolved seed words (:class:`rlsi.models.seeds.SeedTerms`) or None: given by the learner at fit time
    seeds: object = None

    @classmethod
    def of(cls, estimator, **changes):
        """The spec of an estimator's parameters (those it has; the others keep the defaults), with
        ``changes``."""
        params = estimator.get_params(deep=False)
        values = {f.name: params[f.name] for f in fields(cls) if f.name in params}
        values.update(changes)
        values["tuning"] = resolve_tuning(values.get("tuning"))
        return cls(**values)

    def with_topics(self, n_components):
        """The spec of the same fit on ``n_components`` topics (a topic born in a stream): the seed words' weights
        grow with it (:meth:`rlsi.models.seeds.SeedTerms.grown`)."""
        seeds = None if self.seeds is None else self.seeds.grown(n_components)
        return replace(self, n_components=int(n_components), seeds=seeds)

    @property
    def topic_pen(self):
        """P of Eq. (1) (:class:`rlsi.models.penalties.Penalty`)."""
        return get_penalty(self.topic_penalty, param="topic_penalty")

    @property
    def doc_pen(self):
        """Q of Eq. (1)."""
        return get_penalty(self.doc_penalty, param="doc_penalty")

    def inner_settings(self):
        """The solver settings of ``inner_max_iter`` and ``inner_tol`` (V-steps, folding-in)."""
        return SolverSettings(self.inner_max_iter, self.inner_tol)

    def rng(self):
        """A generator of ``random_state``: a fresh one per call for a seed (each draw of a fit starts from the
        seed), the same object for a Generator."""
        return check_random_state(self.random_state)

    def effective_lambda1(self, n_docs):
        """The λ₁ of Eq. (1) for statistics of ``n_docs`` (weighted) documents."""
        return effective_lambda1(self.lambda1, self.lambda1_scale, n_docs)

    def user_lambda1(self, lam, n_docs):
        """An effective λ₁ in the units of ``lambda1_scale`` (``lambda1_``)."""
        return lam if self.lambda1_scale == "paper" else lam * DOCS_PER_UNIT / n_docs
