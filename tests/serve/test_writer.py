"""The server's one writer: group commits acknowledged after the commit, a refused request failing alone, a
failed commit acknowledging nothing, back-pressure, shutdown that finishes the queued writes, and re-folds
that advance between commits while searches go on."""

import threading

import pytest
from serve.serve_helpers import build_index, themed, wait_for

from rlsi.errors import RLSIError
from rlsi.retrieval.live import LiveIndex
from rlsi.serve.errors import Unavailable
from rlsi.serve.texts import TextStore
from rlsi.serve.writer import Writer


@pytest.fixture
def writer(index_dir):
    index = LiveIndex.open(index_dir)
    store = TextStore(index_dir)
    w = Writer(index, store)
    yield w
    w.close()
    store.close()
    index.close()


def _hold(writer):
    """Block the writer thread until the returned event is set (the jobs queued meanwhile form one group)."""
    release, holding = threading.Event(), threading.Event()

    def wait(index):
        holding.set()
        release.wait()

    writer.call(wait)
    holding.wait()
    return release


def test_waiting_requests_are_committed_together(writer):
    release = _hold(writer)
    before = writer.commits
    futures = [writer.put([f"g{i}"], [f"grouped note {i} kiwi"]) for i in range(6)]
    futures.append(writer.delete("d0"))
    assert not any(f.done() for f in futures)  # nothing acknowledged before its commit
    release.set()
    results = [f.result() for f in futures]
    assert writer.commits == before + 1 and len({r["generation"] for r in results}) == 1
    assert results[-1]["deleted"] == 1 and all(r["added"] == 1 for r in results[:-1])
    snap = writer.index.snapshot()
    assert all(f"g{i}" in snap for i in range(6)) and "d0" not in snap
    assert writer.store.get_many(["g3", "d0"]) == {"g3": "grouped note 3 kiwi"}


def test_a_refused_request_fails_alone(writer):
    release = _hold(writer)
    good = writer.put(["ok1"], ["fine text"])
    bad = writer.put(["bad"], [42])  # the index refuses a text that is not a string
    later = writer.put(["ok2"], ["fine too"])
    release.set()
    with pytest.raises(RLSIError, match="document 0 is a int"):
        bad.result()
    assert good.result()["generation"] == later.result()["generation"]
    snap = writer.index.snapshot()
    assert "ok1" in snap and "ok2" in snap and "bad" not in snap


class _FullDisk:
    """A text store whose writes fail, as on a full disk."""

    def apply(self, changes):
        raise OSError(28, "No space left on device")


def test_a_failed_commit_acknowledges_nothing_and_drops_the_group(index_dir):
    with LiveIndex.open(index_dir) as index:
        w = Writer(index, _FullDisk())
        try:
            generation = index.generation
            futures = [w.put(["lost"], ["never stored"]), w.delete("d1")]
            for f in futures:
                with pytest.raises(Unavailable, match="the commit failed.*No space left.*retry"):
                    f.result()
            assert index.generation == generation and "lost" not in index and "d1" in index
            assert w.delete("nothing-here").result()["deleted"] == 0  # the writer goes on, its buffer empty
            index.commit()
            assert "lost" not in index and "d1" in index
        finally:
            w.close()


def test_too_many_waiting_writes_are_refused(index_dir):
    with LiveIndex.open(index_dir) as index:
        w = Writer(index, TextStore(index_dir), max_queued=2)
        release = _hold(w)
        queued = [w.put(["q1"], ["a"]), w.put(["q2"], ["b"])]
        with pytest.raises(Unavailable, match="2 write requests are waiting"):
            w.put(["q3"], ["c"])
        release.set()
        assert all(f.result()["added"] == 1 for f in queued)
        w.close()
        w.store.close()


def test_closing_commits_the_queued_writes_then_refuses(index_dir):
    index = LiveIndex.open(index_dir)
    store = TextStore(index_dir)
    w = Writer(index, store)
    release = _hold(w)
    futures = [w.put([f"late{i}"], ["queued before the stop"]) for i in range(3)]
    closer = threading.Thread(target=w.close)
    closer.start()
    wait_for(lambda: w._stopping, "the writer to stop taking jobs")
    with pytest.raises(Unavailable, match="stopping"):
        w.put(["after"], ["too late"])
    release.set()
    closer.join()
    assert all(f.result()["added"] == 1 for f in futures)
    store.close()
    index.close()
    with LiveIndex.open(index_dir) as reopened:
        assert all(f"late{i}" in reopened for i in range(3)) and "after" not in reopened


def test_a_new_model_is_refolded_between_commits_while_searches_go_on(tmp_path):
    from rlsi.models.baselines import LSI

    path = build_index(tmp_path / "idx", commits=4)
    ids, texts, vec, _ = themed()
    other = LSI(3, random_state=1).fit(vec.transform(texts))
    from rlsi.serve import SearchService

    service = SearchService(path)
    seen, errors, stop = set(), [], threading.Event()

    def searcher():
        try:
            while not stop.is_set():
                answer = service.search("rocket orbit", 5)
                seen.add(answer["model_version"])
                assert answer["hits"] and answer["hits"][0]["doc_id"] in ids
        except BaseException as exc:  # reported below
            errors.append(exc)

    thread = threading.Thread(target=searcher)
    thread.start()
    try:
        version = service.update_model(other, vec).result()
        added = [service.put([f"during{i}"], [f"rocket launch note {i}"]) for i in range(5)]
        wait_for(lambda: service.index.pending_version is None, "the re-fold to finish")
        assert all(f.result()["added"] == 1 for f in added)
    finally:
        stop.set()
        thread.join()
    assert errors == []
    assert version == 2 and service.health()["model_version"] == 2 and seen <= {1, 2}
    hits = service.search("rocket launch", 20)["hits"]
    assert {f"during{i}" for i in range(5)} <= {h["doc_id"] for h in hits}
    assert len(service.topics()["topics"]) == 3
    service.close()


def test_a_refold_left_by_a_killed_writer_is_resumed(tmp_path):
    from rlsi.models.baselines import LSI
    from rlsi.serve import SearchService

    path = build_index(tmp_path / "idx", commits=3)
    _, texts, vec, _ = themed()
    with LiveIndex.open(path) as index:
        index.update_model(LSI(2, random_state=0).fit(vec.transform(texts)), vec, refold=False)
        assert index.pending_version == 2
    service = SearchService(path)
    try:
        wait_for(lambda: service.index.pending_version is None, "the pending re-fold to finish")
        assert service.health()["model_version"] == 2
    finally:
        service.close()
