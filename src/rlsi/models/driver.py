"""One driver for alternating-minimisation learners: iterate U-step, V-step, objective; stop; report.

A learner describes its problem as an object with three methods (its per-block math lives behind them,
as tasks mapped by the executor)::

    class Problem:
        def u_step(self, executor) -> dict      # update the topics; diagnostics for the log / bar
        def v_step(self, executor) -> dict      # update the document vectors (and the statistics)
        def objective(self) -> float            # the objective after both steps

:func:`alternate` runs it: ``max_iter`` outer iterations, stopping when the relative decrease of the
objective is at most ``tol``, with a progress bar, debug logging, an optional per-iteration
``callback(iteration, objective, diagnostics)`` (checkpoints, tracing), and a ConvergenceWarning that names
the reached change when ``max_iter`` ends the fit. Batch RLSI is one such problem (serial executor by
default); the group and distributed learners are others.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._progress import progress_bar
from .._warnings import user_stacklevel
from .executor import get_executor

log = logging.getLogger(__name__)


@dataclass
class Trace:
    """What a driven fit did: objective after each iteration, whether ``tol`` stopped it, diagnostics."""

    objectives: list = field(default_factory=list)
    converged: bool = False
    diagnostics: list = field(default_factory=list)

    @property
    def n_iter(self):
        return len(self.objectives)


def converged(previous, current, tol):
    """The stop rule: the objective moved by at most ``tol`` relative to ``previous``."""
    return bool(np.isfinite(previous) and abs(previous - current) <= tol * max(abs(previous), 1e-300))


def alternate(problem, *, max_iter, tol, executor=None, name="fit", verbose=0, callback=None, history=(),
              tol_name="tol"):
    """Run ``problem`` (see the module docstring) for at most ``max_iter`` iterations. Returns a Trace.

    ``history``: the objectives of iterations already done (a resumed fit): the bar and the callback number
    from there, ``max_iter`` is the total, the first resumed iteration's stopping test compares with the last
    of them (as the uninterrupted fit would), and a history that already met the stop rule runs nothing.
    The ConvergenceWarning points at the user's call (:func:`rlsi._warnings.user_stacklevel`);
    ``tol_name``: the learner's name of ``tol`` in its message.
    """
    executor = get_executor(executor)
    trace = Trace()
    history = [float(v) for v in history]
    start_iteration = len(history)
    prev = history[-1] if history else np.inf
    if len(history) >= 2 and converged(history[-2], history[-1], tol):
        trace.converged = True
        return trace
    bar = progress_bar(max_iter, name, verbose=verbose, unit="it", initial=start_iteration, bound=True)
    try:
        for it in range(start_iteration, max_iter):
            diag = dict(problem.u_step(executor) or {})
            diag.update(problem.v_step(executor) or {})
            obj = float(problem.objective())
            trace.objectives.append(obj)
            trace.diagnostics.append(diag)
            log.debug("%s iteration %d: objective %.6g %s", name, it + 1, obj,
                      " ".join(f"{k}={v}" for k, v in diag.items()))
            if bar is not None:
                bar.update(1)
                bar.set_postfix(objective=f"{obj:.5g}", **{k: v for k, v in diag.items() if k == "nnz"})
            if callback is not None:
                callback(it + 1, obj, diag)
            if converged(prev, obj, tol):
                trace.converged = True
                break
            prev = obj
    finally:
        if bar is not None:
            bar.close()
    objs = trace.objectives
    if not trace.converged and len(objs) > 1 and tol > 0:
        change = abs(objs[-2] - objs[-1]) / max(abs(objs[-2]), 1e-300)
        warnings.warn(
            f"{name} stopped at max_iter={max_iter} before converging: the last relative objective change "
            f"was {change:.3g} > {tol_name}={tol}; raise max_iter or {tol_name}", ConvergenceWarning,
            stacklevel=user_stacklevel())
    return trace
