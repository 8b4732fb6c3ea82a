"""``OnlineRLSI.stats_`` when a stream's statistics live on a device: copied to the host only when read.

Its own module (no imports) so that :mod:`rlsi.models.online` holds the descriptor without importing the
device package at import time (:mod:`rlsi.gpu` imports :mod:`rlsi.models`).
"""

from __future__ import annotations

__all__ = ["HostStatistics"]


class HostStatistics:
    """``OnlineRLSI.stats_``: the stream's :class:`TopicStatistics` on the host, copied from the card lazily.

    A device step leaves the statistics on the card (:func:`publish` marks them pending); R (M x K) comes to
    the host only when ``stats_`` is read — by a save (:mod:`rlsi.io`), by the caller, or by a switch to the
    host or to another device — at most once per step. A copy read once stays the statistics of its step."""

    def __get__(self, est, owner=None):
        if est is None:
            return self
        d = est.__dict__
        pending = d.pop("_stats_pending", None)
        if pending is not None:
            st, dtype = pending
            d["_stats_host"] = st.to_statistics(dtype)
        if "_stats_host" not in d:
            raise AttributeError(f"{type(est).__name__!r} object has no attribute 'stats_'")
        return d["_stats_host"]

    def __set__(self, est, stats):
        est.__dict__.pop("_stats_pending", None)
        est.__dict__["_stats_host"] = stats

    def __delete__(self, est):
        had = [est.__dict__.pop(k, None) is not None for k in ("_stats_pending", "_stats_host")]
        if not any(had):
            raise AttributeError("stats_")

    @staticmethod
    def present(est):
        """Whether the estimator has statistics (a stream has begun), without copying them from the card."""
        return "_stats_pending" in est.__dict__ or "_stats_host" in est.__dict__

    @staticmethod
    def pending(est):
        """The device state whose statistics ``stats_`` will be copied from when read, or None."""
        return est.__dict__.get("_stats_pending", (None, None))[0]

    @staticmethod
    def forget(est):
        """Drop statistics not copied yet (a new stream replaces them)."""
        est.__dict__.pop("_stats_pending", None)
