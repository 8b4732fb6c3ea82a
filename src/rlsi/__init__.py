"""rlsi: Regularized Latent Semantic Indexing.

Scalable sparse topic models (batch and online RLSI, after Wang, Xu, Li and Craswell, TOIS 2013) with
scikit-learn estimators, and topic-enhanced relevance ranking.

Threads: rlsi's numba kernels run on every core (``n_jobs`` limits them). Importing rlsi sets the
environment variable ``OMP_WAIT_POLICY=PASSIVE`` unless it is already set, so that idle OpenMP workers
sleep instead of spinning between parallel regions and stealing the cores BLAS needs (see
:mod:`rlsi.kernels`). Set ``OMP_WAIT_POLICY`` yourself before importing rlsi to choose otherwise.
"""

__version__ = "0.1.0"

from . import io  # noqa: E402,F401
from .errors import ModelFormatError, NotFittedError, RLSIError  # noqa: E402,F401
from .io import load, save  # noqa: E402,F401
from .models import LDA, LSI, NMF, PLSI, BatchRLSI, OnlineRLSI, TopicStatistics  # noqa: E402,F401
from .retrieval import Searcher  # noqa: E402,F401
from .text import StreamingTfidf, TfidfVectorizer  # noqa: E402,F401

__all__ = ["BatchRLSI", "OnlineRLSI", "LSI", "PLSI", "LDA", "NMF", "TopicStatistics", "TfidfVectorizer",
           "StreamingTfidf", "Searcher", "load", "save", "io", "ModelFormatError", "NotFittedError",
           "RLSIError", "__version__"]
