"""rlsi: Regularized Latent Semantic Indexing.

Scalable sparse topic models (batch and online RLSI, after Wang, Xu, Li and Craswell, TOIS 2013) with
scikit-learn estimators, and topic-enhanced relevance ranking.
"""

__version__ = "0.1.0"

from . import io  # noqa: E402,F401
from .errors import ModelFormatError, RLSIError  # noqa: E402,F401
from .models import BatchRLSI  # noqa: E402,F401
from .text import TfidfVectorizer  # noqa: E402,F401

__all__ = ["BatchRLSI", "ModelFormatError", "RLSIError", "TfidfVectorizer", "io", "__version__"]
