"""Reused row blocks (rlsi.models.tasks.BlockScratch): the buffers are reused per thread and name, and a
batch fit that reuses them is bit-identical to one that allocates every block afresh — with many blocks,
in both dtypes, with the "threads" executor (blocks solved concurrently, one buffer set per thread)."""

import threading
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from rlsi import BatchRLSI
from rlsi.kernels.convert import csr_take_dense
from rlsi.kernels.products import csr_csr_dense, csr_dense_rows, csr_dense_take
from rlsi.models.tasks import BlockScratch

from conftest import planted_corpus


def test_buffers_are_reused_per_name_and_thread_and_grow_when_needed():
    s = BlockScratch()
    a = s.get("R", (10, 4), np.float64)
    assert a.shape == (10, 4) and a.dtype == np.float64 and a.flags.c_contiguous
    b = s.get("R", (7, 4), np.float64)  # smaller: the same memory
    assert np.shares_memory(a, b)
    c = s.get("warm start", (7, 4), np.float64)  # another name: other memory
    assert not np.shares_memory(b, c)
    d = s.get("R", (7, 4), np.float32)  # another dtype: other memory
    assert d.dtype == np.float32 and not np.shares_memory(b, d)
    e = s.get("R", (100, 4), np.float64)  # larger: a new buffer, kept from now on
    assert e.shape == (100, 4) and np.shares_memory(e, s.get("R", (3, 4), np.float64))
    assert s.get("R", (0, 4), np.float64).shape == (0, 4)
    other = {}
    t = threading.Thread(target=lambda: other.setdefault("R", s.get("R", (7, 4), np.float64)))
    t.start()
    t.join()
    assert not np.shares_memory(other["R"], e)  # each thread its own buffers


def test_products_write_into_the_given_block_and_check_it():
    rng = np.random.default_rng(3)
    import scipy.sparse as sp

    A = sp.random(30, 20, density=0.3, format="csr", random_state=4)
    A.sort_indices()
    B = rng.standard_normal((20, 5))
    out = np.full((6, 5), np.nan)
    got, _ = csr_dense_take(A, np.array([0, 3, 5, 7, 9, 29]), B, out=out)
    assert got is out
    np.testing.assert_array_equal(out, csr_dense_take(A, np.array([0, 3, 5, 7, 9, 29]), B)[0])
    out = np.full((10, 5), np.nan)
    assert csr_dense_rows(A, 5, 15, B, out=out) is out
    np.testing.assert_array_equal(out, csr_dense_rows(A, 5, 15, B))
    Bs = sp.random(20, 5, density=0.4, format="csr", random_state=5)
    out = np.full((10, 5), np.nan)
    assert csr_csr_dense(A, Bs, a=5, b=15, out=out) is out
    np.testing.assert_array_equal(out, csr_csr_dense(A, Bs, a=5, b=15))
    out = np.full((3, 20), np.nan)  # the dense copy of CSR rows starts from zeros, whatever the buffer held
    assert csr_take_dense(A, np.array([1, 2, 4]), out=out) is out
    np.testing.assert_array_equal(out, A[[1, 2, 4]].toarray())
    with pytest.raises(ValueError, match="out must be"):
        csr_dense_take(A, np.array([0, 1]), B, out=np.empty((3, 5)))
    with pytest.raises(ValueError, match="out must be"):
        csr_dense_rows(A, 0, 2, B, out=np.empty((2, 5), dtype=np.float32))
    with pytest.raises(ValueError, match="out must be"):
        csr_csr_dense(A, Bs, a=0, b=2, out=np.empty((5, 2)).T)  # not C-contiguous
    with pytest.raises(ValueError, match="mask"):
        csr_dense_rows(A, 0, 2, B, mask=np.array([True, False]), out=np.empty((2, 5)))


def _fit(X, executor):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # blocks of 16 rows: 10 term blocks, 19 document blocks
        model = BatchRLSI(6, lambda1=0.3, random_state=0, max_iter=6, tol=0, topic_representation="sparse",
                          executor=executor, tuning=dict(min_block_rows=16, block_entries=16 * 6))
        return model.fit(X), model.transform(X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("executor", [None, "threads"])
def test_a_fit_reusing_blocks_equals_one_allocating_them(monkeypatch, dtype, executor):
    X = planted_corpus(n_docs=300, n_terms=150, seed=5, dtype=dtype)
    reused, W_reused = _fit(X, executor)
    calls = []

    def fresh(self, name, shape, dtype):  # every block a new array, filled with garbage
        calls.append(name)
        return np.full(shape, np.nan, dtype=dtype)

    monkeypatch.setattr(BlockScratch, "get", fresh)
    plain, W_plain = _fit(X, executor)
    assert {"R", "warm start", "Phi"} <= set(calls)  # the fit asked for every kind of block
    assert ("Phi float64" in calls) == (dtype == np.float32)  # the ridge's float64 copy of a float32 Φ
    np.testing.assert_array_equal(reused.components_.toarray(), plain.components_.toarray())
    np.testing.assert_array_equal(W_reused, W_plain)
