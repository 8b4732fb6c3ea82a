"""The streaming fit, written once: :class:`StreamingFit` owns ``fit`` and ``partial_fit`` of every learner
that learns from mini-batches (OnlineRLSI and DaskOnlineRLSI on every placement, OnlineSTC, OnlineMedSTC).

The skeleton::

    fit(X, y):          validate → check X (and y) → start the stream → for each mini-batch of every pass
                        (the learner's order): learn from it, the progress bar in documents → end the stream
    partial_fit(X, y):  on the first call validate → check X (and y) → start the stream on the first call
                        → learn from X, one mini-batch → publish the fitted attributes

A learner writes only what is its own, as hooks:

=========================================  ============================================================
hook                                       what it returns / does
=========================================  ============================================================
``_check_stream_input(X, y, **params)``    ``(X, y)`` of ``fit`` checked (default: ``_check_X(X, reset=True)``)
``_check_partial_input(X, y, new, **kw)``  ``(X, y)`` of a ``partial_fit`` (``new``: the first of a stream)
``_start_stream(X, y, partial=False)``     reset the state and start a stream (the first topics may wait for
                                           the first mini-batch; ``partial``: X is a ``partial_fit``'s)
``_stream_started()``                      whether a stream has begun (``partial_fit`` starts one if not)
``_mini_batches(X, y)``                    ``(batch, y_batch, n_docs)`` for every mini-batch of ``fit``, all
                                           passes, in the learner's order (end-of-pass work in between)
``_partial_batch(X)``                      the mini-batch of a ``partial_fit`` (default: X)
``_learn(batch, y_batch, fitting)``        one mini-batch step; returns the batch's document vectors or None
                                           (``fitting``: inside ``fit``, which returns none)
``_end_stream(X, y)``                      after the last mini-batch of ``fit`` (default: :meth:`_publish`)
``_close_stream()``                        after ``fit``, also one that failed (default: nothing; what the
                                           stream's placement started for the fit is released)
``_publish()``                             the fitted attributes after a ``partial_fit`` (default: nothing)
``_stream_threads()``                      the thread context (default: ``compute_threads(self.n_jobs)``)
=========================================  ============================================================

Online RLSI's mini-batch step (Algorithm 4) is written once over a placed stream (:mod:`rlsi.models.placement`,
``PlacedStream``: :class:`rlsi.models.host_stream.HostStream` here and on a Dask cluster's projections,
:class:`rlsi.gpu.online.DeviceStream` on a card), whose statistics are mergeable
(:class:`rlsi.models.stats.TopicStatistics`); :class:`StreamStatistics` reads them back on the host as a model's
``stats_``.
"""

from __future__ import annotations

from .._progress import progress_bar
from ..kernels.threads import compute_threads

__all__ = ["StreamingFit"]


class StreamingFit:
    """Mixin that owns ``fit`` / ``partial_fit`` of a streaming learner (see the module docstring). It goes before
    the estimator base in the bases (``class OnlineRLSI(StreamingFit, SquaredLossModel)``)."""

    def fit(self, X, y=None, **fit_params):
        """Reset and learn from X (n_samples x n_features) in mini-batches (and, for supervised learners, the
        labels y; ``fit_params``: the learner's, e.g. OnlineRLSI's ``feature_names``). Returns self."""
        self._validate_params()
        X, y = self._check_stream_input(X, y, **fit_params)
        with self._stream_threads():
            try:
                self._start_stream(X, y)
                bar = progress_bar(self._stream_total(X), type(self).__name__, verbose=getattr(self, "verbose", 0),
                                   unit="doc", unit_scale=True, smoothing=0.1)
                try:
                    for batch, y_batch, n in self._mini_batches(X, y):
                        self._learn(batch, y_batch, True)
                        if bar is not None:
                            bar.update(n)
                finally:
                    if bar is not None:
                        bar.close()
                self._end_stream(X, y)
            finally:
                self._close_stream()
        return self

    def partial_fit(self, X, y=None, **kwargs):
        """Learn from one mini-batch X (all its rows); the first call starts a stream. Returns self."""
        self._partial(X, y, kwargs)
        return self

    def _partial(self, X, y, kwargs):
        """The skeleton of ``partial_fit``; returns what :meth:`_learn` returns (the batch's vectors)."""
        new = not self._stream_started()
        if new:
            self._validate_params()
        X, y = self._check_partial_input(X, y, new, **kwargs)
        with self._stream_threads():
            if new:
                self._start_stream(X, y, partial=True)
            out = self._learn(self._partial_batch(X), y, False)
            self._publish()
        return out

    # ------------------------------------------------------------------ hooks with defaults
    def _check_stream_input(self, X, y):
        return self._check_X(X, reset=True), y

    def _stream_total(self, X):
        """Documents ``fit`` goes through (the bar's total)."""
        return X.shape[0]

    def _partial_batch(self, X):
        return X

    def _end_stream(self, X, y):
        self._publish()

    def _publish(self):
        pass

    def _close_stream(self):
        pass

    def _stream_threads(self):
        return compute_threads(getattr(self, "n_jobs", None))

    # ------------------------------------------------------------------ hooks every learner writes
    def _check_partial_input(self, X, y, new, **kwargs):
        raise NotImplementedError

    def _start_stream(self, X, y, partial=False):
        raise NotImplementedError

    def _stream_started(self):
        raise NotImplementedError

    def _mini_batches(self, X, y):
        raise NotImplementedError

    def _learn(self, batch, y, fitting):
        raise NotImplementedError


class StreamStatistics:
    """``OnlineRLSI.stats_``: the stream's TopicStatistics on the host — the placed stream's (a device stream copies
    them from the card when read, at most once per mini-batch), or the model's own before a stream is open (a new
    or a loaded model)."""

    def __get__(self, est, owner=None):
        if est is None:
            return self
        d = est.__dict__
        stream = d.get("_stream")
        if stream is not None:
            return stream.statistics()
        if "_stats_host" not in d:
            raise AttributeError(f"{type(est).__name__!r} object has no attribute 'stats_'")
        return d["_stats_host"]

    def __set__(self, est, stats):
        stream = est.__dict__.pop("_stream", None)
        if stream is not None:
            stream.release()
        est.__dict__["_stats_host"] = stats

    def __delete__(self, est):
        had = [est.__dict__.pop(k, None) is not None for k in ("_stream", "_stats_host")]
        if not any(had):
            raise AttributeError("stats_")

    @staticmethod
    def present(est):
        """Whether the estimator has statistics (a stream has begun), without copying them from a card."""
        return "_stream" in est.__dict__ or "_stats_host" in est.__dict__
