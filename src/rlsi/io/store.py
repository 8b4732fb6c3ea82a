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

Safety: arrays are read with ``allow_pickle=False`` (memory-mapped when ``mmap=True``), their dtype and
shape are checked against the manifest, and any problem — missing or damaged file, unknown class, a
format version newer than this rlsi reads — raises :class:`rlsi.errors.ModelFormatError` naming the file.
Writing goes to a temporary sibling directory renamed into place when complete, so an interrupted save
never leaves a half-written model, and an existing model is replaced only once the new one is whole.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import uuid
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import ModelFormatError, RLSIError

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
            fname = f"{stem}.{part}.npy"
            np.save(directory / fname, np.ascontiguousarray(arr), allow_pickle=False)
            files[part] = {"file": fname, "dtype": str(arr.dtype), "shape": list(arr.shape)}
        return {"kind": "csr", "shape": list(m.shape), "parts": files}
    arr = np.asarray(value)
    if arr.dtype == object:
        raise RLSIError(f"array {stem!r} has dtype object, which cannot be saved without pickle")
    fname = f"{stem}.npy"
    np.save(directory / fname, np.ascontiguousarray(arr), allow_pickle=False)
    return {"kind": "dense", "file": fname, "dtype": str(arr.dtype), "shape": list(arr.shape)}


def save(path, **components):
    """Save named components into the directory ``path`` atomically; returns the Path.

    Example: ``rlsi.io.save("model_dir", model=rlsi_model, vectorizer=vec)``.
    An existing directory is replaced only if it is an rlsi model directory (has a manifest) or empty.
    """
    if not components:
        raise RLSIError("nothing to save: give at least one component, e.g. save(path, model=m)")
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise RLSIError(f"cannot save a model to {path}: it exists and is not a directory")
        if any(path.iterdir()) and not (path / MANIFEST).exists():
            raise RLSIError(f"refusing to overwrite {path}: it is a non-empty directory that is not an "
                            f"rlsi model")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        from .. import __version__

        manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "rlsi_version": __version__,
                    "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                    "components": {}}
        for name, obj in components.items():
            if not name.isidentifier():
                raise RLSIError(f"component name {name!r} must be an identifier")
            cls_name = _registered_name(obj)
            meta, arrays = obj._to_state()
            entries = {key: _write_array(tmp, f"{name}.{key}", value) for key, value in arrays.items()}
            manifest["components"][name] = {"class": cls_name, "meta": meta, "arrays": entries}
        text = json.dumps(manifest, indent=1, sort_keys=True, allow_nan=True)
        (tmp / MANIFEST).write_text(text, encoding="utf-8")
        replace_dir(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def replace_dir(tmp, path):
    """Move the complete directory ``tmp`` to ``path``, replacing an existing ``path`` only once the new
    one is in place (on failure the old one is restored). Used for every multi-file output."""
    if not path.exists():
        os.replace(tmp, path)
        return
    old = path.parent / f".{path.name}.old-{uuid.uuid4().hex[:8]}"
    os.replace(path, old)
    try:
        os.replace(tmp, path)
    except BaseException:
        os.replace(old, path)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _read_npy(directory, entry, mmap):
    fpath = directory / entry["file"]
    if not fpath.is_file():
        raise ModelFormatError(f"model file {fpath} is missing")
    try:
        arr = np.load(fpath, mmap_mode="r" if mmap else None, allow_pickle=False)
    except Exception as exc:  # truncated, garbage, or pickled content
        raise ModelFormatError(f"model file {fpath} is damaged or not a numpy array file ({exc})") from None
    if str(arr.dtype) != entry["dtype"] or list(arr.shape) != list(entry["shape"]):
        raise ModelFormatError(f"model file {fpath} has dtype {arr.dtype} and shape {list(arr.shape)}; the "
                               f"manifest says {entry['dtype']} {entry['shape']}: the model is damaged")
    return arr


def _read_array(directory, entry, mmap):
    if entry.get("kind") == "csr":
        parts = {p: _read_npy(directory, e, mmap) for p, e in entry["parts"].items()}
        try:
            m = sp.csr_matrix((parts["data"], parts["indices"], parts["indptr"]), shape=tuple(entry["shape"]))
            m.check_format(full_check=False)
        except Exception as exc:
            raise ModelFormatError(f"sparse array in {directory} is inconsistent ({exc}): damaged model") from None
        return m
    return _read_npy(directory, entry, mmap)


def read_manifest(path):
    """Read and check ``manifest.json`` of a model directory; returns the dict."""
    path = Path(path)
    if not path.exists():
        raise ModelFormatError(f"model directory {path} does not exist")
    mfile = path / MANIFEST
    if not mfile.is_file():
        raise ModelFormatError(f"{path} is not an rlsi model directory (no {MANIFEST})")
    try:
        manifest = json.loads(mfile.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelFormatError(f"{mfile} is damaged: not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFormatError(f"{mfile} is not an rlsi manifest")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ModelFormatError(f"{mfile} has an invalid format_version {version!r}")
    if version > FORMAT_VERSION:
        raise ModelFormatError(
            f"{path} was written in model format {version} by rlsi {manifest.get('rlsi_version', '?')}; "
            f"this rlsi reads format {FORMAT_VERSION} at most: upgrade rlsi")
    if not isinstance(manifest.get("components"), dict):
        raise ModelFormatError(f"{mfile} lists no components")
    return manifest


def load(path, *, mmap=False, only=None):
    """Load a model directory. Returns a :class:`Bundle` (dict name -> object).

    mmap : memory-map the arrays read-only instead of reading them (large models load instantly).
    only : optional iterable of component names to load.
    """
    path = Path(path)
    manifest = read_manifest(path)
    items = {}
    for name, comp in manifest["components"].items():
        if only is not None and name not in only:
            continue
        try:
            cls_name, meta, entries = comp["class"], comp["meta"], comp["arrays"]
        except (KeyError, TypeError):
            raise ModelFormatError(f"component {name!r} of {path / MANIFEST} is malformed") from None
        cls = _REGISTRY.get(cls_name)
        if cls is None:
            _import_known_classes()
            cls = _REGISTRY.get(cls_name)
        if cls is None:
            raise ModelFormatError(f"component {name!r} of {path} has unknown class {cls_name!r}")
        arrays = {key: _read_array(path, entry, mmap) for key, entry in entries.items()}
        try:
            items[name] = cls._from_state(meta, arrays)
        except ModelFormatError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"component {name!r} of {path} is damaged or inconsistent ({exc})") from None
    if only is not None:
        missing = set(only) - set(items)
        if missing:
            raise ModelFormatError(f"{path} has no component(s) {sorted(missing)}; it has "
                                   f"{sorted(manifest['components'])}")
    return Bundle(items, path, manifest)


def _import_known_classes():
    """Import the modules that register persistable classes (so load works before any import)."""
    import importlib

    for mod in ("rlsi.models", "rlsi.text", "rlsi.retrieval"):
        try:
            importlib.import_module(mod)
        except ImportError:  # pragma: no cover - optional parts
            pass
