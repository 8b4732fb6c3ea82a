"""Dense products of many rows on the library's threads, each chunk on single-threaded BLAS.

* :func:`matmul_rows` — ``out = A @ B`` for a tall A (n x K) and a small B (K x L), float64.
* :func:`gram_rows` — ``S = WᵀW`` (K x K, float64) of a tall W of any float dtype; :func:`cross_rows` — ``AᵀB``
  of two tall arrays the same way.
* :func:`blas_controller` — the one :class:`threadpoolctl.ThreadpoolController` of the library.

Why not threaded BLAS: after every call, OpenBLAS's threads busy-wait (its ``THREAD_TIMEOUT``, 2²⁸ cycles,
about 0.1 s) before they sleep, and meanwhile compete for the cores with numba's threads in the kernels that
follow. A fit's V-step alternates, block after block, a numba product (``Φ = X U``) with two BLAS calls (the
ridge GEMM and the block's gram), so every numba kernel of the iteration ran next to spinning BLAS threads.
Measured (50,000 x 200,000, K = 200, the paper's density), a
whole fit of 5 iterations with the spinning cut short by ``OPENBLAS_THREAD_TIMEOUT=4``: 16-core Xeon
2.77 → 1.73 s, 2-core EPYC 6.2–6.6 → 4.7–5.2 s. Here BLAS runs on one thread inside each chunk and the
chunks run on a pool of ``numba.get_num_threads()`` Python threads (numpy releases the GIL in BLAS), so
OpenBLAS's own threads are never woken.

The chunks are fixed by the number of rows alone and their partial results are added in chunk order: the
same numbers on any number of threads (not bit-equal to one unchunked BLAS call).
"""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from dataclasses import dataclass

import numba
import numpy as np
from threadpoolctl import ThreadpoolController

#: Rows per chunk of :func:`matmul_rows` (at K = 200: 0.4 MB of A, 20 MFlop: a BLAS call's overhead is
#: nothing — 20,971 x 200 @ 200 x 200 took 38–39 ms at 1 thread in chunks of 256, 512 or 2048 rows, 41 ms
#: whole — and a 20,971-row block is 82 chunks, which 16 threads share within one chunk each).
ROW_CHUNK = 256
#: Below this many multiply-adds a product runs in the calling thread (handing chunks to the pool and
#: limiting BLAS cost tens of microseconds: an online fit's mini-batch at K = 20 is a few thousand).
MIN_PARALLEL_WORK = 1 << 22
#: At most this many partial grams in :func:`gram_rows` (each K x K float64, all held until added in order).
GRAM_PARTS = 32
#: Rows of W converted to float64 and multiplied at once inside a part of :func:`gram_rows`.
GRAM_SUB_ROWS = 2048


@dataclass(frozen=True)
class RowChunks:
    """How the row-chunked products cut their work, as one named value (the numbers above are the defaults;
    tests pass small ones to get many chunks, parts and threads on a small product): ``row_chunk`` rows of
    A per chunk of :func:`matmul_rows` (and the unit of a part), ``sub_rows`` rows per float64 sub-block and
    ``gram_parts`` most partial sums of :func:`gram_rows` / :func:`cross_rows`, ``min_parallel_work``
    multiply-adds below which a product runs in the calling thread."""

    row_chunk: int = ROW_CHUNK
    sub_rows: int = GRAM_SUB_ROWS
    gram_parts: int = GRAM_PARTS
    min_parallel_work: int = MIN_PARALLEL_WORK


#: The chunking of every product given none.
CHUNKS = RowChunks()

_controller = None
_pool = None
_pool_pid = None
_pool_lock = threading.Lock()


def blas_controller():
    """The library's ThreadpoolController, made once (inspecting the loaded libraries costs milliseconds)."""
    global _controller
    if _controller is None:
        _controller = ThreadpoolController()
    return _controller


@contextlib.contextmanager
def one_blas_thread():
    """BLAS limited to one thread inside the block (every BLAS library threadpoolctl finds), restored on
    exit by the same thread. (Not shared across threads: OpenBLAS 0.3.31 was seen to ignore a thread count
    set from a thread other than the main one once it had run in several threads, so a limit restored from
    another thread than the one that set it could stay for good.)"""
    with blas_controller().limit(limits=1, user_api="blas"):
        yield


