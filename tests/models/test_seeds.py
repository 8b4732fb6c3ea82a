"""Seed words (guided topics): the weighted-ℓ1 U-step against the plain-numpy oracle, the start, the labels,
the checks, and fits without seeds unchanged bit for bit."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from rlsi import io
from rlsi.errors import RLSIError
from rlsi.models import BatchRLSI, OnlineRLSI
from rlsi.models.penalties import SolverSettings
from rlsi.models.seeds import SeedTerms, SeedTermsWarning, resolve_seed_terms
from rlsi.oracle.seeds import batch_rlsi_weighted, weighted_lasso_row

from conftest import planted_corpus

NAMES = [f"t{i}" for i in range(120)]
SEEDS = {"first": ["t0", "t1"], "third": ["t30", "t31", "t32"]}


def _oracle_problem(seed=1):
    rng = np.random.default_rng(seed)
    X = sp.random(25, 40, density=0.3, random_state=seed, format="csr")
    V0 = rng.standard_normal((25, 5)) * 0.3
    return X, V0


def _weights(seeds, M):
    w = np.ones((M, seeds.n_components))
    for k, group in enumerate(seeds.groups):
        w[group, k] = 1.0 - seeds.strength
    return w


@pytest.mark.parametrize("positive", [False, True])
def test_seeded_rows_match_the_weighted_oracle(positive):
    rng = np.random.default_rng(0)
    K = 6
    A = rng.standard_normal((30, K))
    S = A.T @ A
    seeds = SeedTerms((np.array([1, 4]), np.array([4, 7]), np.array([2])), K, 0.8)
    R = rng.standard_normal((len(seeds.rows), K)) * 3
    U = seeds.solve(R, S, 4.0, None, SolverSettings(5000, 1e-13), positive=positive)
    W = seeds.weights()
    for i in range(len(R)):
        expected = weighted_lasso_row(S, R[i], 4.0, W[i], max_iter=5000, tol=1e-13, positive=positive)
        np.testing.assert_allclose(U[i], expected, atol=1e-9)
    assert np.any(U != 0) and np.any(U == 0)  # the thresholds matter on this problem
    # the weights change the solution: the plain lasso differs on a seeded pair
    plain = [weighted_lasso_row(S, r, 4.0, np.ones(K), max_iter=5000, tol=1e-13, positive=positive) for r in R]
    assert not np.allclose(plain, U)


@pytest.mark.parametrize("topic_penalty", ["l1", "nonneg_l1"])
@pytest.mark.parametrize("representation", ["sparse", "dense"])
def test_fit_with_seeds_matches_the_weighted_paper_algorithm(topic_penalty, representation):
    X, V0 = _oracle_problem()
    n_iter, lam1, lam2 = 6, 0.05, 0.5
    model = BatchRLSI(5, lambda1=lam1, lambda2=lam2, topic_penalty=topic_penalty, lambda1_scale="paper",
                      max_iter=n_iter, tol=0, inner_max_iter=5000, inner_tol=1e-12, topic_sweeps=None,
                      topic_representation=representation, seed_terms=[[0, 3], [3, 17, 22]], seed_strength=0.7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        W = model.fit_transform(X, V_init=V0)
    seeds = resolve_seed_terms(model.seed_terms, 5, 40, strength=0.7)
    U, V, objectives = batch_rlsi_weighted(X.T.toarray(), V0.T, lam1, lam2, _weights(seeds, 40), n_iter,
                                           positive=topic_penalty == "nonneg_l1")
    np.testing.assert_allclose(model.objective_, objectives, rtol=1e-6)
    np.testing.assert_allclose(model.components_.toarray(), U.T, atol=1e-9)
    np.testing.assert_allclose(W, V.T, atol=1e-9)


def test_fit_without_seeds_is_unchanged_bit_for_bit():
    """``seed_terms=None`` runs the code path of a fit that never heard of seeds; an explicit None and the
    default give the same bits, and so does a fit whose seeds are then removed."""
    X = planted_corpus()
    base = BatchRLSI(4, lambda1=0.05, random_state=0).fit(X)
    none = BatchRLSI(4, lambda1=0.05, random_state=0, seed_terms=None).fit(X)
    again = BatchRLSI(4, lambda1=0.05, random_state=0, seed_terms=[[0, 1]]).fit(X)
    again.set_params(seed_terms=None).fit(X)
    for other in (none, again):
        np.testing.assert_array_equal(other.objective_, base.objective_)
        assert (other.components_ != base.components_).nnz == 0
        assert not hasattr(other, "topic_names_") and not hasattr(other, "seed_terms_")


def test_seeded_topics_take_their_words_and_theme():
    X = planted_corpus()  # 4 planted topics on terms 0-11, 12-23, 24-35, 36-47
    model = BatchRLSI(4, lambda1=0.05, random_state=0, seed_terms=SEEDS).fit(X, feature_names=NAMES)
    C = model.components_.toarray()
    assert set(np.argsort(-np.abs(C[1]))[:6]) <= set(range(24, 36))
    # the seed words hold weight in their topics (their penalty is lighter)
    assert np.all(C[0, [0, 1]] != 0) and np.all(C[1, [30, 31, 32]] != 0)
    assert model.topic_names_ == ["first", "third", None, None]
    assert model.seed_terms_ == [[0, 1], [30, 31, 32]]


@pytest.mark.parametrize("cls", [BatchRLSI, OnlineRLSI])
def test_seeds_without_names_give_a_label_of_none_to_every_topic(cls, tmp_path):
    model = cls(4, lambda1=0.05, random_state=0, seed_terms=[["t0", "t1"]]).fit(planted_corpus(), feature_names=NAMES)
    assert model.topic_names_ == [None] * 4 and model.seed_terms_ == [[0, 1]]
    io.save(tmp_path / "m", model=model)
    assert io.load(tmp_path / "m")["model"].topic_names_ == [None] * 4


def test_missing_terms_are_named_in_one_warning():
    X = planted_corpus()
    seeds = {"a": ["t0", "nope", "t1", "gone"], "b": ["t30", 999]}
    with pytest.warns(SeedTermsWarning) as record:
        BatchRLSI(4, lambda1=0.05, random_state=0, max_iter=3, seed_terms=seeds).fit(X, feature_names=NAMES)
    seed_warnings = [w for w in record if issubclass(w.category, SeedTermsWarning)]
    assert len(seed_warnings) == 1
    message = str(seed_warnings[0].message)
    assert "'nope'" in message and "'gone'" in message and "999" in message


@pytest.mark.parametrize("params,fit_kw,match", [
    ({"seed_terms": [[]]}, {}, "group #0 is empty"),
    ({"seed_terms": {"a": ["t0"], "b": []}}, {}, "group 'b' is empty"),
    ({"seed_terms": [["t0"]] * 5}, {"feature_names": NAMES}, "5 groups but n_components=4"),
    ({"seed_terms": {"a": ["t0"], "b": ["xx", "yy"]}}, {"feature_names": NAMES}, "group 'b' has no term"),
    ({"seed_terms": [["t0"]]}, {}, "feature_names"),
    ({"seed_terms": [[0]], "topic_penalty": "l2"}, {}, "needs l1 topics"),
    ({"seed_terms": "t0"}, {}, "list of term lists"),
    ({"seed_terms": [[0.5]]}, {}, "strings or column ids"),
    ({"seed_terms": [[0]], "seed_strength": 1.0}, {}, r"\[0, 1\)"),
    ({"seed_terms": [[0]], "placement": "dask"}, {}, "not available on the dask placement"),
])
def test_bad_seeds_have_clear_messages(params, fit_kw, match):
    X = planted_corpus()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeedTermsWarning)
        with pytest.raises(RLSIError, match=match):
            BatchRLSI(4, lambda1=0.05, max_iter=2, **params).fit(X, **fit_kw)


@pytest.mark.parametrize("cls", [BatchRLSI, OnlineRLSI])
def test_labels_and_seeds_survive_save_and_load(tmp_path, cls):
    X = planted_corpus()
    model = cls(4, lambda1=0.05, random_state=0, seed_terms=SEEDS).fit(X, feature_names=NAMES)
    io.save(tmp_path / "m", model=model)
    loaded = io.load(tmp_path / "m")["model"]
    assert loaded.topic_names_ == ["first", "third", None, None]
    assert loaded.seed_terms_ == model.seed_terms_
    assert loaded.get_params()["seed_terms"] == {k: list(v) for k, v in SEEDS.items()}
    np.testing.assert_array_equal(loaded.components_.toarray(), model.components_.toarray())


@pytest.mark.parametrize("key,value,match", [
    ("topic_names_", ["x"], "topic_names_ is not a list of 4 labels"),
    ("topic_names_", [1, None, None, None], "topic_names_"),
    ("seed_terms_", [[0], [500]], "seed_terms_ is not a list"),
    ("seed_terms_", [[]], "seed_terms_"),
])
def test_damaged_saved_seeds_are_refused(key, value, match):
    X = planted_corpus()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = BatchRLSI(4, lambda1=0.05, random_state=0, max_iter=3, seed_terms=SEEDS).fit(X, feature_names=NAMES)
    meta, arrays = model._to_state()
    meta["fitted"][key] = value
    with pytest.raises(RLSIError, match=match):
        BatchRLSI._from_state(meta, arrays)


def test_numpy_device_placement_gives_the_local_fit():
    X = planted_corpus()
    kw = dict(lambda1=0.05, random_state=0, max_iter=8, seed_terms=SEEDS)
    local = BatchRLSI(4, **kw).fit(X, feature_names=NAMES)
    device = BatchRLSI(4, placement="numpy", **kw).fit(X, feature_names=NAMES)
    # the device's own kernels differ from the host's at 1e-7 relative without seeds too (its sums' order)
    np.testing.assert_allclose(device.objective_, local.objective_, rtol=1e-5)
    np.testing.assert_allclose(device.components_.toarray(), local.components_.toarray(), atol=1e-4)
    assert device.topic_names_ == local.topic_names_


def test_online_seeded_topics_take_their_words():
    X = planted_corpus(n_docs=600)
    model = OnlineRLSI(4, lambda1=0.05, random_state=0, batch_size=100, seed_terms=SEEDS).fit(X, feature_names=NAMES)
    C = model.components_.toarray()
    assert np.all(C[0, [0, 1]] != 0) and np.all(C[1, [30, 31, 32]] != 0)
    assert model.topic_names_ == ["first", "third", None, None]
    plain = OnlineRLSI(4, lambda1=0.05, random_state=0, batch_size=100).fit(X)
    same = OnlineRLSI(4, lambda1=0.05, random_state=0, batch_size=100, seed_terms=None).fit(X)
    assert (plain.components_ != same.components_).nnz == 0


def test_online_seeds_on_a_device_stream_are_refused():
    X = planted_corpus()
    with pytest.raises(RLSIError, match="not available"):
        OnlineRLSI(4, lambda1=0.05, placement="numpy", seed_terms=[[0, 1]]).fit(X)
