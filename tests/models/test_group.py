"""Group RLSI / Group NMF: monotonicity, reductions, folding-in, prediction, oracle, persistence."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import NMF as SkNMF
from sklearn.exceptions import ConvergenceWarning

import rlsi
from rlsi.errors import RLSIError
from rlsi.models import BatchRLSI
from rlsi.models.group import CNMF, CRLSI, GroupNMF, GroupRLSI
from rlsi.oracle import group as oracle

from conftest import in_numba_threads, planted_corpus

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def class_corpus(n_per_class=40, n_classes=3, block=15, n_common=10, seed=0):
    """Documents of class c use the terms of block c plus a few common terms; disjoint class blocks."""
    rng = np.random.default_rng(seed)
    rows, cols, vals, y = [], [], [], []
    n_terms = n_common + n_classes * block
    for c in range(n_classes):
        for _ in range(n_per_class):
            d = len(y)
            words = n_common + c * block + rng.choice(block, size=6, replace=False)
            common = rng.choice(n_common, size=3, replace=False)
            for w in np.concatenate([words, common]):
                rows.append(d)
                cols.append(w)
                vals.append(rng.uniform(0.5, 1.5))
            y.append(f"c{c}")
    X = sp.csr_matrix((vals, (rows, cols)), shape=(len(y), n_terms))
    return X, np.array(y)


@pytest.fixture(scope="module")
def data():
    X = planted_corpus(n_docs=150, n_terms=80, n_topics=4, seed=1)
    y = np.arange(150) % 3
    return X, y


def test_grlsi_objective_non_increasing(data):
    X, y = data
    m = GroupRLSI(3, 2, lambda1=0.3, max_iter=15, tol=0, inner_tol=1e-10, inner_max_iter=1000,
                  random_state=0).fit(X, y)
    obj = m.objective_
    assert len(obj) == 15
    assert np.all(np.diff(obj) <= 1e-9 * obj[:-1])
    assert obj[-1] < obj[0]


def test_gnmf_objective_non_increasing(data):
    X, y = data
    m = GroupNMF(3, 2, max_iter=40, tol=0, random_state=0).fit(X, y)
    assert np.all(np.diff(m.objective_) <= 1e-12 * m.objective_[:-1])
    assert m.objective_[-1] < m.objective_[0]
    assert np.all(m.components_ >= 0)


@pytest.mark.parametrize("ks,kc,labels", [(0, 4, "one"), (4, 0, "three")])
def test_grlsi_reduces_to_batch_rlsi(data, ks, kc, labels):
    """One class with only class topics, or any classes with only shared topics, is plain RLSI."""
    X, y = data
    y = np.zeros(X.shape[0], dtype=int) if labels == "one" else y
    kw = dict(lambda1=0.3, lambda2=1.0, max_iter=6, tol=0, inner_tol=1e-10, inner_max_iter=1000, random_state=3)
    g = GroupRLSI(ks, kc, **kw)
    Wg = g.fit_transform(X, y)
    b = BatchRLSI(4, topic_sweeps=None, **kw)  # exact U-steps, as GroupRLSI's
    Wb = b.fit_transform(X)
    np.testing.assert_allclose(g.objective_, b.objective_, rtol=1e-7)
    np.testing.assert_allclose(g.components_.toarray(), b.components_.toarray(), atol=1e-7)
    np.testing.assert_allclose(Wg, Wb, atol=1e-7)


def _sk_mu(X, U, V, n_iter):
    """scikit-learn's multiplicative updates on Xᵀ ≈ U Vᵀ (topics updated first, as Algorithm 5)."""
    sk = SkNMF(4, solver="mu", init="custom", max_iter=n_iter, tol=0)
    Uf = sk.fit_transform(X.T.tocsr(), W=U.copy(), H=V.T.copy())
    return Uf, sk


