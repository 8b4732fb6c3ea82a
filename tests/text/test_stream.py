"""StreamingTfidf: growing vocabulary, running or fixed idf, same tf-idf definition as TfidfVectorizer."""

import numpy as np
import pytest

import rlsi.io
from rlsi.errors import CorpusError
from rlsi.text import TfidfVectorizer, VectorizerNotFittedError
from rlsi.text.stream import StreamingTfidf

DOCS = ["The cat sat on the mat.", "Dogs bark at the cat.", "", "A quantum physics lecture on cats and dogs.",
        "Physics of the mat: quantum mats.", "cat cat cat dog"]


def _by_term(X, names):
    """Rows as dicts term -> weight (column order independent)."""
    X = X.tocsr()
    return [{names[j]: X[i, j] for j in X[i].indices} for i in range(X.shape[0])]


def test_running_idf_after_the_whole_stream_equals_the_batch_vectorizer():
    stream = StreamingTfidf(norm=None)
    for a in range(0, len(DOCS), 2):
        last = stream.partial_fit_transform(DOCS[a:a + 2])
    batch = TfidfVectorizer(norm=None).fit(DOCS)
    assert sorted(stream.feature_names_) == batch.feature_names_
    for term, j in batch.vocabulary_.items():
        assert stream.idf_[stream.vocabulary_[term]] == pytest.approx(batch.idf_[j], rel=1e-15)
        assert stream.df_[stream.vocabulary_[term]] == batch.df_[j]
    # the last batch is weighted with the idf of the whole stream: same numbers as the batch vectorizer
    expected = _by_term(batch.transform(DOCS[4:]), batch.feature_names_)
    got = _by_term(last, stream.feature_names_)
    for e, g in zip(expected, got):
        assert e.keys() == g.keys()
        for t in e:
            assert g[t] == pytest.approx(e[t], rel=1e-12)


def test_columns_are_appended_never_reordered():
    stream = StreamingTfidf(norm=None)
    A = stream.partial_fit_transform(DOCS[:2])
    names_a = list(stream.feature_names_)
    B = stream.partial_fit_transform(DOCS[2:])
    assert stream.feature_names_[: len(names_a)] == names_a
    assert A.shape[1] == len(names_a) and B.shape[1] == len(stream.feature_names_) > A.shape[1]
    assert [stream.vocabulary_[t] for t in stream.feature_names_] == list(range(B.shape[1]))
    assert B[0].nnz == 0  # the empty document is a zero row


def test_fixed_idf_is_frozen_after_the_warm_up():
    stream = StreamingTfidf(idf="fixed", norm=None).fit(DOCS[:3])
    idf0 = stream.idf_.copy()
    X = stream.partial_fit_transform(DOCS[3:])
    n0 = len(idf0)
    np.testing.assert_array_equal(stream.idf_[:n0], idf0)
    # terms first seen after the warm-up get the idf of a term seen in one warm-up document
    np.testing.assert_allclose(stream.idf_[n0:], np.log(3))
    assert stream.n_warmup_docs_ == 3 and stream.n_docs_ == len(DOCS)  # df and N still count the stream
    assert X.shape == (3, len(stream.feature_names_))
    # a document is weighted the same whenever it arrives
    again = stream.partial_fit_transform(DOCS[3:4])
    np.testing.assert_allclose(again.toarray(), X[:1, : again.shape[1]].toarray())


def test_transform_ignores_unknown_terms_and_does_not_grow():
    stream = StreamingTfidf(norm=None)
    stream.partial_fit_transform(DOCS)
    n = len(stream.feature_names_)
    Q = stream.transform(["cat zebra", "zebra quokka"])
    assert len(stream.feature_names_) == n and Q.shape == (2, n)
    j = stream.vocabulary_["cat"]
    assert Q[0, j] == pytest.approx(0.5 * stream.idf_[j])  # |d| counts the unknown term
    assert Q[1].nnz == 0


def test_from_and_to_vectorizer():
    vec = TfidfVectorizer(norm=None).fit(DOCS[:4])
    stream = StreamingTfidf.from_vectorizer(vec, idf="fixed")
    assert stream.feature_names_ == vec.feature_names_ and stream.n_warmup_docs_ == 4
    X = stream.partial_fit_transform(DOCS[4:])
    np.testing.assert_allclose(X[:, : len(vec.feature_names_)].toarray(), vec.transform(DOCS[4:]).toarray())
    snap = stream.to_vectorizer()
    assert isinstance(snap, TfidfVectorizer) and snap.feature_names_ == stream.feature_names_
    np.testing.assert_allclose(snap.transform(DOCS).toarray(), stream.transform(DOCS).toarray())
    with pytest.raises(VectorizerNotFittedError):
        StreamingTfidf.from_vectorizer(TfidfVectorizer(norm=None))


def test_save_load_and_continue_identically(tmp_path):
    a = StreamingTfidf(stemmer="english", idf="running", norm=None)
    a.partial_fit_transform(DOCS[:3])
    rlsi.io.save(tmp_path / "v", vectorizer=a)
    b = rlsi.io.load(tmp_path / "v")["vectorizer"]
    assert isinstance(b, StreamingTfidf) and b.get_params() == a.get_params()
    Xa, Xb = a.partial_fit_transform(DOCS[3:]), b.partial_fit_transform(DOCS[3:])
    assert a.feature_names_ == b.feature_names_
    np.testing.assert_array_equal(Xa.toarray(), Xb.toarray())


def test_errors():
    with pytest.raises(VectorizerNotFittedError):
        StreamingTfidf(norm=None).transform(["x"])
    with pytest.raises(CorpusError):
        StreamingTfidf(norm=None).partial_fit_transform([])
    with pytest.raises(ValueError, match="idf"):
        StreamingTfidf(idf="sometimes").partial_fit_transform(["x"])
