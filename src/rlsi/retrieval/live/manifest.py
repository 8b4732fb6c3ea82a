"""The live index's manifest: which files make up each committed generation, swapped in atomically.

Layout of a live index folder (a model folder of kind ``live``, :mod:`rlsi.io.kinds`)::

    manifest.json               the committed generation (below)
    write.lock                  the writer lock (:mod:`rlsi.retrieval.live.lock`)
    vocabulary.jsonl            append-only terms (:mod:`rlsi.retrieval.live.vocabulary`)
    model-vN.{model,vectorizer}.*.npy   model versions (:mod:`rlsi.retrieval.live.models`)
    seg-NNNNNN.KEY.npy          segment arrays (:mod:`rlsi.retrieval.live.segment`)
    seg-NNNNNN.topics-vN.npy    a segment's topic vectors of model version N
    seg-NNNNNN.del-gG.npy       the segment's deleted rows as of generation G

``manifest.json`` is an rlsi manifest (``format``, ``format_version``, ``kind: "live"``) whose
``components`` are the serving model version's ``model`` and ``vectorizer`` (so the folder loads as a model
folder), plus a ``live`` section: ``generation``, the searcher ``params``, the ``tokenizer`` settings, the
``vocabulary`` entry, ``model_version`` (serving) and ``pending_version`` (being re-folded), ``models``
(version -> components), ``next_segment`` and ``segments`` (name, sizes, files with digests, topic files
by version, deletes). A commit writes every new file first, fsyncs it, then replaces the manifest
(:func:`rlsi.io.atomic.atomic_file`: write, fsync, rename, fsync the folder), so a reader sees one whole
generation or the one before; files of the generation before are removed only after the swap, and the
files a killed writer left (named by no manifest) are removed by the next writer (:func:`remove_orphans`).

Everything read from a manifest is untrusted input: :func:`read_manifest` checks every field the index
reads (types, ranges, file names that stay in the folder) and raises ModelFormatError naming it.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from pathlib import Path

from ...errors import ModelFormatError, RLSIError
from ...io.atomic import atomic_file, recover_dir
from ...io.integrity import manifest_problem, seal
from ...io.safety import check_array_entry, parse_json, read_member_text
from ..searcher_state import params_from_state
from .segment import ARRAYS
from .vocabulary import VOCABULARY_FILE, Vocabulary

__all__ = ["MANIFEST", "LOCK_FILE", "LIVE_FORMAT", "new_manifest", "read_manifest", "write_manifest",
           "referenced_files", "remove_orphans", "segment_name", "deletes_name"]

MANIFEST = "manifest.json"
LOCK_FILE = "write.lock"
FORMAT, FORMAT_VERSION = "rlsi", 1
#: Version of the ``live`` section's layout.
LIVE_FORMAT = 1
_SEGMENT = re.compile(r"seg-(\d{6,12})")
_ORPHAN = re.compile(r"(seg-\d{6,12}\..+\.npy|model-v\d{1,12}\..+\.npy|\.manifest\.json\.tmp-.*)")
_MAX = 2**62


def segment_name(number):
    return f"seg-{int(number):06d}"


def deletes_name(seg, generation):
    return f"{seg}.del-g{int(generation)}.npy"


def new_manifest(params, tokenizer, vocabulary_entry):
    """The manifest of an empty index (generation 0: nothing committed yet)."""
    from ... import __version__

    return {"format": FORMAT, "format_version": FORMAT_VERSION, "rlsi_version": __version__,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "kind": "live",
            "components": {},
            "live": {"format": LIVE_FORMAT, "generation": 0, "params": dict(params), "tokenizer": tokenizer,
                     "vocabulary": vocabulary_entry, "model_version": None, "pending_version": None,
                     "models": {}, "next_segment": 1, "segments": []}}


# ------------------------------------------------------------------ checks of untrusted input
def _int(value, where, low=0, high=_MAX, none=False):
    if none and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ModelFormatError(f"{where} must be an integer in [{low}, {high}], got {str(value)[:30]!r}")
    return value


def _file(entry, where, name):
    if not isinstance(entry, dict):
        raise ModelFormatError(f"{where} must be an object")
    check_array_entry(entry, where)
    if entry.get("kind", "dense") != "dense" or entry["file"] != name or not isinstance(entry.get("digest"), str):
        raise ModelFormatError(f"{where} must name the file {name} and its digest")


def _check_segment(seg, where, versions):
    if not isinstance(seg, dict) or not isinstance(seg.get("name"), str) or not _SEGMENT.fullmatch(seg["name"]):
        raise ModelFormatError(f"{where} has no valid segment name")
    name = seg["name"]
    n = _int(seg.get("docs"), f"{where}.docs", 1)
    _int(seg.get("postings"), f"{where}.postings")
    _int(seg.get("deleted"), f"{where}.deleted", 0, n - 1)
    files = seg.get("files")
    if not isinstance(files, dict) or sorted(files) != sorted(ARRAYS):
        raise ModelFormatError(f"{where}.files must list {', '.join(ARRAYS)}")
    for key in ARRAYS:
        _file(files[key], f"{where}.files.{key}", f"{name}.{key}.npy")
    topics = seg.get("topics")
    if not isinstance(topics, dict):
        raise ModelFormatError(f"{where}.topics must be an object")
    for v, entry in topics.items():
        if not v.isdigit() or int(v) not in versions:
            raise ModelFormatError(f"{where}.topics has vectors of an unknown model version {v[:12]!r}")
        _file(entry, f"{where}.topics.{v}", f"{name}.topics-v{int(v)}.npy")
    dels = seg.get("deletes")
    if (dels is None) != (seg["deleted"] == 0):
        raise ModelFormatError(f"{where}: {seg['deleted']} deleted documents but deletes {str(dels)[:30]}")
    if dels is not None:
        m = re.fullmatch(re.escape(name) + r"\.del-g(\d{1,18})\.npy", str(dels.get("file", "")))
        if not m:
            raise ModelFormatError(f"{where}.deletes names no deletes file of the segment")
        _file(dels, f"{where}.deletes", dels["file"])
        if dels["shape"] != [seg["deleted"]]:
            raise ModelFormatError(f"{where}.deletes holds {dels['shape']} rows for {seg['deleted']} deleted")


def check_live(manifest, where):
    """Check the ``live`` section (and the serving components) of a parsed manifest; returns it."""
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("kind") != "live":
        raise ModelFormatError(f"{where} is not the manifest of an rlsi live index")
    if _int(manifest.get("format_version"), f"{where}: format_version", 1) > FORMAT_VERSION:
        raise ModelFormatError(f"{where} was written by a newer rlsi (format {manifest['format_version']}): upgrade")
    live = manifest.get("live")
    if not isinstance(live, dict):
        raise ModelFormatError(f"{where} has no live section")
    if _int(live.get("format"), f"{where}: live.format", 1) > LIVE_FORMAT:
        raise ModelFormatError(f"{where} holds a live index of a newer layout ({live['format']}): upgrade rlsi")
    _int(live.get("generation"), f"{where}: live.generation")
    try:
        params_from_state(live.get("params"))
    except (RLSIError, TypeError) as exc:
        raise ModelFormatError(f"{where}: live.params: {' '.join(str(exc).split())[:120]}") from None
    if live["params"]["term_model"] != "bm25":
        raise ModelFormatError(f"{where}: a live index ranks terms with bm25, not {live['params']['term_model']!r}")
    if live.get("tokenizer") is not None and not isinstance(live["tokenizer"], dict):
        raise ModelFormatError(f"{where}: live.tokenizer must be an object")
    Vocabulary.check_entry(live.get("vocabulary"), f"{where}: live.vocabulary")
    models = live.get("models")
    if not isinstance(models, dict) or not all(isinstance(v, str) and v.isdigit() for v in models):
        raise ModelFormatError(f"{where}: live.models must map version numbers to models")
    versions = {int(v) for v in models}
    for v, entry in models.items():
        comps = entry.get("components") if isinstance(entry, dict) else None
        if not isinstance(comps, dict) or not set(comps) <= {"model", "vectorizer"}:
            raise ModelFormatError(f"{where}: live.models.{v} must list its model and vectorizer")
        _check_components(comps, f"{where}: live.models.{v}")
    for key in ("model_version", "pending_version"):
        v = _int(live.get(key), f"{where}: live.{key}", 1, none=True)
        if v is not None and v not in versions:
            raise ModelFormatError(f"{where}: live.{key} {v} is not a stored model version")
    _int(live.get("next_segment"), f"{where}: live.next_segment", 1, 10**12 - 1)
    segments = live.get("segments")
    if not isinstance(segments, list):
        raise ModelFormatError(f"{where}: live.segments must be a list")
    names = set()
    for i, seg in enumerate(segments):
        _check_segment(seg, f"{where}: live.segments[{i}]", versions)
        if seg["name"] in names or int(seg["name"][4:]) >= live["next_segment"]:
            raise ModelFormatError(f"{where}: segment {seg['name']} is listed twice or after next_segment")
        names.add(seg["name"])
        if live["model_version"] is not None and str(live["model_version"]) not in seg["topics"]:
            raise ModelFormatError(f"{where}: segment {seg['name']} has no vectors of the serving model version")
    return manifest


def _check_components(comps, where):
    for name, comp in comps.items():
        if not isinstance(comp, dict) or not isinstance(comp.get("class"), str) \
                or not isinstance(comp.get("meta"), dict) or not isinstance(comp.get("arrays"), dict):
            raise ModelFormatError(f"{where}.{name} must be a component (class, meta, arrays)")
        for key, entry in comp["arrays"].items():
            check_array_entry(entry, f"{where}.{name}.arrays.{key}")


def read_manifest(path):
    """The checked manifest of the live index ``path`` (ModelFormatError when damaged or not one)."""
    path = Path(path)
    recover_dir(path)
    if not (path / MANIFEST).is_file():
        raise ModelFormatError(f"{path} is not an rlsi live index (no {MANIFEST})")
    manifest = parse_json(read_member_text(path, MANIFEST), path / MANIFEST)
    manifest_problem(manifest, path / MANIFEST)  # a changed byte or an edit since the commit wrote it
    return check_live(manifest, str(path / MANIFEST))


def write_manifest(path, manifest, previous=None, *, durable=True):
    """The commit point: fsync every file ``manifest`` names that ``previous`` did not (and the vocabulary
    when it grew), then the folder, then replace the manifest atomically (written, fsynced, renamed, folder
    fsynced). ``durable=False`` skips the fsyncs of the new files (a commit then survives a killed process,
    not a power cut: a bulk load that can be redone)."""
    path = Path(path)
    if durable:
        new = referenced_files(manifest) - (referenced_files(previous) if previous else set())
        if previous is None or manifest["live"]["vocabulary"] != previous["live"]["vocabulary"]:
            new.add(VOCABULARY_FILE)
        for name in sorted(new - {MANIFEST, LOCK_FILE}):
            _fsync(path / name, missing_ok=name == VOCABULARY_FILE)
        _fsync(path)  # the new names are on disk before a manifest names them
    text = seal(manifest)  # the manifest's own checksum (rlsi.io.integrity), as every rlsi folder's
    with atomic_file(path / MANIFEST, "w", make_parents=False) as f:
        f.write(text)


def _fsync(path, missing_ok=False):
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        if missing_ok:
            return
        raise
    try:
        os.fsync(fd)
    except OSError:  # a folder some systems cannot fsync
        if not os.path.isdir(path):
            raise
    finally:
        os.close(fd)


def referenced_files(manifest):
    """Every file name the manifest's generation uses."""
    from .models import version_files
    from .segment import segment_files

    live = manifest["live"]
    files = {MANIFEST, LOCK_FILE, VOCABULARY_FILE}
    for entry in live["models"].values():
        files.update(version_files(entry))
    for comp in manifest.get("components", {}).values():
        files.update(version_files({"components": {"c": comp}}))
    for seg in live["segments"]:
        files.update(segment_files(seg))
    return files


def remove_orphans(path, manifest, also=()):
    """Remove the files of the live layout that the manifest does not name (what a killed writer or a
    superseded generation left), and the names in ``also``; only a writer holding the lock calls this.
    Returns how many were removed."""
    keep = referenced_files(manifest)
    removed = 0
    for entry in os.scandir(path):
        name = entry.name
        if name in keep or not (_ORPHAN.fullmatch(name) or name in also):
            continue
        try:
            os.unlink(entry.path)
            removed += 1
        except OSError:
            pass
    return removed
