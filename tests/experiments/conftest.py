"""Fixture of the protocol tests: a ten-document collection (aircraft, heart, libraries)."""

import pytest

from rlsi.evaluation.collection import Collection
from rlsi.text import Corpus

DOCS = [
    ("d1", "aircraft wing flutter at high speed"), ("d2", "airplane wing design and flutter tests"),
    ("d3", "jet aircraft engine noise reduction"), ("d4", "heart disease and blood pressure"),
    ("d5", "cardiac surgery on the heart valves"), ("d6", "blood vessels arteries and the heart"),
    ("d7", "library catalog of books"), ("d8", "books indexing in the library catalog"),
    ("d9", "supersonic aircraft wing loads"), ("d10", "cardiac arrest and heart failure"),
]
# query 5 has no term of the corpus; query 2 judges a document missing from the corpus
QUERIES = {"1": "airplane wing", "2": "cardiac heart", "3": "library books", "4": "aircraft noise",
           "5": "zebra"}
QRELS = {"1": {"d1": 1, "d2": 2, "d9": 1}, "2": {"d4": 1, "d5": 1, "d10": 2, "missing-doc": 1},
         "3": {"d7": 1, "d8": 1}, "4": {"d3": 1}, "5": {"d1": 1}}


@pytest.fixture
def tiny():
    """The ten-document collection (a fresh :class:`Collection`)."""
    corpus = Corpus([d for d, _ in DOCS], [t for _, t in DOCS])
    return Collection(corpus, QUERIES, QRELS, "tiny")
