"""What batch RLSI decides, apart from where its blocks live: pure functions of its statistics.

Batch RLSI is one problem on several placements — local blocks on numba threads
(:class:`rlsi.models.batch.RLSIProblem`), document partitions on Dask workers
(:class:`rlsi.distributed.problem.DistributedProblem`) and arrays on a CUDA card
(:class:`rlsi.gpu.batch.DeviceRLSIProblem`). Every decision of the
problem is taken here, from statistics every placement has (nnz, df, ‖d_m‖, drift of W, S, Q(W)), so the
placements cannot drift apart:

* :class:`RLSIPolicy` — the topic representation (start sparse or dense; after each U-step, dense above
  ``dense_above`` of the weights within ``dense_max_bytes``), the V-step's dense copy of sparse topics (the
  sparse product's work above ``sparse_work_share`` of the dense one's), the U-step's sweep and work caps
  (:func:`topic_max_iter`, :func:`cold_work`) and Eq. (1) from the statistics (:meth:`RLSIPolicy.objective`);
* :class:`ScreeningBounds` — the exact screening of term rows (which rows of R can be skipped, the bounds of
  the rows computed, their growth with the drift of W), with the rounding slack of the computed products;
* :class:`RLSITuning` — the numbers behind those decisions, one value the learner takes as its ``tuning``
  parameter (tests and studies choose code paths with ``BatchRLSI(tuning=...)`` or ``.with_tuning(...)``, not by
  changing module constants); it survives ``clone`` and a save and load.

The placement contract. A placement of batch RLSI provides, in a fixed order of its blocks:

1. the rows of ``R = D W`` that the screening asks for (all rows with dense topics), solved as lasso rows
   with ``penalty.prepare(S, λ₁)`` and the caps above, warm-started from the previous rows, and the
   per-row peak ``max_k |r̂_mk|`` of each row computed (:meth:`ScreeningBounds.store`);
2. the projection of the documents on U (or on the dense copy :meth:`RLSIPolicy.v_dense_copy` asks for),
   with the statistics ``S = WᵀW`` (K x K, float64), ``cross = tr(Uᵀ D Vᵀ)`` and ``Q(W)``, reduced in block
   order (DocStats.merge), and the column drift ``Σ_n ΔW_nk²`` and column norms ``Σ_n W_nk²`` of W;
3. ``G = UᵀU`` of the topics it projected on (:func:`rlsi.models.steps.topic_gram`);
4. once: ``‖X‖²_F``, the document frequency df and the term norms ``‖d_m‖`` (the screening's), reduced in
   a fixed order.

Results: a placement that computes the same blocks with the same kernels gives the local numbers bit for
bit (DaskRLSI on one worker); another partition of the documents changes only the order of the sums of S,
cross and R (agreement to rounding, 1e-10 in the tests).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .._params import replace_fields
from ..errors import RLSIError
from .active_rows import COMPACT_MAX_ENTRIES, CSR_PROJECTION_FACTOR, SOLVE_ENTRIES
from .penalties import SolverSettings
from .sparsity import MAX_ROUNDS, SETTLED
from .stats import TRANSPOSE_ENTRIES
from .tasks import MIN_BLOCK_ROWS

__all__ = ["RLSIPolicy", "RLSITuning", "ScreeningBounds", "TUNING", "TuningValue", "cold_work", "resolve_tuning",
           "topic_max_iter"]


def rounding_factor(n_terms, dtype):
    """``γ_{n+2} = (n+2)u / (1 − (n+2)u)`` for each count n of ``n_terms`` (u: the unit roundoff of
    ``dtype``): ``|fl(dᵀw) − dᵀw| <= γ_{n+2} Σ|d_j w_j|`` for a dot product of n terms computed in ``dtype``
    in any order (Higham, Accuracy and Stability, §3.1; +1 for the product, +1 for converting d to
    ``dtype``). inf where ``(n+2)u >= 1/2`` (no useful bound)."""
    u = np.finfo(dtype).eps / 2.0
    nu = (np.asarray(n_terms, dtype=np.float64) + 2.0) * u
    return np.where(nu < 0.5, nu / np.maximum(1.0 - nu, 0.5), np.inf)


#: Topic representations of the U-step.
REPRESENTATIONS = {"auto": "sparse below RLSITuning.dense_above non-zero weights, dense above",
                   "sparse": "CSR topics (cheap when topics keep few terms)",
                   "dense": "M x K array (BLAS products; cheap when most weights are non-zero)"}

#: Default of ``BatchRLSI(topic_sweeps=...)``: coordinate-descent sweeps per term row in each warm-started
#: U-step. Measured (1 thread, CPU time to the same objective as exact U-steps): 16 % less at AvgComp ≈ 0.24,
#: 13 % less at 0.0002, within the ±6 % noise of shared cores at 0.007 and 0.08; 1 or 2 sweeps were no
#: better than 3, and capping the first (cold) U-step too made the sparsest fit 51 % slower.
TOPIC_SWEEPS = 3


@dataclass(frozen=True)
class RLSITuning:
    """The numbers behind batch RLSI's decisions (defaults measured; change them for tests or studies).

    dense_above : ``"auto"`` switches to dense topics above this share of non-zero weights (the measured
        crossover) ...
    dense_max_bytes : ... unless the dense M x K array would take more than this many bytes (also the
        online learner's cap on dense topics).
    sparse_work_share : with ``"auto"``, the V-step's ``Φ = X U`` of sparse topics is computed from a dense
        copy of U once the sparse product's work ``Σ_m df(m)·nnz(U_m)`` exceeds this share of the dense
        product's ``nnz(X)·K``: an entry of the sparse product (an indirect scatter) cost 3 to 4.5 times one
        of the dense product (a contiguous, vectorised row update) at 1 thread on a 20k x 60k corpus, and the
        copy and a BLAS ``UᵀU`` of the copy add a little, so the switch is set where the dense product clearly
        wins. Topics of common terms are the dense ones, and common terms are most of X's entries, so this
        happens at a few % of non-zero weights.
    cold_dense_sweeps : the cold first U-step's budget per term row (with ``topic_sweeps`` set), in dense
        sweeps: each row may spend ``cold_dense_sweeps · K²`` multiply-adds (see :func:`cold_work`); None: no
        budget.
    screen : the exact screening of term rows in the U-step (:class:`ScreeningBounds`); it never changes U.
    online_compact : OnlineRLSI with ξ > 1 and dense topics runs a mini-batch's embedded iterations on a
        compact copy of the rows they touch (:class:`rlsi.models.active_rows.CompactBatch`; the same numbers
        as the scattered path).
    min_block_rows : the fewest rows of those blocks (:data:`rlsi.models.tasks.MIN_BLOCK_ROWS`; lower it with
        ``block_entries`` to get many small blocks on a small corpus).
    transpose_entries : entries of the mini-batch's transposed X formed at once by an online step
        (:data:`rlsi.models.stats.TRANSPOSE_ENTRIES`; the numbers do not depend on it).
    online_solve_entries, online_csr_projection, online_compact_entries : the online U-step's block of CSR
        topics, the projection's switch to the live rows as CSR and the largest compact block
        (:data:`rlsi.models.active_rows.SOLVE_ENTRIES`, ``CSR_PROJECTION_FACTOR``, ``COMPACT_MAX_ENTRIES``; none
        changes the numbers).
    class_rows_full : GroupRLSI's class U-step solves every term row above this share of the vocabulary, the
        class's terms and the shared topics' rows only below it (the same solution; :mod:`rlsi.models.group`).
    search_rounds, search_settled : the λ₁ search for ``target_terms_per_topic`` bisects at most
        ``search_rounds`` times and stops when λ₁ moved by less than the factor ``search_settled`` since the
        previous round (:func:`rlsi.models.sparsity.lambda1_for_terms_per_topic`; ``MAX_ROUNDS`` and ``SETTLED``
        there say why).
    block_entries : entries of the batch steps' dense row blocks (:func:`rlsi.models.tasks.block_rows`;
        None: ``tasks.BLOCK_ENTRIES``, about 4M). The blocks' scratch and the memory estimate follow it; the
        results only through the block order of the sums of S and ``tr(Uᵀ D Vᵀ)`` (rounding: 9e-16 apart
        in U after 5 iterations at 1,500 x 3,000, K = 20, with 300-row against 209,715-row blocks).
    """

    dense_above: float = 0.05
    dense_max_bytes: int = 2 << 30
    sparse_work_share: float = 0.3
    cold_dense_sweeps: float | None = 10
    screen: bool = True
    online_compact: bool = True
    search_rounds: int = MAX_ROUNDS
    search_settled: float = SETTLED
    block_entries: int | None = None
    min_block_rows: int = MIN_BLOCK_ROWS
    transpose_entries: int = TRANSPOSE_ENTRIES
    online_solve_entries: int = SOLVE_ENTRIES
    online_csr_projection: float = CSR_PROJECTION_FACTOR
    online_compact_entries: int = COMPACT_MAX_ENTRIES
    class_rows_full: float = 0.8

    def but(self, **changes):
        """A copy with ``changes`` (RLSIError naming a field that does not exist)."""
        return replace_fields(self, "tuning", changes)

    def as_dict(self):
        """The fields as a JSON object (how a saved model keeps its tuning)."""
        return asdict(self)

    def __rlsi_json__(self):
        return self.as_dict()


#: The tuning of every learner that is given none.
TUNING = RLSITuning()


def resolve_tuning(value):
    """The :class:`RLSITuning` of a ``tuning`` parameter: None (the defaults), a tuning, or a mapping of some of
    its fields (a saved model's, or ``{"screen": False}``)."""
    if value is None:
        return TUNING
    if isinstance(value, RLSITuning):
        return value
    if isinstance(value, dict):
        return TUNING.but(**value)
    raise RLSIError(f"tuning={value!r} is not a tuning; give None, an RLSITuning or a dict of its fields")


class TuningValue:
    """The parameter constraint of ``tuning`` (:func:`resolve_tuning` accepts it)."""

    @staticmethod
    def from_json(value):
        """A saved model's tuning (a dict of the fields it changed) made again."""
        return resolve_tuning(value) if isinstance(value, dict) else value

    def check(self, name, value):
        try:
            resolve_tuning(value)
        except TypeError as exc:  # a field given a value of no use (e.g. a list where a number goes)
            raise RLSIError(f"{name}={value!r}: {exc}") from None


def cold_work(n_components, topic_sweeps, warm, tuning=TUNING):
    """Each term row's budget of multiply-adds in a U-step (None: no budget): ``cold_dense_sweeps · K²`` for
    the cold first U-step of an inexact fit (``topic_sweeps`` set, ``warm=False``), none otherwise.

    Why: from zero, a row whose solution is dense (most of K weights non-zero, the common terms at the dense
    end) converges slowly under coordinate descent on correlated topics and takes tens of sweeps plus support
    solves of ~K³/3 — at K = 200 and AvgComp ≈ 0.6 the first U-step cost 10 to 20 warm ones. Solving it
    exactly buys little: the next V-step replaces W and the warm 3-sweep U-steps that follow go on from
    there. A budget in work, not in sweeps, leaves sparse rows alone (a sweep of a row with a few non-zero
    weights costs ~K, so they still reach ``inner_tol``: at the sparse end a rough first U-step was measured to
    send the alternation to a worse point) and stops a dense row after about ten dense sweeps. Any number of
    sweeps decreases Eq. (1) (coordinate descent from the zero start), so the alternation stays a descent
    method."""
    if topic_sweeps is None or warm or tuning.cold_dense_sweeps is None:
        return None
    return float(tuning.cold_dense_sweeps) * n_components * n_components


def topic_max_iter(inner_max_iter, topic_sweeps, warm=True):
    """Sweeps per term row of one U-step: ``inner_max_iter`` (solved to ``inner_tol``) when
    ``topic_sweeps`` is None or the U-step has no warm start (``warm=False``: the first U-step starts
    from zero), else the smaller of the two.

    Why a few sweeps suffice: the U-step starts from the previous topics and every coordinate update
    minimises Eq. (1) exactly along its coordinate, so any number of sweeps ≥ 1 never increases the
    objective — the alternation is block-coordinate descent with an inexact U-block and still decreases
    Eq. (1) monotonically. Its fixed points are those of the exact scheme (a row that one sweep leaves
    unchanged satisfies the lasso's optimality conditions), so both converge to stationary points of the
    same problem; the inexact one spends its work where the objective still moves, instead of solving
    each U-step for a W that the next V-step replaces. The cold first U-step is not capped in sweeps: a few
    sweeps from zero leave a rough U₁ that sends the alternation along another path (measured: to a worse
    point at the sparse end); it is capped in work instead (:func:`cold_work`), which stops only rows with
    dense solutions."""
    if topic_sweeps is None or not warm:
        return inner_max_iter
    return min(int(topic_sweeps), int(inner_max_iter))


class RLSIPolicy:
    """The representation, the caps and the objective of one batch RLSI fit (see the module docstring).

    representation : "auto", "sparse" or "dense"; n_terms, n_components, itemsize : M, K and the bytes of a
    topic weight; topic_norm : "l1" or "l2" (ℓ2 topics are dense whatever λ: "auto" starts dense);
    inner_max_iter, inner_tol, topic_sweeps : the U-step's sweeps and tolerance (:func:`topic_max_iter`).
    """

    def __init__(self, representation, n_terms, n_components, itemsize, topic_norm, *, inner_max_iter,
                 inner_tol, topic_sweeps, tuning=TUNING):
        self.representation = representation
        self.n_terms, self.K = int(n_terms), int(n_components)
        self.tuning = tuning
        self.dense_fits = self.n_terms * self.K * itemsize <= tuning.dense_max_bytes
        self.dense = representation == "dense" or (representation == "auto" and self.dense_fits
                                                   and topic_norm == "l2")
        self.inner_max_iter, self.inner_tol, self.topic_sweeps = inner_max_iter, inner_tol, topic_sweeps
        self.used = []  # the representation of each U-step

    @property
    def auto(self):
        """Whether the representation follows the density of the topics."""
        return self.representation == "auto" and self.dense_fits

    def begin_u_step(self):
        """Record the representation of the U-step that starts; returns True for dense topics."""
        self.used.append("dense" if self.dense else "sparse")
        return self.dense

    def topic_settings(self, warm):
        """The :class:`rlsi.models.penalties.SolverSettings` of a U-step (warm-started or not): sweeps per
        term row, tolerance, each row's work budget."""
        return SolverSettings(topic_max_iter(self.inner_max_iter, self.topic_sweeps, warm=warm), self.inner_tol,
                              cold_work(self.K, self.topic_sweeps, warm, self.tuning))

    def doc_settings(self):
        """The :class:`rlsi.models.penalties.SolverSettings` of a V-step."""
        return SolverSettings(self.inner_max_iter, self.inner_tol)

    def dense_at(self, density):
        """The representation of the U-steps once the topics hold ``density`` non-zero weights (what
        :meth:`after_u_step` settles on; the memory estimate's question)."""
        if not self.auto:
            return self.dense
        return self.dense or density > self.tuning.dense_above

    def after_u_step(self, nnz):
        """The representation of the next U-step after topics with ``nnz`` non-zeros; returns whether the
        topics just solved are to be converted at once (so the V-step that follows already runs on them: the
        first U-step of a fit with dense topics is made sparse, and sparse × sparse products of dense topics
        cost several iterations' worth)."""
        if not self.auto:
            return False
        dense = nnz > self.tuning.dense_above * self.n_terms * self.K
        convert = dense != self.dense
        self.dense = dense
        return convert

    def v_dense_copy(self, df, row_nnz, x_nnz):
        """Whether the V-step computes ``Φ = X U`` of sparse topics from a dense copy of U: the sparse
        product's work ``Σ_m df(m)·nnz(U_m)`` above ``sparse_work_share`` of the dense one's ``nnz(X)·K``.
        Φ is the same either way (the same sums in the same order; the skipped zeros add nothing)."""
        if not self.auto or df is None:
            return False
        work = float(np.dot(df, row_nnz))
        return work > self.tuning.sparse_work_share * float(x_nnz) * self.K

    def copies_at(self, work_share):
        """:meth:`v_dense_copy`'s rule for sparse topics whose product ``X U`` does ``work_share`` of the dense
        product's work (the memory estimate's question)."""
        return self.auto and work_share > self.tuning.sparse_work_share

    def finish(self):
        """``(representation of the last U-step, counts)`` for the fitted attributes."""
        return (self.used[-1] if self.used else "sparse"), self.used.count("sparse"), self.used.count("dense")

    @staticmethod
    def objective(x_sqnorm, cross, G, S, lambda1, P_U, lambda2, Q_W):
        """Eq. (1) from the statistics: ``‖D − UV‖² = ‖D‖² − 2 tr(Uᵀ D Vᵀ) + tr(UᵀU V Vᵀ)`` with ``cross =
        tr(Uᵀ D Vᵀ)`` and ``S = V Vᵀ`` from the V-step and ``G = UᵀU``, plus ``λ₁P(U) + λ₂Q(V)``."""
        loss = x_sqnorm - 2.0 * cross + float(np.sum(G * S))
        return loss + lambda1 * P_U + lambda2 * Q_W


class ScreeningBounds:
    """The exact screening of the batch ℓ1 U-step: which term rows of ``R = D W`` can be skipped.

    A term row m whose previous topic weights are all zero keeps the zero solution exactly when
    ``max_k |r̂_mk| <= λ/2`` for the *computed* row r̂ (the KKT conditions at 0, as the lasso kernel tests
    them). Without computing r̂_m at the current W_t it is bounded from the W_s at which the row was last
    computed:

        |r̂_mk(W_t)| <= |r̂_mk(W_s)| + ‖d_m‖₂ ‖W_t[:, k] − W_s[:, k]‖₂ + γ_m ‖d_m‖₂ (‖W_s[:, k]‖₂ + ‖W_t[:, k]‖₂)

    (Cauchy–Schwarz for the exact products, and for each computed one the rounding bound
    ``|r̂ − r| <= γ_m Σ_j |d_mj w_jk| <= γ_m ‖d_m‖₂ ‖W_k‖₂`` with ``γ_m = γ_{df_m+2}`` in the product's dtype,
    :func:`rounding_factor`). ``bound_m`` holds the first two terms and the W_s part of
    the third: the last computed ``max_k |r̂_mk|`` plus ``γ_m ‖d_m‖ max_k ‖W_s[:, k]‖``, plus ``‖d_m‖₂ · max_k
    ‖ΔW_k‖₂`` accumulated over the iterations since (triangle inequality); a row is skipped when ``bound_m +
    γ_m ‖d_m‖ max_k ‖W_t[:, k]‖`` is below λ/2 (with a relative margin of 1e-6 for the rounding of the bound's
    own float64 arithmetic). Skipped rows have zero solutions, so the U-step is bit-identical to computing
    every row, in float32 as in float64.

    row_norms : ``‖d_m‖₂`` (M,); df : stored entries of each term row (M,) or None (nothing certified);
    dtype : of the products; half_lam : λ₁/2.
    """

    @staticmethod
    def nbytes_for(n_terms):
        """Bytes of the bounds of ``n_terms`` term rows: ``slack`` and ``bound`` (float64 each; the row norms
        are the caller's)."""
        return 2 * 8 * int(n_terms)

    def __init__(self, row_norms, df, dtype, half_lam):
        self.row_norms = np.asarray(row_norms, dtype=np.float64)
        counts = np.full(len(self.row_norms), np.inf) if df is None else df
        self.slack = rounding_factor(counts, dtype) * self.row_norms  # γ_m ‖d_m‖ per unit of ‖W_k‖
        self.bound = np.full(len(self.row_norms), np.inf)
        self.half_lam = float(half_lam)
        self.col_norm = 0.0  # max_k ‖W[:, k]‖ of the current W

    def advance(self, drift):
        """W moved by ``drift`` = ``max_k ‖ΔW_k‖₂`` since the bounds were taken."""
        self.bound += self.row_norms * float(drift)

    def set_col_norm(self, col_sq):
        """The column norms ``Σ_n W_nk²`` (K,) of the current W (inf: nothing certified)."""
        self.col_norm = float(np.sqrt(max(float(np.max(col_sq, initial=0.0)), 0.0)))

    def invalidate(self):
        """Forget the bounds (rows computed without them): every row is computed again, which makes them
        valid anew."""
        self.bound[:] = np.inf

    def need(self, a, b, U_prev_rows=None):
        """Rows of block a..b that must be computed (bool); ``U_prev_rows``: bool, the rows with a non-zero
        previous weight (always computed)."""
        with np.errstate(invalid="ignore"):  # inf bound x 0 slack stays inf; 0 x inf slack is nan (need)
            test = self.bound[a:b] + self.slack[a:b] * self.col_norm
        need = ~(test <= self.half_lam * (1.0 - 1e-6))
        if U_prev_rows is not None:
            need |= U_prev_rows
        return need

    def store(self, rows, rowmax):
        """Bounds of freshly computed rows (absolute indices): their max |r̂| plus the rounding term at this W."""
        with np.errstate(invalid="ignore"):
            self.bound[rows] = rowmax + np.nan_to_num(self.slack[rows] * self.col_norm, nan=np.inf)
