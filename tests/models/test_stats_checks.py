"""The statistics of an online stream are checked before it goes on: finite, S symmetric positive
semidefinite (the O(K²) tests on every load, the eigenvalues before a resume)."""

import numpy as np
import pytest

from rlsi.errors import ModelFormatError
from rlsi.models.stats import TopicStatistics
from rlsi.models.stats_checks import check_statistics


def _stats(S, n_terms=4):
    st = TopicStatistics(S.shape[0], n_terms)
    st.S = np.array(S, dtype=np.float64)
    return st


def _sound(K=3, seed=0):
    W = np.random.default_rng(seed).random((20, K))
    return W.T @ W


def test_sound_statistics_pass_both_levels():
    st = _stats(_sound())
    assert check_statistics(st, "x") is st
    check_statistics(st, "x", full=True)
    check_statistics(_stats(np.zeros((3, 3))), "x", full=True)  # a stream that has seen nothing


@pytest.mark.parametrize("damage, words", [
    (lambda S: S.__setitem__((1, 1), 8.45e-308), "not positive semidefinite"),  # a denormal diagonal entry
    (lambda S: S.__setitem__((0, 2), S[0, 2] * 1.5), "not symmetric"),
    (lambda S: S.__setitem__((2, 2), -1.0), "negative diagonal"),
    (lambda S: S.__setitem__((0, 1), np.nan), "NaN or infinite"),
], ids=["denormal", "asymmetric", "negative", "nan"])
def test_damaged_statistics_are_refused_on_every_load(damage, words):
    S = _sound()
    damage(S)
    with pytest.raises(ModelFormatError, match=words) as info:
        check_statistics(_stats(S), "the saved statistics")
    assert "\n" not in str(info.value)


def test_an_indefinite_s_within_the_entry_bounds_is_refused_before_a_resume():
    S = np.array([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]])  # every |S_ij| <= 1, eigenvalue -0.8
    check_statistics(_stats(S), "x")  # the O(K²) tests cannot see it
    with pytest.raises(ModelFormatError, match="negative eigenvalue"):
        check_statistics(_stats(S), "x", full=True)


def test_non_finite_r_is_refused_before_a_resume():
    st = _stats(_sound())
    st.stored_R[1, 2] = np.inf
    with pytest.raises(ModelFormatError, match="R holds NaN or infinite"):
        check_statistics(st, "x", full=True)
