"""The live index's behaviour: visibility at commit, ids, deletes and updates, merges, reopening, model
versions (a ranking never mixes two), vectorised documents, and the refusals (one line, nothing changed)."""

import json
import os

import numpy as np
import pytest
import scipy.sparse as sp
from retrieval.live.live_helpers import QUERIES, assert_same_scores, static_hits

import rlsi.io
from rlsi.errors import ModelFormatError, RLSIError
from rlsi.io.kinds import folder_kind
from rlsi.models.baselines import LSI
from rlsi.retrieval.live import IndexLockedError, LiveIndex, TieredMergePolicy
from rlsi.retrieval.term import BM25

TEXTS = {"a1": "aircraft wing flutter", "a2": "jet engine noise aircraft", "h1": "heart blood pressure",
         "h2": "cardiac valve heart", "l1": "library books catalog", "l2": "reading shelf books books"}


@pytest.fixture
def index(tmp_path, fitted):
    vec, model, _ = fitted
    idx = LiveIndex.create(tmp_path / "idx", model, vec, alpha=0.4, merge_policy=False, durable=False)
    idx.add(list(TEXTS.values())[:3], list(TEXTS)[:3])
    idx.commit()
    idx.add(list(TEXTS.values())[3:], list(TEXTS)[3:])
    idx.commit()
    yield idx
    idx.close()


def test_scores_equal_a_static_index_built_from_scratch(index, fitted):
    vec, model, _ = fitted
    assert index.n_segments == 2 and len(index) == 6
    for q in QUERIES:
        assert_same_scores(index.search(q, k=None), static_hits(TEXTS, model, vec, q))
        assert_same_scores(index.search(q, k=None, candidates=2), static_hits(TEXTS, model, vec, q, candidates=2))


def test_bm25_equals_the_reference_formula_bit_for_bit(index, fitted):
    vec, _, _ = fitted
    ids = sorted(TEXTS)
    ref = BM25().fit(vec.transform_counts([TEXTS[i] for i in ids])).score(vec.transform_counts(["books heart"]))[0]
    got = {h.doc_id: h.term_score for h in index.search("books heart", k=None, alpha=0.0)}
    assert [got[i] for i in ids] == list(ref)


def test_documents_are_invisible_until_the_commit(index):
    index.add(["books books catalog"], ["l3"])
    assert "l3" not in index and len(index) == 6
    gen = index.generation
    index.commit()
    assert "l3" in index and len(index) == 7 and index.generation == gen + 1
    assert index.commit() == gen + 1  # nothing to commit: no new generation


def test_an_id_is_added_once(index):
    with pytest.raises(RLSIError, match="already in the index"):
        index.add(["x"], ["a1"])
    index.add(["books"], ["n1"])
    with pytest.raises(RLSIError, match="already in the index"):
        index.add(["books"], ["n1"])
    with pytest.raises(RLSIError, match="duplicate"):
        index.add(["x", "y"], ["n2", "n2"])


def test_deletes_leave_the_statistics_exact(index, fitted):
    vec, model, _ = fitted
    assert index.delete(["a1", "h2", "nope"]) == 2
    assert "a1" in index  # until the commit
    index.commit()
    live = {k: v for k, v in TEXTS.items() if k not in ("a1", "h2")}
    assert "a1" not in index and len(index) == 4
    for q in QUERIES:
        assert_same_scores(index.search(q, k=None), static_hits(live, model, vec, q))


def test_update_replaces_a_document_in_one_commit(index, fitted):
    vec, model, _ = fitted
    index.update(["heart heart artery"], ["l1"])
    index.update(["books shelf"], ["new"])  # an id not in the index is added
    index.commit()
    docs = dict(TEXTS, l1="heart heart artery", new="books shelf")
    for q in QUERIES:
        assert_same_scores(index.search(q, k=None), static_hits(docs, model, vec, q))


