"""The Dask placement: batch RLSI with the documents partitioned over a cluster's workers (TOIS §4.4), and online
RLSI with each mini-batch projected on them.

:class:`DaskPlacement` implements the placement contract of :mod:`rlsi.models.placement` and registers itself as
``"dask"`` (a loopback LocalCluster) when this package is imported; ``BatchRLSI(placement=DaskPlacement(client=c))``
fits on a given cluster, and :class:`rlsi.distributed.DaskRLSI` / :class:`~rlsi.distributed.DaskOnlineRLSI` are
the learners with its settings as parameters. A batch fit is the one skeleton and the one start of every
placement over :class:`DaskCorpus`, whose primitives are tasks on the workers (the partitions' share of the
constants, the seed documents fetched from their partitions, the projection where the documents are, the λ₁
search's sampled rows of R and S reduced from the partitions) and whose problem is
:class:`rlsi.distributed.problem.DistributedProblem` (see :mod:`rlsi.distributed.learner` for the data
placement, the traffic and the equality with the local learner). What only a cluster needs is here too: the
bytes moved and the seconds of each iteration, and the checkpoint written after each iteration and resumed from
(:mod:`rlsi.distributed.checkpoint`).
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

from ..errors import RLSIError
from ..models.placement import Placement, register_placement
from ..models.seeding import pick_seed_documents, unit_topics
from ..models.tasks import block_rows, blocks
from . import _tasks, checkpoint
from .executor import DaskExecutor
from .files import WorkerMatrix
from .partitions import partition_bounds
from .problem import DistributedProblem, tree_reduce
from .stream import DaskStream

__all__ = ["DaskCorpus", "DaskPlacement", "PartitionVectors"]


@dataclass
class FitRecord:
    """What a distributed fit records per iteration (and its checkpoint holds): objectives, bytes moved,
    seconds; where the partitions are; ``history``: the objectives of the iterations a resumed fit had done;
    the fingerprint a resumed fit must match; ``client_bytes``: what the client sent and gathered since the
    last iteration was recorded."""

    bounds: list
    live: list
    start_bytes: int
    history: list = field(default_factory=list)
    objectives: list = field(default_factory=list)
    moved: list = field(default_factory=list)
    seconds: list = field(default_factory=list)
    fingerprint: dict = field(default_factory=dict)
    mark: dict = field(default_factory=dict)
    client_bytes: int = 0
    resumed_from: int = 0


@dataclass
class PartitionVectors:
    """Document vectors on the workers: one future per partition, and the future of their reduced statistics
    (S = WᵀW) when they are known (None: reduced when a problem needs them)."""

    parts: list
    stats: object = None


class DaskCorpus:
    """The documents of one batch fit on a Dask cluster (a :class:`rlsi.models.placement.PlacedCorpus`). X on the
    client is cut into partitions shipped once; a :class:`rlsi.distributed.files.WorkerMatrix` is one partition
    per non-empty file, where its rows already are. The corpus constants are reduced from the partitions in
    partition order (one partition: the local learner's very numbers)."""

    def __init__(self, placement, X, spec, ex):
        self.placement, self.ex, self.X = placement, ex, X
        self.shape = N, M = X.shape
        self.dtype = np.dtype(X.dtype)
        K = spec.n_components
        step = block_rows(K, spec.tuning.block_entries, spec.tuning.min_block_rows)  # the local learner's blocks
        self.term_blocks = blocks(M, step)
        sent0 = ex.transfer_bytes()
        bounds, self.live, self.parts, self.part_workers, sent_client = self._place(ex, X, step)
        nnz = self._reduced(_tasks.term_block_nnz, self.term_blocks)
        self.active = [[i for i in range(len(self.parts)) if nnz[i][j] > 0] for j in range(len(self.term_blocks))]
        self._x_sqnorm = float(sum(self._reduced(_tasks.sq_norm)))
        self.df = sum(self._reduced(_tasks.col_counts, M), np.zeros(M))
        self.row_norms = None
        if spec.tuning.screen and spec.topic_pen.norm == "l1":
            sq = self._reduced(_tasks.row_sq_norms)
            self.row_norms = np.sqrt(np.sum(sq, axis=0)) if sq else np.zeros(M)
        self.record = FitRecord(bounds=bounds, live=self.live, start_bytes=sent0)
        self.record.client_bytes = sent_client + (0 if self.row_norms is None else len(self.parts) *
                                                  self.row_norms.nbytes)

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
        bounds = partition_bounds(X.shape[0], step, self.placement.partitions, len(workers))
        live = [p for p, (a, b) in enumerate(bounds) if b > a]
        part_workers = [workers[i % len(workers)] for i in range(len(live))]
        with warnings.catch_warnings():  # the rows of X travel inside the tasks that build the partitions
            warnings.filterwarnings("ignore", message=".*[Ll]arge.*graph.*")
            parts = [ex.submit(_tasks.make_part, X[bounds[p][0]:bounds[p][1]], bounds[p][0], step,
                               where=part_workers[i]) for i, p in enumerate(live)]
        return bounds, live, parts, part_workers, sizeof(X)

    # ------------------------------------------------------------------ the placement's tasks
    def submit(self, fn, *args, part=None, **kwargs):
        """Submit a task; ``part`` pins it to the worker that holds partition ``part``."""
        return self.ex.submit(fn, *args, where=None if part is None else self.part_workers[part], **kwargs)

    def gather(self, futures):
        out = self.ex.gather(futures)
        self.record.client_bytes += sizeof(out)
        return out

    def _reduced(self, task, *args):
        """One task per partition, gathered in partition order."""
        return self.ex.gather([self.ex.submit(task, part, *args) for part in self.parts])

    def _gram(self, W):
        """The reduced statistics (S = WᵀW, the local learner's ``steps.gram(W)`` as a sum over the partitions)."""
        return tree_reduce(self.submit, _tasks.merge_stats,
                           [self.submit(_tasks.gram_stats, w, part=i) for i, w in enumerate(W)])

    # ------------------------------------------------------------------ the start's primitives
    def x_sqnorm(self):
        return self._x_sqnorm

    def seed_topics(self, k, rng):
        """The documents that seed the topics, fetched from their partitions (k rows), as unit topics."""
        N, bounds = self.shape[0], self.record.bounds
        masks = self.gather([self.submit(_tasks.nonempty_rows, part, part=i) for i, part in enumerate(self.parts)])
        nonempty = np.concatenate([np.flatnonzero(m) + bounds[p][0] for p, m in zip(self.live, masks)] or [[]])
        picks = pick_seed_documents(nonempty, k, N, rng)
        pieces = []
        for i, p in enumerate(self.live):
            a, b = bounds[p]
            local = picks[(picks >= a) & (picks < b)] - a
            if len(local):
                pieces.append(self.submit(_tasks.take_rows, self.parts[i], local, part=i))
        return unit_topics(sp.vstack(self.gather(pieces), format="csr"), self.dtype)

    def project(self, U, spec):
        """W₀ on the workers: each partition projects its documents on U (and S₀ = the gram of each whole W_p,
        as the local learner's initial S)."""
        U_fut = self.submit(_tasks.identity, U)
        prepared = self.submit(_tasks.prepare_docs, U_fut, spec.doc_pen, spec.lambda2)
        W = [self.submit(_tasks.doc_step, part, U_fut, prepared, None, spec.inner_settings(), dtype=self.dtype,
                         whole_gram=True, part=i, threads=self.ex.task_threads) for i, part in enumerate(self.parts)]
        grams = [self.submit(_tasks.second, r, part=i) for i, r in enumerate(W)]
        return PartitionVectors(W, tree_reduce(self.submit, _tasks.merge_stats, grams))

    def place(self, W):
        """Host vectors (drawn or given on the client) cut into the partitions."""
        bounds = self.record.bounds
        parts = [self.submit(_tasks.identity, np.ascontiguousarray(W[bounds[p][0]:bounds[p][1]]), part=i)
                 for i, p in enumerate(self.live)]
        return PartitionVectors(parts, self._gram(parts))

    def search_rows(self, W, rows):
        """The sampled rows of R = D W and S = WᵀW reduced from the partitions (at most SAMPLE_ROWS x K numbers
        cross the network per round)."""
        W = W.parts if isinstance(W, PartitionVectors) else W
        shares = [self.submit(_tasks.sampled_r_rows, part, w, rows, part=i)
                  for i, (part, w) in enumerate(zip(self.parts, W))]
        R, stats = self.gather([tree_reduce(self.submit, _tasks.add_arrays, shares), self._gram(W)])
        return R, stats.S

    def problem(self, W, lam, spec):
        if isinstance(W, PartitionVectors):
            W, stats = list(W.parts), W.stats if W.stats is not None else self._gram(W.parts)
        else:
            W, stats = list(W), self._gram(W)
        problem = DistributedProblem(
            self, W, stats, x_sqnorm=self._x_sqnorm, K=spec.n_components, dtype=self.dtype,
            topic_penalty=spec.topic_penalty, doc_penalty=spec.doc_penalty, lambda1=lam, lambda2=spec.lambda2,
            inner_max_iter=spec.inner_max_iter, inner_tol=spec.inner_tol, representation=spec.topic_representation,
            topic_sweeps=spec.topic_sweeps, tuning=spec.tuning)
        problem.alternate_options = lambda: self._alternate_options(problem, spec)
        return problem

    def resume(self, spec):
        """``(λ₁, problem)`` at the last complete iteration of the checkpoint (``resume=True``), or None."""
        if not self.placement.resume:
            return None
        saved = checkpoint.read_state(self.placement.checkpoint_dir)
        if saved is None:
            return None
        meta, U = saved
        lam1 = (meta.get("lambda1_effective") if spec.target_terms_per_topic is not None
                else spec.effective_lambda1(self.shape[0]))  # the λ₁ the interrupted fit found
        checkpoint.check_compatible(meta, self.fingerprint(spec, lam1))
        iteration = int(meta["iteration"])
        W = [self.submit(_tasks.load_part_w, str(checkpoint.part_path(self.placement.checkpoint_dir, iteration, p)),
                         self.dtype, part=i) for i, p in enumerate(self.live)]
        grams = [self.submit(_tasks.block_gram, part, w, part=i) for i, (part, w) in enumerate(zip(self.parts, W))]
        problem = self.problem(PartitionVectors(W, tree_reduce(self.submit, _tasks.merge_stats, grams)), lam1, spec)
        problem.restore(U, meta.get("representations", []))
        self.record.history = list(meta["objectives"])
        self.record.objectives = list(meta["objectives"])
        self.record.moved, self.record.seconds = list(meta["bytes_moved"]), list(meta["seconds"])
        self.record.resumed_from = iteration
        return lam1, problem

    # ------------------------------------------------------------------ what a cluster's fit records
    def fingerprint(self, spec, lam1):
        """What a checkpoint must match to be resumed by this fit."""
        N, M = self.shape
        return {"n_docs": N, "n_terms": M, "n_components": spec.n_components, "dtype": self.dtype.name,
                "partitions": [list(b) for b in self.record.bounds], "lambda1_effective": lam1,
                "target_terms_per_topic": spec.target_terms_per_topic,
                "topic_representation": spec.topic_representation, "lambda2": spec.lambda2,
                "topic_penalty": spec.topic_penalty, "doc_penalty": spec.doc_penalty,
                "inner_max_iter": spec.inner_max_iter, "inner_tol": spec.inner_tol}

    def _alternate_options(self, problem, spec):
        record = self.record
        record.fingerprint = self.fingerprint(spec, problem.lambda1)
        record.mark = {"sent": record.start_bytes, "time": time.perf_counter()}
        return {"history": list(record.history),
                "callback": lambda iteration, obj, diag: self._after_iteration(problem, iteration, obj)}

    def _after_iteration(self, problem, iteration, obj):
        """The bytes moved and the seconds of the iteration, and its checkpoint."""
        record, ex = self.record, self.ex
        sent = ex.transfer_bytes()
        record.moved.append(int(sent - record.mark["sent"] + record.client_bytes))
        record.client_bytes = 0
        record.objectives.append(obj)
        if self.placement.checkpoint_dir is not None:
            self._checkpoint(problem, iteration, dict(
                record.fingerprint, objectives=record.objectives, bytes_moved=record.moved,
                representations=problem.used, seconds=record.seconds + [time.perf_counter() - record.mark["time"]]))
            sent = ex.transfer_bytes()
        record.seconds.append(time.perf_counter() - record.mark["time"])
        record.mark.update(sent=sent, time=time.perf_counter())

    def _checkpoint(self, problem, iteration, meta):
        directory = Path(self.placement.checkpoint_dir)
        directory.mkdir(parents=True, exist_ok=True)
        writes = [self.submit(_tasks.save_part_w, w, str(checkpoint.part_path(directory, iteration, p)), part=i)
                  for i, (p, w) in enumerate(zip(self.live, problem.W))]
        self.ex.gather(writes)
        checkpoint.write_state(directory, iteration, problem.U, meta)

    def attributes(self):
        """The fitted attributes of a cluster's fit."""
        record = self.record
        return {"bytes_moved_": np.asarray(record.moved, dtype=np.int64), "partitions_": record.bounds,
                "seconds_per_iter_": np.asarray(record.seconds), "resumed_from_": record.resumed_from}

    def doc_vectors(self, W):
        """W (N x K, X's dtype) gathered from the workers."""
        N, K = self.shape[0], None
        out = None
        for i, p in enumerate(self.live):
            a, b = self.record.bounds[p]
            Wp = _tasks._w(self.ex.gather(W[i]))
            if out is None:
                K = Wp.shape[1]
                out = np.zeros((N, K), dtype=self.dtype)
            out[a:b] = Wp
        return out if out is not None else np.zeros((N, 0), dtype=self.dtype)


class DaskPlacement(Placement):
    """Where the work runs on a Dask cluster: ``client`` (an existing one, never closed here), else ``scheduler``
    (``tcp://HOST:PORT``, waited for ``timeout`` seconds), else a loopback LocalCluster of ``n_workers`` x
    ``threads_per_worker`` started for the fit; or ``executor``, a :class:`rlsi.distributed.DaskExecutor`.
    ``partitions``: the document partitions (None: one per worker; :mod:`rlsi.distributed.partitions`);
    ``checkpoint_dir`` / ``resume``: checkpoints of a batch fit; ``task_threads``: numba threads inside each task
    (the learners' ``n_jobs``). A saved model keeps no cluster (``saved_as`` None: the local placement)."""

    name = "dask"
    stream_key = "dask"

    def __init__(self, client=None, *, scheduler=None, n_workers=2, threads_per_worker=1, timeout=10.0,
                 partitions=None, checkpoint_dir=None, resume=False, task_threads=None, executor=None):
        self.client, self.scheduler = client, scheduler
        self.n_workers, self.threads_per_worker, self.timeout = n_workers, threads_per_worker, timeout
        self.partitions, self.checkpoint_dir, self.resume = partitions, checkpoint_dir, resume
        self.task_threads, self.executor = task_threads, executor

    def check_input(self, X, check):
        if self.resume and self.checkpoint_dir is None:
            raise RLSIError("resume=True needs checkpoint_dir= (the directory of the interrupted fit)")
        checkpoint.check_directory(self.checkpoint_dir)  # a file or a read-only folder: refused before any work
        if not isinstance(X, WorkerMatrix):
            return check(X)
        if self.client is not None and self.client is not X.client:
            raise RLSIError("X lives on another Dask cluster than client=; fit it with its own client "
                            "(or leave client=None)")
        if self.partitions is not None:
            raise RLSIError(f"partitions={self.partitions!r} does not apply to corpus files (each "
                            f"non-empty file is one partition); drop partitions= or split the files")
        return X

    def open(self, X=None):
        """The cluster: the ``executor`` given, or one opened on ``client`` / ``scheduler`` / a LocalCluster (a
        WorkerMatrix's own client replaces the cluster named by the parameters)."""
        if self.executor is not None:
            if not isinstance(self.executor, DaskExecutor):
                raise RLSIError(f"executor={self.executor!r} is not a DaskExecutor; the Dask placement runs on a "
                                f"Dask cluster (pass a DaskExecutor, a client=, a scheduler= or nothing)")
            return self.executor
        client = X.client if isinstance(X, WorkerMatrix) else self.client
        scheduler = self.scheduler if client is self.client else None
        return DaskExecutor(client, scheduler=scheduler, n_workers=self.n_workers,
                            threads_per_worker=self.threads_per_worker, timeout=self.timeout,
                            task_threads=self.task_threads)

    def close(self, executor):
        if executor is not self.executor:
            executor.close()

    def threads(self, n_jobs):
        return contextlib.nullcontext()  # the tasks set their own (task_threads)

    def corpus(self, X, spec, executor):
        return DaskCorpus(self, X, spec, executor)

    def stream(self, spec, stats, topics=None, *, n_inner=1, first=None):
        ex = self.open()
        return DaskStream(spec, stats, topics, ex, partitions=self.partitions, owned=ex is not self.executor)

    def __repr__(self):
        return f"DaskPlacement(client={self.client!r})" if self.client is not None else "DaskPlacement()"


register_placement("dask", lambda name, executor=None, **options: DaskPlacement(
    executor=executor if isinstance(executor, DaskExecutor) else None))
