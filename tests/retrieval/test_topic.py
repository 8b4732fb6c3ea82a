"""Topic matching: cosine of folded-in vectors against a slow reference, folding variants, persistence."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import rlsi.io
from rlsi.errors import RLSIError
from rlsi.models import BatchRLSI
from rlsi.models.baselines import LSI, PLSI
from rlsi.retrieval.topic import RidgeFolding, TopicMatcher, cosine_scores, model_input, normalize_rows

from conftest import planted_corpus


def slow_cosine(q, d):
    dot = sum(a * b for a, b in zip(q, d))
    nq = math.sqrt(sum(a * a for a in q))
    nd = math.sqrt(sum(b * b for b in d))
    return 0.0 if nq == 0 or nd == 0 else dot / (nq * nd)


@pytest.fixture(scope="module")
def data():
    X = planted_corpus(n_docs=80, n_terms=60, n_topics=4, words_per_topic=10, seed=3)
    return X[:70], X[70:]


@pytest.fixture(scope="module")
def rlsi_model(data):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return BatchRLSI(4, lambda1=0.5, max_iter=30, random_state=0).fit(data[0])


def test_cosine_scores_match_slow_reference():
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(4, 5))
    D = rng.normal(size=(7, 5))
    Q[2] = 0.0  # zero query vector -> cosine 0 everywhere
    D[3] = 0.0  # zero document vector
    got = cosine_scores(Q, D)
    ref = np.array([[slow_cosine(q, d) for d in D] for q in Q])
    np.testing.assert_allclose(got, ref, atol=1e-12)
    assert np.all(got[2] == 0) and np.all(got[:, 3] == 0)


def test_normalize_rows_handles_zero_and_nonfinite_rows():
    V = np.array([[3.0, 4.0], [0.0, 0.0], [np.nan, 1.0]])
    out = normalize_rows(V)
    np.testing.assert_allclose(out[0], [0.6, 0.8])
    assert np.all(out[1] == 0)
    np.testing.assert_allclose(out[2], [0.0, 1.0])


def test_matcher_scores_equal_reference_for_rlsi(data, rlsi_model):
    docs, queries = data
    m = TopicMatcher(rlsi_model).fit(docs)
    S = m.score(queries)
    Vd = rlsi_model.transform(docs)
    Vq = rlsi_model.transform(queries)
    ref = np.array([[slow_cosine(q, d) for d in Vd] for q in Vq])
    np.testing.assert_allclose(S, ref, atol=1e-10)
    assert S.shape == (queries.shape[0], docs.shape[0])
    np.testing.assert_allclose(np.linalg.norm(m.doc_vectors_, axis=1)[np.linalg.norm(Vd, axis=1) > 0], 1.0)


def test_matcher_works_for_any_transform_model(data):
    docs, queries = data
    lsi = LSI(3).fit(docs)
    S = TopicMatcher(lsi).fit(docs).score(queries)
    ref = cosine_scores(queries @ lsi.components_.T, docs @ lsi.components_.T)
    np.testing.assert_allclose(S, ref, atol=1e-10)


def test_unknown_query_scores_zero(data, rlsi_model):
    docs, _ = data
    m = TopicMatcher(rlsi_model).fit(docs)
    S = m.score(sp.csr_matrix((2, docs.shape[1])))
    assert S.shape == (2, docs.shape[0]) and np.all(S == 0)


def test_model_input_picks_counts_for_count_models(data):
    tfidf, counts = data[0], data[0] * 10
    assert model_input(PLSI(2), tfidf=tfidf, counts=counts) is counts
    assert model_input(LSI(2), tfidf=tfidf, counts=counts) is tfidf
    with pytest.raises(RLSIError, match="counts"):
        model_input(PLSI(2), tfidf=tfidf)


def test_matcher_errors_are_clear(data):
    with pytest.raises(RLSIError, match="not fitted"):
        TopicMatcher(LSI(2)).score(data[1])
    with pytest.raises(RLSIError, match="transform"):
        TopicMatcher(object()).fit(data[0])


def test_ridge_folding_matches_model_transform_at_its_lambda(data, rlsi_model):
    docs, queries = data
    same = RidgeFolding(rlsi_model, rlsi_model.lambda2)
    np.testing.assert_allclose(same.transform(queries), rlsi_model.transform(queries), atol=1e-8)
    proj = RidgeFolding(rlsi_model, math.inf).transform(queries)
    np.testing.assert_allclose(proj, (queries @ rlsi_model.components_.T).toarray(), atol=1e-12)
    # a large λ tends to the projection direction
    big = RidgeFolding(rlsi_model, 1e9).transform(queries)
    np.testing.assert_allclose(normalize_rows(big), normalize_rows(proj), atol=1e-6)
    assert RidgeFolding(rlsi_model, None).transform(queries).shape == proj.shape
    assert RidgeFolding(rlsi_model).components_ is rlsi_model.components_


def test_ridge_folding_and_matcher_state_round_trip(tmp_path, data, rlsi_model):
    docs, queries = data
    folded = RidgeFolding(rlsi_model, math.inf)
    rlsi.io.save(tmp_path / "m", model=folded)
    back = rlsi.io.load(tmp_path / "m")["model"]
    assert isinstance(back, RidgeFolding) and math.isinf(back.lambda2)
    np.testing.assert_allclose(back.transform(queries), folded.transform(queries))
    m = TopicMatcher(folded).fit(docs)
    meta, arrays = m._to_state()
    m2 = TopicMatcher._from_state(meta, arrays, model=back)
    np.testing.assert_allclose(m2.score(queries), m.score(queries))


def test_a_wrapped_model_loads_in_a_process_that_imported_no_learner(tmp_path, rlsi_model):
    """The wrapped class (BatchRLSI) is imported by its registered name on first use (rlsi.registry)."""
    import subprocess
    import sys

    rlsi.io.save(tmp_path / "m", model=RidgeFolding(rlsi_model, 2.0))
    code = ("import sys, rlsi.io; m = rlsi.io.load(sys.argv[1])['model']; "
            "assert 'rlsi.models.batch' in sys.modules; print(type(m.model).__name__, m.lambda2)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "m")], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["BatchRLSI", "2.0"]
