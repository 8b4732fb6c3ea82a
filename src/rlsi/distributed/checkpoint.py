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

import math
import os
import shutil
from pathlib import Path

import numpy as np

from .. import io
from ..errors import ModelFormatError, RLSIError
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
    """``(meta, U)`` of the last complete iteration, or None when ``directory`` has no checkpoint.

    The checkpoint is untrusted input, like a model folder: besides the loader's checks of every file
    (:mod:`rlsi.io.safety`), the meta must have every key the fit reads, of its type (:func:`check_meta`),
    U must be a float array of (terms, topics) as the meta says, and the W part of every non-empty
    partition must be a folder inside ``directory`` holding a float array of (rows of the partition,
    topics) (:func:`check_parts`). Each problem raises :class:`rlsi.errors.ModelFormatError` (one line).
    """
    check_directory(directory)
    return _read_state(Path(directory))


def _read_state(directory):
    """:func:`read_state` without the checks of a directory to write."""
    path = directory / STATE
    if not os.path.lexists(path):
        return None
    _check_inside(directory, path)
    bundle = io.load(path)
    state = bundle.get("state")
    if not isinstance(state, Arrays):
        raise ModelFormatError(f"{path} is not the state of a checkpoint (it holds {', '.join(sorted(bundle))})")
    meta = check_meta(state.meta, path)
    U = state.arrays.get("U")
    n_terms, K = meta["n_terms"], meta["n_components"]
    if U is None or getattr(U, "ndim", 0) != 2 or U.dtype.kind != "f":
        raise ModelFormatError(f"{path}: U must be a 2-D float array, got "
                               f"{'nothing' if U is None else f'{U.dtype} of {U.ndim} dimensions'}: damaged")
    if U.shape != (n_terms, K):
        raise ModelFormatError(f"{path}: U has shape {list(U.shape)}, the checkpoint's meta says {n_terms} terms "
                               f"x {K} topics: damaged")
    check_parts(directory, meta)
    # CSR, or an ndarray when the last U-step held the topics dense
    return meta, (np.ascontiguousarray(U) if isinstance(U, np.ndarray) else U.tocsr())


def check_directory(directory):
    """RLSIError unless ``directory`` is a folder of its own (or does not exist yet: it is made at the first
    iteration): not a file, not an rlsi model or matrix folder nor a path inside one, writable."""
    if directory is None:
        return None
    from ..io.kinds import describe_kind, enclosing_folder, folder_kind

    path = Path(directory)
    if os.path.lexists(path) and not path.is_dir():
        raise RLSIError(f"checkpoint directory {path} exists and is not a folder; give a folder for the checkpoints")
    kind = folder_kind(path)
    if kind not in (None, "unknown"):
        raise RLSIError(f"checkpoint directory {path} is {describe_kind(kind)}: the checkpoints would be written "
                        f"into it; give a folder of their own")
    outer = enclosing_folder(path)
    if outer is not None:
        raise RLSIError(f"checkpoint directory {path} is inside {outer}, {describe_kind(folder_kind(outer))}: give "
                        f"a folder outside it")
    if os.path.lexists(path / STATE) and not (path / STATE).is_dir():
        raise RLSIError(f"checkpoint directory {path} holds a {STATE} that is not a folder: it is not a checkpoint "
                        f"of rlsi; give another folder")
    anchor = path
    while not os.path.lexists(anchor) and anchor != anchor.parent:
        anchor = anchor.parent
    if anchor.is_dir() and not os.access(anchor, os.W_OK | os.X_OK):
        raise RLSIError(f"checkpoint directory {path}: folder {anchor} is not writable")
    if not anchor.is_dir():
        raise RLSIError(f"checkpoint directory {path}: {anchor} is not a folder")
    return path


def _check_inside(directory, path):
    """A state or W part folder that is a link is followed only when it stays inside ``directory``."""
    root = os.path.realpath(directory)
    real = os.path.realpath(path)
    if os.path.commonpath([root, real]) != root:
        raise ModelFormatError(f"{path} is a link to {real}, outside the checkpoint directory {directory}: refused")
    if not os.path.isdir(real):
        raise ModelFormatError(f"{path} is not a folder: the checkpoint is damaged")


def _is_int(v, low=0):
    return isinstance(v, int) and not isinstance(v, bool) and low <= v < 2**62


def _finite_list(v, n):
    return (isinstance(v, list) and len(v) == n
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v))


