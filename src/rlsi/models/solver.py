"""The parts of a batch RLSI fit as public functions: what :func:`rlsi.models.batch.regularized_lsi` and
:class:`rlsi.models.BatchRLSI` are made of, for benchmarks and other packages (instead of an estimator's private
methods).

* :func:`initial_doc_vectors` — W₀ of a fit (:func:`rlsi.models.start.initial_doc_vectors` on X in this process);
* :func:`local_problem` — the batch RLSI problem in this process at a given W and λ₁;
* :func:`fit_result` — what a finished fit reports, from its problem and the alternation's trace.

The fit itself: the parameters read into an :class:`rlsi.models.spec.RLSISpec`, the documents placed
(:mod:`rlsi.models.placement`), the one start (:func:`rlsi.models.start.start`), the alternation
(:func:`rlsi.models.driver.alternate`), then :func:`fit_result`.
"""

from __future__ import annotations

import numpy as np

from .local import LocalCorpus, RLSIProblem
from .spec import RLSISpec
from .start import initial_doc_vectors as _initial_doc_vectors

__all__ = ["fit_result", "initial_doc_vectors", "local_problem"]


def _spec(params):
    return params if isinstance(params, RLSISpec) else RLSISpec.of(params)


def initial_doc_vectors(X, params, V_init=None):
    """W₀ (N x K) of a fit of ``params`` (an :class:`RLSISpec`, or an RLSI estimator whose parameters are read) on
    the CSR matrix X in this process (:func:`rlsi.models.start.initial_doc_vectors`)."""
    return _initial_doc_vectors(_spec(params), LocalCorpus(X), V_init)


def local_problem(X, W, lam1, params):
    """The batch RLSI problem of ``params`` on X in this process, at W with the effective λ₁ ``lam1``
    (:class:`rlsi.models.local.RLSIProblem`: ``u_step``, ``v_step``, ``objective``)."""
    return RLSIProblem.of_spec(X, W, lam1, _spec(params))


def fit_result(problem, trace, dtype):
    """What a finished fit reports: ``components`` (K x M CSR of ``dtype``), ``objective`` (every iteration's,
    a resumed fit's earlier ones first), ``topic_representations`` (of each U-step), ``rows_screened`` and
    ``attributes`` (the placement's own: a device's memory plan, a cluster's bytes moved)."""
    diagnostics = problem.diagnostics()
    history = list(problem.history()) if hasattr(problem, "history") else []
    return {"components": problem.components(np.dtype(dtype)), "objective": np.asarray(history + list(trace.objectives)),
            "converged": trace.converged, "topic_representations": list(diagnostics["used"]),
            "rows_screened": int(diagnostics["rows_screened"]), "attributes": dict(diagnostics["attributes"])}
