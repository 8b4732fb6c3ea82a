"""Tokenization: text -> list of terms (lower-casing, token pattern, stop words, stemming).

A :class:`Tokenizer` turns one document (a ``str``) into its list of terms, in order:

1. lower-case the text (``lowercase=True``);
2. find the tokens with ``token_pattern`` (default: maximal runs of Unicode letters and digits, no
   underscore -- on ASCII text exactly the runs of ``[A-Za-z0-9]``; numbers are kept as tokens);
3. drop tokens shorter than ``min_length`` characters;
4. drop stop words (``stop_words``; matched case-insensitively);
5. stem the remaining tokens (``stemmer``), through a process-wide, bounded cache of stems.

Stop words are removed *before* stemming, so the stop list is a list of surface words ("having" is
removed, while a word whose stem happens to be a stop word is kept).

The English stop list (``stop_words="english"``) is the Glasgow IR group list as distributed by
scikit-learn (318 words), shipped as ``stopwords_en.txt`` next to this module (see its header).
The TOIS paper stems its terms (its topics show "cocain", "govern"); ``stemmer="english"`` gives the
Snowball English stemmer (Porter2) and ``stemmer="porter"`` the original Porter stemmer, both from the
``snowballstemmer`` package.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

import snowballstemmer

from .._validation import check_choice, check_number
from ..errors import RLSIError

__all__ = ["Tokenizer", "english_stop_words", "DEFAULT_TOKEN_PATTERN", "STEMMERS", "TOKEN_PATTERNS",
           "register_token_pattern", "resolve_token_pattern", "saved_token_pattern"]

#: Maximal runs of Unicode letters and digits (``\w`` without ``_``). On ASCII text this is ``[A-Za-z0-9]+``.
DEFAULT_TOKEN_PATTERN = r"[^\W_]+"
#: Longest token kept (characters); longer ones are dropped (see :class:`Tokenizer`).
MAX_TERM_LENGTH = 100

#: Named token patterns. A saved vectorizer stores its pattern, and loading compiles only patterns of
#: this registry (by name or by their exact text): a regular expression read from a model file could
#: otherwise take exponential time on a short document (``(a|aa)+$``). Add one with
#: :func:`register_token_pattern` (in the code that saves and in the code that loads).
TOKEN_PATTERNS = {
    "letters_digits": DEFAULT_TOKEN_PATTERN,   # the default
    "word": r"\w+",                            # letters, digits and underscore
    "letters": r"[^\W\d_]+",                   # letters only: numbers are not tokens
    "sklearn": r"(?u)\b\w\w+\b",               # scikit-learn's default: 2+ word characters
}

#: Accepted ``stemmer`` values -> snowballstemmer algorithm name.
STEMMERS = {None: None, "english": "english", "porter": "porter"}


@functools.lru_cache(maxsize=None)
def english_stop_words() -> frozenset:
    """The English stop list shipped with rlsi (318 lower-case words; see ``stopwords_en.txt``)."""
    text = resources.files(__package__).joinpath("stopwords_en.txt").read_text(encoding="utf-8")
    words = (line.strip() for line in text.splitlines())
    return frozenset(w for w in words if w and not w.startswith("#"))


def _resolve_stop_words(stop_words) -> frozenset:
    """``"english"`` -> the shipped list, ``None`` -> empty, an iterable of str -> its lower-cased set."""
    if stop_words is None:
        return frozenset()
    if isinstance(stop_words, str):
        if stop_words == "english":
            return english_stop_words()
        raise RLSIError(f"stop_words={stop_words!r} is not supported; use 'english', None, "
                        "or a list of words")
    try:
        words = list(stop_words)
    except TypeError:
        raise RLSIError(f"stop_words={stop_words!r} must be 'english', None or an iterable of "
                        "words") from None
    bad = [w for w in words if not isinstance(w, str)]
    if bad:
        raise RLSIError(f"stop_words must contain only strings, got {bad[0]!r}")
    return frozenset(w.lower() for w in words)


def register_token_pattern(name: str, pattern: str) -> None:
    """Make the regular expression ``pattern`` available under ``name`` (and loadable from model files)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise RLSIError(f"token pattern name {name!r} must be an identifier")
    if name in TOKEN_PATTERNS and TOKEN_PATTERNS[name] != pattern:
        raise RLSIError(f"token pattern {name!r} is already registered as {TOKEN_PATTERNS[name]!r}")
    _compile_pattern(pattern)
    TOKEN_PATTERNS[name] = pattern


def resolve_token_pattern(value) -> str:
    """The regular expression of ``value``: a registered name, or a pattern used as it is."""
    if isinstance(value, str) and value in TOKEN_PATTERNS:
        return TOKEN_PATTERNS[value]
    return value


def saved_token_pattern(value, *, loading):
    """Check a token pattern that is written to (``loading=False``) or read from a model file.

    Only registered patterns pass, by name or by their exact text; returns ``value`` unchanged."""
    if isinstance(value, str) and (value in TOKEN_PATTERNS or value in TOKEN_PATTERNS.values()):
        return value
    names = ", ".join(TOKEN_PATTERNS)
    if loading:
        raise RLSIError(f"token_pattern {str(value)[:60]!r} is not a registered token pattern ({names}); "
                        "patterns from a model file are compiled only when registered: call "
                        "rlsi.text.register_token_pattern(name, pattern) before loading if you trust it")
    raise RLSIError(f"token_pattern={value!r} cannot be saved: only registered patterns ({names}) are "
                    "stored in model files; register it with rlsi.text.register_token_pattern(name, pattern)")


