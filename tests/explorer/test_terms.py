"""Signed top terms: exclusivity, relevance ordering, the terms a page keeps, the term lookup."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from rlsi.explorer.terms import (RELEVANCE_STEPS, candidates, rank, relevance, side_quotas, term_lookup,
                                 topic_terms)


def test_relevance_moves_from_weight_to_exclusivity():
    w = np.array([0.9, 0.5, 0.3])       # weights in this topic
    e = np.array([0.2, 0.6, 1.0])       # shares of each term's total |weight|
    cols = np.array([7, 3, 5])
    scale = 0.9
    assert rank(w, e, cols, scale, 1.0).tolist() == [0, 1, 2]   # by weight
    assert rank(w, e, cols, scale, 0.0).tolist() == [2, 1, 0]   # by exclusivity
    r = relevance(w, e, scale, 0.5)
    np.testing.assert_allclose(r, 0.5 * w / 0.9 + 0.5 * e)
    assert rank(w, e, cols, scale, 0.5).tolist() == list(np.argsort(-r))
    assert rank(w, e, cols, scale, 0.5, n=2).tolist() == list(np.argsort(-r))[:2]


def test_ties_go_to_the_larger_weight_then_the_smaller_column():
    w = np.array([-0.4, 0.4, 0.2, 0.4])
    e = np.array([0.5, 0.5, 1.0, 0.5])
    cols = np.array([9, 4, 1, 2])
    # at lam = 0 the term of exclusivity 1 leads; the rest tie on relevance and |w|: columns 2, 4, 9
    assert rank(w, e, cols, 0.4, 0.0).tolist() == [2, 3, 1, 0]
    assert rank(w, e, cols, 0.4, 1.0).tolist() == [3, 1, 0, 2]


def test_side_quotas_show_both_ends():
    assert side_quotas(100, 100, 30) == (15, 15)
    assert side_quotas(100, 4, 30) == (26, 4)       # a few negative terms: all shown
    assert side_quotas(3, 100, 30, sign=-1) == (3, 27)
    assert side_quotas(100, 100, 30, sign=-1) == (15, 15)
    assert side_quotas(100, 100, 7) == (4, 3)       # the dominant side gets the odd one
    assert side_quotas(100, 100, 7, sign=-1) == (3, 4)
    assert side_quotas(100, 0, 30) == (30, 0) and side_quotas(0, 0, 30) == (0, 0)


@given(st.integers(0, 10_000), st.integers(1, 40), st.integers(1, 8))
def test_candidates_hold_the_top_terms_at_every_slider_step(seed, n, quota):
    rng = np.random.default_rng(seed)
    w = np.round(rng.random(n), 2) + 0.01           # rounded: ties happen
    e = np.round(rng.random(n), 1)
    cols = rng.permutation(1000)[:n]
    kept = set(candidates(w, e, cols, quota).tolist())
    assert len(kept) <= min(n, quota * (RELEVANCE_STEPS + 1))
    for i in range(RELEVANCE_STEPS + 1):
        lam = i / RELEVANCE_STEPS
        full = rank(w, e, cols, w.max(), lam)[:quota]             # over every term
        assert set(full.tolist()) <= kept
        # the page ranks the kept terms alone; it shows the same top terms in the same order
        sub = np.array(sorted(kept))
        shown = sub[rank(w[sub], e[sub], cols[sub], w.max(), lam)[:quota]]
        assert shown.tolist() == full.tolist()


def test_topic_terms_on_a_hand_example():
    C = np.array([[0.6, -0.2, 0.0, 0.3, 0.0],
                  [0.0, -0.2, 0.5, 0.3, 0.0],
                  [0.0, 0.0, 0.0, 0.0, 0.0]])
    topics = topic_terms(C, n_terms=4)
    t0 = topics[0]
    assert t0["counts"] == (2, 1) and t0["quota"] == (2, 1) and t0["scale"] == (0.6, 0.2)
    # (column, weight, exclusivity = |w| / the column's total |weight| over topics), positive side first
    assert t0["entries"] == [(0, 0.6, 1.0), (3, 0.3, 0.5), (1, -0.2, 0.5)]
    assert topics[1]["entries"] == [(2, 0.5, 1.0), (3, 0.3, 0.5), (1, -0.2, 0.5)]
    assert topics[2] == {"scale": (0.0, 0.0), "quota": (0, 0), "counts": (0, 0), "entries": []}
    sparse = topic_terms(sp.csr_matrix(C), n_terms=4)
    assert sparse == topics


def test_topic_terms_keep_n_terms_per_topic_whatever_the_vocabulary():
    rng = np.random.default_rng(4)
    small = rng.normal(size=(5, 300)) * (rng.random((5, 300)) < 0.5)
    big = sp.hstack([sp.csr_matrix(small), sp.csr_matrix((5, 100_000))]).tocsr()  # many more (unused) terms
    a, b = topic_terms(small, 10), topic_terms(big, 10)
    assert a == b
    for t in a:
        q_pos, q_neg = t["quota"]
        assert q_pos + q_neg == 10
        assert len(t["entries"]) <= (q_pos + q_neg) * (RELEVANCE_STEPS + 1)


def test_term_lookup():
    C = np.array([[0.5, 0.0, 0.1],
                  [-0.7, 0.2, 0.0],
                  [0.1, 0.0, 0.0]])
    out = term_lookup(C, [0, 1, 2], per_term=2)
    assert out[0] == (3, [(1, -0.7), (0, 0.5)])     # non-zero in 3 topics, the 2 largest |weight|
    assert out[1] == (1, [(1, 0.2)])
    assert term_lookup(sp.csr_matrix(C), [0], per_term=5, exclude={(1, 0)}) == [(3, [(0, 0.5), (2, 0.1)])]
    assert term_lookup(C, [0], per_term=0) == [(3, [])]


def test_weights_are_rounded_to_four_digits():
    C = np.array([[0.123456789, -0.000987654321]])
    (t,) = topic_terms(C, n_terms=2)
    assert [w for _, w, _ in t["entries"]] == [0.1235, -0.0009877]
    assert relevance([0.5], [0.25], 0.5, 0.3)[0] == pytest.approx(0.3 + 0.7 * 0.25)
