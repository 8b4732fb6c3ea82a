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

Screening. The exact row screening of the local U-step (:class:`rlsi.models.screening.ScreenedBatchR`)
is carried over: the client keeps each term row's bound, moved each iteration by ``‖d_m‖ · max_k
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

import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from dask.sizeof import sizeof

from .._params import Anything, Boolean, Integer, Real
from .._validation import check_random_state
from ..errors import RLSIError
from ..io import register
from ..models import BatchRLSI
from ..models.batch import TOPIC_SWEEPS
from ..models.driver import alternate
from ..models.penalties import penalty as get_penalty
from ..models.regularization import DOCS_PER_UNIT, warn_dead_topics
from ..models.sparsity import bisect_rows, lambda1_for_terms_per_topic, sample_term_rows
from ..models.tasks import block_rows, blocks
from . import _tasks, checkpoint
from .executor import DaskExecutor
from .files import WorkerMatrix, vectorize_files
from .partitions import partition_bounds
from .problem import DistributedProblem, tree_reduce

__all__ = ["DaskRLSI", "DistributedProblem"]


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

    def __init__(self, n_components=20, *, lambda1=0.05, lambda2=1.0, topic_penalty="l1", doc_penalty="l2",
                 lambda1_scale="per_doc", target_terms_per_topic=None, topic_representation="auto",
                 init="docs", max_iter=100, tol=1e-4, inner_max_iter=100,
                 inner_tol=1e-4, topic_sweeps=TOPIC_SWEEPS, random_state=None, n_jobs=None, client=None,
                 scheduler=None, n_workers=2, threads_per_worker=1, partitions=None, checkpoint_dir=None, resume=False, timeout=10.0,
                 verbose=0):
        super().__init__(n_components, lambda1=lambda1, lambda2=lambda2, topic_penalty=topic_penalty,
                         doc_penalty=doc_penalty, lambda1_scale=lambda1_scale,
                         target_terms_per_topic=target_terms_per_topic,
                         topic_representation=topic_representation, init=init, max_iter=max_iter,
                         tol=tol, inner_max_iter=inner_max_iter, inner_tol=inner_tol, topic_sweeps=topic_sweeps,
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
        """Fit on X (n_samples x n_features: a sparse matrix on the client, or a
        :class:`~rlsi.distributed.files.WorkerMatrix` already on the workers); W stays on the workers.
        Returns self."""
        self._fit(X, V_init, gather=False)
        return self

    def fit_transform(self, X, y=None, V_init=None):
        """Fit and return W (n_samples x n_components), gathered from the workers."""
        return self._fit(X, V_init, gather=True)

    def fit_files(self, paths, vectorizer=None, *, text_fields=("title", "text")):
        """Read, vectorize and fit corpus files on the workers (:func:`rlsi.distributed.vectorize_files`):
        neither the documents nor X pass through the client. ``paths``: JSON lines files (gzip or not),
        one partition per non-empty file; ``vectorizer``: an unfitted :class:`rlsi.text.TfidfVectorizer`
        with the text parameters (default ``TfidfVectorizer()``). Sets ``vectorizer_`` (the fitted
        vectorizer, equal to ``TfidfVectorizer.fit`` on the files' documents in order). Returns self."""
        self._validate_params()
        ex = self._executor(self.client)
        matrix = None
        try:
            matrix = vectorize_files(paths, vectorizer, client=ex.client, text_fields=text_fields)
            self.vectorizer_ = matrix.vectorizer
            self._fit(matrix, None, gather=False, executor=ex)
        finally:
            if matrix is not None:
                matrix.release()
            ex.close()
        return self

    def _executor(self, client):
        # a WorkerMatrix's own client replaces the cluster named by the parameters
        scheduler = self.scheduler if client is self.client else None
        return DaskExecutor(client, scheduler=scheduler, n_workers=self.n_workers,
                            threads_per_worker=self.threads_per_worker, timeout=self.timeout,
                            task_threads=self.n_jobs)

    def _fit(self, X, V_init, gather, executor=None):
        self._validate_params()
        if self.resume and self.checkpoint_dir is None:
            raise RLSIError("resume=True needs checkpoint_dir= (the directory of the interrupted fit)")
        checkpoint.check_directory(self.checkpoint_dir)  # a file or a read-only folder: refused before any work
        client = self.client
        if isinstance(X, WorkerMatrix):
            if client is not None and client is not X.client:
                raise RLSIError("X lives on another Dask cluster than client=; fit it with its own client "
                                "(or leave client=None)")
            if self.partitions is not None:
                raise RLSIError(f"partitions={self.partitions!r} does not apply to corpus files (each "
                                f"non-empty file is one partition); drop partitions= or split the files")
            client = X.client
        else:
            X = self._check_X(X, reset=True)
        self._check_sizes(X, V_init)
        N, M = X.shape
        target = self.target_terms_per_topic
        if target is not None and get_penalty(self.topic_penalty).norm != "l1":  # as BatchRLSI
            raise RLSIError(f"target_terms_per_topic needs l1 topics; topic_penalty={self.topic_penalty!r} "
                            f"gives dense topics")
        if target is not None and target > M:
            raise RLSIError(f"target_terms_per_topic={target} is larger than the vocabulary ({M} terms)")
        self.n_features_in_ = M
        ex = executor if executor is not None else self._executor(client)
        try:
            return self._run(ex, X, V_init, gather)
        finally:
            if ex is not executor:
                ex.close()

    def _place(self, ex, X, step):
        """Partitions on the workers: ``(bounds, live, parts, part_workers, client_bytes)``."""
        client = ex.client
        workers = ex.workers()
        if isinstance(X, WorkerMatrix):  # one partition per non-empty file, where its rows already are
            bounds = X.bounds
            live = [p for p, (a, b) in enumerate(bounds) if b > a]
            who = client.who_has([X.blocks[p] for p in live])  # the blocks are computed (vectorize_files)
            part_workers = [sorted(who.get(X.blocks[p].key) or workers)[0] for p in live]
            parts = [client.submit(_tasks.make_part, X.blocks[p], bounds[p][0], step, pure=False,
                                   workers=[part_workers[i]], allow_other_workers=True) for i, p in enumerate(live)]
            return bounds, live, parts, part_workers, 0
        bounds = partition_bounds(X.shape[0], step, self.partitions, len(workers))
        live = [p for p, (a, b) in enumerate(bounds) if b > a]
        part_workers = [workers[i % len(workers)] for i in range(len(live))]
        with warnings.catch_warnings():  # the rows of X travel inside the tasks that build the partitions
            warnings.filterwarnings("ignore", message=".*[Ll]arge.*graph.*")
            parts = [client.submit(_tasks.make_part, X[bounds[p][0]:bounds[p][1]], bounds[p][0], step,
                                   pure=False, workers=[part_workers[i]], allow_other_workers=True)
                     for i, p in enumerate(live)]
        return bounds, live, parts, part_workers, sizeof(X)

    def _run(self, ex, X, V_init, gather):
        N, M = X.shape
        K, dtype = self.n_components, np.dtype(X.dtype)
        step = block_rows(K)
        client = ex.client
        term_blocks = blocks(M, step)
        sent0 = ex.transfer_bytes()
        bounds, live, parts, part_workers, sent_client = self._place(ex, X, step)
        self.partitions_ = bounds
        nnz = client.gather([client.submit(_tasks.term_block_nnz, part, term_blocks, pure=False) for part in parts])
        active = [[i for i in range(len(parts)) if nnz[i][j] > 0] for j in range(len(term_blocks))]
        # ‖X‖² as the sum of the partitions' (one partition: the local learner's very number)
        x_sqnorm = sum(client.gather([client.submit(_tasks.sq_norm, part, pure=False) for part in parts]))
        df = sum(client.gather([client.submit(_tasks.col_counts, part, M, pure=False) for part in parts]),
                 np.zeros(M))
        row_norms = None
        if self._screen and get_penalty(self.topic_penalty).norm == "l1":
            sq = client.gather([client.submit(_tasks.row_sq_norms, part, pure=False) for part in parts])
            row_norms = np.sqrt(np.sum(sq, axis=0)) if sq else np.zeros(M)

        def make_problem(W, stats, lam):
            return DistributedProblem(
                ex, parts, part_workers, term_blocks, active, W, stats, x_sqnorm=float(x_sqnorm), K=K,
                dtype=dtype, topic_penalty=self.topic_penalty, doc_penalty=self.doc_penalty, lambda1=lam,
                lambda2=self.lambda2, inner_max_iter=self.inner_max_iter, inner_tol=self.inner_tol,
                threads=ex.task_threads, row_norms=row_norms, representation=self.topic_representation, df=df,
                topic_sweeps=self.topic_sweeps)

        target = self.target_terms_per_topic
        lam1 = None if target is not None else self.effective_lambda1(N)
        saved = checkpoint.read_state(self.checkpoint_dir) if self.resume else None
        if saved is not None and target is not None:
            lam1 = saved[0].get("lambda1_effective")  # the λ₁ the interrupted fit found
        problem = make_problem([None] * len(parts), None, lam1)
        problem.client_bytes = sent_client + (0 if row_norms is None else len(parts) * row_norms.nbytes)
        objectives, moved, seconds = [], [], []
        if saved is None:
            self._initialize(problem, V_init, bounds, live)
            if target is not None:  # continue from the search's last problem, as BatchRLSI does
                lam1, last = self._lambda1_for_target(problem, make_problem, target, M)
                if last is not None:
                    last.client_bytes += problem.client_bytes
                    last.rows_skipped = last.total_skipped = 0
                    last.used = []  # the fit's diagnostics count from here
                    problem = last
                problem.lambda1 = lam1
        fingerprint = {"n_docs": N, "n_terms": M, "n_components": K, "dtype": dtype.name,
                       "partitions": [list(b) for b in bounds], "lambda1_effective": lam1,
                       "target_terms_per_topic": target, "topic_representation": self.topic_representation,
                       "lambda2": self.lambda2, "topic_penalty": self.topic_penalty,
                       "doc_penalty": self.doc_penalty, "inner_max_iter": self.inner_max_iter,
                       "inner_tol": self.inner_tol}
        if saved is not None:
            meta, U = saved
            checkpoint.check_compatible(meta, fingerprint)
            start = int(meta["iteration"])
            objectives, moved, seconds = list(meta["objectives"]), list(meta["bytes_moved"]), list(meta["seconds"])
            self._restore(problem, U, live, start, meta.get("representations", []))
        else:
            start = 0
        self.lambda1_effective_ = lam1
        self.lambda1_ = lam1 if self.lambda1_scale == "paper" else lam1 * DOCS_PER_UNIT / N
        self.resumed_from_ = start
        mark = {"sent": sent0, "time": time.perf_counter()}

        def callback(iteration, obj, diag):
            sent = ex.transfer_bytes()
            moved.append(int(sent - mark["sent"] + problem.client_bytes))
            problem.client_bytes = 0
            objectives.append(obj)
            if self.checkpoint_dir is not None:
                self._checkpoint(problem, live, iteration, dict(
                    fingerprint, objectives=objectives, bytes_moved=moved, representations=problem.used,
                    seconds=seconds + [time.perf_counter() - mark["time"]]))
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
        self._set_components(problem.components(dtype))
        self.topic_representation_ = problem.used[-1] if problem.used else "sparse"
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

    def _initialize(self, problem, V_init, bounds, live):
        """W₀ (and S₀ = W₀ᵀW₀) on the workers, as BatchRLSI._initial_doc_vectors makes them; the documents
        that seed the topics (``init="docs"``) are fetched from their partitions (K rows)."""
        N = bounds[-1][1]
        K, dtype = self.n_components, problem.dtype
        sub = problem.submit
        if V_init is not None or self.init == "random":
            if V_init is not None:
                W0 = np.asarray(V_init, dtype=dtype)
                if W0.shape != (N, K):
                    raise RLSIError(f"V_init has shape {W0.shape}, expected (n_samples, n_components)={(N, K)}")
                if not np.all(np.isfinite(W0)):
                    raise RLSIError("V_init holds NaN or infinite values")
            else:  # drawn on the client: the local learner's random stream (N x K)
                rng = check_random_state(self.random_state)
                sigma = np.sqrt(problem.x_sqnorm / (N * K))
                W0 = (rng.standard_normal((N, K)) * sigma).astype(dtype)
            problem.W = [sub(_tasks.identity, np.ascontiguousarray(W0[bounds[p][0]:bounds[p][1]]), part=i)
                         for i, p in enumerate(live)]
            grams = [sub(_tasks.gram_stats, w, part=i) for i, w in enumerate(problem.W)]
        else:
            rng = check_random_state(self.random_state)
            masks = problem.gather([sub(_tasks.nonempty_rows, part, part=i) for i, part in enumerate(problem.parts)])
            nonempty = np.concatenate([np.flatnonzero(m) + bounds[p][0] for p, m in zip(live, masks)] or [[]])
            if len(nonempty) < K:
                raise RLSIError(
                    f"n_components={K} needs at least {K} documents with non-zero weights; X has "
                    f"{len(nonempty)} of {N} (with tf-idf weights a document is all zero when every one of "
                    f"its terms occurs in every document, e.g. identical documents)")
            picks = np.sort(rng.choice(nonempty.astype(np.int64), size=K, replace=False))
            pieces = []
            for i, p in enumerate(live):
                a, b = bounds[p]
                local = picks[(picks >= a) & (picks < b)] - a
                if len(local):
                    pieces.append(sub(_tasks.take_rows, problem.parts[i], local, part=i))
            U0 = sp.vstack(problem.gather(pieces), format="csr").T.tocsr()
            norms = np.sqrt(np.asarray(U0.multiply(U0).sum(axis=0)).ravel())
            U0 = (U0 @ sp.diags(1.0 / norms)).tocsr().astype(dtype)
            U0_fut = sub(_tasks.identity, U0)
            prepared = sub(_tasks.prepare_docs, U0_fut, problem.doc_pen, self.lambda2)
            problem.W = [sub(_tasks.doc_step, part, U0_fut, prepared, None, penalty=problem.doc_pen,
                             lam=self.lambda2, dtype=dtype, whole_gram=True, part=i, threads=problem.threads,
                             **problem.inner) for i, part in enumerate(problem.parts)]
            grams = [sub(_tasks.second, r, part=i) for i, r in enumerate(problem.W)]
        problem.stats = tree_reduce(sub, _tasks.merge_stats, grams)

    def _lambda1_for_target(self, problem, make_problem, target, M):
        """λ₁ for ``target_terms_per_topic``: :func:`rlsi.models.sparsity.lambda1_for_terms_per_topic` with
        the sampled rows of R = D W and S = WᵀW reduced from the partitions (the bisection itself runs on
        the client over those rows: at most SAMPLE_ROWS x K numbers cross the network per round). Returns
        ``(λ₁, problem)``: the search's last problem (None with one round), which the fit continues."""
        rng = check_random_state(self.random_state)
        sub, K = problem.submit, self.n_components

        def gram_of(W):  # the local learner's steps.gram(W), as a sum over the partitions
            return tree_reduce(sub, _tasks.merge_stats, [sub(_tasks.gram_stats, w, part=i) for i, w in enumerate(W)])

        def bisect(W):
            rows = sample_term_rows(M, rng)
            shares = [sub(_tasks.sampled_r_rows, part, w, rows, part=i)
                      for i, (part, w) in enumerate(zip(problem.parts, W))]
            R, stats = problem.gather([tree_reduce(sub, _tasks.add_arrays, shares), gram_of(W)])
            return bisect_rows(R, stats.S, target, scale=M / len(rows) / K,
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
        problem.ex.client.gather(writes)
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
        problem.used = list(representations)
        if problem.representation == "auto" and problem.dense_fits:
            nnz = int(np.count_nonzero(U)) if isinstance(U, np.ndarray) else U.nnz
            problem.dense = problem.next_dense(nnz)

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
