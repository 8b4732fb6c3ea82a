"""Checkpoints of a distributed batch fit: U and W after every iteration, written with :mod:`rlsi.io`.

Layout of ``checkpoint_dir``::

    state/                 rlsi.io directory: U (terms x topics, CSR or dense) and the fit's meta (iteration,
                           objectives, partition bounds, data shape and dtype, the parameters that
                           determine the iterates)
    W-000007-p0/ ...       rlsi.io directory per document partition: W_p after iteration 7, written by
                           the worker that holds W_p (the client never gathers W)

An iteration's checkpoint is complete when ``state`` names it: the workers write their W parts under
the iteration's number first, the client then replaces ``state`` atomically (rlsi.io writes a temporary
directory and renames it), and only then are the parts of the previous iteration removed. A fit whose
client died therefore always finds a consistent pair (state, W parts) of the last complete iteration.
``checkpoint_dir`` must be visible to the client and to every worker (a shared file system, or one
machine).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from .. import io
from ..errors import RLSIError
from ..io import register

STATE = "state"


@register("DistributedArrays")
class Arrays:
    """A JSON meta dict plus named arrays, persistable with :func:`rlsi.io.save`."""

    def __init__(self, meta, arrays):
        self.meta = dict(meta)
        self.arrays = dict(arrays)

    def _to_state(self):
        return dict(self.meta), dict(self.arrays)

    @classmethod
    def _from_state(cls, meta, arrays):
        return cls(meta, arrays)


def part_path(directory, iteration, p):
    return Path(directory) / f"W-{iteration:06d}-p{p}"


def write_state(directory, iteration, U, meta):
    """Write the client's part of iteration ``iteration`` (after the workers wrote theirs) and remove
    older W parts."""
    directory = Path(directory)
    io.save(directory / STATE, state=Arrays(dict(meta, iteration=int(iteration)), {"U": U}))
    for old in directory.glob("W-*-p*"):
        try:
            it = int(old.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if it < iteration:
            shutil.rmtree(old, ignore_errors=True)


def read_state(directory):
    """``(meta, U)`` of the last complete iteration, or None when ``directory`` has no checkpoint."""
    path = Path(directory) / STATE
    if not path.exists():
        return None
    state = io.load(path)["state"]
    U = state.arrays["U"]  # CSR, or an ndarray when the last U-step held the topics dense
    return state.meta, (np.ascontiguousarray(U) if isinstance(U, np.ndarray) else U.tocsr())


def check_compatible(meta, expected):
    """RLSIError naming the first item in which a checkpoint differs from the fit that would resume it."""
    for key, value in expected.items():
        if meta.get(key) != value:
            raise RLSIError(f"the checkpoint was written with {key}={meta.get(key)!r}, this fit has "
                            f"{value!r}; resume with the same data and parameters or use a new checkpoint_dir")
