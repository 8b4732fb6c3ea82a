"""The distributed batch RLSI problem: one iteration of TOIS §4.4 over document partitions on Dask.

:class:`DistributedProblem` is a problem for :func:`rlsi.models.driver.alternate` (``u_step``,
``v_step``, ``objective``), like :class:`rlsi.models.batch.RLSIProblem`, with X and W on the workers
(see :mod:`rlsi.distributed.learner` for the data placement, the traffic and the equality with the
local learner).

Topic representation (``representation``, as :class:`~rlsi.models.batch.RLSIProblem`): "sparse" solves
and ships each term block of U as CSR; "dense" as an ndarray (the U-step writes every row, Φ = X U is a
sparse x dense product); "auto" starts sparse (dense for ℓ2 topics) and picks, after every U-step, the
representation of the next one from the density of U (``rlsi.models.batch.DENSE_ABOVE``), within the
same memory cap. Every choice calls the same solvers in the same order as the local learner, so a
representation gives the local learner's numbers for that representation. With dense topics the exact
screening is off (almost no row has a zero solution) and its bounds are rebuilt when the topics get sparse
again, as locally.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from dask.sizeof import sizeof

from ..models import steps
from ..models.batch import DENSE_ABOVE, DENSE_MAX_BYTES, SPARSE_WORK_SHARE, cold_work, topic_max_iter
from ..models.penalties import penalty as get_penalty
from ..models.screening import rounding_factor
from . import _tasks

__all__ = ["DistributedProblem", "tree_reduce"]


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
    ``stats``: future of the reduced DocStats (S = WᵀW, cross); ``U``: topics on the client (M x K, CSR
    or ndarray, see the module docstring); ``U_fut`` / ``U_blocks``: the same on the workers (whole, and
    per term block for the warm start).
    """

    def __init__(self, executor, parts, part_workers, term_blocks, active, W, stats, *, x_sqnorm, K, dtype,
                 topic_penalty, doc_penalty, lambda1, lambda2, inner_max_iter, inner_tol, threads, row_norms=None,
                 representation="sparse", df=None, topic_sweeps=None):
        self.ex = executor
        self.parts, self.part_workers = parts, part_workers
        self.term_blocks, self.active = term_blocks, active
        self.W, self.stats = W, stats
        self.x_sqnorm, self.K, self.dtype = x_sqnorm, K, np.dtype(dtype)
        self.topic_pen = get_penalty(topic_penalty, param="topic_penalty")
        self.doc_pen = get_penalty(doc_penalty, param="doc_penalty")
        self.lambda1, self.lambda2 = lambda1, lambda2
        self.inner = dict(max_iter=inner_max_iter, tol=inner_tol)
        self.topic_sweeps = topic_sweeps  # BatchRLSI's: the U-step's sweeps per term row, as RLSIProblem
        self.threads = threads
        self.U = self.U_fut = self.U_blocks = None
        self.cross = 0.0
        self.S = None
        self.q = 0.0
        self.client_bytes = 0  # what the client sent and gathered since the last reset
        # exact screening of term rows, as rlsi.models.screening.ScreenedBatchR (see learner's docstring)
        self.row_norms = row_norms
        self.bound = None if row_norms is None else np.full(len(row_norms), np.inf)
        self.W_at_r = None
        self.rows_skipped = self.total_skipped = 0
        # topic representation, as RLSIProblem: "auto" starts dense only for ℓ2 topics
        self.n_terms = term_blocks[-1][1] if term_blocks else 0
        self.representation = representation
        self.dense_fits = self.n_terms * K * self.dtype.itemsize <= DENSE_MAX_BYTES
        self.dense = representation == "dense" or (
            representation == "auto" and self.dense_fits and self.topic_pen.norm == "l2")
        self.used = []  # representation of each U-step
        # document frequency of each term: the V-step's work model (RLSIProblem.v_step_topics)
        self.df = df
        self.v_dense_copy = False

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
        # the rounding of the computed products, as ScreenedBatchR: bound + γ_m ‖d_m‖ max_k ‖W_k‖ (the W_s
        # part is stored with the bound); the relative margin covers the bound's own float64 arithmetic
        self._col_norm = self._current_col_norm()
        with np.errstate(invalid="ignore"):
            test = self.bound + self._slack() * self._col_norm
        need = ~(test <= 0.5 * self.lambda1 * (1.0 - 1e-6))
        if isinstance(self.U, np.ndarray):
            need |= steps.nonzero_row_mask(self.U)
        elif self.U is not None:
            need |= np.diff(self.U.indptr) > 0
        self.rows_skipped = int(len(need) - np.count_nonzero(need))
        self.total_skipped += self.rows_skipped
        return need

    def _current_col_norm(self):
        """``max_k ‖W[:, k]‖`` of the current W, from the diagonal of S = WᵀW (inf before the first V-step:
        nothing is certified then)."""
        if self.S is None:
            return np.inf
        return float(np.sqrt(max(float(np.max(np.diag(self.S), initial=0.0)), 0.0)))

    def _slack(self):
        """``γ_m ‖d_m‖`` per term row: the rounding bound of a computed row of R per unit of ‖W_k‖
        (:func:`rlsi.models.screening.rounding_factor`; without df nothing is certified)."""
        if getattr(self, "_slack_rows", None) is None:
            counts = self.df if self.df is not None else np.full(len(self.row_norms), np.inf)
            self._slack_rows = rounding_factor(counts, self.dtype) * self.row_norms
        return self._slack_rows

    def _invalidate_screening(self):
        """Dense topics compute every row: forget the bounds (rebuilt once the topics are sparse again)."""
        if self.bound is not None:
            self.bound[:] = np.inf
        self.W_at_r = None
        self.rows_skipped = 0

    def u_step(self, executor=None):
        self.used.append("dense" if self.dense else "sparse")
        prepared = self.submit(_tasks.prepare_topics, self.stats, self.topic_pen, self.lambda1, self.K)
        if self.dense:
            need = None
            self._invalidate_screening()
        else:
            need = self._rows_needed()
        warm = self.U_blocks is not None
        topic_inner = dict(self.inner, max_iter=topic_max_iter(self.inner["max_iter"], self.topic_sweeps, warm=warm),
                           max_work=cold_work(self.K, self.topic_sweeps, warm))  # as RLSIProblem.u_step
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
                                       dense=self.dense, **topic_inner))
        self.U_fut = self.submit(_tasks.assemble, *results)  # (U, sweeps): the tasks take U from it
        self.U_blocks = results  # (U_b, ...) results: warm starts of the next U-step
        self.U, sweeps, peaks = self.gather(self.U_fut)
        if need is not None:
            for (a, b), (rows, peak) in zip(self.term_blocks, peaks):
                block = self.bound[a:b]  # a view: the computed rows get their new bound
                block[need[a:b]] = 0.0
                block[rows] = peak
            with np.errstate(invalid="ignore"):  # the W_s part of the rounding term, as ScreenedBatchR
                self.bound[need] += np.nan_to_num(self._slack()[need] * self._col_norm, nan=np.inf)
        nnz = int(np.count_nonzero(self.U)) if self.dense else self.U.nnz
        diag = {"nnz": nnz, "sweeps": sweeps, "screened": self.rows_skipped, "dense": self.dense}
        if self.representation == "auto" and self.dense_fits:
            dense = self.next_dense(nnz)
            if dense != self.dense:  # converted at once, as RLSIProblem.u_step: the V-step runs on it
                self.U_fut = self.submit(_tasks.convert_topics, self.U_fut, dense)
                self.U = _tasks.convert_topics(self.U, dense)
            self.dense = dense
        return diag

    def next_dense(self, nnz):
        """The representation "auto" picks for the next U-step after topics with ``nnz`` non-zeros."""
        return nnz > DENSE_ABOVE * self.n_terms * self.K

    def _v_dense_copy(self):
        """Whether the V-step works on a dense copy of sparse topics: RLSIProblem.v_step_topics's rule
        (the sparse product X U's work above ``SPARSE_WORK_SHARE`` of the dense one's), so that both
        learners form Φ and G = UᵀU from the same representation."""
        if self.representation != "auto" or not self.dense_fits or self.df is None or not sp.issparse(self.U):
            return False
        work = float(np.dot(self.df, np.diff(self.U.indptr)))
        return work > SPARSE_WORK_SHARE * float(self.df.sum()) * self.U.shape[1]

    def v_step(self, executor=None):
        self.v_dense_copy = self._v_dense_copy()
        U_v = self.submit(_tasks.dense_copy, self.U_fut) if self.v_dense_copy else self.U_fut
        prepared = self.submit(_tasks.prepare_docs, U_v, self.doc_pen, self.lambda2)
        for p, part in enumerate(self.parts):  # W[p] holds (W_p, DocStats_p, Q(W_p)) on its worker
            self.W[p] = self.submit(_tasks.doc_step, part, U_v, prepared, self.W[p], penalty=self.doc_pen,
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
        U = _tasks.dense_copy(self.U) if self.v_dense_copy else self.U  # the V-step's G, as RLSIProblem
        loss = self.x_sqnorm - 2.0 * self.cross + float(np.sum(steps.topic_gram(U) * self.S))
        return loss + self.lambda1 * self.topic_pen.value(self.U) + self.lambda2 * self.q

    def components(self, dtype):
        """The topics as ``components_`` (K x M CSR of ``dtype``), as RLSIProblem.components."""
        from ..models.batch import RLSIProblem

        return RLSIProblem.components(self, dtype)
