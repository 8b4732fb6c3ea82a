"""UMass and NPMI coherence: small corpora worked out by hand from the definitions, a set-based reference
implementation on random corpora, and invariants of the measures.

Definitions (the module docstring of rlsi.quality.coherence): for the top terms v_1..v_T of a topic in rank
order, with D(v) the number of documents containing v and D(v, v') the number containing both,
* UMass (Mimno et al. 2011): sum over l < m of log((D(v_m, v_l) + 1) / D(v_l)) (our default divides by the
  number of pairs);
* NPMI (Bouma 2009; documents as windows as in Röder et al. 2015): mean over pairs of
  log(P(i, j) / (P(i) P(j))) / -log P(i, j), P(i) = D(i)/N, P(i, j) = D(i, j)/N; -1 when i and j never
  co-occur, 1 when both are in every document.
"""

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


# ------------------------------------------------------------------ a second corpus with round values
# Eight documents, terms a b c d (columns 0..3):
#   a in d0 d1            D(a) = 2
#   b in d1 d2            D(b) = 2      D(a,b) = 1 (d1)
#   c in d0 d1 d2 d3      D(c) = 4      D(a,c) = 2 (d0 d1)   D(b,c) = 2 (d1 d2)
#   d in d4 d5 d6 d7      D(d) = 4      D(a,d) = D(b,d) = D(c,d) = 0
ROUND_X = np.zeros((8, 4))
for term, docs_with_it in enumerate([(0, 1), (1, 2), (0, 1, 2, 3), (4, 5, 6, 7)]):
    ROUND_X[list(docs_with_it), term] = 1.0 + term  # any non-zero count: the measures binarise
# topic 0 ranks a > b > c ; topic 1 ranks c > d > a
ROUND_TOPICS = np.array([[3.0, 2, 1, 0], [1, 0, 3, 2]])


