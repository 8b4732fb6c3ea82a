"""Tests of rlsi.text.vectorize (the TOIS tf-idf n(t,d)/|d| * log(N/df(t)))."""

import json
import math
import pickle
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from rlsi.errors import CorpusError, ModelFormatError, RLSIError
from rlsi.text import TfidfVectorizer, Tokenizer, VectorizerNotFittedError

# Hand-computed example (default English stop words; "the", "of" are stop words):
#   d0 "apple banana apple"                  -> apple x2, banana x1;            |d0| = 3
#   d1 "banana cherry"                       -> banana, cherry;                 |d1| = 2
#   d2 "The banana of cherry cherry durian"  -> banana, cherry x2, durian;      |d2| = 4
# N = 3; df: apple 1, banana 3, cherry 2, durian 1
# idf: apple ln 3 = 1.0986122886681098, banana ln 1 = 0, cherry ln 1.5 = 0.4054651081081644, durian ln 3
# tf-idf:
#   d0 apple  = 2/3 * ln 3   = 0.7324081924454064   (banana: 1/3 * 0 = 0, not stored)
#   d1 cherry = 1/2 * ln 1.5 = 0.2027325540540822
#   d2 cherry = 2/4 * ln 1.5 = 0.2027325540540822,  durian = 1/4 * ln 3 = 0.27465307216702745
DOCS = ["apple banana apple", "banana cherry", "The banana of cherry cherry durian"]
EXPECTED = np.array([
    [0.7324081924454064, 0.0, 0.0, 0.0],
    [0.0, 0.0, 0.2027325540540822, 0.0],
    [0.0, 0.0, 0.2027325540540822, 0.27465307216702745],
])


def test_hand_computed_tfidf():
    vec = TfidfVectorizer(norm=None)
    X = vec.fit_transform(DOCS)
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64 and X.shape == (3, 4)
    assert vec.feature_names_ == ["apple", "banana", "cherry", "durian"]
    assert vec.vocabulary_ == {"apple": 0, "banana": 1, "cherry": 2, "durian": 3}
    assert list(vec.get_feature_names_out()) == vec.feature_names_
    assert vec.df_.dtype == np.int64 and vec.df_.tolist() == [1, 3, 2, 1]
    assert vec.n_docs_ == 3
    np.testing.assert_allclose(vec.idf_, [1.0986122886681098, 0.0, 0.4054651081081644,
                                          1.0986122886681098], rtol=1e-15)
    np.testing.assert_allclose(X.toarray(), EXPECTED, rtol=1e-15)
    assert X.nnz == 4  # the zero-idf banana entries are not stored
    assert X.has_sorted_indices


def test_fit_then_transform_equals_fit_transform():
    vec = TfidfVectorizer(norm=None, stemmer="english", min_df=1)
    X1 = vec.fit_transform(DOCS * 2)
    X2 = vec.fit(DOCS * 2).transform(DOCS * 2)
    assert (X1 != X2).nnz == 0


def test_unseen_document_unknown_terms_count_in_length():
    vec = TfidfVectorizer(norm=None).fit(DOCS)
    # "apple foo": foo is unknown, |d| = 2, so apple gets tf 1/2: 1/2 * ln 3 = 0.5493061443340549
    X = vec.transform(["apple foo", "foo bar", "", "the of"])
    assert X.shape == (4, 4)
    np.testing.assert_allclose(X.toarray()[0], [0.5493061443340549, 0, 0, 0], rtol=1e-15)
    assert X[1:].nnz == 0  # only unknown terms, empty, only stop words: zero rows


def test_transform_counts_and_lengths():
    vec = TfidfVectorizer(norm=None).fit(DOCS)
    counts, lengths = vec.transform_counts(DOCS + ["cherry zebra cherry"], return_lengths=True)
    assert counts.toarray().tolist() == [[2, 1, 0, 0], [0, 1, 1, 0], [0, 1, 2, 1], [0, 0, 2, 0]]
    assert counts.dtype == np.float64
    assert lengths.tolist() == [3, 2, 4, 3]
    assert vec.doc_lengths(["the cat", "a b c"]).tolist() == [1, 2]  # "the", "a" are stop words
    assert sp.isspmatrix_csr(vec.transform_counts(["apple"]))


