"""The learner core: penalties, executors, blocks, driver, base-class contract, one folding-in."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize, nnls
from sklearn.exceptions import ConvergenceWarning
from sklearn.exceptions import NotFittedError as SkNotFittedError

import rlsi
from rlsi.errors import NotFittedError, RLSIError
from rlsi.kernels.lasso import lasso_rows
from rlsi.models import LDA, LSI, NMF, PLSI, BatchRLSI, OnlineRLSI
from rlsi.models.driver import alternate
from rlsi.models.executor import SerialExecutor, ThreadExecutor, get_executor
from rlsi.models.penalties import PENALTIES, SolverSettings, penalty
from rlsi.models.squared import fold_in
from rlsi.oracle import batch_rlsi
from rlsi.retrieval.topic import RidgeFolding

from conftest import planted_corpus


def _gram_problem(seed, n=30, K=6):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((40, K))
    S = A.T @ A
    R = rng.standard_normal((n, K)) * 3.0
    return S, R


# ------------------------------------------------------------------------------------------ penalties
def test_nonneg_l2_is_nonnegative_least_squares():
    # min uᵀ(S+λI)u − 2rᵀu, u ≥ 0  ==  min ‖Lᵀu − L⁻¹r‖², u ≥ 0 with S+λI = L Lᵀ (scipy's NNLS)
    S, R = _gram_problem(0)
    lam = 0.7
    pen = penalty("nonneg_l2")
    U, _ = pen.prepared(S, lam).solve(R, None, SolverSettings(10000, 1e-14))
    L = np.linalg.cholesky(S + lam * np.eye(len(S)))
    for r, u in zip(R, U):
        expected, _ = nnls(L.T, np.linalg.solve(L, r))
        np.testing.assert_allclose(u, expected, atol=1e-8)
    assert (U >= 0).all() and (U == 0).any()


def test_nonneg_l1_matches_bound_constrained_solver():
    # on u ≥ 0, |u| = u: a smooth problem that L-BFGS-B solves with bounds
    S, R = _gram_problem(1)
    lam = 2.0
    pen = penalty("nonneg_l1")
    U, _ = pen.prepared(S, lam).solve(R, None, SolverSettings(10000, 1e-14))
    for r, u in zip(R, U):
        f = lambda x: (x @ S @ x - 2 * r @ x + lam * x.sum(), 2 * S @ x - 2 * r + lam)  # noqa: E731
        res = minimize(f, np.zeros(len(r)), jac=True, bounds=[(0, None)] * len(r), method="L-BFGS-B",
                       options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
        assert f(u)[0] <= res.fun + 1e-9
        np.testing.assert_allclose(u, res.x, atol=1e-5)
    assert (U >= 0).all()


def test_positive_lasso_kkt_and_warm_start_from_negative():
    S, R = _gram_problem(2)
    lam = 1.5
    U, _ = lasso_rows(R, S, None, lam, max_iter=10000, tol=1e-14, positive=True)
    G = 2 * (U @ S) - 2 * R  # gradient of the smooth part
    active = U > 0
    np.testing.assert_allclose(G[active], -lam, atol=1e-8)        # stationarity on the support
    assert (G[~active] >= -lam - 1e-8).all()                     # no inactive coordinate wants to grow
    U2, _ = lasso_rows(R, S, -np.abs(U) - 1.0, lam, max_iter=10000, tol=1e-14, positive=True)
    np.testing.assert_allclose(U2, U, atol=1e-8)


def test_l1_and_l2_penalties_are_the_kernels():
    S, R = _gram_problem(3)
    U1, _ = penalty("l1").prepared(S, 1.0).solve(R, None, SolverSettings(500, 1e-10))
    np.testing.assert_array_equal(U1, lasso_rows(R, S, None, 1.0, max_iter=500, tol=1e-10)[0])
    U2, sweeps = penalty("l2").prepared(S, 0.5).solve(R, None, SolverSettings(1, 0))
    np.testing.assert_allclose(U2, np.linalg.solve(S + 0.5 * np.eye(len(S)), R.T).T, rtol=1e-10)
    assert sweeps == 0


def test_penalty_registry_errors_name_the_parameter():
    with pytest.raises(RLSIError, match=r"topic_penalty='l3' is not supported; choose one of 'l1', 'l2'"):
        BatchRLSI(2, topic_penalty="l3").fit(planted_corpus())
    assert set(PENALTIES) == {"l1", "l2", "nonneg_l1", "nonneg_l2"}
    assert penalty("l1").value(np.array([[-1.0, 2.0]])) == 3.0
    assert penalty("nonneg_l2").value(sp.csr_matrix([[3.0, 0.0, 4.0]])) == 25.0


def test_nonnegative_rlsi_gives_nonnegative_factors_and_decreasing_objective(planted):
    model = BatchRLSI(4, lambda1=1.0, topic_penalty="nonneg_l1", doc_penalty="nonneg_l2", random_state=0,
                      max_iter=30, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        W = model.fit_transform(planted)
    assert model.components_.data.min() > 0 and W.min() >= 0
    assert np.all(np.diff(model.objective_) <= 1e-9 * model.objective_[0])


# ------------------------------------------------------------------------------------------ executors
@pytest.mark.parametrize("executor", ["threads", ThreadExecutor(3)])
def test_thread_executor_gives_the_serial_result_to_the_bit(planted, executor, monkeypatch):
    small = dict(min_block_rows=16, block_entries=16 * 4)  # 16-row blocks: 8 term blocks, 13 document blocks
    kw = dict(lambda1=1.0, random_state=3, max_iter=15, tol=0, topic_representation="sparse", tuning=small)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        serial = BatchRLSI(4, **kw).fit(planted)
        threaded = BatchRLSI(4, executor=executor, **kw).fit(planted)
    assert (serial.components_ != threaded.components_).nnz == 0
    np.testing.assert_array_equal(serial.objective_, threaded.objective_)
    assert serial.n_rows_screened_ == threaded.n_rows_screened_ > 0


def test_get_executor():
    assert isinstance(get_executor(None), SerialExecutor)
    assert isinstance(get_executor("threads"), ThreadExecutor)
    ex = SerialExecutor()
    assert get_executor(ex) is ex
    with pytest.raises(RLSIError, match="executor='dask' is not supported; choose one of 'serial', 'threads'"):
        get_executor("dask")
    with pytest.raises(RLSIError, match="n_workers=0 must be >= 1"):
        ThreadExecutor(0)


# ---------------------------------------------------------------------- oracle over many blocks/chunks
@pytest.mark.parametrize("topic_penalty,doc_penalty,lam1,lam2", [("l1", "l2", 0.05, 0.5), ("l2", "l1", 0.3, 0.05)])
def test_paper_oracle_with_many_term_blocks_and_lasso_chunks(monkeypatch, topic_penalty, doc_penalty, lam1, lam2):
    # 300 terms in 24-row blocks (13 term blocks) and 150 documents in 7 document blocks: the block loops
    # and the CSR assembly of U are exercised (the lasso's 64-row chunks: test_lasso_rows_chunks_...).
    rng = np.random.default_rng(5)
    X = sp.random(150, 300, density=0.05, random_state=5, format="csr")
    V0 = rng.standard_normal((150, 4)) * 0.3
    model = BatchRLSI(4, lambda1=lam1, lambda2=lam2, topic_penalty=topic_penalty, doc_penalty=doc_penalty,
                      lambda1_scale="paper", max_iter=4, tol=0, inner_max_iter=5000, inner_tol=1e-12,
                      topic_sweeps=None, tuning=dict(min_block_rows=24, block_entries=24 * 4))  # exact U-steps
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        W = model.fit_transform(X, V_init=V0)
    U, V, objectives = batch_rlsi(X.T.toarray(), V0.T, lam1, lam2, 4, topic_penalty, doc_penalty)
    np.testing.assert_allclose(model.objective_, objectives, rtol=1e-7)
    np.testing.assert_allclose(model.components_.toarray(), U.T, atol=1e-8)
    np.testing.assert_allclose(W, V.T, atol=1e-8)


def test_lasso_rows_chunks_are_independent():
    # more rows than one chunk (64): each row's solution must not depend on the chunking
    S, R = _gram_problem(4, n=200)
    whole, _ = lasso_rows(R, S, None, 1.0, max_iter=1000, tol=1e-12)
    parts = np.vstack([lasso_rows(R[a:a + 37], S, None, 1.0, max_iter=1000, tol=1e-12)[0]
                       for a in range(0, 200, 37)])
    np.testing.assert_array_equal(whole, parts)


# ------------------------------------------------------------------------------------------ driver
class _Quadratic:
    """min (u − 3)² + (v − u)² by exact alternation: u ← (3 + v)/2, v ← u."""

    def __init__(self):
        self.u = self.v = 0.0

    def u_step(self, executor):
        self.u = (3.0 + self.v) / 2.0
        return {"nnz": 1}

    def v_step(self, executor):
        self.v = self.u
        return None

    def objective(self):
        return (self.u - 3) ** 2 + (self.v - self.u) ** 2 + 1.0


def test_driver_stops_at_tol_and_calls_back():
    seen = []
    trace = alternate(_Quadratic(), max_iter=200, tol=1e-6, callback=lambda i, obj, d: seen.append((i, d)))
    assert trace.converged and 5 < trace.n_iter < 200
    assert [i for i, _ in seen] == list(range(1, trace.n_iter + 1)) and seen[0][1] == {"nnz": 1}
    assert np.all(np.diff(trace.objectives) <= 0)


def test_driver_warns_with_the_reached_change():
    with pytest.warns(ConvergenceWarning, match=r"toy stopped at max_iter=3 .*change was .* > tol=1e-12"):
        trace = alternate(_Quadratic(), max_iter=3, tol=1e-12, name="toy")
    assert trace.n_iter == 3 and not trace.converged


# ------------------------------------------------------------------------------------------ base contract
ESTIMATORS = [BatchRLSI(3, max_iter=5), OnlineRLSI(3), LSI(3), PLSI(3, max_iter=5), LDA(3, max_iter=5),
              NMF(3, max_iter=50)]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_one_not_fitted_error(est):
    X = planted_corpus(n_docs=40, n_terms=60)
    with pytest.raises(NotFittedError, match="is not fitted yet") as info:
        est.transform(X)
    assert isinstance(info.value, SkNotFittedError) and isinstance(info.value, RLSIError)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_get_topics_is_consistent_across_models(est):
    X = planted_corpus(n_docs=40, n_terms=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    sparse, dense = est.get_topics(), est.get_topics(dense=True)
    assert sp.issparse(sparse) and sparse.format == "csr" and isinstance(dense, np.ndarray)
    assert dense.shape == (3, 60)
    np.testing.assert_array_equal(sparse.toarray(), dense)
    np.testing.assert_array_equal(est.get_topics("topics", dense=True), dense)
    assert est.topic_groups == {"topics": (0, 3)}
    with pytest.raises(RLSIError, match="group='shared' is not a topic group of this model; it has 'topics'"):
        est.get_topics("shared")


def test_docstrings_on_public_classes():
    for cls in (BatchRLSI, OnlineRLSI, LSI, PLSI, LDA, NMF):
        assert cls.__doc__ and cls.__doc__.lstrip().split()[0] not in ("Shared", "What"), cls
    assert BatchRLSI.__doc__.lstrip().startswith("Batch Regularized Latent Semantic Indexing")


def test_top_level_exports():
    for name in ("BatchRLSI", "OnlineRLSI", "StreamingTfidf", "Searcher", "TfidfVectorizer", "load", "save",
                 "NotFittedError", "LSI", "PLSI", "LDA", "NMF"):
        assert hasattr(rlsi, name), name


def test_topics_prepared_once_per_fit(planted):
    model = BatchRLSI(4, lambda1=1.0, random_state=0, max_iter=5, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(planted)
    assert model.topics_ is model.topics_  # no transpose per access
    model.components_ = model.components_.copy()  # replaced by hand: computed afresh, still right
    np.testing.assert_array_equal(model.topics_.toarray(), model.components_.T.toarray())


def test_saved_state_version_is_checked(tmp_path, planted):
    model = BatchRLSI(4, lambda1=1.0, random_state=0, max_iter=3, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(planted)
    meta, arrays = model._to_state()
    assert meta["state_version"] == 1
    loaded = BatchRLSI._from_state(meta, arrays)
    np.testing.assert_array_equal(loaded.transform(planted), model.transform(planted))
    with pytest.raises(RLSIError, match="state version 99 is not supported"):
        BatchRLSI._from_state({**meta, "state_version": 99}, arrays)
    with pytest.raises(RLSIError, match="unknown fitted value 'evil_'"):
        BatchRLSI._from_state({**meta, "fitted": {**meta["fitted"], "evil_": 1}}, arrays)
    with pytest.raises(RLSIError, match="lambda2=-1"):
        BatchRLSI._from_state({**meta, "params": {**meta["params"], "lambda2": -1}}, arrays)


# ------------------------------------------------------------------------------------------ one folding-in
def test_ridge_folding_is_the_models_fold_in(planted):
    model = BatchRLSI(4, lambda1=1.0, lambda2=0.3, random_state=0, max_iter=10, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(planted)
    np.testing.assert_array_equal(RidgeFolding(model, 0.3).transform(planted), model.transform(planted))
    lsi = LSI(4).fit(planted)
    C = lsi.components_
    expected = np.linalg.solve(C @ C.T + 2.0 * np.eye(4), (planted @ C.T).T).T
    np.testing.assert_allclose(RidgeFolding(lsi, 2.0).transform(planted), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fold_in(planted, C.T, lam=2.0), expected, rtol=1e-10, atol=1e-12)