def _executor():
    """A pool of ``NUMBA_NUM_THREADS`` threads, made once per process (a forked child makes its own: the
    parent's threads do not exist there)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(max(1, numba.config.NUMBA_NUM_THREADS), thread_name_prefix="rlsi-blas")
            _pool_pid = os.getpid()
        return _pool


def _run(fn, n_items, work, min_work=MIN_PARALLEL_WORK):
    """``[fn(i) for i in range(n_items)]``, on ``numba.get_num_threads()`` threads when that is above one
    and ``work`` (multiply-adds) reaches ``min_work`` (each thread takes every n-th item), with
    BLAS on one thread meanwhile. Otherwise (numba's count of the calling thread is 1 inside a
    ThreadExecutor's task) the items run here, BLAS left as it is."""
    n = min(numba.get_num_threads(), n_items)
    if n <= 1 or work < min_work:
        return [fn(i) for i in range(n_items)]
    out = [None] * n_items

    def worker(t):
        for i in range(t, n_items, n):
            out[i] = fn(i)

    with one_blas_thread():
        for f in [_executor().submit(worker, t) for t in range(n)]:
            f.result()
    return out


def matmul_rows(A, B, out=None, *, chunks=CHUNKS):
    """``out = A @ B`` (float64) for A (n x K) and B (K x L), in chunks of ``chunks.row_chunk`` rows of A.

    A and B are read as float64 (converted once if they are not); ``out``: an optional C-contiguous
    (n x L) float64 array to write into."""
    A = np.ascontiguousarray(A, dtype=np.float64)
    B = np.ascontiguousarray(B, dtype=np.float64)
    n = A.shape[0]
    if out is None:
        out = np.empty((n, B.shape[1]))
    elif out.shape != (n, B.shape[1]) or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float64 array of shape {(n, B.shape[1])}")
    step = chunks.row_chunk
    n_chunks = -(-n // step)

    def chunk(i):
        a, b = i * step, min(n, (i + 1) * step)
        np.matmul(A[a:b], B, out=out[a:b])

    _run(chunk, n_chunks, n * A.shape[1] * B.shape[1], chunks.min_parallel_work)
    return out


def _row_bounds(n, chunks=CHUNKS):
    """Boundaries of the parts of n rows summed by :func:`gram_rows` and :func:`cross_rows`: at most
    ``chunks.gram_parts`` equal runs, fixed by n alone."""
    n_parts = max(1, min(chunks.gram_parts, -(-n // chunks.row_chunk)))
    return np.linspace(0, n, n_parts + 1).astype(np.int64)


def _sum_over_rows(n, block, shape, work, chunks=CHUNKS):
    """``Σ block(a, b)`` (float64 arrays of ``shape``) over sub-blocks of ``chunks.sub_rows`` rows: each
    part of :func:`_row_bounds` sums its own sub-blocks, the parts run on the library's threads and are added
    in order."""
    bounds = _row_bounds(n, chunks)
    sub = chunks.sub_rows

    def part(i):
        S = np.zeros(shape)
        for a in range(bounds[i], bounds[i + 1], sub):
            S += block(a, min(bounds[i + 1], a + sub))
        return S

    parts = _run(part, len(bounds) - 1, work, chunks.min_parallel_work)
    S = parts[0]
    for P in parts[1:]:
        S += P
    return S


def gram_rows_nbytes(n, K, itemsize, threads=None):
    """Extra bytes of :func:`gram_rows` on W (n x K of ``itemsize``): the parts' K x K float64 grams, and for
    a W that is not float64 one float64 sub-block of :data:`GRAM_SUB_ROWS` rows per thread (``threads``:
    numba's count by default)."""
    parts = len(_row_bounds(int(n))) - 1
    threads = min(parts, int(numba.config.NUMBA_NUM_THREADS if threads is None else threads))
    sub = threads * min(int(n), GRAM_SUB_ROWS) * int(K) * 8 if int(itemsize) != 8 else 0
    return parts * int(K) * int(K) * 8 + sub


def gram_rows(W, *, chunks=CHUNKS):
    """``S = WᵀW`` (K x K, float64, exactly symmetric) of W (n x K, any float dtype or strides).

    W's rows are cut into at most ``chunks.gram_parts`` (:data:`GRAM_PARTS`) equal parts (by n alone); each
    part's gram is summed over sub-blocks of ``chunks.sub_rows`` (:data:`GRAM_SUB_ROWS`) rows converted to float64 (a symmetric rank-k update each: numpy
    calls BLAS syrk for ``c.T @ c``), and the parts are added in order. Extra memory: the parts' grams and
    one sub-block per thread, never a float64 copy of W."""
    W = np.asarray(W)
    n, K = W.shape

    def block(a, b):
        c = np.ascontiguousarray(W[a:b], dtype=np.float64)
        return c.T @ c

    S = _sum_over_rows(n, block, (K, K), n * K * K, chunks)
    # mirrored from the upper triangle: exactly symmetric whichever BLAS routine numpy chose for c.T @ c
    return np.triu(S) + np.triu(S, 1).T


def cross_rows(A, B, *, chunks=CHUNKS):
    """``AᵀB`` (K x L, float64) of A (n x K) and B (n x L), any float dtype or strides: the parts and
    float64 sub-blocks of :func:`gram_rows` (a block ``[[AᵀA, AᵀB], [BᵀA, BᵀB]]`` of a gram from its pieces,
    without the stacked ``[A, B]``)."""
    A, B = np.asarray(A), np.asarray(B)
    if A.ndim != 2 or B.ndim != 2 or A.shape[0] != B.shape[0]:
        raise ValueError(f"cross_rows needs two 2-D arrays of as many rows, got {A.shape} and {B.shape}")
    n, K = A.shape
    L = B.shape[1]

    def block(a, b):
        return np.ascontiguousarray(A[a:b], dtype=np.float64).T @ np.ascontiguousarray(B[a:b], dtype=np.float64)

    return _sum_over_rows(n, block, (K, L), n * K * L, chunks)