def _compile_pattern(token_pattern: str) -> re.Pattern:
    token_pattern = resolve_token_pattern(token_pattern)
    if not isinstance(token_pattern, str):
        raise RLSIError(f"token_pattern={token_pattern!r} must be a regular expression string")
    try:
        pattern = re.compile(token_pattern)
    except re.error as exc:
        raise RLSIError(f"token_pattern={token_pattern!r} is not a valid regular expression: "
                        f"{exc}") from None
    if pattern.groups > 1:
        raise RLSIError(f"token_pattern={token_pattern!r} has {pattern.groups} capturing groups; "
                        "use at most one (its match is the token)")
    return pattern


#: Most tokens a stem cache keeps (about 125 bytes each: some 30 MB). A web-scale ingestion meets tens of
#: millions of distinct tokens (typos, numbers, names); an unbounded cache would keep them all and undo the
#: streaming ingestion's bounded memory.
STEM_CACHE_MAX = 1 << 18


class _StemCache(dict):
    """token -> stem, computing (and storing) missing stems on first look-up; emptied when it reaches
    ``max_size`` entries. Why emptied rather than least-recently-used: a plain dict look-up is the fast path
    (C, no bookkeeping per hit), and after a clear the frequent tokens (most of the text: Zipf) come back
    within a few documents, so at worst the rare tokens are stemmed twice."""

    def __init__(self, stemmer, max_size=STEM_CACHE_MAX):
        super().__init__()
        self._stem = stemmer.stemWord
        self.max_size = int(max_size)

    def __missing__(self, token):
        if len(self) >= self.max_size:
            self.clear()
        stem = self[token] = self._stem(token)
        return stem


@functools.lru_cache(maxsize=None)
def _stem_cache(algorithm: str) -> _StemCache:
    """The process-wide stem cache of one snowball algorithm (shared by every tokenizer)."""
    return _StemCache(snowballstemmer.stemmer(algorithm))


class Tokenizer:
    """Callable ``str -> list[str]``: lower-case, find tokens, drop short/stop words, stem.

    Parameters
    ----------
    lowercase : bool, default True
        Lower-case the text before finding tokens.
    stop_words : "english", None or iterable of str, default "english"
        Words to drop (compared case-insensitively, before stemming).
    stemmer : None, "english" or "porter", default None
        Snowball English (Porter2) or original Porter stemmer; ``None`` keeps words as found.
    token_pattern : str, default ``DEFAULT_TOKEN_PATTERN``
        Regular expression whose matches are the tokens (with one capturing group, the group is the
        token), or the name of a registered pattern (:data:`TOKEN_PATTERNS`). Only registered patterns
        can be saved in a model file.
    min_length : int, default 1
        Tokens with fewer characters are dropped (before stop-word removal).

    Tokens longer than :data:`MAX_TERM_LENGTH` characters (base64 blobs, runs of digits, URLs glued
    together) are dropped: a vocabulary is stored as an array as wide as its longest term, so one
    20,000-character token would make it hundreds of times larger, and no query matches such a term.

    Stemming costs about 30 microseconds per *distinct* token with the pure-Python snowballstemmer
    (much less when the optional C extension PyStemmer is installed, which snowballstemmer then uses),
    so stems are cached in a process-wide dict per algorithm, shared by all tokenizers; it holds at most
    :data:`STEM_CACHE_MAX` tokens (some 30 MB) and starts afresh when full. Tokenizers pickle by their
    parameters.
    """

    def __init__(self, lowercase=True, stop_words="english", stemmer=None,
                 token_pattern=DEFAULT_TOKEN_PATTERN, min_length=1):
        self.lowercase = bool(lowercase)
        self.stemmer = check_choice("stemmer", stemmer, STEMMERS)
        self.token_pattern = token_pattern
        self.min_length = check_number("min_length", min_length, low=1, integer=True)
        self._findall = _compile_pattern(token_pattern).findall
        self._stop = _resolve_stop_words(stop_words)
        # a custom list is kept as a sorted list (lower-case), so that a generator is not consumed twice
        self.stop_words = stop_words if stop_words is None or isinstance(stop_words, str) \
            else sorted(self._stop)
        self._stems = None if stemmer is None else _stem_cache(STEMMERS[stemmer])

    def __call__(self, text: str) -> list[str]:
        """The terms of ``text``, in order of occurrence (with repetitions)."""
        if not isinstance(text, str):
            raise RLSIError(f"a document must be a str, got {type(text).__name__}")
        if self.lowercase:
            text = text.lower()
        tokens = self._findall(text)
        if len(text) > MAX_TERM_LENGTH and tokens and max(map(len, tokens)) > MAX_TERM_LENGTH:
            tokens = [t for t in tokens if len(t) <= MAX_TERM_LENGTH]
        if self.min_length > 1:
            n = self.min_length
            tokens = [t for t in tokens if len(t) >= n]
        stop = self._stop
        if stop:
            if self.lowercase:
                tokens = [t for t in tokens if t not in stop]
            else:
                tokens = [t for t in tokens if t.lower() not in stop]
        if self._stems is not None:
            tokens = list(map(self._stems.__getitem__, tokens))
        return tokens

    def stem(self, word: str) -> str:
        """The stem of one word (``word`` itself when ``stemmer`` is None)."""
        return word if self._stems is None else self._stems[word]

    @property
    def stop_word_set(self) -> frozenset:
        """The stop words in use (lower-case)."""
        return self._stop

    def get_params(self) -> dict:
        """The constructor parameters."""
        return {"lowercase": self.lowercase, "stop_words": self.stop_words, "stemmer": self.stemmer,
                "token_pattern": self.token_pattern, "min_length": self.min_length}

    def __reduce__(self):
        return (_rebuild_tokenizer, (self.get_params(),))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"Tokenizer({args})"


def _rebuild_tokenizer(params):
    return Tokenizer(**params)
