"""Folder kinds: what an rlsi folder holds, and which folders a command may replace or write into.

Every folder rlsi writes declares its kind in its ``manifest.json`` (``"kind"``):

* ``model`` — a topic model with its vectorizer (``rlsi fit``), and possibly its search index;
* ``matrix`` — a documents x terms matrix (``rlsi synth``, ``rlsi ingest``; :mod:`rlsi.io.matrix`);
* ``index`` — a search index without a topic model (a term-only index, :class:`rlsi.retrieval.Searcher`);
* ``checkpoint`` — a part of a distributed fit's checkpoint (:mod:`rlsi.distributed.checkpoint`);
* ``live`` — a model directory that holds a live search index (:mod:`rlsi.retrieval.live`): it takes
  documents in place, so no other writer replaces it.

Folders written without a ``kind`` still load: their kind is inferred from their components
(:func:`manifest_kind`). A folder's kind is decided from its contents as well as its manifest
(:func:`folder_kind`): the components' classes and the array files it holds must agree with the kind its
manifest declares, else it is :data:`CONFLICT` (a manifest edited by hand, or a folder copied over another)
and no writer replaces it.

The rules a writer follows (:func:`check_destination`, :func:`check_file_destination`):

* an existing rlsi folder is replaced only by a folder of its own kind (a model and an index replace each
  other: adding an index to a model folder rewrites the folder with the index);
* never a folder the command reads, a folder that contains one (replacing it deletes the input) or a
  path inside one;
* an output file is never written inside an rlsi folder (it would damage the folder);
* a folder that holds an rlsi folder, at any depth, is never replaced (:func:`check_nothing_nested`):
  replacing it would delete the folder kept inside.

Each refusal raises :class:`rlsi.errors.RLSIError` with one line naming both paths.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..errors import RLSIError

__all__ = ["KINDS", "CONFLICT", "manifest_kind", "folder_kind", "contents_kinds", "describe_kind", "describe_conflict",
           "require_model_folder", "check_destination", "check_kind_replaceable", "check_file_destination",
           "check_reads_apart", "compatible_kinds", "enclosing_folder", "nested_folder", "check_nothing_nested",
           "fingerprint"]

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
#: The kind of a folder whose manifest declares one kind and whose contents are another's.
CONFLICT = "conflicting"
#: The contents a kind may hold besides its own: a live index is a model folder that takes documents.
_AGREEING = {"live": {"live", "model", "index"}}
#: The kind implied by the array files of a component name (``NAME.KEY.npy``), strongest first.
_FILE_KINDS = (("matrix", "matrix"), ("state", "checkpoint"), ("doc_vectors", "checkpoint"), ("model", "model"),
               ("index", "index"))
_MANIFEST_LIMIT = 1 << 20  # the start of a manifest is enough to tell its kind; a larger one is read whole


def manifest_kind(manifest) -> str:
    """The kind a parsed manifest declares, or the one its components imply (folders written without one)."""
    declared = manifest.get("kind") if isinstance(manifest, dict) else None
    if isinstance(declared, str) and declared in KINDS:
        return declared
    if isinstance(manifest, dict) and isinstance(manifest.get("live"), dict):
        return "live"
    return _components_kind(manifest) or "model"


def _components_kind(manifest):
    """The kind the components of a manifest imply (their names and classes), or None when they do not tell."""
    comps = manifest.get("components") if isinstance(manifest, dict) else None
    if not isinstance(comps, dict):
        return None
    classes = {c.get("class") for c in comps.values() if isinstance(c, dict)}
    if isinstance(comps.get("matrix"), dict) and comps["matrix"].get("class") == "CorpusMatrix":
        return "matrix"
    if classes & _CHECKPOINT_CLASSES:
        return "checkpoint"
    if "model" in comps:
        return "model"
    if "index" in comps:
        return "index"
    return None


def _files_kind(path: Path):
    """The kind the array files of the folder imply (``matrix.X.data.npy``: a matrix), or None."""
    try:
        names = {e.name.split(".", 1)[0] for e in os.scandir(path) if e.name.endswith(".npy")}
    except OSError:
        return None
    return next((kind for stem, kind in _FILE_KINDS if stem in names), None)


def contents_kinds(path, manifest) -> set:
    """The kinds the contents of the rlsi folder ``path`` imply: its manifest's components and its array files
    (empty when they do not tell)."""
    return {k for k in (_components_kind(manifest), _files_kind(Path(path))) if k is not None}


def compatible_kinds(kind) -> set:
    """The kinds of existing folders a folder of ``kind`` may replace."""
    return _COMPATIBLE.get(kind, {kind})


def describe_kind(kind) -> str:
    if kind == CONFLICT:
        return "an rlsi folder whose manifest declares another kind than its contents hold"
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
    manifest cannot be read; :data:`CONFLICT` when the kind its manifest declares is not the one its contents
    imply (:func:`contents_kinds`)."""
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
    kind = manifest_kind(manifest)
    return CONFLICT if contents_kinds(path, manifest) - _AGREEING.get(kind, {kind}) else kind


