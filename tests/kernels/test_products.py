"""The sparse x dense kernels of rlsi.kernels.products against scipy/numpy on random inputs.

Every kernel is checked on float32 and float64, with empty rows, all-zero columns, int32 and int64 index
arrays, non-contiguous arrays, blocks of zero rows, row ranges a..b that do not start at 0, and for
thread-count independence (the kernels parallelise over output rows and promise deterministic results).
"""

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from rlsi.kernels import products
from rlsi.kernels.convert import csr_rows_to_dense, csr_take_dense, dense_rows_to_csr, dense_to_csr
from rlsi.kernels.products import (csr_csr_dense, csr_dense, csr_dense_rows, csr_dense_rows_f64, csr_dense_rows_max,
                                   csr_dense_take, csr_gram)
from rlsi.kernels.rows import dot_sum

DTYPES = [np.float32, np.float64]
# (value dtype, index dtype): each pair is a separate numba compilation (about 2 s each on a cold cache),
# so 64-bit indices, which only very large matrices have, are checked with float64 values only
DTYPE_INDEX = [(np.float32, np.int32), (np.float64, np.int32), (np.float64, np.int64)]


def tolerance(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


def random_csr(n, m, density=0.3, dtype=np.float64, seed=0, index_dtype=np.int32):
    """Random CSR (n x m) with rows 1 and n-2 empty and columns 0 and m-1 all zero (when they exist),
    sorted indices, no duplicates, indices/indptr of ``index_dtype``."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, m)) * (rng.random((n, m)) < density)
    for i in (1, n - 2):
        if 0 <= i < n:
            A[i] = 0.0
    if m:
        A[:, [0, m - 1]] = 0.0
    A = sp.csr_matrix(A.astype(dtype))
    A.indices = A.indices.astype(index_dtype)
    A.indptr = A.indptr.astype(index_dtype)
    return A


def strided(a):
    """A non-contiguous view of the same values as ``a`` (every other element of a bigger array)."""
    big = np.zeros((a.shape[0], 2 * a.shape[1]) if a.ndim == 2 else (2 * a.shape[0],), dtype=a.dtype)
    view = big[:, ::2] if a.ndim == 2 else big[::2]
    view[...] = a
    assert a.size == 0 or not view.flags["C_CONTIGUOUS"]
    return view


def strided_csr(A):
    """The same matrix with non-contiguous data and indices arrays (scipy keeps the views)."""
    B = sp.csr_matrix((strided(A.data), strided(A.indices), A.indptr), shape=A.shape, copy=False)
    assert A.nnz == 0 or not B.data.flags["C_CONTIGUOUS"]
    return B


@pytest.fixture
def single_thread():
    """Run a block with one numba thread, restoring the previous count."""
    previous = numba.get_num_threads()

    class Switch:
        def __enter__(self):
            numba.set_num_threads(1)

        def __exit__(self, *exc):
            numba.set_num_threads(previous)

    return Switch()


# ------------------------------------------------------------------ dense_to_csr
def assert_same_csr(got, expected):
    """Same shape, structure (sorted indices, no stored zeros), values and dtype as scipy's conversion."""
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    np.testing.assert_array_equal(got.data, expected.data)
    assert got.indices.dtype == got.indptr.dtype


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(37, 11), (1, 5), (5, 1), (0, 4), (4, 0), (0, 0), (200, 3)])
def test_dense_to_csr_matches_scipy(dtype, shape):
    A = random_csr(*shape, dtype=dtype, seed=sum(shape)).toarray()
    got = dense_to_csr(A)
    assert_same_csr(got, sp.csr_matrix(A))
    assert got.indices.dtype == np.int32  # small matrices get 32-bit indices
    assert got.has_canonical_format or got.nnz == 0
    np.testing.assert_array_equal(got.toarray(), A)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dense_to_csr_non_contiguous_and_signed_zero(dtype):
    A = random_csr(30, 9, dtype=dtype, seed=3).toarray()
    A[2, 3] = -0.0  # a negative zero is a zero: not stored
    for view in (strided(A), np.asfortranarray(A), A.T.copy().T):
        assert_same_csr(dense_to_csr(view), sp.csr_matrix(A))
    assert dense_to_csr(A)[2, 3] == 0 and dense_to_csr(A).nnz == np.count_nonzero(A)


