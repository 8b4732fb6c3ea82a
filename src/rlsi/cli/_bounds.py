"""Counting options, parsed and bounded by the parser with the reason (before any work).

The numbers are :mod:`rlsi.limits`' — the estimators check their parameters against the same ones, so a
value the command line takes is one the estimator takes. A count far beyond any useful value is a typing
slip or a hostile value, and it otherwise runs without end or fills the memory (``--workers 1000000`` starts a
million in-process workers, ``--n-inner 1e9`` solves each mini-batch a billion times), or reaches numpy as an
integer it cannot hold (``-k 9223372036854775808``). Every other integer option is bounded by
:data:`MAX_INTEGER` (:func:`integer`).
"""

from __future__ import annotations

import argparse
import os

from .. import limits

__all__ = ["MAX_INTEGER", "integer", "local_workers", "n_inner", "n_passes", "epochs", "lda_passes", "topics",
           "max_iter", "batch_size", "size", "seed"]

#: The largest integer any option takes: every index type numpy uses holds it.
MAX_INTEGER = 2**62


def integer(text, low, high=MAX_INTEGER, reason="no count rlsi takes is that large"):
    """``text`` as an integer in [low, high] (argparse.ArgumentTypeError naming the bound otherwise)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"{value} must be >= {low}")
    if value > high:
        shown = str(value) if len(str(value)) <= 24 else f"{str(value)[:20]}... ({len(str(value))} digits)"
        raise argparse.ArgumentTypeError(f"{shown} is more than {high}: {reason}")
    return value


def local_workers(text):
    """``--workers``: a loopback cluster runs on this machine, so its size follows the cores."""
    cores = os.cpu_count() or 1
    high = max(limits.MAX_LOCAL_WORKERS, 4 * cores)
    return integer(text, 1, high, f"a cluster started on this machine ({cores} cores) has at most {high} workers; "
                                  "give --scheduler ADDR for a larger cluster")


def _count(high, reason, *, low=1, doc):
    """A parser of a count in [low, high] refused with ``reason``."""
    def parse(text):
        return integer(text, low, high, reason)

    parse.__doc__ = doc
    return parse


n_inner = _count(limits.MAX_N_INNER, "each mini-batch would be solved that many times; the paper uses 1 to 10",
                 doc="``--n-inner``: embedded iterations ξ per mini-batch.")
n_passes = _count(limits.MAX_PASSES, "for that many passes use the batch fit (drop --online)",
                  doc="``--n-passes``: passes of an online fit over the corpus.")
epochs = _count(limits.MAX_PASSES, "for that many passes use the batch model",
                doc="``--epochs``: passes of an online STC fit over the corpus.")
lda_passes = _count(limits.MAX_LDA_PASSES, "the LDA start would run for days; 10 passes is the default",
                    doc="``--lda-passes``: batch passes of the LDA start (about 8 s each on 20 Newsgroups).")
topics = _count(limits.MAX_COMPONENTS, "the topics' statistics would not fit in any memory", doc="``-k``: topics K.")
max_iter = _count(limits.MAX_ITERATIONS, "a fit stops at its tolerance long before",
                  doc="``--max-iter``: outer iterations of a batch fit.")
batch_size = _count(limits.MAX_BATCH_SIZE, "for batches that large use the batch fit",
                    doc="``--batch-size``: documents per mini-batch.")
size = _count(limits.MAX_SIZE, "no corpus is that large",
              doc="A number of documents or terms to make (``rlsi synth --docs``, ``--terms``).")
seed = _count(limits.MAX_SEED, "seeds are 32-bit (numpy's RandomState and scikit-learn take no more)", low=0,
              doc="``--seed``: a random seed every generator of the stack takes.")
