"""The cache hints of rlsi.kernels.hints: they compile for the arrays the kernels use, change nothing, and
never fault — and the light rows of the blocked product, which use them, still give each row's
storage-order sum when the hints' look-ahead crosses empty rows and tile boundaries."""

import numpy as np
import pytest
import scipy.sparse as sp
from numba import njit

from rlsi.kernels.hints import prefetch_row
from rlsi.kernels.products import csr_dense_take


@njit(cache=False)
def _hint_every_row(B, extra):
    for j in range(B.shape[0] + extra):  # `extra` rows past the end: a hint must not fault there either
        prefetch_row(B, j)
    return B.shape[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("K", [1, 3, 16, 200])
def test_prefetch_row_changes_nothing_and_never_faults(dtype, K):
    B = np.random.default_rng(K).standard_normal((37, K)).astype(dtype)
    before = B.copy()
    assert _hint_every_row(B, 1000) == 37
    np.testing.assert_array_equal(B, before)
    assert _hint_every_row(B[:0], 5) == 0  # an empty array


def test_light_rows_with_empty_rows_between_them_are_the_ordered_product():
    """Rows with 0-3 entries (the look-ahead of the prefetch runs through empty rows and into the next rows
    of a tile), tiles of 8 rows, chunks of a few rows of B (every row light)."""
    from rlsi.kernels.products import ProductBlocks

    small = ProductBlocks(chunk_bytes=64, tile_bytes=64)
    rng = np.random.default_rng(5)
    n, m, K = 50, 400, 4
    lengths = rng.integers(0, 4, n)
    lengths[[0, 7, 8, 9, 49]] = 0  # empty rows at the start, in a run, at the end
    rows, cols = [], []
    for i, c in enumerate(lengths):
        rows += [i] * c
        cols += sorted(rng.choice(m, c, replace=False))
    A = sp.csr_matrix((rng.standard_normal(len(rows)), (rows, cols)), shape=(n, m))
    A.sort_indices()
    B = rng.standard_normal((m, K))
    take = np.array([49, 0, 3, 7, 8, 9, 10, 2, 2, 30, 48, 1], dtype=np.int64)
    got, rowmax = csr_dense_take(A, take, B, blocks=small)
    want = np.zeros((len(take), K))
    for o, i in enumerate(take):
        for p in range(A.indptr[i], A.indptr[i + 1]):
            want[o] += A.data[p] * B[A.indices[p]]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(rowmax, np.abs(want).max(axis=1))