def test_dense_to_csr_does_not_modify_its_input():
    A = random_csr(20, 6, seed=4).toarray()
    before = A.copy()
    dense_to_csr(A)
    np.testing.assert_array_equal(A, before)


# ------------------------------------------------------------------ csr_rows_to_dense
@pytest.mark.parametrize("dtype, index_dtype", DTYPE_INDEX)
@pytest.mark.parametrize("a, b", [(0, 40), (0, 0), (7, 23), (23, 23), (39, 40), (1, 2), (5, 40)])
def test_csr_rows_to_dense_matches_scipy_slices(dtype, index_dtype, a, b):
    A = random_csr(40, 13, dtype=dtype, seed=a + b, index_dtype=index_dtype)
    got = csr_rows_to_dense(A, a, b)
    assert got.shape == (b - a, 13) and got.dtype == dtype and got.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(got, A[a:b].toarray())


@pytest.mark.parametrize("out_dtype", DTYPES)
def test_csr_rows_to_dense_dtype_argument(out_dtype):
    A = random_csr(25, 8, dtype=np.float64, seed=9)
    got = csr_rows_to_dense(A, 3, 17, dtype=out_dtype)
    assert got.dtype == out_dtype
    np.testing.assert_array_equal(got, A[3:17].toarray().astype(out_dtype))


@pytest.mark.parametrize("shape", [(6, 0), (0, 5)])
def test_csr_rows_to_dense_degenerate_shapes(shape):
    A = sp.csr_matrix(shape)
    assert csr_rows_to_dense(A, 0, shape[0]).shape == shape


