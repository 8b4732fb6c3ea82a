"""Reading a model directory as untrusted input.

A model folder is something users download and share, so every byte of it is checked before the
numerical code sees it (the kernels index arrays without bounds checks: one bad column index is a
segmentation fault, not an exception):

* **paths** — every ``"file"`` of the manifest is a plain file name inside the folder (no ``/``, no
  ``..``, not absolute); the file must be a regular file (a FIFO, a device, a folder or a link to one
  is refused before it is opened, and it is opened non-blocking so it cannot hang), and a symbolic link
  must not lead outside the folder;
* **manifest** — each field has the type and range the format defines (:func:`check_manifest`);
* **.npy files** — the header is parsed without evaluating code (numpy's ``literal_eval`` parser, with
  its size limit), and the dtype must be on the whitelist *before* any data is read: real float32/64,
  integers, bool and unicode; never objects (pickle), complex, structured, bytes, datetimes, float16 or
  extended precision. The file size must be exactly the header plus the data, so a header cannot
  announce more memory than the file holds;
* **values** — float arrays must be finite and below :data:`MAX_MAGNITUDE` (beyond it, squares summed
  over a vocabulary overflow, and every folded-in vector becomes inf/NaN); unicode arrays must hold
  valid, printable code points (no surrogates);
* **sparse arrays** — the full CSR structure: ``indptr`` starts at 0, never decreases and ends at
  ``nnz``; every column index is in ``[0, n_columns)``; index arrays are int32/int64.

Every failure raises :class:`rlsi.errors.ModelFormatError` with one line naming the file (or the
manifest field) and the problem.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.lib import format as npy_format

from ..errors import ModelFormatError
from .checksums import bytes_digest, file_digest
from .integrity import DIGEST, check_digest_field, mismatch, must_verify

__all__ = ["MAX_MAGNITUDE", "open_member", "read_member_text", "check_manifest", "read_array",
           "check_csr", "check_float_values", "check_text_values", "json_or_problem"]

#: Largest absolute value accepted in a float array of a model, by item size. A value v enters Gram
#: matrices as v² summed over up to ~10⁸ terms: 1e100² · 1e8 ≪ 1.8e308 (float64), 1e15² · 1e8 ≪ 3.4e38
#: (float32). Real rlsi arrays stay below 1e12 (document counts, statistics summed over documents).
MAX_MAGNITUDE = {8: 1e100, 4: 1e15}
MAX_NDIM = 8
MANIFEST_LIMIT = 256 * 2**20  # bytes; a manifest holds parameters, never data
INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
_KIND_NAMES = {"f": "floats (float32 or float64)", "i": "integer indices (int32 or int64)"}
_CHUNK = 1 << 20


def _one_line(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _kind_of(mode) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


# ---------------------------------------------------------------------------------------- files
def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root


def open_member(directory, name):
    """Open ``directory/name`` for reading after checking it is a regular file inside the folder."""
    directory = Path(directory)
    fpath = directory / name
    try:
        st = os.lstat(fpath)
    except FileNotFoundError:
        raise ModelFormatError(f"model file {fpath} is missing") from None
    except OSError as exc:
        raise ModelFormatError(f"cannot read model file {fpath}: {exc.strerror or exc}") from None
    link = stat.S_ISLNK(st.st_mode)
    if link:
        try:
            st = os.stat(fpath)
        except OSError:
            raise ModelFormatError(f"model file {fpath} is a broken symbolic link") from None
    if not stat.S_ISREG(st.st_mode):
        raise ModelFormatError(f"model file {fpath} is not a regular file ({_kind_of(st.st_mode)})")
    if link:
        target = os.path.realpath(fpath)
        if not _inside(target, os.path.realpath(directory)):
            raise ModelFormatError(f"model file {fpath} is a link to {target}, outside the model folder")
    try:
        fd = os.open(fpath, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ModelFormatError(f"cannot read model file {fpath}: {exc.strerror or exc}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):  # replaced between the check and the opening
        os.close(fd)
        raise ModelFormatError(f"model file {fpath} is not a regular file ({_kind_of(st.st_mode)})")
    return os.fdopen(fd, "rb")


def read_member_text(directory, name, limit=MANIFEST_LIMIT) -> str:
    """The UTF-8 text of a small member file (the manifest), checked like :func:`open_member`."""
    fpath = Path(directory) / name
    with open_member(directory, name) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise ModelFormatError(f"{fpath} is {size} bytes, more than a manifest can be ({limit}): damaged")
        data = f.read(limit + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{fpath} is damaged: not UTF-8 text (byte {exc.start})") from None


def json_or_problem(text):
    """``(json.loads(text), None)``, or ``(None, problem)`` naming the failure in a phrase (syntax, nesting
    depth, giant integers)."""
    try:
        return json.loads(text), None
    except RecursionError:
        return None, "JSON nested too deeply"
    except ValueError as exc:  # JSONDecodeError, or an integer with too many digits
        return None, f"not valid JSON ({_one_line(exc)})"


def parse_json(text, fpath):
    """``json.loads`` with every failure (syntax, nesting depth, giant integers) as ModelFormatError."""
    obj, problem = json_or_problem(text)
    if problem is not None:
        raise ModelFormatError(f"{fpath} is damaged: {problem}")
    return obj


# ---------------------------------------------------------------------------------------- manifest
def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_name(value, where):
    if (not isinstance(value, str) or not value or value in (".", "..") or "/" in value or "\\" in value
            or "\x00" in value or os.path.isabs(value) or len(value) > 255):
        raise ModelFormatError(f"{where} must be a file name inside the model folder, got {value!r}")


def _check_shape(value, where, ndim=None):
    if (not isinstance(value, list) or len(value) > MAX_NDIM or not all(_is_int(x) and 0 <= x < 2**62 for x in value)
            or (ndim is not None and len(value) != ndim)):
        want = f"{ndim} " if ndim is not None else ""
        raise ModelFormatError(f"{where} must be a list of {want}non-negative integers, got {_short(value)}")
    return tuple(value)


def _short(value, n=60) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 3] + "..."


def _check_file_entry(entry, where):
    if not isinstance(entry, dict):
        raise ModelFormatError(f"{where} must be an object, got {_short(entry)}")
    for key in ("file", "dtype", "shape"):
        if key not in entry:
            raise ModelFormatError(f"{where} has no {key!r}")
    _check_name(entry["file"], f"{where}.file")
    if DIGEST in entry:
        check_digest_field(entry[DIGEST], f"{where}.{DIGEST}")
    if not isinstance(entry["dtype"], str) or len(entry["dtype"]) > 32:
        raise ModelFormatError(f"{where}.dtype must be a dtype name, got {_short(entry['dtype'])}")
    _check_shape(entry["shape"], f"{where}.shape")


def check_array_entry(entry, where):
    """Check one ``arrays`` entry of the manifest (``dense`` or ``csr``)."""
    if not isinstance(entry, dict):
        raise ModelFormatError(f"{where} must be an object, got {_short(entry)}")
    kind = entry.get("kind", "dense")
    if kind == "dense":
        _check_file_entry(entry, where)
    elif kind == "csr":
        _check_shape(entry.get("shape"), f"{where}.shape", ndim=2)
        parts = entry.get("parts")
        if not isinstance(parts, dict) or sorted(parts) != ["data", "indices", "indptr"]:
            raise ModelFormatError(f"{where}.parts must hold exactly data, indices and indptr")
        for part, sub in parts.items():
            _check_file_entry(sub, f"{where}.parts.{part}")
    else:
        raise ModelFormatError(f"{where}.kind must be 'dense' or 'csr', got {_short(kind)}")


def check_manifest(manifest, mfile, format_name, max_version):
    """Check the structure of a parsed manifest (every field the loader reads); returns it."""
    if not isinstance(manifest, dict) or manifest.get("format") != format_name:
        raise ModelFormatError(f"{mfile} is not an rlsi manifest")
    version = manifest.get("format_version")
    if not _is_int(version) or version < 1:
        raise ModelFormatError(f"{mfile} has an invalid format_version {_short(version)}")
    if version > max_version:
        writer = manifest.get("rlsi_version", "?")
        raise ModelFormatError(
            f"{mfile.parent} was written in model format {version} by rlsi {_short(writer, 20)}; this rlsi "
            f"reads format {max_version} at most: upgrade rlsi")
    kind = manifest.get("kind", "model")
    if kind not in ("model", "matrix", "index", "checkpoint", "live"):  # rlsi.io.kinds.KINDS
        raise ModelFormatError(f"{mfile} declares an unknown folder kind {_short(kind, 30)}")
    components = manifest.get("components")
    if not isinstance(components, dict) or not components:
        raise ModelFormatError(f"{mfile} lists no components")
    for name, comp in components.items():
        where = f"{mfile}: components.{name}"
        if not name.isidentifier():
            raise ModelFormatError(f"{mfile}: component name {_short(name)} is not an identifier")
        if not isinstance(comp, dict):
            raise ModelFormatError(f"{where} must be an object")
        if not isinstance(comp.get("class"), str):
            raise ModelFormatError(f"{where}.class must be a class name, got {_short(comp.get('class'))}")
        if not isinstance(comp.get("meta"), dict):
            raise ModelFormatError(f"{where}.meta must be an object")
        arrays = comp.get("arrays")
        if not isinstance(arrays, dict):
            raise ModelFormatError(f"{where}.arrays must be an object")
        for key, entry in arrays.items():
            check_array_entry(entry, f"{where}.arrays.{key}")
    return manifest


# ---------------------------------------------------------------------------------------- arrays
def _dtype_problem(dtype: np.dtype):
    """None if ``dtype`` may appear in a model file, else the reason."""
    if dtype.hasobject:
        return "Python objects (pickle), which rlsi never reads"
    if dtype.itemsize == 0:
        return "an empty type"
    if dtype.fields is not None or dtype.subdtype is not None:
        return "a structured type"
    if dtype.kind == "f" and dtype.itemsize in (4, 8):
        return None
    if dtype.kind in "iu" and dtype.itemsize in (1, 2, 4, 8):
        return None
    if dtype.kind in "bU":
        return None
    return "not a real number, integer, boolean or text type"


def _readinto(f, buf, fpath):
    view = memoryview(buf)
    pos = 0
    while pos < len(view):
        n = f.readinto(view[pos:])
        if not n:
            raise ModelFormatError(f"model file {fpath} is damaged: it ended early")
        pos += n


def check_float_values(arr, where):
    """Finite and below :data:`MAX_MAGNITUDE`, read in chunks (memory maps are not copied whole)."""
    bound = MAX_MAGNITUDE[arr.dtype.itemsize]
    flat = arr.reshape(-1, order="A") if arr.ndim else arr.reshape(1)
    for a in range(0, flat.size, _CHUNK):
        block = np.asarray(flat[a: a + _CHUNK])
        ok = np.abs(block) <= bound  # False for NaN
        if not ok.all():
            bad = block[np.flatnonzero(~ok)[0]]
            what = "NaN or infinite values" if not np.isfinite(bad) else f"a value of magnitude {abs(bad):.3g} " \
                                                                          f"(more than {bound:g})"
            raise ModelFormatError(f"{where} holds {what}: the model is damaged")


def check_text_values(arr, where):
    codes = np.ascontiguousarray(arr.reshape(-1)).view(np.uint32) if arr.size else np.zeros(0, np.uint32)
    for a in range(0, codes.size, _CHUNK):
        block = codes.reshape(-1)[a: a + _CHUNK]
        if ((block > 0x10FFFF) | ((block >= 0xD800) & (block <= 0xDFFF))).any():
            raise ModelFormatError(f"{where} holds invalid characters: the model is damaged")


def read_npy(directory, entry, *, mmap=False, kinds=None, verify="auto"):
    """Read one ``.npy`` member described by a checked manifest entry; returns an ndarray (or memmap).

    kinds : optional string of allowed dtype kinds ("f" floats, "i" signed integers...) for this entry.
    verify : check the file against the digest its entry records: ``"auto"`` (files read into memory, small
        memory-mapped ones), True or False (:func:`rlsi.io.integrity.must_verify`).
    """
    directory = Path(directory)
    fpath = directory / entry["file"]
    with open_member(directory, entry["file"]) as f:
        try:
            version = npy_format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = npy_format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = npy_format.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy version {version}")
        except Exception as exc:  # a hostile header: any parse failure means damage
            raise ModelFormatError(f"model file {fpath} is damaged or not a numpy array file "
                                   f"({_one_line(exc)})") from None
        problem = _dtype_problem(dtype)
        if problem:
            raise ModelFormatError(f"model file {fpath} has dtype {dtype.str}: {problem}")
        if kinds is not None and dtype.kind not in kinds:
            want = " or ".join(_KIND_NAMES[k] for k in kinds)
            raise ModelFormatError(f"model file {fpath} has dtype {dtype}; this array must hold {want}")
        if str(dtype) != entry["dtype"] or list(shape) != list(entry["shape"]):
            raise ModelFormatError(f"model file {fpath} has dtype {dtype} and shape {list(shape)}; the manifest "
                                   f"says {_short(entry['dtype'], 20)} {_short(entry['shape'], 30)}: the model "
                                   f"is damaged")
        if len(shape) > MAX_NDIM:
            raise ModelFormatError(f"model file {fpath} has {len(shape)} dimensions: damaged")
        offset = f.tell()
        need = math.prod(shape) * dtype.itemsize
        size = os.fstat(f.fileno()).st_size
        if size != offset + need:
            raise ModelFormatError(f"model file {fpath} is damaged: {size - offset} bytes of data for a "
                                   f"{list(shape)} {dtype} array of {need} bytes")
        order = "F" if fortran else "C"
        check = must_verify(entry, size, mmap=mmap and bool(need) and bool(len(shape)), verify=verify)
        if mmap and need and len(shape):
            arr = np.memmap(f, dtype=dtype, mode="r", offset=offset, shape=shape, order=order)
            actual = file_digest(f) if check else None
        else:
            arr = np.empty(shape, dtype=dtype, order=order)
            raw = (arr.T if fortran else arr).reshape(-1).view(np.uint8)
            if need:
                _readinto(f, raw, fpath)
            actual = _read_digest(f, offset, raw) if check else None
        if check and actual != entry[DIGEST]:
            raise mismatch(fpath, entry[DIGEST], actual)
    if not dtype.isnative:
        arr = arr.astype(dtype.newbyteorder("="))
    if dtype.kind == "f":
        check_float_values(arr, f"model file {fpath}")
    elif dtype.kind == "U":
        check_text_values(arr, f"model file {fpath}")
    return arr


def _read_digest(f, offset, raw):
    """The digest of a file whose header of ``offset`` bytes is re-read and whose data were read into ``raw``."""
    f.seek(0)
    return bytes_digest(f.read(offset), raw)


def check_csr(data, indices, indptr, shape, where):
    """Full structural check of CSR arrays (what a kernel relies on to stay inside its buffers)."""
    n_rows, n_cols = shape
    if data.ndim != 1 or indices.ndim != 1 or indptr.ndim != 1:
        raise ModelFormatError(f"{where}: sparse parts must be 1-D arrays")
    if data.dtype.kind != "f":
        raise ModelFormatError(f"{where}: sparse values have dtype {data.dtype}, expected float32 or float64")
    if indices.dtype not in INDEX_DTYPES or indptr.dtype not in INDEX_DTYPES:
        raise ModelFormatError(f"{where}: sparse index arrays have dtypes {indices.dtype}/{indptr.dtype}, "
                               f"expected int32 or int64")
    nnz = len(data)
    if len(indices) != nnz or len(indptr) != n_rows + 1:
        raise ModelFormatError(f"{where}: {nnz} values, {len(indices)} column indices and {len(indptr)} row "
                               f"pointers for a {n_rows} x {n_cols} matrix: the model is damaged")
    if indptr[0] != 0 or indptr[-1] != nnz:
        raise ModelFormatError(f"{where}: row pointers run from {indptr[0]} to {indptr[-1]}, expected 0 to "
                               f"{nnz}: the model is damaged")
    for a in range(0, n_rows, _CHUNK):
        block = np.asarray(indptr[a: a + _CHUNK + 1])
        if (np.diff(block) < 0).any():
            raise ModelFormatError(f"{where}: row pointers decrease: the model is damaged")
    for a in range(0, nnz, _CHUNK):
        block = np.asarray(indices[a: a + _CHUNK])
        lo, hi = int(block.min()), int(block.max())
        if lo < 0 or hi >= n_cols:
            bad = lo if lo < 0 else hi
            raise ModelFormatError(f"{where}: column index {bad} outside [0, {n_cols}): the model is damaged")


def read_array(directory, entry, *, mmap=False, where="", verify="auto"):
    """A dense ndarray or a checked CSR matrix from a manifest ``arrays`` entry (``verify``: see
    :func:`read_npy`)."""
    if entry.get("kind", "dense") != "csr":
        return read_npy(directory, entry, mmap=mmap, verify=verify)
    parts = {p: read_npy(directory, e, mmap=mmap, kinds="f" if p == "data" else "i", verify=verify)
             for p, e in entry["parts"].items()}
    shape = tuple(entry["shape"])
    where = where or f"sparse array {entry['parts']['data']['file']} in {directory}"
    check_csr(parts["data"], parts["indices"], parts["indptr"], shape, where)
    try:
        return sp.csr_matrix((parts["data"], parts["indices"], parts["indptr"]), shape=shape)
    except Exception as exc:  # e.g. a shape too large for any index type
        raise ModelFormatError(f"{where}: not a valid sparse matrix ({_one_line(exc)})") from None
