"""Topics born in a stream (``OnlineRLSI(birth=...)``, :mod:`rlsi.models.birth`): a planted theme that appears
halfway is born within a few mini-batches with its own terms; none is born without a new theme or on noise; ids
stay; a grown model saves, loads and goes on; a seeded stream keeps its seeds and names through a birth, and the
tracking reports label named topics."""

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.preprocessing import normalize

import rlsi.io
from rlsi.datasets.synthetic import make_corpus
from rlsi.errors import RLSIError
from rlsi.models import OnlineRLSI
from rlsi.models.birth import TopicBirth, resolve_birth
from rlsi.models.stats import TopicStatistics
from rlsi.tracking import TopicTracker

BATCH = 100
NEW = 5  # the planted topic held back until the second half


@pytest.fixture(scope="module")
def planted():
    """Six planted topics, one per document; topic 5's documents only in the second half of the stream."""
    c = make_corpus(n_docs=2400, n_terms=2000, tokens_per_doc=80, n_topics=6, topic_vocab=120, max_doc_topics=1,
                    background_share=0.3, topic_popularity_exponent=0.0, norm="l2", seed=1)
    t = c.doc_topics[:, 0]
    old, new = np.flatnonzero(t != NEW), np.flatnonzero(t == NEW)
    half = len(old) // 2
    second = np.random.default_rng(0).permutation(np.concatenate([old[half:], new]))
    order = np.concatenate([old[:half], second])
    return c, t[order], c.X[order], c.X[old], half


def stream(model, X, batch=BATCH, until=None):
    for a in range(0, X.shape[0] if until is None else until, batch):
        model.partial_fit(X[a:a + batch])
    return model


def model(**kw):
    return OnlineRLSI(5, birth=True, max_components=8, batch_size=BATCH, random_state=0, **kw)


def test_a_new_theme_is_born_within_a_few_mini_batches_with_its_terms(planted):
    c, topics, X, _, half = planted
    appears = half // BATCH  # the first mini-batch with documents of the new theme
    before = stream(model(), X, until=appears * BATCH).components_.toarray()
    m = stream(model(), X)
    assert len(m.births_) == 1 and m.n_components_ == 6 and m.components_.shape == (6, X.shape[1])
    b = m.births_[0]
    assert b["topic"] == 5 and appears <= b["batch"] <= appears + 3
    members = topics[b["documents"]]
    assert len(members) >= 10 and np.mean(members == NEW) >= 0.9  # the documents that caused it are the theme's
    row = m.components_[5].toarray().ravel()
    top = np.argsort(-row)[:10]
    assert np.mean(np.isin(top, c.topic_terms[NEW])) >= 0.8
    W = m.transform(X)
    assert W.shape == (X.shape[0], 6)
    assert np.abs(W[topics == NEW, 5]).mean() > 5 * np.abs(W[topics != NEW, 5]).mean()
    # ids never change: every topic from before the birth is still the same topic at its index
    after = m.components_[:5].toarray()
    cos = (before * after).sum(1) / np.linalg.norm(before, axis=1) / np.linalg.norm(after, axis=1)
    assert cos.min() > 0.9
    assert m.stats_.n_components == 6 and m.stats_.S.shape == (6, 6)


def test_no_birth_without_a_new_theme(planted):
    m = stream(model(), planted[3])
    assert m.births_ == [] and m.n_components_ == 5


def test_no_birth_on_pure_noise():
    noise = normalize(sp.random(2000, 2000, density=0.02, random_state=4, format="csr"))
    m = stream(model(), noise)
    assert m.births_ == [] and m.components_.shape[0] == 5


def test_birth_off_is_the_published_algorithm(planted):
    X = planted[2]
    plain = OnlineRLSI(5, batch_size=BATCH, random_state=0).fit(X)
    for off in (None, False):
        m = OnlineRLSI(5, batch_size=BATCH, random_state=0, birth=off, max_components=8).fit(X)
        assert (m.components_ != plain.components_).nnz == 0 and m.births_ == []
        np.testing.assert_array_equal(m.stats_.S, plain.stats_.S)


