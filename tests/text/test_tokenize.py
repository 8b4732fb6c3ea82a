"""Tests of rlsi.text.tokenize."""

import pickle

import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from rlsi.errors import RLSIError
from rlsi.text import Tokenizer, english_stop_words


def test_default_lowercases_and_removes_stop_words():
    assert Tokenizer()("The Cat sat ON the Mat") == ["cat", "sat", "mat"]


def test_no_stop_words_keeps_everything():
    assert Tokenizer(stop_words=None)("The cat") == ["the", "cat"]


def test_custom_stop_words_case_insensitive():
    tok = Tokenizer(stop_words=["Cat"])
    assert tok("the cat sat") == ["the", "sat"]
    assert Tokenizer(lowercase=False, stop_words=["cat"])("The CAT Sat") == ["The", "Sat"]


def test_lowercase_false_keeps_case():
    assert Tokenizer(lowercase=False, stop_words=None)("Hello World") == ["Hello", "World"]


def test_numbers_are_tokens():
    assert Tokenizer()("In 1987, 42 of 3.14 units") == ["1987", "42", "3", "14", "units"]


def test_punctuation_and_underscore_split_tokens():
    assert Tokenizer(stop_words=None)("e-mail foo_bar x.y naïve") == ["e", "mail", "foo", "bar", "x",
                                                                      "y", "naïve"]


def test_stemming_matches_paper_examples():
    tok = Tokenizer(stemmer="english")
    assert tok("Governments and cocaine") == ["govern", "cocain"]
    assert Tokenizer(stemmer="porter")("governments cocaine") == ["govern", "cocain"]
    assert tok.stem("running") == "run"


def test_stop_words_removed_before_stemming():
    # "have" is a stop word, "haves" is not but stems to "have": it is kept (as its stem);
    # "becoming" is a stop word and is removed although its stem "becom" is not one
    tok = Tokenizer(stemmer="english")
    stop = english_stop_words()
    assert "have" in stop and "haves" not in stop and "becoming" in stop and "becom" not in stop
    assert tok("have haves becoming") == ["have"]


def test_min_length():
    assert Tokenizer(stop_words=None, min_length=3)("a an ant ants") == ["ant", "ants"]


def test_shipped_stop_list_is_the_glasgow_list():
    assert english_stop_words() == frozenset(ENGLISH_STOP_WORDS)
    assert len(english_stop_words()) == 318


def test_token_pattern_with_group():
    tok = Tokenizer(stop_words=None, token_pattern=r"#(\w+)")
    assert tok("#one two #three") == ["one", "three"]


@pytest.mark.parametrize("kwargs, match", [
    ({"stemmer": "klingon"}, "stemmer"),
    ({"stop_words": "french"}, "stop_words"),
    ({"stop_words": [1, 2]}, "stop_words"),
    ({"token_pattern": "("}, "token_pattern"),
    ({"token_pattern": r"(a)(b)"}, "capturing groups"),
    ({"min_length": 0}, "min_length"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(RLSIError, match=match):
        Tokenizer(**kwargs)


def test_non_string_document():
    with pytest.raises(RLSIError, match="must be a str"):
        Tokenizer()(b"bytes")


def test_pickle_round_trip():
    tok = Tokenizer(stemmer="english", stop_words=["cat"], min_length=2)
    again = pickle.loads(pickle.dumps(tok))
    assert again.get_params() == tok.get_params()
    assert again("the cats governments") == tok("the cats governments") == ["the", "cat", "govern"]


def test_speed_is_reasonable():
    import time
    words = [f"word{i} government{i % 50}s cocaine the of and" for i in range(300)]
    docs = [" ".join(words[(i * 7) % 250:(i * 7) % 250 + 50]) for i in range(2000)]
    tok = Tokenizer(stemmer="english")
    tok(docs[0])
    start = time.perf_counter()
    n = sum(len(tok(d)) for d in docs)
    assert n > 0
    assert time.perf_counter() - start < 5.0