def check_meta(meta, path):
    """The meta of a checkpoint's state, after checking every key the resuming fit reads (ModelFormatError)."""
    def bad(key, want):
        value = repr(meta.get(key))
        value = value if len(value) <= 40 else value[:37] + "..."
        raise ModelFormatError(f"{path}: meta {key!r} must be {want}, got {value}: the checkpoint is damaged")

    for key in ("iteration", "n_docs", "n_terms"):
        if not _is_int(meta.get(key)):
            bad(key, "a non-negative integer")
    if not _is_int(meta.get("n_components"), 1):
        bad("n_components", "a positive integer")
    it = meta["iteration"]
    for key in ("objectives", "bytes_moved", "seconds"):
        if not _finite_list(meta.get(key), it):
            bad(key, f"a list of {it} finite numbers (one per iteration)")
    lam = meta.get("lambda1_effective")
    if lam is not None and not (isinstance(lam, (int, float)) and not isinstance(lam, bool)
                                and math.isfinite(lam) and lam >= 0):
        bad("lambda1_effective", "a finite number >= 0")
    reps = meta.get("representations", [])
    if not isinstance(reps, list) or not all(isinstance(r, str) for r in reps):
        bad("representations", "a list of names")
    parts = meta.get("partitions")
    n = meta["n_docs"]
    if (not isinstance(parts, list) or not parts
            or not all(isinstance(b, list) and len(b) == 2 and all(_is_int(x) for x in b) and b[0] <= b[1] <= n
                       for b in parts)):
        bad("partitions", f"a list of [start, stop] row ranges within {n} documents")
    return meta


def check_parts(directory, meta):
    """Every non-empty partition's W part of the checkpoint's iteration: a folder inside ``directory`` whose
    W is a float array of (rows of the partition, topics), as its manifest says (the worker's loader checks
    the file against the manifest)."""
    from ..io.store import read_manifest

    it, K = meta["iteration"], meta["n_components"]
    for p, (a, b) in enumerate(meta["partitions"]):
        if b <= a or it == 0:
            continue
        path = part_path(directory, it, p)
        if not os.path.lexists(path):
            raise ModelFormatError(f"the checkpoint in {directory} lacks {path.name}, the W part of partition {p} "
                                   f"after iteration {it}: it is incomplete")
        _check_inside(directory, path)
        comps = read_manifest(path)["components"]
        entry = comps.get("doc_vectors", {}).get("arrays", {}).get("W") if isinstance(comps.get("doc_vectors"),
                                                                                       dict) else None
        shape = entry.get("shape") if isinstance(entry, dict) else None
        dtype = entry.get("dtype") if isinstance(entry, dict) else None
        if entry is None or entry.get("kind", "dense") != "dense" or dtype not in ("float32", "float64"):
            raise ModelFormatError(f"{path}: W must be a dense float32 or float64 array, got "
                                   f"{dtype if entry else 'nothing'}: the checkpoint is damaged")
        if shape != [b - a, K]:
            raise ModelFormatError(f"{path}: W has shape {shape}; partition {p} has {b - a} documents and the fit "
                                   f"{K} topics: the checkpoint is damaged")


def is_checkpoint_directory(path) -> bool:
    """Whether ``path`` is a checkpoint directory (not an rlsi folder itself; it holds ``state``)."""
    from ..io.kinds import folder_kind

    return folder_kind(path) is None and (Path(path) / STATE).is_dir()


def verify_directory(directory, *, progress=None):
    """Verify a checkpoint directory whole (``rlsi check``): the checksums and the load checks of its state and
    of every W part the state names (:func:`rlsi.io.verify.check_one`). Returns a
    :class:`rlsi.io.verify.FolderReport`; ModelFormatError (one line) naming the first problem."""
    from ..io.verify import FolderReport, check_one

    directory = Path(directory)
    report = FolderReport(directory, "checkpoint directory")
    check_one(directory / STATE, report, progress)
    meta, _ = _read_state(directory)
    for p, (a, b) in enumerate(meta["partitions"]):
        if b > a and meta["iteration"] > 0:
            check_one(part_path(directory, meta["iteration"], p), report, progress)
    return report


def check_compatible(meta, expected):
    """RLSIError naming the first item in which a checkpoint differs from the fit that would resume it."""
    for key, value in expected.items():
        if meta.get(key) != value:
            raise RLSIError(f"the checkpoint was written with {key}={meta.get(key)!r}, this fit has "
                            f"{value!r}; resume with the same data and parameters or use a new checkpoint_dir")
