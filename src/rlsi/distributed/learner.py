"""Distributed batch RLSI on Dask: TOIS §4.4 (Map-1/Reduce-1, Map-2/Reduce-2) with the local core.

Input. ``fit(X)`` with X on the client cuts X into document partitions
(:mod:`rlsi.distributed.partitions`) and ships their rows once. For a corpus that need not fit on the
client, :func:`rlsi.distributed.vectorize_files` reads and vectorizes JSON lines files on the workers
(:mod:`rlsi.distributed.files`) into a :class:`~rlsi.distributed.files.WorkerMatrix`, and ``fit(matrix)``
makes one partition of each non-empty file, on the worker that holds its rows; ``fit_files(paths)`` does
both. Everything below reads X through the partitions only: the documents that seed the topics
(``init="docs"``) are K rows fetched from their partitions, ‖X‖² is reduced from them.

Data placement. Each partition is made into a :class:`~rlsi.distributed._tasks.Part` (its rows of X and
of D = Xᵀ) by a task on its worker; the document vectors W_p of a partition are produced and kept on the
same worker. The client keeps U (terms x topics, CSR or dense: ``topic_representation`` as BatchRLSI, see
:mod:`rlsi.distributed.problem`), S (K x K) and scalars. Per iteration (one
:func:`rlsi.models.driver.alternate` step of :class:`~rlsi.distributed.problem.DistributedProblem`):

* Map-1/Reduce-1 (U-step): ``S = Σ_p S_p`` was reduced in the previous V-step; ``prepare(S, λ₁)`` is one
  K x K task. For every term block ``[a, b)`` of the local learner, each partition that holds terms of
  the block computes its share ``D_{[a,b), p} W_p`` where W_p lives; the shares are summed by a tree of
  additions and the block's lasso rows are solved by :func:`rlsi.models.tasks.topic_block` (warm-started
  from the block's previous rows, which stay where they were solved). The blocks are stacked into U.
* Map-2/Reduce-2 (V-step): ``prepare(UᵀU, λ₂)`` (K x K) is one task; every partition folds in its
  documents with :func:`rlsi.models.tasks.doc_block` (through ``_tasks.doc_step``) and returns its
  :class:`~rlsi.models.tasks.DocStats`; these are tree-reduced with ``DocStats.merge``.

What crosses the network: U (CSR, or dense with dense topics) to each partition and to the client, K x K
matrices, the partial R rows of a term block from each partition that has its terms, and a few scalars.
D, X and W are never gathered on the client (``fit_transform`` gathers W because it returns it).
``bytes_moved_`` records, per iteration, Dask's own count of bytes sent between workers plus the bytes
of what the client sends and gathers (:func:`dask.sizeof.sizeof`).

Equality with :class:`rlsi.models.BatchRLSI` (same data, parameters and seed). Every task is the local
learner's task on the same rows, so one partition is **bit-identical** to the local learner (the serial
learner is the one-worker distributed learner). With several partitions the sums S, R, cross and the
penalty of W are added in another order (a tree over partitions instead of one pass), which changes
their rounding (relative 1e-16); the tests check components, W and objectives to 1e-10 relative.

Screening. The exact row screening of the local U-step (:class:`rlsi.models.rlsi_policy.ScreeningBounds`)
is the same object here: the client keeps each term row's bound, moved each iteration by ``‖d_m‖ · max_k
‖ΔW_k‖`` where ``‖d_m‖²`` and the column drifts ``Σ_n ΔW_nk²`` are reduced from the partitions (M floats
once, K floats per partition per iteration), and sends each partition the block's mask of rows still
needed; a skipped row is neither computed nor sent. It never changes U (it only skips rows whose
solution is zero); ``n_rows_screened_`` counts the skipped rows.

Sparsity target. ``target_terms_per_topic`` runs the λ₁ search of :mod:`rlsi.models.sparsity` with the
same random sample of term rows: the sampled rows of R = D W (at most ``SAMPLE_ROWS`` x K) and S are
reduced from the partitions, the bisection runs on the client, and the RLSI iterations between rounds
are distributed problems. So the λ₁ found is the local learner's (to rounding), and, as there, the fit
continues from the search's last problem instead of starting again from W₀.

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

import contextlib
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from dask.sizeof import sizeof

from .._params import Anything, Boolean, Integer, Real
from .._validation import check_random_state
from ..errors import RLSIError
from ..io import register
from ..models import BatchRLSI
from ..models.penalties import penalty as get_penalty
from ..models.regularization import DEFAULT_LAMBDA1, DEFAULT_LAMBDA2, warn_dead_topics
from ..models.rlsi_policy import TOPIC_SWEEPS
from ..models.seeding import check_doc_vectors, pick_seed_documents, random_doc_vectors, unit_topics
from ..models.sparsity import bisect_rows, lambda1_for_terms_per_topic, sample_term_rows
from ..models.tasks import block_rows, blocks
from . import _tasks, checkpoint
from .executor import DaskExecutor
from .files import WorkerMatrix, vectorize_files
from .partitions import partition_bounds
from .problem import DistributedProblem, tree_reduce

__all__ = ["DaskRLSI", "DistributedProblem"]


@dataclass
class _Record:
    """What a distributed fit records per iteration (and its checkpoint holds): objectives, bytes moved,
    seconds; where the partitions are; the fingerprint a resumed fit must match."""

    bounds: list
    live: list
    start_bytes: int
    objectives: list = field(default_factory=list)
    moved: list = field(default_factory=list)
    seconds: list = field(default_factory=list)
    fingerprint: dict = field(default_factory=dict)
    mark: dict = field(default_factory=dict)


@register("DaskRLSI")
class DaskRLSI(BatchRLSI):
    """Batch RLSI fitted on a Dask cluster (see the module docstring); the result equals BatchRLSI's.

    Parameters
    ----------
    n_components, lambda1, lambda2, topic_penalty, doc_penalty, lambda1_scale, target_terms_per_topic,
    topic_representation, init, max_iter, tol, inner_max_iter, inner_tol, topic_sweeps, random_state,
    verbose : as
    :class:`rlsi.models.BatchRLSI` (same defaults, same result).
    n_jobs : None or int — numba threads inside each task (None: the cores divided by the worker threads
        of a LocalCluster started here; numba's default on another cluster).
    executor : None or :class:`~rlsi.distributed.DaskExecutor` — the cluster to run on (never closed here);
        None opens one from ``client``, ``scheduler`` or a LocalCluster.
    client : None or distributed.Client — run on this cluster (never closed here).
    scheduler : None or str — ``tcp://HOST:PORT`` of a running scheduler (when no client).
    n_workers, threads_per_worker : the loopback LocalCluster started and closed for the fit otherwise.
    partitions : None, int or list of sizes — document partitions (default: one per worker; see
        :mod:`rlsi.distributed.partitions`); must be None for a WorkerMatrix (one partition per file).
    checkpoint_dir : None or path — write U and W after every iteration (see
        :mod:`rlsi.distributed.checkpoint`); resume : bool — continue from its last complete iteration.
    timeout : float, default 10 — seconds to wait for ``scheduler``.

    Input: ``fit(X)`` / ``fit_transform(X)`` with X a sparse matrix on the client or a
    :class:`~rlsi.distributed.files.WorkerMatrix` on the workers (:func:`rlsi.distributed.vectorize_files`);
    ``fit_files(paths, vectorizer)`` reads, vectorizes and fits JSON lines files on the workers.

    Attributes
    ----------
    Those of BatchRLSI (``topic_representation_``, ``lambda1_`` included), plus ``vectorizer_`` (after
    ``fit_files``: the fitted TfidfVectorizer), ``bytes_moved_`` (ndarray (n_iter_,), int: bytes sent
    between workers and between the client and the cluster in each iteration), ``partitions_`` (list of
    (start, stop) document ranges), ``seconds_per_iter_`` (ndarray (n_iter_,)), ``resumed_from_``
    (iterations loaded from the checkpoint, 0 for a fresh fit). ``to_local()`` returns the equivalent fitted BatchRLSI (what
    ``rlsi fit --backend dask`` saves, so the model directory is the local learner's).
    """

    _parameter_constraints = {
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

    def __init__(self, n_components=20, *, lambda1=DEFAULT_LAMBDA1, lambda2=DEFAULT_LAMBDA2, topic_penalty="l1", doc_penalty="l2",
                 lambda1_scale="per_doc", target_terms_per_topic=None, topic_representation="auto",
                 init="docs", max_iter=100, tol=1e-4, inner_max_iter=100,
                 inner_tol=1e-4, topic_sweeps=TOPIC_SWEEPS, random_state=None, n_jobs=None, executor=None,
                 client=None, scheduler=None, n_workers=2, threads_per_worker=1, partitions=None,
                 checkpoint_dir=None, resume=False, timeout=10.0, verbose=0):
        super().__init__(n_components, lambda1=lambda1, lambda2=lambda2, topic_penalty=topic_penalty,
                         doc_penalty=doc_penalty, lambda1_scale=lambda1_scale,
                         target_terms_per_topic=target_terms_per_topic,
                         topic_representation=topic_representation, init=init, max_iter=max_iter,
                         tol=tol, inner_max_iter=inner_max_iter, inner_tol=inner_tol, topic_sweeps=topic_sweeps,
                         random_state=random_state, n_jobs=n_jobs, executor=executor, verbose=verbose)
        self.client = client
        self.scheduler = scheduler
        self.n_workers = n_workers
        self.threads_per_worker = threads_per_worker
        self.partitions = partitions
        self.checkpoint_dir = checkpoint_dir
        self.resume = resume
        self.timeout = timeout

    # ------------------------------------------------------------------ fitting
    def fit_files(self, paths, vectorizer=None, *, text_fields=("title", "text")):
        """Read, vectorize and fit corpus files on the workers (:func:`rlsi.distributed.vectorize_files`):
        neither the documents nor X pass through the client. ``paths``: JSON lines files (gzip or not),
        one partition per non-empty file; ``vectorizer``: an unfitted :class:`rlsi.text.TfidfVectorizer`
        with the text parameters (default ``TfidfVectorizer()``). Sets ``vectorizer_`` (the fitted
        vectorizer, equal to ``TfidfVectorizer.fit`` on the files' documents in order). Returns self."""
        self._validate_params()
        ex = self._open_executor(None)
        matrix = None
        try:
            matrix = vectorize_files(paths, vectorizer, client=ex.client, text_fields=text_fields)
            self.vectorizer_ = matrix.vectorizer
            self._fit(matrix, None, {}, output=False, executor=ex)
        finally:
            if matrix is not None:
                matrix.release()
            self._close_executor(ex)
        return self

    def _open_executor(self, X):
        """The cluster: the ``executor`` given, or one opened on ``client`` / ``scheduler`` / a LocalCluster
        (a WorkerMatrix's own client replaces the cluster named by the parameters)."""
        if self.executor is not None:
            if not isinstance(self.executor, DaskExecutor):
                raise RLSIError(f"executor={self.executor!r} is not a DaskExecutor; DaskRLSI runs on a Dask "
                                f"cluster (pass a DaskExecutor, a client=, a scheduler= or nothing)")
            return self.executor
        client = X.client if isinstance(X, WorkerMatrix) else self.client
        scheduler = self.scheduler if client is self.client else None
        return DaskExecutor(client, scheduler=scheduler, n_workers=self.n_workers,
                            threads_per_worker=self.threads_per_worker, timeout=self.timeout,
                            task_threads=self.n_jobs)

    def _fit_threads(self):
        return contextlib.nullcontext()  # n_jobs is the tasks' threads (DaskExecutor.task_threads)

    def _check_fit_input(self, X, y, V_init=None):
        if self.resume and self.checkpoint_dir is None:
            raise RLSIError("resume=True needs checkpoint_dir= (the directory of the interrupted fit)")
        checkpoint.check_directory(self.checkpoint_dir)  # a file or a read-only folder: refused before any work
        if isinstance(X, WorkerMatrix):
            if self.client is not None and self.client is not X.client:
                raise RLSIError("X lives on another Dask cluster than client=; fit it with its own client "
                                "(or leave client=None)")
            if self.partitions is not None:
                raise RLSIError(f"partitions={self.partitions!r} does not apply to corpus files (each "
                                f"non-empty file is one partition); drop partitions= or split the files")
        else:
            X = self._check_X(X, reset=True)
        self._check_sizes(X.shape, V_init)
        return X, y

    def _place(self, ex, X, step):
        """Partitions on the workers: ``(bounds, live, parts, part_workers, client_bytes)``."""
        workers = ex.workers()
        if isinstance(X, WorkerMatrix):  # one partition per non-empty file, where its rows already are
            bounds = X.bounds
            live = [p for p, (a, b) in enumerate(bounds) if b > a]
            who = ex.client.who_has([X.blocks[p] for p in live])  # the blocks are computed (vectorize_files)
            part_workers = [sorted(who.get(X.blocks[p].key) or workers)[0] for p in live]
            parts = [ex.submit(_tasks.make_part, X.blocks[p], bounds[p][0], step, where=part_workers[i])
                     for i, p in enumerate(live)]
            return bounds, live, parts, part_workers, 0
        bounds = partition_bounds(X.shape[0], step, self.partitions, len(workers))
        live = [p for p, (a, b) in enumerate(bounds) if b > a]
        part_workers = [workers[i % len(workers)] for i in range(len(live))]
        with warnings.catch_warnings():  # the rows of X travel inside the tasks that build the partitions
            warnings.filterwarnings("ignore", message=".*[Ll]arge.*graph.*")
            parts = [ex.submit(_tasks.make_part, X[bounds[p][0]:bounds[p][1]], bounds[p][0], step,
                               where=part_workers[i]) for i, p in enumerate(live)]
        return bounds, live, parts, part_workers, sizeof(X)

    def _start(self, X, y, ex, V_init=None):
        """The partitions, the corpus constants reduced from them, W₀ (or the checkpoint's state), λ₁ and
        the problem."""
        N, M = X.shape
        self.n_features_in_ = M
        K, dtype = self.n_components, np.dtype(X.dtype)
        step = block_rows(K)
        term_blocks = blocks(M, step)
        sent0 = ex.transfer_bytes()
        bounds, live, parts, part_workers, sent_client = self._place(ex, X, step)
        self.partitions_ = bounds

        def reduced(task, *args):  # one task per partition, gathered in partition order
            return ex.gather([ex.submit(task, part, *args) for part in parts])

        nnz = reduced(_tasks.term_block_nnz, term_blocks)
        active = [[i for i in range(len(parts)) if nnz[i][j] > 0] for j in range(len(term_blocks))]
        # ‖X‖² as the sum of the partitions' (one partition: the local learner's very number)
        x_sqnorm = sum(reduced(_tasks.sq_norm))
        df = sum(reduced(_tasks.col_counts, M), np.zeros(M))
        row_norms = None
        if self._tuning.screen and get_penalty(self.topic_penalty).norm == "l1":
            sq = reduced(_tasks.row_sq_norms)
            row_norms = np.sqrt(np.sum(sq, axis=0)) if sq else np.zeros(M)

        def make_problem(W, stats, lam):
            return DistributedProblem(
                ex, parts, part_workers, term_blocks, active, W, stats, x_sqnorm=float(x_sqnorm), K=K,
                dtype=dtype, topic_penalty=self.topic_penalty, doc_penalty=self.doc_penalty, lambda1=lam,
                lambda2=self.lambda2, inner_max_iter=self.inner_max_iter, inner_tol=self.inner_tol,
                threads=ex.task_threads, row_norms=row_norms, representation=self.topic_representation, df=df,
                topic_sweeps=self.topic_sweeps, tuning=self._tuning)

        target = self.target_terms_per_topic
        lam1 = None if target is not None else self.effective_lambda1(N)
        saved = checkpoint.read_state(self.checkpoint_dir) if self.resume else None
        if saved is not None and target is not None:
            lam1 = saved[0].get("lambda1_effective")  # the λ₁ the interrupted fit found
        problem = make_problem([None] * len(parts), None, lam1)
        problem.client_bytes = sent_client + (0 if row_norms is None else len(parts) * row_norms.nbytes)
        record = _Record(bounds=bounds, live=live, start_bytes=sent0)
        if saved is None:
            self._initialize(problem, V_init, bounds, live)
            if target is not None:  # continue from the search's last problem, as BatchRLSI does
                lam1, last = self._lambda1_for_target(problem, make_problem, target, M)
                if last is not None:
                    last.client_bytes += problem.client_bytes
                    last.rows_skipped = last.total_skipped = 0
                    last.used.clear()  # the fit's diagnostics count from here
                    problem = last
                problem.lambda1 = lam1
        record.fingerprint = {
            "n_docs": N, "n_terms": M, "n_components": K, "dtype": dtype.name,
            "partitions": [list(b) for b in bounds], "lambda1_effective": lam1, "target_terms_per_topic": target,
            "topic_representation": self.topic_representation, "lambda2": self.lambda2,
            "topic_penalty": self.topic_penalty, "doc_penalty": self.doc_penalty,
            "inner_max_iter": self.inner_max_iter, "inner_tol": self.inner_tol}
        if saved is not None:
            meta, U = saved
            checkpoint.check_compatible(meta, record.fingerprint)
            record.objectives = list(meta["objectives"])
            record.moved, record.seconds = list(meta["bytes_moved"]), list(meta["seconds"])
            self._restore(problem, U, live, int(meta["iteration"]), meta.get("representations", []))
        self._set_lambda1(lam1, N)
        self.resumed_from_ = 0 if saved is None else int(saved[0]["iteration"])
        problem.record = record
        return problem

    def _alternate_options(self, problem):
        """The per-iteration record (traffic, time, objective) and checkpoint; a resumed fit's history."""
        record, ex = problem.record, problem.ex
        record.mark = {"sent": record.start_bytes, "time": time.perf_counter()}

        def callback(iteration, obj, diag):
            sent = ex.transfer_bytes()
            record.moved.append(int(sent - record.mark["sent"] + problem.client_bytes))
            problem.client_bytes = 0
            record.objectives.append(obj)
            if self.checkpoint_dir is not None:
                self._checkpoint(problem, record.live, iteration, dict(
                    record.fingerprint, objectives=record.objectives, bytes_moved=record.moved,
                    representations=problem.used,
                    seconds=record.seconds + [time.perf_counter() - record.mark["time"]]))
                sent = ex.transfer_bytes()
            record.seconds.append(time.perf_counter() - record.mark["time"])
            record.mark.update(sent=sent, time=time.perf_counter())

        return {"callback": callback, "history": list(record.objectives)}

    def _finish(self, problem, trace, X):
        record = problem.record
        self._set_components(problem.components(np.dtype(X.dtype)))
        self._finish_representation(problem.used)
        self.objective_ = np.asarray(record.objectives)
        self.bytes_moved_ = np.asarray(record.moved, dtype=np.int64)
        self.seconds_per_iter_ = np.asarray(record.seconds)
        self.n_rows_screened_ = int(problem.total_skipped)
        self.n_iter_ = len(record.objectives)
        warn_dead_topics(self, X.shape[0])

    def _fit_output(self, problem, X):
        """W (n_samples x n_components), gathered from the workers."""
        N, K = X.shape[0], self.n_components
        W = np.zeros((N, K), dtype=X.dtype)
        for i, p in enumerate(problem.record.live):
            a, b = problem.record.bounds[p]
            W[a:b] = _tasks._w(problem.ex.gather(problem.W[i]))
        return W

    def _initialize(self, problem, V_init, bounds, live):
        """W₀ (and S₀ = W₀ᵀW₀) on the workers, as :mod:`rlsi.models.seeding` makes them locally; the
        documents that seed the topics (``init="docs"``) are fetched from their partitions (K rows)."""
        N = bounds[-1][1]
        K, dtype = self.n_components, problem.dtype
        sub = problem.submit
        if V_init is not None or self.init == "random":
            if V_init is not None:
                W0 = check_doc_vectors(V_init, (N, K), dtype)
            else:  # drawn on the client: the local learner's random stream (N x K)
                W0 = random_doc_vectors(check_random_state(self.random_state), N, K, problem.x_sqnorm, dtype)
            problem.W = [sub(_tasks.identity, np.ascontiguousarray(W0[bounds[p][0]:bounds[p][1]]), part=i)
                         for i, p in enumerate(live)]
            grams = [sub(_tasks.gram_stats, w, part=i) for i, w in enumerate(problem.W)]
        else:
            rng = check_random_state(self.random_state)
            masks = problem.gather([sub(_tasks.nonempty_rows, part, part=i) for i, part in enumerate(problem.parts)])
            nonempty = np.concatenate([np.flatnonzero(m) + bounds[p][0] for p, m in zip(live, masks)] or [[]])
            picks = pick_seed_documents(nonempty, K, N, rng)
            pieces = []
            for i, p in enumerate(live):
                a, b = bounds[p]
                local = picks[(picks >= a) & (picks < b)] - a
                if len(local):
                    pieces.append(sub(_tasks.take_rows, problem.parts[i], local, part=i))
            U0_fut = sub(_tasks.identity, unit_topics(sp.vstack(problem.gather(pieces), format="csr"), dtype))
            prepared = sub(_tasks.prepare_docs, U0_fut, problem.doc_pen, self.lambda2)
            problem.W = [sub(_tasks.doc_step, part, U0_fut, prepared, None, problem.policy.doc_settings(),
                             dtype=dtype, whole_gram=True, part=i, threads=problem.threads)
                         for i, part in enumerate(problem.parts)]
            grams = [sub(_tasks.second, r, part=i) for i, r in enumerate(problem.W)]
        problem.stats = tree_reduce(sub, _tasks.merge_stats, grams)

    def _lambda1_for_target(self, problem, make_problem, target, M):
        """λ₁ for ``target_terms_per_topic``: :func:`rlsi.models.sparsity.lambda1_for_terms_per_topic` with
        the sampled rows of R = D W and S = WᵀW reduced from the partitions (the bisection itself runs on
        the client over those rows: at most SAMPLE_ROWS x K numbers cross the network per round). Returns
        ``(λ₁, problem)``: the search's last problem (None with one round), which the fit continues."""
        rng = check_random_state(self.random_state)
        sub = problem.submit

        def gram_of(W):  # the local learner's steps.gram(W), as a sum over the partitions
            return tree_reduce(sub, _tasks.merge_stats, [sub(_tasks.gram_stats, w, part=i) for i, w in enumerate(W)])

        def bisect(W):
            rows = sample_term_rows(M, rng)
            shares = [sub(_tasks.sampled_r_rows, part, w, rows, part=i)
                      for i, (part, w) in enumerate(zip(problem.parts, W))]
            R, stats = problem.gather([tree_reduce(sub, _tasks.add_arrays, shares), gram_of(W)])
            return bisect_rows(R, stats.S, target, scale=M / len(rows) / self.n_components,
                               positive=get_penalty(self.topic_penalty).nonneg, max_iter=self.inner_max_iter,
                               tol=self.inner_tol)

        return lambda1_for_terms_per_topic(
            None, list(problem.W), target, problem_factory=lambda W, lam_: make_problem(list(W), gram_of(W), lam_),
            rng=rng, positive=get_penalty(self.topic_penalty).nonneg, max_iter=self.inner_max_iter,
            tol=self.inner_tol, bisect=bisect, return_problem=True)

    def _checkpoint(self, problem, live, iteration, meta):
        directory = Path(self.checkpoint_dir)
        directory.mkdir(parents=True, exist_ok=True)
        writes = [problem.submit(_tasks.save_part_w, w, str(checkpoint.part_path(directory, iteration, p)), part=i)
                  for i, (p, w) in enumerate(zip(live, problem.W))]
        problem.ex.gather(writes)
        checkpoint.write_state(directory, iteration, problem.U, meta)

    def _restore(self, problem, U, live, iteration, representations):
        """State after ``iteration`` from the checkpoint: U (client and workers), W_p and S on the workers,
        and the representation the next U-step would use."""
        sub = problem.submit
        problem.U = U
        problem.U_fut = sub(_tasks.identity, U)
        problem.U_blocks = [sub(_tasks.rows, problem.U_fut, a, b) for a, b in problem.term_blocks]  # warm starts
        problem.W = [sub(_tasks.load_part_w, str(checkpoint.part_path(self.checkpoint_dir, iteration, p)),
                         problem.dtype, part=i) for i, p in enumerate(live)]
        grams = [sub(_tasks.block_gram, part, w, part=i) for i, (part, w) in enumerate(zip(problem.parts, problem.W))]
        problem.stats = tree_reduce(sub, _tasks.merge_stats, grams)
        problem.used[:] = representations
        problem.policy.after_u_step(int(np.count_nonzero(U)) if isinstance(U, np.ndarray) else U.nnz)

    # ------------------------------------------------------------------ persistence
    def to_local(self):
        """The fitted model as a :class:`rlsi.models.BatchRLSI` (same parameters, topics and attributes)."""
        from ..models.base import check_fitted

        check_fitted(self)
        names = set(BatchRLSI().get_params(deep=False)) - {"executor"}  # the cluster stays here
        local = BatchRLSI(**{k: v for k, v in self.get_params(deep=False).items() if k in names})
        for key in BatchRLSI._state_scalars + ("objective_", "n_rows_screened_"):
            if hasattr(self, key):
                setattr(local, key, getattr(self, key))
        local._set_components(self.components_)
        return local

    def _to_state(self):
        saved = self.client, self.executor, self.checkpoint_dir
        try:  # a client or an executor is not a file value; the checkpoint path is kept as text
            self.client = self.executor = None
            self.checkpoint_dir = None if self.checkpoint_dir is None else str(self.checkpoint_dir)
            return super()._to_state()
        finally:
            self.client, self.executor, self.checkpoint_dir = saved
