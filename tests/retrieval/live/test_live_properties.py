"""Exactness as properties: after any sequence of adds, deletes, updates, commits, merges and model
updates, every query's BM25, topic and fused scores over the committed live documents equal those of an
index built from scratch over them (a static Searcher; to 1e-12), in both search modes."""

import shutil
import tempfile

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from retrieval.live.live_helpers import QUERIES, assert_same_scores, fitted_models, random_text, static_hits

from rlsi.retrieval.live import LiveIndex, TieredMergePolicy

class LiveIndexMachine(RuleBasedStateMachine):
    """The model: ``docs`` (id -> text, what the writer holds, buffer included) and ``committed`` (what
    the last commit made visible)."""

    def __init__(self):
        super().__init__()
        self.vec, self.model, self.other = fitted_models()
        self.folder = tempfile.mkdtemp(prefix="rlsi-live-")
        # three segments of one tier merge on their own: the policy runs too
        self.index = LiveIndex.create(f"{self.folder}/idx", self.model, self.vec, alpha=0.4,
                                      merge_policy=TieredMergePolicy(segments_per_tier=3, floor_docs=4), durable=False)
        self.docs, self.committed = {}, {}
        self.next_id = 0
        self.rng = np.random.default_rng(0)

    @initialize(sizes=st.lists(st.integers(1, 4), min_size=2, max_size=3), seed=st.integers(0, 1000))
    def segments(self, sizes, seed):
        """Start from two or three committed segments (the cases a single-segment index cannot show)."""
        for n in sizes:
            self.add(n, seed + n)
            self.commit()

    def teardown(self):
        self.index.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    @rule(n=st.integers(1, 4), seed=st.integers(0, 1000), commit=st.booleans())
    def add_documents(self, n, seed, commit):
        self.add(n, seed)
        if commit:
            self.commit()

    def add(self, n, seed):
        rng = np.random.default_rng(seed)
        ids = [f"d{self.next_id + i:03d}" for i in range(n)]
        texts = [random_text(rng) for _ in ids]
        self.next_id += n
        self.index.add(texts, ids)
        self.docs.update(zip(ids, texts))

    @precondition(lambda self: self.docs)
    @rule(data=st.data())
    def delete(self, data):
        ids = data.draw(st.lists(st.sampled_from(sorted(self.docs)), min_size=1, max_size=3, unique=True))
        found = self.index.delete(ids + ["no-such-id"])
        assert found == len(ids)
        for d in ids:
            del self.docs[d]

    @precondition(lambda self: self.docs)
    @rule(data=st.data(), seed=st.integers(0, 1000))
    def update(self, data, seed):
        d = data.draw(st.sampled_from(sorted(self.docs)))
        text = random_text(np.random.default_rng(seed))
        self.index.update([text], [d])
        self.docs[d] = text

    @rule()
    def commit(self):
        self.index.commit()
        self.committed = dict(self.docs)

    @rule(max_segments=st.integers(1, 2))
    def merge(self, max_segments):
        self.index.merge(max_segments)
        self.committed = dict(self.docs)
        assert self.index.n_segments <= max_segments

    @rule()
    def new_model(self):
        self.model, self.other = self.other, self.model
        self.index.update_model(self.model, self.vec)
        self.committed = dict(self.docs)
        assert self.index.pending_version is None

    @invariant()
    def scores_equal_a_rebuild(self):
        snap = self.index.snapshot()
        assert snap.n_docs == len(self.committed)
        for q in QUERIES[1:3]:
            live = self.index.search(q, k=None)
            assert_same_scores(live, static_hits(self.committed, self.model, self.vec, q))
            live = self.index.search(q, k=None, candidates=3)
            assert_same_scores(live, static_hits(self.committed, self.model, self.vec, q, candidates=3))


TestLiveIndexExactness = LiveIndexMachine.TestCase
TestLiveIndexExactness.settings = settings(max_examples=8, stateful_step_count=8, deadline=None,
                                           suppress_health_check=list(HealthCheck))
