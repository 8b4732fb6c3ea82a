"""The released code's dictionary solver (projected L-BFGS on the simplex): its gradient is Lemma 1's, its
steps decrease the loss and stay on the floored simplex, it reaches the minimiser the majorise–minimise
steps reach, and its numbers do not depend on the threads."""

import numpy as np
import pytest

from rlsi.models.stc import SparseTopicalCoding, dictionary
from rlsi.oracle import stc as oracle

from conftest import in_numba_threads
from models.stc._stc_synth import planted_counts


def _problem(seed=0, K=3):
    X, _ = planted_counts(n_docs=30, seed=seed)
    rng = np.random.default_rng(seed)
    beta = rng.uniform(0.1, 1.0, (K, X.shape[1]))
    beta /= beta.sum(axis=1, keepdims=True)
    S = rng.uniform(0, 3, (X.nnz, K)) * (rng.random((X.nnz, K)) < 0.7)
    return X, beta, S


def test_loss_and_gradient_match_the_oracle():
    X, beta, S = _problem()
    ptr, order = dictionary.term_order(X)
    G = np.empty((X.shape[1], 3))
    f = dictionary.loss_and_gradient(ptr, order, X.data, np.ascontiguousarray(beta.T), S, 1e-3, G)
    Sd = [S[X.indptr[d]:X.indptr[d + 1]] for d in range(X.shape[0])]
    np.testing.assert_allclose(G.T, oracle.gradient(X, beta, Sd, eps=1e-3), rtol=1e-10, atol=1e-10)
    recon = np.einsum("pk,kp->p", S, beta[:, X.indices]) + 1e-3
    assert f == pytest.approx(np.sum(recon - X.data * np.log(recon)), rel=1e-12)


def test_projection_on_the_floored_simplex():
    rng = np.random.default_rng(1)
    V = rng.normal(0, 1, (4, 50))
    P = dictionary.project_floor_rows(V, 1e-6)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert P.min() >= 1e-6 * (1 - 1e-12)
    for v, p in zip(V, P):  # the floored projection is floor + the simplex projection of the shifted point
        z = 1 - 50e-6
        np.testing.assert_allclose(p, 1e-6 + z * oracle.project_simplex((v - 1e-6) / z), atol=1e-12)


def test_lbfgs_decreases_the_loss_and_reaches_the_minimiser():
    X, beta, S = _problem(2)
    new, losses = dictionary.lbfgs_dictionary(X, beta, S, 1e-3, max_steps=400, tol=1e-13, floor=1e-30)
    assert np.all(np.diff(losses) <= 1e-9 * abs(losses[0]))
    np.testing.assert_allclose(new.sum(axis=1), 1.0, rtol=1e-12)
    ref = np.array(beta)  # majorise–minimise steps decrease the same convex loss to its minimum
    Sd = [S[X.indptr[d]:X.indptr[d + 1]] for d in range(X.shape[0])]
    for _ in range(3000):
        ref = oracle.mm_dictionary_step(X, ref, Sd, eps=1e-3)
    ptr, order = dictionary.term_order(X)
    G = np.empty((X.shape[1], 3))
    f_ref = dictionary.loss_and_gradient(ptr, order, X.data, np.ascontiguousarray(ref.T), S, 1e-3, G)
    assert losses[-1] <= f_ref + 1e-7 * abs(f_ref)
    assert losses[-1] < losses[0]


def test_lbfgs_fit_needs_the_word_codes_and_is_thread_independent(request):
    X, _ = planted_counts(n_docs=60, seed=3)
    with pytest.raises(Exception, match="keep_word_codes"):
        SparseTopicalCoding(3, dictionary_step="lbfgs").fit(X)
    if not in_numba_threads(request):
        return  # compared in a child with two numba threads
    fits = [SparseTopicalCoding(3, dictionary_step="lbfgs", keep_word_codes=True, max_iter=4, n_jobs=j).fit(X)
            for j in (1, 2)]
    np.testing.assert_array_equal(fits[0].components_, fits[1].components_)
    np.testing.assert_array_equal(fits[0].doc_codes_, fits[1].doc_codes_)
    assert all(np.diff(fits[0].objective_) <= 1e-9 * abs(fits[0].objective_[0]))


def test_projection_with_row_masses_is_the_scaled_simplex_projection():
    rng = np.random.default_rng(4)
    V = rng.normal(0, 1, (3, 20))
    mass = np.array([0.2, 1.0, 0.05])
    P = dictionary.project_mass_rows(V, 1e-30, mass)
    np.testing.assert_allclose(P.sum(axis=1), mass, rtol=1e-12)
    for v, p, m in zip(V, P, mass):
        np.testing.assert_allclose(p, m * oracle.project_simplex(v / m), atol=1e-14)
    np.testing.assert_array_equal(dictionary.project_mass_rows(V, 1e-6), dictionary.project_floor_rows(V, 1e-6))


def test_lbfgs_with_row_masses_keeps_them_and_decreases_the_loss():
    X, beta, S = _problem(5)
    part = beta * np.array([0.3, 0.6, 0.9])[:, None]  # the columns of X are a part of a larger vocabulary
    new, losses = dictionary.lbfgs_dictionary(X, part, S, 1e-3, mass=part.sum(axis=1), max_steps=50, tol=1e-12)
    np.testing.assert_allclose(new.sum(axis=1), [0.3, 0.6, 0.9], rtol=1e-12)
    assert new.min() > 0 and np.all(np.diff(losses) <= 1e-9 * abs(losses[0])) and losses[-1] < losses[0]
