"""Upper bounds of counting options, refused by the parser with the reason (before any work).

A count far beyond any useful value is a typing slip or a hostile value, and it otherwise runs without
end or fills the memory: ``--workers 1000000`` starts a million in-process workers, ``--n-inner 1e9``
solves each mini-batch a billion times. Each bound is generous for real use and names what to do instead.
"""

from __future__ import annotations

import argparse
import os

from ._common import positive_int

__all__ = ["MAX_LOCAL_WORKERS", "MAX_N_INNER", "MAX_N_PASSES", "local_workers", "n_inner", "n_passes"]

#: Workers of the loopback cluster ``--backend dask`` starts: at most this or 4 per core, the larger.
MAX_LOCAL_WORKERS = 64
#: Embedded iterations per mini-batch (the paper uses 1 to 10).
MAX_N_INNER = 1000
#: Passes of an online fit over the corpus.
MAX_N_PASSES = 1000


def _bounded(text, high, reason):
    value = positive_int(text)
    if value > high:
        raise argparse.ArgumentTypeError(f"{value} is more than {high}: {reason}")
    return value


def local_workers(text):
    """``--workers``: a loopback cluster runs on this machine, so its size follows the cores."""
    cores = os.cpu_count() or 1
    high = max(MAX_LOCAL_WORKERS, 4 * cores)
    return _bounded(text, high, f"a cluster started on this machine ({cores} cores) has at most {high} workers; "
                                "give --scheduler ADDR for a larger cluster")


def n_inner(text):
    """``--n-inner``: embedded iterations ξ per mini-batch."""
    return _bounded(text, MAX_N_INNER, "each mini-batch would be solved that many times; the paper uses 1 to 10")


def n_passes(text):
    """``--n-passes``: passes of an online fit over the corpus."""
    return _bounded(text, MAX_N_PASSES, "for that many passes use the batch fit (drop --online)")
