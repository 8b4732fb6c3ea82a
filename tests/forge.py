"""What a forger does to a crafted folder: record its checksums again after changing it.

Tests of the loaders' own checks (paths, types, shapes, values) craft a folder and call :func:`reseal`, so
that the checksums (:mod:`rlsi.io.integrity`), which guard against damage and not against a forger, match
and the check under test is the one that must refuse it. A manifest or an entry too damaged to name a file
is left as it is.
"""

import json
import os
from pathlib import Path

from rlsi.io import integrity
from rlsi.io.checksums import file_digest


def reseal(folder):
    """Record the digests of the files of ``folder`` as they are now, and seal its manifest; returns it."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
        entries = list(integrity.file_entries(manifest))
    except Exception:  # not JSON, not a dict, components not a dict: nothing to seal
        return folder
    for _, _, entry in entries:
        try:
            path = folder / entry["file"]
            if path.is_file() and os.path.realpath(path).startswith(os.path.realpath(folder)):
                entry[integrity.DIGEST] = file_digest(path)
        except Exception:  # an entry that is not a dict or names no file
            continue
    try:
        (folder / "manifest.json").write_text(integrity.seal(manifest))
    except Exception:  # junk json.dumps cannot write
        pass
    return folder


def unseal(folder):
    """Remove every checksum of ``folder``'s manifest: a folder as an rlsi without checksums wrote it."""
    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.pop(integrity.DIGEST, None)
    for _, _, entry in integrity.file_entries(manifest):
        entry.pop(integrity.DIGEST, None)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return folder
