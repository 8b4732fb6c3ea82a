"""Topic tracking: shares (§8.2.3), top terms, dead/reborn topics, reports and plots."""

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from rlsi.errors import RLSIError
from rlsi.models import BatchRLSI
from rlsi.models.online import OnlineRLSI
from rlsi.text.stream import StreamingTfidf
from rlsi.tracking import TopicTracker, segments, track


def test_shares_and_top_terms():
    tr = TopicTracker(2, n_top_terms=2)
    X = sp.csr_matrix(np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 2.0]]))
    W = np.array([[1.0, -2.0], [5.0, 5.0], [0.5, 0.0]])
    tr.observe(X[:2], W[:2], "p1")
    tr.observe(X[2:], W[2:], "p1")
    C = sp.csr_matrix(np.array([[0.5, -0.25, 0.25], [-1.0, -3.0, 0.0]]))
    tr.snapshot(C, ["x", "y", "z", "extra"])
    tl = tr.timeline
    # share = Σ |v_k| / ‖d‖₂ over documents (the empty document counts in n_docs, adds nothing)
    np.testing.assert_allclose(tl.shares[0], [1 / 5 + 0.5 / 2, 2 / 5])
    assert tl.n_docs == [3]
    np.testing.assert_allclose(tl.share_fraction()[0], np.array([0.45, 0.4]) / 0.85)
    np.testing.assert_allclose(tl.share_per_doc()[0], np.array([0.45, 0.4]) / 3)
    # normalised weights u / ‖u‖₁, largest |u| first; a negative-dominated topic is shown flipped
    assert tl.top_terms[0][0] == [("x", 0.5), ("y", -0.25)]
    assert tl.top_terms[0][1] == [("y", 0.75), ("x", 0.25)]
    with pytest.raises(RLSIError, match="open"):
        tr.snapshot(C, ["x", "y", "z"])


def test_dead_and_reborn_topics_are_reported_as_new_lives():
    tr = TopicTracker(2)
    X, W = sp.csr_matrix(np.ones((1, 3))), np.ones((1, 2))
    alive = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 1.0]]))
    dead1 = sp.csr_matrix(np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 1.0]]))
    same = sp.csr_matrix(np.array([[1.0, 2.1, 0.0], [0.0, 1.0, 1.0]]))
    other = sp.csr_matrix(np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 1.0]]))
    reborn_other = sp.csr_matrix(np.array([[0.0, 0.0, 5.0], [0.0, 1.0, 1.0]]))
    for seg, C in zip("abcde", [alive, dead1, same, other, reborn_other]):
        tr.observe(X, W, seg)
        tr.snapshot(C, ["u", "v", "w"])
    tl = tr.timeline
    assert [row[0] for row in tl.alive] == [True, False, True, False, True]
    assert [row[0] for row in tl.life] == [1, 1, 2, 2, 3]
    kinds = [(e["kind"], e["segment"]) for e in tl.events]
    assert kinds == [("died", "b"), ("reborn", "c"), ("died", "d"), ("reborn", "e")]
    assert tl.events[1]["similarity"] > 0.99 and tl.events[3]["similarity"] == 0.0
    assert tl.label(0) == "T1.3" and tl.label(1) == "T2"
    # drift: 1 - cosine with the previous snapshot; none at the first, while dead and at a rebirth
    assert [row[0] for row in tl.drift] == [None, None, None, None, None]
    assert [row[1] for row in tl.drift] == [None, 0.0, 0.0, 0.0, 0.0]
    text = tl.to_markdown()
    assert "T1 reborn at c as T1.2" in text and "similar to its former self" in text
    assert "about something else" in text and "(dead)" in text
    with pytest.raises(RLSIError, match="already closed"):
        tr.observe(X, W, "a")


def _themes_stream(n_months=8, per_month=60, n_themes=3, w=12, start=4, p_new=0.4, seed=0):
    """Documents of ``n_themes`` disjoint themes (6 of 12 words each); from month ``start`` on, a share
    ``p_new`` of the documents are about a new theme with its own words (columns n_themes*w ...)."""
    rng = np.random.default_rng(seed)
    rows, cols, vals, labels = [], [], [], []
    for d in range(n_months * per_month):
        month = d // per_month
        themes = [n_themes] if month >= start and rng.random() < p_new else \
            rng.choice(n_themes, size=rng.integers(1, 3), replace=False)
        for t in themes:
            words = t * w + rng.choice(w, size=6, replace=False)
            rows += [d] * 6
            cols += list(words)
            vals += list(rng.uniform(0.5, 1.5, 6))
        labels.append(f"2000-{month + 1:02d}")
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n_months * per_month, (n_themes + 1) * w))
    return X, labels