def test_rollback_drops_the_uncommitted_changes_only(index, fitted):
    vec, model, _ = fitted
    gen = index.generation
    index.add(["jet jet wing zqnew"], ["r1"])
    index.delete(["a1", "h1"])
    assert index.rollback() == 3
    assert index.commit() == gen and "r1" not in index and "a1" in index
    index.add(["books catalog"], ["r2"])  # the writer goes on from the last commit
    index.commit()
    for q in QUERIES:
        assert_same_scores(index.search(q, k=None), static_hits(dict(TEXTS, r2="books catalog"), model, vec, q))


def test_a_document_deleted_before_its_commit_never_appears(index):
    index.add(["books"], ["tmp"])
    assert index.delete(["tmp"]) == 1
    index.commit()
    assert "tmp" not in index and len(index) == 6


def test_deleting_every_document_of_a_segment_drops_it(index):
    index.delete(["a1", "a2", "h1"])
    index.commit()
    assert index.n_segments == 1 and len(index) == 3


def test_merge_drops_deleted_documents_and_keeps_every_score(index, fitted, tmp_path):
    vec, model, _ = fitted
    index.delete(["h1"])
    index.commit()
    before = {q: index.search(q, k=None) for q in QUERIES}
    index.merge()
    assert index.n_segments == 1 and index.stats()["segments"][0]["deleted"] == 0
    for q in QUERIES:
        assert_same_scores(index.search(q, k=None), before[q], tol=0.0)
    names = {n.split(".")[0] for n in os.listdir(index.path) if n.startswith("seg-")}
    assert len(names) == 1  # the merged segments' files are gone


def test_the_merge_policy_merges_a_full_tier(tmp_path, fitted):
    vec, model, _ = fitted
    idx = LiveIndex.create(tmp_path / "p", model, vec, merge_policy=TieredMergePolicy(segments_per_tier=3),
                           durable=False)
    for i in range(3):
        idx.add(["books heart"], [f"d{i}"])
        assert idx.commit() and idx.n_segments == (i + 1 if i < 2 else 1)
    idx.close()


def test_tiered_policy_groups_similar_sizes_and_rewrites_deleted_segments():
    p = TieredMergePolicy(segments_per_tier=3, tier_ratio=10, floor_docs=10, max_deleted_share=0.5)
    segs = [("a", 5, 5), ("b", 6, 6), ("c", 7, 7), ("d", 500, 500), ("e", 40, 100)]
    assert p.select(segs) == [["a", "b", "c"], ["e"]]
    assert p.select(segs[:2] + segs[3:4]) == []
    with pytest.raises(RLSIError):
        TieredMergePolicy(segments_per_tier=1)


def test_a_reopened_index_searches_as_before_and_a_reader_sees_new_commits(index):
    before = index.search("heart books", k=None)
    reader = LiveIndex.open(index.path)
    assert reader.search("heart books", k=None) == before
    index.add(["heart books"], ["z"])
    index.commit()
    assert "z" not in reader
    assert reader.refresh() and "z" in reader and reader.generation == index.generation
    assert not reader.refresh()
    reader.close()


def test_a_snapshot_is_a_point_in_time_view(index):
    snap = index.snapshot()
    index.delete(["l1"])
    index.add(["books"], ["n"])
    index.commit()
    assert "l1" in snap and "n" not in snap and "l1" not in index.snapshot()


def test_empty_and_unknown_queries_return_nothing(index):
    assert index.search("", k=5) == [] and index.search("the of and", k=5) == []
    assert index.search("zzzunknown", k=5) == []


def test_new_terms_are_found_before_any_model_knows_them(index, fitted):
    index.add(["zeppelin airship aircraft"], ["z1"])
    index.commit()
    hits = index.search("zeppelin", k=3)
    assert [h.doc_id for h in hits][:1] == ["z1"] and hits[0].term_score > 0


def test_hits_explain_their_topics(index):
    hit = index.search("heart blood", k=1)[0]
    assert hit.topics and all(isinstance(t, int) for t, _ in hit.topics)
    assert sum(c for _, c in hit.topics) == pytest.approx(hit.topic_score, abs=0.05)
    assert index.snapshot().document("h1")["topics"] and index.snapshot().document("nope") is None


