"""Streaming ingestion (rlsi.text.ingest): two passes over JSON-lines files give exactly the matrix and
the vocabulary of the in-memory TfidfVectorizer, batch size and file split notwithstanding."""

import gzip
import json

import numpy as np
import pytest

from rlsi.datasets import demo_corpus_path
from rlsi.errors import CorpusError
from rlsi.io.matrix import load_matrix
from rlsi.text import TfidfVectorizer, read_jsonl
from rlsi.text.ingest import ingest


def _check_equal(matrix_dir, reference_vec, X_ref, ids):
    m = load_matrix(matrix_dir)
    X = m.X
    assert X.shape == X_ref.shape and X.dtype == X_ref.dtype
    assert np.array_equal(X.indptr, X_ref.indptr) and np.array_equal(X.indices, X_ref.indices)
    assert np.array_equal(X.data, X_ref.data)
    vec = m.vectorizer
    assert vec.feature_names_ == reference_vec.feature_names_
    assert np.array_equal(vec.df_, reference_vec.df_) and np.array_equal(vec.idf_, reference_vec.idf_)
    assert vec.n_docs_ == reference_vec.n_docs_ and vec.get_params() == reference_vec.get_params()
    assert list(m.doc_ids) == list(ids)
    return m


@pytest.mark.parametrize("settings, batch_docs", [
    ({}, 100),
    (dict(min_df=2, max_df=0.5, stemmer="english"), 333),
    (dict(max_features=700, norm=None, dtype=np.float32), 10_000),
    (dict(min_df=3, stop_words=None, max_df=40), 1),
])
def test_equals_the_in_memory_vectorizer(tmp_path, settings, batch_docs):
    corpus = read_jsonl(demo_corpus_path())
    reference = TfidfVectorizer(**settings)
    X_ref = reference.fit_transform(corpus.texts)
    vec = ingest(demo_corpus_path(), tmp_path / "m", vectorizer=TfidfVectorizer(**settings), batch_docs=batch_docs)
    assert vec.feature_names_ == reference.feature_names_
    m = _check_equal(tmp_path / "m", reference, X_ref, corpus.ids)
    lengths = reference.doc_lengths(corpus.texts)
    assert np.array_equal(m.doc_lengths, lengths)
    assert [p.name for p in tmp_path.iterdir()] == ["m"]  # the token cache is gone


def test_several_files_read_in_order(tmp_path):
    docs = [{"id": f"d{i}", "title": f"title {i % 3}", "text": f"word{i % 5} common word{i % 7} x{i}"}
            for i in range(40)]
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl"
    with gzip.open(a, "wt") as f:
        f.writelines(json.dumps(d) + "\n" for d in docs[:25])
    b.write_text("".join(json.dumps(d) + "\n" for d in docs[25:]))
    texts = [f"{d['title']}\n{d['text']}" for d in docs]
    reference = TfidfVectorizer()
    X_ref = reference.fit_transform(texts)
    ingest([a, b], tmp_path / "m", batch_docs=6)
    _check_equal(tmp_path / "m", reference, X_ref, [d["id"] for d in docs])


def test_missing_ids_name_the_file_when_there_are_several(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('{"text": "alpha beta"}\n{"text": "beta gamma"}\n')
    b.write_text('{"text": "gamma delta"}\n')
    ingest([a, b], tmp_path / "m")
    assert list(load_matrix(tmp_path / "m").doc_ids) == ["a.jsonl:1", "a.jsonl:2", "b.jsonl:1"]
    ingest(a, tmp_path / "m1")
    assert list(load_matrix(tmp_path / "m1").doc_ids) == ["1", "2"]  # one file: as read_jsonl


@pytest.mark.parametrize("content, words", [
    ("", "empty corpus: no documents"),
    ('{"text": "the of and"}\n', "none of the 1 documents has a token"),
    ('{"id": "x", "text": "alpha"}\n{"id": "x", "text": "beta"}\n', "duplicate document id 'x'"),
    ('{"id": "x", "text": "alpha"}\nnot json\n', "line 2: not valid JSON"),
    ('{"id": "x", "body": "alpha"}\n', "none of the text fields"),
])
def test_bad_corpora(tmp_path, content, words):
    path = tmp_path / "c.jsonl"
    path.write_text(content)
    with pytest.raises(CorpusError, match=words):
        ingest(path, tmp_path / "m")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]  # no matrix, no token cache left


def test_pruning_everything_is_refused(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "alpha beta"}\n{"text": "gamma delta"}\n')
    with pytest.raises(CorpusError, match="no term left after pruning"):
        ingest(path, tmp_path / "m", vectorizer=TfidfVectorizer(min_df=2))


def test_not_a_file(tmp_path):
    with pytest.raises(CorpusError, match="not found"):
        ingest(tmp_path / "nothing.jsonl", tmp_path / "m")
    with pytest.raises(CorpusError, match="not a regular file"):
        ingest(tmp_path, tmp_path / "m")


@pytest.mark.parametrize("settings", [dict(min_df=1), dict(min_df=2, max_features=500, norm=None)])
def test_a_large_unicode_vocabulary_equals_the_in_memory_vectorizer(tmp_path, settings):
    # thousands of distinct terms, most seen once, non-ASCII letters (column order = code-point order)
    rng = np.random.default_rng(11)
    letters = list("abcdeéèßøπжяω")
    vocab = ["".join(rng.choice(letters, size=rng.integers(2, 7))) for _ in range(6000)]
    texts = [" ".join(rng.choice(vocab[: rng.integers(50, 6000)], size=rng.integers(0, 40))) for _ in range(300)]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    reference = TfidfVectorizer(**settings)
    X_ref = reference.fit_transform(texts)
    ingest(path, tmp_path / "m", vectorizer=TfidfVectorizer(**settings), batch_docs=7)
    _check_equal(tmp_path / "m", reference, X_ref, [f"d{i}" for i in range(len(texts))])
