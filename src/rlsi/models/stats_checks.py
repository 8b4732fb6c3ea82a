"""What the statistics of an online stream must be before it continues: S = Σ w_d v_d v_dᵀ is a weighted sum
of outer products, so it is symmetric positive semidefinite, and S and R = Σ w_d d v_dᵀ are finite.

A damaged S that breaks this (one flipped bit turns a diagonal entry into a denormal) passes the loaders'
per-value checks and turns every U-step of a resumed stream into NaN; the stream then saves statistics that
every later command refuses. :func:`check_statistics` refuses such statistics in one line: on every load the
checks that cost O(K²) (finite, symmetric, non-negative diagonal, |S_ij| <= sqrt(S_ii S_jj)), and before a
resume (``full=True``) the eigenvalues as well (O(K³): 30 ms at K = 500).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelFormatError

__all__ = ["SYMMETRY_RTOL", "check_statistics"]

#: Relative tolerance of the symmetry and semidefiniteness tests (S is summed in float64; a BLAS product
#: WᵀW is symmetric to about 1e-16 of its largest entry).
SYMMETRY_RTOL = 1e-9
_CHUNK = 1 << 20


def _finite(arr, name, where):
    flat = np.asarray(arr).reshape(-1)
    for a in range(0, flat.size, _CHUNK):
        if not np.isfinite(flat[a: a + _CHUNK]).all():
            raise ModelFormatError(f"{where}: {name} holds NaN or infinite values: the statistics are damaged")


def check_statistics(stats, where, *, full=False):
    """ModelFormatError (one line naming ``where``) unless the :class:`~rlsi.models.stats.TopicStatistics`
    ``stats`` are sound (module docstring); ``full`` adds the eigenvalues of S."""
    S = np.asarray(stats.S, dtype=np.float64)
    _finite(S, "S", where)
    if full:  # R is M x K (memory-mapped on a load, whose file checks saw its values)
        _finite(stats.stored_R, "R", where)
    if not S.size:
        return stats
    top = float(np.abs(S).max())
    tol = SYMMETRY_RTOL * top
    if float(np.abs(S - S.T).max()) > tol:
        raise ModelFormatError(f"{where}: S is not symmetric: the statistics are damaged")
    diag = np.diag(S)
    if float(diag.min()) < -tol:
        raise ModelFormatError(f"{where}: S has a negative diagonal entry: the statistics are damaged")
    bound = np.sqrt(np.outer(np.maximum(diag, 0.0), np.maximum(diag, 0.0)))
    if float((np.abs(S) - bound).max()) > tol:
        raise ModelFormatError(f"{where}: S is not positive semidefinite (an entry exceeds the geometric mean of "
                               f"its diagonal entries): the statistics are damaged")
    if full and float(np.linalg.eigvalsh((S + S.T) / 2).min(initial=0.0)) < -S.shape[0] * tol:
        raise ModelFormatError(f"{where}: S is not positive semidefinite (a negative eigenvalue): the statistics "
                               f"are damaged")
    return stats
