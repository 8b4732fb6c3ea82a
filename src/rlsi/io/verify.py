"""Verify an rlsi folder whole: every checksum, then every check a load makes (``rlsi check FOLDER``).

A load verifies the checksums of what it reads into memory and of small memory-mapped files
(:mod:`rlsi.io.integrity`); :func:`check_folder` verifies every file, the large memory-mapped arrays of a
matrix directory or a search index included, then loads the folder as its commands do (every path, type,
shape and value checked: :mod:`rlsi.io.safety`, :mod:`rlsi.io.checks`), reading the memory-mapped arrays
through once. Folders of every kind: a model (with or without its search index), a search index, a
matrix directory, one part of a distributed fit's checkpoint (a checkpoint directory, its ``state`` and the
W parts it names: :func:`rlsi.distributed.checkpoint.verify_directory`).

A folder written without checksums (an older rlsi) is checked for everything but them, and the report
says so: a changed byte that leaves its values plausible cannot be seen there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ModelFormatError
from .checksums import file_digest
from .integrity import DIGEST, check_digest_field, file_entries, has_digests, mismatch
from .kinds import CONFLICT, describe_conflict, describe_kind, folder_kind
from .safety import open_member

__all__ = ["FolderReport", "check_folder", "check_one", "verify_files", "folder_bytes"]


@dataclass
class FolderReport:
    """What :func:`check_folder` verified: ``kind`` (of :data:`rlsi.io.kinds.KINDS`, or ``"checkpoint
    directory"``), ``folders`` checked, ``files`` verified against their checksums, ``bytes`` hashed,
    ``unsealed`` (folders written without checksums)."""

    path: Path
    kind: str
    folders: int = 0
    files: int = 0
    bytes: int = 0
    unsealed: list = field(default_factory=list)

    def describe(self) -> str:
        """One line for the user."""
        what = "a checkpoint directory" if self.kind == "checkpoint directory" else describe_kind(self.kind)
        parts = f" in {self.folders} folders" if self.folders > 1 else ""
        line = f"{self.path}: {what}; it loads"
        if self.files:
            line += f", and its {self.files} array files ({_size(self.bytes)}){parts} match their checksums"
        if self.unsealed:
            names = ", ".join(str(p) for p in self.unsealed[:3]) + (" ..." if len(self.unsealed) > 3 else "")
            line += (f"; no checksums in {names} (written by an older rlsi): its structure and values are "
                     f"checked, a changed byte that keeps them plausible cannot be seen")
        return line


def _size(n) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


def verify_files(folder, manifest, *, progress=None):
    """Verify every array file of ``manifest`` that carries a digest (ModelFormatError naming the first that
    differs). ``progress(nbytes)`` is called after each file. Returns ``(files verified, bytes hashed, files
    without a digest)``."""
    folder = Path(folder)
    done = hashed = missing = 0
    for _, _, entry in file_entries(manifest):
        expected = entry.get(DIGEST)
        if expected is None:
            missing += 1
            continue
        check_digest_field(expected, f"the entry of {entry['file']} in {folder}")
        with open_member(folder, entry["file"]) as fh:  # a regular file inside the folder, as a load opens it
            actual = file_digest(fh)
            size = fh.tell()
        if actual != expected:
            raise mismatch(folder / entry["file"], expected, actual)
        done += 1
        hashed += size
        if progress is not None:
            progress(size)
    return done, hashed, missing


def folder_bytes(path) -> int:
    """Bytes of the array files of ``path`` and of the rlsi folders inside it (for a progress bar's total)."""
    total = 0
    for dirpath, _, filenames in os.walk(path):
        for name in filenames:
            if name.endswith(".npy"):
                try:
                    total += os.lstat(os.path.join(dirpath, name)).st_size
                except OSError:
                    continue
    return total


def check_one(path, report, progress=None):
    """Verify the checksums of the one rlsi folder ``path``, then load it as its commands do; adds to
    ``report``."""
    from .store import load, read_manifest

    kind = folder_kind(path)
    if kind == CONFLICT:
        raise ModelFormatError(f"{path} is damaged: {describe_conflict(path)}")
    manifest = read_manifest(path)  # the manifest's own checksum, and its structure
    files, hashed, _ = verify_files(path, manifest, progress=progress)
    report.folders += 1
    report.files += files
    report.bytes += hashed
    if not has_digests(manifest):
        report.unsealed.append(Path(path))
    if kind == "matrix":
        from .matrix import load_matrix

        matrix = load_matrix(path, verify=False)
        if matrix.counts is not None:
            matrix.count_matrix()  # their values, checked on first use
    else:
        load(path, mmap=True, verify=False)
    return report


def check_folder(path, *, progress=None) -> FolderReport:
    """Verify the rlsi folder ``path`` whole (see the module docstring); ModelFormatError (one line) naming the
    first problem. ``progress(nbytes)`` is called as files are hashed. (A checkpoint directory, which holds
    rlsi folders: :func:`rlsi.distributed.checkpoint.verify_directory`.)"""
    path = Path(path)
    return check_one(path, FolderReport(path, folder_kind(path) or "model"), progress)