@pytest.mark.parametrize("ks,kc", [(0, 4), (4, 0)])
def test_gnmf_one_class_is_sklearn_mu(data, ks, kc):
    X, _ = data
    N, M = X.shape
    y = np.zeros(N, dtype=int)
    g = GroupNMF(ks, kc, max_iter=25, tol=0, random_state=7).fit(X, y)
    # the documented initialisation: a = sqrt(mean(X)/K), U then V from the generator of random_state
    rng = np.random.default_rng(7)
    a = np.sqrt(X.sum() / (N * M) / 4)
    U = a * np.abs(rng.standard_normal((M, 4)))
    V = a * np.abs(rng.standard_normal((N, 4)))
    Uf, sk = _sk_mu(X, U, V, 25)
    np.testing.assert_allclose(g.components_, Uf.T, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(g.objective_[-1], sk.reconstruction_err_ ** 2, rtol=1e-8)


def test_crlsi_is_independent_rlsi_per_class(data):
    X, y = data
    # Eq. 3's λ₁ (paper scale): the same value for every class and for each class's own RLSI
    kw = dict(lambda1=3.0, lambda2=1.0, lambda1_scale="paper", max_iter=5, tol=0, inner_tol=1e-10, inner_max_iter=1000)
    V0 = np.random.default_rng(0).standard_normal((X.shape[0], 6))  # 3 classes x 2 topics
    c = CRLSI(n_class_topics=2, **kw).fit(X, y, V_init=V0)
    total = np.zeros(5)
    for p, label in enumerate(c.classes_):
        rows = np.flatnonzero(y == label)
        cols = slice(2 * p, 2 * p + 2)
        b = BatchRLSI(2, topic_sweeps=None, **kw).fit(X[rows], V_init=V0[rows][:, cols])  # exact U-steps
        np.testing.assert_allclose(c.get_topics(f"class:{label}", dense=True), b.components_.toarray(), atol=1e-7)
        total += b.objective_
    np.testing.assert_allclose(c.objective_, total, rtol=1e-8)


def test_cnmf_is_independent_nmf_per_class(data):
    X, y = data
    N, M = X.shape
    c = CNMF(n_class_topics=2, max_iter=10, tol=0, random_state=5).fit(X, y)
    rng = np.random.default_rng(5)
    a = np.sqrt(X.sum() / (N * M) / 6)
    total = 0.0
    for p, label in enumerate(c.classes_):
        rows = np.flatnonzero(y == label)
        U = a * np.abs(rng.standard_normal((M, 2)))
        V = a * np.abs(rng.standard_normal((len(rows), 2)))
        sk = SkNMF(2, solver="mu", init="custom", max_iter=10, tol=0)
        Uf = sk.fit_transform(X[rows].T.tocsr(), W=U.copy(), H=V.T.copy())
        np.testing.assert_allclose(c.get_topics(f"class:{label}", dense=True), Uf.T, rtol=1e-8, atol=1e-12)
        total += sk.reconstruction_err_ ** 2
    np.testing.assert_allclose(c.objective_[-1], total, rtol=1e-8)


def test_grlsi_fold_in_with_label_equals_training_vectors(data):
    X, y = data
    m = GroupRLSI(3, 2, lambda1=0.3, max_iter=5, random_state=0)
    W = m.fit_transform(X, y)
    np.testing.assert_allclose(m.transform(X, y), W, rtol=1e-6, atol=1e-10)
    # zeros outside a document's shared and class columns
    for p, label in enumerate(m.classes_):
        a, b = m.topic_groups[f"class:{label}"]
        others = np.setdiff1d(np.arange(W.shape[1]), np.r_[0:3, a:b])
        assert not np.any(W[y == label][:, others])


def test_gnmf_training_vectors_are_the_nnls_fold_in(data):
    """fit_transform(X, y) is transform(X, y): the training documents folded in on their classes' final
    topics by the exact NNLS of Eq. (10), which reconstructs each document no worse than the last
    multiplicative update's vectors (those the oracle gives, ``objective_[-1]``), and here after 30 updates
    better in total (by 0.04 %: 656.60 against 656.89)."""
    X, y = data
    m = GroupNMF(3, 2, max_iter=30, tol=0, random_state=0)
    W = m.fit_transform(X, y)
    np.testing.assert_array_equal(W, m.transform(X, y))
    assert np.all(W >= 0)
    dense = X.toarray()
    # the vectors of the updates: the oracle's, from the same start (the initialisation of test_gnmf_oracle_parity)
    N, M = X.shape
    rng = np.random.default_rng(0)
    a = np.sqrt(X.sum() / (N * M) / 9)
    U0 = a * np.abs(rng.standard_normal((M, 3)))
    Us, Vs, Ds, rows_of = [], [], [], []
    for p in range(3):
        rows = np.flatnonzero(y == p)
        rows_of.append(rows)
        Us.append(a * np.abs(rng.standard_normal((M, 2))))
        Vs.append((a * np.abs(rng.standard_normal((len(rows), 5)))).T)
        Ds.append(dense[rows].T)
    U0, Us, Vs, objs = oracle.group_nmf(Ds, U0, Us, Vs, 30)
    np.testing.assert_allclose(m.objective_, objs, rtol=1e-9)
    err_fold = np.square(dense - W @ m.components_).sum(axis=1)
    err_mu = np.empty(N)
    for p, rows in enumerate(rows_of):
        err_mu[rows] = np.square(Ds[p] - np.hstack([U0, Us[p]]) @ Vs[p]).sum(axis=0)
    assert err_mu.sum() == pytest.approx(objs[-1], rel=1e-9)
    assert np.all(err_fold <= err_mu + 1e-12)
    assert err_fold.sum() < err_mu.sum()


@pytest.mark.parametrize("model", [GroupRLSI(2, 3, lambda1=0.1, max_iter=20, random_state=0),
                                   GroupNMF(2, 3, max_iter=100, random_state=0)])
def test_predict_exact_on_separated_classes(model):
    X, y = class_corpus(seed=0)
    X_new, y_new = class_corpus(n_per_class=20, seed=1)
    model.fit(X, y)
    np.testing.assert_array_equal(model.predict(X_new), y_new)
    # without labels, transform uses the predicted class: equal to folding in with the true label
    np.testing.assert_allclose(model.transform(X_new), model.transform(X_new, y_new), atol=1e-10)


def test_kmeans_classes_recover_separated_classes():
    X, y = class_corpus(seed=2)
    m = GroupRLSI(2, 2, lambda1=0.1, classes="kmeans:3", max_iter=5, random_state=0).fit(X)
    assert len(m.classes_) == 3
    # each derived class is one true class (a permutation of the labels)
    pairs = {(a, b) for a, b in zip(y, m.labels_)}
    assert len(pairs) == 3


def test_grlsi_oracle_parity(data):
    X, y = data
    Ks, Kc, n_iter = 2, 2, 3
    V0 = np.random.default_rng(1).standard_normal((X.shape[0], Ks + 3 * Kc))
    kw = dict(lambda1=4.0, lambda1_class=2.0, lambda2=0.5, lambda1_scale="paper", max_iter=n_iter, tol=0,
              inner_tol=1e-12, inner_max_iter=5000)
    m = GroupRLSI(Ks, Kc, **kw)
    W = m.fit_transform(X, y, V_init=V0)
    Ds, V0s = [], []
    for p in range(3):
        rows = np.flatnonzero(y == p)
        Ds.append(X[rows].toarray().T)
        V0s.append(V0[rows][:, np.r_[0:Ks, Ks + Kc * p:Ks + Kc * (p + 1)]].T)
    U0, Us, Vs, objs = oracle.group_rlsi(Ds, V0s, Ks, 4.0, [2.0] * 3, 0.5, n_iter, max_iter=5000, tol=1e-12)
    np.testing.assert_allclose(m.objective_, objs, rtol=1e-8)
    np.testing.assert_allclose(m.get_topics("shared", dense=True), U0.T, atol=1e-7)
    for p in range(3):
        np.testing.assert_allclose(m.get_topics(f"class:{p}", dense=True), Us[p].T, atol=1e-7)
        rows = np.flatnonzero(y == p)
        np.testing.assert_allclose(W[rows][:, np.r_[0:Ks, Ks + Kc * p:Ks + Kc * (p + 1)]], Vs[p].T, atol=1e-7)


def test_gnmf_oracle_parity(data):
    """Algorithm 5's objective and topics; the last update's vectors enter the objective (fit_transform's
    own vectors are the fold-in: test_gnmf_training_vectors_are_the_nnls_fold_in)."""
    X, y = data
    N, M = X.shape
    m = GroupNMF(2, 2, max_iter=8, tol=0, random_state=4).fit(X, y)
    rng = np.random.default_rng(4)
    a = np.sqrt(X.sum() / (N * M) / 8)
    U0 = a * np.abs(rng.standard_normal((M, 2)))
    Us, Vs, Ds = [], [], []
    for p in range(3):
        rows = np.flatnonzero(y == p)
        Us.append(a * np.abs(rng.standard_normal((M, 2))))
        Vs.append((a * np.abs(rng.standard_normal((len(rows), 4)))).T)
        Ds.append(X[rows].toarray().T)
    U0, Us, Vs, objs = oracle.group_nmf(Ds, U0, Us, Vs, 8)
    np.testing.assert_allclose(m.objective_, objs, rtol=1e-9)
    np.testing.assert_allclose(m.get_topics("shared", dense=True), U0.T, rtol=1e-8, atol=1e-12)
    for p in range(3):
        np.testing.assert_allclose(m.get_topics(f"class:{p}", dense=True), Us[p].T, rtol=1e-8, atol=1e-12)


def test_class_topic_mapping_and_groups(data):
    X, y = data
    m = GroupRLSI(2, {0: 1, 1: 3, 2: 0}, lambda1=0.3, max_iter=3, random_state=0).fit(X, y)
    assert m.topic_groups == {"shared": (0, 2), "class:0": (2, 3), "class:1": (3, 6)}
    summary = m.group_summary(feature_names=[f"t{i}" for i in range(X.shape[1])], n_terms=3)
    assert set(summary) == {"shared", "class:0", "class:1"}
    assert all(0 < s["avg_compactness"] <= 1 for s in summary.values())
    W = m.transform(X, y)
    assert not np.any(W[y == 2][:, 2:])  # class 2 has only the shared topics


@pytest.mark.parametrize("cls", [GroupRLSI, GroupNMF])
def test_save_load_round_trip(tmp_path, data, cls):
    X, y = data
    labels = np.array(["a", "b", "c"])[y]
    m = cls(2, {"a": 2, "b": 1, "c": 2}, max_iter=4, random_state=0).fit(X, labels)
    rlsi.io.save(tmp_path / "m", model=m)
    m2 = rlsi.io.load(tmp_path / "m")["model"]
    assert type(m2) is cls
    assert m2.topic_groups == m.topic_groups
    np.testing.assert_array_equal(m2.classes_, m.classes_)
    np.testing.assert_array_equal(m2.predict(X), m.predict(X))
    np.testing.assert_allclose(m2.transform(X, labels), m.transform(X, labels))
    np.testing.assert_allclose(m2.objective_, m.objective_)


def test_threads_executor_same_result(data):
    X, y = data
    kw = dict(lambda1=0.3, max_iter=4, random_state=0)
    a = GroupRLSI(2, 2, **kw).fit(X, y)
    b = GroupRLSI(2, 2, executor="threads", **kw).fit(X, y)
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=1e-12)