@pytest.mark.parametrize("seed", [0, 1])
def test_a_planted_topic_rises_at_the_period_it_appears(tmp_path, seed):
    """A model of 3 themes with one spare (dead) topic; a new theme appears in month 5. With
    ``reseed_dead`` the spare topic takes it, and the tracker shows its share rising in month 5."""
    warm, _ = _themes_stream(n_months=3, p_new=0.0, seed=100 + seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        base = BatchRLSI(3, lambda1=10, random_state=seed, max_iter=30).fit(warm).components_
    init = sp.vstack([base, sp.csr_matrix((1, base.shape[1]))], format="csr")
    X, labels = _themes_stream(seed=seed)
    names = [f"w{j}" for j in range(X.shape[1])]
    model = OnlineRLSI(4, lambda1=10, rho=1.0, n_inner=2, topic_init=init, reseed_dead=True, random_state=seed)
    tl = track(model, ((X[a:b], s) for a, b, s in segments(X.shape[0], 20, labels=labels)), feature_names=names)
    assert tl.segments == [f"2000-{m:02d}" for m in range(1, 9)]
    comp = np.abs(model.components_.toarray())
    k = int(np.argmax(comp[:, 36:].sum(axis=1)))
    assert comp[k, 36:].sum() > 0.9 * comp[k].sum()  # a topic of the new theme
    f = tl.share_fraction()[:, k]
    assert f[:4].max() < 0.02 and f[4:].min() > 0.2
    assert int(np.argmax(np.diff(f))) + 1 == 4  # the rise is at 2000-05
    assert tl.rising(1)[0][:2] == (k, 4)
    assert all(t in {f"w{j}" for j in range(36, 48)} for t, _ in tl.top_terms[-1][k][:5])
    # reports and plots
    md = tl.to_markdown(n_terms=3)
    assert "rises by" in md and "2000-05" in md
    json.dumps(tl.to_dict())
    assert tl.to_csv().count("\n") == 9
    assert tl.to_text().startswith("T1")
    for path in (tl.plot(tmp_path / "shares.png"), tl.plot_topic(tmp_path / "t.png", k)):
        assert path.stat().st_size > 5000 and path.read_bytes()[:4] == b"\x89PNG"


def test_track_with_a_growing_vocabulary():
    texts = (["apple banana cherry fruit"] * 20 + ["engine wheel brake car"] * 20 +
             ["apple fruit juice smoothie"] * 10 + ["car engine electric battery"] * 10)
    labels = ["1"] * 40 + ["2"] * 20
    order = np.random.default_rng(0).permutation(40).tolist() + list(range(40, 60))
    texts, labels = [texts[i] for i in order], [labels[i] for i in order]
    vec = StreamingTfidf(idf="fixed", norm=None)
    model = OnlineRLSI(2, lambda1=0.5, rho=1.0, n_inner=3, random_state=0)
    batches = ((vec.partial_fit_transform(texts[a:b]), s) for a, b, s in segments(60, 10, labels=labels))
    tl = track(model, batches, feature_names=lambda: vec.feature_names_, n_top_terms=4)
    assert tl.segments == ["1", "2"] and tl.n_docs == [40, 20]
    assert model.n_features_in_ == len(vec.feature_names_) == 12
    late = {t for topic in tl.top_terms[1] for t, _ in topic}
    assert late & {"juice", "smoothie", "electric", "battery"}


def test_drift_is_one_minus_the_cosine_between_snapshots():
    tr = TopicTracker(1)
    X, W = sp.csr_matrix(np.ones((1, 3))), np.ones((1, 1))
    states = [np.array([[1.0, 0.0, 0.0]]), np.array([[1.0, 1.0, 0.0]]), np.array([[0.0, 0.0, -2.0]])]
    for seg, C in zip("abc", states):
        tr.observe(X, W, seg)
        tr.snapshot(sp.csr_matrix(C), ["u", "v", "w"])
    drift = [row[0] for row in tr.timeline.drift]
    assert drift[0] is None
    assert drift[1] == pytest.approx(1 - 1 / np.sqrt(2)) and drift[2] == pytest.approx(1.0)
    assert json.loads(json.dumps(tr.timeline.to_dict()))["drift"] == [[None], [drift[1]], [drift[2]]]


def test_plot_labels_show_small_weights_with_their_digits():
    from rlsi.tracking.plots import weight_label

    assert weight_label(0.0042) == "0.0042" and weight_label(0.21) == "0.21" and weight_label(-0.0031) == "0.0031-"
    assert weight_label(0.5) != "0.00" and weight_label(0.001) != "0.00"


def test_report_weights_keep_their_significant_digits():
    """A dense topic's top weights (thousands of terms share the mass) print with their digits, not as 0.000."""
    from types import SimpleNamespace

    from rlsi.tracking.report import terms_text

    tl = SimpleNamespace(top_terms=[[[("oil", 0.0042), ("opec", 0.00041), ("gas", -0.0031)]]], alive=[[True]])
    assert terms_text(tl, 0, 0, 3) == "oil 0.0042, opec 0.00041, gas -0.0031"
    assert terms_text(tl, 0, 0, 3, weights=False) == "oil, opec, -gas"
