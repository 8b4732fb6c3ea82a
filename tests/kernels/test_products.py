import numpy as np
import pytest
import scipy.sparse as sp

from rlsi.kernels.products import csr_csr_dense, csr_dense


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_match_scipy(dtype):
    A = sp.random(40, 30, density=0.2, random_state=0, format="csr", dtype=dtype)
    B = np.random.default_rng(1).standard_normal((30, 7)).astype(dtype)
    Bs = sp.random(30, 7, density=0.3, random_state=2, format="csr", dtype=dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(csr_dense(A, B), A.toarray() @ B, rtol=tol, atol=tol)
    np.testing.assert_allclose(csr_csr_dense(A, Bs), A.toarray() @ Bs.toarray(), rtol=tol, atol=tol)
    assert csr_dense(A, B).dtype == dtype


def test_empty_rows_give_zero_rows():
    A = sp.csr_matrix((3, 4))
    out = csr_dense(A, np.ones((4, 2)))
    assert out.shape == (3, 2) and np.all(out == 0)
