"""Topic quality measures on hand-made matrices; every expected value is worked out in the comments."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi.errors import RLSIError
import rlsi.quality.topics as q

NAMES = ["a", "b", "c", "d", "e", "f"]

# Three topics x six terms.
#   T0 = [ 3,  0, 1, 0, -1, 0]  Pos = 3+1 = 4, Neg = 1           -> sign +1, MR = 4/5 = 0.8, nnz 3
#   T1 = [-1, -4, 0, 2, -2, 0]  Pos = 2,       Neg = 1+4+2 = 7   -> sign -1, MR = 7/9,       nnz 4
#   T2 = all zero (dead)        Pos = Neg = 0                    -> sign +1, MR = nan,       nnz 0
M = np.array([[3.0, 0, 1, 0, -1, 0],
              [-1, -4, 0, 2, -2, 0],
              [0, 0, 0, 0, 0, 0]])


def both(matrix):
    """The same topics dense and as CSR (with an explicitly stored zero, which must be ignored)."""
    S = sp.csr_matrix(matrix)
    S = sp.csr_matrix((np.append(S.data, 0.0), np.append(S.indices, 5),
                       np.append(S.indptr[:-1], S.indptr[-1] + 1)), shape=matrix.shape)
    assert S.nnz == np.count_nonzero(matrix) + 1
    return [matrix, S]


@pytest.mark.parametrize("X", both(M), ids=["dense", "sparse"])
def test_dominant_sign(X):
    np.testing.assert_array_equal(q.dominant_sign(X), [1, -1, 1])


def test_dominant_sign_tie_is_positive():
    # Pos = 2 = Neg -> +1 ; Pos = 1 < Neg = 1.5 -> -1
    X = np.array([[2.0, -1, -1, 0], [1, 0, -1.5, 0]])
    np.testing.assert_array_equal(q.dominant_sign(X), [1, -1])
    # top terms follow the same rule: the tied topic lists its positive term, the other its negative one
    assert q.top_terms(X, NAMES[:4], n=3) == [["a"], ["c"]]


@pytest.mark.parametrize("X", both(M), ids=["dense", "sparse"])
def test_top_terms_dominant(X):
    # T0 dominant (+): a(3) > c(1); e is negative and excluded.
    # T1 dominant (-): b(-4), e(-2), a(-1) by -w decreasing; d (+2) is excluded. Dead T2: empty.
    assert q.top_terms(X, NAMES, n=10) == [["a", "c"], ["b", "e", "a"], []]
    assert q.top_terms(X, NAMES, n=2) == [["a", "c"], ["b", "e"], []]
    assert q.top_terms_with_weights(X, NAMES, n=3)[1] == [("b", -4.0), ("e", -2.0), ("a", -1.0)]
    idx = q.top_term_indices(X, n=10)
    assert [list(i) for i in idx] == [[0, 2], [1, 4, 0], []]


@pytest.mark.parametrize("X", both(M), ids=["dense", "sparse"])
def test_top_terms_abs_and_positive_with_ties(X):
    # abs, n=3: T0 |w| a3, c1, e1 -> tie c/e broken by index -> a c e
    #           T1 |w| b4, d2, e2, a1 -> tie d/e by index -> b d e
    assert q.top_terms(X, NAMES, n=3, by="abs") == [["a", "c", "e"], ["b", "d", "e"], []]
    # positive: T0 a, c ; T1 only d
    assert q.top_terms(X, NAMES, n=10, by="positive") == [["a", "c"], ["d"], []]


def test_ties_cut_at_boundary_are_stable():
    # four equal weights, n=2 -> the two smallest indices, in index order
    X = np.array([[0.0, 5, 5, 0, 5, 5]])
    assert q.top_terms(X, NAMES, n=2) == [["b", "c"]]
    assert q.top_terms(sp.csr_matrix(X), NAMES, n=2, by="abs") == [["b", "c"]]


@pytest.mark.parametrize("X", both(M), ids=["dense", "sparse"])
def test_compactness(X):
    # nnz / 6 : 3/6, 4/6, 0 ; AvgComp = (1/2 + 2/3 + 0) / 3 = 7/18
    np.testing.assert_allclose(q.compactness(X), [0.5, 4 / 6, 0.0])
    assert q.avg_compactness(X) == pytest.approx(7 / 18)


@pytest.mark.parametrize("X", both(M), ids=["dense", "sparse"])
def test_representability(X):
    # n_top=2: T0 (3+1)/(3+1+1) = 0.8 ; T1 (4+2)/(1+4+2+2) = 6/9 ; dead T2 -> 0
    np.testing.assert_allclose(q.representability(X, 2), [0.8, 6 / 9, 0.0])
    assert q.avg_representability(X, 2) == pytest.approx((0.8 + 6 / 9) / 3)
    # n_top=1: 3/5 and 4/9 ; n_top >= nnz -> 1
    np.testing.assert_allclose(q.representability(X, 1), [0.6, 4 / 9, 0.0])
    np.testing.assert_allclose(q.representability(X, 6), [1.0, 1.0, 0.0])


@pytest.mark.parametrize("X", both(M), ids=["dense", "sparse"])
def test_overlap_with_dead_topic(X):
    # top-3 dominant sets: T0 {a, c}, T1 {b, e, a}, T2 {} ; pairs (0,1): |{a}|/3, (0,2): 0, (1,2): 0
    # -> (1/3) / 3 = 1/9
    assert q.overlap(X, 3) == pytest.approx(1 / 9)


def test_overlap_three_live_topics():
    B = np.array([[5.0, 4, 3, 0, 0, 0],    # top2 {a,b}  top3 {a,b,c}
                  [0, 4, 5, 3, 0, 0],      # top2 {c,b}  top3 {c,b,d}
                  [1, 0, 0, 0, 2, 3]])     # top2 {f,e}  top3 {f,e,a}
    # @2: (0,1) 1/2, (0,2) 0, (1,2) 0 -> 1/6
    assert q.overlap(B, 2) == pytest.approx(1 / 6)
    # @3: (0,1) 2/3, (0,2) 1/3, (1,2) 0 -> 1/3
    assert q.overlap(sp.csr_matrix(B), 3) == pytest.approx(1 / 3)
    # identical topics overlap fully; a single topic has no pair
    assert q.overlap(np.vstack([B[0], B[0]]), 3) == pytest.approx(1.0)
    assert math.isnan(q.overlap(B[:1], 3))


@pytest.mark.parametrize("X", both(M), ids=["dense", "sparse"])
def test_contributions(X):
    c = q.contributions(X)
    np.testing.assert_allclose(c["pos_contri"], [4, 2, 0])
    np.testing.assert_allclose(c["neg_contri"], [1, 7, 0])
    np.testing.assert_allclose(c["majority_ratio"][:2], [0.8, 7 / 9])
    assert math.isnan(c["majority_ratio"][2])
    # dead topic skipped: (0.8 + 7/9) / 2
    assert q.avg_majority_ratio(X) == pytest.approx((0.8 + 7 / 9) / 2)
    assert math.isnan(q.avg_majority_ratio(np.zeros((2, 3))))


def test_dense_and_sparse_identical():
    rng = np.random.default_rng(0)
    D = rng.normal(size=(7, 40)) * (rng.random((7, 40)) < 0.3)
    D[3] = 0.0
    S = sp.csr_matrix(D)
    for f in (q.dominant_sign, q.compactness, lambda X: q.representability(X, 4),
              lambda X: q.overlap(X, 5), lambda X: q.contributions(X)["majority_ratio"]):
        np.testing.assert_array_equal(f(D), f(S))
    names = [f"t{j}" for j in range(40)]
    for by in q.RANKINGS:
        assert q.top_terms(D, names, 6, by) == q.top_terms(S.tocoo(), names, 6, by)
    dense, sparse = q.topic_summary(D, names, 5), q.topic_summary(S, names, 5)
    assert math.isnan(dense[3]["majority_ratio"]) and math.isnan(sparse[3]["majority_ratio"])
    dense[3]["majority_ratio"] = sparse[3]["majority_ratio"] = None   # nan != nan
    assert dense == sparse
    assert q.format_topics(D, names) == q.format_topics(S, names)


def test_topic_summary_and_format():
    s = q.topic_summary(M, NAMES, n_terms=2)
    assert s[1] == {"index": 1, "sign": -1, "terms": ["b", "e"], "weights": [-4.0, -2.0],
                    "compactness": pytest.approx(4 / 6), "pos_contri": 2.0, "neg_contri": 7.0,
                    "majority_ratio": pytest.approx(7 / 9)}
    text = q.format_topics(M, NAMES, n_terms=3)
    assert text.splitlines() == [
        "    T1  comp=50.0%  MR=0.80  a c",
        "(-) T2  comp=66.7%  MR=0.78  b e a",
        "    T3  comp=0.0%   MR=n/a   (empty topic)",
        "(-) the topic's weight is mostly negative; its terms are listed by their negative weights",
    ]
    # no negative topic: no marker column, as in the `rlsi topics` example line
    assert q.format_topics(np.array([[0.0, 2, 1, 0, 0, 0]]), NAMES) == "T1  comp=33.3%  MR=1.00  b c"


def test_quality_report_and_registry():
    r = q.quality_report(M, n_top=2)
    assert r == {"avg_compactness": pytest.approx(7 / 18),
                 "avg_representability@2": pytest.approx((0.8 + 6 / 9) / 3),
                 "overlap@2": pytest.approx(0.0),   # {a,c} vs {b,e} share nothing
                 "avg_majority_ratio": pytest.approx((0.8 + 7 / 9) / 2)}
    assert set(q.QUALITY_MEASURES) == {"avg_compactness", "avg_representability@10", "overlap@10",
                                       "avg_majority_ratio"}
    assert q.QUALITY_MEASURES["overlap@10"](M) == pytest.approx(1 / 30)  # |{a}| / 10 over 3 pairs
    assert q.get_quality_measure("overlap@3")(M) == pytest.approx(1 / 9)
    assert q.quality_report(M, measures=["avg_compactness"]) == {"avg_compactness": pytest.approx(7 / 18)}


def test_unknown_measure_lists_choices():
    with pytest.raises(RLSIError, match="avg_compactness.*overlap@10"):
        q.get_quality_measure("perplexity")
    with pytest.raises(RLSIError, match="perplexity"):
        q.quality_report(M, measures=["avg_compactness", "perplexity"])
    with pytest.raises(RLSIError, match="'dominant', 'abs', 'positive'"):
        q.top_terms(M, NAMES, by="largest")


@pytest.mark.parametrize("bad", [np.zeros(6), np.zeros((0, 6)), np.array([[1.0, np.nan]]),
                                 sp.csr_matrix(np.array([[1.0, np.inf]])), np.array([["x"]])])
def test_bad_components(bad):
    with pytest.raises(RLSIError):
        q.compactness(bad)


def test_bad_names_and_n():
    with pytest.raises(RLSIError, match="feature_names"):
        q.top_terms(M, NAMES[:5])
    with pytest.raises(RLSIError, match="n=0"):
        q.top_terms(M, NAMES, n=0)


def test_estimator_with_components_attribute():
    class Fitted:
        components_ = M
    assert q.avg_compactness(Fitted()) == pytest.approx(7 / 18)