def test_fit_grows_too_and_max_components_caps(planted):
    X = planted[2]
    assert len(OnlineRLSI(5, birth=True, max_components=6, batch_size=BATCH, random_state=0).fit(X).births_) == 1
    capped = OnlineRLSI(5, birth=True, max_components=5, batch_size=BATCH, random_state=0).fit(X)
    assert capped.births_ == [] and capped.components_.shape[0] == 5


def test_a_grown_model_saves_loads_and_goes_on(planted, tmp_path):
    X = planted[2]
    m = stream(model(), X, until=X.shape[0] - 3 * BATCH)
    assert m.n_components_ == 6
    rlsi.io.save(tmp_path / "m", model=m)
    back = rlsi.io.load(tmp_path / "m")["model"]
    assert back.n_components_ == 6 and back.births_ == m.births_ and back.birth == m.birth
    assert (back.components_ != m.components_).nnz == 0
    np.testing.assert_array_equal(back.transform(X[:50]), m.transform(X[:50]))
    for a in range(X.shape[0] - 3 * BATCH, X.shape[0], BATCH):
        m.partial_fit(X[a:a + BATCH])
        back.partial_fit(X[a:a + BATCH])
    assert back.n_components_ == m.n_components_ == 6
    np.testing.assert_array_equal(back.components_.toarray(), m.components_.toarray())


def test_a_seeded_stream_keeps_its_seeds_through_a_birth(planted, tmp_path):
    c, _, X, _, _ = planted
    words = sorted(int(t) for t in c.topic_terms[2][:3])  # three words of planted theme 2 seed topic 0
    m = stream(model(seed_terms={"second": words}), X, until=X.shape[0] - 3 * BATCH)
    assert [b["topic"] for b in m.births_] == [5]
    assert m.topic_names_ == ["second", None, None, None, None, None] and m.seed_terms_ == [words]
    C = m.components_.toarray()
    assert np.all(C[0, words] > 0) and np.all(np.isin(np.argsort(-C[0])[:10], c.topic_terms[2]))
    assert np.mean(np.isin(np.argsort(-C[5])[:10], c.topic_terms[NEW])) >= 0.8
    rlsi.io.save(tmp_path / "m", model=m)
    back = rlsi.io.load(tmp_path / "m")["model"]
    assert back.topic_names_ == m.topic_names_ and back.seed_terms_ == m.seed_terms_
    for a in range(X.shape[0] - 3 * BATCH, X.shape[0], BATCH):  # the grown stream's seeded rows go on the same
        m.partial_fit(X[a:a + BATCH])
        back.partial_fit(X[a:a + BATCH])
    np.testing.assert_array_equal(back.components_.toarray(), m.components_.toarray())
    assert np.all(back.components_.toarray()[0, words] > 0) and back.topic_names_ == m.topic_names_


def test_settings_are_named_values():
    assert resolve_birth(None) is None and resolve_birth(False) is None
    assert resolve_birth(True) == TopicBirth() and resolve_birth({"persist": 3}).persist == 3
    with pytest.raises(RLSIError, match="residual"):
        TopicBirth(residual=2.0)
    with pytest.raises(RLSIError, match="no field 'bogus'"):
        resolve_birth({"bogus": 1})
    with pytest.raises(RLSIError, match="birth="):
        OnlineRLSI(3, birth="yes").fit(sp.random(20, 10, density=0.3, random_state=0, format="csr"))
    with pytest.raises(RLSIError, match="max_components=2 is less than n_components=3"):
        OnlineRLSI(3, birth=True, max_components=2).fit(sp.random(20, 10, density=0.3, random_state=0, format="csr"))


def test_statistics_add_decoupled_topics():
    st = TopicStatistics(2, 3)
    st.update(sp.csr_matrix(np.eye(3)[:2]), np.array([[1.0, 2.0], [3.0, 4.0]]))
    st.rescale(0.5)
    R_before = st.R.copy()
    st.add_topics([[7.0]], np.array([[1.0], [0.0], [2.0]]))
    assert st.n_components == 3
    np.testing.assert_array_equal(st.S, [[5.0, 7.0, 0.0], [7.0, 10.0, 0.0], [0.0, 0.0, 7.0]])
    np.testing.assert_allclose(st.R, np.column_stack([R_before, [1.0, 0.0, 2.0]]))