def test_csr_rows_to_dense_sums_duplicates_as_scipy():
    A = sp.csr_matrix((np.array([1.0, 2.0, 4.0]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 3))
    assert not A.has_canonical_format
    np.testing.assert_array_equal(csr_rows_to_dense(A, 0, 2), A.toarray())


# ------------------------------------------------------------------ csr_dense_rows and csr_dense
@pytest.mark.parametrize("dtype, index_dtype", DTYPE_INDEX)
@pytest.mark.parametrize("a, b", [(0, 50), (11, 37), (50, 50), (0, 0), (49, 50)])
def test_csr_dense_rows_matches_scipy(dtype, index_dtype, a, b):
    A = random_csr(50, 20, dtype=dtype, seed=a * b + 1, index_dtype=index_dtype)
    B = np.random.default_rng(a + 2 * b).standard_normal((20, 6)).astype(dtype)
    expected = (A[a:b] @ B.astype(np.float64)).astype(dtype)
    got = csr_dense_rows(A, a, b, B)
    assert got.shape == (b - a, 6) and got.dtype == dtype
    np.testing.assert_allclose(got, expected, **tolerance(dtype))
    # non-contiguous B, and non-contiguous data/indices of A
    np.testing.assert_allclose(csr_dense_rows(A, a, b, strided(B)), expected, **tolerance(dtype))
    np.testing.assert_allclose(csr_dense_rows(A, a, b, np.asfortranarray(B)), expected, **tolerance(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_csr_dense_rows_mask_leaves_unmasked_rows_zero(dtype):
    A = random_csr(60, 15, dtype=dtype, seed=5)
    B = np.random.default_rng(6).standard_normal((15, 4)).astype(dtype)
    a, b = 13, 52
    rng = np.random.default_rng(7)
    mask = rng.random(b - a) < 0.5
    mask[0], mask[-1] = True, False
    full = (A[a:b] @ B.astype(np.float64)).astype(dtype)
    for m in (mask, strided(mask), mask.astype(np.int64), list(mask)):
        got = csr_dense_rows(A, a, b, B, mask=m)
        np.testing.assert_allclose(got[mask], full[mask], **tolerance(dtype))
        assert np.all(got[~mask] == 0)
    assert np.all(csr_dense_rows(A, a, b, B, mask=np.zeros(b - a, bool)) == 0)
    np.testing.assert_array_equal(csr_dense_rows(A, a, b, B, mask=np.ones(b - a, bool)),
                                  csr_dense_rows(A, a, b, B))


@pytest.mark.parametrize("n_b", [20, 300_000])  # 300k x 4 float32 rows of B: several cache chunks
def test_csr_dense_rows_f64_equals_the_float64_copy_bit_for_bit(n_b):
    """The λ₁ search's rows of R read a float32 W as it is: the same bits as converting W to float64 first
    (each product is taken in float64), in the chunked path too (chunks differ with B's itemsize)."""
    rng = np.random.default_rng(31)
    A = sp.random(40, n_b, density=min(1.0, 600 / n_b), format="csr", random_state=32, dtype=np.float32)
    A.data[A.indptr[3]:A.indptr[4]] = 0  # an empty row
    A.eliminate_zeros()
    A.sort_indices()
    B = rng.standard_normal((n_b, 4)).astype(np.float32)
    expected = csr_dense_rows(A, 5, 37, B.astype(np.float64), dtype=np.float64)
    got = csr_dense_rows_f64(A, 5, 37, B)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(csr_dense_rows_f64(A, 0, 40, strided(B)),
                                  csr_dense_rows(A, 0, 40, B, dtype=np.float64))
    np.testing.assert_array_equal(csr_dense_rows_f64(A.astype(np.float64), 0, 40, B.astype(np.float64)),
                                  csr_dense_rows(A, 0, 40, B, dtype=np.float64))


def test_csr_dense_rows_dtype_rules():
    A64 = random_csr(30, 10, dtype=np.float64, seed=8)
    A32 = A64.astype(np.float32)
    B64 = np.random.default_rng(9).standard_normal((10, 3))
    B32 = B64.astype(np.float32)
    # default: numpy's result type of the two inputs (float32 is not upcast when both are float32)
    assert csr_dense_rows(A32, 0, 30, B32).dtype == np.float32
    assert csr_dense_rows(A32, 0, 30, B64).dtype == np.float64
    assert csr_dense_rows(A64, 0, 30, B32).dtype == np.float64
    # an explicit dtype is the output and working dtype
    got = csr_dense_rows(A64, 2, 20, B64, dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, A64[2:20] @ B64, **tolerance(np.float32))
    np.testing.assert_allclose(csr_dense_rows(A32, 0, 30, B64), A32.astype(np.float64) @ B64,
                               **tolerance(np.float64))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(40, 12), (0, 12), (7, 1)])
def test_csr_dense_is_the_full_product(dtype, shape):
    A = random_csr(*shape, dtype=dtype, seed=shape[0])
    B = np.random.default_rng(1).standard_normal((shape[1], 5)).astype(dtype)
    got = csr_dense(A, B)
    assert got.dtype == dtype and got.shape == (shape[0], 5)
    np.testing.assert_allclose(got, (A @ B.astype(np.float64)).astype(dtype), **tolerance(dtype))


def test_csr_dense_degenerate_shapes():
    assert csr_dense(sp.csr_matrix((3, 4)), np.ones((4, 0))).shape == (3, 0)
    out = csr_dense(sp.csr_matrix((3, 4)), np.ones((4, 2)))
    assert out.shape == (3, 2) and np.all(out == 0)
    assert csr_dense(sp.csr_matrix((3, 0)), np.ones((0, 2))).shape == (3, 2)
    assert np.all(csr_dense(sp.csr_matrix((3, 0)), np.ones((0, 2))) == 0)


# ------------------------------------------------------------------ csr_csr_dense
@pytest.mark.parametrize("dtype, index_dtype", DTYPE_INDEX)
@pytest.mark.parametrize("shape", [(45, 30, 8), (0, 30, 8), (45, 30, 0), (45, 1, 3)])
def test_csr_csr_dense_matches_scipy(dtype, index_dtype, shape):
    n, m, K = shape
    A = random_csr(n, m, dtype=dtype, seed=n + m, index_dtype=index_dtype)
    B = random_csr(m, K, density=0.4, dtype=dtype, seed=K + 1, index_dtype=index_dtype)
    expected = (A.astype(np.float64) @ B.astype(np.float64)).toarray().astype(dtype)
    got = csr_csr_dense(A, B)
    assert got.shape == (n, K) and got.dtype == dtype
    np.testing.assert_allclose(got, expected, **tolerance(dtype))


def test_csr_csr_dense_row_range_is_the_product_of_the_slice():
    A = random_csr(60, 30, seed=21)
    B = random_csr(30, 7, density=0.4, seed=22)
    for a, b in [(0, 60), (13, 41), (59, 60), (20, 20)]:
        got = csr_csr_dense(A, B, a=a, b=b)
        assert got.shape == (b - a, 7)
        np.testing.assert_array_equal(got, csr_csr_dense(A[a:b], B))  # the same sums in the same order


def test_csr_csr_dense_dtype_rules_and_unsorted_indices():
    A = random_csr(30, 20, seed=11)
    B = random_csr(20, 6, density=0.5, seed=12)
    assert csr_csr_dense(A.astype(np.float32), B.astype(np.float32)).dtype == np.float32
    assert csr_csr_dense(A.astype(np.float32), B).dtype == np.float64
    got = csr_csr_dense(A, B, dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, (A @ B).toarray(), **tolerance(np.float32))
    # the kernel does not need sorted column indices in either operand
    Bu = B.copy()
    for i in range(Bu.shape[0]):
        lo, hi = Bu.indptr[i], Bu.indptr[i + 1]
        Bu.indices[lo:hi], Bu.data[lo:hi] = Bu.indices[lo:hi][::-1].copy(), Bu.data[lo:hi][::-1].copy()
    Bu.has_sorted_indices = False
    np.testing.assert_allclose(csr_csr_dense(A, Bu), (A @ B).toarray(), **tolerance(np.float64))


def test_csr_csr_dense_sums_duplicates_as_scipy():
    A = sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, 0]), np.array([0, 2])), shape=(1, 2))
    B = sp.csr_matrix((np.array([3.0, 5.0]), np.array([1, 1]), np.array([0, 2, 2])), shape=(2, 2))
    np.testing.assert_array_equal(csr_csr_dense(A, B), A.toarray() @ B.toarray())  # (1+2) * (3+5)
    np.testing.assert_array_equal(csr_dense(A, np.ones((2, 3))), A.toarray() @ np.ones((2, 3)))


