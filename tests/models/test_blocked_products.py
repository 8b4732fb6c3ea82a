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


#: One chunk, no dense rows: the plain products.
PLAIN = products.ProductBlocks(chunk_bytes=1 << 40, dense_row_share=np.inf)
#: Chunks of a few rows, tiles of 8 rows, rows with more than half of K entries added densely.
SMALL = products.ProductBlocks(chunk_bytes=200, tile_bytes=8, dense_row_share=0.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_blocked_products_give_the_products_of_a_fit_bit_for_bit(dtype):
    """On the matrices of a fit (its X, D = Xᵀ, W and sparse U), the blocked products equal the plain ones
    bit for bit: R = D W (every row, a masked block, a taken set of rows) and the V-step's Φ = X U with the
    whole V-step on top. A fit is a fixed sequence of these products, so its numbers do not depend on the
    blocking (the default blocking is one of them)."""
    X = planted_corpus(n_docs=300, n_terms=150, seed=5, dtype=dtype)
    model, W = _fit(X, lambda1=0.3)
    W = W.astype(dtype)
    U = model.components_.T.tocsr().astype(dtype)
    D = X.T.tocsr()
    plan = products.sparse_plan(U, dtype, blocks=SMALL)
    assert len(plan.bounds) > 3 and 0 < len(plan.dense) < np.count_nonzero(np.diff(U.indptr))  # both paths
    np.testing.assert_array_equal(products.csr_dense(D, W, blocks=SMALL), products.csr_dense(D, W, blocks=PLAIN))
    mask = np.arange(150) % 3 > 0
    np.testing.assert_array_equal(products.csr_dense_rows_max(D, 0, 150, W, mask, blocks=SMALL)[0],
                                  products.csr_dense_rows_max(D, 0, 150, W, mask, blocks=PLAIN)[0])
    rows = np.array([149, 3, 0, 77, 3], dtype=np.int64)
    np.testing.assert_array_equal(products.csr_dense_take(D, rows, W, blocks=SMALL)[0],
                                  products.csr_dense_take(D, rows, W, blocks=PLAIN)[0])
    np.testing.assert_array_equal(products.csr_csr_dense(X, U, plan=plan),
                                  products.csr_csr_dense(X, U, blocks=PLAIN))
    kw = dict(penalty="l2", lam=1.0, G=steps.topic_gram(U), block_entries=40 * U.shape[1])
    W_small, cross_small = steps.update_doc_vectors(X, U, product_blocks=SMALL, **kw)
    W_plain, cross_plain = steps.update_doc_vectors(X, U, product_blocks=PLAIN, **kw)
    np.testing.assert_array_equal(W_small, W_plain)
    assert cross_small == cross_plain


def test_doc_vectors_from_a_shared_plan_equal_those_of_dense_topics():
    X = planted_corpus(n_docs=200, n_terms=120, seed=6)
    model, _ = _fit(X, lambda1=0.3)
    U = model.components_.T.tocsr()
    blocks = products.ProductBlocks(chunk_bytes=100, dense_row_share=0.2)
    # several blocks share one plan; one G for both (scipy's and BLAS's UᵀU differ in rounding)
    kw = dict(penalty="l2", lam=1.0, block_entries=40 * U.shape[1], G=steps.topic_gram(U), product_blocks=blocks)
    W_sparse, cross_sparse = steps.update_doc_vectors(X, U, **kw)
    W_dense, cross_dense = steps.update_doc_vectors(X, U.toarray(), **kw)
    np.testing.assert_array_equal(W_sparse, W_dense)  # Φ: the same sums
    assert cross_sparse == cross_dense
