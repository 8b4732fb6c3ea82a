"""Checksums in the manifest of every rlsi folder: recorded when it is written, verified when it is read.

Every writer of a folder (:func:`rlsi.io.store.save`, :class:`rlsi.io.matrix.MatrixWriter`) records, before
the folder appears:

* the digest of each array file (:func:`rlsi.io.checksums.file_digest`, CRC-32 of the whole ``.npy`` file,
  header included) as ``"digest"`` in the file's manifest entry (:func:`record_digests`);
* the digest of the manifest itself as its top-level ``"digest"``: CRC-32 of its canonical text without that
  key (:func:`manifest_text`: sorted keys, one space of indent), so that a changed parameter, shape or file
  digest is seen too (:func:`seal`, :func:`manifest_problem`).

What a load verifies (:func:`must_verify`; :func:`rlsi.io.safety.read_npy` does it):

* every file read into memory (hashed as it is read: about 15 % on top of the read);
* every memory-mapped file up to :data:`VERIFY_MMAP_BYTES`;
* larger memory-mapped files only when asked (``verify=True``): hashing reads the whole file, which a
  memory map exists to avoid at load. A fit that resumes, refits or merges a folder reads it into memory
  (``rlsi fit --resume``, a checkpoint's state and W parts) or asks; ``rlsi check FOLDER`` verifies every
  file (:mod:`rlsi.io.verify`).

Folders written before checksums existed (no ``"digest"``) still load: what carries no digest is not
verified (its structure and values are still checked by :mod:`rlsi.io.safety`), and ``rlsi check`` says
the folder has no checksums. A digest of an unknown form is refused (a newer rlsi wrote it).

The digest guards against damage (a flipped bit, a truncated copy), not against a forger: a crafted folder
can carry matching digests, and the loaders' checks of shapes, ranges and finiteness stay what keeps it
harmless.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import ModelFormatError
from .checksums import ALGORITHM, bytes_digest, file_digest

__all__ = ["DIGEST", "VERIFY_MMAP_BYTES", "manifest_text", "seal", "record_digests", "file_entries",
           "manifest_problem", "check_digest_field", "must_verify", "mismatch", "has_digests"]

#: The key of a digest, in a file entry and at the top of a manifest.
DIGEST = "digest"
#: Memory-mapped array files up to this size are verified on every load (64 MiB: about 10 ms of hashing).
VERIFY_MMAP_BYTES = 64 << 20
_FORM = re.compile(rf"^{ALGORITHM}:[0-9a-f]{{8}}$")


def manifest_text(manifest) -> str:
    """The canonical text of a manifest (what the writers write and the digest covers)."""
    return json.dumps(manifest, indent=1, sort_keys=True, allow_nan=True)


def seal(manifest) -> str:
    """The text of ``manifest`` with its own digest added (the manifest dict is updated)."""
    manifest.pop(DIGEST, None)
    manifest[DIGEST] = bytes_digest(manifest_text(manifest).encode("utf-8"))
    return manifest_text(manifest)


def file_entries(manifest):
    """``(component, key, entry)`` for every file entry of a manifest, the parts of a CSR array included."""
    for cname, comp in manifest.get("components", {}).items():
        for key, entry in comp.get("arrays", {}).items():
            if entry.get("kind") == "csr":
                for part, sub in entry.get("parts", {}).items():
                    yield cname, f"{key}.{part}", sub
            else:
                yield cname, key, entry


def _entries_of(manifest):
    """The file entries of a manifest not checked yet (anything not of the expected form is skipped)."""
    comps = manifest.get("components")
    for comp in comps.values() if isinstance(comps, dict) else ():
        arrays = comp.get("arrays") if isinstance(comp, dict) else None
        for entry in arrays.values() if isinstance(arrays, dict) else ():
            parts = entry.get("parts") if isinstance(entry, dict) else None
            yield from parts.values() if isinstance(parts, dict) else (entry,)


def record_digests(folder, manifest):
    """Add the digest of every array file of ``manifest`` (files of ``folder``) to its entry."""
    for _, _, entry in file_entries(manifest):
        entry[DIGEST] = file_digest(Path(folder) / entry["file"])
    return manifest


def check_digest_field(value, where):
    """ModelFormatError unless ``value`` is a digest of the form this rlsi writes."""
    if not isinstance(value, str) or not _FORM.match(value):
        shown = repr(value)[:40]
        raise ModelFormatError(f"{where} is {shown}, not a checksum this rlsi reads ({ALGORITHM}:8 hex digits): "
                               f"the folder is damaged, or a newer rlsi wrote it")


def manifest_problem(manifest, mfile):
    """ModelFormatError when a sealed manifest's text changed since it was written (none for an unsealed one)."""
    if not isinstance(manifest, dict):
        return
    if DIGEST not in manifest:  # an older folder has no digest anywhere; this rlsi seals every one it writes
        if any(isinstance(e, dict) and DIGEST in e for e in _entries_of(manifest)):
            raise ModelFormatError(f"{mfile} is damaged: its files carry checksums but the manifest's own "
                                   f"{DIGEST!r} is missing; restore the folder from a copy, or write it again")
        return
    recorded = manifest[DIGEST]
    check_digest_field(recorded, f"{mfile}: {DIGEST}")
    rest = {k: v for k, v in manifest.items() if k != DIGEST}
    try:
        actual = bytes_digest(manifest_text(rest).encode("utf-8"))
    except (TypeError, ValueError):  # not a manifest json.dumps can write back
        actual = None
    if actual != recorded:
        raise ModelFormatError(f"{mfile} is damaged: its content does not match its checksum {recorded} (a "
                               f"changed byte or an edit); restore the folder from a copy, or write it again")


def has_digests(manifest) -> bool:
    """Whether the folder was written with checksums (its manifest is sealed)."""
    return isinstance(manifest, dict) and DIGEST in manifest


def must_verify(entry, nbytes, *, mmap, verify) -> bool:
    """Whether a load verifies this file entry: ``verify`` True (always), False (never), ``"auto"`` (files read
    into memory, and memory-mapped ones up to :data:`VERIFY_MMAP_BYTES`) or a number of bytes (files read into
    memory, and memory-mapped ones up to that size)."""
    if DIGEST not in entry or verify is False:
        return False
    if verify is True:
        return True
    return not mmap or nbytes <= (VERIFY_MMAP_BYTES if verify == "auto" else int(verify))


def mismatch(fpath, expected, actual) -> ModelFormatError:
    """The error of a file whose digest is not the recorded one."""
    return ModelFormatError(f"model file {fpath} is damaged: its checksum {actual} is not the {expected} its "
                            f"manifest records (a changed byte); restore the folder from a copy, or write it again")