def test_generator_input_and_corpus_like_iterables():
    vec = TfidfVectorizer(norm=None)
    X = vec.fit_transform(d for d in DOCS)
    np.testing.assert_allclose(X.toarray(), EXPECTED, rtol=1e-15)


@pytest.mark.parametrize("params, terms", [
    ({"min_df": 2}, ["banana", "cherry"]),
    ({"min_df": 0.5}, ["banana", "cherry"]),        # df >= 0.5 * 3 = 1.5
    ({"max_df": 0.5}, ["apple", "durian"]),         # df <= 1.5
    ({"max_df": 2}, ["apple", "cherry", "durian"]),
    ({"min_df": 2, "max_df": 2}, ["cherry"]),
    ({"max_features": 2}, ["banana", "cherry"]),    # total counts apple 2, banana 3, cherry 3, durian 1
    ({"max_features": 1}, ["banana"]),              # tie banana/cherry broken alphabetically
])
def test_pruning(params, terms):
    vec = TfidfVectorizer(norm=None, **params)
    X = vec.fit_transform(DOCS)
    assert vec.feature_names_ == terms
    assert X.shape == (3, len(terms))
    assert len(vec.df_) == len(vec.idf_) == len(terms)


def test_max_features_ties_are_alphabetical_not_first_seen():
    vec = TfidfVectorizer(norm=None, max_features=1, stop_words=None).fit(["zebra apple", "apple zebra"])
    assert vec.feature_names_ == ["apple"]


def test_pruning_keeps_document_lengths():
    vec = TfidfVectorizer(norm=None, min_df=2)
    X = vec.fit_transform(DOCS)
    # d2 cherry is still 2/4 * ln 1.5: |d2| counts the pruned "durian"
    np.testing.assert_allclose(X.toarray(), [[0, 0], [0, 0.2027325540540822], [0, 0.2027325540540822]],
                               rtol=1e-15)


def test_pruning_everything_is_an_error():
    with pytest.raises(CorpusError, match="no term left after pruning"):
        TfidfVectorizer(norm=None, min_df=3, max_df=0.5).fit(DOCS)


def test_float32():
    vec = TfidfVectorizer(norm=None, dtype=np.float32)
    X = vec.fit_transform(DOCS)
    assert X.dtype == np.float32
    assert vec.transform(DOCS).dtype == np.float32
    assert vec.transform_counts(DOCS).dtype == np.float32
    np.testing.assert_allclose(X.toarray(), EXPECTED, rtol=1e-6)


@pytest.mark.parametrize("docs, match", [
    ([], "no documents"),
    (["the of", "", "!!!"], "none of the 3 documents has a token"),
])
def test_empty_corpus(docs, match):
    with pytest.raises(CorpusError, match=match):
        TfidfVectorizer(norm=None).fit(docs)


@pytest.mark.parametrize("params, match", [
    ({"dtype": np.int32}, "dtype"),
    ({"dtype": "nonsense"}, "dtype"),
    ({"min_df": 1.5}, "min_df"),
    ({"max_df": -1}, "max_df"),
    ({"min_df": "2"}, "min_df"),
    ({"max_features": 0}, "max_features"),
    ({"stemmer": "latin"}, "stemmer"),
])
def test_bad_parameters(params, match):
    with pytest.raises(RLSIError, match=match):
        TfidfVectorizer(norm=None, **params).fit(DOCS)


def test_bad_documents():
    with pytest.raises(RLSIError, match="single string"):
        TfidfVectorizer(norm=None).fit("apple banana")
    with pytest.raises(RLSIError, match="document 1 is a NoneType"):
        TfidfVectorizer(norm=None).fit(["apple", None])
    with pytest.raises(RLSIError, match="iterable"):
        TfidfVectorizer(norm=None).fit(42)


