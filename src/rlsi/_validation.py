"""Parameter and data validation shared by every estimator and command.

Messages name the parameter, the value received and what is allowed, so that the CLI can print them as
they are (see :mod:`rlsi.errors`).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .errors import RLSIError

FLOAT_DTYPES = (np.float64, np.float32)


def check_choice(name, value, choices):
    """Return ``value`` if it is one of ``choices`` (a dict or sequence); raise a clear error otherwise."""
    keys = list(choices)
    if value not in keys:
        allowed = ", ".join(repr(k) for k in keys)
        raise RLSIError(f"{name}={value!r} is not supported; choose one of {allowed}")
    return value


def check_number(name, value, *, low=None, high=None, integer=False, low_inclusive=True,
                 high_inclusive=True, allow_none=False):
    """Check that ``value`` is a (real or integer) number in the given interval; return it."""
    if value is None and allow_none:
        return value
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an integer" if integer else "a number"
        raise RLSIError(f"{name}={value!r} must be {what}")
    if not np.isfinite(value):
        raise RLSIError(f"{name}={value!r} must be finite")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise RLSIError(f"{name}={value!r} must be {op} {low}")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        op = "<=" if high_inclusive else "<"
        raise RLSIError(f"{name}={value!r} must be {op} {high}")
    return value


def check_matrix(X, *, name="X", dtype=None, allow_empty=False, accept_dense=True):
    """Return ``X`` as a finite CSR matrix of float32 or float64 (documents x terms).

    Dense arrays are converted to CSR (they are small by assumption: a user with a large corpus has a
    sparse matrix already). ``dtype=None`` keeps float32/float64 and turns anything else into float64.
    NaN or infinite entries, a non-2-D input and (unless ``allow_empty``) a matrix without rows or
    columns raise :class:`RLSIError`.
    """
    if not sp.issparse(X):
        if not accept_dense:
            raise RLSIError(f"{name} must be a scipy.sparse matrix")
        X = np.asarray(X)
        if X.dtype == object:
            raise RLSIError(f"{name} must be numeric, got an object array")
        if X.ndim != 2:
            raise RLSIError(f"{name} must be 2-D (documents x terms), got {X.ndim}-D")
    elif X.ndim != 2:
        raise RLSIError(f"{name} must be 2-D (documents x terms)")
    if dtype is None:
        dtype = X.dtype if X.dtype in FLOAT_DTYPES else np.float64
    if not np.issubdtype(X.dtype, np.number) and X.dtype != bool:
        raise RLSIError(f"{name} must be numeric, got dtype {X.dtype}")
    X = sp.csr_matrix(X, dtype=dtype)
    if not allow_empty and (X.shape[0] == 0 or X.shape[1] == 0):
        raise RLSIError(f"{name} is empty: shape {X.shape}; need at least one document and one term")
    if not np.all(np.isfinite(X.data)):
        bad = int(np.count_nonzero(~np.isfinite(X.data)))
        raise RLSIError(f"{name} contains {bad} NaN or infinite value(s)")
    X.sum_duplicates()
    X.sort_indices()
    return X


def check_random_state(seed):
    """A :class:`numpy.random.Generator` from None, an int, or a Generator/RandomState."""
    if seed is None or isinstance(seed, numbers.Integral):
        return np.random.default_rng(seed)
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    raise RLSIError(f"random_state={seed!r} must be None, an int or a numpy Generator")
