"""The closed-form updates of STC are the exact minimisers of their 1-D problems; the simplex projection
is exact; the numba sweep matches the plain-numpy oracle of the printed algorithm."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize, minimize_scalar

from rlsi.models.stc import kernels, simplex
from rlsi.oracle import stc as oracle

from models.stc._stc_synth import planted_counts


def _argmin_bounded(g, hi):
    res = minimize_scalar(g, bounds=(0.0, hi), method="bounded", options={"xatol": 1e-12, "maxiter": 2000})
    # the bounded search never evaluates the end point 0 exactly; compare with it
    return 0.0 if g(0.0) <= res.fun else res.x


@pytest.mark.parametrize("seed", range(40))
def test_word_code_update_is_the_minimiser(seed):
    rng = np.random.default_rng(seed)
    w = float(rng.integers(1, 20))
    beta = float(rng.choice([0.0, rng.uniform(1e-4, 0.5)]))
    mu = float(rng.uniform(1e-4, 3.0))
    q = float(rng.uniform(1e-3, 1.0))
    h = float(rng.uniform(0.0, 2.0))
    rho = float(rng.uniform(0.0, 0.5))

    def g(x):
        return beta * x - w * np.log(mu + beta * x) + 0.5 * q * x * x + (rho - h) * x

    x = kernels.word_code_update(w, beta, mu, q, h, rho)
    hi = max(10.0, 4 * x + 10)
    ref = _argmin_bounded(g, hi)
    assert x >= 0
    assert g(x) <= g(ref) + 1e-9 * max(1.0, abs(g(ref)))
    assert abs(x - ref) <= 1e-5 * max(1.0, abs(ref))


def _doc_objective(w, s, B_cols, theta, eps, lam, gamma, rho):
    recon = np.einsum("nk,kn->n", s, B_cols) + eps
    return (np.sum(recon - w * np.log(recon)) + 0.5 * lam * theta @ theta
            + 0.5 * gamma * np.sum((s - theta) ** 2) + rho * s.sum())


@pytest.mark.parametrize("seed", range(10))
def test_collapsed_update_minimises_the_profiled_objective(seed):
    """CSTC: the word-code update minimises min_θ f(s, θ) along one coordinate (θ marginalised)."""
    rng = np.random.default_rng(seed)
    n, K = 4, 3
    w = rng.integers(1, 6, n).astype(float)
    B_cols = rng.uniform(0.01, 0.3, (K, n))
    s = rng.uniform(0, 5, (n, K))
    eps, lam, gamma, rho = 1e-3, rng.uniform(0.01, 1), rng.uniform(0.05, 1), rng.uniform(0, 0.3)
    i, k = rng.integers(n), rng.integers(K)

    def profiled(x):
        t = s.copy()
        t[i, k] = x
        theta = gamma * t.sum(axis=0) / (lam + gamma * n)  # the exact minimiser over θ (θ ≥ 0 holds)
        return _doc_objective(w, t, B_cols, theta, eps, lam, gamma, rho)

    bprime = gamma ** 2 / (2 * (lam + gamma * n))
    mu = s[i] @ B_cols[:, i] - s[i, k] * B_cols[k, i] + eps
    x = kernels.word_code_update(w[i], B_cols[k, i], mu, gamma - 2 * bprime,
                                 2 * bprime * (s[:, k].sum() - s[i, k]), rho)
    ref = _argmin_bounded(profiled, max(50.0, 4 * x))
    assert profiled(x) <= profiled(ref) + 1e-9
    assert abs(x - ref) <= 1e-5 * max(1.0, ref)


@pytest.mark.parametrize("prior", ["normal", "laplace"])
def test_document_code_update_is_the_minimiser(prior):
    rng = np.random.default_rng(3)
    n, lam, gamma = 7, 0.3, 0.2
    s_col = rng.uniform(0, 2, n)
    s_col[:3] = 0.0

    def g(t):
        pen = 0.5 * lam * t * t if prior == "normal" else lam * t
        return pen + 0.5 * gamma * np.sum((s_col - t) ** 2)

    if prior == "normal":
        theta = gamma / (lam / n + gamma) * s_col.mean()  # Eq. (8)
    else:
        theta = max(0.0, s_col.mean() - lam / (gamma * n))  # Eq. (9)
    ref = _argmin_bounded(g, 10.0)
    assert abs(theta - ref) < 1e-6
    # the kernel applies the same update: one document, word codes held fixed by β = 0 and ρ = γθ
    assert g(theta) <= g(ref) + 1e-12


def test_hinge_document_code_is_the_minimiser():
    rng = np.random.default_rng(5)
    K, L = 3, 4
    eta = rng.normal(0, 1, (L, K))
    m = rng.uniform(0, 2, K)
    A, c, delta, yd = 1.5, 0.8, 2.0, 1
    theta = np.zeros(K)
    kernels._theta_hinge(theta, m, A, c, eta, yd, delta, 3000)

    def F(t):
        v = [(delta if y != yd else 0.0) + (eta[y] - eta[yd]) @ t for y in range(L)]
        return 0.5 * A * np.sum((t - m) ** 2) + c * max(v)

    # epigraph form solved by SLSQP as the reference
    cons = [{"type": "ineq", "fun": (lambda z, y=y: z[K] - (delta if y != yd else 0.0) - (eta[y] - eta[yd]) @ z[:K])}
            for y in range(L)]
    res = minimize(lambda z: 0.5 * A * np.sum((z[:K] - m) ** 2) + c * z[K], np.r_[m, 10.0], method="SLSQP",
                   constraints=cons, bounds=[(0, None)] * K + [(None, None)], options={"ftol": 1e-14, "maxiter": 500})
    assert np.all(theta >= 0)
    assert F(theta) <= F(res.x[:K]) + 1e-6
    np.testing.assert_allclose(theta, res.x[:K], atol=1e-4)


@pytest.mark.parametrize("seed", range(20))
def test_simplex_projection_is_exact(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    v = rng.normal(0, 1, n) * rng.choice([0.1, 1.0, 10.0])
    out = simplex.project_simplex_rows(v[None, :].copy())[0]
    # reference: the QP min ‖x − v‖² on the simplex by SLSQP
    res = minimize(lambda x: np.sum((x - v) ** 2), np.full(n, 1.0 / n), jac=lambda x: 2 * (x - v),
                   method="SLSQP", bounds=[(0, None)] * n,
                   constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1.0}],
                   options={"ftol": 1e-15, "maxiter": 1000})
    assert out.min() >= 0 and abs(out.sum() - 1.0) < 1e-12
    np.testing.assert_allclose(out, res.x, atol=1e-6)
    # KKT: out = max(v − τ, 0) for one τ
    tau = (v - out)[out > 0]
    assert np.ptp(tau) < 1e-12
    assert np.all(v[out == 0] <= tau[0] + 1e-12)


def _start(X, K, seed):
    rng = np.random.default_rng(seed)
    beta = rng.random((K, X.shape[1])) + 0.05
    beta /= beta.sum(axis=1, keepdims=True)
    theta = rng.uniform(0, 2, (X.shape[0], K))
    S = rng.uniform(0, 3, (X.nnz, K)) * (rng.random((X.nnz, K)) < 0.6)
    return beta, theta, S


@pytest.mark.parametrize("prior", ["normal", "laplace"])
def test_numba_sweep_matches_the_oracle(prior):
    X, _ = planted_counts(n_docs=15, seed=1)
    X = sp.vstack([X, sp.csr_matrix((1, X.shape[1]))]).tocsr()  # and an empty document
    K = 3
    beta, theta, S = _start(X, K, 2)
    par = dict(eps=1e-3, lam=0.05, gamma=0.1, rho=0.02)
    ref_theta, ref_S = oracle.coding_sweep(X, beta, theta, [S[X.indptr[d]:X.indptr[d + 1]] for d in range(X.shape[0])],
                                           prior=prior, **par)
    runs = []
    for n_buf in (1, 2, 5):  # 5 runs of documents, 1, 2 or 5 at a time (a last wave of one run for 2)
        th, SS = theta.copy(), S.copy()
        # field types as the model passes them: other types are a numba signature of their own, compiled
        # for this test alone (about 30 s in CI)
        cfg = kernels.Coding(par["eps"], par["lam"], par["gamma"], par["rho"], kernels.PRIORS_BY_NAME[prior],
                             False, 1, 0.0, kernels.START_SCALED, True, True)
        hinge = kernels.Hinge(np.zeros((0, K)), np.zeros(0, np.int64), 0.0, 0.0, 50, False)
        chunks = kernels.Runs(True, np.arange(X.shape[1], dtype=np.int64), X.shape[1], 5, n_buf)
        out = kernels.code_corpus((X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data),
                                  np.ascontiguousarray(beta.T), th, SS, cfg, hinge, chunks)
        runs.append((th, SS) + out)
    for other in runs[1:]:  # the statistics are summed in run order whatever the buffers: bit-identical
        for a, b in zip(runs[0], other):
            np.testing.assert_array_equal(a, b)
    th, SS, G, B, f, sweeps, zeros = runs[0]
    np.testing.assert_allclose(SS, np.vstack(ref_S), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(th, ref_theta, rtol=1e-9, atol=1e-12)
    ref_G = oracle.gradient(X, beta, ref_S, eps=par["eps"])
    np.testing.assert_allclose(G, ref_G, rtol=1e-9, atol=1e-9)
    assert zeros.sum() == np.sum(np.vstack(ref_S) == 0)


def test_dictionary_step_matches_the_oracle():
    from rlsi.models.stc import SparseTopicalCoding

    X, _ = planted_counts(n_docs=10, seed=4)
    beta, _, S = _start(X, 3, 4)
    Slist = [S[X.indptr[d]:X.indptr[d + 1]] for d in range(X.shape[0])]
    G = oracle.gradient(X, beta, Slist, eps=1e-3)
    model = SparseTopicalCoding(3, eps=1e-3, normalize_gradient=False, dictionary_step="projected")
    got = model._dictionary_step(beta, G, np.zeros_like(G), X.shape[0], 0.7)
    np.testing.assert_allclose(got, oracle.dictionary_step(X, beta, Slist, 0.7, eps=1e-3), atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_mm_row_is_the_minimiser_of_its_surrogate(seed):
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    n = 7
    beta = rng.dirichlet(np.ones(n))
    A = rng.uniform(0.1, 5.0, n)
    B = rng.uniform(0.0, 50.0, n) * (rng.random(n) < 0.8)
    B[0] = 3.0  # at least one term with code mass
    out = np.empty(n)
    simplex.mm_row(beta, A, B, out)
    T = beta * B
    on = T > 0

    def surrogate(b):
        return float(np.sum(A[on] * b) - np.sum(T[on] * np.log(b)))

    assert out.min() >= 0 and out.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(out[~on] == 0)
    ref = minimize(surrogate, np.full(on.sum(), 1.0 / on.sum()), method="SLSQP",
                   bounds=[(1e-12, 1.0)] * on.sum(),
                   constraints=[{"type": "eq", "fun": lambda b: b.sum() - 1.0}],
                   options={"ftol": 1e-14, "maxiter": 500})
    assert surrogate(out[on]) <= ref.fun + 1e-9
    np.testing.assert_allclose(out[on], ref.x, atol=1e-5)


def test_mm_row_copies_a_row_without_code_mass():
    beta = np.array([0.5, 0.25, 0.25])
    out = np.empty(3)
    simplex.mm_row(beta, np.zeros(3), np.zeros(3), out)
    np.testing.assert_array_equal(out, beta)


def test_mm_dictionary_step_matches_the_oracle_and_decreases_the_loss():
    from rlsi.models.stc import SparseTopicalCoding

    X, _ = planted_counts(n_docs=12, seed=5)
    beta, _, S = _start(X, 3, 6)
    eps = 1e-3
    Slist = [S[X.indptr[d]:X.indptr[d + 1]] for d in range(X.shape[0])]
    ref = oracle.mm_dictionary_step(X, beta, Slist, eps=eps)
    # the statistics as the coding kernel returns them, from the oracle's formulas
    G = oracle.gradient(X, beta, Slist, eps=eps)
    P = sp.csr_matrix((np.ones(X.nnz), X.indices, np.arange(X.nnz + 1)), shape=(X.nnz, X.shape[1]))
    A = np.asarray((P.T @ S).T)
    model = SparseTopicalCoding(3, eps=eps, dictionary_step="mm")
    got = model._dictionary_step(beta, G, A - G, X.shape[0], 1.0)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data)
    before = kernels.poisson_loss(args, np.ascontiguousarray(beta.T), S, eps)
    after = kernels.poisson_loss(args, np.ascontiguousarray(got.T), S, eps)
    assert after < before
    # a blended step (online, α < 1) stays on the simplex and decreases the loss too (convexity)
    half = model._dictionary_step(beta, G, A - G, X.shape[0], 0.5)
    np.testing.assert_allclose(half, 0.5 * beta + 0.5 * got, atol=1e-15)
    assert kernels.poisson_loss(args, np.ascontiguousarray(half.T), S, eps) < before


def _hinge_reference(m, A, c, eta, yd, delta):
    """argmin_{θ≥0} (A/2)‖θ − m‖² + c max_y [Δ·1(y≠y_d) + (η_y − η_{y_d})ᵀθ] by SLSQP on the epigraph form."""
    K, L = m.shape[0], eta.shape[0]
    cons = [{"type": "ineq", "fun": (lambda z, y=y: z[K] - (delta if y != yd else 0.0) - (eta[y] - eta[yd]) @ z[:K])}
            for y in range(L)]
    res = minimize(lambda z: 0.5 * A * np.sum((z[:K] - m) ** 2) + c * z[K], np.r_[m, 2 * delta], method="SLSQP",
                   constraints=cons, bounds=[(0, None)] * K + [(None, None)],
                   options={"ftol": 1e-15, "maxiter": 1000})
    return res.x[:K]


def test_hinge_document_code_converges_at_medstc_scale():
    """MedSTC's coding pass (the model's own ``_code``, as ``fit`` calls it) returns for every training
    document the exact minimiser of its θ-problem given its final word codes — at the paper's Δ = 3600 with
    η of the size the η step produces (Δ times SVM weights). Before the fix the dual ascent was stopped at
    50 plain iterations, far from the minimiser at this scale."""
    from rlsi.models.stc import MedSTC

    X, y = planted_counts(n_docs=12, n_topics=4, words_per_topic=6, seed=3)
    from rlsi.models.stc.settings import stc_params

    model = MedSTC(**stc_params("printed", MedSTC, n_components=4, delta=3600.0, C=1.0, max_sweeps=30, tol=1e-9))
    model.classes_ = np.arange(4)
    model.n_features_in_ = X.shape[1]
    rng = np.random.default_rng(0)
    model.coef_ = 3600.0 * rng.normal(0.0, 0.5, (4, 4))
    beta = model._init_beta(X.shape[1], X)
    theta = np.zeros((X.shape[0], 4))
    S = np.zeros((X.nnz, 4))
    model._code(X, beta, theta, S=S, want_grad=False, **model._supervision(y))
    shifted = 0
    for d in range(X.shape[0]):
        a, b = X.indptr[d], X.indptr[d + 1]
        A = model.lam + model.gamma * (b - a)
        m = model.gamma * S[a:b].sum(axis=0) / A
        ref = _hinge_reference(m, A, model.C, model.coef_, y[d], model.delta)
        np.testing.assert_allclose(theta[d], ref, atol=1e-3 * (1 + np.abs(ref).max()))
        shifted += not np.allclose(ref, np.maximum(m, 0), atol=1e-3)
    assert shifted >= X.shape[0] // 2  # the hinge is active: the test is not about θ = m


def _converged_reference(X, beta, *, sweeps, **par):
    """θ of the plain-numpy coding (oracle sweeps from codes 1/K and θ = 0) run until θ stops moving."""
    K = beta.shape[0]
    theta = np.zeros((X.shape[0], K))
    S = [np.full((X.indptr[d + 1] - X.indptr[d], K), 1.0 / K) for d in range(X.shape[0])]
    for _ in range(sweeps):
        new, S = oracle.coding_sweep(X, beta, theta, S, **par)
        done = np.max(np.abs(new - theta)) <= 1e-13 * max(1.0, np.max(np.abs(new)))
        theta = new
        if done:
            break
    return theta


@pytest.mark.parametrize("tiny", [1e-30, 1e-12])
def test_transform_is_the_reference_coding_when_a_term_has_a_tiny_beta_column(tiny):
    """A term whose β column is tiny (the released solver floors β at 1e-30) must not spoil its document's
    θ. An uncapped cold start w / (K Σ_k β_kn) puts that term's codes at ~1e29, and a θ taken from a running
    sum of the codes keeps their rounding error when they fall to 0 (θ of ~1e13 or 0). The document's problem
    is convex, so θ from transform is the minimiser the slow reference reaches."""
    from rlsi.models.stc import SparseTopicalCoding

    X, _ = planted_counts(n_docs=12, n_topics=3, words_per_topic=5, noise_terms=3, seed=4)
    K = 3
    rng = np.random.default_rng(0)
    beta = rng.uniform(0.2, 1.0, (K, X.shape[1]))
    beta[:, 0] = tiny  # term 0: in most documents of planted topic 0
    beta /= beta.sum(axis=1, keepdims=True)
    par = dict(eps=1e-3, lam=0.2, gamma=0.2, rho=0.01)  # the released settings in this convention
    model = SparseTopicalCoding(K, max_iter=1, max_sweeps=20000, tol=1e-14, **par).fit(X)
    model._set_components(beta)
    theta = model.transform(X)
    ref = _converged_reference(X, beta, sweeps=20000, **par)
    assert np.all(np.isfinite(theta))
    np.testing.assert_allclose(theta, ref, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("beta, A, B", [
    ([1.0], [2.9e-20], [5.8e-37]),
    ([1.0, 6.68e-17], [6.36e-5, 7.0e-7], [3.3e-38, 2.84e-26]),
    ([0.5, 0.5], [1.0, 1e-30], [1e-20, 1e-45]),
])
def test_mm_row_when_the_responsibilities_are_far_below_the_code_mass(beta, A, B):
    """Σ T far below min A (a topic with a little code mass on a term whose responsibilities underflow, as in
    online MedSTC at the released settings): the bracket ``[−min A, −min A + Σ T]`` of ν collapsed in
    rounding and the next division was by zero (ZeroDivisionError). The row is still the surrogate's
    minimiser: of the form T/(D + u) (D = A − min A, u > 0 the distance to the pole), summing to 1."""
    beta, A, B = (np.array(v, dtype=np.float64) for v in (beta, A, B))
    out = np.empty_like(beta)
    simplex.mm_row(beta, A, B, out)
    assert np.all(np.isfinite(out)) and out.min() >= 0
    assert out.sum() == pytest.approx(1.0, rel=1e-12)
    T = beta * B
    D = A - A[T > 0].min()
    # the minimiser has the form T/(D + u): its ratios to the entry at the pole are fixed by u
    k = int(np.argmin(np.where(T > 0, D, np.inf)))
    assert out[k] > 0
    u = T[k] / out[k]
    np.testing.assert_allclose(out, T / (D + u), rtol=1e-9)