# ------------------------------------------------------------------ non-contiguous CSR arrays
def test_non_contiguous_csr_arrays():
    # scipy keeps strided data/indices views; each kernel reads them as they are (one dtype suffices:
    # every array layout is a separate numba compilation, which the other tests already pay for dtypes)
    A = random_csr(40, 20, seed=17)
    B = np.random.default_rng(18).standard_normal((20, 5))
    Bs = random_csr(20, 5, density=0.4, seed=19)
    As, Bss = strided_csr(A), strided_csr(Bs)
    np.testing.assert_array_equal(csr_rows_to_dense(As, 3, 31), A[3:31].toarray())
    np.testing.assert_allclose(csr_dense_rows(As, 3, 31, B), A[3:31] @ B, **tolerance(np.float64))
    np.testing.assert_allclose(csr_dense(As, B), A @ B, **tolerance(np.float64))
    np.testing.assert_allclose(csr_csr_dense(As, Bss), (A @ Bs).toarray(), **tolerance(np.float64))


# ------------------------------------------------------------------ determinism
def test_results_do_not_depend_on_the_number_of_threads(single_thread):
    A = random_csr(700, 90, density=0.05, seed=13)
    B = np.random.default_rng(14).standard_normal((90, 16))
    Bs = random_csr(90, 16, density=0.2, seed=15)
    dense = A.toarray()
    mask = np.random.default_rng(16).random(650) < 0.7
    many = (csr_dense(A, B), csr_dense_rows(A, 30, 680, B, mask=mask), csr_csr_dense(A, Bs),
            csr_csr_dense(A, Bs, a=17, b=650), csr_rows_to_dense(A, 5, 600), dense_to_csr(dense).toarray())
    with single_thread:
        one = (csr_dense(A, B), csr_dense_rows(A, 30, 680, B, mask=mask), csr_csr_dense(A, Bs),
               csr_csr_dense(A, Bs, a=17, b=650), csr_rows_to_dense(A, 5, 600), dense_to_csr(dense).toarray())
    for x, y in zip(many, one):
        np.testing.assert_array_equal(x, y)


# ------------------------------------------------------------------ the compact U-step of screened blocks
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_take_kernels_are_the_rows_of_the_block_kernels(dtype):
    A = random_csr(80, 40, dtype=dtype, seed=31)
    B = np.random.default_rng(32).standard_normal((40, 9)).astype(dtype)
    a, b = 11, 70
    need = np.random.default_rng(33).random(b - a) < 0.4
    rows = np.flatnonzero(need)
    full, full_max = csr_dense_rows_max(A, a, b, B, need)
    got, got_max = csr_dense_take(A, rows + a, B)
    assert got.dtype == dtype and got.shape == (len(rows), 9)
    np.testing.assert_array_equal(got, full[rows])  # bit for bit: the screening bounds depend on it
    np.testing.assert_array_equal(got_max, full_max[rows])
    U = random_csr(80, 9, density=0.3, dtype=dtype, seed=34)
    np.testing.assert_array_equal(csr_take_dense(U, rows + a), U[rows + a].toarray())
    assert csr_take_dense(U, rows + a, dtype=np.float64).dtype == np.float64


