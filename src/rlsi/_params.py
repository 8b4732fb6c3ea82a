"""Declarative parameter constraints: one table per estimator, checked in one place.

An estimator lists its constraints as a class attribute::

    _parameter_constraints = {
        "n_components": Integer(low=1),
        "lambda1": Real(low=0.0),
        "topic_penalty": Choice(PENALTIES),
        "n_jobs": Integer(none=True, not_zero=True),
    }

and :func:`validate_parameters` checks them (the table of a subclass extends its parents'). Messages name
the parameter, the value and what is allowed (see :mod:`rlsi._validation`), so the CLI prints them as is.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from . import limits
from ._validation import check_choice, check_number
from .errors import RLSIError


@dataclass(frozen=True)
class Real:
    """A finite real number in [low, high] (bounds optional; ``low_open`` excludes ``low``)."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    none: bool = False

    def check(self, name, value):
        check_number(name, value, low=self.low, high=self.high, low_inclusive=not self.low_open,
                     allow_none=self.none)


@dataclass(frozen=True)
class Integer:
    """An integer in [low, high]; ``not_zero`` rejects 0 (``n_jobs``: None, -1, or a positive count)."""

    low: int | None = None
    high: int | None = None
    none: bool = False
    not_zero: bool = False

    def check(self, name, value):
        check_number(name, value, low=self.low, high=self.high, integer=True, allow_none=self.none)
        if self.not_zero and value == 0:
            raise RLSIError(f"{name}=0 is not allowed; use None, -1 (all cores) or a positive count")


@dataclass(frozen=True)
class Choice:
    """One of the keys of a registry (a dict) or of a sequence."""

    choices: object

    def check(self, name, value):
        try:
            hash(value)
        except TypeError:
            raise RLSIError(f"{name}={value!r} is not supported; choose one of "
                            f"{', '.join(map(repr, self.choices))}") from None
        check_choice(name, value, self.choices)


@dataclass(frozen=True)
class Boolean:
    """True or False."""

    def check(self, name, value):
        if not isinstance(value, (bool, np.bool_)):
            raise RLSIError(f"{name}={value!r} must be True or False")


@dataclass(frozen=True)
class Anything:
    """No constraint here (the estimator checks the value where it is used)."""

    def check(self, name, value):
        pass


#: The bounded counts of :mod:`rlsi.limits` as constraints (the command line's parsers use the same numbers).
COMPONENTS = Integer(low=1, high=limits.MAX_COMPONENTS)
ITERATIONS = Integer(low=1, high=limits.MAX_ITERATIONS)
PASSES = Integer(low=1, high=limits.MAX_PASSES)
N_INNER = Integer(low=1, high=limits.MAX_N_INNER)
LDA_PASSES = Integer(low=1, high=limits.MAX_LDA_PASSES)
BATCH_SIZE = Integer(low=1, high=limits.MAX_BATCH_SIZE)


def parameter_constraints(cls):
    """The merged constraint table of ``cls`` and its bases (subclasses override)."""
    table = {}
    for klass in reversed(cls.__mro__):
        table.update(klass.__dict__.get("_parameter_constraints", {}))
    return table


def validate_parameters(estimator):
    """Check every parameter of ``estimator`` against its class's table; raise RLSIError on the first
    violation. Parameters absent from the table are not checked here."""
    params = estimator.get_params(deep=False)
    for name, constraint in parameter_constraints(type(estimator)).items():
        if name in params:
            constraint.check(name, params[name])


def replace_fields(value, what, changes):
    """A copy of the dataclass ``value`` with ``changes`` (a settings value's ``but``); a field it does not have
    ends in one RLSIError naming it and the fields there are (``what``: the value's name in the message)."""
    names = [f.name for f in fields(value)]
    unknown = sorted(set(changes) - set(names))
    if unknown:
        raise RLSIError(f"{what} has no field {', '.join(map(repr, unknown))}; its fields are {', '.join(names)}")
    return replace(value, **changes)
