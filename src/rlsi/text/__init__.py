"""Text processing: tokenization, the TOIS tf-idf vectorizer, corpora and their readers."""

from .corpus import Corpus, read_corpus, read_jsonl, read_text_folder
from .tokenize import (DEFAULT_TOKEN_PATTERN, TOKEN_PATTERNS, Tokenizer, english_stop_words,
                       register_token_pattern)
from .stream import StreamingTfidf
from .vectorize import TfidfVectorizer, VectorizerNotFittedError, idf_from_df

__all__ = [
    "Corpus",
    "StreamingTfidf",
    "DEFAULT_TOKEN_PATTERN",
    "TOKEN_PATTERNS",
    "TfidfVectorizer",
    "Tokenizer",
    "VectorizerNotFittedError",
    "english_stop_words",
    "idf_from_df",
    "read_corpus",
    "read_jsonl",
    "read_text_folder",
    "register_token_pattern",
]
