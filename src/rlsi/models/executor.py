"""Executors: where the per-block tasks of a learner run.

A learner is written as pure per-block tasks (solve these term rows, project these documents; see
:mod:`rlsi.models.tasks`) plus a reduction of what the tasks return. An executor maps a task over the
blocks and returns the results **in block order**, so reducing them in that order gives the same numbers
whatever runs the tasks: the serial executor is the reference, and any other executor (threads here, Dask
in :mod:`rlsi.distributed`) must reproduce it.

* :class:`SerialExecutor` — one block after the other in this thread; each task's numba kernels use all
  the cores (parallel over the rows inside the block). The default.
* :class:`ThreadExecutor` — several blocks at once on a thread pool, each task's kernels on one thread.
  numba's kernels release the GIL, so this overlaps the serial parts of the tasks (slicing, conversions)
  with the kernels of other tasks; results are identical to the serial executor.

An executor is chosen by name (``"serial"``, ``"threads"``) or given as an object with the same two
methods; :func:`get_executor` resolves either with an error that lists the registry.

Where the data lives. ``map`` reads and writes the caller's arrays, so its tasks run where the caller's
memory is. An executor whose workers hold data of their own (:class:`rlsi.distributed.DaskExecutor`) also
offers ``submit(fn, *args, where=worker) -> future`` (a task pinned to the worker that holds its inputs)
and ``gather(futures)``; a placement of a learner (the Dask partitions of batch RLSI) is written with those.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numba

from .._validation import check_choice, check_number
from ..errors import RLSIError


class Executor:
    """Interface: ``map(fn, items)`` → list of ``fn(item)`` in the order of ``items``; ``close()``."""

    name = "executor"

    def map(self, fn, items):
        raise NotImplementedError

    def close(self):
        """Release resources (pools, clusters). Idempotent."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class SerialExecutor(Executor):
    """Run the tasks one after the other in the calling thread."""

    name = "serial"

    def map(self, fn, items):
        """``[fn(item) for item in items]``, in this thread."""
        return [fn(item) for item in items]

    def __repr__(self):
        return "SerialExecutor()"


class ThreadExecutor(Executor):
    """Run tasks on ``n_workers`` threads (default: the number of cores), numba kernels single-threaded
    inside each (``numba.set_num_threads`` is per thread)."""

    name = "threads"

    def __init__(self, n_workers=None):
        if n_workers is not None:
            check_number("n_workers", n_workers, low=1, integer=True)
        self.n_workers = int(n_workers or os.cpu_count() or 1)
        self._pool = None

    @staticmethod
    def _one_thread(fn, item):
        numba.set_num_threads(1)
        return fn(item)

    def map(self, fn, items):
        """``fn`` over ``items`` on the pool; the results in the order of ``items``."""
        items = list(items)
        if len(items) <= 1 or self.n_workers == 1:
            return [fn(item) for item in items]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.n_workers, thread_name_prefix="rlsi-block")
        return list(self._pool.map(lambda item: self._one_thread(fn, item), items))

    def close(self):
        """Shut the thread pool down (a later ``map`` starts a new one)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def __repr__(self):
        return f"ThreadExecutor(n_workers={self.n_workers})"


EXECUTORS = {"serial": SerialExecutor, "threads": ThreadExecutor}


def get_executor(spec):
    """An :class:`Executor` from None/"serial", "threads", or an object with ``map`` (returned as is)."""
    if spec is None:
        return SerialExecutor()
    if isinstance(spec, str):
        return EXECUTORS[check_choice("executor", spec, EXECUTORS)]()
    if callable(getattr(spec, "map", None)):
        return spec
    raise RLSIError(f"executor={spec!r} is not supported; choose one of {', '.join(map(repr, EXECUTORS))} "
                    f"or pass an object with a map(fn, items) method")
