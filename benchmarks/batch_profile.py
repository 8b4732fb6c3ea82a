"""The nested timers of ``bench_batch.py``'s BatchRLSI child: what ``BatchRLSI.fit_transform`` reaches through
module and class attributes, wrapped inside the benchmark process only (``src/`` is not edited); a snapshot
of the fit's state replayed for a contention-robust profile; the records flattened to JSON and split into
their parallel (numba kernels, BLAS/LAPACK) and serial parts."""

import copy
import time
from collections import defaultdict

import numpy as np
import scipy.sparse as sp

SEP = " › "  # joins a phase path into one JSON key
# Leaf phases whose time is spent inside numba parallel kernels or BLAS/LAPACK: the rest of an iteration is
# its serial part. The python wrappers of the kernels (allocations, casts, cumsum) are outside.
PARALLEL = ("numba: _csr_dense_tiled", "numba: _csr_csr_dense_tiled", "numba: _count_row_nonzeros", "numba: _fill_csr",
            "numba: lasso_cd_rows", "BLAS: gram (row chunks)", "BLAS: ridge GEMM Φ·Σ (row chunks)",
            "LAPACK: cho_factor", "LAPACK: cho_solve", "numba: _row_sums",
            "numba: _nonzero_row_mask", "numba: _take_rows", "numba: _column_drift", "numba: _csr_row_norms",
            "numba: _row_dots", "numba: _row_absmax", "numba: _cast_into", "numba: _store_rounded",
            "numba: _csr_gram_parts", "numba: _sum_parts_sym")
# Numba kernels that are not parallel (no prange): counted as serial, shown apart (none at present).
SERIAL_KERNELS = ()
# the top-level phases of an iteration: the driver calls these three methods of the problem
U_STEP, V_STEP, OBJECTIVE = "U-step (problem.u_step)", "V-step (problem.v_step)", "objective (problem.objective)"
SEARCH = "λ₁ search (target_terms_per_topic)"  # before the fit's iterations; reported apart, not per iteration


# ------------------------------------------------------------------------------------ rlsi instrumentation
class _Proxy:
    """A module as seen by one of rlsi's modules, with some attributes replaced (timed)."""

    def __init__(self, module, **overrides):
        self._module = module
        self.__dict__.update(overrides)

    def __getattr__(self, name):
        return getattr(self._module, name)


def instrument(prof, state):
    """Wrap what ``BatchRLSI.fit_transform`` reaches through module and class attributes with nested
    timers of ``prof`` (a :class:`harness.PhaseProfiler`); ``state`` receives the per-iteration records,
    the initial W, U after the first U-step and a snapshot of the problem before the last iteration."""
    import scipy.linalg as la

    from rlsi.kernels import lasso as klasso
    from rlsi.kernels import convert, products
    from rlsi.kernels import rows as krows
    from rlsi.models import local, penalties, screening, skeleton, start, steps, tasks

    P = prof.patch
    # numba kernels: the jitted functions, looked up as module globals by their python wrappers
    for name in ("_csr_dense_tiled", "_csr_csr_dense_tiled", "_take_rows", "_csr_gram_parts", "_sum_parts_sym"):
        P(products, name, "numba: " + name)
    for name in ("_count_row_nonzeros", "_fill_csr", "_take_rows"):  # (sparse_plan's _take_rows: products')
        P(convert, name, "numba: " + name)
    for name in ("_row_sums", "_row_dots", "_row_absmax", "_cast_into", "_store_rounded"):
        P(krows, name, "numba: " + name)
    P(steps, "_nonzero_row_mask", "numba: _nonzero_row_mask")
    P(klasso, "lasso_cd_rows", "numba: lasso_cd_rows")
    P(screening, "_column_drift", "numba: _column_drift")
    P(screening, "_csr_row_norms", "numba: _csr_row_norms")
    # the kernels' python wrappers, as tasks, providers, problems and penalties call them
    for name in ("csr_csr_dense", "csr_dense_rows", "csr_rows_to_dense", "dense_to_csr", "csr_take_dense",
                 "dense_rows_to_csr"):
        P(tasks, name)
    P(local, "csr_rows_to_dense", "csr_rows_to_dense (U to dense)")
    P(local, "dense_to_csr", "dense_to_csr (U to CSR)")
    P(screening, "csr_dense_rows")
    P(screening, "csr_dense_rows_max")
    P(screening, "csr_dense_take")

    def lasso_post(out, a, k):
        sw = out[1]
        r = prof.record
        r["rows"] += len(sw)
        r["rows_iterated"] += int((sw > 0).sum())  # the others were optimal at zero (skipped by the kernel)
        r["sweeps"] += int(sw.sum())
        r["rows_maxed"] += int((sw >= k.get("max_iter", 100)).sum())
        r["max_sweeps"] = max(r["max_sweeps"], int(sw.max(initial=0)))

    P(penalties, "lasso_rows", post=lasso_post)
    P(penalties, "ridge_inverse")
    penalties.la = _Proxy(la, cho_factor=prof.wrap(la.cho_factor, "LAPACK: cho_factor"),
                          cho_solve=prof.wrap(la.cho_solve, "LAPACK: cho_solve"))
    P(tasks, "gram_rows", "BLAS: gram (row chunks)")
    P(penalties, "matmul_rows", "BLAS: ridge GEMM Φ·Σ (row chunks)")
    P(tasks, "dot_sum", "dot_sum: cross term Σ Φ∘W")

    Penalty = penalties.Penalty
    orig_solve = Penalty.solve

    def solve(self, R, prepared, U0, lam, *, max_iter, tol, **kwargs):
        with prof.phase(f"penalty.solve ({self.name})"):
            return orig_solve(self, R, prepared, U0, lam, max_iter=max_iter, tol=tol, **kwargs)

    Penalty.solve = solve
    P(Penalty, "prepare", "penalty.prepare")
    P(Penalty, "value", "penalty.value")
    # inline scipy work of the steps and tasks
    steps.sp = _Proxy(sp, vstack=prof.wrap(sp.vstack, "sp.vstack (U blocks)"))
    P(sp.csr_matrix, "eliminate_zeros", "eliminate_zeros")
    P(sp.csr_matrix, "__getitem__", "CSR row slice X[a:b]")
    # tasks, steps, providers
    for name in ("topic_block", "topic_block_rows", "doc_block", "gram"):
        P(tasks, name)
    P(steps, "topic_gram", "topic_gram G = UᵀU")
    for name in ("update_topics", "update_doc_vectors"):
        P(steps, name)
    for cls in (screening.ScreenedBatchR, screening.BatchR):
        P(cls, "set_state", f"{cls.__name__}.set_state")
        P(cls, "__call__", f"R rows ({cls.__name__})")
    P(screening.ScreenedBatchR, "compact", "R rows, unscreened only (ScreenedBatchR.compact)")
    # the driver's problem
    Problem = local.RLSIProblem
    P(Problem, "u_step", U_STEP)
    P(Problem, "v_step", V_STEP)
    P(Problem, "v_step_topics", "V-step topics (U, or a dense copy)")
    P(Problem, "objective", OBJECTIVE)
    P(Problem, "__init__", "problem setup (D = Xᵀ, S, ‖X‖², screening)",
      post=lambda out, a, k: state.__setitem__("problem", a[0]))
    P(start, "initial_doc_vectors", "init (V₀)", post=lambda out, a, k: state.__setitem__("W0", out))
    P(start, "search_lambda1", SEARCH)

    orig_alternate = skeleton.alternate

    def alternate(problem, **kw):
        user_cb = kw.pop("callback", None)
        state["pre"] = prof.record  # init and problem setup
        prof.record = defaultdict(float)
        state["t_iter"] = time.perf_counter()

        def callback(it, obj, diag):
            t_cb = time.perf_counter()
            rec = prof.record
            state["iters"].append(dict(wall=t_cb - state["t_iter"], obj=obj, diag=dict(diag),
                                       nnzU=int(diag["nnz"]), record=rec))
            if it == 1:  # as CSR whatever the representation (dense topics above 5 % non-zero)
                state["U1"] = sp.csr_matrix(problem.U)
            if state.get("snapshot_at") == it:
                state["snapshot"] = clone_problem(problem)
            if user_cb is not None:
                user_cb(it, obj, diag)
            prof.record = defaultdict(float)
            state["t_iter"] = time.perf_counter()
            state["callback_s"] += state["t_iter"] - t_cb  # excluded from the timed fit

        return orig_alternate(problem, callback=callback, **kw)

    skeleton.alternate = alternate


