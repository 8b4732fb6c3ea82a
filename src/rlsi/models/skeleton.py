"""The alternating batch fit, written once: :class:`AlternatingFit` owns ``fit`` and ``fit_transform`` of
every batch learner (BatchRLSI, DaskRLSI, GroupRLSI/CRLSI, GroupNMF/CNMF, SparseTopicalCoding, MedSTC).

The skeleton::

    validate the parameters → check X (and y) → open the executor → under the learner's thread context:
    build the problem (initialisation) → alternate u_step / v_step / objective to the stop rule
    (rlsi.models.driver.alternate: progress bar, callback, one ConvergenceWarning) → finish the fitted
    attributes → (fit_transform) the training document vectors → close the executor

A learner writes only what is its own, as hooks:

======================================  ============================================================
hook                                    what it returns / does
======================================  ============================================================
``_check_fit_input(X, y, **params)``    ``(X, y)`` checked (default: ``_check_X(X, reset=True)``)
``_start(X, y, executor, **params)``    the problem: an object with ``u_step(executor)``,
                                        ``v_step(executor)``, ``objective()`` (its initialisation)
``_finish(problem, trace, X)``          sets the fitted attributes from the problem and the Trace
``_fit_output(problem, X)``             the training document vectors (``fit_transform`` only)
``_open_executor(X)``                   the executor (default: ``get_executor(self.executor)``, closed
                                        after the fit unless the user gave it); ``_close_executor``
``_fit_threads()``                      the thread context (default: ``compute_threads(self.n_jobs)``)
``_alternate_options(problem)``         extra keywords of ``alternate`` (a callback, a resumed history;
                                        default: the problem's ``alternate_options()``, if it has one)
======================================  ============================================================

and the two parameters of the stop rule are ``max_iter`` and the attribute named by ``_tol_param``
(``"tol"``; STC calls it ``fit_tol``).
"""

from __future__ import annotations

from ..kernels.threads import compute_threads
from .driver import alternate
from .executor import get_executor

__all__ = ["AlternatingFit"]


class AlternatingFit:
    """Mixin that owns ``fit`` / ``fit_transform`` of an alternating batch learner (see the module docstring).

    It goes before the estimator base in the bases (``class BatchRLSI(AlternatingFit, SquaredLossModel)``), so
    its ``fit`` and ``fit_transform`` are the ones in the MRO.
    """

    #: Name of the parameter that is the stop rule's relative tolerance.
    _tol_param = "tol"

    def fit(self, X, y=None, **fit_params):
        """Fit on X (n_samples x n_features) and, for supervised learners, the labels y. Returns self."""
        self._fit(X, y, fit_params, output=False)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """Fit and return the document vectors of the training documents (n_samples x n_components)."""
        return self._fit(X, y, fit_params, output=True)

    # ------------------------------------------------------------------ the skeleton
    def _fit(self, X, y, fit_params, *, output, executor=None):
        """The skeleton; ``executor``: one the caller opened (and closes), instead of :meth:`_open_executor`."""
        self._validate_params()
        X, y = self._check_fit_input(X, y, **fit_params)
        given = executor
        if executor is None:
            executor = self._open_executor(X)
        try:
            with self._fit_threads():
                problem = self._start(X, y, executor, **fit_params)
                trace = alternate(problem, max_iter=self.max_iter, tol=getattr(self, self._tol_param),
                                  executor=executor, name=type(self).__name__, verbose=self.verbose,
                                  tol_name=self._tol_param, **self._alternate_options(problem))
                self._finish(problem, trace, X)
                return self._fit_output(problem, X) if output else None
        finally:
            if given is None:
                self._close_executor(executor)

    # ------------------------------------------------------------------ hooks with defaults
    def _check_fit_input(self, X, y, **fit_params):
        return self._check_X(X, reset=True), y

    def _open_executor(self, X):
        return get_executor(getattr(self, "executor", None))

    def _close_executor(self, executor):
        if executor is not getattr(self, "executor", None):
            executor.close()

    def _fit_threads(self):
        return compute_threads(getattr(self, "n_jobs", None))

    def _alternate_options(self, problem):
        """Extra keywords of ``alternate``: the problem's own (``problem.alternate_options()``: a placement that
        records each iteration or resumes a fit), else none."""
        own = getattr(problem, "alternate_options", None)
        return dict(own()) if callable(own) else {}

    # ------------------------------------------------------------------ hooks every learner writes
    def _start(self, X, y, executor, **fit_params):
        raise NotImplementedError

    def _finish(self, problem, trace, X):
        raise NotImplementedError

    def _fit_output(self, problem, X):
        raise NotImplementedError