def describe_conflict(path) -> str:
    """What the manifest of ``path`` declares and what its contents hold, in words."""
    manifest = _read_manifest_json(Path(path))
    declared = manifest.get("kind", "none") if isinstance(manifest, dict) else "none"
    held = " and ".join(sorted(contents_kinds(path, manifest))) or "nothing it can tell"
    return f"its {MANIFEST} declares the kind {str(declared)[:20]!r} but it holds a {held} folder's contents"


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
    check_kind_replaceable(path, kind, what=what, remedy=remedy)
    return check_output_dir(path, what=what, is_ours=lambda p: folder_kind(p) in _COMPATIBLE[kind],
                            kind=describe_kind(kind), remedy=remedy)


def check_kind_replaceable(path, kind, *, what="output", remedy="choose another -o"):
    """RLSIError unless the existing folder ``path`` (if any) may be replaced by a folder of ``kind``: an rlsi
    folder of a compatible kind whose manifest and contents agree, holding no rlsi folder at any depth."""
    existing = folder_kind(path)
    if existing is not None and existing not in _COMPATIBLE[kind]:
        if existing == "unknown":
            raise RLSIError(f"{what} {path} holds a {MANIFEST} that cannot be read: it is not replaced; remove it "
                            f"by hand or {remedy}")
        if existing == CONFLICT:
            raise RLSIError(f"{what} {path} is not replaced: {describe_conflict(path)} (edited by hand?); remove it "
                            f"by hand or {remedy}")
        raise RLSIError(f"{what} {path} is {describe_kind(existing)}: it is not replaced by "
                        f"{describe_kind(kind)}; {remedy}")
    if existing is not None:  # an rlsi folder to replace (any other non-empty folder is refused unopened)
        check_nothing_nested(path, what=what, remedy=remedy)


def nested_folder(path, *, own=()):
    """The first folder below ``path`` (at any depth, ``path`` itself excluded; links are not followed: a
    replacement removes a link, never what it points to) that holds an rlsi ``manifest.json`` — readable or
    not —, or None. ``own``: names of sub-folders of ``path`` that belong to it (skipped with their content)."""
    root = Path(path)
    if not root.is_dir() or root.is_symlink():
        return None
    for dirpath, dirnames, filenames in os.walk(root, onerror=lambda exc: None):
        if dirpath == str(root):
            dirnames[:] = [d for d in dirnames if d not in own]
        elif MANIFEST in filenames and folder_kind(dirpath) is not None:
            return Path(dirpath)
        dirnames.sort()
    return None


def check_nothing_nested(path, *, what="output", remedy="choose another -o", own=()):
    """RLSIError (one line, nothing changed) when replacing the folder ``path`` would delete an rlsi folder kept
    inside it (:func:`nested_folder`)."""
    inner = nested_folder(path, own=own)
    if inner is not None:
        raise RLSIError(f"{what} {path} holds {inner}, {describe_kind(folder_kind(inner))}: replacing {path} would "
                        f"delete it; move it out first or {remedy}")


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
