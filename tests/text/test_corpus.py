"""Tests of rlsi.text.corpus (Corpus and its readers)."""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from rlsi.errors import CorpusError
from rlsi.text import Corpus, TfidfVectorizer, read_corpus, read_jsonl, read_text_folder

SHARED_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"

RECORDS = [
    {"id": "a", "title": "First title", "text": "first body", "label": "x"},
    {"id": "b", "title": "", "text": "second body", "split": "test"},
    {"id": 7, "text": "third body", "label": "y", "date": "1987-03"},
]


def _write(path, lines, compress=False):
    data = "\n".join(lines) + "\n"
    if compress:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


@pytest.mark.parametrize("name, compress", [("c.jsonl", False), ("c.jsonl.gz", True),
                                            ("c.data", True)])
def test_read_jsonl_plain_and_gzip(tmp_path, name, compress):
    path = _write(tmp_path / name, [json.dumps(r) for r in RECORDS], compress)
    corpus = read_jsonl(path)
    assert corpus.ids == ["a", "b", "7"]
    assert corpus.texts == ["First title\nfirst body", "second body", "third body"]
    assert corpus.fields == {"label": ["x", None, "y"], "split": [None, "test", None],
                             "date": [None, None, "1987-03"]}
    assert len(corpus) == 3
    assert list(corpus) == corpus.texts


def test_missing_id_uses_line_number_and_blank_lines_skipped(tmp_path):
    path = _write(tmp_path / "c.jsonl", ['{"text": "one"}', "", '{"text": "two", "title": null}'])
    corpus = read_jsonl(path)
    assert corpus.ids == ["1", "3"]
    assert corpus.texts == ["one", "two"]


def test_text_fields_option_and_empty_text(tmp_path):
    path = _write(tmp_path / "c.jsonl", ['{"id": "q", "query": "cells", "text": "x"}',
                                         '{"id": "r", "query": "   "}'])
    corpus = read_jsonl(path, text_fields="query")
    assert corpus.texts == ["cells", ""]
    assert corpus.fields == {"text": ["x", None]}


def test_utf8_bom_accepted(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"id": "1", "text": "caf\u00e9"}).encode() + b"\n")
    assert read_jsonl(path).texts == ["caf\u00e9"]


@pytest.mark.parametrize("lines, match", [
    (['{"id": "1", "text": "ok"}', '{"id": "2", "text": '], r"line 2: not valid JSON"),
    (['["not", "an", "object"]'], r"line 1: expected a JSON object"),
    (['{"id": "1", "body": "no text field"}'], r"line 1: object has none of the text fields"),
    (['{"id": "1", "text": 5}'], r"line 1: field 'text' must be a string"),
    (['{"id": [1], "text": "x"}'], r"line 1: \"id\" must be a string or an integer"),
    (['{"id": "1", "text": "x"}', '{"id": "1", "text": "y"}'], r"duplicate document id '1'"),
    (["", "   "], r"contains no document"),
])
def test_jsonl_errors(tmp_path, lines, match):
    path = _write(tmp_path / "bad.jsonl", lines)
    with pytest.raises(CorpusError, match=match) as info:
        read_jsonl(path)
    message = str(info.value)
    assert str(path) in message and "\n" not in message


def test_not_utf8(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"id": "1", "text": "ok"}\n{"id": "2", "text": "caf\xe9"}\n')
    with pytest.raises(CorpusError, match=r"line 2: not UTF-8"):
        read_jsonl(path)


