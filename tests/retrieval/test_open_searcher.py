"""open_searcher: a searcher of a model directory (new index of a corpus or a matrix directory, or the saved one)."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import rlsi.io
from rlsi.datasets.synthetic import write_corpus
from rlsi.errors import RLSIError
from rlsi.io.matrix import load_matrix
from rlsi.models import BatchRLSI
from rlsi.models.baselines import LSI
from rlsi.retrieval import DEFAULT_FOLDING, FOLDINGS, Searcher, open_searcher
from rlsi.text import Corpus, TfidfVectorizer

TEXTS = [
    "wing flutter of a supersonic aircraft",
    "airplane design wind tunnel tests of the wing",
    "heart valve surgery and cardiac recovery",
    "blood pressure in heart disease",
    "arteries veins and the heart muscle",
    "catalog of library books and journals",
    "indexing books for a library catalog",
    "engine noise of jet aircraft",
]
IDS = [f"d{i}" for i in range(len(TEXTS))]


def _write_corpus(path):
    import json

    with open(path, "w") as f:
        for i, t in zip(IDS, TEXTS):
            f.write(json.dumps({"id": i, "text": t, "label": "x"}) + "\n")
    return path


@pytest.fixture(scope="module")
def fitted():
    vec = TfidfVectorizer()
    X = vec.fit_transform(TEXTS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BatchRLSI(3, lambda1=0.01, max_iter=10, random_state=0).fit(X)
    return model, vec


@pytest.fixture
def model_dir(tmp_path, fitted):
    model, vec = fitted
    path = tmp_path / "m"
    rlsi.io.save(path, model=model, vectorizer=vec)
    return path


@pytest.fixture
def corpus(tmp_path):
    return _write_corpus(tmp_path / "c.jsonl")


def _scores(searcher, query="cardiac heart"):
    return [(h.doc_id, h.score, h.topic_score) for h in searcher.search(query, k=len(TEXTS))]


def test_default_folding_is_the_searchers_default(model_dir, corpus, fitted):
    model, vec = fitted
    assert DEFAULT_FOLDING == "model" and FOLDINGS[DEFAULT_FOLDING] is Searcher().fold_lambda2
    opened = open_searcher(model_dir, corpus=corpus)
    assert opened.fold_lambda2 is None and opened.alpha == Searcher().alpha and opened.term_model == "bm25"
    assert _scores(opened) == _scores(Searcher(model, vec).index(TEXTS, IDS))
    projected = open_searcher(model_dir, corpus=corpus, folding="projection")
    assert projected.fold_lambda2 == math.inf
    assert _scores(projected) == _scores(Searcher(model, vec, fold_lambda2=math.inf).index(TEXTS, IDS))


def test_a_saved_index_is_reopened_memory_mapped_with_its_settings(model_dir, corpus):
    built = open_searcher(model_dir, corpus=corpus, term_model="vsm", folding="projection", save_index=True)
    assert "index" in rlsi.io.load(model_dir)
    again = open_searcher(model_dir)
    assert (again.term_model, again.fold_lambda2) == ("vsm", math.inf)
    assert _scores(again) == _scores(built)
    assert open_searcher(model_dir, alpha=0.0).alpha == 0.0
    with pytest.raises(RLSIError, match="uses vsm; rebuild"):
        open_searcher(model_dir, term_model="bm25")
    with pytest.raises(RLSIError, match="built with folding 'projection'"):
        open_searcher(model_dir, folding="model")
    with pytest.raises(RLSIError, match="already has an index"):
        open_searcher(model_dir, label_field="label")
    # a corpus builds a new index over the saved one
    assert open_searcher(model_dir, corpus=corpus).term_model == "bm25"


def test_a_corpus_object_is_indexed_as_it_is(model_dir, fitted):
    model, vec = fitted
    docs = Corpus(IDS[:4], TEXTS[:4])
    opened = open_searcher(model_dir, corpus=docs)
    assert opened.n_docs_ == 4 and _scores(opened) == _scores(Searcher(model, vec).index(TEXTS[:4], IDS[:4]))


@pytest.mark.parametrize("kwargs, message", [
    ({}, "no search index"),
    ({"save_index": True}, "saving an index needs the documents"),
    ({"corpus": "x", "matrix": "y"}, "not both"),
    ({"matrix": "y", "label_field": "label"}, "label field needs a corpus"),
    ({"corpus": "C", "label_field": "label"}, "used by group models only"),
    ({"corpus": "C", "folding": "ridge"}, "folding='ridge'"),
    ({"corpus": "C", "term_model": "tfidf"}, "term_model='tfidf'"),
    ({"corpus": "C", "alpha": 1.5}, "alpha=1.5"),
    ({"corpus": 3}, "corpus must be a path"),
])
def test_refusals(model_dir, corpus, kwargs, message):
    kwargs = {k: (corpus if v == "C" else v) for k, v in kwargs.items()}
    with pytest.raises(RLSIError, match=message):
        open_searcher(model_dir, **kwargs)


def test_a_directory_without_vectorizer_or_model(tmp_path, fitted, corpus):
    model, vec = fitted
    rlsi.io.save(tmp_path / "novec", model=model)
    with pytest.raises(RLSIError, match="no 'vectorizer' component"):
        open_searcher(tmp_path / "novec", corpus=corpus)
    rlsi.io.save(tmp_path / "terms", vectorizer=vec)
    term_only = open_searcher(tmp_path / "terms", corpus=corpus)
    assert term_only.model is None and term_only.alpha == 0.0 and term_only.topic_index_ is None
    with pytest.raises(RLSIError, match="no topic model"):
        open_searcher(tmp_path / "terms", corpus=corpus, alpha=0.5)


def test_a_matrix_directory_is_indexed_block_by_block(tmp_path):
    matrix = tmp_path / "matrix"
    write_corpus(matrix, 120, 300, 30, n_topics=4, topic_vocab=60, seed=1)
    X = sp.csr_matrix(load_matrix(matrix).X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BatchRLSI(4, max_iter=2, random_state=0).fit(X)
    rlsi.io.save(tmp_path / "m", model=model)
    with pytest.raises(RLSIError, match="no vectorizer"):  # text queries need one
        open_searcher(tmp_path / "m", matrix=matrix)
    opened = open_searcher(tmp_path / "m", matrix=matrix, text_queries=False, save_index=True)
    assert opened.n_docs_ == 120 and opened.topic_index_.doc_vectors_.dtype == np.float32
    assert opened.fold_lambda2 is FOLDINGS[DEFAULT_FOLDING]
    reopened = Searcher.load(tmp_path / "m")
    q = sp.csr_matrix(X[:1])
    hits = opened.search_vectors(q, q, k=5)[0]
    assert len(hits) == 5 and reopened.search_vectors(q, q, k=5)[0] == hits


def test_a_term_only_lsi_model_dir_accepts_alpha(tmp_path, corpus):
    vec = TfidfVectorizer()
    X = vec.fit_transform(TEXTS)
    rlsi.io.save(tmp_path / "lsi", model=LSI(2).fit(X), vectorizer=vec)
    assert open_searcher(tmp_path / "lsi", corpus=corpus, alpha=0.25).alpha == 0.25


def test_a_group_model_matches_documents_on_their_classes(tmp_path):
    import json

    from rlsi.models.group import GroupRLSI
    from rlsi.retrieval.group_topic import ClassTopicMatcher

    labels = ["air", "air", "heart", "heart", "heart", "books", "books", "air"]
    vec = TfidfVectorizer()
    X = vec.fit_transform(TEXTS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = GroupRLSI(1, 1, lambda1=0.01, max_iter=5, random_state=0).fit(X, labels)
    rlsi.io.save(tmp_path / "g", model=model, vectorizer=vec)
    path = tmp_path / "c.jsonl"
    with open(path, "w") as f:
        for i, t, y in zip(IDS, TEXTS, labels):
            f.write(json.dumps({"id": i, "text": t, "label": y if i != "d3" else ""}) + "\n")
    predicted = open_searcher(tmp_path / "g", corpus=path)
    assert isinstance(predicted.topic_index_, ClassTopicMatcher)
    assert [model.classes_[p] for p in predicted.topic_index_.doc_classes_] == list(model.predict(X))
    with pytest.raises(RLSIError, match="1 of 8 documents have no 'label' field value .*leave out the label field"):
        open_searcher(tmp_path / "g", corpus=path, label_field="label")
    docs = Corpus(IDS, TEXTS, {"label": labels})
    given = open_searcher(tmp_path / "g", corpus=docs, label_field="label")
    assert [model.classes_[p] for p in given.topic_index_.doc_classes_] == labels
    with pytest.raises(RLSIError, match="no field 'topic'"):
        open_searcher(tmp_path / "g", corpus=docs, label_field="topic")
