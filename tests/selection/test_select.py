"""rlsi.select: the warm-started path, document completion against a plain-numpy oracle, stability, the
recommendation rule, the result's files, and the recommendation on a small corpus with known topics."""

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp

import rlsi
from rlsi import BatchRLSI
from rlsi.datasets.synthetic import make_corpus
from rlsi.errors import RLSIError
from rlsi.selection import completion, path, recommend, stability

#: A small corpus with five well-separated planted topics (one topic per document, little background).
FIVE = dict(n_docs=500, n_terms=400, tokens_per_doc=60, n_topics=5, topic_vocab=50, background_share=0.1,
            max_doc_topics=1, norm="l2", seed=3)


@pytest.fixture(scope="module")
def five():
    return make_corpus(**FIVE).X


def _oracle_errors(model, X1, X2):
    """Dense numpy: the prediction x̂ = transform(x₁) U over the vocabulary, the squared error of x₂ outside
    x₁'s terms, and ‖x₂‖², for the documents with both halves non-empty."""
    A, B = X1.toarray(), X2.toarray()
    keep = (A != 0).any(axis=1) & (B != 0).any(axis=1)
    A, B = A[keep], B[keep]
    W = model.transform(sp.csr_matrix(A))
    Xhat = W @ model.components_.toarray()
    unseen = A == 0
    return (((B - Xhat) * unseen) ** 2).sum(axis=1), (B ** 2).sum(axis=1)