def test_dense_rows_to_csr_places_the_rows_and_leaves_the_rest_empty():
    rng = np.random.default_rng(35)
    dense = rng.standard_normal((7, 5)) * (rng.random((7, 5)) < 0.5)
    dense[2] = 0.0  # a computed row that came out zero
    rows = np.array([0, 3, 4, 9, 10, 15, 19])
    got = dense_rows_to_csr(dense, rows, 20)
    expected = np.zeros((20, 5))
    expected[rows] = dense
    assert got.shape == (20, 5) and got.nnz == np.count_nonzero(dense)
    np.testing.assert_array_equal(got.toarray(), expected)
    assert got.has_canonical_format
    empty = dense_rows_to_csr(np.zeros((0, 5)), np.zeros(0, dtype=np.int64), 4)
    assert empty.shape == (4, 5) and empty.nnz == 0
    np.testing.assert_array_equal(dense_rows_to_csr(dense, np.arange(7), 7).toarray(), dense_to_csr(dense).toarray())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dot_sum_is_the_float64_sum_of_products(dtype):
    rng = np.random.default_rng(36)
    A = rng.standard_normal((300, 7)).astype(dtype)
    B = rng.standard_normal((300, 7)).astype(dtype)
    expected = float((A.astype(np.float64) * B.astype(np.float64)).sum())
    assert dot_sum(A, B) == pytest.approx(expected, rel=1e-12)
    assert dot_sum(A[:0], B[:0]) == 0.0
    assert dot_sum(np.asfortranarray(A), B) == dot_sum(A, B)


# ------------------------------------------------------------------ cache blocking (tiles x chunks) and dense rows
def ordered_product(A, B, rows=None):
    """Oracle: rows of ``A @ B`` (dense B) summed term by term in storage order, in B's dtype (what the
    plain row-by-row kernel computes)."""
    rows = range(A.shape[0]) if rows is None else rows
    out = np.zeros((len(rows), B.shape[1]), dtype=B.dtype)
    for o, i in enumerate(rows):
        for p in range(A.indptr[i], A.indptr[i + 1]):
            out[o] += B.dtype.type(A.data[p]) * B[A.indices[p]]
    return out


#: Chunks of a few rows of B and tiles of 8 rows: many chunks and tiles on a small problem.
SMALL = products.ProductBlocks(chunk_bytes=64, tile_bytes=64)


@pytest.mark.parametrize("dtype, index_dtype", DTYPE_INDEX)
def test_blocked_dense_products_sum_in_storage_order(dtype, index_dtype):
    A = random_csr(90, 70, density=0.2, dtype=dtype, seed=41, index_dtype=index_dtype)
    B = np.random.default_rng(42).standard_normal((70, 5)).astype(dtype)
    assert products._chunk_rows(B, True, SMALL.chunk_bytes) < 10  # many chunks
    np.testing.assert_array_equal(csr_dense(A, B, blocks=SMALL), ordered_product(A, B))
    rows = np.array([3, 1, 50, 89, 7, 7, 60], dtype=np.int64)  # any order, repeats
    got, rowmax = csr_dense_take(A, rows, B, blocks=SMALL)
    np.testing.assert_array_equal(got, ordered_product(A, B, rows))
    np.testing.assert_array_equal(rowmax, np.abs(got).max(axis=1))
    mask = np.random.default_rng(43).random(60) < 0.5
    got = csr_dense_rows(A, 20, 80, B, mask=mask, blocks=SMALL)
    np.testing.assert_array_equal(got[mask], ordered_product(A, B, np.flatnonzero(mask) + 20))
    assert not got[~mask].any()
    got, rowmax = csr_dense_rows_max(A, 20, 80, B, mask, blocks=SMALL)
    np.testing.assert_array_equal(rowmax[mask], np.abs(got[mask]).max(axis=1))
    assert not rowmax[~mask].any()