def test_alpha_per_query_and_for_the_process(index):
    term_only = index.search("heart", k=3, alpha=0.0)
    assert all(h.score == pytest.approx(h.term_score / term_only[0].term_score) for h in term_only)
    index.alpha = 1.0
    assert index.search("heart", k=1)[0].score == pytest.approx(1.0)
    with pytest.raises(RLSIError, match="alpha"):
        index.search("heart", alpha=1.5)


def test_update_model_switches_every_segment_at_once(index, fitted):
    vec, old, new = fitted
    assert index.model_version == 1
    index.add(["heart books"], ["x1"])
    index.commit()
    version = index.update_model(new, vec, background=False)
    assert version == 2 and index.model_version == 2 and index.pending_version is None
    docs = dict(TEXTS, x1="heart books")
    for q in QUERIES:
        assert_same_scores(index.search(q, k=None), static_hits(docs, new, vec, q))
    assert not [n for n in os.listdir(index.path) if "-v1." in n]  # version 1's files are gone


def test_during_a_refold_every_query_uses_the_old_version(index, fitted):
    vec, old, new = fitted
    assert index.update_model(new, vec, refold=False) == 2
    assert index.pending_version == 2 and index.model_version == 1
    index.add(["heart books"], ["x1"])  # new documents get vectors of both versions
    index.commit()
    assert index.refold(max_segments=1) == 1  # of the two segments made before the new version
    docs = dict(TEXTS, x1="heart books")
    for q in QUERIES:  # half re-folded: still the old model for query and documents alike
        assert_same_scores(index.search(q, k=None), static_hits(docs, old, vec, q))
    reopened = LiveIndex.open(index.path)
    assert reopened.pending_version == 2 and reopened.model_version == 1
    reopened.close()
    assert index.refold() == 0 and index.model_version == 2
    for q in QUERIES:
        assert_same_scores(index.search(q, k=None), static_hits(docs, new, vec, q))


def test_background_refold_runs_beside_searches(index, fitted):
    vec, old, new = fitted
    index.update_model(new, vec, background=True)
    while index.model_version != 2:
        assert index.search("heart", k=2)
    index.wait_refold()
    assert index.pending_version is None


def test_a_model_with_another_tokenizer_or_a_group_model_is_refused(index, fitted):
    from rlsi.models import GroupRLSI
    from rlsi.text import TfidfVectorizer

    vec, _, new = fitted
    other = TfidfVectorizer(stop_words=None).fit(list(TEXTS.values()))
    with pytest.raises(RLSIError, match="tokenizes differently"):
        index.update_model(LSI(2).fit(other.transform(list(TEXTS.values()))), other)
    with pytest.raises(RLSIError, match="group model"):
        index.update_model(GroupRLSI(2, 1), vec)
    assert index.model_version == 1


def test_vectorised_documents_without_a_vectorizer(tmp_path):
    rng = np.random.default_rng(1)
    C = sp.random(30, 12, density=0.3, random_state=2, format="csr")
    C.data = np.ceil(C.data * 4)
    idf = np.log(30 / np.maximum(1, (C > 0).sum(axis=0).A1))

    def weigh(counts, lengths):
        return sp.csr_matrix(counts.multiply(idf[: counts.shape[1]]))

    model = LSI(3).fit(weigh(C, None))
    idx = LiveIndex.create(tmp_path / "v", model, None, weigh=weigh, merge_policy=False, durable=False)
    idx.add_vectors(C[:20], [f"v{i}" for i in range(20)], tfidf=weigh(C[:20], None))
    idx.commit()
    idx.add_vectors(C[20:], [f"v{i}" for i in range(20, 30)])  # its tf-idf from weigh
    idx.commit()
    q = sp.csr_matrix(([1.0, 2.0], ([0, 0], [3, 7])), shape=(1, 12))
    hits = idx.search_vectors(q, weigh(q, None), k=None)[0]
    ids = [f"v{i}" for i in range(30)]
    ref_term = BM25().fit(C).score(q)[0]
    got = {h.doc_id: h.term_score for h in hits}
    assert np.allclose([got[i] for i in ids], ref_term, atol=1e-12, rtol=0)
    with pytest.raises(RLSIError, match="vectorised"):
        idx.search("text")
    idx.close()
    assert rng is not None