def clone_problem(problem):
    """A copy of an RLSIProblem whose later steps do not change the original (arrays mutated in place by
    the screening provider are copied; the others are replaced by the steps, not mutated)."""
    p = copy.copy(problem)
    p.used = list(getattr(problem, "used", []))
    r = p.r_rows = copy.copy(problem.r_rows)
    for name in ("bound", "W"):
        if isinstance(getattr(r, name, None), np.ndarray):
            setattr(r, name, getattr(r, name).copy())
    if hasattr(r, "_skipped"):
        r._skipped = {}
    return p


def replay(prof, snapshot, reps):
    """Re-run the iteration after ``snapshot`` ``reps`` times with the serial executor, exactly as the
    driver calls it; keep each phase's minimum (on a shared machine the best estimate of the uncontended
    cost). Returns the record of the fastest repeat (its phases add up, unlike per-phase minima)."""
    from rlsi.models.executor import SerialExecutor

    best = None
    ex = SerialExecutor()
    for _ in range(reps):
        p = clone_problem(snapshot)
        prof.record = defaultdict(float)
        t = time.perf_counter()
        p.u_step(ex)
        p.v_step(ex)
        p.objective()
        wall = time.perf_counter() - t
        if best is None or wall < best["wall"]:
            best = {"wall": wall, "phases": flatten(prof.record)[0]}
    best["parallel_s"], best["serial_kernel_s"] = parallel_seconds(best["phases"])
    best["serial_share"] = 1.0 - best["parallel_s"] / best["wall"]
    return best


def flatten(record):
    """A profiler record as JSON: ``(phases, other)`` with phases ``"a › b"`` -> seconds and
    ``"# a › b"`` -> calls, and the other (string) keys as they are."""
    phases, other = {}, {}
    for k, v in record.items():
        if isinstance(k, tuple):
            phases[("# " + SEP.join(k[1:])) if k[0] == "#" else SEP.join(k)] = v
        else:
            other[k] = v
    return phases, other


def parallel_seconds(phases):
    """Seconds of a flattened record spent in parallel kernels / BLAS, and in the non-parallel kernel."""
    par = ser = 0.0
    for k, v in phases.items():
        if k.startswith("#"):
            continue
        leaf = k.split(SEP)[-1]
        if leaf in PARALLEL:
            par += v
        elif leaf in SERIAL_KERNELS:
            ser += v
    return par, ser
