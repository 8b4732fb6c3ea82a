"""RLSI learners (scikit-learn estimators)."""

from .batch import BatchRLSI, DeadTopicsWarning  # noqa: F401
