"""BatchRLSI against the plain-numpy paper oracle, and its estimator behaviour."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from rlsi.errors import RLSIError
from rlsi.models import BatchRLSI, DeadTopicsWarning
from rlsi.oracle import batch_rlsi, rlsi_objective

from conftest import planted_corpus

STRATEGIES = [("l1", "l2", 0.05, 0.5), ("l2", "l1", 0.3, 0.05), ("l1", "l1", 0.05, 0.05), ("l2", "l2", 0.3, 0.5)]


def _oracle_problem(seed=1):
    rng = np.random.default_rng(seed)
    X = sp.random(25, 40, density=0.3, random_state=seed, format="csr")
    V0 = rng.standard_normal((25, 5)) * 0.3
    return X, V0


@pytest.mark.parametrize("topic_penalty,doc_penalty,lam1,lam2", STRATEGIES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("dense_input", [False, True])
def test_fast_solver_matches_paper_algorithm(topic_penalty, doc_penalty, lam1, lam2, dtype, dense_input):
    X, V0 = _oracle_problem()
    n_iter = 6
    model = BatchRLSI(5, lambda1=lam1, lambda2=lam2, topic_penalty=topic_penalty, doc_penalty=doc_penalty,
                      lambda1_scale="paper", max_iter=n_iter, tol=0, inner_max_iter=5000, inner_tol=1e-12,
                      topic_sweeps=None)  # every U-step solved to inner_tol: the paper's iterates
    Xin = X.toarray().astype(dtype) if dense_input else X.astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        W = model.fit_transform(Xin, V_init=V0)
    U, V, objectives = batch_rlsi(X.T.toarray(), V0.T, lam1, lam2, n_iter, topic_penalty, doc_penalty)
    rel = 1e-6
    atol = 1e-9 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(model.objective_, objectives, rtol=rel)
    np.testing.assert_allclose(model.components_.toarray(), U.T, atol=atol)
    np.testing.assert_allclose(W, V.T, atol=atol)
    assert model.components_.dtype == dtype and W.dtype == dtype
    # the recorded objective is Eq. (1) of the returned factors
    direct = rlsi_objective(X.T.toarray(), model.components_.toarray().T.astype(float), W.T.astype(float),
                            lam1, lam2, topic_penalty, doc_penalty)
    assert model.objective_[-1] == pytest.approx(direct, rel=1e-6)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("topic_penalty,doc_penalty,lam1,lam2", [STRATEGIES[0], STRATEGIES[2]])
def test_default_topic_sweeps_converge_to_the_exact_solution(seed, topic_penalty, doc_penalty, lam1, lam2):
    """The default inexact U-step (``topic_sweeps=3``) takes other iterates than Algorithm 1 (whose iterates
    ``topic_sweeps=None`` reproduces, test above) but, run to convergence from the same V₀, reaches the same
    solution (to the accuracy of the alternation's own convergence)."""
    X, V0 = _oracle_problem(seed)
    fits = []
    for sweeps in (None, BatchRLSI().topic_sweeps):
        model = BatchRLSI(5, lambda1=lam1, lambda2=lam2, topic_penalty=topic_penalty, doc_penalty=doc_penalty,
                          lambda1_scale="paper", max_iter=3000, tol=1e-13, inner_max_iter=5000, inner_tol=1e-12,
                          topic_sweeps=sweeps)
        fits.append((model, model.fit_transform(X, V_init=V0)))
    (exact, W_exact), (inexact, W) = fits
    assert exact.n_iter_ < 3000 and inexact.n_iter_ < 3000  # both converged
    assert not np.array_equal(exact.objective_[:5], inexact.objective_[:5])  # other iterates
    np.testing.assert_allclose(inexact.objective_[-1], exact.objective_[-1], rtol=1e-10)
    np.testing.assert_allclose(inexact.components_.toarray(), exact.components_.toarray(), atol=1e-5)
    np.testing.assert_allclose(W, W_exact, atol=1e-5)


@pytest.mark.parametrize("representation", ["sparse", "dense"])
@pytest.mark.parametrize("lambda1", [0.5, 0.01])
@pytest.mark.parametrize("topic_sweeps", [1, 2])
def test_inexact_topic_steps_decrease_the_objective_monotonically(planted, representation, lambda1, topic_sweeps):
    """Each outer iteration with a capped, warm-started U-step is a descent step of Eq. (1)."""
    X = planted
    model = BatchRLSI(8, lambda1=lambda1, max_iter=15, tol=0, topic_sweeps=topic_sweeps,
                      topic_representation=representation, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    obj = model.objective_
    assert len(obj) == 15
    assert np.all(np.diff(obj) <= 1e-12 * obj[:-1]), np.diff(obj)
    # and the sweeps were capped: more than one sweep per row would have been taken early on
    exact = BatchRLSI(8, lambda1=lambda1, max_iter=15, tol=0, topic_sweeps=None,
                      topic_representation=representation, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact.fit(X)
    assert not np.array_equal(exact.objective_, obj)


def test_objective_decreases_and_topics_are_sparse(planted):
    model = BatchRLSI(4, lambda1=2.0, lambda2=1.0, random_state=0, max_iter=50).fit(planted)  # the paper's λ₂
    obj = model.objective_
    assert np.all(np.diff(obj) <= 1e-9 * obj[0])
    comp = model.components_.nnz / np.prod(model.components_.shape)
    assert comp < 0.5
    # every planted topic (a block of 12 terms) is where one learned topic has most of its weight (the
    # supports themselves pick up noise terms of the other blocks)
    mass = np.add.reduceat(abs(model.components_.toarray()), np.arange(0, planted.shape[1], 12), axis=1)
    assert len(set(mass.argmax(axis=1))) >= 3
    assert np.all(mass.max(axis=1) > 0.5 * mass.sum(axis=1))


def test_reproducible_with_threads(planted):
    a = BatchRLSI(4, lambda1=1.0, random_state=7, n_jobs=2, max_iter=20, tol=0).fit(planted)
    b = BatchRLSI(4, lambda1=1.0, random_state=7, n_jobs=2, max_iter=20, tol=0).fit(planted)
    c = BatchRLSI(4, lambda1=1.0, random_state=7, n_jobs=1, max_iter=20, tol=0).fit(planted)
    assert (a.components_ != b.components_).nnz == 0
    # 1 thread: the same numbers too (work is split by rows, never by threads)
    np.testing.assert_array_equal(a.components_.toarray(), c.components_.toarray())
    d = BatchRLSI(4, lambda1=1.0, random_state=8, max_iter=20, tol=0).fit(planted)
    assert (a.components_ != d.components_).nnz > 0


def test_max_iter_warning_names_the_reached_value(planted):
    with pytest.warns(ConvergenceWarning, match=r"max_iter=2 .*last relative objective change was"):
        BatchRLSI(4, lambda1=1.0, random_state=0, max_iter=2, tol=1e-12).fit(planted)


def test_dead_topics_no_nan_and_warning(planted):
    with pytest.warns(DeadTopicsWarning, match="too strong"):
        model = BatchRLSI(4, lambda1=1e6, random_state=0, max_iter=5).fit(planted)
    assert len(model.dead_topics()) == 4
    W = model.transform(planted)
    assert np.all(np.isfinite(W)) and np.all(W == 0)
    assert np.all(np.isfinite(model.objective_))


@pytest.mark.parametrize("doc_penalty", ["l2", "l1"])
def test_dead_topic_has_s_kk_zero_and_stays_finite(doc_penalty):
    """A zero row of V₀ makes s_kk = 0: that topic must come out all-zero, never NaN."""
    X = planted_corpus(n_topics=2)
    V0 = np.random.default_rng(0).standard_normal((X.shape[0], 3))
    V0[:, 1] = 0.0
    model = BatchRLSI(3, lambda1=0.5, doc_penalty=doc_penalty, lambda2=0.1, max_iter=10, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        W = model.fit_transform(X, V_init=V0)
    assert list(model.dead_topics()) == [1]
    assert np.all(np.isfinite(W)) and np.all(W[:, 1] == 0)
    assert np.all(np.isfinite(model.transform(X)))
    assert np.all(np.isfinite(model.objective_))


def test_transform_is_the_ridge_projection(planted):
    model = BatchRLSI(4, lambda1=1.0, lambda2=0.7, random_state=0).fit(planted)
    U = model.components_.toarray().T
    q = planted[:3].toarray()
    expected = np.linalg.solve(U.T @ U + 0.7 * np.eye(4), U.T @ q.T).T
    np.testing.assert_allclose(model.transform(planted[:3]), expected, atol=1e-10)
    assert np.all(model.transform(sp.csr_matrix((2, planted.shape[1]))) == 0)


def test_lambda1_scale_per_doc_is_size_independent(planted):
    m = BatchRLSI(4, lambda1=2.0).set_params(lambda1_scale="per_doc")
    assert m.effective_lambda1(2000) == pytest.approx(4.0)
    assert BatchRLSI(4, lambda1=2.0, lambda1_scale="paper").effective_lambda1(2000) == 2.0


@pytest.mark.parametrize("params,match", [
    ({"n_components": 0}, "n_components=0 must be >= 1"),
    ({"lambda1": -1.0}, "lambda1=-1.0 must be >= 0"),
    ({"topic_penalty": "l3"}, "topic_penalty='l3' is not supported; choose one of 'l1', 'l2'"),
    ({"init": "nndsvd"}, "init='nndsvd' is not supported"),
    ({"n_components": 500}, "larger than the vocabulary"),
])
def test_bad_parameters_have_clear_messages(planted, params, match):
    with pytest.raises(RLSIError, match=match):
        BatchRLSI(**params).fit(planted)


def test_bad_data_has_clear_messages(planted):
    bad = planted.copy()
    bad.data[0] = np.nan
    with pytest.raises(RLSIError, match="NaN"):
        BatchRLSI(4).fit(bad)
    with pytest.raises(RLSIError, match="0 sample"):
        BatchRLSI(4).fit(sp.csr_matrix((0, 10)))
    with pytest.raises(RLSIError, match="complex|Complex"):
        BatchRLSI(4).fit(np.ones((5, 5), dtype=complex))
    model = BatchRLSI(4, lambda1=1.0, random_state=0).fit(planted)
    with pytest.raises(RLSIError, match="features"):
        model.transform(planted[:, :10])


def test_random_init_runs(planted):
    model = BatchRLSI(4, lambda1=1.0, init="random", random_state=0, max_iter=30).fit(planted)
    assert model.components_.nnz > 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_screening_is_exact(dtype):
    """Skipping term rows certified zero by the bound gives bit-identical topics and objective."""
    X = planted_corpus(n_docs=300, n_terms=400, n_topics=5, words_per_topic=20, seed=3, dtype=dtype)
    params = dict(lambda1=4.0, random_state=0, max_iter=25, tol=0, topic_representation="sparse")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        screened = BatchRLSI(5, **params).fit(X)
        plain = BatchRLSI(5, **params).with_tuning(screen=False).fit(X)
    assert screened.n_rows_screened_ > 0 and plain.n_rows_screened_ == 0
    assert (screened.components_ != plain.components_).nnz == 0
    np.testing.assert_array_equal(screened.objective_, plain.objective_)
    # switching to dense topics voids the bounds; switching back rebuilds them: still exact
    from rlsi.models import local

    flip = iter([True, False, True] + [False] * 100)
    original = local.RLSIProblem.u_step

    def u_step(self, executor):
        diag = original(self, executor)
        self.dense = next(flip)
        return diag

    local.RLSIProblem.u_step = u_step
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            switched = BatchRLSI(5, **params).fit(X)
    finally:
        local.RLSIProblem.u_step = original
    assert switched.n_rows_screened_ > 0
    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(switched.objective_, plain.objective_, rtol=tol)
    np.testing.assert_allclose(switched.components_.toarray(), plain.components_.toarray(), atol=tol)


def test_overflowing_lambda1_is_refused_before_fitting(planted):
    # 1e308 per 1000 documents is inf for 200 documents: refused, naming the value
    with pytest.raises(RLSIError, match=r"lambda1=1e\+308 overflows: per 1000 documents it gives λ₁ = inf"):
        BatchRLSI(4, lambda1=1e308).fit(planted)
    # the paper's scale uses the value as it is: finite, so it fits (every topic empty, with the warning)
    with pytest.warns(DeadTopicsWarning, match="lambda1 \\(paper scale\\)=1e\\+308"):
        BatchRLSI(4, lambda1=1e308, lambda1_scale="paper", max_iter=2).fit(planted)


def test_huge_lambda2_is_named_as_the_cause_of_empty_topics(planted):
    with pytest.warns(DeadTopicsWarning, match=r"lambda2=1e\+308 shrinks every document vector"):
        model = BatchRLSI(4, lambda1=0.05, lambda2=1e308, random_state=0, max_iter=3).fit(planted)
    assert np.all(np.isfinite(model.objective_))


def test_documents_whose_weights_are_all_zero_are_explained():
    X = sp.csr_matrix((50, 30))  # e.g. 50 identical documents: every idf is 0
    with pytest.raises(RLSIError, match=r"needs at least 1 documents with non-zero weights; X has 0 of 50 .*"
                                        r"every one of its terms occurs in every document"):
        BatchRLSI(1).fit(X)


def test_cold_work_budget_only_for_the_first_inexact_u_step():
    from rlsi.models.rlsi_policy import TUNING, cold_work

    assert cold_work(20, 3, warm=False) == TUNING.cold_dense_sweeps * 20 * 20
    assert cold_work(20, 3, warm=False, tuning=TUNING.but(cold_dense_sweeps=None)) is None
    assert cold_work(20, 3, warm=True) is None
    assert cold_work(20, None, warm=False) is None  # exact U-steps stay exact (Algorithm 1's iterates)


@pytest.mark.parametrize("representation", ["sparse", "dense"])
def test_budgeted_first_u_step_is_a_descent_step_towards_the_exact_solution(planted, representation):
    """At a small λ₁ (dense topics) the cold first U-step's work budget binds; the fit still decreases the
    objective at every iteration and, run on, reaches the exact fit's objective."""
    X = planted
    lam = 1e-4
    params = dict(lambda1=lam, max_iter=60, tol=0, topic_representation=representation, random_state=0)
    model = BatchRLSI(8, **params).fit(X)
    obj = model.objective_
    # the same fit without the budget: the budget did bind
    unbudgeted = BatchRLSI(8, **params).with_tuning(cold_dense_sweeps=1e12).fit(X)
    assert unbudgeted.objective_[0] != obj[0]
    assert np.all(np.diff(obj) <= 1e-10 * np.abs(obj[:-1]))
    exact = BatchRLSI(8, lambda1=lam, max_iter=60, tol=0, topic_sweeps=None, topic_representation=representation,
                      random_state=0).fit(X)
    assert abs(obj[-1] - exact.objective_[-1]) <= 1e-3 * abs(exact.objective_[-1])


def test_float32_v_step_stores_rounded_rows_and_their_gram():
    """The float32 V-step (closed-form ridge in float64, rows stored in float32 in parallel) returns the
    float32 rounding of the float64 solution and S = WᵀW of the *stored* rows, from row blocks."""
    from rlsi.models import steps

    X, _ = _oracle_problem(3)
    X32 = X.astype(np.float32)
    U = sp.random(40, 5, density=0.4, random_state=4, format="csr", dtype=np.float32)
    W32, cross32, S32 = steps.update_doc_vectors(X32, U, penalty="l2", lam=0.5, dtype=np.float32,
                                                 return_gram=True, block_entries=8 * 5)
    W64, cross64, _ = steps.update_doc_vectors(X32.astype(np.float64), U.astype(np.float64), penalty="l2",
                                               lam=0.5, dtype=np.float64, return_gram=True, block_entries=8 * 5)
    assert W32.dtype == np.float32 and W32.flags.c_contiguous
    np.testing.assert_allclose(W32, W64, rtol=1e-5, atol=1e-6)
    W32d = W32.astype(np.float64)
    np.testing.assert_allclose(S32, W32d.T @ W32d, rtol=1e-12, atol=1e-12)
    assert abs(cross32 - cross64) <= 1e-5 * abs(cross64)