def test_blocked_dense_product_of_unsorted_indices_uses_one_chunk():
    A = random_csr(40, 50, density=0.3, seed=44)
    Au = A.copy()
    for i in range(Au.shape[0]):  # reverse every row: unsorted, same matrix
        lo, hi = Au.indptr[i], Au.indptr[i + 1]
        Au.indices[lo:hi], Au.data[lo:hi] = Au.indices[lo:hi][::-1].copy(), Au.data[lo:hi][::-1].copy()
    Au.has_sorted_indices = False
    B = np.random.default_rng(45).standard_normal((50, 4))
    np.testing.assert_array_equal(csr_dense(Au, B, blocks=SMALL), ordered_product(Au, B))
    Bs = random_csr(50, 6, density=0.5, seed=46)
    np.testing.assert_allclose(csr_csr_dense(Au, Bs, blocks=SMALL), (A @ Bs).toarray(), **tolerance(np.float64))


@pytest.mark.parametrize("dtype, index_dtype", DTYPE_INDEX)
@pytest.mark.parametrize("share", [0.0, 0.3, np.inf])
def test_blocked_sparse_product_with_dense_rows_is_the_plain_product(dtype, index_dtype, share):
    # share 0: every row of B held densely; inf: none; 0.3: the rows with more than 30 % of K entries
    blocks = products.ProductBlocks(chunk_bytes=64, tile_bytes=64, dense_row_share=share)
    A = random_csr(70, 60, density=0.2, dtype=dtype, seed=47, index_dtype=index_dtype)
    B = random_csr(60, 10, density=0.3, dtype=dtype, seed=48, index_dtype=index_dtype)
    plan = products.sparse_plan(B, blocks=blocks)
    assert len(plan.bounds) > 5
    nonempty = np.count_nonzero(np.diff(B.indptr))
    expected = {0.0: nonempty, np.inf: 0}.get(share)  # share 0: every non-empty row of B
    if expected is not None:
        assert len(plan.dense) == expected
    else:
        assert 0 < len(plan.dense) < nonempty
    # the zeros of a dense row add nothing: the same numbers as summing the stored terms in order
    Bd = B.toarray()
    np.testing.assert_array_equal(csr_csr_dense(A, B, plan=plan), ordered_product(A, Bd))
    np.testing.assert_array_equal(csr_csr_dense(A, B, a=9, b=55, plan=plan), ordered_product(A, Bd, range(9, 55)))
    np.testing.assert_array_equal(csr_csr_dense(A, B, a=9, b=55, blocks=blocks), ordered_product(A, Bd, range(9, 55)))


def test_sparse_plan_of_another_dtype_is_remade():
    from rlsi.kernels.products import sparse_plan

    A = random_csr(30, 20, seed=49)
    B = random_csr(20, 6, density=0.5, seed=50)
    plan32 = sparse_plan(B, np.float32)
    got = csr_csr_dense(A, B, dtype=np.float64, plan=plan32)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, ordered_product(A, B.toarray()))