@pytest.mark.parametrize("kwargs,fit_y,match", [
    ({}, None, "requires y to be passed"),
    ({}, "missing", "missing the class label of 1"),
    ({"n_class_topics": 60}, "ok", "fewer than its 60 class topics"),
    ({"n_shared_topics": 0, "n_class_topics": 0}, "ok", "without topics"),
    ({"n_class_topics": {0: 1}}, "ok", "no entry for the classes"),
    ({"classes": "kmeans:x"}, None, "is not understood"),
])
@pytest.mark.parametrize("cls", [GroupRLSI, GroupNMF])
def test_bad_input_one_line_errors(data, cls, kwargs, fit_y, match):
    X, y = data
    if fit_y == "missing":
        fit_y = list(y)
        fit_y[4] = None
    elif fit_y == "ok":
        fit_y = y
    with pytest.raises(RLSIError, match=match) as err:
        cls(**kwargs).fit(X, fit_y)
    assert "\n" not in str(err.value)


def test_unknown_label_in_transform(data):
    X, y = data
    m = GroupRLSI(2, 2, max_iter=2, random_state=0).fit(X, y)
    with pytest.raises(RLSIError, match="labels not seen in fit"):
        m.transform(X[:3], [0, 1, 9])


def test_crlsi_refuses_shared_topics(data):
    X, y = data
    with pytest.raises(RLSIError, match="CRLSI has no shared topics"):
        CRLSI(3, 2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert CRLSI(n_class_topics=2, max_iter=2).fit(X, y).topic_groups.keys() == {"class:0", "class:1", "class:2"}


@pytest.mark.parametrize("cls", [GroupRLSI, GroupNMF, CRLSI, CNMF])
def test_sklearn_tags_supervised_transformer(cls):
    tags = cls().__sklearn_tags__()
    assert tags.target_tags.required and tags.input_tags.sparse
    assert tags.input_tags.positive_only == issubclass(cls, GroupNMF)
    # with classes derived by clustering, y is not needed
    assert not cls(classes="kmeans:2").__sklearn_tags__().target_tags.required


@pytest.mark.parametrize("cls", [GroupRLSI, GroupNMF])
def test_vocabulary_bounds_each_class_not_the_total(cls):
    X, y = class_corpus(n_per_class=25, n_classes=3, block=6, n_common=3)  # 21 terms
    m = cls(2, 7, max_iter=2, random_state=0).fit(X, y)  # 2 + 3*7 = 23 topics in all, 9 per class
    assert m.components_.shape == (23, X.shape[1])
    with pytest.raises(RLSIError, match=r"21 feature\(s\).*22 topics of class 'c1'") as err:
        cls(2, {"c0": 1, "c1": 20, "c2": 1}, max_iter=2).fit(X, y)
    assert "\n" not in str(err.value)


def test_transform_and_predict_leave_the_model_unchanged(data):
    X, y = data
    m = GroupRLSI(2, 2, max_iter=2, random_state=0).fit(X, y)
    before = {k: (v, v[0], list(v[1])) if k == "_class_topic_cache" else v for k, v in m.__dict__.items()}
    m.transform(X)
    m.transform(X, y)
    m.predict(X)
    assert m.__dict__.keys() == before.keys()
    for k, v in m.__dict__.items():
        if k == "_class_topic_cache":
            assert v[0] is before[k][1] and all(a is b for a, b in zip(v[1], before[k][2]))
        else:
            assert v is before[k]


def test_topics_replaced_by_hand_are_used(data):
    X, y = data
    m = GroupRLSI(2, 2, max_iter=2, random_state=0).fit(X, y)
    fitted = m.transform(X, y)
    m.components_ = m.components_ * 2.0  # not through fit: the Ũp prepared at fit time are stale
    expected = GroupRLSI(2, 2)
    expected.__dict__.update({k: v for k, v in m.__dict__.items() if k.endswith("_")})
    expected._prepare_class_topics()  # Ũp of the new topics
    W = m.transform(X, y)
    np.testing.assert_allclose(W, expected.transform(X, y))
    assert not np.allclose(W, fitted)


@pytest.mark.parametrize("cls", [GroupRLSI, GroupNMF])
def test_the_thread_count_changes_no_number(cls, request):
    """n_jobs=1 and n_jobs=2 give bit-identical topics (the partial sums follow the rows, not the threads),
    on enough rows for several parts of the row-chunked grams."""
    if not in_numba_threads(request):
        return  # compared in a child with two numba threads
    X, y = class_corpus(n_per_class=400, n_classes=4, block=40, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = cls(3, 2, max_iter=4, random_state=0, n_jobs=1).fit(X, y).components_
        two = cls(3, 2, max_iter=4, random_state=0, n_jobs=2).fit(X, y).components_
    one, two = (a.toarray() if sp.issparse(a) else a for a in (one, two))
    np.testing.assert_array_equal(one, two)
