"""Per-query score normalisation and Eq. 9 interpolation, on hand-computed values."""

import numpy as np
import pytest

from rlsi.errors import RLSIError
from rlsi.retrieval.combine import NORMALIZERS, Combiner, interpolate, normalize_scores

S = np.array([[1.0, 3.0, 2.0, 0.0],     # min 0, max 3, mean 1.5, std sqrt(1.25)
              [2.0, 2.0, 2.0, 2.0],     # constant row
              [-1.0, 1.0, 0.0, 0.0]])   # negative values (a topic cosine)


def test_minmax():
    out = normalize_scores(S, "minmax")
    np.testing.assert_allclose(out[0], [1 / 3, 1, 2 / 3, 0])
    np.testing.assert_array_equal(out[1], 0)
    np.testing.assert_allclose(out[2], [0, 1, 0.5, 0.5])


def test_zscore():
    out = normalize_scores(S, "zscore")
    np.testing.assert_allclose(out[0], (S[0] - 1.5) / np.sqrt(1.25))
    np.testing.assert_array_equal(out[1], 0)
    np.testing.assert_allclose(out.mean(axis=1), 0, atol=1e-12)


def test_max_and_none():
    np.testing.assert_allclose(normalize_scores(S, "max")[0], [1 / 3, 1, 2 / 3, 0])
    np.testing.assert_allclose(normalize_scores(S, "max")[2], [-1, 1, 0, 0])
    np.testing.assert_allclose(normalize_scores(S, "max")[1], [1, 1, 1, 1])
    none = normalize_scores(S, "none")
    np.testing.assert_array_equal(none, S)
    none[0, 0] = 99  # a copy, not a view
    assert S[0, 0] == 1.0


def test_all_zero_rows_stay_zero_under_every_rule():
    Z = np.zeros((2, 5))
    for name in NORMALIZERS:
        np.testing.assert_array_equal(normalize_scores(Z, name), 0)


def test_one_dimensional_input():
    np.testing.assert_allclose(normalize_scores(S[0], "minmax"), [1 / 3, 1, 2 / 3, 0])


def test_interpolate_endpoints_and_middle():
    topic = np.array([[0.0, 1.0, 0.5]])
    term = np.array([[4.0, 0.0, 2.0]])
    np.testing.assert_allclose(interpolate(topic, term, 0.0), [[1, 0, 0.5]])
    np.testing.assert_allclose(interpolate(topic, term, 1.0), [[0, 1, 0.5]])
    np.testing.assert_allclose(interpolate(topic, term, 0.25), [[0.75, 0.25, 0.5]])
    raw = interpolate(topic, term, 0.5, topic_norm="none", term_norm="none")
    np.testing.assert_allclose(raw, [[2.0, 0.5, 1.25]])


def test_combiner_and_errors():
    c = Combiner(0.3, topic_norm="zscore", term_norm="max")
    assert c.get_params() == {"alpha": 0.3, "topic_norm": "zscore", "term_norm": "max"}
    np.testing.assert_allclose(c(S, S), 0.3 * normalize_scores(S, "zscore") + 0.7 * normalize_scores(S, "max"))
    with pytest.raises(RLSIError, match="alpha"):
        Combiner(1.5)
    with pytest.raises(RLSIError, match="normalization|topic_norm"):
        Combiner(0.5, topic_norm="softmax")
    with pytest.raises(RLSIError, match="same shape"):
        interpolate(S, S[:2], 0.5)
    with pytest.raises(RLSIError, match="NaN"):
        normalize_scores(np.array([[np.nan, 1.0]]))
    with pytest.raises(RLSIError, match="1-D or 2-D"):
        normalize_scores(np.zeros((2, 2, 2)))