def test_light_rows_are_the_ordered_product():
    """Light rows (fewer entries than chunks, the unchunked path): short rows, empty rows, the last row of A
    and repeated rows, in any order, give each row's storage-order sum."""
    A = random_csr(60, 300, density=0.02, seed=47)  # about 6 entries per row, many chunks of 64 bytes
    B = np.random.default_rng(48).standard_normal((300, 3))
    assert (np.diff(A.indptr) < -(-300 // products._chunk_rows(B, True, SMALL.chunk_bytes))).all()  # every row light
    rows = np.array([59, 1, 0, 59, 58, 1, 30, 2, 59], dtype=np.int64)
    got, rowmax = csr_dense_take(A, rows, B, blocks=SMALL)
    np.testing.assert_array_equal(got, ordered_product(A, B, rows))
    np.testing.assert_array_equal(rowmax, np.abs(got).max(axis=1))
    np.testing.assert_array_equal(csr_dense(A, B, blocks=SMALL), ordered_product(A, B))


def test_float32_entries_in_float64_products_are_read_without_a_copy():
    """float32 A in a float64 product: the same numbers as its float64 copy, and no copy of A's entries."""
    A = random_csr(120, 90, density=0.15, dtype=np.float32, seed=64)
    B = np.random.default_rng(65).standard_normal((90, 6))
    Bs = random_csr(90, 6, density=0.4, seed=66)
    A64 = A.astype(np.float64)
    assert products._entries_as(A, np.float64, np.float64) is A.data
    assert products._entries_as(A, np.float32, np.float32) is A.data
    assert products._entries_as(A, np.float64, np.float32).dtype == np.float64  # float32 B: converted
    assert products._entries_as(A64, np.float32, np.float32).dtype == np.float32  # narrowing: converted
    kw = dict(blocks=SMALL)
    np.testing.assert_array_equal(csr_dense_rows(A, 10, 110, B, dtype=np.float64, **kw),
                                  csr_dense_rows(A64, 10, 110, B, **kw))
    rows = np.array([5, 0, 119, 5], dtype=np.int64)
    np.testing.assert_array_equal(csr_dense_take(A, rows, B, dtype=np.float64, **kw)[0],
                                  csr_dense_take(A64, rows, B, **kw)[0])
    np.testing.assert_array_equal(csr_csr_dense(A, Bs, dtype=np.float64, **kw), csr_csr_dense(A64, Bs, **kw))
    np.testing.assert_array_equal(csr_csr_dense(A, Bs, dtype=np.float64, a=7, b=99, **kw),
                                  csr_csr_dense(A64, Bs, a=7, b=99, **kw))


@pytest.mark.parametrize("n_workers", [1, 2, 3, 16])
@pytest.mark.parametrize("tile", [8, 1000])
def test_balanced_tiles_cover_every_row_once_and_even_the_workers(n_workers, tile):
    from rlsi.kernels.products import TILES_PER_WORKER, _balanced_tiles

    rng = np.random.default_rng(61)
    lengths = np.minimum(rng.zipf(1.3, 3000), 20_000)  # a few rows hold most of the entries
    heavy = lengths >= 40
    order, starts, tiles, worker_starts = _balanced_tiles(lengths, heavy, tile, n_workers)
    np.testing.assert_array_equal(np.sort(order), np.arange(len(lengths)))  # every row exactly once
    assert starts[0] == 0 and starts[-1] == len(order) and (np.diff(starts) > 0).all()
    assert (np.diff(starts) <= tile).all()
    for a, b in zip(starts[:-1], starts[1:]):  # a tile holds heavy rows only or light rows only
        assert len(set(heavy[order[a:b]])) == 1
    n_tiles = len(starts) - 1
    np.testing.assert_array_equal(np.sort(tiles), np.arange(n_tiles))  # every tile to exactly one worker
    assert len(worker_starts) == n_workers + 1 and worker_starts[-1] == n_tiles
    work = np.add.reduceat(lengths[order] + 2, starts[:-1])
    loads = np.array([work[tiles[a:b]].sum() for a, b in zip(worker_starts[:-1], worker_starts[1:])])
    assert loads.max() <= loads.mean() + work.max()  # largest first, to the least loaded worker
    several = np.diff(starts) > 1
    if n_workers > 1:  # a tile of several rows holds at most about 1/(TILES_PER_WORKER · workers) of the work
        cap = (lengths + 2).sum() // (TILES_PER_WORKER * n_workers)
        assert (work[several] <= cap + (lengths + 2).max()).all()
    else:  # one worker has nothing to balance: tiles are cut by rows only (fewer, larger heavy tiles)
        for idx in (np.flatnonzero(heavy), np.flatnonzero(~heavy)):
            assert sum(set(order[a:b]) <= set(idx) for a, b in zip(starts[:-1], starts[1:])) == -(-len(idx) // tile)
    if n_workers == 2 and tile == 1000:  # equal row counts in contiguous halves would be far off
        assert loads.max() / loads.mean() < 1.05


def test_balanced_tiles_of_no_rows():
    from rlsi.kernels.products import _balanced_tiles

    order, starts, tiles, worker_starts = _balanced_tiles(np.zeros(0, np.int64), np.zeros(0, bool), 8, 4)
    assert len(order) == 0 and list(starts) == [0] and len(tiles) == 0 and list(worker_starts) == [0] * 5


def test_blocked_dense_product_does_not_depend_on_the_workers(single_thread, monkeypatch):
    """The schedule (how many workers, which tiles each runs) changes no row of R = A B."""
    A = random_csr(300, 200, density=0.05, seed=62)
    A = A + sp.csr_matrix((np.ones(200), (np.zeros(200, int), np.arange(200))), shape=A.shape)  # a heavy row
    A.sort_indices()
    B = np.random.default_rng(63).standard_normal((200, 7))
    expected = ordered_product(A, B)
    rows = np.arange(300, dtype=np.int64)
    real = products._balanced_tiles
    for workers in (1, 2, 5, 64):
        monkeypatch.setattr(products, "_balanced_tiles",
                            lambda lengths, heavy, tile, n, w=workers: real(lengths, heavy, tile, w))
        got, rowmax = csr_dense_take(A, rows, B, blocks=SMALL)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(rowmax, np.abs(expected).max(axis=1))
        with single_thread:
            np.testing.assert_array_equal(csr_dense(A, B, blocks=SMALL), expected)


# ------------------------------------------------------------------ G = UᵀU of CSR topics
@pytest.mark.parametrize("dtype, index_dtype", DTYPE_INDEX)
def test_csr_gram_is_the_float64_gram(dtype, index_dtype):
    U = random_csr(300, 12, density=0.25, dtype=dtype, seed=51, index_dtype=index_dtype)
    U64 = U.toarray().astype(np.float64)
    G = csr_gram(U)
    assert G.dtype == np.float64 and G.shape == (12, 12)
    np.testing.assert_allclose(G, U64.T @ U64, rtol=1e-12, atol=1e-12)  # float64 sums for float32 U too
    np.testing.assert_array_equal(G, G.T)


def test_csr_gram_unsorted_duplicates_and_degenerate_shapes():
    U = random_csr(40, 7, density=0.4, seed=52)
    Uu = U.copy()
    for i in range(Uu.shape[0]):  # reverse each row's entries: unsorted indices, the same matrix
        lo, hi = Uu.indptr[i], Uu.indptr[i + 1]
        Uu.indices[lo:hi] = Uu.indices[lo:hi][::-1].copy()
        Uu.data[lo:hi] = Uu.data[lo:hi][::-1].copy()
    Uu.has_sorted_indices = False
    dense = U.toarray()
    np.testing.assert_allclose(csr_gram(Uu), dense.T @ dense, rtol=1e-12, atol=1e-12)
    dup = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 2, 0]), np.array([0, 3, 3])), shape=(2, 4))
    d = dup.toarray()  # scipy sums the duplicates: row 0 = (3, 0, 3, 0)
    np.testing.assert_allclose(csr_gram(dup), d.T @ d, rtol=1e-15)
    assert not csr_gram(sp.csr_matrix((0, 5))).any() and csr_gram(sp.csr_matrix((0, 5))).shape == (5, 5)
    assert not csr_gram(sp.csr_matrix((9, 4))).any()


