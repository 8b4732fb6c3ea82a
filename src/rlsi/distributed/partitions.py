"""Document partitions of a distributed fit: which rows of X live on which worker.

A partition is a contiguous range of documents. By default there is one per worker, made of whole
document blocks of the local learner (:func:`rlsi.models.tasks.blocks`) when the corpus has at least as
many blocks as workers — then every per-block statistic is computed on the same rows as locally — and
of equal shares of the documents otherwise. ``partitions=`` overrides this with a number of partitions
or with the list of their sizes (zeros allowed: an empty partition holds nothing and sends nothing).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import RLSIError
from ..models.tasks import blocks


def partition_bounds(n_docs, doc_step, spec, n_workers):
    """``[(start, stop), ...]`` covering ``range(n_docs)`` in order (see the module docstring)."""
    if spec is None or isinstance(spec, numbers.Integral):
        n = int(spec if spec is not None else n_workers)
        if n < 1:
            raise RLSIError(f"partitions={spec!r} must be at least 1")
        doc_blocks = blocks(n_docs, doc_step)
        if len(doc_blocks) >= n:  # whole blocks, as evenly as possible
            cuts = np.linspace(0, len(doc_blocks), n + 1).round().astype(int)
            edges = [0] + [doc_blocks[c - 1][1] for c in cuts[1:]]
        else:
            edges = list(np.linspace(0, n_docs, n + 1).round().astype(int))
        return [(int(a), int(b)) for a, b in zip(edges, edges[1:])]
    try:
        sizes = [int(s) for s in spec]
    except (TypeError, ValueError):
        raise RLSIError(f"partitions={spec!r} must be None, a number of partitions or a list of sizes") from None
    if any(s < 0 for s in sizes) or sum(sizes) != n_docs or not sizes:
        raise RLSIError(f"partitions={sizes} must be non-negative sizes summing to the {n_docs} documents")
    edges = np.concatenate([[0], np.cumsum(sizes)])
    return [(int(a), int(b)) for a, b in zip(edges, edges[1:])]
