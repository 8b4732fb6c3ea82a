"""UMass and NPMI coherence on a four-document corpus worked out by hand."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi.errors import RLSIError
import rlsi.quality.coherence as c

# Terms a b c d e f. Topic 0 ranks a > b > c (positive); topic 1 is negative-dominated and its dominant
# ranking is e(-3) > d(-2) > f(-1); topic 2 is dead.
TOPICS = np.array([[3.0, 2, 1, 0, 0, 0],
                   [0, 0, 0, -2, -3, -1],
                   [0, 0, 0, 0, 0, 0]])
# Documents (counts, binarised by the measures):
#   d1: a b c   d2: a b   d3: a d f   d4: d e
X = np.array([[2, 1, 1, 0, 0, 0],
              [1, 3, 0, 0, 0, 0],
              [1, 0, 0, 1, 0, 4],
              [0, 0, 0, 1, 2, 0]], dtype=float)
# D(a)=3 D(b)=2 D(c)=1 D(d)=2 D(e)=1 D(f)=1 ; D(a,b)=2 D(a,c)=1 D(b,c)=1 ; D(e,d)=1 D(e,f)=0 D(d,f)=1


def inputs():
    return [(TOPICS, X), (sp.csr_matrix(TOPICS), sp.csr_matrix(X))]


@pytest.mark.parametrize("topics,docs", inputs(), ids=["dense", "sparse"])
def test_umass(topics, docs):
    # T0 (a,b,c): log((D(b,a)+1)/D(a)) = log(3/3) = 0 ; log((D(c,a)+1)/D(a)) = log(2/3) ;
    #             log((D(c,b)+1)/D(b)) = log(2/2) = 0                      -> sum log(2/3)
    # T1 (e,d,f): log((D(d,e)+1)/D(e)) = log(2/1) ; log((D(f,e)+1)/D(e)) = log(1/1) = 0 ;
    #             log((D(f,d)+1)/D(d)) = log(2/2) = 0                      -> sum log 2
    s = c.umass_coherence(topics, docs, n=3, aggregate="sum")
    np.testing.assert_allclose(s[:2], [math.log(2 / 3), math.log(2)])
    assert math.isnan(s[2])
    m = c.umass_coherence(topics, docs, n=3)
    np.testing.assert_allclose(m[:2], [math.log(2 / 3) / 3, math.log(2) / 3])
    # n=2: only the pair (b|a) -> 0 and (d|e) -> log 2
    np.testing.assert_allclose(c.umass_coherence(topics, docs, n=2)[:2], [0.0, math.log(2)])


@pytest.mark.parametrize("topics,docs", inputs(), ids=["dense", "sparse"])
def test_npmi(topics, docs):
    # N = 4. T0: (a,b) log((2/4)/((3/4)(2/4))) / -log(2/4) = log(4/3)/log 2
    #            (a,c) log((1/4)/((3/4)(1/4))) / -log(1/4) = log(4/3)/log 4
    #            (b,c) log((1/4)/((2/4)(1/4))) / log 4      = log 2 / log 4 = 0.5
    t0 = (math.log(4 / 3) / math.log(2) + math.log(4 / 3) / math.log(4) + 0.5) / 3
    # T1: (e,d) log((1/4)/((1/4)(2/4)))/log 4 = 0.5 ; (e,f) never together -> -1 ;
    #     (d,f) log((1/4)/((2/4)(1/4)))/log 4 = 0.5                     -> mean 0
    s = c.npmi_coherence(topics, docs, n=3)
    np.testing.assert_allclose(s[:2], [t0, 0.0], atol=1e-12)
    assert t0 == pytest.approx(0.374185, abs=1e-6)
    assert math.isnan(s[2])


def test_npmi_limits_and_skipped_pairs():
    topics = np.array([[2.0, 1, 0], [0, 2, 1]])
    docs = np.array([[1.0, 1, 0], [1, 1, 0]])  # a, b in every document; c never occurs
    s = c.npmi_coherence(topics, docs, n=2)
    assert s[0] == 1.0            # P(a,b) = 1 -> 1 by its limit
    assert math.isnan(s[1])       # (b,c): c never occurs -> undefined, no pair left
    # UMass: topic 1 ranks b > c, pair (c|b) = log((0+1)/2) ; topic order c > b would condition on c
    np.testing.assert_allclose(c.umass_coherence(topics, docs, n=2), [math.log(3 / 2), math.log(1 / 2)])
    assert math.isnan(c.umass_coherence(np.array([[0.0, 1, 2]]), docs, n=2)[0])  # (b|c), D(c)=0


def test_co_document_frequencies():
    # columns a, b, d: D(a)=3 D(b)=2 D(d)=2, D(a,b)=2 D(a,d)=1 D(b,d)=0
    expected = [[3, 2, 1], [2, 2, 0], [1, 0, 2]]
    np.testing.assert_array_equal(c.co_document_frequencies(X, [0, 1, 3]), expected)
    np.testing.assert_array_equal(c.co_document_frequencies(sp.csr_matrix(X), [0, 1, 3]), expected)


def test_registry_and_dispatch():
    assert set(c.COHERENCE_MEASURES) == {"umass", "npmi"}
    np.testing.assert_allclose(c.topic_coherence(TOPICS, X, "umass", 3)[:2], [math.log(2 / 3) / 3, math.log(2) / 3])
    assert c.avg_topic_coherence(TOPICS, X, "npmi", 3) == pytest.approx(
        (math.log(4 / 3) / math.log(2) + math.log(4 / 3) / math.log(4) + 0.5) / 6)
    with pytest.raises(RLSIError, match="'umass', 'npmi'"):
        c.topic_coherence(TOPICS, X, "cv")


def test_bad_inputs():
    with pytest.raises(RLSIError, match="terms"):
        c.umass_coherence(TOPICS, X[:, :5])
    with pytest.raises(RLSIError, match="no document"):
        c.npmi_coherence(TOPICS, np.zeros((0, 6)))
    with pytest.raises(RLSIError, match="NaN"):
        c.umass_coherence(TOPICS, np.where(X == 2, np.nan, X))
