"""The memory check before a fit (``rlsi fit``; :func:`check_fit`): cheap, up front, on the safe side.

The estimates of :mod:`rlsi.models.memory` are taken in up to three steps, each only when the previous
ones cannot decide:

1. **the floor** — the fit with empty topics (X, the transposed copy D, W twice in the V-step, the Gram
   matrices, the blocks: what the fit allocates whatever its topics become), without the slack. Above the
   limit: refused at once, in milliseconds, with the components;
2. **the bound** — the topics at the density where ``topic_representation="auto"`` makes them dense
   (:data:`DENSITY_BOUND`, with the V-step's dense copy of U wherever it is possible) or dense, the
   larger; where dense topics would not fit in ``RLSITuning.dense_max_bytes`` (web vocabularies) sparse
   topics may grow denser than that, so the bound takes them at density 1. Within the limit: accepted at
   once;
3. **the prediction** — only when the limit lies between the two: the topics predicted on a sample of
   the documents (:func:`rlsi.models.memory.predict_topics`; seconds, announced by ``status``).

The bound and the prediction include what the allocator keeps (:data:`rlsi.models.memory.FREED` and the
slack, :data:`~rlsi.models.memory.ALLOCATOR_SHARE`), so that the estimate that decides is above the
measured peak or within a few percent of it: over seven fits (batch and online, float32 and float64, at the
estimators' defaults and at λ₂ = 1) the prediction is −4.0 % to +16.4 % of the peak, the floor 14–26 % below
it, the bound 3–44 % above it (benchmarks/results/memory_estimate.md). An online fit's estimate is one step: its topics are dense, or
counted at the density bound.

A refusal names the limit, the estimate by component and what would fit: a float32 matrix when the
matrix is float64, the number of topics that fits (from the floor, or from the bound where that decided),
the online fit when the matrix and its transposed copy alone exceed the limit, a smaller mini-batch for an
online fit whose mini-batch weighs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import RLSIError
from .memory import (FREED, SLACK, MemoryEstimate, TopicProfile, available_memory, current_rss, estimate_for,
                     format_bytes)

__all__ = ["DENSITY_BOUND", "MemoryCheck", "bound_estimate", "check_fit", "fit_limit", "floor_estimate"]

#: Density of the bound: where ``topic_representation="auto"`` switches to dense topics (RLSITuning.dense_above).
DENSITY_BOUND = 0.05


@dataclass
class MemoryCheck:
    """What :func:`check_fit` decided: ``estimate`` (the :class:`MemoryEstimate` that decided; None when
    the limit is unknown), ``limit`` (bytes; None: unknown), ``limit_name`` (``"--memory-limit"``, ``"memory
    available"``), ``method`` (``"floor"``, ``"bound"``, ``"prediction"``, ``"online"``; ``"unchecked"``)."""

    estimate: MemoryEstimate | None
    limit: int | None
    limit_name: str
    method: str

    def describe(self) -> str:
        """One line for ``-v``: the estimate, how it was taken and the limit it was held to."""
        if self.estimate is None:
            return "memory not checked: the memory available is unknown"
        how = {"floor": "the fit without topics", "bound": f"topics at the density bound {DENSITY_BOUND:g} or dense",
               "prediction": "the topics predicted on a sample", "online": "one mini-batch at a time"}[self.method]
        return (f"memory estimate of the fit ({how}): {self.estimate.describe()}; "
                f"limit {format_bytes(self.limit)} ({self.limit_name})")


def fit_limit(memory_limit=None, baseline=0):
    """``(limit, name)``: ``memory_limit`` (bytes), else the memory available now plus ``baseline`` (what the
    process holds already is part of both the estimate and the limit); ``(None, ...)`` where unknown."""
    if memory_limit is not None:
        return int(memory_limit), "--memory-limit"
    avail = available_memory()
    return (None if avail is None else avail + int(baseline)), "memory available"


def check_fit(model, X, *, memory_limit=None, baseline=None, status=None) -> MemoryCheck:
    """Check that ``model.fit(X)`` fits in ``memory_limit`` bytes (None: the memory available); RLSIError
    (one line, with the components and what would fit) when it does not. ``baseline``: bytes the process
    holds besides X (None: its resident memory now less X's arrays, which are resident already — built in
    memory, or read through by ``load_matrix``'s checks — and a component of the estimate). ``status``:
    called with one line before the prediction runs (the slow step), e.g. to show it. Returns the
    :class:`MemoryCheck`."""
    from .online import OnlineRLSI

    if baseline is None:
        baseline = max(0, current_rss() - (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes))
    limit, name = fit_limit(memory_limit, baseline)
    if isinstance(model, OnlineRLSI):
        estimate = estimate_for(model, X, baseline=baseline)
        return _decide(model, X, estimate, limit, name, "online", baseline)
    floor = floor_estimate(model, X, baseline)
    if limit is None:
        return MemoryCheck(None, None, name, "unchecked")
    if floor.peak > limit:
        return _decide(model, X, floor, limit, name, "floor", baseline)
    bound = bound_estimate(model, X, baseline)
    if bound.peak <= limit:
        return MemoryCheck(bound, limit, name, "bound")
    if status is not None:
        status(f"checking the memory this fit needs on a sample of the documents (its estimate, "
              f"{format_bytes(floor.peak)} to {format_bytes(bound.peak)}, is near the {format_bytes(limit)} of "
              f"{name}) ...")
    return _decide(model, X, estimate_for(model, X, baseline=baseline), limit, name, "prediction", baseline)


def floor_estimate(model, X, baseline=0):
    """The estimate of ``model.fit(X)`` (batch) with empty topics and without the slack and the freed
    temporaries (:data:`rlsi.models.memory.SLACK`, ``FREED``): what the fit allocates whatever its topics, a
    lower bound of its peak."""
    full = estimate_for(model, X, baseline=baseline, topics=TopicProfile(0.0, 0.0, 0))
    totals = full.allocations
    phase = max(totals, key=totals.get)
    breakdown = {name: {k: v for k, v in comps.items() if k not in (SLACK, FREED)}
                 for name, comps in full.breakdown.items()}
    return MemoryEstimate(peak=totals[phase], phase=phase, components=breakdown[phase], phases=totals,
                          breakdown=breakdown)


def bound_estimate(model, X, baseline=0):
    """The larger of the estimates at the density bound (sparse topics) and with dense topics, or with
    sparse topics at density 1 where dense ones would not fit (module docstring)."""
    sparse = estimate_for(model, X, baseline=baseline, topic_density=DENSITY_BOUND)
    M, K = X.shape[1], model.n_components
    if model.topic_representation == "sparse" or M * K * 8 > model._tuning.dense_max_bytes:
        other = estimate_for(model, X, baseline=baseline, topic_density=1.0)
    else:
        other = estimate_for(model, X, baseline=baseline, topic_density=DENSITY_BOUND, topic_representation="dense")
    return max(sparse, other, key=lambda e: e.peak)


def _decide(model, X, estimate, limit, name, method, baseline):
    check = MemoryCheck(estimate, limit, name, method)
    if limit is None or estimate.peak <= limit:
        return check
    raise RLSIError(f"this fit needs {estimate.describe()}, more than the {format_bytes(limit)} of {name}; "
                    f"{_advice(model, X, estimate, limit, method, baseline)}")


def _advice(model, X, estimate, limit, method, baseline):
    """What would fit, in the user's terms (module docstring)."""
    from .online import OnlineRLSI

    online = isinstance(model, OnlineRLSI)
    own = max(1, estimate.peak - baseline)  # the fit's own bytes
    ways = []
    if baseline >= 0.9 * limit:
        ways.append(f"a limit well above the {format_bytes(baseline)} the process holds before the fit (the "
                    f"interpreter and its libraries)")
    K = _topics_that_fit(model, X, limit, method, baseline)
    if K:
        ways.append(f"at most {K} topics (-k {K})")
    if online and estimate.components.get("mini-batch", 0) > 0.1 * own and model.batch_size > 1:
        ways.append(f"a smaller --batch-size than {model.batch_size}")
    if np.dtype(X.dtype) == np.float64:
        ways.append("a float32 matrix (--dtype float32; rlsi ingest / synth --dtype float32), which halves X, "
                    "its transposed copy and W")
    fixed = estimate.components.get("X", 0) + estimate.components.get("transposed copy", 0)
    if not online and fixed > limit - baseline > 0:
        ways.append(f"--online (the matrix and its transposed copy alone take {format_bytes(fixed)}; an online "
                    "fit reads the documents one mini-batch at a time)")
    ways.append("a machine with more memory")
    return "use " + "; or ".join(ways)


def _topics_that_fit(model, X, limit, method, baseline):
    """The largest number of topics below the model's whose estimate (the same kind as ``method``'s, the
    prediction's taken at the bound) fits in ``limit``; 0 when none does."""
    from sklearn.base import clone

    def peak(k):
        m = clone(model).set_params(n_components=k)  # its tuning too (a parameter)
        if method == "floor":
            return floor_estimate(m, X, baseline).peak
        if method == "online":
            return estimate_for(m, X, baseline=baseline).peak
        return bound_estimate(m, X, baseline).peak

    lo, hi = 0, int(model.n_components) - 1  # the largest k in [1, hi] with peak(k) <= limit, by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if peak(mid) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return lo
