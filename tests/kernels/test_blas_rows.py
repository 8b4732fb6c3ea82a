"""rlsi.kernels.blas_rows: row-chunked products on single-threaded BLAS, on the library's threads."""

import numba
import numpy as np
import pytest

from rlsi.kernels import blas_rows
from rlsi.kernels.blas_rows import RowChunks, blas_controller, cross_rows, gram_rows, matmul_rows, one_blas_thread

DTYPES = [np.float32, np.float64]


def chunks(**kw):
    """The tests' products are small: they take the parallel path all the same (``min_parallel_work=0``)."""
    return RowChunks(**{"min_parallel_work": 0, **kw})


ANY = chunks()


def _blas_threads():
    return [lib["num_threads"] for lib in blas_controller().info() if lib["user_api"] == "blas"]


def _threads(n):
    """numba threads of the calling thread set to min(n, numba's maximum), restored on exit."""
    class Switch:
        def __enter__(self):
            self.previous = numba.get_num_threads()
            numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))

        def __exit__(self, *exc):
            numba.set_num_threads(self.previous)
    return Switch()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("row_chunk, sub_rows", [(1, 1), (7, 5), (64, 3), (1000, 2048), (512, 2048)])
def test_gram_rows_is_the_float64_gram(dtype, row_chunk, sub_rows):
    """Any chunking (1 row, chunks that do not divide N, one chunk larger than W): the float64 gram of
    the whole W up to the order of the sums (float64 sums for float32 W too), exactly symmetric; strided W
    the same numbers as contiguous W."""
    small = chunks(row_chunk=row_chunk, sub_rows=sub_rows)
    rng = np.random.default_rng(61)
    W = rng.standard_normal((130, 9)).astype(dtype)
    ref = W.astype(np.float64).T @ W.astype(np.float64)
    S = gram_rows(W, chunks=small)
    assert S.dtype == np.float64 and S.shape == (9, 9)
    np.testing.assert_allclose(S, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(S, S.T)
    np.testing.assert_array_equal(gram_rows(np.asfortranarray(W), chunks=small), S)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("row_chunk, sub_rows", [(1, 1), (7, 5), (1000, 2048)])
def test_cross_rows_is_the_float64_cross_product_and_a_block_of_the_gram(dtype, row_chunk, sub_rows):
    """``AᵀB`` in float64 (float32 input too) for any chunking; with B = A it is the gram's numbers; the
    off-diagonal block of the gram of ``[A, B]``; the same bits on 1 and 4 threads; shapes checked."""
    small = chunks(row_chunk=row_chunk, sub_rows=sub_rows)
    rng = np.random.default_rng(62)
    A = rng.standard_normal((130, 6)).astype(dtype)
    B = rng.standard_normal((130, 3)).astype(dtype)
    C = cross_rows(A, np.asfortranarray(B), chunks=small)
    assert C.dtype == np.float64 and C.shape == (6, 3)
    np.testing.assert_allclose(C, A.astype(np.float64).T @ B.astype(np.float64), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gram_rows(np.hstack([A, B]), chunks=small)[:6, 6:], C, rtol=1e-12, atol=1e-12)
    with _threads(1):
        C1 = cross_rows(A, B, chunks=small)
    with _threads(4):
        C4 = cross_rows(A, B, chunks=small)
    np.testing.assert_array_equal(C1, C4)
    with pytest.raises(ValueError, match="as many rows"):
        cross_rows(A, B[:-1])


def test_gram_rows_holds_at_most_gram_parts_partial_grams(monkeypatch):
    """The parts are cut by N alone and capped (each is a K x K float64 array held until the sum)."""
    small = chunks(row_chunk=2, gram_parts=5)
    seen = []
    real = blas_rows._run

    def counting(fn, n_items, work, min_work):
        seen.append(n_items)
        return real(fn, n_items, work, min_work)

    monkeypatch.setattr(blas_rows, "_run", counting)
    W = np.random.default_rng(3).standard_normal((101, 4))
    np.testing.assert_allclose(gram_rows(W, chunks=small), W.T @ W, rtol=1e-12, atol=1e-12)
    assert seen == [5]
    empty = gram_rows(np.zeros((0, 4)), chunks=small)
    assert empty.shape == (4, 4) and not empty.any()


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_same_numbers_on_any_number_of_threads(dtype):
    """The chunks depend on the rows alone and partial grams are added in chunk order: one thread and
    every thread give the same bits (also when the pool runs items out of order)."""
    small = chunks(row_chunk=16, sub_rows=8)
    rng = np.random.default_rng(7)
    A = rng.standard_normal((333, 20)).astype(dtype)
    B = rng.standard_normal((20, 11))
    with _threads(1):
        S1, P1 = gram_rows(A, chunks=small), matmul_rows(A, B, chunks=small)
    with _threads(4):
        Sn, Pn = gram_rows(A, chunks=small), matmul_rows(A, B, chunks=small)
    np.testing.assert_array_equal(S1, Sn)
    np.testing.assert_array_equal(P1, Pn)
    np.testing.assert_allclose(P1, A.astype(np.float64) @ B, rtol=1e-12, atol=1e-12)


def test_matmul_rows_writes_into_out_and_checks_it():
    rng = np.random.default_rng(8)
    A, B = rng.standard_normal((1500, 6)), rng.standard_normal((6, 4))
    out = np.full((1500, 4), np.nan)
    assert matmul_rows(A, B, out=out, chunks=ANY) is out
    np.testing.assert_allclose(out, A @ B, rtol=1e-13, atol=1e-13)
    for bad in (np.empty((1500, 5)), np.empty((1500, 4), dtype=np.float32), np.empty((4, 1500)).T):
        with pytest.raises(ValueError, match="C-contiguous float64"):
            matmul_rows(A, B, out=bad)
    assert matmul_rows(np.zeros((0, 6)), B).shape == (0, 4)


def test_parallel_chunks_run_on_one_blas_thread_and_restore_it(monkeypatch):
    """While the chunks run on several threads BLAS is on one thread; afterwards it is back."""
    before = _blas_threads()
    small = chunks(row_chunk=4)
    inside = []
    real = np.matmul

    def spy(a, b, out=None):
        inside.append(max(_blas_threads()))
        return real(a, b, out=out)

    monkeypatch.setattr(blas_rows.np, "matmul", spy)
    with _threads(2):
        matmul_rows(np.ones((40, 3)), np.ones((3, 2)), chunks=small)
    if numba.config.NUMBA_NUM_THREADS > 1:
        assert inside and set(inside) == {1}
    assert _blas_threads() == before


def test_nested_limits_restore_the_original_count():
    before = _blas_threads()
    with one_blas_thread():
        with one_blas_thread():
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before


def test_one_thread_inside_an_executor_task_runs_inline(monkeypatch):
    """numba's count is per thread: a ThreadExecutor task (1 thread) runs its chunks where it is, without
    touching the process-wide BLAS limit."""
    from rlsi.models.executor import ThreadExecutor

    calls = []
    monkeypatch.setattr(blas_rows, "one_blas_thread", lambda: calls.append(1))
    A, B = np.random.default_rng(9).standard_normal((3000, 5)), np.eye(5)
    with ThreadExecutor(2) as ex:
        outs = ex.map(lambda i: matmul_rows(A, B, chunks=ANY), range(2))
    for o in outs:
        np.testing.assert_array_equal(o, A)
    assert calls == []


def test_small_products_run_in_the_calling_thread(monkeypatch):
    """Below ``min_parallel_work`` multiply-adds nothing goes to the pool and BLAS's limit is not touched (an
    online fit's mini-batch at K = 20 would pay more for both than for its product)."""
    large = chunks(min_parallel_work=10**9)
    calls = []
    monkeypatch.setattr(blas_rows, "one_blas_thread", lambda: calls.append(1))
    monkeypatch.setattr(blas_rows, "_executor", lambda: calls.append(2))
    A = np.random.default_rng(10).standard_normal((1000, 20))
    with _threads(2):
        np.testing.assert_allclose(matmul_rows(A, np.eye(20), chunks=large), A, rtol=0, atol=0)
        np.testing.assert_allclose(gram_rows(A, chunks=large), A.T @ A, rtol=1e-12, atol=1e-12)
    assert calls == []
