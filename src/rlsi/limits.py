"""Upper bounds of counts and sizes: one number each, used by the estimators' parameter tables
(:mod:`rlsi._params`) and by the command line's parsers (:mod:`rlsi.cli._bounds`).

A count far beyond any useful value is a typing slip or a hostile value, and it otherwise runs without end
(``n_inner=10**12`` solves each mini-batch that many times; ``lda_passes=10**9`` never ends), fills the memory,
or reaches numpy as an integer it cannot hold (``-k 9223372036854775808``). Each bound is generous for real use;
work that fits under a bound can still be too large for the machine, which the memory preflights refuse
(:mod:`rlsi.models.memory`, :mod:`rlsi.models.stc.memory`).

This module imports nothing: the estimators, the command line and the tests read the same numbers.
"""

from __future__ import annotations

__all__ = ["MAX_COMPONENTS", "MAX_N_INNER", "MAX_PASSES", "MAX_LDA_PASSES", "MAX_ITERATIONS", "MAX_BATCH_SIZE",
           "MAX_SIZE", "MAX_SEED", "MAX_LOCAL_WORKERS"]

#: Topics K. The Gram matrices of RLSI are K x K (8 GB each at 30,000) and an STC dictionary is K x M; the
#: paper's largest fit has K = 500.
MAX_COMPONENTS = 100_000
#: Embedded iterations ξ per mini-batch of OnlineRLSI (the paper uses 1 to 10).
MAX_N_INNER = 1000
#: Passes over the corpus of an online fit (OnlineRLSI ``n_passes``, the online STC models' ``n_epochs``).
MAX_PASSES = 1000
#: Batch passes of the LDA start of the STC models (``lda_passes``; about 8 s a pass on 20 Newsgroups).
MAX_LDA_PASSES = 1000
#: Outer iterations of a batch fit (``max_iter``; the fits stop at their tolerance long before).
MAX_ITERATIONS = 1_000_000
#: Documents of one mini-batch (``batch_size``).
MAX_BATCH_SIZE = 100_000_000
#: Documents or terms named by an option (``rlsi synth --docs``, ``--terms``): a trillion, far beyond any corpus
#: and inside every index type numpy uses.
MAX_SIZE = 10**12
#: Random seeds: what every generator of the stack takes (numpy's RandomState and scikit-learn: 32 bits).
MAX_SEED = 2**32 - 1
#: Workers of the loopback cluster ``--backend dask`` starts: at most this or 4 per core, the larger.
MAX_LOCAL_WORKERS = 64