@pytest.mark.parametrize("chunk_entries", [completion.CHUNK_ENTRIES, 5])
def test_completion_matches_a_dense_oracle(five, chunk_entries):
    model = BatchRLSI(5, lambda1=0.05, lambda2=1.0, max_iter=5, random_state=0).fit(five[:400])
    X1, X2 = completion.split_terms(five[400:], np.random.default_rng(1))
    assert (abs(X1 + X2 - five[400:]) > 0).nnz == 0 and X1.multiply(X2).nnz == 0  # a partition of the terms
    errors, norms = completion.completion_errors(model, X1, X2, chunk_entries)
    want_errors, want_norms = _oracle_errors(model, X1, X2)
    np.testing.assert_allclose(errors, want_errors, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(norms, want_norms, rtol=1e-12)
    score, se = completion.completion_score(model, X1, X2, chunk_entries)
    ratio = want_errors.sum() / want_norms.sum()
    n = want_errors.size
    assert score == pytest.approx(1 - ratio, rel=1e-9)
    assert se == pytest.approx(math.sqrt(((want_errors - ratio * want_norms) ** 2).sum() * n / (n - 1))
                               / want_norms.sum(), rel=1e-9)
    assert 0 < score < 1  # five clear topics predict part of the unseen half


def test_completion_refuses_documents_without_two_halves():
    model = BatchRLSI(1, lambda1=0.01, max_iter=2, random_state=0).fit(sp.random(20, 10, density=0.5, random_state=0))
    one_term = sp.csr_matrix(np.eye(3, 10))
    with pytest.raises(RLSIError, match="both halves"):
        completion.completion_errors(model, one_term, sp.csr_matrix((3, 10)))


def test_stability_of_identical_topics_is_one_in_any_order_and_sign():
    C = sp.random(6, 40, density=0.3, random_state=0, format="csr")
    C = sp.vstack([C, sp.csr_matrix((1, 40))]).tocsr()  # an empty topic matches an empty topic
    shuffled = sp.diags([1, -1, 1, -1, 1, 1, 1]) @ C[[3, 0, 6, 5, 1, 2, 4]]
    value, pairs = stability.matched_similarity(C, shuffled)
    assert value == pytest.approx(1.0) and np.allclose(pairs, 1.0)
    unrelated = sp.csr_matrix(np.eye(7, 40, k=33))  # terms none of C's topics... may hold: compare to the oracle
    sim = stability.topic_similarity(C, unrelated)
    dense = C.toarray()
    norms = np.linalg.norm(dense, axis=1)
    want = np.abs(dense @ np.eye(7, 40, k=33).T) / np.where(norms == 0, 1, norms)[:, None]
    want[norms == 0] = 0.0
    np.testing.assert_allclose(sim, want, atol=1e-12)


def test_stability_of_two_fits_with_one_seed_is_one(five):
    a = BatchRLSI(5, lambda1=0.05, lambda2=1.0, max_iter=10, random_state=4).fit(five)
    b = BatchRLSI(5, lambda1=0.05, lambda2=1.0, max_iter=10, random_state=4).fit(five)
    assert stability.matched_similarity(a.components_, b.components_)[0] == pytest.approx(1.0)


def test_path_order_names_each_fit_s_predecessor():
    order = path.path_order([5, 10, 20], [0.2, 0.1])
    assert order == [(5, 0.2, None), (5, 0.1, 0), (10, 0.2, 0), (10, 0.1, 2), (20, 0.2, 2), (20, 0.1, 4)]


def test_each_fit_of_the_path_starts_from_its_predecessor(five):
    params = dict(lambda2=1.0, max_iter=4)
    points = path.fit_path(five, [3, 5], [0.2, 0.05], random_state=7, params=params)
    assert [p.started_from for p in points] == [None, 0, 0, 2]
    # the first fit is a cold fit; the second is the public warm start from the first's document vectors
    first = BatchRLSI(3, lambda1=0.2, random_state=7, **params)
    W0 = first.fit_transform(five)
    assert (abs(first.components_ - points[0].model.components_) > 0).nnz == 0
    warm = BatchRLSI(3, lambda1=0.05, random_state=7, **params).fit(five, V_init=W0, topic_init=first)
    assert (abs(warm.components_ - points[1].model.components_) > 0).nnz == 0
    cold = BatchRLSI(3, lambda1=0.05, random_state=7, **params).fit(five)
    assert abs(cold.components_ - points[1].model.components_).max() > 1e-6  # the start made a difference
    vectors_only = BatchRLSI(3, lambda1=0.05, random_state=7, **params).fit(five, V_init=W0)
    assert abs(vectors_only.components_ - points[1].model.components_).max() > 0  # the topics' start counts
    # growing K: the first fit's columns and two seeded ones; its topics and two empty ones
    V_init = path.grow_doc_vectors(five, W0, first.components_, 5, np.random.default_rng(7))
    topics = path.grow_topics(first.components_, 5)
    assert topics.shape == (5, five.shape[1]) and topics[3:].nnz == 0
    grown = BatchRLSI(5, lambda1=0.2, random_state=7, **params).fit(five, V_init=V_init, topic_init=topics)
    assert (abs(grown.components_ - points[2].model.components_) > 0).nnz == 0


def test_growing_k_keeps_the_columns_and_seeds_the_new_ones(five):
    model = BatchRLSI(3, lambda1=0.05, lambda2=1.0, max_iter=5, random_state=0)
    W = model.fit_transform(five)
    grown = path.grow_doc_vectors(five, W, model.components_, 5, np.random.default_rng(0))
    assert grown.shape == (five.shape[0], 5)
    np.testing.assert_array_equal(grown[:, :3], W)
    assert np.all(np.abs(grown[:, 3:]).max(axis=0) > 0)
    with pytest.raises(RLSIError, match="shrink"):
        path.grow_doc_vectors(five, W, model.components_, 2, np.random.default_rng(0))


def _row(k, lam, score, se=0.01, stab=0.9):
    return {"n_components": k, "lambda1": lam, "completion": score, "completion_se": se, "stability": stab}


def test_rule_takes_the_smallest_stable_k_within_one_standard_error():
    rows = [_row(5, 0.1, 0.10), _row(5, 0.05, 0.11), _row(10, 0.1, 0.195), _row(10, 0.05, 0.197),
            _row(20, 0.1, 0.20, se=0.01), _row(20, 0.05, 0.19), _row(40, 0.1, 0.18)]
    index, words = recommend(rows, 0.8)
    assert index == 2 and "K=10, lambda1=0.1" in words and "stability" in words
    rows[2]["stability"] = 0.5  # not stable: the next qualifying point at the same K
    assert recommend(rows, 0.8)[0] == 3
    rows[3]["stability"] = 0.5  # nothing at K = 10 is stable: K = 20
    assert recommend(rows, 0.8)[0] == 4
    for r in rows:
        r["stability"] = 0.1  # nothing stable: the one-standard-error rule alone, said so
    index, words = recommend(rows, 0.8)
    assert index == 2 and "did not take part" in words
    assert "largest K of the grid" not in words
    with pytest.raises(RLSIError):
        recommend([], 0.8)


def test_a_recommendation_at_the_grids_largest_k_says_the_grid_may_be_too_small():
    rows = [_row(5, 0.1, 0.10), _row(10, 0.1, 0.15), _row(20, 0.1, 0.30)]
    index, words = recommend(rows, 0.8)
    assert index == 2 and "largest K of the grid" in words and "K=20" in words
    index, words = recommend([_row(20, 0.1, 0.30), _row(20, 0.05, 0.31)], 0.8)  # one K: no grid over K to extend
    assert "largest K of the grid" not in words


def test_select_recommends_the_planted_k_and_is_reproducible(five, tmp_path):
    kwargs = dict(topics=[3, 5, 8], lambda1=[0.1, 0.05], random_state=0, tol=1e-3)
    result = rlsi.select(five, **kwargs)
    assert result.best_params["n_components"] == 5
    assert [(r["n_components"], r["lambda1"], r["started_from"]) for r in result.rows] == [
        (3, 0.1, None), (3, 0.05, 0), (5, 0.1, 0), (5, 0.05, 2), (8, 0.1, 2), (8, 0.05, 4)]
    again = rlsi.select(five, **kwargs)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in result.rows]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in again.rows]
    text = result.to_markdown()
    assert text.count("\n| ") == len(result.rows) and "Recommended: " in text and "**5**" in text
    paths = result.save(tmp_path / "out")
    assert [p.name for p in paths] == ["selection.md", "selection.json", "selection.png"]
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(paths[1].read_text())
    assert data["best_params"] == result.best_params and len(data["rows"]) == 6


@pytest.mark.parametrize("kwargs, message", [
    (dict(topics=[]), "topics is empty"), (dict(topics=[0]), "topics=0"), (dict(lambda1=[-1.0]), "lambda1"),
    (dict(lambda1=[float("nan")]), "lambda1"), (dict(test_size=1.0), "test_size"),
    (dict(topics=[600]), "training documents"), (dict(n_components=3), "set by select"),
])
def test_select_refuses_bad_settings(five, kwargs, message):
    with pytest.raises(RLSIError, match=message):
        rlsi.select(five, **kwargs)


def test_select_refuses_an_empty_corpus():
    with pytest.raises(RLSIError):
        rlsi.select(sp.csr_matrix((0, 10)))