def _tracker_with_a_birth(last):
    """A tracker of two topics over segments a and b, topic 3 born in b (from doc7, doc9); ``last``: the three
    topics' rows at the end of b."""
    tr = TopicTracker(2, n_top_terms=2)
    X = sp.csr_matrix(np.eye(3))
    tr.observe(X, np.ones((3, 2)), "a")
    tr.snapshot(sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1.0, 0]])), ["x", "y", "z"])
    tr.observe(X, np.ones((3, 2)), "b")
    tr.born(2, "b", ["doc7", "doc9"], batch=1)
    tr.snapshot(sp.csr_matrix(last), ["x", "y", "z"])
    return tr


def test_tracker_grows_with_a_birth():
    tl = _tracker_with_a_birth(np.eye(3)).timeline
    assert tl.n_components == 3 and tl.shares.shape == (2, 3)
    assert tl.life == [[1, 1, 0], [1, 1, 1]] and tl.alive[0][2] is False and tl.top_terms[0][2] == []
    assert tl.events == [{"topic": 2, "kind": "born", "segment": "b", "life": 1, "documents": ["doc7", "doc9"],
                          "batch": 1}]
    assert "T3 born at b (mini-batch 1) from 2 documents no topic explained: doc7, doc9" in tl.to_text()
    assert tl.to_csv().splitlines()[0] == "segment,docs,T1,T2,T3"


def test_named_topics_carry_their_names_in_every_report():  # seed words' names (rlsi.models.seeds)
    from rlsi.explorer.tracking import tracking_data

    tr = _tracker_with_a_birth(np.diag([0.0, 1.0, 1.0]))  # topic 1 dies in b
    with pytest.raises(RLSIError, match="2 topic names for 3 topics"):
        tr.name_topics(["hockey", None])
    tr.name_topics(["hockey", None, None])  # a model's topic_names_: None for the unseeded and the born
    tl = tr.timeline
    assert [tl.label(k) for k in range(3)] == ["T1 [hockey]", "T2", "T3"]
    text, md = tl.to_text(), tl.to_markdown()
    assert text.startswith("T1 [hockey]\n") and "T1 [hockey] died at b (all weights zero)" in text
    assert "T3 born at b (mini-batch 1)" in text
    assert "| segment | docs | T1 [hockey] | T2 | T3 |" in md and "### T1 [hockey]" in md
    assert json.loads(json.dumps(tl.to_dict()))["names"] == ["hockey", None, None]
    assert tracking_data(tl)["names"] == ["hockey", None, None]
    assert tl.to_csv().splitlines()[0] == "segment,docs,T1,T2,T3"  # the CSV's columns stay the ids
    tr.name_topics([None, None, None])
    assert tl.names is None and tl.label(0) == "T1" and tracking_data(tl)["names"] is None


def test_a_dead_seeded_topic_waits_on_its_words_for_its_theme(planted):
    """``reseed_dead`` with seed words: a seeded topic whose words the stream has not brought yet starts again on
    them after each mini-batch (its name kept), not on another theme's documents; it takes its theme when it
    arrives."""
    c, _, X, _, half = planted
    until = (half // BATCH) * BATCH
    words = [int(t) for t in c.topic_terms[NEW] if X[:until, [int(t)]].nnz == 0]  # the new theme's words that the
    assert len(words) >= 2                                                         # first part never holds
    m = OnlineRLSI(5, reseed_dead=True, seed_terms={"late": words}, batch_size=BATCH, random_state=0)
    stream(m, X, until=until)
    C = m.components_.toarray()
    assert m.n_reseeded_ > 0 and set(np.flatnonzero(C[0])) <= set(words)  # dead, or on its words: nothing else
    assert np.all([np.count_nonzero(C[k]) > 0 for k in range(1, 5)])
    stream(m, X[until:])
    top = np.argsort(-m.components_.toarray()[0])[:10]
    assert m.topic_names_[0] == "late" and np.mean(np.isin(top, c.topic_terms[NEW])) >= 0.8
