"""Readers and one writer in one process: searches on several threads while a thread adds, deletes,
merges and re-folds. Every search sees one whole commit (a family of documents added, or deleted, in one
commit is found whole or not at all), generations never go back, and a second writer is refused while the
first one holds the index."""

import threading
import time

import pytest

from rlsi.retrieval.live import IndexLockedError, LiveIndex, TieredMergePolicy

FAMILY = 3
FAMILIES = 16  # commits of the writer (plus deletes, merges and a re-fold among them)


def _family(k):
    ids = [f"f{k:04d}-{i}" for i in range(FAMILY)]
    return ids, [f"heart books zqfam{k} blood" for _ in ids]


def test_searches_see_whole_commits_while_a_writer_works(tmp_path, fitted):
    vec, model_a, model_b = fitted
    index = LiveIndex.create(tmp_path / "idx", model_a, vec, alpha=0.4, durable=False,
                             merge_policy=TieredMergePolicy(segments_per_tier=4, floor_docs=4))
    state = {"families": 0, "deleted": set(), "stop": False}
    errors = []

    def writer():
        try:
            for k in range(FAMILIES):
                ids, texts = _family(k)
                index.add(texts, ids)
                index.commit()
                state["families"] = k + 1
                if k % 5 == 4:  # delete a whole earlier family in one commit
                    index.delete(_family(k - 3)[0])
                    index.commit()
                    state["deleted"].add(k - 3)
                if k % 7 == 6:
                    index.merge(2)
                if k == 10:
                    index.update_model(model_b, vec, background=True)
            index.wait_refold()
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            state["stop"] = True

    def reader(seed):
        try:
            last_gen = -1
            k = seed
            while not state["stop"]:
                snap = index.snapshot()
                assert snap.generation >= last_gen, "a reader went back in time"
                last_gen = snap.generation
                n = state["families"]
                if n == 0:
                    continue
                k = (k * 31 + 7) % n
                hits = snap.search(f"zqfam{k}", k=10, alpha=0.5 if snap.model is not None else 0.0)
                found = {h.doc_id for h in hits if h.term_score > 0}
                assert len(found) in (0, FAMILY), f"generation {snap.generation}: {sorted(found)} of family {k}"
                assert all(h.topics for h in hits if h.topic_score != 0)
                time.sleep(0.001)  # a server's readers wait for their clients too
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader, args=(s,)) for s in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[0]
    assert index.model_version == 2 and state["families"] == FAMILIES
    snap = index.snapshot()
    for k in range(state["families"]):  # every committed family is there, every deleted one gone
        ids, _ = _family(k)
        assert all((d in snap) == (k not in state["deleted"]) for d in ids)
    index.close()


def test_two_writer_objects_on_one_folder(tmp_path, fitted):
    vec, model, _ = fitted
    first = LiveIndex.create(tmp_path / "idx", model, vec, durable=False)
    first.add(["books"], ["a"])
    second = LiveIndex.open(tmp_path / "idx")
    with pytest.raises(IndexLockedError):
        second.delete(["a"])
    assert second.search("books") == []  # reading needs no lock
    first.commit()
    assert second.refresh() and "a" in second
    first.close()
    second.close()
