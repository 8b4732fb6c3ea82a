"""Distributed batch RLSI on Dask: TOIS §4.4 (Map-1/Reduce-1, Map-2/Reduce-2) with the local core.

:class:`DaskRLSI` is :class:`rlsi.models.BatchRLSI` on the Dask placement (:mod:`rlsi.distributed.placement`),
with the placement's settings as parameters: it writes no fit of its own (the skeleton, the start and the finish
are BatchRLSI's), only which placement it fits on, ``fit_files`` and ``to_local``.

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

from .._params import Anything, Boolean, Integer, Real
from ..io import register
from ..models import BatchRLSI
from ..models.regularization import DEFAULT_LAMBDA1, DEFAULT_LAMBDA2
from ..models.rlsi_policy import TOPIC_SWEEPS
from .files import vectorize_files
from .placement import DaskPlacement

__all__ = ["DaskRLSI"]


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

    def __init__(self, n_components=20, *, lambda1=DEFAULT_LAMBDA1, lambda2=DEFAULT_LAMBDA2, topic_penalty="l1",
                 doc_penalty="l2", lambda1_scale="per_doc", target_terms_per_topic=None, topic_representation="auto",
                 init="docs", max_iter=100, tol=1e-4, inner_max_iter=100,
                 inner_tol=1e-4, topic_sweeps=TOPIC_SWEEPS, random_state=None, n_jobs=None, executor=None,
                 client=None, scheduler=None, n_workers=2, threads_per_worker=1, partitions=None,
                 checkpoint_dir=None, resume=False, timeout=10.0, verbose=0, tuning=None):
        super().__init__(n_components, lambda1=lambda1, lambda2=lambda2, topic_penalty=topic_penalty,
                         doc_penalty=doc_penalty, lambda1_scale=lambda1_scale,
                         target_terms_per_topic=target_terms_per_topic,
                         topic_representation=topic_representation, init=init, max_iter=max_iter,
                         tol=tol, inner_max_iter=inner_max_iter, inner_tol=inner_tol, topic_sweeps=topic_sweeps,
                         random_state=random_state, n_jobs=n_jobs, executor=executor, verbose=verbose, tuning=tuning)
        self.client = client
        self.scheduler = scheduler
        self.n_workers = n_workers
        self.threads_per_worker = threads_per_worker
        self.partitions = partitions
        self.checkpoint_dir = checkpoint_dir
        self.resume = resume
        self.timeout = timeout

    def _placement(self):
        """The Dask placement of this model's parameters (:class:`rlsi.distributed.placement.DaskPlacement`)."""
        return DaskPlacement(self.client, scheduler=self.scheduler, n_workers=self.n_workers,
                             threads_per_worker=self.threads_per_worker, timeout=self.timeout,
                             partitions=self.partitions, checkpoint_dir=self.checkpoint_dir, resume=self.resume,
                             task_threads=self.n_jobs, executor=self.executor)

    # ------------------------------------------------------------------ fitting
    def fit_files(self, paths, vectorizer=None, *, text_fields=("title", "text")):
        """Read, vectorize and fit corpus files on the workers (:func:`rlsi.distributed.vectorize_files`):
        neither the documents nor X pass through the client. ``paths``: JSON lines files (gzip or not),
        one partition per non-empty file; ``vectorizer``: an unfitted :class:`rlsi.text.TfidfVectorizer`
        with the text parameters (default ``TfidfVectorizer()``). Sets ``vectorizer_`` (the fitted
        vectorizer, equal to ``TfidfVectorizer.fit`` on the files' documents in order). Returns self."""
        self._validate_params()
        placement = self._placement()
        ex = placement.open(None)
        matrix = None
        try:
            matrix = vectorize_files(paths, vectorizer, client=ex.client, text_fields=text_fields)
            self.vectorizer_ = matrix.vectorizer
            self._fit(matrix, None, {}, output=False, executor=ex)
        finally:
            if matrix is not None:
                matrix.release()
            placement.close(ex)
        return self

    # ------------------------------------------------------------------ persistence
    def _local_params(self):
        names = set(BatchRLSI().get_params(deep=False)) - {"executor", "placement", "device"}  # the cluster stays
        return {k: v for k, v in self.get_params(deep=False).items() if k in names}

    def to_local(self):
        """The fitted model as a :class:`rlsi.models.BatchRLSI` (same parameters, topics and attributes)."""
        from ..models.base import check_fitted

        check_fitted(self)
        local = BatchRLSI(**self._local_params())
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
