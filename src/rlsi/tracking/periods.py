"""Cutting a dated stream into periods and mini-batches."""

from __future__ import annotations

import datetime as _dt
import re

from .._validation import check_choice, check_number
from ..errors import RLSIError

__all__ = ["PERIODS", "period_of", "segments"]

PERIODS = {"day": "YYYY-MM-DD", "week": "ISO week, YYYY-Www", "month": "YYYY-MM", "year": "YYYY"}
_DATE_RE = re.compile(r"^\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[T ].*)?\s*$")
_NEEDS = {"year": 1, "month": 2, "week": 3, "day": 3}


def period_of(date, period):
    """The period label of an ISO date string (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, or a datetime
    ``YYYY-MM-DDThh:mm:ss``), or of a :class:`datetime.date`; the labels sort like the periods. Raises
    RLSIError if the date is not precise enough for the period (e.g. ``1987-03`` for ``period="day"``)."""
    check_choice("period", period, PERIODS)
    if isinstance(date, _dt.date):
        parts = (date.year, date.month, date.day)
    else:
        if not isinstance(date, str):
            raise RLSIError(f"date {date!r} is not an ISO date string")
        m = _DATE_RE.match(date)
        if not m:
            raise RLSIError(f"date {date!r} is not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD)")
        parts = tuple(int(x) for x in m.groups() if x is not None)
    if len(parts) < _NEEDS[period]:
        raise RLSIError(f"date {date!r} is not precise enough for period={period!r} "
                        f"(needs {PERIODS[period] if period != 'week' else 'YYYY-MM-DD'})")
    try:
        d = _dt.date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
    except ValueError as exc:
        raise RLSIError(f"date {date!r} is not a valid date ({exc})") from None
    if period == "year":
        return f"{d.year:04d}"
    if period == "month":
        return f"{d.year:04d}-{d.month:02d}"
    if period == "day":
        return d.isoformat()
    iso = d.isocalendar()
    return f"{iso[0]:04d}-W{iso[1]:02d}"


def segments(n_docs, batch_size, *, labels=None, every=None):
    """Cut ``n_docs`` consecutive documents into mini-batches; yield ``(start, stop, segment)``.

    ``labels`` (one period label per document, documents in time order): a batch never straddles two
    periods — batches are cut at every label change and every ``batch_size`` documents inside a period;
    the segment is the period label. ``every`` (int): segments are windows of ``every`` batches of
    ``batch_size`` documents, labelled ``"batches a-b"``. Exactly one of the two must be given.
    """
    check_number("batch_size", batch_size, low=1, integer=True)
    if (labels is None) == (every is None):
        raise RLSIError("give either period labels or every=n (mini-batches per snapshot), not both")
    if labels is not None:
        if len(labels) != n_docs:
            raise RLSIError(f"{len(labels)} period labels for {n_docs} documents")
        start = 0
        while start < n_docs:
            lab = labels[start]
            stop = start
            while stop < n_docs and stop - start < batch_size and labels[stop] == lab:
                stop += 1
            yield start, stop, lab
            start = stop
        return
    check_number("every", every, low=1, integer=True)
    for i, start in enumerate(range(0, n_docs, batch_size)):
        first = (i // every) * every + 1
        yield start, min(n_docs, start + batch_size), f"batches {first}-{first + every - 1}"
