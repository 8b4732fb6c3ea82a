"""Loading test collections (shared IR format and separate files)."""

import gzip
import json
import logging
from pathlib import Path

import pytest

from rlsi.errors import RLSIError
from rlsi.evaluation import evaluate, load_collection, read_queries

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


def _jsonl(path, rows, gz=False):
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tiny(tmp_path):
    folder = tmp_path / "tiny"
    folder.mkdir()
    _jsonl(folder / "corpus.jsonl.gz", [
        {"id": "d1", "title": "Wing flutter", "text": "flutter of a wing at high speed", "year": 1960},
        {"id": "d2", "title": "", "text": "heat transfer in slabs"},
        {"id": "d3", "title": "Boundary layer", "text": "laminar boundary layer"},
    ], gz=True)
    _jsonl(folder / "queries.jsonl", [{"id": "1", "text": "wing flutter"}, {"id": "2", "text": "heat slabs"},
                                      {"id": "3", "text": "shock waves"}])
    (folder / "qrels.tsv").write_text("1\t0\td1\t2\n1\t0\td3\t0\n2\t0\td2\t1\n3\t0\td3\t0\n")
    return folder


def test_load_folder(tiny, caplog):
    with caplog.at_level(logging.WARNING, logger="rlsi.evaluation"):
        coll = load_collection(tiny)
    assert not caplog.records
    assert coll.name == "tiny"
    assert coll.corpus.ids == ["d1", "d2", "d3"]
    assert "Wing flutter" in coll.corpus.texts[0] and "high speed" in coll.corpus.texts[0]
    assert coll.corpus.texts[1] == "heat transfer in slabs"
    assert coll.queries == {"1": "wing flutter", "2": "heat slabs", "3": "shock waves"}
    assert coll.qrels == {"1": {"d1": 2, "d3": 0}, "2": {"d2": 1}, "3": {"d3": 0}}
    assert coll.evaluated_queries == ["1", "2"]              # query 3 has no relevant document
    assert "documents=3" in repr(coll)


def test_load_separate_files_with_tsv_queries(tiny, tmp_path):
    _jsonl(tmp_path / "docs.jsonl", [{"id": 7, "text": "only text"}, {"id": "d1", "text": "x"}])
    (tmp_path / "topics.tsv").write_text("q1\twing flutter\nq2\t\n", encoding="utf-8")
    (tmp_path / "judgements.txt").write_text("q1 0 7 1\n")
    coll = load_collection(corpus=tmp_path / "docs.jsonl", queries=tmp_path / "topics.tsv",
                           qrels=tmp_path / "judgements.txt", text_fields=("text",))
    assert coll.corpus.ids == ["7", "d1"] and coll.corpus.texts == ["only text", "x"]
    assert coll.queries == {"q1": "wing flutter", "q2": ""}
    assert coll.name == "docs"
    # a file given explicitly overrides the one of the folder
    mixed = load_collection(tiny, qrels=tmp_path / "judgements.txt")
    assert mixed.qrels == {"q1": {"7": 1}} and mixed.corpus.ids == ["d1", "d2", "d3"]


def test_inconsistencies_warn_and_are_kept(tiny, caplog):
    with open(tiny / "qrels.tsv", "a") as handle:
        handle.write("2\t0\tghost\t1\n9\t0\td1\t1\n")
    _jsonl(tiny / "queries.jsonl", [{"id": "1", "text": "wing flutter"}, {"id": "2", "text": "   "}])
    with caplog.at_level(logging.WARNING, logger="rlsi.evaluation"):
        coll = load_collection(tiny)
    messages = "\n".join(r.getMessage() for r in caplog.records)
    assert "1 judged (query, document) pair(s) name documents not in the corpus" in messages
    assert "'2/ghost'" in messages
    assert "2 judged quer(y/ies) are not in" in messages and "'3', '9'" in messages
    assert "1 quer(y/ies) have empty text (e.g. '2')" in messages
    assert coll.qrels["2"] == {"d2": 1, "ghost": 1}           # kept: relevant but never retrievable
    # as in trec_eval, the unretrievable document halves the AP of query 2 and query 9 scores 0
    per_query = evaluate({"2": {"d2": 1.0}}, coll.qrels, ["map"])["map"]
    assert per_query == {"1": 0.0, "2": 0.5, "9": 0.0}


@pytest.mark.parametrize("name, content, message", [
    ("queries.jsonl", '{"id": "1", "text": "a"}\n{"id": "2", "text": "b"\n', r"queries.jsonl, line 2: not valid JSON"),
    ("queries.jsonl", '{"text": "a"}\n', r"queries.jsonl, line 1: the queries entry has no \"id\""),
    ("queries.jsonl", '{"id": "1", "text": "a"}\n\n{"id": "1", "text": "b"}\n',
     r"queries.jsonl, line 3: query id '1' already used on line 1"),
    ("queries.jsonl", '{"id": "1", "title": "a"}\n', r"line 1: query '1' has no \"text\" string"),
    ("queries.jsonl", '[1, 2]\n', r"line 1: expected a JSON object, got list"),
    ("queries.jsonl", '\n', r"holds no query"),
    ("qrels.tsv", "1 0 d1\n", r"qrels.tsv, line 1: a qrels line needs 4 fields"),
    ("qrels.tsv", "", r"holds no judgement"),
])
def test_errors_name_file_and_line(tiny, name, content, message):
    (tiny / name).write_text(content, encoding="utf-8")
    with pytest.raises(RLSIError, match=message):
        load_collection(tiny)


def test_missing_parts(tiny, tmp_path):
    with pytest.raises(RLSIError, match="collection folder not found"):
        load_collection(tmp_path / "nowhere")
    (tiny / "queries.jsonl").unlink()
    with pytest.raises(RLSIError, match=r"has no queries file \(looked for queries.jsonl, queries.tsv\)"):
        load_collection(tiny)
    with pytest.raises(RLSIError, match="needs a folder or the queries, qrels file path"):
        load_collection(corpus=tiny / "corpus.jsonl.gz")
    with pytest.raises(RLSIError, match="queries file not found"):
        read_queries(tmp_path / "q.tsv")
    (tmp_path / "bad.tsv").write_text("no tab here\n")
    with pytest.raises(RLSIError, match=r"bad.tsv, line 1: expected 'qid<TAB>text'"):
        read_queries(tmp_path / "bad.tsv")
    (tiny / "corpus.jsonl.gz").unlink()
    with pytest.raises(RLSIError, match="corpus"):
        load_collection(tiny, queries=tmp_path / "bad.tsv")


def test_shared_cranfield():
    folder = DATA / "cranfield"
    if not (folder / "qrels.tsv").is_file():
        pytest.skip(f"shared Cranfield collection not found at {folder.resolve()}")
    coll = load_collection(folder)
    assert len(coll.corpus.ids) == 1400 and len(coll.queries) == 225
    assert sum(len(j) for j in coll.qrels.values()) == 1837
    assert len(coll.evaluated_queries) == 225
