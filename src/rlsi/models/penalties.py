"""Regularizers of the squared-loss topic models, as a registry used by the solvers and the objective.

Every sub-problem of the RLSI family (a term row of the U-step, a document of the V-step, a query being
folded in) has the form::

    min_u  uᵀ S u − 2 rᵀ u + λ P(u)            (S = K x K Gram matrix, r = a row of R or of Φ)

and only P changes between models. A :class:`Penalty` knows its value (for the objective) and, prepared
with a step's statistics and λ (:class:`PreparedPenalty`), solves a block of such rows at once under a
:class:`SolverSettings` (sweeps, tolerance, work budget):

======================  ===================  =================================================
name                    P(u)                 solver
======================  ===================  =================================================
``"l1"``                Σ|u_k|               lasso coordinate descent (TOIS Algorithm 2)
``"l2"``                Σu_k²                closed form ``r (S + λI)⁻¹`` (Algorithm 3)
``"nonneg_l1"``         Σu_k, u ≥ 0          the same coordinate descent, clipped at zero
``"nonneg_l2"``         Σu_k², u ≥ 0         coordinate descent on ``S + λI`` with no ℓ1 term
======================  ===================  =================================================

``("l1", "l2")`` is RLSI, ``("l2", "l1")`` sparse coding, ``("l1", "l1")`` double sparsity,
``("l2", "l2")`` ridge-regularised LSI (TOIS §8.2.1); the non-negative pair gives a sparse NMF under the
same solver. :func:`penalty` looks a name up with an error message that lists the registry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp

from .._validation import check_choice
from ..kernels.blas_rows import matmul_rows
from ..kernels.lasso import lasso_rows
from ..kernels.rows import abs_sum, sq_sum


def ridge_inverse(G, lam):
    """``Σ = (G + lam I)⁻¹`` (K x K, float64), via Cholesky; pseudo-inverse if singular (lam = 0).

    The paper's Algorithm 3 forms Σ explicitly; applying it to a block of rows is then one GEMM, which
    on few cores is faster than triangular solves with many right-hand sides, and as accurate here
    (G + λI is well conditioned for λ > 0).
    """
    A = G + lam * np.eye(G.shape[0])
    try:
        factor = la.cho_factor(A, lower=False, check_finite=False)
        return la.cho_solve(factor, np.eye(G.shape[0]), check_finite=False)
    except la.LinAlgError:
        return la.pinvh(A)


@dataclass(frozen=True)
class Penalty:
    """One regularizer P. ``norm`` is "l1" or "l2"; ``nonneg`` adds the constraint u ≥ 0.

    ``sparse`` says whether solutions are expected to be sparse (kept as CSR by the learners);
    ``warm_start`` whether the solver is iterative and profits from the previous solution.
    """

    name: str
    norm: str
    nonneg: bool
    description: str

    @property
    def sparse(self):
        return self.norm == "l1"

    @property
    def warm_start(self):
        return self.norm == "l1" or self.nonneg

    def value(self, A):
        """P(A): Σ|a| ("l1" norms) or Σa² ("l2" norms), A dense or sparse, in float64."""
        if sp.issparse(A):
            data = A.data
            if self.norm == "l1":
                return float(np.abs(data).sum(dtype=np.float64))
            return float(np.square(data, dtype=np.float64).sum())
        # dense (W, or dense topics): parallel reductions, no N x K temporary
        return abs_sum(A) if self.norm == "l1" else sq_sum(A)

    def prepare(self, S, lam):
        """What :meth:`solve` needs besides the rows, computed once per step (K x K, float64)."""
        S = np.asarray(S, dtype=np.float64)
        if self.norm == "l2":
            return S + lam * np.eye(S.shape[0]) if self.nonneg else ridge_inverse(S, lam)
        return np.ascontiguousarray(S)

    def prepared(self, S, lam):
        """This penalty with its λ and :meth:`prepare`'s statistics: what the rows of one step are solved with."""
        return PreparedPenalty(self, float(lam), self.prepare(S, lam))


@dataclass(frozen=True)
class SolverSettings:
    """How the rows of a step are solved by coordinate descent: at most ``max_iter`` sweeps per row, stopped
    by ``tol`` (:func:`rlsi.kernels.lasso.lasso_cd_row`), and each row's budget of multiply-adds ``max_work``
    (None: none). The closed form of ``"l2"`` ignores them."""

    max_iter: int = 100
    tol: float = 1e-4
    max_work: float | None = None


@dataclass(frozen=True, eq=False)
class PreparedPenalty:
    """A penalty, its λ and its prepared K x K statistics (``Penalty.prepare(S, λ)``): one step's rows are
    all solved with it (:meth:`solve`); made once per step (``Penalty.prepared``)."""

    penalty: Penalty
    lam: float
    matrix: np.ndarray

    @property
    def n_components(self):
        return self.matrix.shape[0]

    def solve(self, R, U0, settings, *, out=None, overwrite_init=False):
        """Solve every row of R (n x K); returns ``(U, sweeps)``: U (n x K) and the number of
        coordinate-descent sweeps (0 for the closed form). ``U0`` is a warm start (or None); ``settings`` a
        :class:`SolverSettings`.

        U is float64 from the closed form and of R's dtype from coordinate descent (whose arithmetic is
        float64 inside); callers cast to their storage dtype after using U (the V-step's objective term
        is taken from the unrounded rows). ``out`` (an (n, K) C-contiguous array) receives the coordinate-
        descent solution in place (and the closed form's, when float64); ``overwrite_init`` lets the solver
        reuse a fresh ``U0`` (see :func:`rlsi.kernels.lasso.lasso_rows`)."""
        pen = self.penalty
        if pen.norm == "l2" and not pen.nonneg:
            # row chunks on single-threaded BLAS in parallel (kernels.blas_rows: OpenBLAS's own threads
            # would spin next to numba's after the call); straight into the caller's float64 rows
            direct = out is not None and out.dtype == np.float64 and out.flags.c_contiguous
            return matmul_rows(R, self.matrix, out=out if direct else None), 0
        l1 = self.lam if pen.norm == "l1" else 0.0
        U, sweeps = lasso_rows(R, self.matrix, U0, l1, max_iter=settings.max_iter, tol=settings.tol,
                               positive=pen.nonneg, out=out, overwrite_init=overwrite_init,
                               max_work=settings.max_work)
        return U, int(sweeps.sum())


PENALTIES = {
    "l1": Penalty("l1", "l1", False, "sum of absolute values (sparse)"),
    "l2": Penalty("l2", "l2", False, "sum of squares (smooth, closed form)"),
    "nonneg_l1": Penalty("nonneg_l1", "l1", True, "sum of values, non-negative (sparse, NMF-like)"),
    "nonneg_l2": Penalty("nonneg_l2", "l2", True, "sum of squares, non-negative (NMF-like)"),
}


def penalty(name, *, param="penalty"):
    """The registered :class:`Penalty` called ``name``; the error names ``param`` and the choices."""
    if isinstance(name, Penalty):
        return name
    return PENALTIES[check_choice(param, name, PENALTIES)]