def test_not_fitted():
    with pytest.raises(VectorizerNotFittedError) as info:
        TfidfVectorizer(norm=None).transform(DOCS)
    assert isinstance(info.value, NotFittedError) and isinstance(info.value, RLSIError)


def test_analyze_stems():
    vec = TfidfVectorizer(norm=None, stemmer="english")
    assert vec.analyze("The governments and cocaine") == ["govern", "cocain"]
    vec.fit(["governments cocaine", "government"])
    assert vec.feature_names_ == ["cocain", "govern"]
    assert vec.df_.tolist() == [1, 2]


def _round_trip(vec, tmp_path):
    meta, arrays = vec._to_state()
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    for name, arr in arrays.items():
        assert arr.dtype != object
        np.save(tmp_path / f"{name}.npy", arr, allow_pickle=False)
    meta2 = json.loads((tmp_path / "meta.json").read_text())
    arrays2 = {name: np.load(tmp_path / f"{name}.npy", allow_pickle=False) for name in arrays}
    return TfidfVectorizer._from_state(meta2, arrays2)


@pytest.mark.parametrize("params", [
    {},
    {"stemmer": "english", "min_df": 2, "max_df": 0.9, "dtype": np.float32},
    {"stop_words": {"Apple", "the"}, "lowercase": False, "max_features": 3, "min_length": 2,
     "token_pattern": "letters"},
    {"stop_words": None, "min_df": 0.2, "max_df": 3},
])
def test_state_round_trip(params, tmp_path):
    docs = DOCS + ["Apple governments cocaine", "cherry cherry apple 1987"]
    vec = TfidfVectorizer(norm=None, **params).fit(docs)
    again = _round_trip(vec, tmp_path)
    assert vec._to_state()[1]["vocabulary"].dtype.kind == "U"
    assert again.feature_names_ == vec.feature_names_
    assert again.vocabulary_ == vec.vocabulary_
    assert again.n_docs_ == vec.n_docs_
    np.testing.assert_array_equal(again.df_, vec.df_)
    np.testing.assert_array_equal(again.idf_, vec.idf_)
    new = docs + ["apple apple zebra", "Governments of cherry"]
    X1, X2 = vec.transform(new), again.transform(new)
    assert X1.dtype == X2.dtype and (X1 != X2).nnz == 0
    p1, p2 = vec.get_params(), again.get_params()
    if not isinstance(params.get("stop_words", "english"), (str, type(None))):
        assert sorted(p2.pop("stop_words")) == ["apple", "the"]
        p1.pop("stop_words")
    assert p1 == p2


def test_from_damaged_state():
    meta, arrays = TfidfVectorizer(norm=None).fit(DOCS)._to_state()
    with pytest.raises(ModelFormatError, match="damaged"):
        TfidfVectorizer._from_state(meta, {**arrays, "df": arrays["df"][:2]})
    with pytest.raises(ModelFormatError, match="damaged"):
        TfidfVectorizer._from_state(meta, {k: v for k, v in arrays.items() if k != "idf"})
    with pytest.raises(ModelFormatError, match="version"):
        TfidfVectorizer._from_state({**meta, "state_version": 99}, arrays)
    with pytest.raises(ModelFormatError, match="damaged"):
        TfidfVectorizer._from_state({**meta, "params": {**meta["params"], "dtype": "int8"}}, arrays)


def test_clone_and_pickle():
    vec = TfidfVectorizer(norm=None, stemmer="porter", min_df=2, dtype=np.float32)
    copy = clone(vec)
    assert copy.get_params() == vec.get_params()
    vec.fit(DOCS)
    assert not hasattr(clone(vec), "vocabulary_")
    again = pickle.loads(pickle.dumps(vec))
    assert (again.transform(DOCS) != vec.transform(DOCS)).nnz == 0
    assert isinstance(vec.build_tokenizer(), Tokenizer)


