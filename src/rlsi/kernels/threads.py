"""Thread contexts of the library: numba threads from a scikit-learn style ``n_jobs``, BLAS held at one thread.

* :func:`compute_threads` — what a fit or a folding-in runs under: numba threads from ``n_jobs`` and BLAS
  limited to one thread, both restored on exit. Its BLAS work is either K x K (tiny) or a tall product that
  :mod:`rlsi.kernels.blas_rows` cuts into row chunks on the library's own threads; threaded BLAS next to
  numba's threads would only spin (OpenBLAS) or oversubscribe the cores.
* :func:`numba_threads` — numba threads only, for fits whose BLAS work is a library's own (scikit-learn's
  LDA start and SVMs of the STC models).

Idle OpenMP workers. numba's OpenMP threading layer lets idle workers spin between parallel regions by
default; RLSI alternates short parallel kernels with BLAS calls, so spinning workers steal the cores BLAS
needs (measured: a small online ``partial_fit`` took 31 ms instead of 1.1 ms). The first thread context of
the process therefore sets ``OMP_WAIT_POLICY=PASSIVE`` (unless the user has set it) before it asks numba
for its threads, which is what starts the runtime. Importing rlsi changes nothing.
"""

from __future__ import annotations

import contextlib
import os

import numba

from .blas_rows import one_blas_thread

__all__ = ["compute_threads", "numba_threads", "set_threads"]


def passive_wait():
    """``OMP_WAIT_POLICY=PASSIVE`` unless already set (read when numba's OpenMP runtime starts)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def set_threads(n_jobs):
    """Map a scikit-learn style ``n_jobs`` onto numba's thread count; returns the previous count."""
    passive_wait()
    previous = numba.get_num_threads()
    if n_jobs is None:
        return previous
    limit = numba.config.NUMBA_NUM_THREADS
    n = limit if n_jobs == -1 else (max(1, limit + 1 + n_jobs) if n_jobs < 0 else min(int(n_jobs), limit))
    numba.set_num_threads(max(1, n))
    return previous


@contextlib.contextmanager
def numba_threads(n_jobs):
    """numba threads from ``n_jobs`` (:func:`set_threads`) inside the block, restored on exit (BLAS untouched)."""
    previous = set_threads(n_jobs)
    try:
        yield
    finally:
        set_threads(previous)


@contextlib.contextmanager
def compute_threads(n_jobs):
    """numba threads from ``n_jobs`` and BLAS limited to one thread inside the block, both restored on exit."""
    with numba_threads(n_jobs), one_blas_thread():
        yield
