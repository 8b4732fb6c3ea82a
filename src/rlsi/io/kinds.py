"""Folder kinds: what an rlsi folder holds, and which folders a command may replace or write into.

Every folder rlsi writes declares its kind in its ``manifest.json`` (``"kind"``):

* ``model`` — a topic model with its vectorizer (``rlsi fit``), and possibly its search index;
* ``matrix`` — a documents x terms matrix (``rlsi synth``, ``rlsi ingest``; :mod:`rlsi.io.matrix`);
* ``index`` — a search index without a topic model (a term-only index, :class:`rlsi.retrieval.Searcher`);
* ``checkpoint`` — a part of a distributed fit's checkpoint (:mod:`rlsi.distributed.checkpoint`);
* ``live`` — a model directory that holds a live search index (:mod:`rlsi.retrieval.live`): it takes
  documents in place, so no other writer replaces it.

Folders written without a ``kind`` still load: their kind is inferred from their components
(:func:`manifest_kind`).

The rules a writer follows (:func:`check_destination`, :func:`check_file_destination`):

* an existing rlsi folder is replaced only by a folder of its own kind (a model and an index replace each
  other: adding an index to a model folder rewrites the folder with the index);
* never a folder the command reads, a folder that contains one (replacing it deletes the input) or a
  path inside one;
* an output file is never written inside an rlsi folder (it would damage the folder).

Each refusal raises :class:`rlsi.errors.RLSIError` with one line naming both paths.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..errors import RLSIError

__all__ = ["KINDS", "manifest_kind", "folder_kind", "describe_kind", "require_model_folder", "check_destination",
           "check_file_destination", "check_reads_apart", "compatible_kinds", "enclosing_folder", "fingerprint"]

MANIFEST = "manifest.json"
KINDS = {
    "model": "an rlsi model directory (rlsi fit)",
    "matrix": "an rlsi matrix directory (rlsi synth / rlsi ingest)",
    "index": "an rlsi search index directory (rlsi index)",
    "checkpoint": "an rlsi checkpoint folder of a distributed fit",
    "live": "an rlsi live search index (rlsi index --add)",
}
#: Kinds that may replace each other: a model folder gains an index by being rewritten with it.
_COMPATIBLE = {"model": {"model", "index"}, "index": {"model", "index"}, "matrix": {"matrix"},
               "checkpoint": {"checkpoint"}, "live": {"live"}}
_CHECKPOINT_CLASSES = {"DistributedArrays"}
_MANIFEST_LIMIT = 1 << 20  # the start of a manifest is enough to tell its kind; a larger one is read whole


def manifest_kind(manifest) -> str:
    """The kind a parsed manifest declares, or the one its components imply (folders written without one)."""
    declared = manifest.get("kind") if isinstance(manifest, dict) else None
    if isinstance(declared, str) and declared in KINDS:
        return declared
    if isinstance(manifest, dict) and isinstance(manifest.get("live"), dict):
        return "live"
    comps = manifest.get("components") if isinstance(manifest, dict) else None
    if not isinstance(comps, dict):
        return "model"
    classes = {c.get("class") for c in comps.values() if isinstance(c, dict)}
    if isinstance(comps.get("matrix"), dict) and comps["matrix"].get("class") == "CorpusMatrix":
        return "matrix"
    if classes & _CHECKPOINT_CLASSES:
        return "checkpoint"
    if "model" in comps:
        return "model"
    if "index" in comps:
        return "index"
    return "model"


def compatible_kinds(kind) -> set:
    """The kinds of existing folders a folder of ``kind`` may replace."""
    return _COMPATIBLE.get(kind, {kind})


def describe_kind(kind) -> str:
    return KINDS.get(kind, "an rlsi folder of unknown kind")


def _read_manifest_json(path: Path):
    """The parsed manifest of ``path`` (None: no manifest; ``False``: one that cannot be read)."""
    mfile = path / MANIFEST
    try:
        if not mfile.is_file():
            return None
        if mfile.stat().st_size > 256 * 2**20:
            return False
        return json.loads(mfile.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return False


def folder_kind(path):
    """The kind of the rlsi folder ``path``; None when it is not one (no manifest); ``"unknown"`` when its
    manifest cannot be read."""
    path = Path(path)
    if not path.is_dir():
        return None
    manifest = _read_manifest_json(path)
    if manifest is None:
        return None
    if manifest is False:
        return "unknown"
    if not isinstance(manifest, dict) or manifest.get("format") != "rlsi":
        return None  # another program's manifest: a foreign folder
    return manifest_kind(manifest)


def require_model_folder(path):
    """RLSIError unless ``path`` is a model (or search index) folder: a matrix directory or a checkpoint is
    never indexed, searched or rewritten as one."""
    kind = folder_kind(path)
    if kind in ("matrix", "checkpoint"):
        hint = (f"fit a model on it with 'rlsi fit --matrix {path} -o MODEL_DIR', then index the documents with "
                f"'rlsi index MODEL_DIR --matrix {path}'") if kind == "matrix" else "give a model folder"
        raise RLSIError(f"{path} is {describe_kind(kind)}, not a model folder: {hint}")
    return path


def enclosing_folder(path):
    """The nearest existing folder above ``path`` (not ``path`` itself) that is an rlsi folder, or None."""
    p = Path(os.path.realpath(path)).parent
    while True:
        if folder_kind(p) not in (None, "unknown"):
            return p
        if p == p.parent:
            return None
        p = p.parent


def _real(path) -> Path:
    return Path(os.path.realpath(path))


def _within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def check_reads_apart(output, reads, *, what="output"):
    """Refuse an ``output`` path that is one of the paths the command reads, lies inside one, or contains
    one (replacing it would delete the input)."""
    out = _real(output)
    for source in reads:
        if source is None:
            continue
        src = _real(source)
        if out == src:
            raise RLSIError(f"{what} {output} is the input {source} this command reads: writing it would "
                            f"destroy the input; choose another output")
        if _within(out, src):
            raise RLSIError(f"{what} {output} is inside {source}, which this command reads: choose an output "
                            f"outside it")
        if _within(src, out):
            raise RLSIError(f"{what} {output} contains {source}, which this command reads: replacing it would "
                            f"delete the input; choose another output")


def _check_placement(path: Path, reads, what, remedy):
    """An output apart from the command's inputs, not inside an rlsi folder, with a name the system takes."""
    check_reads_apart(path, reads, what=what)
    outer = enclosing_folder(path)
    if outer is not None:
        raise RLSIError(f"{what} {path} is inside {outer}, {describe_kind(folder_kind(outer))}: writing there "
                        f"would damage it; {remedy}")
    _check_name_length(path, what)