def test_a_second_writer_is_refused_with_one_line(index, tmp_path):
    other = LiveIndex.open(index.path)
    with pytest.raises(IndexLockedError, match="another writer") as err:
        other.add(["books"], ["w"])
    assert "\n" not in str(err.value)
    other.close()
    index.close()
    again = LiveIndex.open(index.path)  # the lock goes with its holder
    again.add(["books"], ["w"])
    again.commit()
    again.close()


def test_the_folder_is_a_live_model_folder_no_other_writer_replaces(index, fitted):
    vec, model, _ = fitted
    assert folder_kind(index.path) == "live"
    bundle = rlsi.io.load(index.path, only=["model", "vectorizer"])
    assert bundle["model"].components_.shape == model.components_.shape
    with pytest.raises(RLSIError, match="live search index"):
        rlsi.io.save(index.path, model=model, vectorizer=vec)
    assert len(LiveIndex.open(index.path)) == 6


def test_orphans_of_a_killed_writer_are_removed_by_the_next_writer(index):
    path = index.path
    index.close()
    (path / "seg-000099.tf.npy").write_bytes(b"half")
    (path / ".manifest.json.tmp-host-1-abcdef12").write_text("{")
    (path / "notes.txt").write_text("mine")
    idx = LiveIndex.open(path)
    idx.delete(["a1"])
    assert not (path / "seg-000099.tf.npy").exists() and (path / "notes.txt").exists()
    assert not list(path.glob(".manifest.json.tmp-*"))
    idx.close()


def test_a_damaged_file_is_refused_at_open(index):
    path = index.path
    index.close()
    f = path / "seg-000001.tf.npy"
    data = bytearray(f.read_bytes())
    data[-1] ^= 0x01
    f.write_bytes(bytes(data))
    with pytest.raises(ModelFormatError, match="checksum"):
        LiveIndex.open(path)


@pytest.mark.parametrize("edit", [
    lambda m: m["live"].update(generation=-1),
    lambda m: m["live"]["segments"][0].update(name="../x"),
    lambda m: m["live"]["segments"][0]["files"]["rows"].update(file="/etc/passwd"),
    lambda m: m["live"].update(model_version=7),
    lambda m: m["live"]["params"].update(term_model="vsm"),
    lambda m: m["live"]["vocabulary"].update(bytes=10**12),
])
def test_a_damaged_manifest_is_refused_with_one_line(index, edit):
    path = index.path
    index.close()
    manifest = json.loads((path / "manifest.json").read_text())
    edit(manifest)
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError) as err:
        LiveIndex.open(path)
    assert "\n" not in str(err.value)


def test_create_refuses_a_folder_in_use(tmp_path, fitted):
    vec, model, _ = fitted
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(RLSIError, match="not an empty folder"):
        LiveIndex.create(tmp_path / "full", model, vec)


@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_the_cached_gram_and_plan_fold_as_the_models_own_transform(penalty):
    from conftest import planted_corpus

    from rlsi.models import BatchRLSI
    from rlsi.retrieval.live.models import _fold_with_gram, _own_fold_gram

    from rlsi.kernels.products import sparse_plan

    X = planted_corpus(n_docs=60)
    model = BatchRLSI(3, doc_penalty=penalty, max_iter=2, random_state=0).fit(X)
    plan = sparse_plan(model.topics_, X.dtype, X.has_sorted_indices)
    assert np.array_equal(_fold_with_gram(model, X[:9], _own_fold_gram(model), plan), model.transform(X[:9]))
    assert _own_fold_gram(LSI(2).fit(X)) is None  # other models fold by their own transform


def test_best_candidates_break_ties_by_id_descending():
    from rlsi.retrieval.live.snapshot import _best

    rng = np.random.default_rng(3)
    for _ in range(50):
        m = int(rng.integers(1, 40))
        scores = rng.integers(0, 4, size=m).astype(float)
        ids = np.array([f"d{i:02d}" for i in rng.permutation(m)])
        n = int(rng.integers(1, 45))
        ref = set(np.lexsort((ids, scores))[::-1][:n].tolist())  # score descending, then id descending
        assert set(_best(scores, ids, n).tolist()) == ref
