"""The searcher with group models (SIGIR 2012 §7.3): each document is matched with a query on the topics of
the document's class, in exact and candidate mode, through save/load, and from a matrix directory."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi.datasets.synthetic import make_corpus, write_corpus
from rlsi.errors import ModelFormatError, RLSIError
from rlsi.models import BatchRLSI
from rlsi.models.group import GroupNMF, GroupRLSI
from rlsi.retrieval import Searcher
from rlsi.retrieval.group_topic import ClassTopicMatcher
from rlsi.retrieval.topic import TopicMatcher
from rlsi.text import TfidfVectorizer

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

DOCS = ["aircraft wing flutter at high speed", "airplane wing design and flutter tests",
        "jet aircraft engine noise reduction", "supersonic aircraft wing loads",
        "heart disease and blood pressure", "cardiac surgery on the heart valves",
        "blood vessels arteries and the heart", "cardiac arrest and heart failure",
        "library catalog of books", "books indexing in the library catalog",
        "reading room of the library", "rare books and manuscripts"]
IDS = [f"d{i}" for i in range(len(DOCS))]
LABELS = np.array(["air"] * 4 + ["med"] * 4 + ["lib"] * 4)
QUERIES = ["airplane wing", "cardiac heart", "library books", "aircraft noise heart"]


@pytest.fixture(scope="module", params=["grlsi", "gnmf"])
def fitted(request):
    vec = TfidfVectorizer()
    X = vec.fit_transform(DOCS)
    if request.param == "grlsi":
        model = GroupRLSI(1, 2, lambda1=0.05, random_state=0, max_iter=20).fit(X, LABELS)
    else:
        model = GroupNMF(1, 2, random_state=0, max_iter=50).fit(X, LABELS)
    return model, vec, X


def _cos(a, b):
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return 0.0 if na == 0 or nb == 0 else float(a @ b / (na * nb))


def test_topic_scores_are_the_cosine_in_each_documents_class(fitted):
    """By hand: the query and the document folded in on the topics of the document's class (the model's own
    folding-in), their cosine; the searcher's index is a ClassTopicMatcher holding the given classes."""
    model, vec, X = fitted
    s = Searcher(model, vec, alpha=0.5).index(DOCS, IDS, labels=LABELS)
    assert isinstance(s.topic_index_, ClassTopicMatcher)
    classes = list(model.classes_)
    assert [classes[p] for p in s.topic_index_.doc_classes_] == list(LABELS)
    _, topic, _ = s.score_matrices(QUERIES)
    Q = vec.transform(QUERIES)
    for j in range(len(DOCS)):
        p = classes.index(LABELS[j])
        d = model._fold_class(X[j], p)[0][0]
        for i in range(len(QUERIES)):
            q = model._fold_class(Q[i], p)[0][0]
            assert topic[i, j] == pytest.approx(_cos(q, d), abs=1e-12)


def test_candidate_mode_scores_the_candidates_as_the_exact_mode(fitted):
    model, vec, _ = fitted
    s = Searcher(model, vec, alpha=0.6).index(DOCS, IDS, labels=LABELS)
    for q in QUERIES:
        exact = s.search(q, k=None)
        assert [(h.doc_id, h.score) for h in s.search(q, k=None, candidates=len(DOCS))] == \
            [(h.doc_id, h.score) for h in exact]
        topic = {h.doc_id: h.topic_score for h in exact}
        for h in s.search(q, k=None, candidates=5):  # the term model's 5 best, reranked
            assert h.topic_score == pytest.approx(topic[h.doc_id], abs=1e-12)


def test_without_labels_each_document_takes_its_predicted_class(fitted):
    model, vec, X = fitted
    s = Searcher(model, vec).index(DOCS, IDS)
    classes = list(model.classes_)
    assert [classes[p] for p in s.topic_index_.doc_classes_] == list(model.predict(X))


def test_projection_folding_of_a_group_model(fitted):
    model, vec, X = fitted
    s = Searcher(model, vec, fold_lambda2=math.inf).index(DOCS, IDS, labels=LABELS)
    ref = ClassTopicMatcher(model, fold_lambda2=math.inf, doc_labels=LABELS).fit(X)
    np.testing.assert_allclose(s.score_matrices(QUERIES)[1], ref.score(vec.transform(QUERIES)), atol=1e-12)
    assert not np.allclose(s.score_matrices(QUERIES)[1],
                           Searcher(model, vec).index(DOCS, IDS, labels=LABELS).score_matrices(QUERIES)[1])


