"""Periods of dates and the cutting of a stream into mini-batches and segments."""

import pytest

from rlsi.errors import RLSIError
from rlsi.tracking import period_of, segments


def test_period_of():
    assert period_of("1987-03-05", "day") == "1987-03-05"
    assert period_of("1987-03-05T12:00:01", "month") == "1987-03"
    assert period_of("1987-3-5", "year") == "1987"
    assert period_of("1988-01-01", "week") == "1987-W53"  # ISO week of the ISO year
    assert period_of("1987-03", "month") == "1987-03"
    with pytest.raises(RLSIError, match="precise"):
        period_of("1987-03", "day")
    with pytest.raises(RLSIError, match="valid"):
        period_of("1987-02-30", "day")
    with pytest.raises(RLSIError, match="ISO"):
        period_of("March 1987", "month")
    with pytest.raises(RLSIError, match="period"):
        period_of("1987", "decade")


def test_segments_cut_at_period_changes_and_batch_size():
    labels = ["a"] * 5 + ["b"] * 2 + ["c"] * 4
    assert list(segments(11, 3, labels=labels)) == [(0, 3, "a"), (3, 5, "a"), (5, 7, "b"), (7, 10, "c"),
                                                    (10, 11, "c")]
    assert [s for _, _, s in segments(7, 2, every=2)] == ["batches 1-2"] * 2 + ["batches 3-4"] * 2
    with pytest.raises(RLSIError):
        list(segments(3, 2))