def test_matches_brute_force_on_real_text():
    from rlsi.datasets import load_demo_corpus
    docs = load_demo_corpus().texts[:200]
    vec = TfidfVectorizer(norm=None, stemmer="english", min_df=2)
    X = vec.fit_transform(docs).toarray()
    tok = vec.build_tokenizer()
    analysed = [tok(d) for d in docs]
    df = Counter(t for toks in analysed for t in set(toks))
    terms = sorted(t for t, n in df.items() if n >= 2)
    assert vec.feature_names_ == terms
    expected = np.zeros((len(docs), len(terms)))
    col = {t: j for j, t in enumerate(terms)}
    for i, toks in enumerate(analysed):
        for t, n in Counter(toks).items():
            if t in col:
                expected[i, col[t]] = n / len(toks) * math.log(len(docs) / df[t])
    np.testing.assert_allclose(X, expected, rtol=1e-12, atol=0)


def test_l2_norm_is_the_default_and_rows_have_unit_length():
    raw = TfidfVectorizer(norm=None).fit_transform(DOCS + ["", "the of and"])
    X = TfidfVectorizer().fit_transform(DOCS + ["", "the of and"])
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    expected = np.where(np.diff(raw.indptr) > 0, 1.0, 0.0)
    np.testing.assert_allclose(norms, expected, atol=1e-12)
    raw_norms = np.sqrt(np.asarray(raw.multiply(raw).sum(axis=1)).ravel())
    nz = raw_norms > 0
    np.testing.assert_allclose(X.toarray()[nz], raw.toarray()[nz] / raw_norms[nz, None], rtol=1e-12)
    with pytest.raises(RLSIError, match="norm='l1' is not supported"):
        TfidfVectorizer(norm="l1").fit_transform(DOCS)


def test_only_registered_token_patterns_are_saved_and_loaded():
    from rlsi.text import TOKEN_PATTERNS, register_token_pattern

    with pytest.raises(RLSIError, match="cannot be saved.*register_token_pattern"):
        TfidfVectorizer(token_pattern=r"[a-z]{3,}").fit(DOCS)._to_state()
    meta, arrays = TfidfVectorizer(token_pattern="letters").fit(DOCS)._to_state()
    assert TfidfVectorizer._from_state(meta, arrays).token_pattern == "letters"
    evil = {**meta, "params": {**meta["params"], "token_pattern": "(a|aa)+$"}}
    with pytest.raises(ModelFormatError, match="not a registered token pattern"):
        TfidfVectorizer._from_state(evil, arrays)
    try:
        register_token_pattern("three_plus", r"[a-z]{3,}")
        vec = TfidfVectorizer(token_pattern=r"[a-z]{3,}").fit(DOCS)
        again = TfidfVectorizer._from_state(*vec._to_state())
        assert again.feature_names_ == vec.feature_names_ and all(len(t) >= 3 for t in vec.feature_names_)
        assert TfidfVectorizer(token_pattern="three_plus").fit(DOCS).feature_names_ == vec.feature_names_
        with pytest.raises(RLSIError, match="already registered"):
            register_token_pattern("three_plus", r"\w+")
    finally:
        TOKEN_PATTERNS.pop("three_plus", None)


@pytest.mark.parametrize("key, value", [("lowercase", "yes"), ("min_length", 0), ("norm", "l1"), ("dtype", "object"),
                                        ("max_features", -3), ("extra", 1)])
def test_state_with_bad_parameters_is_refused(key, value):
    meta, arrays = TfidfVectorizer().fit(DOCS)._to_state()
    with pytest.raises(ModelFormatError, match="damaged vectorizer state"):
        TfidfVectorizer._from_state({**meta, "params": {**meta["params"], key: value}}, arrays)


def test_state_with_impossible_idf_is_refused():
    meta, arrays = TfidfVectorizer().fit(DOCS)._to_state()
    with pytest.raises(ModelFormatError, match="idf outside"):
        TfidfVectorizer._from_state(meta, {**arrays, "idf": arrays["idf"] + 100.0})