@pytest.mark.parametrize("mmap", [False, True])
def test_save_load_keeps_the_classes_and_the_results(tmp_path, fitted, mmap):
    model, vec, _ = fitted
    s = Searcher(model, vec, alpha=0.5).index(DOCS, IDS, labels=LABELS)
    s.save(tmp_path / "m")
    back = Searcher.load(tmp_path / "m", mmap=mmap)
    assert isinstance(back.topic_index_, ClassTopicMatcher)
    np.testing.assert_array_equal(back.topic_index_.doc_classes_, s.topic_index_.doc_classes_)
    for q in QUERIES:
        assert back.search(q, k=None) == s.search(q, k=None)
        assert back.search(q, k=3, candidates=6) == s.search(q, k=3, candidates=6)


def _save_with(tmp_path, fitted, classes):
    model, vec, _ = fitted
    s = Searcher(model, vec).index(DOCS, IDS, labels=LABELS)
    s.topic_index_.doc_classes_ = classes
    s.save(tmp_path / "m")
    return tmp_path / "m"


@pytest.mark.parametrize("classes, match", [
    (np.full(len(DOCS), 7), "names class 7 but the model has 3 classes"),
    (np.full(len(DOCS), -1), "not 12 class indices"),
    (np.zeros(len(DOCS) - 1, dtype=np.int64), "not 12 class indices"),
])
def test_damaged_classes_are_a_clear_error(tmp_path, fitted, classes, match):
    path = _save_with(tmp_path, fitted, classes)
    with pytest.raises(ModelFormatError, match=match):
        Searcher.load(path)


def test_a_class_index_with_a_model_that_is_not_a_group_model(fitted):
    model, vec, X = fitted
    s = Searcher(model, vec).index(DOCS, IDS)
    other = BatchRLSI(model.components_.shape[0], random_state=0, max_iter=2).fit(X)
    with pytest.raises(ModelFormatError, match="built for a group model"):
        s.attach(other, vec)


def test_labels_for_other_models_and_unknown_labels_are_errors(fitted):
    model, vec, X = fitted
    lsi = BatchRLSI(3, random_state=0, max_iter=2).fit(X)
    with pytest.raises(RLSIError, match="used by group models only"):
        Searcher(lsi, vec).index(DOCS, IDS, labels=LABELS)
    with pytest.raises(RLSIError, match="no topic model"):
        Searcher(None, vec, alpha=0.0).index(DOCS, IDS, labels=LABELS)
    with pytest.raises(RLSIError):
        Searcher(model, vec).index(DOCS, IDS, labels=np.array(["air"] * 11 + ["space"]))
    with pytest.raises(RLSIError):
        Searcher(model, vec).index(DOCS, IDS, labels=LABELS[:5])


def test_non_group_models_keep_the_plain_topic_index(fitted):
    _, vec, X = fitted
    s = Searcher(BatchRLSI(3, random_state=0, max_iter=2).fit(X), vec).index(DOCS, IDS)
    assert type(s.topic_index_) is TopicMatcher


@pytest.mark.parametrize("block_rows", [1, 7, 1000])
def test_index_from_a_matrix_directory_equals_the_in_memory_index(tmp_path, block_rows):
    path = tmp_path / "m"
    write_corpus(path, 120, 400, 30, n_topics=4, topic_vocab=60, seed=3)
    ref = make_corpus(120, 400, 30, n_topics=4, topic_vocab=60, seed=3)
    y = np.array(["a", "b", "c"])[np.arange(120) % 3]
    model = GroupRLSI(2, 2, random_state=0, max_iter=3).fit(ref.X, y)
    ids = [str(i) for i in range(120)]
    for labels in (y, None):
        built = Searcher.from_matrix(path, model, labels=labels, block_rows=block_rows, alpha=0.5)
        expected = Searcher(model, None, alpha=0.5).index_matrices(tfidf=ref.X, counts=ref.counts, doc_ids=ids,
                                                                   labels=labels)
        assert isinstance(built.topic_index_, ClassTopicMatcher)
        np.testing.assert_array_equal(built.topic_index_.doc_classes_, expected.topic_index_.doc_classes_)
        # the model's ridge folding runs BLAS on blocks of other sizes: equal up to rounding
        np.testing.assert_allclose(built.topic_index_.doc_vectors_, expected.topic_index_.doc_vectors_,
                                   rtol=1e-12, atol=1e-15)
        Q = sp.csr_matrix(ref.counts[:3])
        got, want = built.search_vectors(Q, ref.X[:3], k=5), expected.search_vectors(Q, ref.X[:3], k=5)
        assert [[h.doc_id for h in r] for r in got] == [[h.doc_id for h in r] for r in want]
    with pytest.raises(RLSIError, match="2 document labels for the 120 documents"):
        Searcher.from_matrix(path, model, labels=y[:2])
