"""The rlsi model directory: ``manifest.json`` plus one ``.npy`` file per array.

Layout::

    MODEL_DIR/
      manifest.json            {"format": "rlsi", "format_version": 1, "rlsi_version": ...,
                                "components": {NAME: {"class": CLASS, "meta": {...},
                                                      "arrays": {KEY: {"file", "dtype", "shape"}}}}}
      NAME.KEY.npy             dense arrays (sparse ones as KEY.data / KEY.indices / KEY.indptr)

A directory holds several named components (for example ``model``, ``vectorizer``, ``index``). A class
takes part by defining ``_to_state(self) -> (meta, arrays)`` — ``meta`` JSON-serialisable, ``arrays``
a dict of ndarrays or scipy sparse matrices — and ``_from_state(cls, meta, arrays)``, and by being
registered with :func:`register` under a stable name.

Safety: a model directory is untrusted input (users download and share them). Loading checks every
path, manifest field, dtype, shape and value before the numerical code sees it (:mod:`rlsi.io.safety`),
wraps any failure of a class's ``_from_state`` into :class:`rlsi.errors.ModelFormatError` naming the
component, checks the loaded objects again (:mod:`rlsi.io.checks`: ``components_`` finite and well-formed,
parameters valid, vectorizer, model and index agreeing on the number of terms) and never unpickles.
Writing goes to a temporary sibling directory that replaces the old one in one step when complete
(:mod:`rlsi.io.atomic`), so an interrupted save never leaves a half-written or a missing model.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import ModelFormatError, RLSIError
from ..registry import PERSISTED, import_provider
from .atomic import atomic_dir, check_output_dir, recover_dir, replace_dir  # noqa: F401 (replace_dir: API)
from .checks import check_components_agree, check_loaded, check_role
from .integrity import manifest_problem, record_digests, seal
from .kinds import (CONFLICT, check_nothing_nested, compatible_kinds, describe_conflict, describe_kind, fingerprint,
                    folder_kind, manifest_kind)
from .safety import (MAX_MAGNITUDE, check_float_values, check_manifest, check_text_values, parse_json, read_array,
                     read_member_text)

FORMAT = "rlsi"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
_REGISTRY: dict[str, type] = {}


def register(name):
    """Class decorator: make a class persistable under ``name`` (must stay stable across versions)."""

    def deco(cls):
        _REGISTRY[name] = cls
        cls._persist_name = name
        return cls

    return deco


class Bundle(dict):
    """The components of a loaded model directory, by name (a dict), plus ``path`` and ``manifest``."""

    def __init__(self, items, path, manifest):
        super().__init__(items)
        self.path = path
        self.manifest = manifest


def _registered_name(obj):
    name = getattr(type(obj), "_persist_name", None)
    if name is None or _REGISTRY.get(name) is not type(obj):
        raise RLSIError(f"{type(obj).__name__} objects cannot be saved (not registered with rlsi.io)")
    return name


def _write_array(directory, stem, value):
    """Write a dense or sparse array; return its manifest entry."""
    if sp.issparse(value):
        m = value.tocsr()
        parts = {"data": m.data, "indices": m.indices, "indptr": m.indptr}
        files = {}
        for part, arr in parts.items():
            check_array_to_save(arr, f"{stem}.{part}")
            fname = f"{stem}.{part}.npy"
            np.save(directory / fname, np.ascontiguousarray(arr), allow_pickle=False)
            files[part] = {"file": fname, "dtype": str(arr.dtype), "shape": list(arr.shape)}
        return {"kind": "csr", "shape": list(m.shape), "parts": files}
    arr = np.asarray(value)
    if arr.dtype == object:
        raise RLSIError(f"array {stem!r} has dtype object, which cannot be saved without pickle")
    check_array_to_save(arr, stem)
    fname = f"{stem}.npy"
    np.save(directory / fname, np.ascontiguousarray(arr), allow_pickle=False)
    return {"kind": "dense", "file": fname, "dtype": str(arr.dtype), "shape": list(arr.shape)}


def check_array_to_save(arr, stem):
    """An array is saved only if it can be loaded again (RLSIError otherwise; nothing is written): text without
    lone surrogates, floats finite and within :data:`rlsi.io.safety.MAX_MAGNITUDE` (a fit or a resume that
    diverged does not replace the folder it would make unloadable)."""
    check_text_to_save(arr, stem)
    if arr.dtype.kind == "f" and arr.dtype.itemsize in MAX_MAGNITUDE:
        try:
            check_float_values(arr, f"array {stem!r}")
        except ModelFormatError as exc:
            what = str(exc).split(" holds ", 1)[-1].split(":")[0]
            raise RLSIError(f"cannot save array {stem!r}: it holds {what}; nothing is saved (a fit that "
                            f"diverged, or damaged input)") from None


def check_text_to_save(arr, stem):
    """A text array is saved only if it can be loaded again: no lone surrogate (RLSIError otherwise)."""
    if arr.dtype.kind == "U":
        try:
            check_text_values(arr, f"array {stem!r}")
        except ModelFormatError:
            raise RLSIError(f"cannot save array {stem!r}: it holds a lone surrogate or another code point that "
                            f"is not a character (invalid text from the input)") from None


def _is_model_dir(path):
    return (Path(path) / MANIFEST).is_file()


def save(path, *, unchanged_since=None, **components):
    """Save named components into the directory ``path`` atomically; returns the Path.

    Example: ``rlsi.io.save("model_dir", model=rlsi_model, vectorizer=vec)``.
    The manifest declares the folder's kind (:mod:`rlsi.io.kinds`): ``checkpoint`` for distributed
    checkpoint parts, ``model`` when there is a ``model`` component, ``index`` for a search index without
    one, ``model`` otherwise. An existing directory is replaced only if it is an rlsi folder of the same
    kind (a model and an index replace each other) or empty, and only once the new one is complete.
    unchanged_since : a :func:`rlsi.io.kinds.fingerprint` of ``path`` taken when it was read: the folder is
        not replaced if another writer changed it since (RLSIError; nothing is written).
    """
    if not components:
        raise RLSIError("nothing to save: give at least one component, e.g. save(path, model=m)")
    path = Path(path)
    if path.is_symlink():  # replace the folder the link points to, keep the link
        path = Path(os.path.realpath(path))
    for name, obj in components.items():
        if not name.isidentifier():
            raise RLSIError(f"component name {name!r} must be an identifier")
        _registered_name(obj)
    check_components_agree(components, f"cannot save to {path}", error=RLSIError, damaged=False)
    kind = manifest_kind({"components": {name: {"class": _registered_name(obj)} for name, obj in components.items()}})
    _check_replaceable(path, kind, unchanged_since)
    from .. import __version__

    with atomic_dir(path) as tmp:
        manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "rlsi_version": __version__,
                    "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                    "kind": kind, "components": {}}
        for name, obj in components.items():
            manifest["components"][name] = write_component(tmp, name, obj)
        (tmp / MANIFEST).write_text(seal(record_digests(tmp, manifest)), encoding="utf-8")
        if unchanged_since is not None and fingerprint(path) != unchanged_since:
            raise RLSIError(f"{path} changed while this command ran (another rlsi wrote it): it is not replaced, "
                            f"nothing is saved; run the command again on the new version")
    return path


def write_component(directory, stem, obj) -> dict:
    """Write the arrays of ``obj`` (a registered class) into ``directory`` as ``STEM.KEY.npy`` files; returns
    its manifest entry ``{"class", "meta", "arrays"}`` (:func:`save` writes one per component; the live
    search index, :mod:`rlsi.retrieval.live`, keeps its model versions this way)."""
    meta, arrays = obj._to_state()
    entries = {key: _write_array(Path(directory), f"{stem}.{key}", value) for key, value in arrays.items()}
    return {"class": _registered_name(obj), "meta": meta, "arrays": entries}


def read_component(path, name, comp, *, mmap=False, verify="auto"):
    """The object of one checked manifest entry ``comp`` (:func:`write_component`) of the folder ``path``,
    checked as untrusted input (``verify``: the files against their digests, see :func:`load`); every problem
    is a ModelFormatError naming the component."""
    path = Path(path)
    cls_name = comp["class"]
    cls = _registered(cls_name)
    if cls is None:
        raise ModelFormatError(f"component {name!r} of {path} has unknown class {cls_name[:60]!r}")
    check_role(name, cls_name, f"component {name!r} of {path}")
    arrays = {key: read_array(path, entry, mmap=mmap, where=f"sparse array {name}.{key} of {path}", verify=verify)
              for key, entry in comp["arrays"].items()}
    where = f"component {name!r} ({cls_name}) of {path}"
    try:
        obj = cls._from_state(comp["meta"], arrays)
    except Exception as exc:  # whatever a class raises on damaged state, the model is damaged
        raise ModelFormatError(f"{where} is damaged: {_one_line(exc)}") from None
    check_loaded(obj, where)
    return obj


def _check_replaceable(path, kind, unchanged_since=None):
    """The early checks of a folder about to be replaced by one of ``kind`` (RLSIError naming it)."""
    existing = folder_kind(path)
    if existing == CONFLICT:
        raise RLSIError(f"{path} is not replaced: {describe_conflict(path)}; choose another path")
    if existing is not None and existing != "unknown" and existing not in compatible_kinds(kind):
        raise RLSIError(f"{path} is {describe_kind(existing)}: it is not replaced by {describe_kind(kind)}; "
                        f"choose another path")
    if existing is not None:  # an rlsi folder to replace (any other non-empty folder is refused unopened)
        check_nothing_nested(path, what="folder", remedy="choose another path")
    if unchanged_since is not None and fingerprint(path) != unchanged_since:
        raise RLSIError(f"{path} changed since it was read (another rlsi wrote it): it is not replaced; run "
                        f"the command again on the new version")
    what = "model directory" if kind == "model" else f"{kind} directory"
    check_output_dir(path, what=what, is_ours=_is_model_dir, kind="an rlsi model directory" if kind == "model"
                     else describe_kind(kind), remedy="refusing to overwrite it; choose another path")


def read_manifest(path):
    """Read and check ``manifest.json`` of a model directory; returns the dict."""
    path = Path(path)
    recover_dir(path)
    if not os.path.lexists(path):
        raise ModelFormatError(f"model directory {path} does not exist")
    if not path.is_dir():
        raise ModelFormatError(f"{path} is not a folder: a model is a folder with a {MANIFEST}")
    mfile = path / MANIFEST
    if not os.path.lexists(mfile):
        raise ModelFormatError(f"{path} is not an rlsi model directory (no {MANIFEST})")
    manifest = parse_json(read_member_text(path, MANIFEST), mfile)
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if isinstance(version, int) and version > FORMAT_VERSION:  # a newer rlsi's folder: say so first
        check_manifest(manifest, mfile, FORMAT, FORMAT_VERSION)
    manifest_problem(manifest, mfile)  # a sealed manifest whose text changed
    return check_manifest(manifest, mfile, FORMAT, FORMAT_VERSION)


def _one_line(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def load(path, *, mmap=False, only=None, verify="auto"):
    """Load a model directory. Returns a :class:`Bundle` (dict name -> object).

    mmap : memory-map the arrays read-only instead of reading them (large models load quickly).
    only : optional iterable of component names to load.
    verify : check the files against the checksums of the manifest: ``"auto"`` (default: every file read
        into memory, and memory-mapped files up to :data:`rlsi.io.integrity.VERIFY_MMAP_BYTES`), True (every
        file: a resume, a refit, a merge), False, or a size in bytes (memory-mapped files up to it)
        (:mod:`rlsi.io.integrity`). A folder written without checksums loads unverified.

    Every problem with the directory raises :class:`rlsi.errors.ModelFormatError` (one line naming the
    file or component), never another exception.
    """
    path = Path(path)
    manifest = read_manifest(path)
    if only is not None:
        only = set(only)
        missing = only - set(manifest["components"])
        if missing:
            raise ModelFormatError(f"{path} has no component(s) {sorted(missing)}; it has "
                                   f"{sorted(manifest['components'])}")
    items = {}
    for name, comp in manifest["components"].items():
        if only is not None and name not in only:
            continue
        items[name] = read_component(path, name, comp, mmap=mmap, verify=verify)
    check_components_agree(items, f"model directory {path}")
    return Bundle(items, path, manifest)


def _registered(cls_name):
    """The class registered as ``cls_name``, importing the module that registers it (named by
    :data:`rlsi.registry.PERSISTED`) on first use; None for a name no module registers."""
    cls = _REGISTRY.get(cls_name)
    if cls is None and isinstance(cls_name, str):
        try:
            import_provider(PERSISTED, cls_name)
        except ImportError:  # an optional part (Dask) that is not installed: the class stays unknown
            return None
        cls = _REGISTRY.get(cls_name)
    return cls