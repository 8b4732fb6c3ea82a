"""Sparse topical coding (Zhang, Zhu & Zhang, "Sparse online topic models", WWW 2013): a second topic-model
family on word counts — non-negative sparse word and document codes, topics on the simplex.

* :class:`SparseTopicalCoding` — batch STC (§3.3); ``collapsed=True`` is collapsed STC (§4.2.1);
* :class:`OnlineSTC` — online STC (§4, Algorithm 1, mini-batches);
* :class:`MedSTC`, :class:`OnlineMedSTC` — supervised max-margin STC (§4.2.2, Eq. 16);
* :mod:`~rlsi.models.stc.perplexity` — held-out perplexity by document completion (Eq. 18/19);
* :mod:`~rlsi.models.stc.kernels` — the numba coding kernels and the log-Poisson loss;
* :mod:`~rlsi.models.stc.simplex` — the dictionary's simplex kernels (projection, majorise–minimise step).
"""

from .batch import SparseTopicalCoding  # noqa: F401
from .medstc import MedSTC, OnlineMedSTC  # noqa: F401
from .online import OnlineSTC  # noqa: F401
from .perplexity import lda_perplexity, split_counts, stc_perplexity  # noqa: F401
from . import dictionary  # noqa: F401,E402
