"""RLSI learners (scikit-learn estimators), baseline topic models, and the sufficient statistics."""

from .baselines import BASELINES, LDA, LSI, NMF, PLSI  # noqa: F401
from .batch import BatchRLSI, DeadTopicsWarning  # noqa: F401
from .online import OnlineRLSI  # noqa: F401
from .stats import TopicStatistics  # noqa: F401
