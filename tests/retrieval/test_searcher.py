"""Searcher: ranking, both component scores, save/load round trip, bad input."""

import math

import numpy as np
import pytest

import rlsi.io
from rlsi.errors import ModelFormatError, RLSIError
from rlsi.models.baselines import LSI
from rlsi.retrieval import Hit, Searcher
from rlsi.retrieval.combine import interpolate
from rlsi.retrieval.topic import RidgeFolding
from rlsi.text import TfidfVectorizer

from forge import reseal

DOCS = [
    "aircraft wing flutter at high speed",
    "airplane wing design and flutter tests",
    "jet aircraft engine noise",
    "heart disease and blood pressure",
    "cardiac surgery on the heart valves",
    "blood vessels arteries and the heart",
    "library catalog of books",
    "books indexing in the library",
]
IDS = [f"d{i}" for i in range(len(DOCS))]


@pytest.fixture(scope="module")
def fitted():
    vec = TfidfVectorizer()
    X = vec.fit_transform(DOCS)
    return LSI(3).fit(X), vec


@pytest.fixture
def searcher(fitted):
    model, vec = fitted
    return Searcher(model, vec, alpha=0.4).index(DOCS, IDS)


def test_search_returns_ranked_hits_with_both_scores(searcher):
    hits = searcher.search("aircraft flutter", k=4)
    assert len(hits) == 4 and all(isinstance(h, Hit) for h in hits)
    assert hits[0].doc_id in ("d0", "d1")
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    term, topic, empty = searcher.score_matrices(["aircraft flutter"])
    combined = interpolate(topic, term, 0.4)
    for h in hits:
        j = IDS.index(h.doc_id)
        assert h.term_score == pytest.approx(term[0, j])
        assert h.topic_score == pytest.approx(topic[0, j])
        assert h.score == pytest.approx(combined[0, j])
    assert not empty[0]


def test_topic_score_finds_document_without_shared_terms(searcher):
    # "airplane" occurs only in d1; d0 and d2 share no term with the query but the same topic
    hits = searcher.search("airplane", k=8)
    by_id = {h.doc_id: h for h in hits}
    assert by_id["d0"].term_score == 0 and by_id["d0"].topic_score > 0.5
    assert by_id["d0"].score > by_id["d6"].score


def test_unknown_and_empty_queries_give_empty_results(searcher):
    assert searcher.search("zebra quasar", k=5) == []
    assert searcher.search("", k=5) == []
    assert searcher.search("the and of", k=5) == []  # only stop words
    many = searcher.search_many(["zebra", "heart", ""], k=3)
    assert many[0] == [] and len(many[1]) == 3 and many[2] == []


def test_search_many_equals_single_searches_and_k_larger_than_corpus(searcher):
    queries = ["heart blood", "library books", "wing"]
    many = searcher.search_many(queries, k=20)
    for q, hits in zip(queries, many):
        single = searcher.search(q, k=20)
        assert [h.doc_id for h in hits] == [h.doc_id for h in single]
        np.testing.assert_allclose([h[1:] for h in hits], [h[1:] for h in single], atol=1e-12)
        assert len(hits) == len(DOCS)


def test_ties_broken_by_doc_id_descending(fitted):
    model, vec = fitted
    s = Searcher(None, vec, alpha=0.0).index(["heart blood", "heart blood", "heart blood"], ["a", "c", "b"])
    assert [h.doc_id for h in s.search("heart", k=3)] == ["c", "b", "a"]


def test_term_only_searcher_and_vsm(fitted):
    model, vec = fitted
    s = Searcher(None, vec, alpha=0.0).index(DOCS, IDS)
    hits = s.search("library", k=2)
    assert {h.doc_id for h in hits} == {"d6", "d7"} and all(h.topic_score == 0 for h in hits)
    v = Searcher(model, vec, alpha=0.2, term_model="vsm").index(DOCS, IDS)
    assert v.search("cardiac heart", k=1)[0].doc_id in ("d3", "d4", "d5")
    with pytest.raises(RLSIError, match="no topic model"):
        Searcher(None, vec, alpha=0.5).index(DOCS)