def check_destination(path, *, kind, reads=(), what="output", remedy="choose another -o"):
    """Refuse early a folder output that would destroy something: an rlsi folder of another kind, an input
    of the command (or a folder around or inside one), a path inside another rlsi folder; then the checks
    of :func:`rlsi.io.atomic.check_output_dir` (writable, not a foreign folder). Returns the Path."""
    from .atomic import check_output_dir, recover_dir

    if kind not in KINDS:
        raise ValueError(f"kind={kind!r}: use one of {', '.join(KINDS)}")
    path = Path(path)
    if not str(path).strip() or path.name in ("", ".", ".."):
        raise RLSIError(f"{what} {str(path)!r} names no folder of its own: give a new folder name")
    _check_placement(path, reads, what, remedy)
    recover_dir(path)
    existing = folder_kind(path)
    if existing is not None and existing not in _COMPATIBLE[kind]:
        if existing == "unknown":
            raise RLSIError(f"{what} {path} holds a {MANIFEST} that cannot be read: it is not replaced; remove it "
                            f"by hand or {remedy}")
        raise RLSIError(f"{what} {path} is {describe_kind(existing)}: it is not replaced by "
                        f"{describe_kind(kind)}; {remedy}")
    return check_output_dir(path, what=what, is_ours=lambda p: folder_kind(p) in _COMPATIBLE[kind],
                            kind=describe_kind(kind), remedy=remedy)


def check_file_destination(path, *, reads=(), what="output"):
    """Refuse early an output file inside an rlsi folder or in place of an input; then the checks of
    :func:`rlsi.io.atomic.check_output_file`. Returns the Path."""
    from .atomic import check_output_file

    path = Path(path)
    _check_placement(path, reads, what, "choose a file outside it")
    return check_output_file(path, what=what)


def _check_name_length(path: Path, what):
    """A name the file system refuses (too long) fails here, not after the work: the writer adds a hidden
    sibling prefix and suffix of up to 60 characters."""
    parent = path.parent if str(path.parent) else Path(".")
    try:
        limit = os.pathconf(parent if parent.is_dir() else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    longest = len(os.fsencode(path.name)) + 60
    if longest > limit:
        raise RLSIError(f"{what} name {path.name[:40]!r}... is {len(os.fsencode(path.name))} bytes long; the file "
                        f"system allows {limit - 60} for an rlsi output: choose a shorter name")


def fingerprint(path):
    """A token that changes whenever the rlsi folder ``path`` is rewritten (a new folder replaces it, or its
    manifest changes); None when it has no manifest. Compare two to refuse replacing a folder that another
    writer changed since it was read."""
    path = Path(path)
    try:
        st_dir = os.stat(path)
        mfile = path / MANIFEST
        st = os.stat(mfile)
        with open(mfile, "rb") as f:
            digest = hashlib.sha256(f.read(_MANIFEST_LIMIT)).hexdigest()
    except OSError:
        return None
    return f"{st_dir.st_ino}:{st.st_ino}:{st.st_mtime_ns}:{st.st_size}:{digest}"
