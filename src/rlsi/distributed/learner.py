"""Distributed batch RLSI on Dask: TOIS §4.4 (Map-1/Reduce-1, Map-2/Reduce-2) with the local core.

Data placement. X is cut into document partitions (:mod:`rlsi.distributed.partitions`), each made into
a :class:`~rlsi.distributed._tasks.Part` (its rows of X and of D = Xᵀ) by a task on its worker; the
document vectors W_p of a partition are produced and kept on the same worker. The client keeps U
(sparse, terms x topics), S (K x K) and scalars. Per iteration (one :func:`rlsi.models.driver.alternate`
step of :class:`DistributedProblem`):

* Map-1/Reduce-1 (U-step): ``S = Σ_p S_p`` was reduced in the previous V-step; ``prepare(S, λ₁)`` is one
  K x K task. For every term block ``[a, b)`` of the local learner, each partition that holds terms of
  the block computes its share ``D_{[a,b), p} W_p`` where W_p lives; the shares are summed by a tree of
  additions and the block's lasso rows are solved by :func:`rlsi.models.tasks.topic_block` (warm-started
  from the block's previous rows, which stay where they were solved). The blocks are stacked into U.
* Map-2/Reduce-2 (V-step): ``prepare(UᵀU, λ₂)`` (K x K) is one task; every partition folds in its
  documents with :func:`rlsi.models.tasks.doc_block` (through ``_tasks.doc_step``) and returns its
  :class:`~rlsi.models.tasks.DocStats`; these are tree-reduced with ``DocStats.merge``.

What crosses the network: U (sparse) to each partition and to the client, K x K matrices, the partial
R rows of a term block from each partition that has its terms, and a few scalars. D, X and W are never
gathered on the client (``fit_transform`` gathers W because it returns it). ``bytes_moved_`` records,
per iteration, Dask's own count of bytes sent between workers plus the bytes of what the client sends
and gathers (:func:`dask.sizeof.sizeof`).

Equality with :class:`rlsi.models.BatchRLSI` (same data, parameters and seed). Every task is the local
learner's task on the same rows, so one partition is **bit-identical** to the local learner (the serial
learner is the one-worker distributed learner). With several partitions the sums S, R, cross and the
penalty of W are added in another order (a tree over partitions instead of one pass), which changes
their rounding (relative 1e-16); the tests check components, W and objectives to 1e-10 relative.

Screening. The exact row screening of the local U-step (:class:`rlsi.models.screening.ScreenedBatchR`)
is carried over: the client keeps each term row's bound, moved each iteration by ``‖d_m‖ · max_k
‖ΔW_k‖`` where ``‖d_m‖²`` and the column drifts ``Σ_n ΔW_nk²`` are reduced from the partitions (M floats
once, K floats per partition per iteration), and sends each partition the block's mask of rows still
needed; a skipped row is neither computed nor sent. It never changes U (it only skips rows whose
solution is zero); ``n_rows_screened_`` counts the skipped rows.

The patent's MPI arrangement (documents partitioned over ranks, an all-reduce of S and of the R term
blocks, topic rows solved by the rank that owns the term block) is the same arithmetic with the same
data placement: here Dask's scheduler plays the part of the all-reduce and of the owner of each block.

Reliability. Every task is a pure function of its inputs (the partitions are built by tasks whose inputs
are the rows of X themselves), so when a worker dies Dask recomputes what it held from the lineage and
the fit continues with the same numbers. ``checkpoint_dir`` writes U and every W_p after each iteration
(:mod:`rlsi.distributed.checkpoint`); ``resume=True`` continues from the last complete iteration and
ends with the result of an uninterrupted fit.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from dask.sizeof import sizeof

from .._params import Anything, Boolean, Choice, Integer, Real
from .._validation import check_random_state
from ..errors import RLSIError
from ..io import register
from ..models import BatchRLSI, steps
from ..models.driver import alternate
from ..models.penalties import penalty as get_penalty
from ..models.regularization import warn_dead_topics
from ..models.tasks import block_rows, blocks
from . import _tasks, checkpoint
from .executor import DaskExecutor
from .partitions import partition_bounds

__all__ = ["DaskRLSI", "DistributedProblem"]


def tree_reduce(submit, fn, futures):
    """Reduce futures pairwise (a binary tree: depth log₂ n), keeping their order."""
    futures = list(futures)
    while len(futures) > 1:
        nxt = [submit(fn, futures[i], futures[i + 1]) for i in range(0, len(futures) - 1, 2)]
        if len(futures) % 2:
            nxt.append(futures[-1])
        futures = nxt
    return futures[0] if futures else None


class DistributedProblem:
    """Batch RLSI with X and W on the workers, as a problem for :func:`rlsi.models.driver.alternate`.

    ``parts[p]``, ``W[p]``: futures of the non-empty partitions and their document vectors (N_p x K);
    ``stats``: future of the reduced DocStats (S = WᵀW, cross); ``U``: topics on the client (CSR, M x K);
    ``U_fut`` / ``U_blocks``: the same on the workers (whole, and per term block for the warm start).
    """

    def __init__(self, executor, parts, part_workers, term_blocks, active, W, stats, *, x_sqnorm, K, dtype,
                 topic_penalty, doc_penalty, lambda1, lambda2, inner_max_iter, inner_tol, threads, row_norms=None):
        self.ex = executor
        self.parts, self.part_workers = parts, part_workers
        self.term_blocks, self.active = term_blocks, active
        self.W, self.stats = W, stats
        self.x_sqnorm, self.K, self.dtype = x_sqnorm, K, np.dtype(dtype)
        self.topic_pen = get_penalty(topic_penalty, param="topic_penalty")
        self.doc_pen = get_penalty(doc_penalty, param="doc_penalty")
        self.lambda1, self.lambda2 = lambda1, lambda2
        self.inner = dict(max_iter=inner_max_iter, tol=inner_tol)
        self.threads = threads
        self.U = self.U_fut = self.U_blocks = None
        self.cross = 0.0
        self.S = None
        self.q = 0.0
        self.client_bytes = 0  # what the client sent and gathered since the last reset
        # exact screening of term rows, as rlsi.models.screening.ScreenedBatchR (see the module docstring)
        self.row_norms = row_norms
        self.bound = None if row_norms is None else np.full(len(row_norms), np.inf)
        self.W_at_r = None
        self.rows_skipped = self.total_skipped = 0

    # ------------------------------------------------------------------ plumbing
    def submit(self, fn, *args, part=None, **kwargs):
        """Submit a task; ``part`` pins it to the worker that holds partition ``part`` (another worker may
        take it when that one is gone)."""
        where = {} if part is None else {"workers": [self.part_workers[part]], "allow_other_workers": True}
        return self.ex.client.submit(fn, *args, pure=False, **where, **kwargs)

    def gather(self, futures):
        out = self.ex.client.gather(futures)
        self.client_bytes += sizeof(out)
        return out

    # ------------------------------------------------------------------ the two steps
    def _rows_needed(self):
        """Term rows whose lasso solution is not certified zero (None: all), from the bound of each row
        moved by the drift of W since the rows were last computed (per-partition K-vectors, reduced)."""
        if self.bound is None:
            return None
        if self.W_at_r is not None:
            diffs = self.gather([self.submit(_tasks.col_sq_diff, w, w0, part=p)
                                 for p, (w, w0) in enumerate(zip(self.W, self.W_at_r))])
            drift = float(np.sqrt(np.max(np.sum(diffs, axis=0)))) if diffs else 0.0
            self.bound += self.row_norms * drift
        self.W_at_r = list(self.W)
        # a relative margin keeps the certificate valid under the rounding of the product itself
        need = self.bound > 0.5 * self.lambda1 * (1.0 - 1e-6)
        if self.U is not None:
            need |= np.diff(self.U.indptr) > 0
        self.rows_skipped = int(len(need) - np.count_nonzero(need))
        self.total_skipped += self.rows_skipped
        return need

    def u_step(self, executor=None):
        prepared = self.submit(_tasks.prepare_topics, self.stats, self.topic_pen, self.lambda1, self.K)
        need = self._rows_needed()
        results = []
        for j, (a, b) in enumerate(self.term_blocks):
            need_b = None if need is None else need[a:b]
            parts = self.active[j] if need_b is None or need_b.any() else []
            shares = [self.submit(_tasks.r_partial, self.parts[p], self.W[p], a, b, self.dtype, need_b, part=p,
                                  threads=self.threads) for p in parts]
            Rb = tree_reduce(self.submit, _tasks.add, shares)
            U_prev = None if self.U_blocks is None else self.U_blocks[j]
            results.append(self.submit(_tasks.topic_step, Rb, prepared, U_prev, b - a, self.K, self.dtype,
                                       penalty=self.topic_pen, lam=self.lambda1, threads=self.threads,
                                       **self.inner))
        self.U_fut = self.submit(_tasks.assemble, *results)  # (U, sweeps): the tasks take U from it
        self.U_blocks = results  # (U_b, ...) results: warm starts of the next U-step
        self.U, sweeps, peaks = self.gather(self.U_fut)
        if need is not None:
            for (a, b), (rows, peak) in zip(self.term_blocks, peaks):
                block = self.bound[a:b]  # a view: the computed rows get their new bound
                block[need[a:b]] = 0.0
                block[rows] = peak
        return {"nnz": self.U.nnz, "sweeps": sweeps, "screened": self.rows_skipped}

    def v_step(self, executor=None):
        prepared = self.submit(_tasks.prepare_docs, self.U_fut, self.doc_pen, self.lambda2)
        for p, part in enumerate(self.parts):  # W[p] holds (W_p, DocStats_p, Q(W_p)) on its worker
            self.W[p] = self.submit(_tasks.doc_step, part, self.U_fut, prepared, self.W[p], penalty=self.doc_pen,
                                    lam=self.lambda2, dtype=self.dtype, part=p, threads=self.threads, **self.inner)
        self.stats = tree_reduce(self.submit, _tasks.merge_stats, self.W)
        if len(self.W) == 1:
            self.stats = self.submit(_tasks.second, self.W[0], part=0)
        values = [self.submit(_tasks.third, w, part=p) for p, w in enumerate(self.W)]
        reduced, values = self.gather([self.stats, values])
        self.cross, self.S, self.q = reduced.cross, reduced.S, sum(values)
        return {}

    def objective(self):
        # Eq. (1) as rlsi.models.steps.objective writes it, with Q(W) summed over the partitions
        loss = self.x_sqnorm - 2.0 * self.cross + float(np.sum(steps.topic_gram(self.U) * self.S))
        return loss + self.lambda1 * self.topic_pen.value(self.U) + self.lambda2 * self.q


@register("DaskRLSI")
class DaskRLSI(BatchRLSI):
    """Batch RLSI fitted on a Dask cluster (see the module docstring); the result equals BatchRLSI's.

    Parameters
    ----------
    n_components, lambda1, lambda2, topic_penalty, doc_penalty, lambda1_scale, init, max_iter, tol,
    inner_max_iter, inner_tol, random_state, verbose : as :class:`rlsi.models.BatchRLSI`.
    n_jobs : None or int — numba threads inside each task (None: the cores divided by the worker threads
        of a LocalCluster started here; numba's default on another cluster).
    client : None or distributed.Client — run on this cluster (never closed here).
    scheduler : None or str — ``tcp://HOST:PORT`` of a running scheduler (when no client).
    n_workers, threads_per_worker : the loopback LocalCluster started and closed for the fit otherwise.
    partitions : None, int or list of sizes — document partitions (default: one per worker; see
        :mod:`rlsi.distributed.partitions`).
    checkpoint_dir : None or path — write U and W after every iteration (see
        :mod:`rlsi.distributed.checkpoint`); resume : bool — continue from its last complete iteration.
    timeout : float, default 10 — seconds to wait for ``scheduler``.

    Attributes
    ----------
    Those of BatchRLSI, plus ``bytes_moved_`` (ndarray (n_iter_,), int: bytes sent between workers and
    between the client and the cluster in each iteration), ``partitions_`` (list of (start, stop) document
    ranges), ``seconds_per_iter_`` (ndarray (n_iter_,)), ``resumed_from_`` (iterations loaded from the
    checkpoint, 0 for a fresh fit). ``to_local()`` returns the equivalent fitted BatchRLSI (what
    ``rlsi fit --backend dask`` saves, so the model directory is the local learner's).
    """

    _parameter_constraints = {
        # topics cross the network as CSR term blocks: the distributed learner keeps them sparse
        "topic_representation": Choice(("sparse",)),
        # the λ₁ search runs on the client's corpus; not wired into the distributed fit yet
        "target_terms_per_topic": Choice((None,)),
        "client": Anything(),
        "scheduler": Anything(),
        "n_workers": Integer(low=1),
        "threads_per_worker": Integer(low=1),
        "partitions": Anything(),  # checked by partition_bounds
        "checkpoint_dir": Anything(),
        "resume": Boolean(),
        "timeout": Real(low=0.0),
    }
    _state_scalars = BatchRLSI._state_scalars + ("resumed_from_",)
    _state_arrays = BatchRLSI._state_arrays + ("bytes_moved_",)

    def __init__(self, n_components=20, *, lambda1=0.05, lambda2=1.0, topic_penalty="l1", doc_penalty="l2",
                 lambda1_scale="per_doc", target_terms_per_topic=None, topic_representation="sparse",
                 init="docs", max_iter=100, tol=1e-4, inner_max_iter=100,
                 inner_tol=1e-4, random_state=None, n_jobs=None, client=None, scheduler=None, n_workers=2,
                 threads_per_worker=1, partitions=None, checkpoint_dir=None, resume=False, timeout=10.0,
                 verbose=0):
        super().__init__(n_components, lambda1=lambda1, lambda2=lambda2, topic_penalty=topic_penalty,
                         doc_penalty=doc_penalty, lambda1_scale=lambda1_scale,
                         target_terms_per_topic=target_terms_per_topic,
                         topic_representation=topic_representation, init=init, max_iter=max_iter,
                         tol=tol, inner_max_iter=inner_max_iter, inner_tol=inner_tol,
                         random_state=random_state, n_jobs=n_jobs, verbose=verbose)
        del self.executor  # not a parameter of this class: the executor is the cluster below
        self.client = client
        self.scheduler = scheduler
        self.n_workers = n_workers
        self.threads_per_worker = threads_per_worker
        self.partitions = partitions
        self.checkpoint_dir = checkpoint_dir
        self.resume = resume
        self.timeout = timeout

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None, V_init=None):
        """Fit on X (n_samples x n_features); W stays on the workers. Returns self."""
        self._fit(X, V_init, gather=False)
        return self

    def fit_transform(self, X, y=None, V_init=None):
        """Fit and return W (n_samples x n_components), gathered from the workers."""
        return self._fit(X, V_init, gather=True)

    def _fit(self, X, V_init, gather):
        self._validate_params()
        if self.resume and self.checkpoint_dir is None:
            raise RLSIError("resume=True needs checkpoint_dir= (the directory of the interrupted fit)")
        X = self._check_X(X, reset=True)
        self._check_sizes(X, V_init)
        N, M = X.shape
        lam1 = self.effective_lambda1(N)
        self.n_features_in_ = M
        self.lambda1_effective_ = lam1
        ex = DaskExecutor(self.client, scheduler=self.scheduler, n_workers=self.n_workers,
                          threads_per_worker=self.threads_per_worker, timeout=self.timeout,
                          task_threads=self.n_jobs)
        try:
            return self._run(ex, X, V_init, lam1, gather)
        finally:
            ex.close()

    def _run(self, ex, X, V_init, lam1, gather):
        N, M = X.shape
        K, dtype = self.n_components, X.dtype
        step = block_rows(K)
        bounds = partition_bounds(N, step, self.partitions, len(ex.workers()))
        self.partitions_ = bounds
        workers = ex.workers()
        live = [p for p, (a, b) in enumerate(bounds) if b > a]
        part_workers = [workers[i % len(workers)] for i in range(len(live))]
        term_blocks = blocks(M, step)
        client = ex.client
        sent0 = ex.transfer_bytes()
        with warnings.catch_warnings():  # the rows of X travel inside the tasks that build the partitions
            warnings.filterwarnings("ignore", message=".*[Ll]arge.*graph.*")
            parts = [client.submit(_tasks.make_part, X[bounds[p][0]:bounds[p][1]], bounds[p][0], step,
                                   pure=False, workers=[part_workers[i]], allow_other_workers=True)
                     for i, p in enumerate(live)]
        nnz = client.gather([client.submit(_tasks.term_block_nnz, part, term_blocks, pure=False) for part in parts])
        active = [[i for i in range(len(parts)) if nnz[i][j] > 0] for j in range(len(term_blocks))]
        row_norms = None
        if self._screen and get_penalty(self.topic_penalty).norm == "l1":
            sq = client.gather([client.submit(_tasks.row_sq_norms, part, pure=False) for part in parts])
            row_norms = np.sqrt(np.sum(sq, axis=0)) if sq else np.zeros(M)
        problem = DistributedProblem(
            ex, parts, part_workers, term_blocks, active, [None] * len(parts), None,
            x_sqnorm=float(np.square(X.data, dtype=np.float64).sum()), K=K, dtype=dtype,
            topic_penalty=self.topic_penalty, doc_penalty=self.doc_penalty, lambda1=lam1, lambda2=self.lambda2,
            inner_max_iter=self.inner_max_iter, inner_tol=self.inner_tol, threads=ex.task_threads,
            row_norms=row_norms)
        problem.client_bytes = sizeof(X) + (0 if row_norms is None else len(parts) * row_norms.nbytes)
        fingerprint = {"n_docs": N, "n_terms": M, "n_components": K, "dtype": dtype.name,
                       "partitions": [list(b) for b in bounds], "lambda1_effective": lam1,
                       "lambda2": self.lambda2, "topic_penalty": self.topic_penalty,
                       "doc_penalty": self.doc_penalty, "inner_max_iter": self.inner_max_iter,
                       "inner_tol": self.inner_tol}
        saved = checkpoint.read_state(self.checkpoint_dir) if self.resume else None
        objectives, moved, seconds = [], [], []
        if saved is not None:
            meta, U = saved
            checkpoint.check_compatible(meta, fingerprint)
            start = int(meta["iteration"])
            objectives, moved, seconds = list(meta["objectives"]), list(meta["bytes_moved"]), list(meta["seconds"])
            self._restore(problem, U, live, start)
        else:
            start = 0
            self._initialize(problem, X, V_init, bounds, live)
        self.resumed_from_ = start
        mark = {"sent": sent0, "time": time.perf_counter()}

        def callback(iteration, obj, diag):
            sent = ex.transfer_bytes()
            moved.append(int(sent - mark["sent"] + problem.client_bytes))
            problem.client_bytes = 0
            objectives.append(obj)
            if self.checkpoint_dir is not None:
                self._checkpoint(problem, live, iteration, dict(fingerprint, objectives=objectives,
                                                                bytes_moved=moved, seconds=seconds + [
                                                                    time.perf_counter() - mark["time"]]))
                sent = ex.transfer_bytes()
            seconds.append(time.perf_counter() - mark["time"])
            mark.update(sent=sent, time=time.perf_counter())

        done = start >= self.max_iter or (
            len(objectives) >= 2 and abs(objectives[-2] - objectives[-1]) <= self.tol * max(abs(objectives[-2]),
                                                                                           1e-300))
        if not done:
            alternate(problem, max_iter=self.max_iter, tol=self.tol, executor=ex, name=type(self).__name__,
                      verbose=self.verbose, callback=callback, start_iteration=start,
                      previous=objectives[-1] if objectives else None)
        U = problem.U
        self._set_components(U.T.tocsr().astype(dtype))
        self.objective_ = np.asarray(objectives)
        self.bytes_moved_ = np.asarray(moved, dtype=np.int64)
        self.seconds_per_iter_ = np.asarray(seconds)
        self.n_rows_screened_ = int(problem.total_skipped)
        self.n_iter_ = len(objectives)
        warn_dead_topics(self, N)
        if not gather:
            return None
        W = np.zeros((N, K), dtype=dtype)
        for i, p in enumerate(live):
            a, b = bounds[p]
            W[a:b] = _tasks._w(client.gather(problem.W[i]))
        return W

    def _initialize(self, problem, X, V_init, bounds, live):
        """W₀ (and S₀ = W₀ᵀW₀) on the workers, as BatchRLSI._initial_doc_vectors makes them."""
        N, M = X.shape
        K = self.n_components
        sub = problem.submit
        if V_init is not None or self.init == "random":
            if V_init is not None:
                W0 = np.asarray(V_init, dtype=X.dtype)
                if W0.shape != (N, K):
                    raise RLSIError(f"V_init has shape {W0.shape}, expected (n_samples, n_components)={(N, K)}")
                if not np.all(np.isfinite(W0)):
                    raise RLSIError("V_init holds NaN or infinite values")
            else:
                rng = check_random_state(self.random_state)
                sigma = np.sqrt(float(np.square(X.data, dtype=np.float64).sum()) / (N * K))
                W0 = (rng.standard_normal((N, K)) * sigma).astype(X.dtype)
            problem.W = [sub(_tasks.identity, np.ascontiguousarray(W0[bounds[p][0]:bounds[p][1]]), part=i)
                         for i, p in enumerate(live)]
            grams = [sub(_tasks.gram_stats, w, part=i) for i, w in enumerate(problem.W)]
        else:
            rng = check_random_state(self.random_state)
            nonempty = np.flatnonzero(np.diff(X.indptr) > 0)
            if len(nonempty) < K:
                raise RLSIError(
                    f"n_components={K} needs at least {K} documents with non-zero weights; X has "
                    f"{len(nonempty)} of {N} (with tf-idf weights a document is all zero when every one of "
                    f"its terms occurs in every document, e.g. identical documents)")
            picks = np.sort(rng.choice(nonempty, size=K, replace=False))
            U0 = X[picks].T.tocsr()
            norms = np.sqrt(np.asarray(U0.multiply(U0).sum(axis=0)).ravel())
            U0 = (U0 @ sp.diags(1.0 / norms)).tocsr().astype(X.dtype)
            U0_fut = sub(_tasks.identity, U0)
            prepared = sub(_tasks.prepare_docs, U0_fut, problem.doc_pen, self.lambda2)
            problem.W = [sub(_tasks.doc_step, part, U0_fut, prepared, None, penalty=problem.doc_pen,
                             lam=self.lambda2, dtype=X.dtype, whole_gram=True, part=i, threads=problem.threads,
                             **problem.inner) for i, part in enumerate(problem.parts)]
            grams = [sub(_tasks.second, r, part=i) for i, r in enumerate(problem.W)]
        problem.stats = tree_reduce(sub, _tasks.merge_stats, grams)

    def _checkpoint(self, problem, live, iteration, meta):
        directory = Path(self.checkpoint_dir)
        directory.mkdir(parents=True, exist_ok=True)
        writes = [problem.submit(_tasks.save_part_w, w, str(checkpoint.part_path(directory, iteration, p)), part=i)
                  for i, (p, w) in enumerate(zip(live, problem.W))]
        problem.ex.client.gather(writes)
        checkpoint.write_state(directory, iteration, problem.U, meta)

    def _restore(self, problem, U, live, iteration):
        """State after ``iteration`` from the checkpoint: U (client and workers), W_p and S on the workers."""
        sub = problem.submit
        problem.U = U
        problem.U_fut = sub(_tasks.identity, U)
        problem.U_blocks = [sub(_tasks.rows, problem.U_fut, a, b) for a, b in problem.term_blocks]  # CSR blocks
        problem.W = [sub(_tasks.load_part_w, str(checkpoint.part_path(self.checkpoint_dir, iteration, p)),
                         problem.dtype, part=i) for i, p in enumerate(live)]
        grams = [sub(_tasks.block_gram, part, w, part=i) for i, (part, w) in enumerate(zip(problem.parts, problem.W))]
        problem.stats = tree_reduce(sub, _tasks.merge_stats, grams)

    # ------------------------------------------------------------------ persistence
    def to_local(self):
        """The fitted model as a :class:`rlsi.models.BatchRLSI` (same parameters, topics and attributes)."""
        from ..models.base import check_fitted

        check_fitted(self)
        names = BatchRLSI().get_params(deep=False)
        local = BatchRLSI(**{k: v for k, v in self.get_params(deep=False).items() if k in names})
        for key in BatchRLSI._state_scalars + ("objective_", "n_rows_screened_"):
            if hasattr(self, key):
                setattr(local, key, getattr(self, key))
        local._set_components(self.components_)
        return local

    def _to_state(self):
        saved = self.client, self.checkpoint_dir
        try:  # a client is not a file value; the checkpoint path is kept as text
            self.client = None
            self.checkpoint_dir = None if self.checkpoint_dir is None else str(self.checkpoint_dir)
            return super()._to_state()
        finally:
            self.client, self.checkpoint_dir = saved