def test_npmi_round_values_by_hand():
    # (a,b): P = 1/8, P(a) P(b) = 1/16 -> log 2 / log 8 = 1/3
    # (a,c): P = 2/8, P(a) P(c) = 1/8  -> log 2 / log 4 = 1/2 ; (b,c) likewise 1/2
    # topic 0: (1/3 + 1/2 + 1/2) / 3 = 4/9
    # topic 1: (c,d) never together -1 ; (c,a) 1/2 ; (d,a) -1          -> (-1 + 1/2 - 1) / 3 = -1/2
    np.testing.assert_allclose(c.npmi_coherence(ROUND_TOPICS, ROUND_X, n=3), [4 / 9, -1 / 2], rtol=1e-12)
    # independent terms have NPMI 0: with only d0..d3, a (d0 d1) and b (d1 d2) have P(a,b) = 1/4 =
    # P(a) P(b); identical columns have NPMI 1 although neither term is in every document
    X = np.array([[1.0, 0, 1, 1], [1, 1, 1, 1], [0, 1, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_allclose(c.npmi_coherence(np.array([[2.0, 1, 0, 0], [0, 0, 2, 1]]), X, n=2),
                               [0.0, 1.0], atol=1e-12)


def test_umass_round_values_by_hand():
    # topic 0 (a, b, c): (b|a) log((1+1)/2) = 0 ; (c|a) log((2+1)/2) ; (c|b) log((2+1)/2) -> log(9/4)
    # topic 1 (c, d, a): (d|c) log((0+1)/4) ; (a|c) log((2+1)/4) ; (a|d) log((0+1)/4)    -> log(3/64)
    sums = c.umass_coherence(ROUND_TOPICS, ROUND_X, n=3, aggregate="sum")
    np.testing.assert_allclose(sums, [math.log(9 / 4), math.log(3 / 64)], rtol=1e-12)
    np.testing.assert_allclose(c.umass_coherence(ROUND_TOPICS, ROUND_X, n=3), sums / 3, rtol=1e-12)


# ------------------------------------------------------------------ a reference from the definitions
def reference_top_terms(weights, n):
    """Top n terms by the dominant sign (rlsi.quality.topics' docstring), written out plainly."""
    pos = sum(w for w in weights if w > 0)
    neg = sum(-w for w in weights if w < 0)
    sign = 1.0 if pos >= neg else -1.0
    ranked = sorted((j for j, w in enumerate(weights) if sign * w > 0), key=lambda j: (-sign * weights[j], j))
    return ranked[:n]


def reference_scores(topics, X, n):
    """(UMass mean, UMass sum, NPMI) per topic from sets of documents, pair by pair."""
    X = np.asarray(X)
    N = X.shape[0]
    docs = [set(np.flatnonzero(X[:, v])) for v in range(X.shape[1])]
    out = []
    for weights in np.asarray(topics):
        top = reference_top_terms(list(weights), n)
        umass, npmi = [], []
        for m in range(len(top)):
            for l in range(m):
                Dl, Dm = docs[top[l]], docs[top[m]]
                if Dl:
                    umass.append(math.log((len(Dm & Dl) + 1) / len(Dl)))
                if Dl and Dm:
                    both = len(Dl & Dm)
                    if both == 0:
                        npmi.append(-1.0)
                    elif both == N:
                        npmi.append(1.0)
                    else:
                        p = both / N
                        npmi.append(math.log(p / (len(Dl) / N * len(Dm) / N)) / -math.log(p))
        out.append((np.mean(umass) if umass else math.nan, sum(umass) if umass else math.nan,
                    np.mean(npmi) if npmi else math.nan))
    return np.array(out).reshape(-1, 3)


def random_problem(seed, n_docs=30, n_terms=25, n_topics=6):
    """Sparse random counts (some empty terms and documents) and topics of both signs, one dead."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.25, size=(n_docs, n_terms)).astype(float)
    X[:, rng.choice(n_terms, 3, replace=False)] = 0.0  # terms that never occur
    X[rng.integers(n_docs)] = 0.0
    topics = rng.standard_normal((n_topics, n_terms)) * (rng.random((n_topics, n_terms)) < 0.5)
    topics[rng.integers(n_topics)] = 0.0
    return topics, X


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [2, 5, 10])
def test_matches_the_set_based_reference(seed, n):
    topics, X = random_problem(seed)
    expected = reference_scores(topics, X, n)
    for T, D in [(topics, X), (sp.csr_matrix(topics), sp.csr_matrix(X)), (topics, sp.csc_matrix(X))]:
        np.testing.assert_allclose(c.umass_coherence(T, D, n=n), expected[:, 0], rtol=1e-12)
        np.testing.assert_allclose(c.umass_coherence(T, D, n=n, aggregate="sum"), expected[:, 1], rtol=1e-12)
        np.testing.assert_allclose(c.npmi_coherence(T, D, n=n), expected[:, 2], rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------ invariants
def both(topics, X, n=6):
    return c.umass_coherence(topics, X, n=n), c.npmi_coherence(topics, X, n=n)


@pytest.mark.parametrize("seed", range(4))
def test_invariances(seed):
    topics, X = random_problem(seed)
    rng = np.random.default_rng(100 + seed)
    umass, npmi = both(topics, X)
    assert np.isnan(umass).any() and np.isfinite(umass).sum() >= 3  # the dead topic, and real values
    same = lambda got: [np.testing.assert_allclose(g, e, rtol=1e-12) for g, e in zip(got, (umass, npmi))]
    # NPMI is a normalised measure
    assert np.all((npmi[~np.isnan(npmi)] >= -1) & (npmi[~np.isnan(npmi)] <= 1))
    # counts are binarised: any non-zero value (negative too) is an occurrence
    same(both(topics, X * rng.uniform(0.1, 5.0, X.shape) * rng.choice([-1, 1], X.shape)))
    # the order of the documents does not matter
    same(both(topics, X[rng.permutation(X.shape[0])]))
    # renaming the terms (the same permutation of the topics' and the corpus' columns) changes nothing
    perm = rng.permutation(X.shape[1])
    same(both(topics[:, perm], X[:, perm]))
    # a topic's scale and its sign do not change its top terms
    scale = rng.uniform(0.1, 10.0, (topics.shape[0], 1)) * rng.choice([-1, 1], (topics.shape[0], 1))
    same(both(topics * scale, X))
    # sparse and dense inputs agree
    same(both(sp.csr_matrix(topics), sp.csr_matrix(X)))


def test_corpus_size_changes_npmi_and_umass_as_defined():
    topics, X = random_problem(3)
    umass, npmi = both(topics, X)
    # every document twice: all probabilities are unchanged (NPMI) but counts double (UMass changes)
    u2, n2 = both(topics, np.vstack([X, X]))
    np.testing.assert_allclose(n2, npmi, rtol=1e-12)
    assert not np.allclose(u2[~np.isnan(u2)], umass[~np.isnan(umass)])
    # documents without any term: UMass (counts only) is unchanged; NPMI sees N grow
    u3, n3 = both(topics, np.vstack([X, np.zeros((7, X.shape[1]))]))
    np.testing.assert_allclose(u3, umass, rtol=1e-12)
    assert not np.allclose(n3[~np.isnan(n3)], npmi[~np.isnan(npmi)])


def test_umass_sum_is_the_mean_times_the_defined_pairs():
    topics, X = random_problem(5)
    mean = c.umass_coherence(topics, X, n=4)
    total = c.umass_coherence(topics, X, n=4, aggregate="sum")
    docs = np.asarray(X) != 0
    for k, weights in enumerate(topics):
        top = reference_top_terms(list(weights), 4)
        pairs = sum(1 for m in range(len(top)) for l in range(m) if docs[:, top[l]].any())
        if pairs:
            assert total[k] == pytest.approx(mean[k] * pairs, rel=1e-12)
        else:
            assert math.isnan(total[k]) and math.isnan(mean[k])


def test_co_occurrence_extremes():
    # identical columns: NPMI 1 and UMass log((D+1)/D) > 0 ; disjoint columns: NPMI -1, UMass log(1/D)
    X = np.array([[1.0, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 1], [0, 0, 1], [0, 0, 0]])
    same, apart = np.array([[2.0, 1, 0]]), np.array([[2.0, 0, 1]])
    assert c.npmi_coherence(same, X, n=2)[0] == pytest.approx(1.0)
    assert c.umass_coherence(same, X, n=2)[0] == pytest.approx(math.log(3 / 2))
    assert c.npmi_coherence(apart, X, n=2)[0] == -1.0
    assert c.umass_coherence(apart, X, n=2)[0] == pytest.approx(math.log(1 / 2))
