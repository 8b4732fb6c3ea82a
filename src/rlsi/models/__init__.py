"""RLSI learners (scikit-learn estimators) and the sufficient statistics they share."""

from .batch import BatchRLSI, DeadTopicsWarning  # noqa: F401
from .online import OnlineRLSI  # noqa: F401
from .stats import TopicStatistics  # noqa: F401
