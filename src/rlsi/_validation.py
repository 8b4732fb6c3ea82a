"""Parameter and data validation shared by every estimator and command.

Messages name the parameter, the value received and what is allowed, so that the CLI can print them as
they are (see :mod:`rlsi.errors`).
"""

from __future__ import annotations

import json
import numbers

import numpy as np
import scipy.sparse as sp

from sklearn.utils import check_array

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
    if not isinstance(value, numbers.Integral) and not np.isfinite(value):  # an int of any size is finite
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

    Built on scikit-learn's ``check_array`` (so messages match what scikit-learn users know) with every
    failure turned into :class:`RLSIError`: NaN or infinite entries, complex or non-numeric data, a
    non-2-D input, and (unless ``allow_empty``) a matrix without rows or columns. ``dtype=None`` keeps
    float32/float64 and turns anything else into float64. Dense input is converted to CSR.
    """
    if not accept_dense and not sp.issparse(X):
        raise RLSIError(f"{name} must be a scipy.sparse matrix")
    dtypes = list(FLOAT_DTYPES) if dtype is None else dtype
    try:
        X = check_array(X, accept_sparse="csr", dtype=dtypes, ensure_all_finite=True,
                        ensure_min_samples=0 if allow_empty else 1,
                        ensure_min_features=0 if allow_empty else 1, input_name=name)
    except ValueError as exc:
        message = " ".join(str(exc).split())  # one line
        raise RLSIError(message) from None
    X = sp.csr_matrix(X)
    X.sum_duplicates()
    X.sort_indices()
    return X


def check_random_state(seed, name="random_state"):
    """A :class:`numpy.random.Generator` from None, a non-negative int, or a Generator/RandomState.

    ``name`` is the parameter named in the error message."""
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, numbers.Integral):
        if seed < 0:
            raise RLSIError(f"{name}={seed!r} must be a non-negative integer, None or a numpy Generator")
        return np.random.default_rng(int(seed))
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    raise RLSIError(f"{name}={seed!r} must be None, a non-negative integer or a numpy Generator")


# the generators a saved state may name: a name from a file is never looked up freely in np.random
_BIT_GENERATORS = frozenset({"PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"})


def generator_state(rng):
    """A numpy Generator's state as JSON text (saved with a model, read back by :func:`generator_from_state`)."""
    return json.dumps(rng.bit_generator.state)


def generator_from_state(text):
    """The Generator of a saved :func:`generator_state` (untrusted input: a damaged text or an unknown generator
    ends in one RLSIError)."""
    try:
        state = json.loads(text)
        name = state["bit_generator"]
    except (TypeError, ValueError, KeyError):
        raise RLSIError("the saved random generator state is damaged") from None
    if name not in _BIT_GENERATORS:
        raise RLSIError(f"the saved random generator {name!r} is not one of {sorted(_BIT_GENERATORS)}")
    bitgen = getattr(np.random, name)()
    try:
        bitgen.state = state
    except (TypeError, ValueError, KeyError):
        raise RLSIError("the saved random generator state is damaged") from None
    return np.random.Generator(bitgen)
