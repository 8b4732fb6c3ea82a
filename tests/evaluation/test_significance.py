"""Paired t-test and randomization test."""

import numpy as np
import pytest
from scipy import stats

from rlsi.errors import RLSIError
from rlsi.evaluation.significance import Comparison, compare, paired_ttest, randomization_test


def _pair(n=60, shift=0.02, seed=0):
    rng = np.random.default_rng(seed)
    b = rng.random(n)
    return b + shift + 0.1 * rng.standard_normal(n), b


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ttest_matches_scipy(alternative, seed):
    a, b = _pair(seed=seed)
    t, p = paired_ttest(a, b, alternative=alternative)
    ref = stats.ttest_rel(a, b, alternative=alternative)
    assert t == pytest.approx(ref.statistic, rel=1e-12)
    assert p == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-15)


def test_ttest_one_sided_direction_and_hand_value():
    # d = (1, 2, 3): mean 2, sd 1, t = 2 / (1 / sqrt(3)) = 2 sqrt(3)
    t, p = paired_ttest([2, 4, 6], [1, 2, 3])
    assert t == pytest.approx(2 * np.sqrt(3))
    assert p == pytest.approx(stats.t.sf(2 * np.sqrt(3), 2)) and p < 0.05
    t_less, p_less = paired_ttest([2, 4, 6], [1, 2, 3], alternative="less")
    assert p_less == pytest.approx(1 - p)


def test_ttest_degenerate_differences():
    assert paired_ttest([0.3, 0.5, 0.7], [0.3, 0.5, 0.7]) == (0.0, 1.0)   # conservative, scipy gives NaN
    assert paired_ttest([1.5, 2.5, 3.5], [1.0, 2.0, 3.0]) == (np.inf, 0.0)
    assert paired_ttest([1.0, 2.0, 3.0], [1.5, 2.5, 3.5]) == (-np.inf, 1.0)


@pytest.mark.parametrize("a, b, message", [
    ([1, 2, 3], [1, 2], "as many values"),
    ([1], [2], "at least 2"),
    ([1, np.nan], [1, 2], "NaN"),
])
def test_input_errors(a, b, message):
    with pytest.raises(RLSIError, match=message):
        paired_ttest(a, b)
    with pytest.raises(RLSIError, match=message):
        randomization_test(a, b)


def test_bad_options():
    with pytest.raises(RLSIError, match="alternative='bigger'"):
        paired_ttest([1, 2], [0, 0], alternative="bigger")
    with pytest.raises(RLSIError, match="n_resamples"):
        randomization_test([1, 2], [0, 0], n_resamples=0)


def test_randomization_close_to_ttest_on_a_clear_case():
    a, b = _pair(n=100, shift=0.02, seed=1)
    _, p_t = paired_ttest(a, b)
    diff, p_r = randomization_test(a, b, n_resamples=20000)
    assert diff == pytest.approx(np.mean(a - b))
    assert 0.01 < p_t < 0.2
    assert p_r == pytest.approx(p_t, abs=0.015)
    strong_a, strong_b = _pair(n=100, shift=0.1, seed=1)
    assert randomization_test(strong_a, strong_b)[1] < 0.001


def test_randomization_identical_and_reversed():
    a, b = _pair(shift=0.1, seed=3)
    assert randomization_test(b, b) == (0.0, 1.0)        # every resample ties the observed 0
    assert randomization_test(b, a, n_resamples=2000)[1] > 0.9
    assert randomization_test(b, a, n_resamples=2000, alternative="less")[1] < 0.1


def test_randomization_exact_enumeration_by_hand():
    # d = (1, 2, 3), 8 sign vectors; mean >= 2 only for (+,+,+): p = 1/8
    assert randomization_test([1, 2, 3], [0, 0, 0]) == (2.0, 0.125)
    # two-sided: |mean| >= 2 for (+,+,+) and (-,-,-): 2/8
    assert randomization_test([1, 2, 3], [0, 0, 0], alternative="two-sided")[1] == 0.25


def test_randomization_is_reproducible():
    a, b = _pair(n=40, seed=5)
    assert randomization_test(a, b, random_state=4) == randomization_test(a, b, random_state=4)


def test_compare_aligns_by_query_id():
    a = {"q1": 0.9, "q2": 0.8, "q3": 0.7, "q4": 0.6}
    b = {"q4": 0.5, "q3": 0.6, "q1": 0.7, "q2": 0.75}         # other order
    result = compare(a, b)
    aligned = stats.ttest_rel([0.9, 0.8, 0.7, 0.6], [0.7, 0.75, 0.6, 0.5], alternative="greater")
    assert isinstance(result, Comparison) and result.n == 4
    assert result.p_value == pytest.approx(aligned.pvalue)
    assert result.difference == pytest.approx(0.1125)
    assert result.significant(0.05) == (aligned.pvalue < 0.05)
    nested = compare({"map": a, "ndcg@1": a}, {"map": b, "ndcg@1": a}, test="randomization")
    assert set(nested) == {"map", "ndcg@1"} and nested["ndcg@1"].p_value == 1.0


def test_compare_errors():
    with pytest.raises(RLSIError, match="1 only in A, 0 only in B.*'q9'"):
        compare({"q1": 1.0, "q2": 0.0, "q9": 1.0}, {"q1": 0.0, "q2": 0.0})
    with pytest.raises(RLSIError, match="metric 'map' of A is missing"):
        compare({"map": {"q": 1.0}}, {"mrr": {"q": 1.0}})
    with pytest.raises(RLSIError, match="test='wilcoxon'"):
        compare({"q": 1.0}, {"q": 1.0}, test="wilcoxon")
