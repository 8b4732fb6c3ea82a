"""The cache-blocked products (tiles x chunks, dense rows of sparse topics; rlsi.kernels.products) leave a
batch fit bit-identical: the U-step's R = D W and the V-step's Φ = X U add the same terms in the same order."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from rlsi import BatchRLSI
from rlsi.kernels import products
from rlsi.models import steps

from conftest import planted_corpus


def _fit(X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = BatchRLSI(6, random_state=0, max_iter=6, tol=0, topic_representation="sparse", **kw)
        return model.fit(X), model.transform(X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_blocked_products_give_the_fit_of_the_plain_products(monkeypatch, dtype):
    X = planted_corpus(n_docs=300, n_terms=150, seed=5, dtype=dtype)
    # plain: one chunk, no dense rows
    monkeypatch.setattr(products, "CHUNK_BYTES", 1 << 40)
    monkeypatch.setattr(products, "DENSE_ROW_SHARE", np.inf)
    plain, W_plain = _fit(X, lambda1=0.3)
    # blocked: chunks of a few rows, tiles of 8 rows, rows with more than half of K entries added densely
    monkeypatch.setattr(products, "CHUNK_BYTES", 200)
    monkeypatch.setattr(products, "TILE_BYTES", 8)
    monkeypatch.setattr(products, "DENSE_ROW_SHARE", 0.5)
    U = plain.components_.T.tocsr()
    plan = products.sparse_plan(U, dtype)
    assert len(plan.bounds) > 3 and 0 < len(plan.dense) < np.count_nonzero(np.diff(U.indptr))  # both paths
    blocked, W_blocked = _fit(X, lambda1=0.3)
    np.testing.assert_array_equal(blocked.objective_, plain.objective_)
    np.testing.assert_array_equal(blocked.components_.toarray(), plain.components_.toarray())
    np.testing.assert_array_equal(W_blocked, W_plain)


def test_doc_vectors_from_a_shared_plan_equal_those_of_dense_topics(monkeypatch):
    X = planted_corpus(n_docs=200, n_terms=120, seed=6)
    model, _ = _fit(X, lambda1=0.3)
    U = model.components_.T.tocsr()
    monkeypatch.setattr(products, "CHUNK_BYTES", 100)
    monkeypatch.setattr(products, "DENSE_ROW_SHARE", 0.2)
    # several blocks share one plan; one G for both (scipy's and BLAS's UᵀU differ in rounding)
    kw = dict(penalty="l2", lam=1.0, block_entries=40 * U.shape[1], G=steps.topic_gram(U))
    W_sparse, cross_sparse = steps.update_doc_vectors(X, U, **kw)
    W_dense, cross_dense = steps.update_doc_vectors(X, U.toarray(), **kw)
    np.testing.assert_array_equal(W_sparse, W_dense)  # Φ: the same sums
    assert cross_sparse == cross_dense
