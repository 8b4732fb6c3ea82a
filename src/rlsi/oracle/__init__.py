"""Slow, plain-numpy oracles of the papers' algorithms exactly as printed.

They exist to prove the fast code right (tests compare against them) and to measure how much faster the
fast code is (benchmarks). Never use them on real data: they are O(M K²) per sweep and dense.
"""

from .paper import batch_rlsi, update_u, update_v, rlsi_objective  # noqa: F401
from . import stc  # noqa: F401,E402  (STC oracle: rlsi.oracle.stc)
from .online import online_rlsi  # noqa: F401,E402  (Algorithm 4, eager re-scaling)