@pytest.mark.parametrize("parts", [1, 3, 1000])
def test_csr_gram_does_not_depend_on_threads_and_sums_its_parts(single_thread, parts):
    blocks = products.ProductBlocks(gram_parts=parts)
    U = random_csr(500, 10, density=0.2, seed=54)
    dense = U.toarray()
    many = csr_gram(U, blocks=blocks)
    with single_thread:
        one = csr_gram(U, blocks=blocks)
    np.testing.assert_array_equal(many, one)
    np.testing.assert_allclose(many, dense.T @ dense, rtol=1e-12, atol=1e-12)


def test_topic_gram_of_csr_and_dense_topics_agree():
    from rlsi.models.steps import topic_gram

    U = random_csr(200, 9, density=0.1, dtype=np.float32, seed=55)
    np.testing.assert_allclose(topic_gram(U), topic_gram(U.toarray()), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(topic_gram(U.tocsc()), topic_gram(U))


# ------------------------------------------------------------------ S = WᵀW (kernels.blas_rows; more in test_blas_rows.py)
def test_blocked_gram_of_empty_and_cast_kernels():
    from rlsi.kernels.rows import cast_into, store_rounded
    from rlsi.models.tasks import gram

    assert not gram(np.zeros((0, 4), dtype=np.float32)).any() and gram(np.zeros((0, 4))).shape == (4, 4)
    rng = np.random.default_rng(62)
    src = rng.standard_normal((50, 6))
    dst = np.empty((50, 6), dtype=np.float32)
    kept = src.copy()
    store_rounded(src, dst)
    np.testing.assert_array_equal(dst, kept.astype(np.float32))  # rounded as astype rounds
    np.testing.assert_array_equal(src, dst.astype(np.float64))  # and src holds the stored values
    back = cast_into(dst, np.empty((50, 6)))
    np.testing.assert_array_equal(back, dst.astype(np.float64))
    with pytest.raises(ValueError):
        cast_into(dst, np.empty((50, 5)))