def test_save_load_round_trip(tmp_path, fitted):
    model, vec = fitted
    s = Searcher(RidgeFolding(model, math.inf), vec, alpha=0.3, term_norm="zscore").index(DOCS, IDS)
    before = s.search_many(["heart surgery", "aircraft noise", "nothing known"], k=5)
    s.save(tmp_path / "m")
    assert {"model", "vectorizer", "index"} <= set(rlsi.io.load(tmp_path / "m"))
    back = Searcher.load(tmp_path / "m")
    assert back.alpha == 0.3 and back.term_norm == "zscore"
    after = back.search_many(["heart surgery", "aircraft noise", "nothing known"], k=5)
    assert [[h.doc_id for h in r] for r in after] == [[h.doc_id for h in r] for r in before]
    for r1, r2 in zip(before, after):
        for a, b in zip(r1, r2):
            np.testing.assert_allclose(a[1:], b[1:], atol=1e-12)


def test_load_errors(tmp_path, fitted):
    model, vec = fitted
    rlsi.io.save(tmp_path / "noindex", model=model, vectorizer=vec)
    with pytest.raises(ModelFormatError, match="no search index"):
        Searcher.load(tmp_path / "noindex")
    other = TfidfVectorizer().fit(["completely different words here"])
    s = Searcher(model, vec, alpha=0.3).index(DOCS, IDS)
    with pytest.raises(ModelFormatError, match="terms"):
        s.attach(model, other)


def test_bad_input(fitted):
    model, vec = fitted
    s = Searcher(model, vec)
    with pytest.raises(RLSIError, match="no index"):
        s.search("heart")
    with pytest.raises(RLSIError, match="more than once"):
        s.index(["a b", "c d"], ["x", "x"])
    with pytest.raises(RLSIError, match="empty"):
        s.index([])
    with pytest.raises(RLSIError, match="ids"):
        s.index(DOCS, IDS[:3])
    s.index(DOCS, IDS)
    with pytest.raises(RLSIError, match="str"):
        s.search(42)
    with pytest.raises(RLSIError, match="k"):
        s.search("heart", k=0)
    with pytest.raises(RLSIError, match="alpha"):
        Searcher(model, vec, alpha=2.0).index(DOCS)
    with pytest.raises(RLSIError, match="not fitted"):
        Searcher(model, TfidfVectorizer()).index(DOCS)


def test_projection_folding_is_a_searcher_parameter_and_survives_save_load(tmp_path, fitted):
    import warnings

    from rlsi.models import BatchRLSI
    from rlsi.retrieval.topic import cosine_scores

    _, vec = fitted
    X = vec.transform(DOCS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BatchRLSI(3, lambda1=0.01, max_iter=20, random_state=0).fit(X)
    s = Searcher(model, vec, alpha=0.5, fold_lambda2=math.inf).index(DOCS, IDS)
    _, topic, _ = s.score_matrices(["heart surgery"])
    C = model.components_
    expected = cosine_scores((vec.transform(["heart surgery"]) @ C.T).toarray(), (X @ C.T).toarray())
    np.testing.assert_allclose(topic, expected, atol=1e-12)
    own = Searcher(model, vec, alpha=0.5).index(DOCS, IDS).score_matrices(["heart surgery"])[1]
    assert not np.allclose(own, topic)  # the model's ridge folding-in differs
    s.save(tmp_path / "m")
    back = Searcher.load(tmp_path / "m")
    assert math.isinf(back.fold_lambda2) and type(back.model).__name__ == "BatchRLSI"
    np.testing.assert_allclose(back.score_matrices(["heart surgery"])[1], topic, atol=1e-12)
    with pytest.raises(RLSIError, match="fold_lambda2"):
        Searcher(model, vec, fold_lambda2=-1.0).index(DOCS)


@pytest.mark.parametrize("key, value", [("alpha", 2.0), ("alpha", "x"), ("term_model", "tfidf"),
                                        ("fold_lambda2", -1), ("dtype", "complex128"), ("topic_norm", [])])
def test_damaged_index_parameters(tmp_path, fitted, key, value):
    import json

    model, vec = fitted
    Searcher(model, vec, alpha=0.3).index(DOCS, IDS).save(tmp_path / "m")
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    manifest["components"]["index"]["meta"]["params"][key] = value
    (tmp_path / "m" / "manifest.json").write_text(json.dumps(manifest))
    reseal(tmp_path / "m")  # a crafted index with matching checksums: its parameter check must refuse it
    with pytest.raises(ModelFormatError, match=f"index.*damaged.*{key}"):
        Searcher.load(tmp_path / "m")


def test_non_finite_scores_are_an_error(fitted):
    model, vec = fitted
    s = Searcher(model, vec, alpha=0.5).index(DOCS, IDS)
    s.term_index_.weights_.data[:] = np.nan  # what a damaged index held in memory would give
    with pytest.raises(RLSIError, match="NaN or infinite"):
        s.search("heart")
