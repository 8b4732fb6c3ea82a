"""Topic models: the RLSI learners, the baselines of the TOIS comparison, and their shared core.

Core (every learner is built from these):

* :mod:`~rlsi.models.base` — :class:`TopicModel` (parameters, topics in named groups, folding-in,
  persistence); :mod:`~rlsi.models.squared` — the squared-loss family and its one :func:`fold_in`;
* :mod:`~rlsi.models.penalties` — the registry of regularizers (ℓ1, ℓ2, non-negative ℓ1/ℓ2);
* :mod:`~rlsi.models.tasks` — per-block tasks (solve term rows, project documents);
  :mod:`~rlsi.models.steps` — the U- and V-steps mapped over blocks; :mod:`~rlsi.models.executor` —
  where the tasks run (serial, threads; Dask in :mod:`rlsi.distributed`); :mod:`~rlsi.models.driver` —
  the alternating loop; :mod:`~rlsi.models.skeleton` — the one ``fit``/``fit_transform`` of the batch
  learners; :mod:`~rlsi.models.rlsi_policy` — batch RLSI's decisions, whatever the placement of its blocks;
  :mod:`~rlsi.models.seeding` — initial topics and vectors; :mod:`~rlsi.models.stats` — mergeable
  sufficient statistics.

Learners: :class:`BatchRLSI`, :class:`OnlineRLSI`; baselines :class:`LSI`, :class:`PLSI`, :class:`LDA`,
:class:`NMF`.
"""

from .base import TopicModel  # noqa: F401
from .baselines import BASELINES, LDA, LSI, NMF, PLSI  # noqa: F401
from .batch import BatchRLSI, regularized_lsi  # noqa: F401
from .local import RLSIProblem  # noqa: F401
from .executor import EXECUTORS, SerialExecutor, ThreadExecutor  # noqa: F401
from .group import CNMF, CRLSI, GroupNMF, GroupRLSI  # noqa: F401
from .online import OnlineRLSI  # noqa: F401
from .penalties import PENALTIES  # noqa: F401
from .regularization import DeadTopicsWarning  # noqa: F401
from .squared import SquaredLossModel, fold_in  # noqa: F401
from .stats import TopicStatistics  # noqa: F401
from .stc import MedSTC, OnlineMedSTC, OnlineSTC, SparseTopicalCoding  # noqa: F401