def test_damaged_gzip(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(b"\x1f\x8bthis is not gzip data")
    with pytest.raises(CorpusError, match="damaged gzip") as info:
        read_jsonl(path)
    assert str(path) in str(info.value)


def test_missing_paths(tmp_path):
    with pytest.raises(CorpusError, match="not found.*nope.jsonl"):
        read_jsonl(tmp_path / "nope.jsonl")
    with pytest.raises(CorpusError, match="not found.*nope"):
        read_corpus(tmp_path / "nope")
    with pytest.raises(CorpusError, match="not found"):
        read_text_folder(tmp_path / "nope")
    with pytest.raises(CorpusError, match="is a folder"):
        read_jsonl(tmp_path)


def _make_folder(root):
    (root / "sub").mkdir(parents=True)
    (root / "b.txt").write_text("Bee text", encoding="utf-8")
    (root / "a.txt").write_text("Ay text", encoding="utf-8")
    (root / "sub" / "c.txt").write_text("Sea text", encoding="utf-8")
    (root / "notes.md").write_text("ignored", encoding="utf-8")
    return root


def test_read_text_folder(tmp_path):
    root = _make_folder(tmp_path / "docs")
    corpus = read_text_folder(root)
    assert corpus.ids == ["a", "b", "sub/c"]
    assert corpus.texts == ["Ay text", "Bee text", "Sea text"]
    assert corpus.fields == {}
    assert read_text_folder(root, pattern="*.md").ids == ["notes"]
    assert read_corpus(root).ids == corpus.ids


def test_text_folder_errors(tmp_path):
    root = _make_folder(tmp_path / "docs")
    with pytest.raises(CorpusError, match="no file matching '\\*.rst'"):
        read_text_folder(root, pattern="*.rst")
    with pytest.raises(CorpusError, match="is not a folder"):
        read_text_folder(root / "a.txt")
    (root / "sub" / "bad.txt").write_bytes(b"caf\xe9")
    with pytest.raises(CorpusError, match=r"bad.txt: not UTF-8"):
        read_text_folder(root)


def test_read_corpus_dispatches_to_file(tmp_path):
    path = _write(tmp_path / "c.jsonl", [json.dumps(r) for r in RECORDS])
    assert read_corpus(path).ids == ["a", "b", "7"]


def test_corpus_subset_and_validation():
    corpus = Corpus(ids=["a", "b", "c"], texts=["x", "y", "z"], fields={"label": [1, 2, 3]})
    sub = corpus.subset([2, 0])
    assert sub.ids == ["c", "a"] and sub.texts == ["z", "x"] and sub.fields == {"label": [3, 1]}
    assert corpus.subset(np.array([False, True, False])).ids == ["b"]
    assert len(corpus.subset([])) == 0
    with pytest.raises(CorpusError, match="out of range"):
        corpus.subset([3])
    with pytest.raises(CorpusError, match="boolean mask"):
        corpus.subset([True, False])
    with pytest.raises(CorpusError, match="3 ids but 2 texts"):
        Corpus(ids=["a", "b", "c"], texts=["x", "y"])
    with pytest.raises(CorpusError, match="field 'label'"):
        Corpus(ids=["a"], texts=["x"], fields={"label": []})
    with pytest.raises(CorpusError, match="duplicate document id 'a'"):
        Corpus(ids=["a", "b", "a"], texts=["x", "y", "z"])


def test_corpus_feeds_the_vectorizer(tmp_path):
    path = _write(tmp_path / "c.jsonl", [json.dumps(r) for r in RECORDS])
    X = TfidfVectorizer().fit_transform(read_jsonl(path))
    assert X.shape[0] == 3


def test_twenty_newsgroups_from_shared_data():
    path = SHARED_DATA / "twenty_newsgroups" / "corpus.jsonl.gz"
    if not path.exists():
        pytest.skip(f"shared development data not found at {path.resolve()} "
                    "(expected as a sibling 'shared/' folder of the repository)")
    corpus = read_corpus(path)
    assert len(corpus) == 18846
    assert set(corpus.fields) >= {"label", "label_id", "split"}
    assert set(corpus.fields["split"]) == {"train", "test"}
    assert len(set(corpus.fields["label"])) == 20


def test_read_corpus_of_a_folder_accepts_text_fields(tmp_path):
    """The commands pass --text-fields to every reader; a folder (one document per file) ignores it."""
    root = _make_folder(tmp_path / "docs")
    assert read_corpus(root, text_fields=("title", "text")).ids == ["a", "b", "sub/c"]
    with pytest.raises(CorpusError, match="no file matching"):
        read_corpus(root / "sub", text_fields="text", pattern="*.rst")


def test_json_lines_are_read_once_so_a_pipe_works(tmp_path):
    """gzip is recognised by peeking at the first bytes, not by opening the file twice."""
    import os
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    payload = gzip.compress("".join(json.dumps(r) + "\n" for r in RECORDS).encode())

    def writer():
        with open(fifo, "wb") as f:
            f.write(payload)

    t = threading.Thread(target=writer)
    t.start()
    corpus = read_jsonl(fifo)
    t.join()
    assert len(corpus) == len(RECORDS)


@pytest.mark.parametrize("line, message", [("[" * 100000, "not valid JSON"), ('{"id": ' + "9" * 5000 + "}",
                                                                              "not valid JSON")])
def test_hostile_json_lines(tmp_path, line, message):
    path = tmp_path / "c.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(CorpusError, match=f"line 1: {message}"):
        read_jsonl(path)
