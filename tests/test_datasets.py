"""Tests of rlsi.datasets (the shipped MED demo collection)."""

import hashlib
from pathlib import Path

import pytest

from rlsi.datasets import demo_collection_dir, demo_corpus_path, load_demo_corpus
from rlsi.text import Corpus, TfidfVectorizer, read_jsonl

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def test_demo_corpus_has_1033_documents():
    corpus = load_demo_corpus()
    assert isinstance(corpus, Corpus)
    assert len(corpus) == 1033
    assert corpus.ids[0] == "1" and len(set(corpus.ids)) == 1033
    assert all(text.strip() for text in corpus.texts)


def test_demo_collection_files():
    folder = demo_collection_dir()
    assert folder.is_dir()
    assert demo_corpus_path() == folder / "corpus.jsonl.gz"
    for name in ("corpus.jsonl.gz", "queries.jsonl", "qrels.tsv", "PROVENANCE.md"):
        assert (folder / name).is_file(), name
    queries = read_jsonl(folder / "queries.jsonl")
    assert len(queries) == 30
    qrels = [line.split("\t") for line in (folder / "qrels.tsv").read_text().splitlines()]
    assert len(qrels) == 696 and all(len(row) == 4 for row in qrels)
    doc_ids = set(load_demo_corpus().ids)
    assert {row[2] for row in qrels} <= doc_ids
    assert {row[0] for row in qrels} <= set(queries.ids)


def test_provenance_lists_the_shipped_checksums():
    folder = demo_collection_dir()
    provenance = (folder / "PROVENANCE.md").read_text(encoding="utf-8")
    assert "1874213592e2279e6acdfffc7ea958092fa22510" in provenance
    for name in ("corpus.jsonl.gz", "queries.jsonl", "qrels.tsv"):
        digest = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        assert digest in provenance, name


def test_demo_files_match_shared_data():
    shared = SHARED_DATA / "med"
    if not shared.is_dir():
        pytest.skip(f"shared development data not found at {shared.resolve()} "
                    "(expected as a sibling 'shared/' folder of the repository)")
    for name in ("corpus.jsonl.gz", "queries.jsonl", "qrels.tsv"):
        assert (shared / name).read_bytes() == (demo_collection_dir() / name).read_bytes(), name


def test_demo_corpus_vectorizes():
    X = TfidfVectorizer(stemmer="english").fit_transform(load_demo_corpus())
    assert X.shape[0] == 1033
    assert X.getnnz(axis=1).min() > 0
