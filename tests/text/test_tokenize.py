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


# Speed without a clock. Tokenizing is fast for two reasons, each checked here by what it does rather
# than by how long it takes: stems come from PyStemmer's C stemmer (a declared dependency, which
# snowballstemmer uses when it is importable) and every distinct token is stemmed once per process.

MIXED_WORDS = ["governments", "cocaine", "running", "generously", "hopefulness", "relational",
               "conditional", "agreed", "feudalism", "skies", "dying", "news", "innings", "proceed",
               "exceeding", "succeeded", "cannot", "ties", "sky", "atlas", "andes", "cosmos", "bias",
               "i", "a", "naïve", "résumé", "1987", "x2", "caress", "ponies", "hopping", "filing",
               "conformabli", "radicalli", "differentli", "vileli", "analogousli", "yesterday"]


def _med_words():
    """Distinct tokens (not stemmed, stop words kept) of the first 200 packaged MED abstracts."""
    from rlsi.datasets import load_demo_corpus

    tok = Tokenizer(stop_words=None)
    words = set(MIXED_WORDS)
    for text in load_demo_corpus().texts[:200]:
        words.update(tok(text))
    return sorted(words)


@pytest.mark.parametrize("name, reference", [("english", "english_stemmer.EnglishStemmer"),
                                             ("porter", "porter_stemmer.PorterStemmer")])
def test_stems_equal_the_pure_python_snowball_stemmer(name, reference):
    # whatever backend serves the stems, they are those of the reference (pure-Python) implementation
    import importlib

    module, cls = reference.split(".")
    pure = getattr(importlib.import_module(f"snowballstemmer.{module}"), cls)()
    words = _med_words()
    assert len(words) > 2000  # a real vocabulary, not a handful of words
    tok = Tokenizer(stemmer=name, stop_words=None)
    assert [tok.stem(w) for w in words] == [pure.stemWord(w) for w in words]
    assert tok(" ".join(words)) == [pure.stemWord(w) for w in words]


@pytest.fixture
def counted_stemmers(monkeypatch):
    """Route the tokenizers' stemmer construction through a recorder: per algorithm, the backend object
    snowballstemmer returned and the number of words stemmed. The process-wide stem caches are emptied
    before and after, so that other tests get the real, uncounted caches back."""
    import rlsi.text.tokenize as tokenize_module

    real_factory = tokenize_module.snowballstemmer.stemmer
    record = {}

    class Counting:
        def __init__(self, algorithm):
            self.backend = real_factory(algorithm)
            self.calls = 0
            record[algorithm] = self

        def stemWord(self, word):  # noqa: N802 - snowballstemmer's name
            self.calls += 1
            return self.backend.stemWord(word)

    tokenize_module._stem_cache.cache_clear()
    monkeypatch.setattr(tokenize_module.snowballstemmer, "stemmer", Counting)
    yield record
    tokenize_module._stem_cache.cache_clear()


def test_the_stemmer_backend_is_the_c_extension(counted_stemmers):
    import Stemmer  # PyStemmer, a dependency of rlsi (pyproject.toml)

    assert Tokenizer(stemmer="english")("governments") == ["govern"]
    assert Tokenizer(stemmer="porter")("governments") == ["govern"]
    assert set(counted_stemmers) == {"english", "porter"}
    for counter in counted_stemmers.values():
        assert isinstance(counter.backend, Stemmer.Stemmer)


def test_each_distinct_token_is_stemmed_once_per_process(counted_stemmers):
    words = [f"word{i} government{i % 50}s cocaine the of and" for i in range(300)]
    docs = [" ".join(words[(i * 7) % 250:(i * 7) % 250 + 50]) for i in range(200)]
    plain = Tokenizer()
    distinct = {t for d in docs for t in plain(d)}
    first, second = Tokenizer(stemmer="english"), Tokenizer(stemmer="english", min_length=2)
    n_tokens = sum(len(first(d)) for d in docs)
    assert n_tokens > 10 * len(distinct)  # many repetitions: a cache-less tokenizer would stem n_tokens
    assert counted_stemmers["english"].calls == len(distinct)
    # a second tokenizer of the same algorithm shares the cache: nothing new to stem
    assert [second(d) for d in docs] == [first(d) for d in docs]
    assert counted_stemmers["english"].calls == len(distinct)
    second("unseen words here")
    assert counted_stemmers["english"].calls == len(distinct) + 2  # "unseen", "words" ("here": stop word)


def test_the_stem_cache_is_bounded_and_stems_stay_right(monkeypatch):
    """The process-wide stem cache never holds more than its bound (a web-scale ingestion meets tens of
    millions of distinct tokens), and a token stemmed after the cache was emptied gets the same stem."""
    import snowballstemmer

    from rlsi.text import tokenize

    cache = tokenize._StemCache(snowballstemmer.stemmer("english"), max_size=50)
    direct = snowballstemmer.stemmer("english")
    words = [f"running{i}s" for i in range(400)] + ["running", "cats", "running"]
    sizes = []
    for w in words:
        assert cache[w] == direct.stemWord(w)
        sizes.append(len(cache))
    assert max(sizes) == 50 and sizes[-1] < 50  # it filled up, and was emptied at least once
    # the shared cache of a Tokenizer has the module's bound
    tok = tokenize.Tokenizer(stemmer="english")
    assert tok._stems.max_size == tokenize.STEM_CACHE_MAX
    assert tok("Running cats") == [direct.stemWord("running"), direct.stemWord("cats")]
