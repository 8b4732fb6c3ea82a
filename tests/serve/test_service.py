"""What the service opens and how: a live index, a model folder made live, the folders it refuses, one
writer at a time, a read-only service that follows another process's commits, and the texts beside the
index."""

import json

import pytest
from serve.serve_helpers import build_index, themed, wait_for

import rlsi.io
from rlsi.errors import RLSIError
from rlsi.io.kinds import folder_kind
from rlsi.retrieval import Searcher
from rlsi.retrieval.live import IndexLockedError, LiveIndex
from rlsi.serve import SearchService
from rlsi.serve.texts import TextStore


def _model_folder(path):
    _, _, vec, model = themed()
    rlsi.io.save(path, model=model, vectorizer=vec)
    return path


def test_a_model_folder_becomes_an_empty_live_index_that_takes_documents(tmp_path):
    path = _model_folder(tmp_path / "model")
    service = SearchService(path)
    try:
        assert service.converted and folder_kind(path) == "live"
        assert service.health()["documents"] == 0 and service.search("rocket")["hits"] == []
        assert service.put(["m1"], ["rocket orbit launch"]).result()["added"] == 1
        assert service.search("rocket")["hits"][0]["doc_id"] == "m1"
    finally:
        service.close()
    reopened = SearchService(path)  # live now: served as it is
    assert not reopened.converted and reopened.health()["documents"] == 1
    reopened.close()


def test_folders_it_refuses(tmp_path):
    with pytest.raises(RLSIError, match="without documents: serve it without --read-only"):
        SearchService(_model_folder(tmp_path / "model"), read_only=True)
    assert folder_kind(tmp_path / "model") == "model"  # unchanged
    with pytest.raises(RLSIError, match="no manifest.json"):
        SearchService(tmp_path / "missing")
    ids, texts, vec, model = themed()
    static = tmp_path / "static"
    Searcher(model, vec).index(texts, ids).save(static)
    with pytest.raises(RLSIError, match="static search index.*--live --corpus"):
        SearchService(static)


def test_one_writer_at_a_time(index_dir):
    service = SearchService(index_dir)
    try:
        with pytest.raises(IndexLockedError, match="another writer"):
            SearchService(index_dir)
        other = LiveIndex.open(index_dir)  # rlsi index --add, in another process or this one
        with pytest.raises(IndexLockedError):
            other.add(["x"], ["x"])
        other.close()
        reader = SearchService(index_dir, read_only=True)  # readers take no lock
        assert reader.health()["documents"] == 96
        reader.close()
    finally:
        service.close()
    with LiveIndex.open(index_dir) as index:  # released at close
        index.add(["after"], ["after"])
        index.commit()


def test_a_read_only_service_follows_the_writer_s_commits(index_dir):
    reader = SearchService(index_dir, read_only=True)
    try:
        generation = reader.health()["generation"]
        with LiveIndex.open(index_dir) as writer:
            writer.add(["kangaroo rocket"], ["w1"])
            writer.commit()
        wait_for(lambda: reader.health()["generation"] > generation, "the reader to see the commit")
        assert reader.search("kangaroo")["hits"][0]["doc_id"] == "w1"
    finally:
        reader.close()


def test_texts_come_from_the_store_else_from_the_corpus(tmp_path):
    path = build_index(tmp_path / "idx", texts=False)
    ids, texts, _, _ = themed()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": t.split("\n")[0], "text": t.split("\n")[1]}) + "\n"
                              for i, t in zip(ids, texts)))
    bare = SearchService(path)
    assert all(h["title"] == "" for h in bare.search("rocket")["hits"])
    assert bare.document("d2")["text"] is None
    bare.put(["d2"], ["Replaced title\nrocket rocket"]).result()
    bare.close()
    service = SearchService(path, corpus=corpus)
    try:
        hits = service.search("rocket")["hits"]
        assert hits[0]["doc_id"] == "d2" and hits[0]["title"] == "Replaced title"  # the store first
        assert all(h["title"].startswith("space note") for h in hits[1:])  # then the corpus
        assert service.document("d6")["text"] == texts[ids.index("d6")]
    finally:
        service.close()


def test_the_store_applies_changes_in_order_and_reads_read_only(tmp_path):
    store = TextStore(tmp_path)
    store.apply([("a", "one"), ("b", "two"), ("a", None), ("c", "three"), ("c", "four")])
    assert store.get_many(["a", "b", "c", "z"]) == {"b": "two", "c": "four"}
    reader = TextStore(tmp_path, read_only=True)
    assert reader.get("c") == "four"
    with pytest.raises(RLSIError, match="read-only"):
        reader.apply([("d", "x")])
    reader.close()
    store.close()
    assert TextStore(tmp_path / "nowhere", read_only=True).get_many(["a"]) == {}
